package judge

import (
	"math"
	"strings"
	"testing"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/result"
)

// iterationRun is one run's results whose iteration duration is scaled by slower, with a
// run-to-run noise of about ±2 %; the requests are unchanged (known truth).
func iterationRun(name string, i int, slower float64) *result.Result {
	r := transactionRun(name, i, 1)
	noise := 1 + 0.02*math.Sin(float64(5*i+2))
	v := 1500 * slower * noise
	r.Scenarios[0].IterationDuration = &result.Latency{Avg: result.Num(0.8 * v), P50: result.Num(0.75 * v), P95: result.Num(v), P99: result.Num(1.1 * v), Max: result.Num(1.5 * v)}
	return r
}

// Story: across repeated runs a scenario whose iterations got 30 % slower (its requests
// unchanged) has its iteration p95 and avg Regressed, secondary, so the headline stays on the
// requests; a relative objective on the iteration p95 is judged on that row, not on the
// requests'. One run per side without per-interval iteration data (results analysed by an
// older perfexp) is Unknown with the reason.
func TestIterationDurationComparison(t *testing.T) {
	var base, cur []*result.Result
	for i := range 3 {
		base = append(base, iterationRun("base", i, 1))
		cur = append(cur, iterationRun("arm", i+3, 1.3))
	}
	pct := int32(10)
	loose := int32(50)
	objectives := []perfexpv1alpha1.Objective{
		{Metric: perfexpv1alpha1.MetricP95, Scenario: "desk", Iteration: true, MaxIncreasePercent: &pct},
		{Metric: perfexpv1alpha1.MetricP95, Scenario: "desk", Iteration: true, MaxIncreasePercent: &loose},
		{Metric: perfexpv1alpha1.MetricP95, Scenario: "desk", MaxIncreasePercent: &pct},
	}
	c := CompareRuns(base, cur, CompareOptions{Objectives: objectives})
	if c.Message != "" {
		t.Fatalf("comparison refused: %s", c.Message)
	}
	for _, label := range []string{"desk iteration p95", "desk iteration avg"} {
		mc := comparedRow(c, label)
		if mc == nil {
			t.Fatalf("%s: not compared; rows: %v", label, labels(c))
		}
		if mc.Change != perfexpv1alpha1.ChangeRegressed || mc.Primary || mc.Unit != "ms" || mc.Low == nil || *mc.Low < 20 || *mc.High > 40 {
			t.Errorf("%s: %s (primary %v, unit %q) [%v, %v]%%: %s; want Regressed, secondary, ms, around +30%%",
				label, mc.Change, mc.Primary, mc.Unit, deref(mc.Low), deref(mc.High), mc.Why)
		}
	}
	if c.Change == perfexpv1alpha1.ChangeRegressed {
		t.Errorf("headline %s: the requests did not change", c.Change)
	}
	r := cur[0]
	r.Comparison = c
	got := Objectives(r, objectives)
	want := []struct {
		outcome perfexpv1alpha1.ObjectiveOutcome
		message string
	}{
		{perfexpv1alpha1.ObjectiveMissed, "lies above +10%"},
		{perfexpv1alpha1.ObjectiveMet, "within bounds"},
		{perfexpv1alpha1.ObjectiveMet, "within bounds"},
	}
	for i, w := range want {
		if got[i].Outcome != w.outcome || !strings.Contains(got[i].Message, w.message) {
			t.Errorf("objective %q: %s: %s; want %s with %q", got[i].Name, got[i].Outcome, got[i].Message, w.outcome, w.message)
		}
	}

	// Results analysed before iteration durations were stored per interval: Unknown, and why.
	single := Compare(cur[0], &result.IntervalData{}, &Baseline{Name: "base", Result: base[0]}, &result.IntervalData{}, CompareOptions{Objectives: objectives})
	mc := comparedRow(single, "desk iteration p95")
	if mc == nil || mc.Change != perfexpv1alpha1.ChangeUnknown || !strings.Contains(mc.Why, "no per-interval iteration durations") {
		t.Errorf("single run without iteration intervals: %+v; want Unknown, no per-interval iteration durations", mc)
	}
}
