package judge

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/resource"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/result"
)

// scriptSim synthesises a run of compare_sim_test.go's kind (20 intervals of 30 s, within-run
// noise only) whose scenario also has an iteration duration (log-normal, median 1.2 s, 600
// iterations per interval, its level wandering as the requests' does) and a custom Counter
// "stuck" adding a Poisson number per interval around counterPerInterval, its level wandering
// by levelCV (AR(1), phi 0.6).
type scriptSim struct {
	counterPerInterval, levelCV float64
}

func (c scriptSim) run(rng *rand.Rand, id string, iterRatio, counterRatio float64) *result.Result {
	req := defaultSim
	req.betweenCV = 0
	r := req.run(rng, id, 1)
	iter := simConfig{intervals: req.intervals, perInterval: 600, phi: 0.6, withinCV: 0.02, median: 1.2, shape: 0.3}
	ir := iter.run(rng, id, iterRatio)
	is := ir.Intervals.Series[0]
	is.Iteration = true
	st := ir.Total
	r.Scenarios[0].IterationDuration = &result.Latency{Avg: st.Avg, P50: st.P50, P75: st.P75, P90: st.P90, P95: st.P95, P99: st.P99}

	cs := result.IntervalSeries{Scenario: "s", Counter: "stuck", Requests: make([]float64, req.intervals), Failed: make([]float64, req.intervals)}
	const phi = 0.6
	cv := c.levelCV
	x := cv * rng.NormFloat64()
	var total float64
	for i := range cs.Requests {
		if i > 0 {
			x = phi*x + cv*math.Sqrt(1-phi*phi)*rng.NormFloat64()
		}
		cs.Requests[i] = poisson(rng, c.counterPerInterval*counterRatio*math.Exp(x))
		total += cs.Requests[i]
	}
	r.Scenarios[0].Counters = []result.CounterResult{{Name: "stuck", Metric: "k6_stuck_total", Total: result.Num(total), Rate: result.Num(total / (30 * float64(req.intervals)))}}
	r.Intervals.Series = append(r.Intervals.Series, is, cs)
	return r
}

// single compares one run per side on their stored intervals.
func single(cur, base *result.Result, o CompareOptions) *result.Comparison {
	return Compare(cur, cur.Intervals, &Baseline{Name: base.Experiment, TestID: base.TestID, Result: base}, base.Intervals, o)
}

const (
	iterP95Row = "s iteration p95"
	iterAvgRow = "s iteration avg"
	counterRow = "s counter stuck rate"
)

// Story: one run per side, as a baseline and a variant usually are. Iterations that got 30 %
// slower are Regressed on their own intervals, a Counter counting 60 % more is Regressed and
// one counting half as much Improved; a run compared with itself changed nothing. All these
// rows are secondary: the headline stays on the requests, which did not change. (A busy,
// steady Counter: 400 per 30 s, its level wandering by 1 %, so that "no change" can be told.)
func TestScriptRowsSingleRun(t *testing.T) {
	sim := scriptSim{counterPerInterval: 400, levelCV: 0.01}
	rng := rand.New(rand.NewPCG(21, 1))
	base := sim.run(rng, "base", 1, 1)
	same := *base
	same.Experiment, same.TestID = "same", "same"
	any := []perfexpv1alpha1.Change{perfexpv1alpha1.ChangeNoMeaningfulChange, perfexpv1alpha1.ChangeInconclusive}
	regressed, improved := []perfexpv1alpha1.Change{perfexpv1alpha1.ChangeRegressed}, []perfexpv1alpha1.Change{perfexpv1alpha1.ChangeImproved}
	inconclusive := []perfexpv1alpha1.Change{perfexpv1alpha1.ChangeInconclusive}
	ten := int32(10)
	// An objective bounding the Counter says which way is better: max (or maxIncreasePercent)
	// lower, min (or maxDecreasePercent) higher; without one a change is not called either.
	atMost := []perfexpv1alpha1.Objective{{Metric: perfexpv1alpha1.MetricCount, Scenario: "s", Counter: "stuck", Max: resource.NewQuantity(100000, resource.DecimalSI)}}
	noFewer := []perfexpv1alpha1.Objective{{Metric: perfexpv1alpha1.MetricCount, Scenario: "s", Counter: "stuck", MaxDecreasePercent: &ten}}
	slower, halved := sim.run(rng, "slower", 1.3, 1.6), sim.run(rng, "halved", 1, 0.5)
	tests := []struct {
		name        string
		cur         *result.Result
		objectives  []perfexpv1alpha1.Objective
		iter, count []perfexpv1alpha1.Change
	}{
		{"iterations 30% slower, Counter x1.6, no objective on it", slower, nil, regressed, inconclusive},
		{"iterations 30% slower, Counter x1.6 under a max", slower, atMost, regressed, regressed},
		{"Counter x1.6 under maxDecreasePercent (more is better)", slower, noFewer, regressed, improved},
		{"Counter halved under a max", halved, atMost, any, improved},
		{"Counter halved under maxDecreasePercent", halved, noFewer, any, regressed},
		{"the same data", &same, nil,
			[]perfexpv1alpha1.Change{perfexpv1alpha1.ChangeNoMeaningfulChange}, []perfexpv1alpha1.Change{perfexpv1alpha1.ChangeNoMeaningfulChange}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := single(tc.cur, base, CompareOptions{Objectives: tc.objectives})
			if c.Message != "" {
				t.Fatalf("comparison refused: %s", c.Message)
			}
			for _, want := range []struct {
				label, unit string
				changes     []perfexpv1alpha1.Change
			}{{iterP95Row, "ms", tc.iter}, {iterAvgRow, "ms", tc.iter}, {counterRow, counterUnit, tc.count}} {
				mc := comparedRow(c, want.label)
				if mc == nil {
					t.Fatalf("%s: not compared; rows %v", want.label, labels(c))
				}
				if !slices.Contains(want.changes, mc.Change) || mc.Primary || mc.Unit != want.unit || mc.Method != result.MethodBlockBootstrap {
					t.Errorf("%s: %s [%v, %v]%% (primary %v, unit %q, method %s): %s; want one of %v, secondary, %s",
						want.label, mc.Change, deref(mc.Low), deref(mc.High), mc.Primary, mc.Unit, mc.Method, mc.Why, want.changes, want.unit)
				}
				if want.label == counterRow && tc.objectives == nil && mc.Change == perfexpv1alpha1.ChangeInconclusive && !strings.Contains(mc.Why, "the script's to say") {
					t.Errorf("%s: Inconclusive without saying the direction is unknown: %s", want.label, mc.Why)
				}
				t.Logf("%s: %s [%+.1f, %+.1f] %%", want.label, mc.Change, deref(mc.Low), deref(mc.High))
			}
			if c.Change == perfexpv1alpha1.ChangeRegressed || c.Change == perfexpv1alpha1.ChangeImproved {
				t.Errorf("headline %s: the requests did not change", c.Change)
			}
		})
	}
}

// Story: a baseline whose results hold no per-interval iteration or Counter data (analysed by
// an older perfexp), or whose Counter counted nothing, leaves those rows Unknown, each with
// its reason; a Count objective relative to it is Unknown too, not Met.
func TestScriptRowsUnknownWithoutIntervals(t *testing.T) {
	sim := scriptSim{counterPerInterval: 400, levelCV: 0.05}
	rng := rand.New(rand.NewPCG(22, 1))
	cur := sim.run(rng, "cur", 1, 1)
	old := sim.run(rng, "old", 1, 1)
	old.Intervals.Series = old.Intervals.Series[:1]
	zero := sim.run(rng, "zero", 1, 0)
	pct := int32(20)
	ob := perfexpv1alpha1.Objective{Metric: perfexpv1alpha1.MetricCount, Scenario: "s", Counter: "stuck", MaxIncreasePercent: &pct}
	tests := []struct {
		name string
		base *result.Result
		want map[string]string
	}{
		{"older results", old, map[string]string{iterP95Row: "no per-interval iteration durations", counterRow: `no per-interval data for Counter "stuck"`}},
		{"a Counter at zero", zero, map[string]string{counterRow: `Counter "stuck" counted nothing`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := single(cur, tc.base, CompareOptions{Objectives: []perfexpv1alpha1.Objective{ob}})
			for label, why := range tc.want {
				mc := comparedRow(c, label)
				if mc == nil || mc.Change != perfexpv1alpha1.ChangeUnknown || !strings.Contains(mc.Why, why) {
					t.Errorf("%s: %+v; want Unknown: %s", label, mc, why)
				}
			}
			r := *cur
			r.Comparison = c
			if got := Objectives(&r, []perfexpv1alpha1.Objective{ob}); got[0].Outcome != perfexpv1alpha1.ObjectiveUnknown {
				t.Errorf("objective %s: %s: %s; want Unknown", got[0].Name, got[0].Outcome, got[0].Message)
			}
		})
	}
}

// Story: `metric: Count` with maxIncreasePercent is judged on the Counter row's interval, one
// run per side and across repeats: 60 % more stuck refreshes miss a +10 % bound and meet a
// +100 % one; maxDecreasePercent 10 is met (nothing decreased).
func TestCountObjectiveRelativeToTheBaseline(t *testing.T) {
	sim := scriptSim{counterPerInterval: 400, levelCV: 0.05}
	rng := rand.New(rand.NewPCG(23, 1))
	tight, loose, down := int32(10), int32(100), int32(10)
	objectives := []perfexpv1alpha1.Objective{
		{Metric: perfexpv1alpha1.MetricCount, Scenario: "s", Counter: "stuck", MaxIncreasePercent: &tight},
		{Metric: perfexpv1alpha1.MetricCount, Scenario: "s", Counter: "stuck", MaxIncreasePercent: &loose},
		{Metric: perfexpv1alpha1.MetricCount, Scenario: "s", Counter: "stuck", MaxDecreasePercent: &down},
	}
	want := []perfexpv1alpha1.ObjectiveOutcome{perfexpv1alpha1.ObjectiveMissed, perfexpv1alpha1.ObjectiveMet, perfexpv1alpha1.ObjectiveMet}
	var bases, curs []*result.Result
	for i := range 3 {
		bases = append(bases, sim.run(rng, fmt.Sprint("base-", i), 1, 1))
		curs = append(curs, sim.run(rng, fmt.Sprint("cur-", i), 1, 1.6))
	}
	for _, tc := range []struct {
		name string
		c    *result.Comparison
	}{
		{"one run per side", single(curs[0], bases[0], CompareOptions{Objectives: objectives})},
		{"three runs per side", CompareRuns(bases, curs, CompareOptions{Objectives: objectives})},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mc := comparedRow(tc.c, counterRow)
			// The objectives bound it both ways (maxIncreasePercent and maxDecreasePercent), so
			// they give no direction: the row is Inconclusive, its interval around +60 %.
			if mc == nil || mc.Change != perfexpv1alpha1.ChangeInconclusive || mc.Kind != perfexpv1alpha1.MetricCount || mc.Unit != counterUnit ||
				mc.Low == nil || *mc.Low < 30 || *mc.High > 95 {
				t.Fatalf("counter row %+v [%v, %v]; want Inconclusive around +60%%", mc, deref(mc.Low), deref(mc.High))
			}
			r := *curs[0]
			r.Comparison = tc.c
			for i, got := range Objectives(&r, objectives) {
				if got.Outcome != want[i] {
					t.Errorf("objective %s: %s: %s; want %s", got.Name, got.Outcome, got.Message, want[i])
				}
			}
		})
	}
}

// atMostStuck bounds the Counter from above, so its row is decided with lower as better (an
// objective gives a Counter's direction; without one a change is never called, which would
// make the simulation below pass trivially).
var atMostStuck = []perfexpv1alpha1.Objective{{Metric: perfexpv1alpha1.MetricCount, Scenario: "s", Counter: "stuck", Max: resource.NewQuantity(1000000, resource.DecimalSI)}}

// Simulation, known truth "no change": one run per side drawn independently from the same
// configuration (within-run noise only). The iteration and Counter rows must claim a change
// (Regressed or Improved) in at most about 5 % of pairs, as the request rows do; a small
// Counter (20 per interval) as well as a busy one, its level wandering by 5 %.
func TestSimulatedScriptRowsFalseRate(t *testing.T) {
	if testing.Short() {
		t.Skip("simulation")
	}
	const pairs = 400
	for _, perInterval := range []float64{20, 400} {
		sim := scriptSim{counterPerInterval: perInterval, levelCV: 0.05}
		rng := rand.New(rand.NewPCG(24, uint64(perInterval)))
		claims := map[string]tally{iterP95Row: {}, iterAvgRow: {}, counterRow: {}}
		for p := range pairs {
			c := single(sim.run(rng, fmt.Sprint("c", p), 1, 1), sim.run(rng, fmt.Sprint("b", p), 1, 1), CompareOptions{Objectives: atMostStuck})
			for label, t := range claims {
				if mc := comparedRow(c, label); mc != nil {
					t[mc.Change]++
				}
			}
		}
		for _, label := range []string{iterP95Row, iterAvgRow, counterRow} {
			falseRate := rate(claims[label], pairs, perfexpv1alpha1.ChangeRegressed, perfexpv1alpha1.ChangeImproved)
			t.Logf("A/A single run, Counter %g per interval: %s: false Regressed/Improved %.1f%% (%s)", perInterval, label, 100*falseRate, claims[label])
			if falseRate > 0.05 {
				t.Errorf("%s: false change rate %.1f%% > 5%%", label, 100*falseRate)
			}
		}
	}
}
