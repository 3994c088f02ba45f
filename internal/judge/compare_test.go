package judge

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/result"
)

// relEffect is an effect on the log scale for a relative change with interval [lo, hi] in
// percent and δ 5 %.
func relEffect(point, lo, hi float64) *effect {
	up, down, _ := thresholds(perfexpv1alpha1.MetricP95, 5, 0)
	l := func(pct float64) float64 { return math.Log1p(pct / 100) }
	return &effect{logScale: true, point: l(point), low: l(lo), high: l(hi), up: up, down: down, n: 20, baseN: 20}
}

func TestDecide(t *testing.T) {
	pointsUp, pointsDown, _ := thresholds(perfexpv1alpha1.MetricErrorRate, 5, 0.5)
	tests := []struct {
		name string
		e    *effect
		kind perfexpv1alpha1.ObjectiveMetric
		want perfexpv1alpha1.Change
		why  string
	}{
		{"latency interval wholly above +δ: regressed", relEffect(12, 7, 18), perfexpv1alpha1.MetricP95, perfexpv1alpha1.ChangeRegressed, ""},
		{"latency interval wholly below -δ: improved", relEffect(-20, -26, -14), perfexpv1alpha1.MetricP95, perfexpv1alpha1.ChangeImproved, ""},
		{"throughput up beyond δ: improved", relEffect(12, 7, 18), perfexpv1alpha1.MetricRate, perfexpv1alpha1.ChangeImproved, ""},
		{"throughput down beyond δ: regressed", relEffect(-12, -18, -7), perfexpv1alpha1.MetricRate, perfexpv1alpha1.ChangeRegressed, ""},
		{"interval inside ±δ: no meaningful change", relEffect(0.5, -3, 4), perfexpv1alpha1.MetricAvg, perfexpv1alpha1.ChangeNoMeaningfulChange, ""},
		{"interval straddling +δ: inconclusive", relEffect(4, 1, 8), perfexpv1alpha1.MetricP95, perfexpv1alpha1.ChangeInconclusive, "straddles ±5%"},
		{"interval beyond both bounds: too noisy", relEffect(0, -20, 25), perfexpv1alpha1.MetricP95, perfexpv1alpha1.ChangeInconclusive, "too noisy (20 and 20 intervals)"},
		{"a significant change smaller than δ is no meaningful change", relEffect(2, 1, 3), perfexpv1alpha1.MetricP95, perfexpv1alpha1.ChangeNoMeaningfulChange, ""},
		{"error rate up by more than the floor: regressed", &effect{point: 0.5, low: 0.3, high: 0.7, up: pointsUp, down: pointsDown}, perfexpv1alpha1.MetricErrorRate, perfexpv1alpha1.ChangeRegressed, ""},
		{"error rate within the floor: no meaningful change", &effect{point: 0.01, low: -0.05, high: 0.08, up: pointsUp, down: pointsDown}, perfexpv1alpha1.MetricErrorRate, perfexpv1alpha1.ChangeNoMeaningfulChange, ""},
		{"too few samples: inconclusive with the reason", &effect{few: "too few samples: 3 and 20 intervals"}, perfexpv1alpha1.MetricP95, perfexpv1alpha1.ChangeInconclusive, "too few samples"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, why := decide(tc.e, tc.kind, "intervals")
			if got != tc.want || !strings.Contains(why, tc.why) || (tc.why == "") != (why == "") {
				t.Errorf("decide = %s (%q), want %s (%q)", got, why, tc.want, tc.why)
			}
		})
	}
	if pointsUp != errorRateFloorPoints {
		t.Errorf("δ for a 0.5%% error rate is %g points, want the floor %g", pointsUp, errorRateFloorPoints)
	}
	if up, _, _ := thresholds(perfexpv1alpha1.MetricErrorRate, 5, 10); math.Abs(up-0.5) > 1e-12 {
		t.Errorf("δ for a 10%% error rate is %g points, want 5%% of it (0.5)", up)
	}
}

// primaryRow is a primary p95 row with an unadjusted verdict and its p-value of a change
// beyond δ.
func primaryRow(name string, change perfexpv1alpha1.Change, pBeyond float64) result.MetricComparison {
	return result.MetricComparison{Metric: name, Kind: perfexpv1alpha1.MetricP95, Primary: true, Change: change, Unadjusted: change, PBeyond: &pBeyond}
}

func TestHeadlineAfterHolm(t *testing.T) {
	secondary := result.MetricComparison{Metric: "s avg", Kind: perfexpv1alpha1.MetricAvg, Change: perfexpv1alpha1.ChangeRegressed, Unadjusted: perfexpv1alpha1.ChangeRegressed, PBeyond: ptr(0.001)}
	tests := []struct {
		name string
		ms   []result.MetricComparison
		want perfexpv1alpha1.Change
	}{
		{"one primary regressed, strong enough for Holm", []result.MetricComparison{primaryRow("a", perfexpv1alpha1.ChangeRegressed, 0.001), primaryRow("b", perfexpv1alpha1.ChangeNoMeaningfulChange, 1)}, perfexpv1alpha1.ChangeRegressed},
		{"a regression that does not survive Holm is inconclusive", []result.MetricComparison{primaryRow("a", perfexpv1alpha1.ChangeRegressed, 0.04), primaryRow("b", perfexpv1alpha1.ChangeNoMeaningfulChange, 0.9)}, perfexpv1alpha1.ChangeInconclusive},
		{"a constant primary metric spends no alpha", []result.MetricComparison{primaryRow("a", perfexpv1alpha1.ChangeRegressed, 0.04), func() result.MetricComparison {
			m := primaryRow("errors", perfexpv1alpha1.ChangeNoMeaningfulChange, 1)
			m.Constant = true
			return m
		}()}, perfexpv1alpha1.ChangeRegressed},
		{"regressed beats improved", []result.MetricComparison{primaryRow("a", perfexpv1alpha1.ChangeImproved, 0.001), primaryRow("b", perfexpv1alpha1.ChangeRegressed, 0.001)}, perfexpv1alpha1.ChangeRegressed},
		{"all primary inside δ", []result.MetricComparison{primaryRow("a", perfexpv1alpha1.ChangeNoMeaningfulChange, 1), primaryRow("b", perfexpv1alpha1.ChangeNoMeaningfulChange, 1)}, perfexpv1alpha1.ChangeNoMeaningfulChange},
		{"one primary inconclusive", []result.MetricComparison{primaryRow("a", perfexpv1alpha1.ChangeNoMeaningfulChange, 1), primaryRow("b", perfexpv1alpha1.ChangeInconclusive, 0.3)}, perfexpv1alpha1.ChangeInconclusive},
		{"a secondary metric never flips the headline", []result.MetricComparison{primaryRow("a", perfexpv1alpha1.ChangeNoMeaningfulChange, 1), secondary}, perfexpv1alpha1.ChangeNoMeaningfulChange},
		{"nothing compared", []result.MetricComparison{{Metric: "a", Primary: true, Change: perfexpv1alpha1.ChangeUnknown}}, perfexpv1alpha1.ChangeUnknown},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := &result.Comparison{Metrics: tc.ms}
			adjust([]*result.Comparison{c}, alpha)
			if c.Change != tc.want {
				t.Errorf("headline %s, want %s (%+v)", c.Change, tc.want, c.Metrics)
			}
		})
	}
}

func TestAdjustArmsCountsEveryArm(t *testing.T) {
	// Four arms, each with one primary metric beyond δ at p 0.02: alone each is Regressed;
	// across the sweep Holm needs 0.05/4 = 0.0125 for the first, so none survives. A fifth arm
	// at p 0.001 survives (0.005 after adjustment).
	var arms []*result.Comparison
	for i := range 4 {
		arms = append(arms, &result.Comparison{Baseline: "b", Metrics: []result.MetricComparison{primaryRow(fmt.Sprint("arm", i), perfexpv1alpha1.ChangeRegressed, 0.02)}})
	}
	strong := &result.Comparison{Baseline: "b", Metrics: []result.MetricComparison{primaryRow("strong", perfexpv1alpha1.ChangeRegressed, 0.001)}}
	refused := &result.Comparison{Baseline: "b", Change: perfexpv1alpha1.ChangeUnknown, Message: "baseline b is not valid"}
	for _, a := range arms {
		adjust([]*result.Comparison{a}, alpha)
		if a.Change != perfexpv1alpha1.ChangeRegressed {
			t.Fatalf("alone, an arm is %s", a.Change)
		}
	}
	AdjustArms(append(arms, strong, refused))
	for _, a := range arms {
		if a.Change != perfexpv1alpha1.ChangeInconclusive || !strings.Contains(a.Metrics[0].Why, "Holm across 5 primary metrics of 5 arms") {
			t.Errorf("arm after Holm across arms: %s (%s)", a.Change, a.Metrics[0].Why)
		}
	}
	if strong.Change != perfexpv1alpha1.ChangeRegressed {
		t.Errorf("strong arm %s", strong.Change)
	}
	if refused.Change != perfexpv1alpha1.ChangeUnknown || refused.Multiplicity != "" {
		t.Errorf("a refused arm took part: %+v", refused)
	}
}

func shape(vus int32, script string) []result.ScenarioShape {
	return result.LoadShape(perfexpv1alpha1.Load{Scenarios: []perfexpv1alpha1.Scenario{{Name: "s", VUs: &vus, Duration: &metav1.Duration{Duration: 10 * time.Minute},
		Script: perfexpv1alpha1.ScriptSource{Inline: script}}}}, nil)
}

// result builds a result with one scenario "s" (p95 and error rate) and a query "q".
func oneScenario(p95, errPct float64) *result.Result {
	return &result.Result{Validity: perfexpv1alpha1.Valid, Scenarios: []result.ScenarioResult{{Name: "s", RequestStats: result.RequestStats{P95: &p95, ErrorPercent: &errPct}}},
		Total: result.RequestStats{P95: &p95, ErrorPercent: &errPct}, Queries: []result.QueryResult{{Name: "q", Value: ptr(3), Unit: "cores"}}}
}

func TestBaselineProblem(t *testing.T) {
	withShape := func(r *result.Result, sh []result.ScenarioShape) *result.Result { r.LoadShape = sh; return r }
	bad := oneScenario(1, 30)
	MarkInvalid(bad, "scenario s: 30.00% of requests failed")
	tests := []struct {
		name string
		b    Baseline
		want string
	}{
		{"usable", Baseline{Name: "b", Scenarios: []string{"s"}, Result: withShape(oneScenario(1, 0), shape(10, "a"))}, ""},
		{"not found", Baseline{Name: "b", Problem: "baseline b not found"}, "not found"},
		{"no results", Baseline{Name: "b", Scenarios: []string{"s"}}, "has no results"},
		{"invalid baseline is refused", Baseline{Name: "b", Scenarios: []string{"s"}, Result: bad}, "baseline b is not valid (Invalid): scenario s: 30.00% of requests failed"},
		{"other scenarios", Baseline{Name: "b", Scenarios: []string{"t"}, Result: oneScenario(1, 0)}, "ran the scenarios [t], this experiment [s]"},
		{"different VUs are refused", Baseline{Name: "b", Scenarios: []string{"s"}, Result: withShape(oneScenario(1, 0), shape(20, "a"))}, "scenario s: vus 10 here, 20 in the baseline"},
		{"a different script is refused", Baseline{Name: "b", Scenarios: []string{"s"}, Result: withShape(oneScenario(1, 0), shape(10, "b"))}, "the script differs"},
		{"an old baseline's shape from its spec", Baseline{Name: "b", Scenarios: []string{"s"}, Result: oneScenario(1, 0), LoadShape: shape(20, "a")}, "vus 10 here, 20"},
		{"an unknown script hash is not held against it", Baseline{Name: "b", Scenarios: []string{"s"}, Result: withShape(oneScenario(1, 0), func() []result.ScenarioShape {
			s := shape(10, "x")
			s[0].ScriptHash = ""
			return s
		}())}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := BaselineProblem(withShape(oneScenario(1, 0), shape(10, "a")), &tc.b)
			if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
				t.Errorf("problem = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestLoadShape(t *testing.T) {
	rate := perfexpv1alpha1.ArrivalRate{Rate: 50, Duration: metav1.Duration{Duration: 5 * time.Minute}, PreAllocatedVUs: 20}
	l := perfexpv1alpha1.Load{Scenarios: []perfexpv1alpha1.Scenario{
		{Name: "a", ArrivalRate: &rate, Parallelism: 2, StartDelay: &metav1.Duration{Duration: time.Minute}, Script: perfexpv1alpha1.ScriptSource{ConfigMap: &perfexpv1alpha1.ConfigMapScript{Name: "cm"}}},
		{Name: "b", Stages: []perfexpv1alpha1.Stage{{Duration: metav1.Duration{Duration: 30 * time.Second}, Target: 10}, {Duration: metav1.Duration{Duration: time.Minute}, Target: 0}},
			Script: perfexpv1alpha1.ScriptSource{ConfigMap: &perfexpv1alpha1.ConfigMapScript{Name: "gone"}}},
	}}
	got := result.LoadShape(l, map[string]string{"a": "export default function () {}"})
	want := []result.ScenarioShape{
		{Name: "a", Executor: "constant-arrival-rate", Rate: 50, TimeUnit: "1s", Duration: "5m0s", PreAllocatedVUs: 20, Parallelism: 2, StartDelay: "1m0s", ScriptHash: result.ScriptHash("export default function () {}")},
		{Name: "b", Executor: "ramping-vus", Stages: "30s:10,1m0s:0", Parallelism: 1},
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("LoadShape =\n%+v, want\n%+v", got, want)
	}
	other := result.LoadShape(l, nil)
	other[0].Rate = 60
	if d := shapeDifference(got, other); d != "scenario a: arrival rate 50 here, 60 in the baseline" {
		t.Errorf("difference %q", d)
	}
}

// syntheticPair is one run of the simulation's kind with the given latency ratio and test id.
func syntheticRun(seed uint64, id string, ratio float64, c simConfig) *result.Result {
	return c.run(rand.New(rand.NewPCG(seed, 7)), id, ratio)
}

func TestSingleRunBootstrap(t *testing.T) {
	within := defaultSim
	within.betweenCV = 0
	base := syntheticRun(1, "base", 1, within)
	find := func(c *result.Comparison, metric string) result.MetricComparison {
		for _, m := range c.Metrics {
			if m.Metric == metric {
				return m
			}
		}
		t.Fatalf("no %s in %+v", metric, c.Metrics)
		return result.MetricComparison{}
	}
	compareWith := func(cur, base *result.Result) *result.Comparison {
		return Compare(cur, cur.Intervals, &Baseline{Name: base.Experiment, TestID: base.TestID, Result: base}, base.Intervals, CompareOptions{})
	}
	t.Run("the same run against itself: no meaningful change, interval around zero", func(t *testing.T) {
		c := compareWith(base, base)
		p95 := find(c, "s p95")
		if c.Change != perfexpv1alpha1.ChangeNoMeaningfulChange || p95.Change != perfexpv1alpha1.ChangeNoMeaningfulChange || *p95.Low > 0 || *p95.High < 0 || *p95.Estimate != 0 {
			t.Errorf("headline %s, p95 %s %v [%v, %v]", c.Change, p95.Change, deref(p95.Estimate), deref(p95.Low), deref(p95.High))
		}
		if p95.Method != result.MethodBlockBootstrap || p95.Samples != 20 || !p95.Primary || !strings.HasPrefix(c.Notes[0], "one run per side") {
			t.Errorf("row %+v, notes %v", p95, c.Notes)
		}
	})
	t.Run("+30 % latency: regressed, the interval beyond δ", func(t *testing.T) {
		c := compareWith(syntheticRun(2, "slow", 1.3, within), base)
		p95 := find(c, "s p95")
		if c.Change != perfexpv1alpha1.ChangeRegressed || p95.Change != perfexpv1alpha1.ChangeRegressed || *p95.Low <= 5 || math.Abs(*p95.Estimate-30) > 8 {
			t.Errorf("headline %s, p95 %s %v [%v, %v]", c.Change, p95.Change, deref(p95.Estimate), deref(p95.Low), deref(p95.High))
		}
		if avg := find(c, "s avg"); avg.Change != perfexpv1alpha1.ChangeRegressed || avg.Primary {
			t.Errorf("avg %+v", avg)
		}
		if rate := find(c, "s rate"); rate.Scale != result.ScalePercent || rate.Change == perfexpv1alpha1.ChangeUnknown {
			t.Errorf("rate %+v", rate)
		}
		if e := find(c, "s errorrate"); e.Scale != result.ScalePoints || e.Change == perfexpv1alpha1.ChangeRegressed || e.Change == perfexpv1alpha1.ChangeImproved {
			t.Errorf("error rate %+v", e)
		}
	})
	t.Run("the rate row shows the rates its change is decided on", func(t *testing.T) {
		// The results' rates are over each scenario's active span; here they disagree with the
		// intervals (as a start measured two seconds apart did in the demo), and the row must
		// not show them beside a change computed from the intervals.
		cur := syntheticRun(7, "span", 1, within)
		orig := base.Scenarios[0].Rate
		cur.Scenarios[0].Rate, base.Scenarios[0].Rate = result.Num(78.44), result.Num(79.48)
		defer func() { base.Scenarios[0].Rate = orig }()
		c := compareWith(cur, base)
		rate := find(c, "s rate")
		want := func(d *result.IntervalData) float64 {
			var all float64
			for _, v := range d.Series[0].Requests {
				all += v
			}
			return all / (float64(len(d.Series[0].Requests)) * d.StepSeconds)
		}
		if *rate.Value != want(cur.Intervals) || *rate.Baseline != want(base.Intervals) {
			t.Errorf("rate row shows %v vs %v, the intervals' rates are %v vs %v", *rate.Value, *rate.Baseline, want(cur.Intervals), want(base.Intervals))
		}
		if got, est := 100*(*rate.Value / *rate.Baseline - 1), *rate.Estimate; math.Abs(got-est) > 0.01 {
			t.Errorf("shown values change by %.3f %%, the estimate is %.3f %%", got, est)
		}
		if !slices.Contains(c.Notes, intervalRateNote) {
			t.Errorf("notes %v", c.Notes)
		}
	})
	t.Run("the p95 row's change is the change of the p95s it shows", func(t *testing.T) {
		// A run's p95 over its whole window and the merged p95 of its stored intervals can
		// differ by a fraction of a bucket (the demo: 5.516 and 5.978 ms shown, +9.4 % from
		// the intervals); the row must not show +9.4 % beside values 8.4 % apart.
		cur := syntheticRun(8, "edge", 1.2, within)
		before := find(compareWith(cur, base), "s p95")
		orig := *cur.Scenarios[0].P95
		cur.Scenarios[0].P95 = result.Num(orig * 0.99)
		defer func() { cur.Scenarios[0].P95 = result.Num(orig) }()
		p95 := find(compareWith(cur, base), "s p95")
		if got, est := 100*(*p95.Value / *p95.Baseline - 1), *p95.Estimate; math.Abs(got-est) > 0.01 {
			t.Errorf("shown values change by %.3f %%, the estimate is %.3f %%", got, est)
		}
		// The interval moves with the estimate, its width on the log scale kept.
		width := func(m result.MetricComparison) float64 { return math.Log1p(*m.High/100) - math.Log1p(*m.Low/100) }
		if d := width(p95) - width(before); math.Abs(d) > 1e-9 {
			t.Errorf("interval [%v, %v] before, [%v, %v] after: width moved by %v", *before.Low, *before.High, *p95.Low, *p95.High, d)
		}
		if *p95.Estimate >= *before.Estimate || *p95.Low >= *before.Low {
			t.Errorf("a 1 %% lower p95 shown should move the change down: %v [%v, %v] before, %v [%v, %v] after", *before.Estimate, *before.Low, *before.High, *p95.Estimate, *p95.Low, *p95.High)
		}
	})
	t.Run("a re-analysis gives the same interval", func(t *testing.T) {
		cur := syntheticRun(3, "again", 1.05, within)
		a, b := find(compareWith(cur, base), "s p95"), find(compareWith(cur, base), "s p95")
		if *a.Low != *b.Low || *a.High != *b.High {
			t.Errorf("[%v, %v] then [%v, %v]", *a.Low, *a.High, *b.Low, *b.High)
		}
	})
	t.Run("too few intervals: inconclusive, not a verdict", func(t *testing.T) {
		short := within
		short.intervals = 5
		c := compareWith(syntheticRun(4, "short", 1.5, short), syntheticRun(5, "short-base", 1, short))
		if p95 := find(c, "s p95"); p95.Change != perfexpv1alpha1.ChangeInconclusive || !strings.Contains(p95.Why, "too few samples: 5 and 5 intervals") {
			t.Errorf("p95 %s (%s)", p95.Change, p95.Why)
		}
		if c.Change != perfexpv1alpha1.ChangeInconclusive {
			t.Errorf("headline %s", c.Change)
		}
	})
	t.Run("the stored intervals survive results.json, compactly", func(t *testing.T) {
		b, err := json.MarshalIndent(base, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		// results.json is written indented; one scenario's 20 intervals must stay a few KB so
		// dozens of series fit the report ConfigMap.
		series, _ := json.MarshalIndent(base.Intervals.Series[0], "", "  ")
		if len(series) > 12*1024 || len(base.Intervals.Series[0].Bounds) < 30 {
			t.Errorf("one series of %d buckets takes %d bytes", len(base.Intervals.Series[0].Bounds), len(series))
		}
		t.Logf("one series: %d intervals, %d buckets, %d bytes in results.json", len(base.Intervals.Series[0].Requests), len(base.Intervals.Series[0].Bounds), len(series))
		var back result.Result
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatal(err)
		}
		cur := syntheticRun(6, "later", 1.3, within)
		direct, stored := find(compareWith(cur, base), "s p95"), find(compareWith(cur, &back), "s p95")
		if *direct.Low != *stored.Low || *direct.High != *stored.High {
			t.Errorf("stored data compares differently: [%v, %v] vs [%v, %v]", *direct.Low, *direct.High, *stored.Low, *stored.High)
		}
	})
}

func TestCompareRuns(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	base := defaultSim.runs(rng, "base", 3, 1)
	t.Run("repeated runs: the run is the unit", func(t *testing.T) {
		c := CompareRuns(base, defaultSim.runs(rng, "slow", 3, 1.4), CompareOptions{})
		if c.Method != result.MethodRuns || c.Runs != 3 || c.BaselineRuns != 3 || c.Change != perfexpv1alpha1.ChangeRegressed || c.Baseline != "base-0" {
			t.Fatalf("%+v", c)
		}
		p95 := c.Metrics[0]
		if !p95.Primary || p95.Kind != perfexpv1alpha1.MetricP95 || p95.SampleUnit != "runs" || p95.Samples != 3 || *p95.Low <= 5 || *p95.Low > 40 || *p95.High < 40 {
			t.Errorf("p95 row %+v [%v, %v]", p95, deref(p95.Low), deref(p95.High))
		}
	})
	t.Run("an invalid baseline run is left out and said so", func(t *testing.T) {
		bad := defaultSim.run(rng, "bad", 1)
		MarkInvalid(bad, "too many errors")
		c := CompareRuns(append([]*result.Result{bad}, base...), defaultSim.runs(rng, "same", 3, 1), CompareOptions{})
		if c.BaselineRuns != 3 || !strings.Contains(strings.Join(c.Notes, ";"), "1 baseline and 0 arm runs were left out") {
			t.Errorf("%+v", c)
		}
	})
	t.Run("a baseline with another load shape is refused", func(t *testing.T) {
		cur := defaultSim.runs(rng, "more-vus", 3, 1)
		for _, r := range cur {
			r.LoadShape = []result.ScenarioShape{{Name: "s", Executor: "constant-vus", VUs: 20, Duration: "10m0s", Parallelism: 1}}
		}
		c := CompareRuns(base, cur, CompareOptions{})
		if c.Change != perfexpv1alpha1.ChangeUnknown || !strings.Contains(c.Message, "vus 20 here, 10 in the baseline") || len(c.Metrics) != 0 {
			t.Errorf("%+v", c)
		}
	})
	t.Run("one run each: the single-run bootstrap", func(t *testing.T) {
		c := CompareRuns(base[:1], defaultSim.runs(rng, "one", 1, 1), CompareOptions{})
		if c.Method != result.MethodBlockBootstrap || c.Change == perfexpv1alpha1.ChangeUnknown {
			t.Errorf("%+v", c)
		}
	})
	t.Run("one run each without stored intervals: unknown, with the reason", func(t *testing.T) {
		old := *base[0]
		old.Intervals = nil
		if c := CompareRuns([]*result.Result{&old}, base[1:2], CompareOptions{}); c.Change != perfexpv1alpha1.ChangeUnknown || !strings.Contains(c.Message, "no per-interval data") {
			t.Errorf("%+v", c)
		}
	})
	t.Run("no runs", func(t *testing.T) {
		if c := CompareRuns(nil, base, CompareOptions{}); c.Change != perfexpv1alpha1.ChangeUnknown || c.Message == "" {
			t.Errorf("%+v", c)
		}
	})
	t.Run("a user's primary metrics and δ", func(t *testing.T) {
		c := CompareRuns(base, defaultSim.runs(rng, "slow", 3, 1.4), CompareOptions{MinChangePercent: 60,
			Primary: []perfexpv1alpha1.PrimaryMetric{{Metric: perfexpv1alpha1.MetricP50}}})
		if c.Metrics[0].Kind != perfexpv1alpha1.MetricP50 || !c.Metrics[0].Primary || c.Metrics[1].Primary || c.MinChangePercent != 60 {
			t.Errorf("rows %+v", c.Metrics[:2])
		}
		if c.Change != perfexpv1alpha1.ChangeNoMeaningfulChange && c.Change != perfexpv1alpha1.ChangeInconclusive {
			t.Errorf("a +40 %% change against δ 60 %%: %s", c.Change)
		}
	})
}

func TestRelativeObjectivesOnAnyMetric(t *testing.T) {
	within := defaultSim
	within.betweenCV = 0
	base := syntheticRun(1, "base", 1, within)
	cur := syntheticRun(2, "slow", 1.3, within)
	inc := func(v int32) *int32 { return &v }
	judge := func(objs ...perfexpv1alpha1.Objective) []result.ObjectiveResult {
		cur.Comparison = Compare(cur, cur.Intervals, &Baseline{Name: "base", Result: base}, base.Intervals, CompareOptions{Objectives: objs})
		return Objectives(cur, objs)
	}
	// A bound inside the p95's interval can be neither met nor missed.
	judge(perfexpv1alpha1.Objective{Metric: perfexpv1alpha1.MetricP95, Scenario: "s", MaxIncreasePercent: inc(1000)})
	p95 := findComparison(cur, perfexpv1alpha1.Objective{Metric: perfexpv1alpha1.MetricP95, Scenario: "s"})
	inside := int32(math.Round((*p95.Low + *p95.High) / 2))
	objs := []perfexpv1alpha1.Objective{
		{Metric: perfexpv1alpha1.MetricP75, Scenario: "s", MaxIncreasePercent: inc(10)},
		{Metric: perfexpv1alpha1.MetricP90, Scenario: "s", MaxIncreasePercent: inc(60)},
		{Metric: perfexpv1alpha1.MetricP95, Scenario: "s", MaxIncreasePercent: &inside},
		{Metric: perfexpv1alpha1.MetricRate, Scenario: "s", MaxDecreasePercent: inc(50)},
	}
	got := judge(objs...)
	want := []perfexpv1alpha1.ObjectiveOutcome{perfexpv1alpha1.ObjectiveMissed, perfexpv1alpha1.ObjectiveMet, perfexpv1alpha1.ObjectiveUnknown, perfexpv1alpha1.ObjectiveMet}
	for i := range want {
		if got[i].Outcome != want[i] {
			t.Errorf("%s: %s (%s), want %s", got[i].Name, got[i].Outcome, got[i].Message, want[i])
		}
	}
	if !strings.Contains(got[2].Message, "straddles") {
		t.Errorf("unknown without the reason: %s", got[2].Message)
	}
}

func TestComparisonStatusPrimaryFirstAndBounded(t *testing.T) {
	c := &result.Comparison{Baseline: "b", Change: perfexpv1alpha1.ChangeRegressed, Method: result.MethodRuns, MinChangePercent: 5}
	for i := range 40 {
		c.Metrics = append(c.Metrics, result.MetricComparison{Metric: fmt.Sprintf("s/r%d p50", i), Scenario: "s", Request: fmt.Sprint("r", i), Kind: perfexpv1alpha1.MetricP50})
	}
	c.Metrics = append(c.Metrics, result.MetricComparison{Metric: "s p95", Scenario: "s", Kind: perfexpv1alpha1.MetricP95, Primary: true, Low: ptr(6.25), High: ptr(9), Samples: 3, BaselineSamples: 3,
		Change: perfexpv1alpha1.ChangeRegressed})
	s := c.Status()
	if len(s.Metrics) != result.StatusMaxMetrics || s.Metrics[0].Metric != "s p95" || !s.Metrics[0].Primary || s.Metrics[0].Low != "6.25" || s.Metrics[0].N != 3 {
		t.Errorf("%d metrics, first %+v", len(s.Metrics), s.Metrics[0])
	}
	if s.MinMeaningfulChangePercent != "5" || s.Method != result.MethodRuns {
		t.Errorf("%+v", s)
	}
}
