package report

import (
	"fmt"
	"html"
	"math"
	"strconv"
	"strings"
)

// The charts are drawn as inline SVG by hand: a page that must open from a mail attachment or a
// ConfigMap dump cannot fetch a charting library, and scripts would not print. svgPlot holds
// the few primitives every chart shares: a plotting area inside margins, linear or logarithmic
// scales, round ticks with grid lines, axis titles and a legend, all in data coordinates.

// Colours: this run in blue, the baseline in grey (the reference recedes), verdicts in the
// colours readers already associate with better, worse and "cannot tell".
const (
	colorRun      = "#0969da"
	colorBaseline = "#6e7781"
	colorGrid     = "#d8dee4"
	colorAxis     = "#57606a"
	colorText     = "#24292f"
	colorLimit    = "#cf222e"
	colorBand     = "#ddf4ff"

	colorImproved     = "#1a7f37"
	colorRegressed    = "#cf222e"
	colorNoChange     = "#0969da"
	colorInconclusive = "#9a6700"
	colorUnknown      = "#6e7781"
)

// Labels of the two runs in legends.
const (
	labelRun      = "this run"
	labelBaseline = "baseline"
)

// chartWidth is every chart's width in user units: about the page's width in pixels, so 13-unit
// text reads as 13 px.
const chartWidth = 960.0

// palette colours scenarios and arms where there is no run/baseline pair.
var palette = []string{colorRun, "#bc4c00", colorImproved, "#8250df", colorRegressed, "#4d2d00", "#bf3989", "#1b7c83"}

// changeColor is the colour of a comparison verdict.
func changeColor(change string) string {
	switch change {
	case "Improved":
		return colorImproved
	case "Regressed":
		return colorRegressed
	case "NoMeaningfulChange":
		return colorNoChange
	case "Inconclusive":
		return colorInconclusive
	}
	return colorUnknown
}

// scale maps data values on one axis to [0, 1]; a logarithmic scale needs lo > 0.
type scale struct {
	lo, hi float64
	log    bool
}

func (s scale) frac(v float64) float64 {
	if s.log {
		return (math.Log(v) - math.Log(s.lo)) / (math.Log(s.hi) - math.Log(s.lo))
	}
	if s.hi == s.lo {
		return 0.5
	}
	return (v - s.lo) / (s.hi - s.lo)
}

// svgPlot is one chart being drawn.
type svgPlot struct {
	b                        strings.Builder
	w, h                     float64
	left, right, top, bottom float64
	x, y                     scale
}

// newPlot starts a chart chartWidth×h user units large (the page shows it at about that many
// pixels).
func newPlot(label string, h, left, right, top, bottom float64, x, y scale) *svgPlot {
	return newSizedPlot(label, chartWidth, h, left, right, top, bottom, x, y)
}

// newSizedPlot starts a chart of w×h user units, for charts shown side by side.
func newSizedPlot(label string, w, h, left, right, top, bottom float64, x, y scale) *svgPlot {
	p := &svgPlot{w: w, h: h, left: left, right: right, top: top, bottom: bottom, x: x, y: y}
	p.printf(`<svg viewBox="0 0 %s %s" role="img" aria-label="%s" font-family="system-ui, sans-serif" font-size="13" fill="%s">`,
		coord(w), coord(h), esc(label), colorText)
	return p
}

func (p *svgPlot) printf(format string, args ...any) { fmt.Fprintf(&p.b, format, args...) }

// px and py are the user-space coordinates of data values.
func (p *svgPlot) px(v float64) float64 { return p.left + (p.w-p.left-p.right)*p.x.frac(v) }
func (p *svgPlot) py(v float64) float64 { return p.h - p.bottom - (p.h-p.top-p.bottom)*p.y.frac(v) }

// yGrid draws horizontal grid lines with their labels at the left.
func (p *svgPlot) yGrid(ticks []float64, format func(float64) string) {
	for _, t := range ticks {
		y := p.py(t)
		p.printf(`<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="%s"/>`, coord(p.left), coord(y), coord(p.w-p.right), coord(y), colorGrid)
		p.printf(`<text x="%s" y="%s" text-anchor="end" fill="%s">%s</text>`, coord(p.left-6), coord(y+4), colorAxis, esc(format(t)))
	}
}

// xGrid draws vertical grid lines with their labels below the plotting area.
func (p *svgPlot) xGrid(ticks []float64, format func(float64) string) {
	for _, t := range ticks {
		x := p.px(t)
		p.printf(`<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="%s"/>`, coord(x), coord(p.top), coord(x), coord(p.h-p.bottom), colorGrid)
		p.printf(`<text x="%s" y="%s" text-anchor="middle" fill="%s">%s</text>`, coord(x), coord(p.h-p.bottom+17), colorAxis, esc(format(t)))
	}
}

// frame draws the x axis line and the axis titles.
func (p *svgPlot) frame(xTitle, yTitle string) {
	p.printf(`<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="%s"/>`, coord(p.left), coord(p.h-p.bottom), coord(p.w-p.right), coord(p.h-p.bottom), colorAxis)
	if xTitle != "" {
		p.printf(`<text x="%s" y="%s" text-anchor="middle" fill="%s">%s</text>`, coord(p.left+(p.w-p.left-p.right)/2), coord(p.h-p.bottom+36), colorAxis, esc(xTitle))
	}
	if yTitle != "" {
		cy := p.top + (p.h-p.top-p.bottom)/2
		p.printf(`<text transform="translate(16 %s) rotate(-90)" text-anchor="middle" fill="%s">%s</text>`, coord(cy), colorAxis, esc(yTitle))
	}
}

// line draws a polyline through the points, broken where a value is NaN (an interval
// without data is a gap, never a zero). A lone point between gaps is drawn as a dot.
func (p *svgPlot) line(xs, ys []float64, color string, width float64, dash string, class string) {
	var pts []string
	flush := func() {
		switch len(pts) {
		case 0:
		case 1:
			xy := strings.Split(pts[0], ",")
			p.printf(`<circle class="%s" cx="%s" cy="%s" r="%s" fill="%s"/>`, class, xy[0], xy[1], coord(width+0.5), color)
		default:
			dashAttr := ""
			if dash != "" {
				dashAttr = ` stroke-dasharray="` + dash + `"`
			}
			p.printf(`<polyline class="%s" fill="none" stroke="%s" stroke-width="%s" stroke-linejoin="round"%s points="%s"/>`,
				class, color, coord(width), dashAttr, strings.Join(pts, " "))
		}
		pts = nil
	}
	for i := range xs {
		if i >= len(ys) || math.IsNaN(ys[i]) || math.IsNaN(xs[i]) {
			flush()
			continue
		}
		pts = append(pts, coord(p.px(xs[i]))+","+coord(p.py(ys[i])))
	}
	flush()
}

// dots marks points with circles, each with a tooltip.
func (p *svgPlot) dots(xs, ys []float64, tips []string, color, class string) {
	for i := range xs {
		if math.IsNaN(ys[i]) {
			continue
		}
		p.printf(`<circle class="%s" cx="%s" cy="%s" r="4" fill="#fff" stroke="%s" stroke-width="2"><title>%s</title></circle>`,
			class, coord(p.px(xs[i])), coord(p.py(ys[i])), color, esc(tips[i]))
	}
}

// legendItem is one entry of a legend: a line sample (dash "" is solid) or a filled square.
type legendItem struct {
	label, color, dash string
	square             bool
}

// legend lays the items out in a row above the plotting area, left-aligned with it, or
// moved left as far as it must to fit the chart's width.
func (p *svgPlot) legend(items []legendItem) {
	width := 0.0
	for _, it := range items {
		width += 28 + textWidth(it.label) + 22
	}
	x, y := math.Max(10, math.Min(p.left, p.w-width)), p.top-14
	for _, it := range items {
		if it.square {
			p.printf(`<rect x="%s" y="%s" width="12" height="12" fill="%s"/>`, coord(x), coord(y-10), it.color)
		} else {
			dash := ""
			if it.dash != "" {
				dash = ` stroke-dasharray="` + it.dash + `"`
			}
			p.printf(`<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="%s" stroke-width="2.5"%s/>`, coord(x), coord(y-4), coord(x+22), coord(y-4), it.color, dash)
		}
		p.printf(`<text x="%s" y="%s">%s</text>`, coord(x+28), coord(y), esc(it.label))
		x += 28 + textWidth(it.label) + 22
	}
}

// text writes a label at a position in user units.
func (p *svgPlot) text(x, y float64, anchor, color, weight, s string) {
	extra := ""
	if weight != "" {
		extra = ` font-weight="` + weight + `"`
	}
	p.printf(`<text x="%s" y="%s" text-anchor="%s" fill="%s"%s>%s</text>`, coord(x), coord(y), anchor, color, extra, esc(s))
}

func (p *svgPlot) end() string {
	p.b.WriteString("</svg>")
	return p.b.String()
}

// thinTicks drops ticks closer than gap user units to a kept one, keeping zero (no change)
// whenever it is a tick, and working outwards from it.
func thinTicks(ticks []float64, at func(float64) float64, gap float64) []float64 {
	if len(ticks) == 0 {
		return ticks
	}
	start := 0
	for i, t := range ticks {
		if math.Abs(t) < math.Abs(ticks[start]) {
			start = i
		}
	}
	keep := []float64{ticks[start]}
	last := at(ticks[start])
	for i := start + 1; i < len(ticks); i++ {
		if x := at(ticks[i]); x-last >= gap {
			keep, last = append(keep, ticks[i]), x
		}
	}
	last = at(ticks[start])
	for i := start - 1; i >= 0; i-- {
		if x := at(ticks[i]); last-x >= gap {
			keep, last = append([]float64{ticks[i]}, keep...), x
		}
	}
	return keep
}

// textWidth estimates the width of s at 13 px in a sans-serif font, for laying out legends and
// truncating labels (no font metrics are at hand; an average glyph is about 0.58 em).
func textWidth(s string) float64 { return 7.6 * float64(len([]rune(s))) }

// clipText shortens s to at most n characters with an ellipsis.
func clipText(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// coord renders a coordinate with at most one decimal, which is finer than a pixel.
func coord(v float64) string { return strconv.FormatFloat(math.Round(v*10)/10, 'f', -1, 64) }

// esc escapes text for HTML and for XML alike (the SVG parts must parse as XML).
func esc(s string) string { return html.EscapeString(s) }

// niceStep is a round step (1, 2, 2.5 or 5 times a power of ten) that cuts span into about n
// parts.
func niceStep(span float64, n int) float64 {
	if span <= 0 || math.IsNaN(span) || math.IsInf(span, 0) {
		return 1
	}
	raw := span / float64(n)
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		if m*mag >= raw*0.999 {
			return m * mag
		}
	}
	return 10 * mag
}

// niceTicks are the multiples of a round step within [lo, hi].
func niceTicks(lo, hi float64, n int) []float64 {
	step := niceStep(hi-lo, n)
	var out []float64
	for v := math.Ceil(lo/step-1e-9) * step; v <= hi+step*1e-9; v += step {
		t := math.Round(v/step) * step
		if t == 0 {
			t = 0 // not -0, which would print as "-0"
		}
		out = append(out, t)
	}
	return out
}

// niceMax rounds hi up to a round step, so the top grid line bounds the data.
func niceMax(hi float64, n int) float64 {
	if hi <= 0 || math.IsNaN(hi) || math.IsInf(hi, 0) {
		return 1
	}
	step := niceStep(hi, n)
	return math.Ceil(hi/step-1e-9) * step
}

// tickLabel formats a tick with as many decimals as its step needs.
func tickLabel(step float64) func(float64) string {
	decimals := 0
	if step > 0 && step < 1 {
		decimals = int(math.Ceil(-math.Log10(step) - 1e-9))
		if math.Abs(step*math.Pow(10, float64(decimals))-math.Round(step*math.Pow(10, float64(decimals)))) > 1e-9 {
			decimals++
		}
	}
	return func(v float64) string { return strconv.FormatFloat(v, 'f', decimals, 64) }
}

// deref turns an optional value into a number, NaN when absent, for drawing.
func deref(v *float64) float64 {
	if v == nil || math.IsInf(*v, 0) {
		return math.NaN()
	}
	return *v
}

// maxOf is the largest non-NaN value of the lists, 0 when there is none.
func maxOf(lists ...[]float64) float64 {
	hi := 0.0
	for _, l := range lists {
		for _, v := range l {
			if !math.IsNaN(v) && v > hi {
				hi = v
			}
		}
	}
	return hi
}
