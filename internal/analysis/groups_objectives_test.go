package analysis

import (
	"context"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/analysis/promtest"
)

// Story: a transaction's (k6 group's) and a custom Trend's percentiles are objectives like a
// request's: crafted into a real Prometheus, a group whose p95 is about 380 ms meets "p95 <=
// 500ms" and misses "p95 <= 200ms", a time Trend is judged in milliseconds, a plain-number
// Trend in its own unit, and a name the run never wrote is Unknown with the names it did.
func TestGroupAndTrendObjectives(t *testing.T) {
	base := time.Now().Add(-50 * time.Minute).Truncate(time.Second)
	at := func(d time.Duration) time.Time { return base.Add(d) }
	const id = "group-objectives"
	out := newCraftedTrend(metricGroupDuration, id, "desk", "::check-out", "0")
	tx := newCraftedTrend("k6_checkout_transaction_seconds", id, "desk", "::check-out", "0")
	items := newCraftedTrend("k6_basket_items", id, "desk", "", "0")
	for k := 1; k <= 24; k++ {
		out.flush(at(time.Duration(k)*5*time.Second), latencies(10, 0.1, 0.4, k)...)
		tx.flush(at(time.Duration(k)*5*time.Second), latencies(10, 0.05, 0.15, k+7)...)
		items.flush(at(time.Duration(k)*5*time.Second), 2, 3, 4, 5)
	}
	prom := promtest.Start(t)
	prom.Write(t, []promtest.Series{out.series(), tx.series(), items.series()})

	ms := func(s string) *resource.Quantity { q := resource.MustParse(s); return &q }
	objectives := []perfexpv1alpha1.Objective{
		{Metric: perfexpv1alpha1.MetricP95, Scenario: "desk", Group: "check-out", Max: ms("500")},
		{Metric: perfexpv1alpha1.MetricP95, Scenario: "desk", Group: "check-out", Max: ms("200")},
		{Metric: perfexpv1alpha1.MetricAvg, Scenario: "desk", Trend: "checkout_transaction", Max: ms("150")},
		{Metric: perfexpv1alpha1.MetricP50, Scenario: "desk", Trend: "basket_items", Min: ms("3")},
		{Metric: perfexpv1alpha1.MetricP95, Scenario: "desk", Group: "check-in", Max: ms("500")},
		{Metric: perfexpv1alpha1.MetricP95, Scenario: "desk", Trend: "refund_duration", Max: ms("500")},
	}
	in := Input{Experiment: id, TestID: id, Start: at(0), End: at(125 * time.Second), Scenarios: []string{"desk"},
		Analysis: perfexpv1alpha1.Analysis{Objectives: objectives}}
	r, err := Analyze(context.Background(), prom.API(t), in)
	if err != nil {
		t.Fatal(err)
	}
	g := groupOf(r.Scenarios[0], "check-out")
	if g == nil || g.P95 == nil || *g.P95 < 300 || *g.P95 > 450 {
		t.Fatalf("the test needs a check-out p95 near 380 ms, got %+v", g)
	}
	tests := []struct {
		outcome perfexpv1alpha1.ObjectiveOutcome
		unit    string
		name    string
		message string
	}{
		{perfexpv1alpha1.ObjectiveMet, "ms", "desk group check-out P95 <= 500 ms", "within bounds"},
		{perfexpv1alpha1.ObjectiveMissed, "ms", "desk group check-out P95 <= 200 ms", "above the maximum 200"},
		{perfexpv1alpha1.ObjectiveMet, "ms", "desk trend checkout_transaction Avg <= 150 ms", "within bounds"},
		{perfexpv1alpha1.ObjectiveMet, "", "desk trend basket_items P50 >= 3", "within bounds"},
		{perfexpv1alpha1.ObjectiveUnknown, "ms", "desk group check-in P95 <= 500 ms", `no group "check-in" in the window (groups: check-out)`},
		{perfexpv1alpha1.ObjectiveUnknown, "", "desk trend refund_duration P95 <= 500", `no custom Trend "refund_duration" in the window (Trends: basket_items, checkout_transaction)`},
	}
	if len(r.Objectives) != len(tests) {
		t.Fatalf("%d objectives judged, want %d", len(r.Objectives), len(tests))
	}
	for i, tc := range tests {
		o := r.Objectives[i]
		if o.Outcome != tc.outcome || o.Unit != tc.unit || o.Name != tc.name || !strings.Contains(o.Message, tc.message) {
			t.Errorf("objective %d: %s %q unit %q: %s; want %s %q unit %q with %q", i, o.Outcome, o.Name, o.Unit, o.Message, tc.outcome, tc.name, tc.unit, tc.message)
		}
	}
	if r.Verdict == perfexpv1alpha1.VerdictPass {
		t.Errorf("verdict %s with a missed group objective", r.Verdict)
	}
}
