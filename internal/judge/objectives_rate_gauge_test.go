package judge

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/resource"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/result"
)

// Story: objectives name a script's own Rate and Gauge. The scenario's heavy_basket Rate reads
// 29.8 % (the lowest runner's), so "at most 30 %" is met and "at most 25 %" missed; its
// queue_depth Gauge (one series) went from 10 to 36 and ended at 23; its pool_size Gauge was
// written by two runners, so it has a Min and Max but no single Last, and an objective on
// its Last is Unknown and says so. Names the run did not write list the ones it did.
func TestRateAndGaugeObjectives(t *testing.T) {
	r := &result.Result{Scenarios: []result.ScenarioResult{{
		Name:  "desk",
		Rates: []result.RateResult{{Name: "heavy_basket", Metric: "k6_heavy_basket_rate", Percent: result.Num(29.8)}},
		Gauges: []result.GaugeResult{
			{Name: "pool_size", Metric: "k6_pool_size", Min: result.Num(4), Max: result.Num(8), Series: 2},
			{Name: "queue_depth", Metric: "k6_queue_depth", Min: result.Num(10), Max: result.Num(36), Last: result.Num(23), Series: 1},
		},
	}}}
	q := func(s string) *resource.Quantity { v := resource.MustParse(s); return &v }
	tests := []struct {
		objective perfexpv1alpha1.Objective
		outcome   perfexpv1alpha1.ObjectiveOutcome
		unit      string
		name      string
		message   string
	}{
		{perfexpv1alpha1.Objective{Metric: perfexpv1alpha1.MetricPercent, Scenario: "desk", Rate: "heavy_basket", Max: q("30")},
			perfexpv1alpha1.ObjectiveMet, "%", "desk rate heavy_basket Percent <= 30%", "29.8% is within bounds (the lowest k6 runner's share, counted since it started)"},
		{perfexpv1alpha1.Objective{Metric: perfexpv1alpha1.MetricPercent, Scenario: "desk", Rate: "heavy_basket", Max: q("25")},
			perfexpv1alpha1.ObjectiveMissed, "%", "desk rate heavy_basket Percent <= 25%", "29.8 is above the maximum 25 (the lowest k6 runner's share"},
		{perfexpv1alpha1.Objective{Metric: perfexpv1alpha1.MetricPercent, Scenario: "desk", Rate: "light_basket", Min: q("1")},
			perfexpv1alpha1.ObjectiveUnknown, "%", "desk rate light_basket Percent >= 1%", `scenario desk has no custom Rate "light_basket" in the window (Rates: heavy_basket)`},
		{perfexpv1alpha1.Objective{Metric: perfexpv1alpha1.MetricMax, Scenario: "desk", Gauge: "queue_depth", Max: q("40")},
			perfexpv1alpha1.ObjectiveMet, "", "desk gauge queue_depth Max <= 40", "36 is within bounds"},
		{perfexpv1alpha1.Objective{Metric: perfexpv1alpha1.MetricMin, Scenario: "desk", Gauge: "queue_depth", Min: q("12")},
			perfexpv1alpha1.ObjectiveMissed, "", "desk gauge queue_depth Min >= 12", "10 is below the minimum 12"},
		{perfexpv1alpha1.Objective{Metric: perfexpv1alpha1.MetricLast, Scenario: "desk", Gauge: "queue_depth", Max: q("25"), Min: q("20")},
			perfexpv1alpha1.ObjectiveMet, "", "desk gauge queue_depth Last <= 25, >= 20", "23 is within bounds"},
		{perfexpv1alpha1.Objective{Metric: perfexpv1alpha1.MetricMax, Scenario: "desk", Gauge: "pool_size", Max: q("8")},
			perfexpv1alpha1.ObjectiveMet, "", "desk gauge pool_size Max <= 8", "8 is within bounds"},
		{perfexpv1alpha1.Objective{Metric: perfexpv1alpha1.MetricLast, Scenario: "desk", Gauge: "pool_size", Max: q("8")},
			perfexpv1alpha1.ObjectiveUnknown, "", "desk gauge pool_size Last <= 8", `Gauge "pool_size" was written by 2 series (k6 runners or tag sets), so it has no single last value; judge its Min or Max`},
		{perfexpv1alpha1.Objective{Metric: perfexpv1alpha1.MetricMax, Scenario: "desk", Gauge: "open_carts", Max: q("8")},
			perfexpv1alpha1.ObjectiveUnknown, "", "desk gauge open_carts Max <= 8", `scenario desk has no custom Gauge "open_carts" in the window (Gauges: pool_size, queue_depth)`},
		{perfexpv1alpha1.Objective{Metric: perfexpv1alpha1.MetricMax, Scenario: "lobby", Gauge: "queue_depth", Max: q("8")},
			perfexpv1alpha1.ObjectiveUnknown, "", "lobby gauge queue_depth Max <= 8", `no scenario "lobby" in the results`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := Objectives(r, []perfexpv1alpha1.Objective{tc.objective})
			o := got[0]
			if o.Outcome != tc.outcome || o.Unit != tc.unit || o.Name != tc.name || !strings.Contains(o.Message, tc.message) {
				t.Errorf("%s %q unit %q: %s; want %s %q unit %q with %q", o.Outcome, o.Name, o.Unit, o.Message, tc.outcome, tc.name, tc.unit, tc.message)
			}
			if ObjectiveName(tc.objective) != tc.name {
				t.Errorf("ObjectiveName = %q, want %q", ObjectiveName(tc.objective), tc.name)
			}
		})
	}
	// A Gauge's Last missed and another objective Unknown: the verdict is Fail, not Pass.
	r.Objectives = Objectives(r, []perfexpv1alpha1.Objective{tests[4].objective, tests[7].objective})
	r.Validity = perfexpv1alpha1.Valid
	if v := Verdict(r); v != perfexpv1alpha1.VerdictFail {
		t.Errorf("verdict %s, want Fail", v)
	}
}
