package report

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
)

// SweepHTML renders the sweep report as one self-contained page, the answer first: a header
// with the best arm and the arms counted by verdict, the table of arms with their verdicts, one
// chart of every arm's p95 change against the baseline with its interval, the per-arm tables
// (transactions, services, queries), each arm's p95, for a
// sweep over load the capacity curves (p95 and throughput against load), then the rest of the
// Markdown report (what the decisions took, the runs, how it was decided) as details.
func SweepHTML(r *SweepResult) (string, error) {
	doc := sweepMarkdown(r)
	table, err := markdownHTML(doc.table)
	if err != nil {
		return "", fmt.Errorf("rendering the sweep report: %w", err)
	}
	var b strings.Builder
	writeSweepHeader(&b, r)
	b.WriteString(`<main>`)
	// The header says what was run and which arm is best (the Markdown's intro), so the
	// findings and the table follow it directly.
	if len(r.Findings) > 0 {
		section(&b, "findings", "Findings", htmlFindings(r.Findings))
	}
	section(&b, "verdicts", "Arms and verdicts", table)
	section(&b, "arms", "Every arm against the baseline", sweepForest(r))
	for _, s := range doc.sections {
		body, err := markdownHTML(s.body)
		if err != nil {
			return "", fmt.Errorf("rendering the sweep report: %w", err)
		}
		section(&b, s.id, s.title, body)
	}
	section(&b, "p95", "p95 per arm", armBars(r))
	if r.LoadParameter != "" {
		label := strings.ToLower(string(r.LoadParameter))
		section(&b, "capacity", "Capacity", capacityChart("p95 against "+label, "p95 (ms)", r, func(p CapacityPoint) *float64 { return p.P95 })+
			capacityChart("throughput against "+label, "throughput (req/s)", r, func(p CapacityPoint) *float64 { return p.Rate }))
	}
	b.WriteString(`</main>`)
	page, err := htmlPage("perfexp sweep: "+r.Sweep, b.String(), doc.rest)
	if err != nil {
		return "", fmt.Errorf("rendering the sweep report: %w", err)
	}
	return page, nil
}

// writeSweepHeader names the sweep, its design and its outcome before any chart.
func writeSweepHeader(b *strings.Builder, r *SweepResult) {
	b.WriteString(`<header>`)
	fmt.Fprintf(b, `<p class="kicker">perfexp sweep report · %s</p><h1>%s</h1>`, esc(r.Namespace), esc(r.Sweep))
	counts := map[string]int{}
	compared := 0
	for _, a := range r.Arms {
		if a.Comparison != nil {
			counts[string(a.Comparison.Change)]++
			compared++
		}
	}
	each := fmt.Sprintf("%d run(s) each, interleaved", r.Repeats)
	if sequentialResult(r) {
		each = fmt.Sprintf("sequential: up to %d run(s) each, an arm stopping once decided (see What each decision took)", r.Repeats)
	}
	fmt.Fprintf(b, `<p class="variant">%d arms (baseline included), %s; a change smaller than ±%g %% does not count.</p>`,
		len(r.Arms), esc(each), r.MinMeaningfulChangePercent)
	b.WriteString(`<div class="verdicts">`)
	if r.BestArm != "" {
		fmt.Fprintf(b, `<div class="badge" id="headline" style="border-color:%[1]s"><span class="label">Best arm</span><b style="color:%[1]s">%[2]s</b><span class="why">Improved on the baseline the most (primary latency)</span></div>`,
			changeColor("Improved"), esc(r.BestArm))
	} else {
		b.WriteString(`<div class="badge" id="headline"><span class="label">Best arm</span><b style="color:#6e7781">None</b><span class="why">No arm improved on the baseline.</span></div>`)
	}
	for _, c := range []perfexpv1alpha1.Change{perfexpv1alpha1.ChangeImproved, perfexpv1alpha1.ChangeRegressed, perfexpv1alpha1.ChangeNoMeaningfulChange,
		perfexpv1alpha1.ChangeInconclusive, perfexpv1alpha1.ChangeUnknown} {
		if n := counts[string(c)]; n > 0 {
			fmt.Fprintf(b, `<div class="badge" style="border-color:%[1]s"><span class="label">arms</span><b style="color:%[1]s">%[2]d %[3]s</b><span class="why">of %[4]d compared</span></div>`,
				changeColor(string(c)), n, esc(changeWords(string(c))), compared)
		}
	}
	b.WriteString(`</div></header>`)
}

// armLabel names an arm by its name and what it set.
func armLabel(a SweepArmResult) string {
	if a.Parameter == "" || a.Value == "" {
		return a.Name
	}
	return fmt.Sprintf("%s (%s = %s)", a.Name, a.Parameter, a.Value)
}

// sweepForest draws each arm's p95 change per scenario against the baseline with its 95 %
// interval, over the ±δ band: the sweep's one picture.
func sweepForest(r *SweepResult) string {
	scenarios := sweepScenarios(r)
	var rows []forestRow
	var skipped []string
	for _, a := range r.Arms {
		if a.Comparison == nil {
			continue
		}
		for _, sc := range scenarios {
			row, ok := armRow(r, a, sc, len(scenarios) > 1)
			if !ok {
				skipped = append(skipped, fmt.Sprintf("%s %s", a.Name, sc))
				continue
			}
			rows = append(rows, row)
		}
	}
	if len(rows) == 0 {
		return noData("No arm has a p95 change to draw: no arm was compared with the baseline (every run failed, or the sweep has only a baseline).")
	}
	var base []string
	baseP95 := baselineP95s(r)
	for _, sc := range scenarios {
		if v, ok := baseP95[sc]; ok {
			base = append(base, sc+" "+withUnit(&v, "ms"))
		}
	}
	caption := fmt.Sprintf("The change of each arm's p95 against the baseline's: the point is the estimate, the bar its 95 %% interval over the runs (the run is the unit; more repeats narrow it). The shaded band is ±%g %%, the minimum meaningful change; colour is the verdict.", r.MinMeaningfulChangePercent)
	if len(base) > 0 {
		caption += " Baseline p95: " + strings.Join(base, ", ") + "."
	}
	if len(skipped) > 0 {
		caption += " No change to draw for: " + strings.Join(skipped, ", ") + "."
	}
	return figure("chart forest", forestChart("p95 change of each arm with its 95% interval", "p95 change against the baseline (log scale of the ratio)", rows, true, "%"), esc(caption))
}

// armRow is one arm's p95 change for one scenario; false when the comparison has none.
func armRow(r *SweepResult, a SweepArmResult, scenario string, named bool) (forestRow, bool) {
	for _, m := range a.Comparison.Metrics {
		if m.Scenario != scenario || m.Request != "" || m.Kind != perfexpv1alpha1.MetricP95 {
			continue
		}
		est := m.Estimate
		if est == nil {
			est = m.DeltaPercent
		}
		if est == nil {
			return forestRow{}, false
		}
		lo, hi, unit, ok := Interval(m)
		if !ok || unit != "%" {
			lo, hi = *est, *est
		}
		label := armLabel(a)
		if named {
			label = a.Name + " · " + scenario
		}
		if len(r.Arms) > 0 && a.Baseline != "" && a.Baseline != r.Arms[0].Name {
			label += " vs " + a.Baseline // a sweep over load compares each load with its own baseline
		}
		detail := scenarioDelta(a.Comparison, scenario)
		if !ok {
			detail += " (no interval)"
		}
		return forestRow{label: label, est: *est, lo: lo, hi: hi, band: r.MinMeaningfulChangePercent, change: string(m.Change), detail: detail}, true
	}
	return forestRow{}, false
}

// armBars draws each arm's p95 (the mean over its runs) as a horizontal bar per scenario, the
// baseline first and its value marked on every row, so each arm reads against it.
func armBars(r *SweepResult) string {
	scenarios := sweepScenarios(r)
	hi, lo := 0.0, math.Inf(1)
	for _, a := range r.Arms {
		for _, s := range a.Scenarios {
			if s.P95 != nil && *s.P95 > 0 {
				hi, lo = math.Max(hi, *s.P95), math.Min(lo, *s.P95)
			}
		}
	}
	if len(scenarios) == 0 || hi == 0 {
		return noData("No arm has a p95: no run of the sweep succeeded.")
	}
	const left, right, top0, bottom = 250.0, 130.0, 48.0, 56.0
	barH := 14.0
	rowH := barH*float64(len(scenarios)) + 12
	h := top0 + bottom + rowH*float64(len(r.Arms))
	x, xTitle, ticks, format := armAxis(lo, hi)
	p := newPlot("p95 per arm", h, left, right, top0, bottom, x, scale{lo: 0, hi: 1})
	p.xGrid(thinTicks(ticks, p.px, 48), format)
	p.frame(xTitle, "")
	origin := p.px(x.lo)
	baseline := baselineP95s(r)
	for i, a := range r.Arms {
		y0 := top0 + rowH*float64(i)
		if i%2 == 1 {
			p.printf(`<rect x="0" y="%s" width="%s" height="%s" fill="#f6f8fa" fill-opacity="0.6"/>`, coord(y0), coord(chartWidth), coord(rowH))
		}
		weight := ""
		if a.Name == r.BestArm {
			weight = "600"
		}
		p.text(left-12, y0+rowH/2+4, "end", colorText, weight, clipText(armLabel(a), 32))
		verdict, vc := "baseline", colorBaseline
		if a.Comparison != nil {
			verdict, vc = changeWords(string(a.Comparison.Change)), changeColor(string(a.Comparison.Change))
		}
		p.text(chartWidth-6, y0+rowH/2+4, "end", vc, "600", verdict)
		for j, sc := range scenarios {
			y := y0 + 6 + barH*float64(j)
			color := palette[j%len(palette)]
			if len(scenarios) == 1 {
				color = colorRun
				if a.Comparison == nil {
					color = colorBaseline
				}
			}
			if v, ok := baseline[sc]; ok {
				p.printf(`<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="%s" stroke-width="2" stroke-dasharray="3 2"/>`,
					coord(p.px(v)), coord(y-2), coord(p.px(v)), coord(y+barH), colorText)
			}
			for _, s := range a.Scenarios {
				if s.Name != sc || s.P95 == nil {
					continue
				}
				p.printf(`<rect class="arm-bar" x="%s" y="%s" width="%s" height="%s" fill="%s"><title>%s %s: %s</title></rect>`,
					coord(origin), coord(y), coord(p.px(*s.P95)-origin), coord(barH-3), color, esc(a.Name), esc(sc), esc(withUnit(s.P95, "ms")))
				label := withUnit(s.P95, "ms")
				lx := p.px(*s.P95) + 5
				if v, ok := baseline[sc]; ok && p.px(v) >= lx-2 && p.px(v) <= lx+1.15*textWidth(label)+4 {
					lx = p.px(v) + 5 // after the baseline's mark, not across it
				}
				p.text(lx, y+barH-4, "start", colorAxis, "", label)
			}
		}
	}
	var items []legendItem
	if len(scenarios) > 1 {
		for j, sc := range scenarios {
			items = append(items, legendItem{label: sc, color: palette[j%len(palette)], square: true})
		}
	}
	items = append(items, legendItem{label: "baseline's p95", color: colorText, dash: "3 2"})
	p.legend(items)
	return figure("chart", p.end(), "Each arm's p95, the mean over its runs; the dashed mark is the baseline's p95.")
}

// armAxis is the p95 axis of the arms' bars. When one arm is twenty times slower than another
// (a throttled arm beside tuned ones), a linear axis leaves the fast arms as slivers: a log axis
// keeps every arm readable.
func armAxis(lo, hi float64) (x scale, title string, ticks []float64, format func(float64) string) {
	if hi/lo <= 20 {
		x = scale{lo: 0, hi: niceMax(hi*1.05, 6)}
		return x, "p95 (ms, mean over the arm's runs)", niceTicks(0, x.hi, 6), tickLabel(niceStep(x.hi, 6))
	}
	x = scale{lo: math.Pow(10, math.Floor(math.Log10(lo))), hi: math.Pow(10, math.Ceil(math.Log10(hi*1.05))), log: true}
	for k := math.Log10(x.lo); k <= math.Log10(x.hi)+1e-9; k++ {
		for _, m := range []float64{1, 2, 5} {
			if v := m * math.Pow(10, k); v <= x.hi*(1+1e-9) {
				ticks = append(ticks, v)
			}
		}
	}
	return x, "p95 (ms, mean over the arm's runs; log scale)", ticks, func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
}

// baselineP95s is the baseline's p95 per scenario: the first arm's, which is the sweep's
// baseline (the baselines a sweep over load adds for other loads come after it); nil when the
// first arm was compared with something, so is no baseline.
func baselineP95s(r *SweepResult) map[string]float64 {
	if len(r.Arms) == 0 || r.Arms[0].Comparison != nil {
		return nil
	}
	out := map[string]float64{}
	for _, s := range r.Arms[0].Scenarios {
		if s.P95 != nil {
			out[s.Name] = *s.P95
		}
	}
	return out
}

// capacityChart draws one line per scenario through the arms' points, with load on the x axis
// (to scale, from 0), so a knee in latency or a plateau in throughput shows where capacity ends.
func capacityChart(label, yTitle string, r *SweepResult, value func(CapacityPoint) *float64) string {
	points := CapacityPoints(r)
	xmax, ymax := 0.0, 0.0
	for _, pt := range points {
		xmax = math.Max(xmax, pt.Load)
		if v := value(pt); v != nil {
			ymax = math.Max(ymax, *v)
		}
	}
	if xmax == 0 || ymax == 0 {
		return noData(esc("No " + label + ": no arm of the sweep has a value for it."))
	}
	xtop, ytop := niceMax(xmax*1.02, 8), niceMax(ymax*1.05, 5)
	p := newPlot(label, 340, 70, 20, 44, 52, scale{lo: 0, hi: xtop}, scale{lo: 0, hi: ytop})
	p.yGrid(niceTicks(0, ytop, 5), tickLabel(niceStep(ytop, 5)))
	p.xGrid(niceTicks(0, xtop, 8), tickLabel(niceStep(xtop, 8)))
	p.frame(strings.ToLower(string(r.LoadParameter))+" (load of the arm)", yTitle)
	var items []legendItem
	for i, name := range sweepScenarios(r) {
		color := palette[i%len(palette)]
		var xs, ys []float64
		var tips []string
		for _, pt := range points {
			if v := value(pt); pt.Scenario == name && v != nil {
				xs, ys = append(xs, pt.Load), append(ys, *v)
				tips = append(tips, fmt.Sprintf("%s at %s: %s", name, trimFloat(pt.Load), trimFloat(*v)))
			}
		}
		p.line(xs, ys, color, 2.5, "", "capacity-line")
		p.dots(xs, ys, tips, color, "capacity-point")
		items = append(items, legendItem{label: name, color: color})
	}
	p.legend(items)
	return figure("chart", p.end(), esc("One point per arm: the mean over its runs. A knee in latency or a plateau in throughput marks the end of capacity."))
}
