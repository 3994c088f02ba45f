package judge

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"testing"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/result"
)

// The simulation tests check the comparison's claims against synthetic runs with a known
// truth. A run is 20 intervals (a 10-minute run at perfexp's 30 s intervals, or 5 minutes at
// 15 s) of about 900 requests each (30 req/s). Latency is log-normal (median 100 ms, shape 0.5:
// p95 about 2.3 x the median, the right skew of service latencies) and lands in k6's schema-3
// native-histogram buckets (8 per doubling), as in Prometheus.
//
// Noise has two layers, as in a shared performance environment:
//   - within a run, each interval's latency level wanders as an AR(1) process on the log scale
//     with phi 0.6 (neighbouring intervals share a GC cycle, a compaction, a noisy neighbour)
//     and a stationary standard deviation of 2 % (withinCV), on top of the sampling noise of
//     an interval's ~900 requests (about 4 % on an interval's p95);
//   - between runs, each run's level is shifted by a normal draw on the log scale with a
//     standard deviation of 1.5 % (betweenCV): pod placement, cache and database state.
//
// Why 1.5 %: that is how closely repeated runs of one configuration agree in a quiet, dedicated
// test environment (same nodes, warmed caches, data reset by a setup job); runs of Go
// benchmarks on a dedicated machine agree to 1-2 %. It is also about the most noise at which 3
// repeats can find a +15 % change beyond a 5 % minimum with 80 % power under Holm across two
// primary metrics: at 2 % the power falls to about 65 %. A shared cluster with noisy
// neighbours sees 3-10 %; TestPowerTable (PERFEXP_POWER_TABLE=1) measures what repeats buy
// there, and docs/comparison.md quotes it. Errors are 0.2 % of requests, so the error rate
// takes part in the multiplicity control.
type simConfig struct {
	intervals   int
	perInterval float64 // mean requests per interval
	phi         float64 // AR(1) coefficient of the interval level
	withinCV    float64 // stationary sd of the interval level (log scale)
	betweenCV   float64 // sd of the run level (log scale)
	median      float64 // seconds
	shape       float64 // log-normal sigma of single latencies
	errRate     float64 // share of failed requests
}

var defaultSim = simConfig{intervals: 20, perInterval: 900, phi: 0.6, withinCV: 0.02, betweenCV: 0.015, median: 0.1, shape: 0.5, errRate: 0.002}

// schema-3 bucket k covers (2^((k-1)/8), 2^(k/8)] seconds.
func bucketBounds(k int) [2]float64 {
	return [2]float64{math.Exp2(float64(k-1) / 8), math.Exp2(float64(k) / 8)}
}

func poisson(rng *rand.Rand, lambda float64) float64 {
	if lambda <= 0 {
		return 0
	}
	if lambda > 30 {
		return math.Max(0, math.Round(lambda+math.Sqrt(lambda)*rng.NormFloat64()))
	}
	l, k, p := math.Exp(-lambda), 0.0, 1.0
	for {
		p *= rng.Float64()
		if p <= l {
			return k
		}
		k++
	}
}

func normCDF(x float64) float64 { return 0.5 * math.Erfc(-x/math.Sqrt2) }

// run synthesises one run whose latency level is shifted by the factor ratio.
func (c simConfig) run(rng *rand.Rand, id string, ratio float64) *result.Result {
	runLevel := math.Log(c.median*ratio) + c.betweenCV*rng.NormFloat64()
	// Buckets from 6 sigma below to 6 sigma above the median, enough for any level.
	lo := int(math.Floor(8*math.Log2(c.median)-8*6*c.shape/math.Ln2)) - 8
	hi := int(math.Ceil(8*math.Log2(c.median)+8*6*c.shape/math.Ln2)) + 8
	s := result.IntervalSeries{Scenario: "s", Requests: make([]float64, c.intervals), Failed: make([]float64, c.intervals),
		Counts: make([][]float64, c.intervals), Sums: make([]float64, c.intervals)}
	for k := lo; k <= hi; k++ {
		s.Bounds = append(s.Bounds, bucketBounds(k))
	}
	cdf := make([]float64, len(s.Bounds)+1)
	innovation := c.withinCV * math.Sqrt(1-c.phi*c.phi)
	x := c.withinCV * rng.NormFloat64()
	for i := range c.intervals {
		if i > 0 {
			x = c.phi*x + innovation*rng.NormFloat64()
		}
		mu := runLevel + x
		row := make([]float64, len(s.Bounds))
		var n, sum float64
		cdf[0] = normCDF((math.Log(s.Bounds[0][0]) - mu) / c.shape)
		for j, b := range s.Bounds {
			cdf[j+1] = normCDF((math.Log(b[1]) - mu) / c.shape)
			row[j] = poisson(rng, c.perInterval*(cdf[j+1]-cdf[j]))
			n += row[j]
			sum += row[j] * math.Sqrt(b[0]*b[1])
		}
		s.Counts[i], s.Sums[i], s.Requests[i] = row, sum, n
		s.Failed[i] = poisson(rng, n*c.errRate)
	}
	s = trimEmpty(s)
	total := make([]float64, len(s.Bounds))
	var sum, all, failed float64
	for i := range c.intervals {
		for j, v := range s.Counts[i] {
			total[j] += v
		}
		sum, all, failed = sum+s.Sums[i], all+s.Requests[i], failed+s.Failed[i]
	}
	st := statsOf(total, newLogBounds(s.Bounds), sum, all, failed, 30*float64(c.intervals), compareQuantiles)
	rs := result.RequestStats{Requests: result.Count(int64(all)), Errors: result.Count(int64(failed)), Rate: result.Num(st.rate), ErrorPercent: result.Num(st.errPct), Avg: result.Num(1000 * st.avg)}
	for _, m := range []perfexpv1alpha1.ObjectiveMetric{perfexpv1alpha1.MetricP50, perfexpv1alpha1.MetricP75, perfexpv1alpha1.MetricP90, perfexpv1alpha1.MetricP95, perfexpv1alpha1.MetricP99} {
		v, _ := st.value(m)
		*statPtr(&rs, m) = result.Num(v)
	}
	return &result.Result{Experiment: id, TestID: id, Validity: perfexpv1alpha1.Valid, Total: rs,
		Scenarios: []result.ScenarioResult{{Name: "s", Validity: perfexpv1alpha1.Valid, RequestStats: rs}},
		LoadShape: []result.ScenarioShape{{Name: "s", Executor: "constant-vus", VUs: 10, Duration: "10m0s", Parallelism: 1}},
		Intervals: &result.IntervalData{StepSeconds: 30, Series: []result.IntervalSeries{s}}}
}

func statPtr(s *result.RequestStats, m perfexpv1alpha1.ObjectiveMetric) **float64 {
	switch m {
	case perfexpv1alpha1.MetricP50:
		return &s.P50
	case perfexpv1alpha1.MetricP75:
		return &s.P75
	case perfexpv1alpha1.MetricP90:
		return &s.P90
	case perfexpv1alpha1.MetricP99:
		return &s.P99
	}
	return &s.P95
}

func (c simConfig) runs(rng *rand.Rand, prefix string, n int, ratio float64) []*result.Result {
	out := make([]*result.Result, n)
	for i := range out {
		out[i] = c.run(rng, fmt.Sprintf("%s-%d", prefix, i), ratio)
	}
	return out
}

func claimed(c *result.Comparison) bool {
	return c.Change == perfexpv1alpha1.ChangeRegressed || c.Change == perfexpv1alpha1.ChangeImproved
}

// tally counts headlines.
type tally map[perfexpv1alpha1.Change]int

func (t tally) String() string {
	return fmt.Sprintf("Regressed %d, Improved %d, NoMeaningfulChange %d, Inconclusive %d, Unknown %d",
		t[perfexpv1alpha1.ChangeRegressed], t[perfexpv1alpha1.ChangeImproved], t[perfexpv1alpha1.ChangeNoMeaningfulChange],
		t[perfexpv1alpha1.ChangeInconclusive], t[perfexpv1alpha1.ChangeUnknown])
}

// simulate compares pairs of synthetic sides (repeats runs each) and tallies the headlines.
func simulate(c simConfig, pairs, repeats int, ratio float64, seed uint64) tally {
	rng := rand.New(rand.NewPCG(seed, 1))
	t := tally{}
	for p := range pairs {
		base := c.runs(rng, fmt.Sprintf("b%d", p), repeats, 1)
		cur := c.runs(rng, fmt.Sprintf("c%d", p), repeats, ratio)
		t[CompareRuns(base, cur, CompareOptions{}).Change]++
	}
	return t
}

func rate(t tally, n int, changes ...perfexpv1alpha1.Change) float64 {
	k := 0
	for _, c := range changes {
		k += t[c]
	}
	return float64(k) / float64(n)
}

// a) and b): repeated runs, the run as the unit.
func TestSimulatedRepeatsFalseRateAndPower(t *testing.T) {
	if testing.Short() {
		t.Skip("simulation")
	}
	const pairs = 1000
	aa := simulate(defaultSim, pairs, 3, 1, 1)
	falseRate := rate(aa, pairs, perfexpv1alpha1.ChangeRegressed, perfexpv1alpha1.ChangeImproved)
	t.Logf("A/A, repeats 3, between-run CV %.1f%%: false Regressed/Improved %.1f%% (%s)", 100*defaultSim.betweenCV, 100*falseRate, aa)
	if falseRate > 0.05 {
		t.Errorf("false change rate %.1f%% > 5%%", 100*falseRate)
	}
	ab := simulate(defaultSim, pairs, 3, 1.15, 2)
	power := rate(ab, pairs, perfexpv1alpha1.ChangeRegressed)
	t.Logf("+15%% latency, repeats 3: Regressed %.1f%% (%s)", 100*power, ab)
	if power < 0.80 {
		t.Errorf("detected a true +15%% change in %.1f%% < 80%%", 100*power)
	}
	if wrong := ab[perfexpv1alpha1.ChangeImproved]; wrong > 0 {
		t.Errorf("a +15%% latency change was called Improved %d times", wrong)
	}
}

// c): one run per side.
func TestSimulatedSingleRunFalseRate(t *testing.T) {
	if testing.Short() {
		t.Skip("simulation")
	}
	const pairs = 1000
	within := defaultSim
	within.betweenCV = 0
	rng := rand.New(rand.NewPCG(3, 1))
	aa, covered := tally{}, 0
	for p := range pairs {
		c := CompareRuns([]*result.Result{within.run(rng, fmt.Sprint("b", p), 1)}, []*result.Result{within.run(rng, fmt.Sprint("c", p), 1)}, CompareOptions{})
		aa[c.Change]++
		if p95 := c.Metrics[0]; *p95.Low <= 0 && *p95.High >= 0 {
			covered++
		}
	}
	falseRate := rate(aa, pairs, perfexpv1alpha1.ChangeRegressed, perfexpv1alpha1.ChangeImproved)
	coverage := float64(covered) / pairs
	t.Logf("single run, A/A, within-run noise only: false Regressed/Improved %.1f%% (%s); the p95 interval held the true change (0) in %.1f%%",
		100*falseRate, aa, 100*coverage)
	if falseRate > 0.05 {
		t.Errorf("false change rate %.1f%% > 5%%", 100*falseRate)
	}
	// The block bootstrap of 20 autocorrelated intervals is known to run narrow; the report
	// says so. This guards against it getting worse.
	if coverage < 0.85 {
		t.Errorf("coverage %.1f%% < 85%%", 100*coverage)
	}
	// With between-run noise the single-run interval does not hold it: measured, not bounded.
	const measured = 150
	for _, cv := range []float64{0.03, 0.05, 0.10} {
		c := defaultSim
		c.betweenCV = cv
		aa := simulate(c, measured, 1, 1, 4)
		t.Logf("single run, A/A, between-run CV %.1f%%: false Regressed/Improved %.1f%% (%s)", 100*cv,
			100*rate(aa, measured, perfexpv1alpha1.ChangeRegressed, perfexpv1alpha1.ChangeImproved), aa)
	}
}

// d): a sweep of 4 A/A arms against one baseline, Holm across the arms. With the default δ
// of 5 % false claims are rare to begin with; with δ 0.5 % the rule is close to a plain
// significance test, and the family-wise control is what keeps the sweep honest.
func TestSimulatedSweepFamilyWiseFalseRate(t *testing.T) {
	if testing.Short() {
		t.Skip("simulation")
	}
	const sweeps, arms, repeats = 1000, 4, 3
	rng := rand.New(rand.NewPCG(5, 1))
	deltas := []float64{5, 0.5}
	anyFalse, anyFalseUnadjusted := make([]int, len(deltas)), make([]int, len(deltas))
	for s := range sweeps {
		base := defaultSim.runs(rng, fmt.Sprintf("b%d", s), repeats, 1)
		variants := make([][]*result.Result, arms)
		for a := range variants {
			variants[a] = defaultSim.runs(rng, fmt.Sprintf("s%d-a%d", s, a), repeats, 1)
		}
		for d, delta := range deltas {
			cs := make([]*result.Comparison, arms)
			unadjusted := false
			for a := range cs {
				cs[a] = CompareRuns(base, variants[a], CompareOptions{MinChangePercent: delta})
				unadjusted = unadjusted || claimed(cs[a])
			}
			AdjustArms(cs)
			for _, c := range cs {
				if claimed(c) {
					anyFalse[d]++
					break
				}
			}
			if unadjusted {
				anyFalseUnadjusted[d]++
			}
		}
	}
	for d, delta := range deltas {
		fwer := float64(anyFalse[d]) / sweeps
		t.Logf("A/A sweep of %d arms, repeats %d, δ %g%%: some arm Regressed/Improved in %.1f%% of sweeps with Holm across arms (%.1f%% with Holm within each arm only)",
			arms, repeats, delta, 100*fwer, 100*float64(anyFalseUnadjusted[d])/sweeps)
		if fwer > 0.05 {
			t.Errorf("δ %g%%: family-wise false rate %.1f%% > 5%%", delta, 100*fwer)
		}
	}
}

// trimEmpty drops the buckets no interval used, as the stored data does.
func trimEmpty(s result.IntervalSeries) result.IntervalSeries {
	used := make([]bool, len(s.Bounds))
	for _, row := range s.Counts {
		for j, v := range row {
			used[j] = used[j] || v > 0
		}
	}
	var bounds [][2]float64
	idx := []int{}
	for j, u := range used {
		if u {
			bounds = append(bounds, s.Bounds[j])
			idx = append(idx, j)
		}
	}
	for i, row := range s.Counts {
		out := make([]float64, len(idx))
		for k, j := range idx {
			out[k] = row[j]
		}
		s.Counts[i] = out
	}
	s.Bounds = bounds
	return s
}

// TestPowerTable measures, for several levels of between-run noise and numbers of repeats, how
// often an A/A comparison claims a change and how often a true +15 % and +10 % latency change
// is found (Regressed), with the default δ of 5 %. It is the source of the table in
// docs/comparison.md; it takes a minute, so it runs only with PERFEXP_POWER_TABLE=1.
func TestPowerTable(t *testing.T) {
	if os.Getenv("PERFEXP_POWER_TABLE") == "" {
		t.Skip("set PERFEXP_POWER_TABLE=1 to measure the power table")
	}
	const pairs = 300
	for _, cv := range []float64{0.015, 0.03, 0.05, 0.10} {
		for _, repeats := range []int{1, 2, 3, 5, 10} {
			c := defaultSim
			c.betweenCV = cv
			aa := simulate(c, pairs, repeats, 1, 11)
			p15 := simulate(c, pairs, repeats, 1.15, 12)
			p10 := simulate(c, pairs, repeats, 1.10, 13)
			t.Logf("| %.1f %% | %d | %.0f %% | %.0f %% | %.0f %% | %.0f %% |", 100*cv, repeats,
				100*rate(aa, pairs, perfexpv1alpha1.ChangeRegressed, perfexpv1alpha1.ChangeImproved),
				100*rate(aa, pairs, perfexpv1alpha1.ChangeNoMeaningfulChange),
				100*rate(p15, pairs, perfexpv1alpha1.ChangeRegressed), 100*rate(p10, pairs, perfexpv1alpha1.ChangeRegressed))
		}
	}
}
