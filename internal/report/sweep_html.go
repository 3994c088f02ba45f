package report

import (
	"fmt"
	"html"
	"strings"
)

// SweepHTML renders the sweep report as one self-contained page: a bar chart of each arm's p95
// per scenario (inline SVG, no scripts), for a sweep over load the capacity curves (p95 and
// throughput against load), then the Markdown report.
func SweepHTML(r *SweepResult) (string, error) {
	var charts strings.Builder
	charts.WriteString(`<div class="charts">`)
	charts.WriteString(armBars(r))
	if r.LoadParameter != "" {
		label := strings.ToLower(string(r.LoadParameter))
		charts.WriteString(capacityChart("p95 (ms) against "+label, r, func(p CapacityPoint) *float64 { return p.P95 }))
		charts.WriteString(capacityChart("throughput (req/s) against "+label, r, func(p CapacityPoint) *float64 { return p.Rate }))
	}
	charts.WriteString("</div>\n")
	page, err := htmlPage("perfexp sweep "+r.Sweep, charts.String(), SweepMarkdown(r))
	if err != nil {
		return "", fmt.Errorf("rendering the sweep report: %w", err)
	}
	return page, nil
}

// armBars draws one group of bars per arm, one bar per scenario: the mean p95 over the arm's
// runs. The baseline's bars are drawn first, so a reader compares every arm with the left.
func armBars(r *SweepResult) string {
	const w, h, left, right, top, bottom = 640.0, 260.0, 50.0, 10.0, 24.0, 56.0
	scenarios := sweepScenarios(r)
	if len(scenarios) == 0 || len(r.Arms) == 0 {
		return ""
	}
	hi := 0.0
	for _, a := range r.Arms {
		for _, s := range a.Scenarios {
			if s.P95 != nil && *s.P95 > hi {
				hi = *s.P95
			}
		}
	}
	if hi == 0 {
		return ""
	}
	group := (w - left - right) / float64(len(r.Arms))
	bar := group * 0.8 / float64(len(scenarios))
	y := func(v float64) float64 { return top + (h-top-bottom)*(1-v/hi) }
	var b strings.Builder
	title := "p95 (ms) per arm"
	fmt.Fprintf(&b, `<div class="chart"><svg viewBox="0 0 %.0f %.0f" role="img" aria-label="%s">`, w, h, title)
	fmt.Fprintf(&b, `<text x="%.0f" y="16" font-size="13">%s</text>`, left, title)
	fmt.Fprintf(&b, `<line x1="%.0f" y1="%.0f" x2="%.0f" y2="%.0f" stroke="#999"/>`, left, h-bottom, w-right, h-bottom)
	fmt.Fprintf(&b, `<text x="%.0f" y="%.0f" font-size="10" text-anchor="end">%s</text>`, left-4, top+4, axis(hi))
	fmt.Fprintf(&b, `<text x="%.0f" y="%.0f" font-size="10" text-anchor="end">0</text>`, left-4, h-bottom)
	for i, a := range r.Arms {
		x0 := left + group*float64(i) + group*0.1
		for j, name := range scenarios {
			for _, s := range a.Scenarios {
				if s.Name != name || s.P95 == nil {
					continue
				}
				fmt.Fprintf(&b, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s"><title>%s %s: %s</title></rect>`,
					x0+bar*float64(j), y(*s.P95), bar, h-bottom-y(*s.P95), palette[j%len(palette)],
					html.EscapeString(a.Name), html.EscapeString(name), withUnit(s.P95, "ms"))
			}
		}
		fmt.Fprintf(&b, `<text x="%.1f" y="%.0f" font-size="10" text-anchor="middle">%s</text>`, x0+group*0.4, h-bottom+14, html.EscapeString(a.Name))
	}
	for j, name := range scenarios {
		fmt.Fprintf(&b, `<text x="%.0f" y="%.0f" font-size="10" fill="%s">%s</text>`, left+float64(j)*110, h-6, palette[j%len(palette)], html.EscapeString(name))
	}
	b.WriteString("</svg></div>")
	return b.String()
}

// capacityChart draws one line per scenario through the arms' points, with load on the x axis
// (to scale, from 0), so a knee in latency or a plateau in throughput shows where capacity ends.
func capacityChart(title string, r *SweepResult, value func(CapacityPoint) *float64) string {
	const w, h, left, right, top, bottom = 480.0, 220.0, 50.0, 10.0, 24.0, 40.0
	points := CapacityPoints(r)
	xmax, ymax := 0.0, 0.0
	for _, p := range points {
		xmax = max(xmax, p.Load)
		if v := value(p); v != nil {
			ymax = max(ymax, *v)
		}
	}
	if xmax == 0 || ymax == 0 {
		return ""
	}
	x := func(v float64) float64 { return left + (w-left-right)*v/xmax }
	y := func(v float64) float64 { return top + (h-top-bottom)*(1-v/ymax) }
	var b strings.Builder
	fmt.Fprintf(&b, `<div class="chart"><svg viewBox="0 0 %.0f %.0f" role="img" aria-label="%s">`, w, h, html.EscapeString(title))
	fmt.Fprintf(&b, `<text x="%.0f" y="16" font-size="13">%s</text>`, left, html.EscapeString(title))
	fmt.Fprintf(&b, `<line x1="%.0f" y1="%.0f" x2="%.0f" y2="%.0f" stroke="#999"/>`, left, h-bottom, w-right, h-bottom)
	fmt.Fprintf(&b, `<line x1="%.0f" y1="%.0f" x2="%.0f" y2="%.0f" stroke="#999"/>`, left, top, left, h-bottom)
	fmt.Fprintf(&b, `<text x="%.0f" y="%.0f" font-size="10" text-anchor="end">%s</text>`, left-4, top+4, axis(ymax))
	fmt.Fprintf(&b, `<text x="%.0f" y="%.0f" font-size="10" text-anchor="end">0</text>`, left-4, h-bottom)
	fmt.Fprintf(&b, `<text x="%.0f" y="%.0f" font-size="10" text-anchor="end">%s</text>`, w-right, h-bottom+14, axis(xmax))
	for i, name := range sweepScenarios(r) {
		color := palette[i%len(palette)]
		var pts []string
		for _, p := range points {
			if v := value(p); p.Scenario == name && v != nil {
				pts = append(pts, fmt.Sprintf("%.1f,%.1f", x(p.Load), y(*v)))
				fmt.Fprintf(&b, `<circle r="2.5" fill="%s" cx="%.1f" cy="%.1f"/>`, color, x(p.Load), y(*v))
			}
		}
		if len(pts) > 1 {
			fmt.Fprintf(&b, `<polyline fill="none" stroke="%s" stroke-width="1.5" points="%s"/>`, color, strings.Join(pts, " "))
		}
		fmt.Fprintf(&b, `<text x="%.0f" y="%.0f" font-size="10" fill="%s">%s</text>`, left+float64(i)*110, h-6, color, html.EscapeString(name))
	}
	b.WriteString("</svg></div>")
	return b.String()
}
