package report

import (
	"fmt"
	"math"
	"strings"

	"github.com/perfexp/perfexp/internal/result"
)

// A forest plot shows each compared metric's change as a point with its 95 % interval as a bar,
// over the shaded band of changes too small to matter (±δ). A bar wholly outside the band is
// a change, wholly inside is no meaningful change, across its edge is inconclusive: the rule
// the verdicts follow, visible at a glance.

// forestRow is one metric (or one arm's metric) of a forest plot, on the chart's scale.
type forestRow struct {
	label   string
	primary bool
	// est, lo and hi are the change and its interval; band is δ on the same scale (0: none).
	est, lo, hi, band float64
	change            string
	detail            string
	// share is a check's pass rate or a custom Rate, drawn in points beside the error rates.
	share bool
}

// maxForestRows bounds a chart's height; the tables below list every metric.
const maxForestRows = 32

// forestChart draws the rows. ratio is true for relative changes in percent, drawn on a log
// scale of the ratio (the scale the intervals are computed on: ×2 and ×½ are equally far
// from no change); false draws differences (error rates in points) on a linear scale.
func forestChart(label, xTitle string, rows []forestRow, ratio bool, unit string) string {
	if len(rows) == 0 {
		return ""
	}
	// Percent changes of -100 % or below have no ratio; draw those linearly.
	for _, r := range rows {
		if ratio && (r.lo <= -100 || r.est <= -100 || r.band >= 100) {
			ratio = false
		}
	}
	pos := func(v float64) float64 {
		if ratio {
			return math.Log1p(v / 100)
		}
		return v
	}
	lo, hi := 0.0, 0.0
	for _, r := range rows {
		lo = math.Min(lo, math.Min(pos(r.lo), pos(-r.band)))
		hi = math.Max(hi, math.Max(pos(r.hi), pos(r.band)))
	}
	pad := (hi - lo) * 0.06
	if pad == 0 {
		pad = 1
	}
	lo, hi = lo-pad, hi+pad

	// The margins fit the longest label and the longest detail, within bounds that leave the
	// plotting area at least 300 units wide.
	const rowH, top, bottom = 30.0, 48.0, 56.0
	left, right := 0.0, 0.0
	for _, r := range rows {
		name := clipText(r.label, 34)
		if r.primary {
			name = "★ " + name
		}
		left = math.Max(left, textWidth(name)+24)
		right = math.Max(right, textWidth(r.detail)+textWidth(changeWords(r.change))+36)
	}
	left, right = math.Min(math.Max(left, 120), 290), math.Min(math.Max(right, 200), 390)
	h := top + bottom + rowH*float64(len(rows))
	p := newPlot(label, h, left, right, top, bottom, scale{lo: lo, hi: hi}, scale{lo: 0, hi: float64(len(rows))})
	rowY := func(i int) float64 { return top + rowH*(float64(i)+0.5) }

	// The band: one rectangle when every row has the same δ, else one per row. Over a wide
	// range ±5 % is thinner than the zero line; it is drawn at least 4 units wide to be seen.
	bandX := func(band float64) (float64, float64) {
		x0, x1 := p.px(pos(-band)), p.px(pos(band))
		if x1-x0 < 4 {
			mid := (x0 + x1) / 2
			x0, x1 = mid-2, mid+2
		}
		return x0, x1
	}
	same := true
	for _, r := range rows {
		same = same && r.band == rows[0].band
	}
	if same && rows[0].band > 0 {
		x0, x1 := bandX(rows[0].band)
		p.printf(`<rect class="band" x="%s" y="%s" width="%s" height="%s" fill="%s"/>`, coord(x0), coord(top), coord(x1-x0), coord(h-top-bottom), colorBand)
	} else {
		for i, r := range rows {
			if r.band > 0 {
				x0, x1 := bandX(r.band)
				p.printf(`<rect class="band" x="%s" y="%s" width="%s" height="%s" fill="%s"/>`, coord(x0), coord(rowY(i)-rowH/2+2), coord(x1-x0), coord(rowH-4), colorBand)
			}
		}
	}

	ticks, format := forestTicks(lo, hi, ratio, unit)
	p.xGrid(thinTicks(ticks, func(v float64) float64 { return p.px(v) }, 64), format)
	zero := p.px(0)
	p.printf(`<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="%s" stroke-width="1.5"/>`, coord(zero), coord(top), coord(zero), coord(h-bottom), colorAxis)
	p.frame(xTitle, "")

	for i, r := range rows {
		y := rowY(i)
		if i%2 == 1 {
			p.printf(`<rect x="0" y="%s" width="%s" height="%s" fill="#f6f8fa" fill-opacity="0.6"/>`, coord(y-rowH/2), coord(left-8), coord(rowH))
		}
		name := clipText(r.label, int((left-24)/7.6+0.5))
		weight := ""
		if r.primary {
			name, weight = "★ "+clipText(r.label, int((left-24)/7.6+0.5)-2), "600"
		}
		p.text(left-12, y+4, "end", colorText, weight, name)
		color := changeColor(r.change)
		p.printf(`<g class="forest-row"><title>%s</title>`, esc(r.label+": "+r.detail+" — "+r.change))
		p.printf(`<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="%s" stroke-width="3" stroke-linecap="round"/>`,
			coord(p.px(pos(r.lo))), coord(y), coord(p.px(pos(r.hi))), coord(y), color)
		p.printf(`<circle cx="%s" cy="%s" r="6" fill="%s" stroke="#fff" stroke-width="1.5"/></g>`, coord(p.px(pos(r.est))), coord(y), color)
		p.text(chartWidth-right+12, y+4, "start", colorText, "", r.detail)
		p.text(chartWidth-6, y+4, "end", color, "600", changeWords(r.change))
	}

	p.legend([]legendItem{
		{label: "Improved", color: changeColor("Improved"), square: true},
		{label: "Regressed", color: changeColor("Regressed"), square: true},
		{label: "No meaningful change", color: changeColor("NoMeaningfulChange"), square: true},
		{label: "Inconclusive", color: changeColor("Inconclusive"), square: true},
		{label: "±δ: too small to matter", color: colorBand, square: true},
	})
	return p.end()
}

// ratioTicks are the candidate ticks of a relative change, in percent: round percentages near
// no change, round factors (×3, ×5, ×10, ...) far above it. The chart keeps those that do not
// crowd each other.
var ratioTicks = []float64{-99.9, -99.5, -99, -98, -95, -90, -80, -70, -60, -50, -40, -30, -25, -20, -15, -10, -5, -2, -1, 0,
	1, 2, 5, 10, 15, 20, 25, 30, 40, 50, 75, 100, 200, 400, 900, 1900, 4900, 9900, 19900, 49900, 99900}

// forestTicks chooses the change axis's ticks: round differences on a linear scale, or the
// candidates of ratioTicks within the range on a log scale of the ratio.
func forestTicks(lo, hi float64, ratio bool, unit string) ([]float64, func(float64) string) {
	if !ratio {
		step := niceStep(hi-lo, 8)
		ticks := niceTicks(lo, hi, 8)
		f := tickLabel(step)
		return ticks, func(v float64) string {
			s := f(v)
			if v > 0 {
				s = "+" + s
			}
			return s + " " + unit
		}
	}
	pct := func(pos float64) float64 { return 100 * math.Expm1(pos) }
	var ticks []float64
	for _, v := range ratioTicks {
		if t := math.Log1p(v / 100); t >= lo && t <= hi {
			ticks = append(ticks, t)
		}
	}
	return ticks, func(pos float64) string {
		v := math.Round(pct(pos)*10) / 10
		switch {
		case v == 0:
			return "0"
		case v >= 200: // ×3 and more read better as a factor than as +900 %
			return "×" + trimZero(math.Round(math.Exp(pos)*10)/10)
		case v > 0:
			return "+" + trimZero(v) + " %"
		}
		return "−" + trimZero(-v) + " %"
	}
}

func trimZero(v float64) string {
	s := fmt.Sprintf("%.1f", v)
	return strings.TrimSuffix(s, ".0")
}

// metricRow is a compared metric as a forest row; false when it has no interval to draw.
func metricRow(m result.MetricComparison) (forestRow, bool) {
	if m.Estimate == nil || m.Low == nil || m.High == nil {
		return forestRow{}, false
	}
	band := 0.0
	if m.Threshold != nil {
		band = *m.Threshold
	}
	return forestRow{label: m.Metric, primary: m.Primary, est: *m.Estimate, lo: *m.Low, hi: *m.High, band: band,
		change: string(m.Change), detail: changeCell(m), share: isShare(m)}, true
}

// comparisonCharts draws the comparison's metrics: relative changes in one forest plot, error
// rates (differences in points) in another, and lists the metrics that have no interval.
func comparisonCharts(c *result.Comparison) string {
	if c == nil {
		return noData("This run was not compared with a baseline: the experiment names none (spec.baseline).")
	}
	if len(c.Metrics) == 0 {
		why := c.Message
		if why == "" {
			why = "no metric could be compared"
		}
		return noData(esc(fmt.Sprintf("No comparison with baseline %s (%s): %s.", c.Baseline, orDash(string(c.Change)), strings.TrimSuffix(why, "."))))
	}
	var pct, pts []forestRow
	uncharted := map[string][]string{} // metrics without an interval, by reason
	var reasons []string
	for _, m := range c.Metrics {
		if m.Workload != "" || m.Route != "" {
			continue // the Services and Slowest APIs tables show workloads' and routes' changes
		}
		row, ok := metricRow(m)
		switch {
		case !ok:
			why := m.Why
			if why == "" {
				why = "no interval"
			}
			reason := fmt.Sprintf("%s: %s", m.Change, why)
			if _, seen := uncharted[reason]; !seen {
				reasons = append(reasons, reason)
			}
			uncharted[reason] = append(uncharted[reason], m.Metric)
		case m.Scale == result.ScalePoints:
			pts = append(pts, row)
		default:
			pct = append(pct, row)
		}
	}
	var b strings.Builder
	method := "one run per side, block bootstrap over the runs' intervals"
	if c.Method == result.MethodRuns {
		method = fmt.Sprintf("%d runs against %d baseline runs, Welch's t on the runs' log values", c.Runs, c.BaselineRuns)
	}
	more := func(rows []forestRow) ([]forestRow, string) {
		if len(rows) <= maxForestRows {
			return rows, ""
		}
		return rows[:maxForestRows], fmt.Sprintf(" %d more metrics are in the table below.", len(rows)-maxForestRows)
	}
	if len(pct) > 0 {
		rows, extra := more(pct)
		b.WriteString(figure("chart forest", forestChart("relative change of each metric with its 95% interval", "change against the baseline (log scale of the ratio)", rows, true, "%"),
			esc(fmt.Sprintf("Each metric's change against baseline %s: the point is the estimate, the bar its 95 %% interval (%s). The shaded band is ±%g %%, the minimum meaningful change; ★ marks the primary metrics that decide the headline.%s",
				c.Baseline, method, c.MinChangePercent, extra))))
	}
	if len(pts) > 0 {
		rows, extra := more(pts)
		title, axis, caption := "error-rate difference of each scenario with its 95% interval", "difference in failed requests (percentage points)",
			"Error rates are compared as differences in percentage points (near zero a ratio explodes); each band is ±δ of the baseline's rate, at least 0.1 points. A metric with no errors on either side sits at 0 and cannot change."
		if sharesCharted(pts) {
			// Check pass rates and custom Rates are shares in percent too, charted beside
			// the error rates on the same points scale.
			title, axis = "difference of error rates, check pass rates and custom Rates with 95% intervals", "difference (percentage points)"
			caption = "Error rates, check pass rates and custom Rates are compared as differences in percentage points (near zero a ratio explodes); each band is ±δ of the baseline's share (for a pass rate, of its fails), at least 0.1 points. A metric that is constant on both sides sits at 0 and cannot change."
		}
		b.WriteString(figure("chart forest", forestChart(title, axis, rows, false, "pt"), esc(caption+extra)))
	}
	for _, reason := range reasons {
		fmt.Fprintf(&b, `<p class="note">Not charted, no interval: %s (%s).</p>`, esc(strings.Join(uncharted[reason], ", ")), esc(reason))
	}
	return b.String()
}

// sharesCharted is true when a points chart holds check pass rates or custom Rates beside the
// error rates.
func sharesCharted(rows []forestRow) bool {
	for _, r := range rows {
		if r.share {
			return true
		}
	}
	return false
}
