package report

import (
	"fmt"
	"math"
	"sort"

	"github.com/perfexp/perfexp/internal/result"
)

// The latency distribution is drawn as a percentile curve: latency against percentile, with the
// percentile axis stretched towards the tail (position -log10(1 - q)), so p50, p90 and p99
// are evenly spaced and the tail, where runs differ most, is not squeezed into a corner.

// Names of the percentiles the header and the curve show.
const (
	nameP95 = "p95"
	nameP99 = "p99"
)

// percentileMarks are the percentiles the report states; the curve passes through them.
var percentileMarks = []struct {
	q     float64
	label string
	get   func(result.RequestStats) *float64
}{
	{0.50, "p50", func(s result.RequestStats) *float64 { return s.P50 }},
	{0.75, "p75", func(s result.RequestStats) *float64 { return s.P75 }},
	{0.90, "p90", func(s result.RequestStats) *float64 { return s.P90 }},
	{0.95, nameP95, func(s result.RequestStats) *float64 { return s.P95 }},
	{0.99, nameP99, func(s result.RequestStats) *float64 { return s.P99 }},
}

func tailPos(q float64) float64 { return -math.Log10(1 - q) }

// curveQuantiles are where the curve is evaluated: 60 steps from p50 to p99, even in tailPos.
func curveQuantiles() []float64 {
	lo, hi := tailPos(0.5), tailPos(0.99)
	out := make([]float64, 61)
	for i := range out {
		out[i] = 1 - math.Pow(10, -(lo+(hi-lo)*float64(i)/60))
	}
	return out
}

// mergedBuckets sums a run's per-interval histograms (all scenarios together) over the
// measured window: the window's histogram, bounds in milliseconds, sorted by upper bound.
type msBucket struct{ lower, upper, count float64 }

func mergedBuckets(r *result.Result) []msBucket {
	s := allScenariosIntervals(r)
	if s == nil || len(s.Bounds) == 0 {
		return nil
	}
	counts := make([]float64, len(s.Bounds))
	for _, row := range s.Counts {
		for j, c := range row {
			if j < len(counts) {
				counts[j] += c
			}
		}
	}
	var out []msBucket
	for j, b := range s.Bounds {
		if counts[j] > 0 {
			out = append(out, msBucket{lower: 1000 * b[0], upper: 1000 * b[1], count: counts[j]})
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].upper != out[j].upper {
			return out[i].upper < out[j].upper
		}
		return out[i].lower < out[j].lower
	})
	return out
}

// bucketQuantile is the q-quantile of a histogram the way internal/analysis estimates the
// report's percentiles (the bucket holding rank q·count, log-uniform inside an exponential
// bucket), so the curve passes through the numbers in the tables; a test holds the two together.
func bucketQuantile(bs []msBucket, q float64) float64 {
	total := 0.0
	for _, b := range bs {
		total += b.count
	}
	if total <= 0 {
		return nan
	}
	rank, cum := q*total, 0.0
	for i, b := range bs {
		if cum+b.count >= rank || i == len(bs)-1 {
			f := math.Max(0, math.Min(1, (rank-cum)/b.count))
			if b.lower > 0 && b.upper > b.lower {
				return b.lower * math.Pow(b.upper/b.lower, f)
			}
			return b.lower + f*(b.upper-b.lower)
		}
		cum += b.count
	}
	return nan
}

// distributionOf is a run's percentile curve: from its window's histogram when the result keeps
// per-interval histograms, else straight lines through the percentiles it states.
func distributionOf(r *result.Result) (xs, ys []float64, fromHistogram bool) {
	if bs := mergedBuckets(r); len(bs) > 0 {
		for _, q := range curveQuantiles() {
			xs, ys = append(xs, tailPos(q)), append(ys, bucketQuantile(bs, q))
		}
		return xs, ys, true
	}
	stated, _ := curveStats(r)
	for _, m := range percentileMarks {
		xs, ys = append(xs, tailPos(m.q)), append(ys, deref(m.get(stated)))
	}
	return xs, ys, false
}

// curveStats are the percentiles a run's curve passes through: the successful requests' when
// its per-interval histograms hold only those (as comparisons judge them) and some requests
// failed, else the tables' own. The second value says which.
func curveStats(r *result.Result) (result.RequestStats, bool) {
	if l := r.Total.Successful; l != nil && r.Intervals != nil && r.Intervals.SuccessfulOnly {
		return result.RequestStats{Avg: l.Avg, P50: l.P50, P75: l.P75, P90: l.P90, P95: l.P95, P99: l.P99, Max: l.Max}, true
	}
	return r.Total, false
}

// latencyDistribution draws both runs' percentile curves with the reported percentiles marked.
func latencyDistribution(r, base *result.Result) string {
	type run struct {
		label, color, class string
		r                   *result.Result
	}
	runs := []run{}
	if base != nil {
		runs = append(runs, run{labelBaseline + " " + base.Experiment, colorBaseline, labelBaseline, base})
	}
	runs = append(runs, run{labelRun, colorRun, "run", r})
	hi := 0.0
	anyStated := false
	for _, rn := range runs {
		_, ys, _ := distributionOf(rn.r)
		hi = math.Max(hi, maxOf(ys))
		stated, _ := curveStats(rn.r)
		for _, m := range percentileMarks {
			if v := m.get(stated); v != nil {
				anyStated = true
				hi = math.Max(hi, *v)
			}
		}
	}
	if !anyStated || hi <= 0 {
		return noData("No latency distribution: the result states no percentiles (no latency data was found).")
	}
	top := niceMax(hi*1.05, 5)
	p := newPlot("latency distribution", 360, 70, 20, 44, 52, scale{lo: tailPos(0.5), hi: tailPos(0.99)}, scale{lo: 0, hi: top})
	p.yGrid(niceTicks(0, top, 5), tickLabel(niceStep(top, 5)))
	for _, m := range percentileMarks {
		p.xGrid([]float64{tailPos(m.q)}, func(float64) string { return m.label })
	}
	p.frame("percentile (the tail stretched: p50, p90 and p99 equally spaced)", "latency (ms)")
	var items []legendItem
	notes := ""
	for _, rn := range runs {
		xs, ys, fromHist := distributionOf(rn.r)
		p.line(xs, ys, rn.color, 2.5, "", rn.class+"-curve")
		var mx, my []float64
		var tips []string
		stated, successful := curveStats(rn.r)
		for _, m := range percentileMarks {
			mx, my = append(mx, tailPos(m.q)), append(my, deref(m.get(stated)))
			tips = append(tips, fmt.Sprintf("%s %s: %s", rn.label, m.label, withUnit(m.get(stated), "ms")))
		}
		if successful {
			notes += fmt.Sprintf(" %s: successful requests only (what the comparison judges; failed requests are often fast), the percentiles under its tables.", capitalise(rn.label))
		}
		p.dots(mx, my, tips, rn.color, rn.class+"-mark")
		items = append(items, legendItem{label: rn.label, color: rn.color})
		if !fromHist {
			notes += fmt.Sprintf(" %s keeps no per-interval histograms: its curve joins its stated percentiles.", capitalise(rn.label))
		}
	}
	p.legend(items)
	caption := "All scenarios together over the measured window. The curve is read from the merged k6 histograms; circles are the percentiles the tables state." + notes
	if base == nil {
		caption += " " + baselineNote(r, nil, false)
	}
	return figure("chart", p.end(), esc(caption))
}

func capitalise(s string) string {
	if s == "" {
		return s
	}
	r := []rune(s)
	if r[0] >= 'a' && r[0] <= 'z' {
		r[0] -= 'a' - 'A'
	}
	return string(r)
}
