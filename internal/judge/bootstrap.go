package judge

import (
	"hash/fnv"
	"math"
	"math/rand/v2"
	"slices"
	"sort"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/result"
)

// DefaultResamples is the number of bootstrap resamples. The interval's ends are the 2.5th and
// 97.5th percentiles of the resampled changes: with 2,000 resamples each end rests on 50
// resamples beyond it, so it moves by a few tenths of its own standard error from seed to
// seed, small against the 5 % a verdict turns on; and Holm's smallest threshold across, say,
// 8 primary metrics (0.05/8) is still 3 resamples deep. One resample costs a few hundred
// additions (block sums are precomputed), so 2,000 take a few milliseconds per metric.
const DefaultResamples = 2000

// minBootstrapIntervals is the fewest intervals with requests per run the bootstrap runs on:
// fewer blocks than this cannot show how the run varies.
const minBootstrapIntervals = 8

// blockLength is the moving-block length for n intervals: about sqrt(n), at least 3. Load
// tests correlate neighbouring intervals strongly (a GC pause, a compaction, a noisy
// neighbour spans several), and a block must be long enough to hold that correlation; the
// n^(1/3) of textbooks is tuned for long series and, at 20 intervals, leaves the interval
// visibly too narrow (simulated coverage 83 % instead of 88 % at AR(1) phi 0.7).
func blockLength(n int) int {
	return max(3, int(math.Round(math.Sqrt(float64(n)))))
}

// series is one run's per-interval data for one key, on a bucket layout shared with the run
// it is compared with.
type series struct {
	counts  [][]float64 // per interval, per shared bucket
	sums    []float64   // latency sum per interval, seconds
	all     []float64   // requests per interval
	failed  []float64   // failed requests per interval
	seconds float64     // interval length
	// everyInterval counts every interval as a sample, not only those with requests: a
	// Counter's interval that added nothing is data (none of the events it counts), where a
	// request series' empty interval is time the scenario did not run.
	everyInterval bool
}

// sharedBounds is the union of both runs' bucket bounds, sorted.
func sharedBounds(a, b *result.IntervalSeries) [][2]float64 {
	seen := map[[2]float64]bool{}
	var out [][2]float64
	for _, s := range []*result.IntervalSeries{a, b} {
		for _, bd := range s.Bounds {
			if !seen[bd] {
				seen[bd] = true
				out = append(out, bd)
			}
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i][1] != out[j][1] {
			return out[i][1] < out[j][1]
		}
		return out[i][0] < out[j][0]
	})
	return out
}

func onto(s *result.IntervalSeries, bounds [][2]float64, step float64) *series {
	pos := make(map[[2]float64]int, len(bounds))
	for i, b := range bounds {
		pos[b] = i
	}
	out := &series{seconds: step, all: s.Requests, failed: s.Failed, sums: s.Sums, everyInterval: s.Counter != ""}
	out.counts = make([][]float64, len(s.Requests))
	for i := range out.counts {
		out.counts[i] = make([]float64, len(bounds))
		if i < len(s.Counts) {
			for j, c := range s.Counts[i] {
				out.counts[i][pos[s.Bounds[j]]] += c
			}
		}
	}
	if len(out.sums) < len(out.all) {
		out.sums = append(slices.Clone(out.sums), make([]float64, len(out.all)-len(out.sums))...)
	}
	if len(out.failed) < len(out.all) {
		out.failed = append(slices.Clone(out.failed), make([]float64, len(out.all)-len(out.failed))...)
	}
	return out
}

// active counts the intervals that had requests (every interval of a Counter).
func (s *series) active() int {
	if s.everyInterval {
		return len(s.all)
	}
	n := 0
	for _, a := range s.all {
		if a > 0 {
			n++
		}
	}
	return n
}

// blocks holds the sums over every run of blockLen consecutive intervals (the moving blocks),
// so one resample adds ceil(n/blockLen) blocks instead of n intervals.
type blocks struct {
	n, length int
	counts    [][]float64
	sums      []float64
	all       []float64
	failed    []float64
	seconds   float64 // of one block
}

func (s *series) blocks() *blocks {
	n := len(s.all)
	l := min(blockLength(n), n)
	// Circular blocks: a block may wrap from the run's end to its start, so every interval
	// is in exactly l blocks and the resamples are centred on the run itself (with blocks
	// that stop at the end, the first and last intervals would be drawn less often).
	b := &blocks{n: n, length: l, counts: make([][]float64, n), sums: make([]float64, n), all: make([]float64, n),
		failed: make([]float64, n), seconds: float64(l) * s.seconds}
	for i := range n {
		b.counts[i] = make([]float64, len(s.counts[0]))
		for jj := i; jj < i+l; jj++ {
			j := jj % n
			for k, c := range s.counts[j] {
				b.counts[i][k] += c
			}
			b.sums[i] += s.sums[j]
			b.all[i] += s.all[j]
			b.failed[i] += s.failed[j]
		}
	}
	return b
}

// runStats are the statistics of (a resample of) one run.
type runStats struct {
	logQ    [5]float64 // log of compareQuantiles in seconds: ratios of quantiles are differences of these
	avg     float64    // seconds
	errPct  float64
	rate    float64
	latency bool // whether it had latency observations
	reqs    float64
}

// logBounds are the buckets' log lower bounds and log growth (log upper/lower), precomputed
// so a resample's quantiles cost no logarithm.
type logBounds struct {
	bounds      [][2]float64
	logLo, logG []float64
}

func newLogBounds(bounds [][2]float64) *logBounds {
	lb := &logBounds{bounds: bounds, logLo: make([]float64, len(bounds)), logG: make([]float64, len(bounds))}
	for k, b := range bounds {
		if b[0] > 0 && b[1] > b[0] {
			lb.logLo[k], lb.logG[k] = math.Log(b[0]), math.Log(b[1]/b[0])
		} else {
			lb.logLo[k] = math.NaN() // a zero or negative bucket: interpolate linearly
		}
	}
	return lb
}

// statsOf computes the statistics of summed counts.
func statsOf(counts []float64, lb *logBounds, sum, all, failed, seconds float64, qs []float64) runStats {
	bounds := lb.bounds
	rs := runStats{reqs: all}
	var total float64
	for _, c := range counts {
		total += c
	}
	if total > 0 {
		rs.latency = true
		rs.avg = sum / total
		// One cumulative pass finds every quantile: qs is sorted.
		var cum float64
		qi := 0
		for k, c := range counts {
			if c <= 0 {
				continue
			}
			for qi < len(qs) && cum+c >= qs[qi]*total {
				f := math.Max(0, math.Min(1, (qs[qi]*total-cum)/c))
				// Exponential interpolation inside the bucket, as Histogram.Quantile does.
				if l := lb.logLo[k]; !math.IsNaN(l) {
					rs.logQ[qi] = l + f*lb.logG[k]
				} else {
					lo, hi := bounds[k][0], bounds[k][1]
					rs.logQ[qi] = math.Log(math.Max(lo+f*(hi-lo), 1e-9))
				}
				qi++
			}
			cum += c
		}
		for ; qi < len(qs); qi++ {
			rs.logQ[qi] = math.Log(bounds[len(bounds)-1][1])
		}
	}
	if all > 0 {
		rs.errPct = 100 * failed / all
	}
	if seconds > 0 {
		rs.rate = all / seconds
	}
	return rs
}

// compareQuantiles are the quantiles every comparison reads, sorted; runStats.q holds them.
var compareQuantiles = []float64{0.5, 0.75, 0.9, 0.95, 0.99}

// quantileOf maps a metric to its quantile; 0 for others.
func quantileOf(m perfexpv1alpha1.ObjectiveMetric) float64 {
	switch m {
	case perfexpv1alpha1.MetricP50:
		return 0.5
	case perfexpv1alpha1.MetricP75:
		return 0.75
	case perfexpv1alpha1.MetricP90:
		return 0.9
	case perfexpv1alpha1.MetricP95:
		return 0.95
	case perfexpv1alpha1.MetricP99:
		return 0.99
	}
	return 0
}

// value reads a metric off run statistics in the unit results use (ms for latency).
func (rs runStats) value(m perfexpv1alpha1.ObjectiveMetric) (float64, bool) {
	switch m {
	case perfexpv1alpha1.MetricAvg:
		return 1000 * rs.avg, rs.latency
	case perfexpv1alpha1.MetricErrorRate:
		return rs.errPct, rs.reqs > 0
	case perfexpv1alpha1.MetricRate:
		return rs.rate, true
	}
	if i := slices.Index(compareQuantiles, quantileOf(m)); i >= 0 {
		return 1000 * math.Exp(rs.logQ[i]), rs.latency
	}
	return 0, false
}

// logValue is log(value(m)) without the round trip through exp for quantiles.
func (rs runStats) logValue(m perfexpv1alpha1.ObjectiveMetric) float64 {
	if i := slices.Index(compareQuantiles, quantileOf(m)); i >= 0 && rs.latency {
		return rs.logQ[i] + math.Log(1000)
	}
	v, ok := rs.value(m)
	if !ok || v <= 0 {
		return math.NaN()
	}
	return math.Log(v)
}

// bootstrapMetrics are the metrics one bootstrap estimates together from the same resamples.
var bootstrapMetrics = []perfexpv1alpha1.ObjectiveMetric{perfexpv1alpha1.MetricP50, perfexpv1alpha1.MetricP75, perfexpv1alpha1.MetricP90,
	perfexpv1alpha1.MetricP95, perfexpv1alpha1.MetricP99, perfexpv1alpha1.MetricAvg, perfexpv1alpha1.MetricErrorRate, perfexpv1alpha1.MetricRate}

// seedOf derives the bootstrap's seed from the two test ids and the series, so analysing the
// same runs again gives the same intervals.
func seedOf(parts ...string) uint64 {
	h := fnv.New64a()
	for _, p := range parts {
		_, _ = h.Write([]byte(p))
		_, _ = h.Write([]byte{0})
	}
	return h.Sum64()
}

// statsPair is one resample's statistics of the two runs.
type statsPair struct{ cur, base runStats }

// wholeRun is the statistics of all of a run's intervals together.
func wholeRun(s *series, nBounds int, lb *logBounds) runStats {
	counts := make([]float64, nBounds)
	var sum, all, failed float64
	for i := range s.all {
		for k, v := range s.counts[i] {
			counts[k] += v
		}
		sum, all, failed = sum+s.sums[i], all+s.all[i], failed+s.failed[i]
	}
	return statsOf(counts, lb, sum, all, failed, float64(len(s.all))*s.seconds, compareQuantiles)
}

// resampledDiffs is metric m's change in every resample that has it on both sides, on the
// decision scale.
func resampledDiffs(reps []statsPair, m perfexpv1alpha1.ObjectiveMetric, logScale bool) []float64 {
	ds := make([]float64, 0, len(reps))
	for _, r := range reps {
		var d float64
		if logScale {
			d = r.cur.logValue(m) - r.base.logValue(m)
		} else {
			x, _ := r.cur.value(m)
			y, _ := r.base.value(m)
			d = x - y
		}
		if !math.IsNaN(d) {
			ds = append(ds, d)
		}
	}
	return ds
}

// blockBootstrap estimates the change of every bootstrap metric between two single runs with a
// moving-block bootstrap: each resample draws ceil(n/L) blocks of L consecutive intervals with
// replacement from each run independently, merges their histograms and counts, and takes the
// statistic of the merged data (so a resampled p95 is the p95 of the merged histogram, not
// an average of per-interval p95s). Blocks keep the correlation of neighbouring intervals
// that independent resampling would destroy (and so understate the noise).
func blockBootstrap(cur, base *result.IntervalSeries, curStep, baseStep float64, minChange float64, resamples int, seed uint64) map[perfexpv1alpha1.ObjectiveMetric]*effect {
	bounds := sharedBounds(cur, base)
	lb := newLogBounds(bounds)
	c, b := onto(cur, bounds, curStep), onto(base, bounds, baseStep)
	out := map[perfexpv1alpha1.ObjectiveMetric]*effect{}
	nc, nb := c.active(), b.active()
	fc, fb := wholeRun(c, len(bounds), lb), wholeRun(b, len(bounds), lb)
	few := ""
	if nc < minBootstrapIntervals || nb < minBootstrapIntervals {
		// Intervals are 1/20 of the window but at least 15 s: 8 need 2 minutes of load.
		few = fmtFew(nc, nb, minBootstrapIntervals, "intervals with requests") + " (measure at least 2 minutes, or repeat the runs)"
	}
	var reps []statsPair
	var bc, bb *blocks
	if few == "" {
		bc, bb = c.blocks(), b.blocks()
		rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
		reps = make([]statsPair, resamples)
		cc, cb := make([]float64, len(bounds)), make([]float64, len(bounds))
		for r := range resamples {
			reps[r] = statsPair{resampleStats(bc, lb, cc, rng), resampleStats(bb, lb, cb, rng)}
		}
	}
	for _, m := range bootstrapMetrics {
		vc, okc := fc.value(m)
		vb, okb := fb.value(m)
		if !okc || !okb {
			continue
		}
		up, down, logScale := thresholds(m, minChange, vb)
		e := &effect{logScale: logScale, up: up, down: down, n: nc, baseN: nb, few: few}
		diff := func(x, y float64) float64 {
			if logScale {
				if x <= 0 || y <= 0 {
					return math.NaN()
				}
				return math.Log(x / y)
			}
			return x - y
		}
		e.point = diff(vc, vb)
		if m == perfexpv1alpha1.MetricErrorRate && fc.errPct == 0 && fb.errPct == 0 {
			e.constant = true
		}
		if few != "" || math.IsNaN(e.point) {
			if math.IsNaN(e.point) {
				continue
			}
			out[m] = e
			continue
		}
		ds := resampledDiffs(reps, m, logScale)
		if len(ds) < resamples/2 {
			e.few = "too few resamples had data on both sides"
			out[m] = e
			continue
		}
		e.fromResamples(ds, bc.inflation()*bb.inflation())
		if e.constant {
			e.pNoChange, e.pBeyond = 1, 1
		}
		out[m] = e
	}
	return out
}

// inflation is the factor (on the variance) that undoes two known biases of a circular block
// bootstrap with few intervals: centring each resample on the run's own mean shrinks its
// variance by (n-L)/n (exact for independent intervals: 15 % for 3-interval blocks of 20),
// and drawing ceil(n/L) whole blocks makes a resample kL >= n intervals long.
func (b *blocks) inflation() float64 {
	k := (b.n + b.length - 1) / b.length
	if b.n <= b.length {
		return 1
	}
	return float64(k*b.length) / float64(b.n-b.length)
}

// widen stretches resampled changes around their mean by the square root of the product of
// the two runs' variance inflations, and centres them on the point estimate, so the
// percentile interval is the bootstrap's shape at the corrected width.
func widen(ds []float64, point, inflation float64) {
	var m float64
	for _, d := range ds {
		m += d
	}
	m /= float64(len(ds))
	// Each run contributes about half the variance; the geometric mean of the two
	// inflations is their common factor when the runs are alike.
	c := math.Sqrt(math.Sqrt(inflation))
	for i, d := range ds {
		ds[i] = point + c*(d-m)
	}
}

// resampleStats draws one moving-block resample of a run into scratch and returns its
// statistics.
func resampleStats(b *blocks, lb *logBounds, scratch []float64, rng *rand.Rand) runStats {
	clear(scratch)
	var sum, all, failed, seconds float64
	k := (b.n + b.length - 1) / b.length
	for range k {
		i := rng.IntN(len(b.all))
		for j, v := range b.counts[i] {
			scratch[j] += v
		}
		sum, all, failed, seconds = sum+b.sums[i], all+b.all[i], failed+b.failed[i], seconds+b.seconds
	}
	return statsOf(scratch, lb, sum, all, failed, seconds, compareQuantiles)
}

// percentile of sorted values, interpolated linearly between order statistics.
func percentile(sorted []float64, p float64) float64 {
	if len(sorted) == 0 {
		return math.NaN()
	}
	x := p * float64(len(sorted)-1)
	i := int(x)
	if i >= len(sorted)-1 {
		return sorted[len(sorted)-1]
	}
	f := x - float64(i)
	return sorted[i]*(1-f) + sorted[i+1]*f
}

// fromResamples sets the effect's interval and p-values from the resampled changes ds (sorted
// in place), after widening them by inflation for few intervals.
func (e *effect) fromResamples(ds []float64, inflation float64) {
	widen(ds, e.point, inflation)
	sort.Float64s(ds)
	e.resampled = ds
	e.fromSorted(0)
}

// fromSorted sets the interval and p-values from the sorted resampled changes, each moved by
// shift.
func (e *effect) fromSorted(shift float64) {
	ds := e.resampled
	e.low, e.high = percentile(ds, alpha/2)+shift, percentile(ds, 1-alpha/2)+shift
	e.pValues(func(x float64) float64 {
		x -= shift
		// Resamples equal to x count half, so a change of exactly zero in every resample (a
		// run against itself) has p 1, not 0.
		below := sort.Search(len(ds), func(i int) bool { return ds[i] >= x })
		atOrBelow := sort.Search(len(ds), func(i int) bool { return ds[i] > x })
		return (float64(below) + float64(atOrBelow-below)/2) / float64(len(ds))
	})
}

// centredOn is a copy of a bootstrap effect on the log scale whose estimate is point and whose
// interval and p-values are the resamples' moved with it; e itself when it has no resamples.
//
// A row shows the runs' own values (a run's p95 over its whole measured window), while the
// bootstrap resamples the stored intervals, whose merged p95 can differ from it (the intervals
// are whole steps from the window's start, so less than a step at its end is left out of them,
// and a percentile inside a 9 % bucket moves with the requests in it): in the demo 5.516 and
// 5.978 ms (+8.4 %) read +9.4 % from the intervals. The change is centred on the values shown,
// so a row's numbers agree; the bootstrap keeps the spread of the estimate around its centre.
func (e *effect) centredOn(point float64) *effect {
	if e == nil || !e.logScale || e.few != "" || e.constant || len(e.resampled) == 0 || math.IsNaN(point) || math.IsInf(point, 0) {
		return e
	}
	c := *e
	c.point = point
	c.fromSorted(point - e.point)
	return &c
}
