package judge

import (
	"math"
	"slices"
	"strings"
	"testing"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/result"
)

// transactionRun is one run's results with a scenario, a group and a time Trend, each with a
// run-to-run noise of about ±2 % (known truth: slower scales the group only).
func transactionRun(name string, i int, slower float64) *result.Result {
	noise := 1 + 0.02*math.Sin(float64(3*i+1))
	lat := func(v float64) result.Latency {
		return result.Latency{Avg: result.Num(0.6 * v * noise), P50: result.Num(0.5 * v * noise), P95: result.Num(v * noise), P99: result.Num(1.2 * v * noise), Max: result.Num(2 * v)}
	}
	s := result.ScenarioResult{Name: "desk"}
	s.RequestStats.Requests, s.Errors, s.Avg, s.P95, s.ErrorPercent, s.Rate = result.Count(1000), result.Count(0), result.Num(40*noise), result.Num(90*noise), result.Num(0), result.Num(50)
	s.Groups = []result.GroupResult{{Name: "check-out", Count: result.Count(300), Latency: lat(400 * slower)}}
	s.Trends = []result.TrendResult{{Name: "checkout_transaction", Unit: "ms", Count: result.Count(300), Latency: lat(150)}}
	return &result.Result{Experiment: name, TestID: name, Validity: perfexpv1alpha1.Valid, Total: s.RequestStats, Scenarios: []result.ScenarioResult{s}}
}

func comparedRow(c *result.Comparison, label string) *result.MetricComparison {
	for i := range c.Metrics {
		if c.Metrics[i].Metric == label {
			return &c.Metrics[i]
		}
	}
	return nil
}

// Story: across repeated runs a transaction that got 30 % slower is Regressed, an unchanged
// Trend is not, neither is a primary metric (the headline stays on the scenario's own), and a
// relative objective on the group is judged on the group's interval.
func TestGroupAndTrendComparison(t *testing.T) {
	var base, cur []*result.Result
	for i := range 3 {
		base = append(base, transactionRun("base", i, 1))
		cur = append(cur, transactionRun("arm", i+3, 1.3))
	}
	pct := int32(10)
	objective := perfexpv1alpha1.Objective{Metric: perfexpv1alpha1.MetricP95, Scenario: "desk", Group: "check-out", MaxIncreasePercent: &pct}
	c := CompareRuns(base, cur, CompareOptions{Objectives: []perfexpv1alpha1.Objective{objective}})
	if c.Message != "" {
		t.Fatalf("comparison refused: %s", c.Message)
	}
	tests := []struct {
		label string
		want  []perfexpv1alpha1.Change
	}{
		{"desk group check-out p95", []perfexpv1alpha1.Change{perfexpv1alpha1.ChangeRegressed}},
		{"desk group check-out avg", []perfexpv1alpha1.Change{perfexpv1alpha1.ChangeRegressed}},
		{"desk trend checkout_transaction p95", []perfexpv1alpha1.Change{perfexpv1alpha1.ChangeNoMeaningfulChange, perfexpv1alpha1.ChangeInconclusive}},
		{"desk trend checkout_transaction avg", []perfexpv1alpha1.Change{perfexpv1alpha1.ChangeNoMeaningfulChange, perfexpv1alpha1.ChangeInconclusive}},
	}
	for _, tc := range tests {
		mc := comparedRow(c, tc.label)
		if mc == nil {
			t.Errorf("%s: not compared; rows: %v", tc.label, labels(c))
			continue
		}
		if !slices.Contains(tc.want, mc.Change) || mc.Primary || mc.Unit != "ms" {
			t.Errorf("%s: %s (primary %v, unit %q): %s; want one of %v, secondary, ms", tc.label, mc.Change, mc.Primary, mc.Unit, mc.Why, tc.want)
		}
		if strings.Contains(tc.label, "check-out p95") && (mc.Low == nil || *mc.Low < 20 || *mc.High > 40) {
			t.Errorf("%s: interval [%v, %v]%%, want it around +30%%", tc.label, deref(mc.Low), deref(mc.High))
		}
	}
	if c.Change == perfexpv1alpha1.ChangeRegressed {
		t.Errorf("headline %s: the scenario's own metrics did not change", c.Change)
	}
	r := cur[0]
	r.Comparison = c
	got := Objectives(r, []perfexpv1alpha1.Objective{objective})
	if got[0].Outcome != perfexpv1alpha1.ObjectiveMissed || !strings.Contains(got[0].Message, "lies above +10%") {
		t.Errorf("group objective at most +10%%: %s: %s; want Missed", got[0].Outcome, got[0].Message)
	}

}
