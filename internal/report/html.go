package report

import (
	"bytes"
	"fmt"
	"html"
	"math"
	"strings"
	"time"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/extension"

	"github.com/perfexp/perfexp/internal/analysis"
)

// KeyHTML is the report as a page with charts.
const KeyHTML = "report.html"

// HTML renders the report as one self-contained page: charts of p95, throughput and error rate
// over the measured window (inline SVG, no scripts), then the Markdown report rendered by
// goldmark with GitHub's table extension.
func HTML(r *analysis.Result) (string, error) {
	var charts strings.Builder
	if t := r.Timeline; t != nil && len(t.Series) > 0 {
		charts.WriteString(`<div class="charts">`)
		charts.WriteString(chart("p95 (ms)", t, func(s analysis.TimelineSeries) []*float64 { return s.P95 }))
		charts.WriteString(chart("throughput (req/s)", t, func(s analysis.TimelineSeries) []*float64 { return s.Rate }))
		charts.WriteString(chart("error rate (%)", t, func(s analysis.TimelineSeries) []*float64 { return s.ErrorRate }))
		charts.WriteString("</div>\n")
	}
	page, err := htmlPage("perfexp "+r.Experiment, charts.String(), Markdown(r))
	if err != nil {
		return "", fmt.Errorf("rendering the report: %w", err)
	}
	return page, nil
}

// htmlPage is one self-contained page (no scripts, no external resources): the charts (inline
// SVG), then the Markdown rendered by goldmark with GitHub's table extension.
func htmlPage(title, charts, markdown string) (string, error) {
	var body bytes.Buffer
	md := goldmark.New(goldmark.WithExtensions(extension.GFM))
	if err := md.Convert([]byte(markdown), &body); err != nil {
		return "", err
	}
	var b strings.Builder
	fmt.Fprintf(&b, `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>%s</title>
<style>
body{font-family:system-ui,sans-serif;max-width:1100px;margin:2em auto;padding:0 1em;color:#222}
table{border-collapse:collapse;margin:1em 0;font-size:90%%}td,th{border:1px solid #ccc;padding:.25em .5em}
td[style*="right"],th[style*="right"]{font-variant-numeric:tabular-nums}
.charts{display:flex;flex-wrap:wrap;gap:1em}.chart{flex:1 1 340px}svg{width:100%%;height:auto}
</style></head><body>
`, html.EscapeString(title))
	b.WriteString(charts)
	b.Write(body.Bytes())
	b.WriteString("</body></html>\n")
	return b.String(), nil
}

var palette = []string{"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#17becf"}

// chart draws one line per scenario over the intervals; gaps where an interval had no data.
func chart(title string, t *analysis.Timeline, values func(analysis.TimelineSeries) []*float64) string {
	const w, h, left, right, top, bottom = 480.0, 220.0, 50.0, 10.0, 24.0, 40.0
	n := 0
	hi := 0.0
	for _, s := range t.Series {
		vs := values(s)
		n = max(n, len(vs))
		for _, v := range vs {
			if v != nil && *v > hi {
				hi = *v
			}
		}
	}
	if n == 0 {
		return ""
	}
	if hi == 0 {
		hi = 1
	}
	x := func(i int) float64 { return left + (w-left-right)*(float64(i)+0.5)/float64(n) }
	y := func(v float64) float64 { return top + (h-top-bottom)*(1-v/hi) }
	var b strings.Builder
	fmt.Fprintf(&b, `<div class="chart"><svg viewBox="0 0 %.0f %.0f" role="img" aria-label="%s">`, w, h, html.EscapeString(title))
	fmt.Fprintf(&b, `<text x="%.0f" y="16" font-size="13">%s</text>`, left, html.EscapeString(title))
	fmt.Fprintf(&b, `<line x1="%.0f" y1="%.0f" x2="%.0f" y2="%.0f" stroke="#999"/>`, left, h-bottom, w-right, h-bottom)
	fmt.Fprintf(&b, `<line x1="%.0f" y1="%.0f" x2="%.0f" y2="%.0f" stroke="#999"/>`, left, top, left, h-bottom)
	fmt.Fprintf(&b, `<text x="%.0f" y="%.0f" font-size="10" text-anchor="end">%s</text>`, left-4, top+4, axis(hi))
	fmt.Fprintf(&b, `<text x="%.0f" y="%.0f" font-size="10" text-anchor="end">0</text>`, left-4, h-bottom)
	end := t.Start.Add(time.Duration(float64(n) * t.StepSeconds * float64(time.Second)))
	fmt.Fprintf(&b, `<text x="%.0f" y="%.0f" font-size="10">%s</text>`, left, h-bottom+14, t.Start.UTC().Format("15:04:05"))
	fmt.Fprintf(&b, `<text x="%.0f" y="%.0f" font-size="10" text-anchor="end">%s</text>`, w-right, h-bottom+14, end.UTC().Format("15:04:05"))
	for i, s := range t.Series {
		color := palette[i%len(palette)]
		var pts []string
		flush := func() {
			if len(pts) > 0 {
				fmt.Fprintf(&b, `<polyline fill="none" stroke="%s" stroke-width="1.5" points="%s"/>`, color, strings.Join(pts, " "))
				if len(pts) == 1 {
					fmt.Fprintf(&b, `<circle r="2" fill="%s" cx="%s" cy="%s"/>`, color, strings.Split(pts[0], ",")[0], strings.Split(pts[0], ",")[1])
				}
			}
			pts = nil
		}
		for j, v := range values(s) {
			if v == nil || math.IsNaN(*v) {
				flush()
				continue
			}
			pts = append(pts, fmt.Sprintf("%.1f,%.1f", x(j), y(*v)))
		}
		flush()
		name := s.Scenario
		if name == "*" {
			name = "all scenarios"
		}
		fmt.Fprintf(&b, `<text x="%.0f" y="%.0f" font-size="10" fill="%s">%s</text>`, left+float64(i)*110, h-6, color, html.EscapeString(name))
	}
	b.WriteString("</svg></div>")
	return b.String()
}

func axis(v float64) string {
	switch {
	case v >= 100:
		return fmt.Sprintf("%.0f", v)
	case v >= 1:
		return fmt.Sprintf("%.1f", v)
	}
	return fmt.Sprintf("%.3g", v)
}
