package sweep_test

import (
	"math"
	"strings"
	"testing"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/result"
	"github.com/perfexp/perfexp/internal/sweep"
)

func f(v float64) *float64 { return &v }

func runResult(name string, p95, rate float64) *result.Result {
	return &result.Result{Experiment: name, Validity: perfexpv1alpha1.Valid, Scenarios: []result.ScenarioResult{
		{Name: "checkinout", Validity: perfexpv1alpha1.Valid, RequestStats: result.RequestStats{Avg: f(p95 / 2), P95: f(p95), Rate: f(rate)}},
	}}
}

func TestCompare(t *testing.T) {
	s := newSweep(withMatrix(perfexpv1alpha1.SweepDimension{Name: "users",
		Load: &perfexpv1alpha1.LoadDimension{Parameter: perfexpv1alpha1.LoadVUs, Values: []int32{1, 20}}}), withRepeats(2))
	p, err := sweep.NewPlan(s)
	if err != nil {
		t.Fatal(err)
	}
	ok := func(name string, p95, rate float64) sweep.Outcome {
		return sweep.Outcome{Phase: perfexpv1alpha1.PhaseSucceeded, Result: runResult(name, p95, rate)}
	}
	outcomes := map[string]sweep.Outcome{
		"pool-baseline-1": ok("pool-baseline-1", 100, 50), "pool-baseline-2": ok("pool-baseline-2", 120, 52),
		"pool-users-1-1": ok("pool-users-1-1", 40, 10), "pool-users-1-2": {Phase: perfexpv1alpha1.PhaseFailed},
		"pool-users-20-1": ok("pool-users-20-1", 300, 150), "pool-users-20-2": {Phase: perfexpv1alpha1.PhaseSucceeded},
	}
	r := sweep.Compare(s, p, outcomes, nil)

	if len(r.Arms) != 3 || r.Arms[0].Name != "baseline" || r.Repeats != 2 || r.MinMeaningfulChangePercent != 5 {
		t.Fatalf("result %+v", r)
	}
	base := r.Arms[0]
	if base.Succeeded != 2 || len(base.Scenarios) != 1 || math.Abs(*base.Scenarios[0].P95-math.Sqrt(100*120)) > 1e-9 || base.Scenarios[0].Runs != 2 {
		t.Errorf("baseline %+v: want p95 109.5 ms (the geometric mean of 100 and 120) over 2 runs", base)
	}
	if base.Comparison != nil {
		t.Error("the baseline was compared with itself")
	}
	for _, a := range r.Arms[1:] {
		if a.Comparison == nil {
			t.Errorf("arm %s has no comparison", a.Name)
		}
		if a.Succeeded != 1 {
			t.Errorf("arm %s: %d runs used, want 1", a.Name, a.Succeeded)
		}
	}
	notes := strings.Join(r.Notes, "\n")
	for _, want := range []string{"run pool-users-1-2 ended Failed; it is left out", "run pool-users-20-2 succeeded but its results"} {
		if !strings.Contains(notes, want) {
			t.Errorf("notes %q lack %q", notes, want)
		}
	}
	if r.LoadParameter != perfexpv1alpha1.LoadVUs || *r.Arms[0].LoadValue != 5 || *r.Arms[2].LoadValue != 20 {
		t.Errorf("capacity: parameter %q, load values %v %v", r.LoadParameter, r.Arms[0].LoadValue, r.Arms[2].LoadValue)
	}
}

func TestCompareWithTheBaselineAtTheSameLoad(t *testing.T) {
	s := newSweep(withArms(
		perfexpv1alpha1.SweepArm{Name: "pool-1", Variant: envVariant("1")},
		perfexpv1alpha1.SweepArm{Name: "pool-1-busy", Variant: envVariant("1"), Load: &perfexpv1alpha1.LoadOverride{VUs: ptr(int32(20))}},
	))
	p, err := sweep.NewPlan(s)
	if err != nil {
		t.Fatal(err)
	}
	outcomes := map[string]sweep.Outcome{}
	for _, r := range p.Runs {
		outcomes[r.Name] = sweep.Outcome{Phase: perfexpv1alpha1.PhaseSucceeded, Result: runResult(r.Name, 100, 50)}
	}
	r := sweep.Compare(s, p, outcomes, nil)
	want := map[string]string{"pool-1": "pool-baseline-1", "pool-1-busy": "pool-baseline-vus-20-1"}
	for _, a := range r.Arms {
		w, compared := want[a.Name]
		switch {
		case !compared && a.Comparison != nil:
			t.Errorf("baseline %s was compared with %s", a.Name, a.Comparison.Baseline)
		case compared && (a.Comparison == nil || a.Comparison.Baseline != w):
			t.Errorf("arm %s compared with %+v, want the runs of %s", a.Name, a.Comparison, w)
		}
	}
	if len(r.Arms) != 4 || r.Arms[1].Name != "baseline-vus-20" {
		t.Errorf("arms %+v, want the baseline at 20 VUs second", r.Arms)
	}
}

// Story: one run of an arm failed its validity check (a scenario above its maximum error rate).
// The comparison leaves it out; the table beside it once averaged it in anyway (the list-refresh
// study's short form showed a geometric mean of two runs' p95 next to a change computed from
// one), so its "p95 (geo. mean)" was not over the runs the change compares.
func TestCompareTableLeavesOutInvalidRuns(t *testing.T) {
	s := newSweep(withArms(perfexpv1alpha1.SweepArm{Name: "split", Variant: envVariant("1")}), withRepeats(2))
	p, err := sweep.NewPlan(s)
	if err != nil {
		t.Fatal(err)
	}
	outcomes := map[string]sweep.Outcome{}
	p95 := map[string]float64{"pool-baseline-1": 100, "pool-baseline-2": 120, "pool-split-1": 1000, "pool-split-2": 5000}
	for _, r := range p.Runs {
		outcomes[r.Name] = sweep.Outcome{Phase: perfexpv1alpha1.PhaseSucceeded, Result: runResult(r.Name, p95[r.Name], 50)}
	}
	bad := outcomes["pool-split-2"].Result
	if bad == nil {
		t.Fatalf("no run pool-split-2 in %v", p.Runs)
	}
	bad.Validity, bad.InvalidReasons = perfexpv1alpha1.Invalid, []string{"scenario checkinout: 11.83% of requests failed (11 of 93), above the maximum of 5%"}
	r := sweep.Compare(s, p, outcomes, nil)

	split := r.Arms[1]
	if len(split.Scenarios) != 1 || split.Scenarios[0].Runs != 1 || math.Abs(*split.Scenarios[0].P95-1000) > 1e-9 {
		t.Errorf("split's table row %+v: want the one Valid run, p95 1000 ms", split.Scenarios)
	}
	if split.Succeeded != 2 {
		t.Errorf("split: %d runs succeeded, want 2 (the Invalid one succeeded too)", split.Succeeded)
	}
	if notes := strings.Join(r.Notes, "\n"); !strings.Contains(notes, "run pool-split-2's results are not Valid (scenario checkinout: 11.83% of requests failed") ||
		!strings.Contains(notes, "the table and the comparisons leave it out") {
		t.Errorf("notes %q do not say the Invalid run was left out", notes)
	}
}

// Story: the list-refresh study decides on its refresh duration (a query here, one value per
// run), not on the scenario's HTTP p95. An arm whose p95 grew tenfold while the refresh got 30 %
// faster is Improved: the template's primaryMetrics decide every arm's headline, and the p95 is
// a secondary row.
func TestCompareDecidesOnTheTemplatesPrimaryMetrics(t *testing.T) {
	s := newSweep(withArms(perfexpv1alpha1.SweepArm{Name: "split", Variant: envVariant("1")}), withRepeats(3))
	s.Spec.Template.Analysis = &perfexpv1alpha1.Analysis{PrimaryMetrics: []perfexpv1alpha1.PrimaryMetric{
		{Metric: perfexpv1alpha1.MetricQuery, Query: "refresh-seconds", Direction: perfexpv1alpha1.LowerIsBetter},
	}}
	p, err := sweep.NewPlan(s)
	if err != nil {
		t.Fatal(err)
	}
	outcomes := map[string]sweep.Outcome{}
	for i, r := range p.Runs {
		p95, refresh := 100.0, 60.0
		if strings.Contains(r.Name, "split") {
			p95, refresh = 1000, 42
		}
		jitter := 1 + 0.01*float64(i%3)
		res := runResult(r.Name, p95*jitter, 50)
		res.Queries = []result.QueryResult{{Name: "refresh-seconds", Unit: "s", Value: f(refresh * jitter)}}
		outcomes[r.Name] = sweep.Outcome{Phase: perfexpv1alpha1.PhaseSucceeded, Result: res}
	}
	c := sweep.Compare(s, p, outcomes, nil).Arms[1].Comparison
	if c == nil || c.Change != perfexpv1alpha1.ChangeImproved {
		t.Fatalf("split's comparison %+v: want Improved on the refresh duration", c)
	}
	for _, m := range c.Metrics {
		if m.Primary != (m.Metric == "query refresh-seconds") {
			t.Errorf("%s: primary %v; want only the query primary", m.Metric, m.Primary)
		}
	}
}
