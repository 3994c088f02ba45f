package report

import (
	"fmt"
	"math"
	"strings"

	"github.com/perfexp/perfexp/internal/result"
)

// runSeries is what the time charts draw of one run, all scenarios together: per interval,
// its middle in seconds since the measured window began, p95 and mean latency (ms),
// throughput (req/s) and error rate (%). NaN marks an interval without requests.
type runSeries struct {
	t, p95, avg, rate, errRate []float64
	// hasAvg is false when the result keeps no per-interval histograms to take a mean from.
	hasAvg bool
}

// timeSeriesOf reads a run's per-interval series; nil when it has no timeline.
func timeSeriesOf(r *result.Result) *runSeries {
	if r == nil || r.Timeline == nil || r.Timeline.StepSeconds <= 0 {
		return nil
	}
	var ts *result.TimelineSeries
	for i := range r.Timeline.Series {
		if s := &r.Timeline.Series[i]; s.Scenario == "*" || (ts == nil && len(r.Timeline.Series) == 1) {
			ts = s
		}
	}
	if ts == nil || len(ts.P95) == 0 {
		return nil
	}
	step := r.Timeline.StepSeconds
	out := &runSeries{}
	for i := range ts.P95 {
		out.t = append(out.t, (float64(i)+0.5)*step)
		out.p95 = append(out.p95, deref(ts.P95[i]))
		out.rate = append(out.rate, derefAt(ts.Rate, i))
		out.errRate = append(out.errRate, derefAt(ts.ErrorRate, i))
		out.avg = append(out.avg, nan)
	}
	// The mean of an interval is its histogram's sum over its count: exact, no buckets.
	if is := allScenariosIntervals(r); is != nil && r.Intervals.StepSeconds == step {
		for i := range out.avg {
			if i < len(is.Sums) && i < len(is.Counts) {
				count := 0.0
				for _, c := range is.Counts[i] {
					count += c
				}
				if count > 0 {
					out.avg[i] = 1000 * is.Sums[i] / count
					out.hasAvg = true
				}
			}
		}
	}
	return out
}

func derefAt(vs []*float64, i int) float64 {
	if i >= len(vs) {
		return nan
	}
	return deref(vs[i])
}

// allScenariosIntervals is the per-interval data of all scenarios together, or of the only
// scenario.
func allScenariosIntervals(r *result.Result) *result.IntervalSeries {
	if r == nil || r.Intervals == nil {
		return nil
	}
	var only *result.IntervalSeries
	n := 0
	for i := range r.Intervals.Series {
		s := &r.Intervals.Series[i]
		if s.Request != "" {
			continue
		}
		if s.Scenario == "*" {
			return s
		}
		only, n = s, n+1
	}
	if n == 1 {
		return only
	}
	return nil
}

// timeAxis chooses the unit of elapsed time: seconds for runs up to three minutes, minutes up
// to three hours, hours beyond.
func timeAxis(seconds float64) (divisor float64, title string) {
	switch {
	case seconds <= 180:
		return 1, "seconds since the measured window began"
	case seconds <= 3*3600:
		return 60, "minutes since the measured window began"
	}
	return 3600, "hours since the measured window began"
}

// timeLine is one line of a chart over elapsed time: by convention the run in blue, the
// baseline in grey, a second statistic of the same run dashed. class names its marks (tests
// count them).
type timeLine struct {
	label       string
	t, v        []float64
	color, dash string
	class       string
}

// timeChart draws lines against the time since each run's measured window began, so runs that
// ran at different times line up.
func timeChart(label, yTitle string, lines []timeLine, w, h float64) string {
	span, hi := 0.0, 0.0
	for _, l := range lines {
		if len(l.t) > 0 {
			span = math.Max(span, l.t[len(l.t)-1]+(l.t[len(l.t)-1]-l.t[0])/float64(max(1, len(l.t)-1))/2)
		}
		hi = math.Max(hi, maxOf(l.v))
	}
	div, xTitle := timeAxis(span)
	top := niceMax(hi*1.05, 5)
	p := newSizedPlot(label, w, h, 70, 20, 44, 52, scale{lo: 0, hi: span / div}, scale{lo: 0, hi: top})
	yt := niceTicks(0, top, 5)
	p.yGrid(yt, tickLabel(niceStep(top, 5)))
	parts := int(math.Max(4, w/96)) // a label every 96 units at most
	p.xGrid(niceTicks(0, span/div, parts), tickLabel(niceStep(span/div, parts)))
	p.frame(xTitle, yTitle)
	items := make([]legendItem, 0, len(lines))
	for _, l := range lines {
		xs := make([]float64, len(l.t))
		for i, t := range l.t {
			xs[i] = t / div
		}
		width := 2.5
		if l.color == colorBaseline {
			width = 2
		}
		p.line(xs, l.v, l.color, width, l.dash, l.class)
		items = append(items, legendItem{label: l.label, color: l.color, dash: l.dash})
	}
	p.legend(items)
	return p.end()
}

// latencyOverTime draws p95 and the mean per interval, the baseline's overlaid.
func latencyOverTime(r, base *result.Result) string {
	cur := timeSeriesOf(r)
	if cur == nil {
		return noData("No latency over time: the result carries no per-interval timeline (no k6 histograms were found for the window).")
	}
	lines := []timeLine{}
	bs := timeSeriesOf(base)
	if bs != nil {
		lines = append(lines, timeLine{label: labelBaseline + " p95", t: bs.t, v: bs.p95, color: colorBaseline, class: "baseline-p95"})
		if bs.hasAvg {
			lines = append(lines, timeLine{label: labelBaseline + " avg", t: bs.t, v: bs.avg, color: colorBaseline, dash: "6 4", class: "baseline-avg"})
		}
	}
	lines = append(lines, timeLine{label: labelRun + " p95", t: cur.t, v: cur.p95, color: colorRun, class: "run-p95"})
	if cur.hasAvg {
		lines = append(lines, timeLine{label: labelRun + " avg", t: cur.t, v: cur.avg, color: colorRun, dash: "6 4", class: "run-avg"})
	}
	caption := fmt.Sprintf("All scenarios together, per %s interval; gaps are intervals without requests. p95 per interval is read from the merged k6 histograms of the successful requests (within the bucket bound; failed requests are often fast), avg is exact.", dur(r.Timeline.StepSeconds))
	caption += " " + baselineNote(r, base, bs != nil)
	if !cur.hasAvg {
		caption += " The mean per interval is absent: the result keeps no per-interval histograms."
	}
	return figure("chart", timeChart("latency over time", "latency (ms)", lines, chartWidth, 340), esc(caption)) + scenarioLatency(r, base)
}

// maxScenarioCharts bounds the small charts of p95 per scenario; the tables list every one.
const maxScenarioCharts = 6

// scenarioP95 is one scenario's p95 per interval, nil when the timeline has none.
func scenarioP95(r *result.Result, scenario string) (t, p95 []float64) {
	if r == nil || r.Timeline == nil || r.Timeline.StepSeconds <= 0 {
		return nil, nil
	}
	for _, s := range r.Timeline.Series {
		if s.Scenario != scenario {
			continue
		}
		for i, v := range s.P95 {
			t, p95 = append(t, (float64(i)+0.5)*r.Timeline.StepSeconds), append(p95, deref(v))
		}
	}
	return t, p95
}

// scenarioLatency draws each scenario's p95 over time side by side, the baseline's overlaid,
// when the run has several: all scenarios together can hide one that changed.
func scenarioLatency(r, base *result.Result) string {
	var names []string
	for _, s := range r.Timeline.Series {
		if s.Scenario != "*" {
			names = append(names, s.Scenario)
		}
	}
	if len(names) < 2 {
		return ""
	}
	extra := ""
	if len(names) > maxScenarioCharts {
		extra = fmt.Sprintf(" The first %d of %d scenarios are drawn.", maxScenarioCharts, len(names))
		names = names[:maxScenarioCharts]
	}
	var b strings.Builder
	b.WriteString(`<div class="grid">`)
	for _, name := range names {
		var lines []timeLine
		if t, v := scenarioP95(base, name); len(t) > 0 {
			lines = append(lines, timeLine{label: labelBaseline, t: t, v: v, color: colorBaseline, class: "baseline-p95"})
		}
		t, v := scenarioP95(r, name)
		lines = append(lines, timeLine{label: labelRun, t: t, v: v, color: colorRun, class: "run-p95"})
		fmt.Fprintf(&b, `<figure class="chart"><figcaption class="title">p95 of scenario %s</figcaption>%s</figure>`,
			esc(name), timeChart("p95 over time: "+name, "p95 (ms)", lines, 470, 280))
	}
	b.WriteString(`</div>`)
	return b.String() + `<p class="note">` + esc("Each scenario's p95 per interval; each chart has its own scale."+extra) + `</p>`
}

// baselineNote says whether and which baseline is overlaid, and why not when it is not.
func baselineNote(r, base *result.Result, drawn bool) string {
	switch {
	case drawn:
		return fmt.Sprintf("Grey: baseline %s, aligned on the start of its measured window.", base.Experiment)
	case base != nil:
		return fmt.Sprintf("The baseline %s is not overlaid: its result carries no per-interval data.", base.Experiment)
	case r.Comparison != nil:
		return fmt.Sprintf("The baseline %s is not overlaid: its full result was not available to the report.", r.Comparison.Baseline)
	}
	return "No baseline to overlay."
}

// throughputOverTime draws requests per second per interval and, when any request failed in
// either run, the error rate below it.
func throughputOverTime(r, base *result.Result) string {
	cur := timeSeriesOf(r)
	if cur == nil {
		return noData("No throughput over time: the result carries no per-interval timeline.")
	}
	bs := timeSeriesOf(base)
	var lines []timeLine
	if bs != nil {
		lines = append(lines, timeLine{label: labelBaseline, t: bs.t, v: bs.rate, color: colorBaseline, class: "baseline-rate"})
	}
	lines = append(lines, timeLine{label: labelRun, t: cur.t, v: cur.rate, color: colorRun, class: "run-rate"})
	out := figure("chart", timeChart("throughput over time", "requests per second", lines, chartWidth, 340),
		esc("All scenarios together, requests per second in each interval. "+baselineNote(r, base, bs != nil)))
	errs := maxOf(cur.errRate)
	if bs != nil {
		errs = math.Max(errs, maxOf(bs.errRate))
	}
	if errs == 0 {
		return out + `<p class="note">No request failed in any interval` + map[bool]string{true: " of either run", false: ""}[bs != nil] + `, so there is no error-rate chart.</p>`
	}
	lines = nil
	if bs != nil {
		lines = append(lines, timeLine{label: labelBaseline, t: bs.t, v: bs.errRate, color: colorBaseline, class: "baseline-errors"})
	}
	lines = append(lines, timeLine{label: labelRun, t: cur.t, v: cur.errRate, color: colorRun, class: "run-errors"})
	return out + figure("chart", timeChart("error rate over time", "failed requests (%)", lines, chartWidth, 340),
		"Failed requests as a share of each interval's requests.")
}
