package judge

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/result"
)

// failuresRun is a run of the quantityRun shape whose Counter refresh_failed saw failures
// refreshes in its 60 s; with none, k6 sends no series of the Counter and the run has none.
func failuresRun(name string, i int, failures int) *result.Result {
	r := quantityRun(name, i, unchanged)
	s := &r.Scenarios[0]
	s.Counters = nil
	if failures > 0 {
		s.Counters = []result.CounterResult{{Name: "refresh_failed", Metric: "k6_refresh_failed_total",
			Total: result.Num(float64(failures)), Rate: result.Num(float64(failures) / 60)}}
	}
	return r
}

func failuresRuns(name string, offset int, failures ...int) []*result.Result {
	out := make([]*result.Result, len(failures))
	for i, f := range failures {
		out[i] = failuresRun(name, offset+i, f)
	}
	return out
}

var failedPrimary = []perfexpv1alpha1.PrimaryMetric{{Metric: perfexpv1alpha1.MetricCount, Scenario: "desk",
	Counter: "refresh_failed", Direction: perfexpv1alpha1.LowerIsBetter}}

const failedRow = "desk counter refresh_failed rate"

// Story (the list-refresh study's short form on the local cluster): the baseline's runs failed
// 26 and 27 refreshes, the arm's 14 and none. The run without a failure has no series of the
// Counter; it read "only 1 of 2 runs ... have it" and the primary metric decided nothing. A run
// of the scenario without the Counter counts 0 where another run of the comparison has it, and
// counts with a zero are compared on the linear scale (no logarithm of 0).
func TestCounterAbsentInARunCountsZero(t *testing.T) {
	base := failuresRuns("base", 0, 26, 27, 25)
	cur := failuresRuns("arm", 3, 14, 0, 6)
	c := CompareRuns(base, cur, CompareOptions{Primary: failedPrimary})
	mc := comparedRow(c, failedRow)
	if mc.Change != perfexpv1alpha1.ChangeImproved {
		t.Fatalf("%s: %s (%s), want Improved: 26/27/25 failures against 14/0/6", failedRow, mc.Change, mc.Why)
	}
	if mc.Estimate == nil || math.Abs(*mc.Estimate-(20.0/3/26-1)*100) > 0.01 {
		t.Errorf("estimate %v, want the change of the mean failures (%.1f %%)", deref(mc.Estimate), (20.0/3/26-1)*100)
	}
	if mc.Scale != result.ScalePercent {
		t.Errorf("scale %q, want percent", mc.Scale)
	}

	// The short form's second run: no failure in either run of the arm. The change is -100 %, and
	// its interval still holds the baseline's own spread (26 and 27), never below -100 %.
	c = CompareRuns(failuresRuns("base", 0, 26, 27), failuresRuns("arm", 2, 0, 0), CompareOptions{Primary: failedPrimary})
	mc = comparedRow(c, failedRow)
	if mc.Low == nil || mc.High == nil || *mc.High-*mc.Low < 1 || *mc.Low < -100 {
		t.Errorf("26/27 against 0/0: interval [%v, %v], want one of some width within [-100, ...]", deref(mc.Low), deref(mc.High))
	}

	// A Counter no run has is a name nobody produced, not a zero.
	none := CompareRuns(failuresRuns("base", 0, 0, 0), failuresRuns("arm", 2, 0, 0), CompareOptions{Primary: failedPrimary})
	if mc := comparedRow(none, failedRow); mc.Change != perfexpv1alpha1.ChangeUnknown || !strings.Contains(mc.Why, "either side") {
		t.Errorf("a Counter in no run: %s (%s), want Unknown naming it", mc.Change, mc.Why)
	}

	// Failures where the baseline had none: no change relative to 0, and the reason says so.
	fromNone := CompareRuns(failuresRuns("base", 0, 0, 0, 0), failuresRuns("arm", 3, 4, 9, 5), CompareOptions{Primary: failedPrimary})
	if mc := comparedRow(fromNone, failedRow); mc.Change == perfexpv1alpha1.ChangeNoMeaningfulChange || !strings.Contains(mc.Why, "every baseline run has 0") {
		t.Errorf("failures from none: %s (%s), want a reason naming the baseline's zeros", mc.Change, mc.Why)
	}
}

// Simulation with known truth: failures per run are Poisson with a mean of 2 (many runs see
// none) or 8, three or five runs per side. A/A: the arm's claims (Improved or Regressed) stay at
// or below 5 %; against a true -75 %, the rule finds the improvement.
func TestSimulatedCountsWithZeros(t *testing.T) {
	rng := rand.New(rand.NewPCG(35, 2))
	poisson := func(mean float64) int {
		l, k, p := math.Exp(-mean), 0, 1.0
		for {
			p *= rng.Float64()
			if p <= l {
				return k
			}
			k++
		}
	}
	draw := func(name string, offset, n int, mean float64) []*result.Result {
		fs := make([]int, n)
		for i := range fs {
			fs[i] = poisson(mean)
		}
		return failuresRuns(name, offset, fs...)
	}
	const sims = 1000
	for _, cell := range []struct {
		mean    float64
		n       int
		ratio   float64
		maxRate float64 // claims allowed (A/A) or power required (effect)
	}{
		{2, 3, 1, 0.05}, {2, 5, 1, 0.05}, {8, 3, 1, 0.05}, {8, 5, 1, 0.05},
		{8, 5, 0.25, 0.80},
	} {
		claims, decided := 0, 0
		for range sims {
			base := draw("base", 0, cell.n, cell.mean)
			cur := draw("arm", cell.n, cell.n, cell.mean*cell.ratio)
			c := CompareRuns(base, cur, CompareOptions{Primary: failedPrimary})
			mc := comparedRow(c, failedRow)
			switch mc.Change {
			case perfexpv1alpha1.ChangeImproved, perfexpv1alpha1.ChangeRegressed:
				claims++
				decided++
			case perfexpv1alpha1.ChangeNoMeaningfulChange:
				decided++
			}
		}
		rate := float64(claims) / sims
		if cell.ratio == 1 {
			t.Logf("A/A, mean %g failures, %d runs per side: claims %.1f %%", cell.mean, cell.n, 100*rate)
			if rate > cell.maxRate {
				t.Errorf("A/A, mean %g, %d runs: claims %.1f %%, above %.0f %%", cell.mean, cell.n, 100*rate, 100*cell.maxRate)
			}
			continue
		}
		t.Logf("mean %g -> %g failures, %d runs per side: claims (power) %.1f %%", cell.mean, cell.mean*cell.ratio, cell.n, 100*rate)
		if rate < cell.maxRate {
			t.Errorf("power %.1f %% against %+.0f %%, want at least %.0f %%", 100*rate, 100*(cell.ratio-1), 100*cell.maxRate)
		}
	}
}
