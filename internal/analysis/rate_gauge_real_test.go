package analysis

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/analysis/promtest"
)

// Story: the desk's script of docs/analysis.md, run by a real k6 into a real Prometheus, with
// objectives on its heavy_basket Rate and queue_depth Gauge. Each objective is set just beside
// k6's own summary of the run, so its outcome is known: the Rate's share (one runner: exactly
// k6's) meets a maximum 1 point above it and misses one 1 point below; the Gauge's last value
// is k6's own, and its pushed max and min lie within k6's max and min.
func TestRealK6RateAndGaugeObjectives(t *testing.T) {
	prom := promtest.Start(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { time.Sleep(time.Millisecond) }))
	defer srv.Close()
	const id = "rate-gauge-real"
	start := time.Now().Truncate(time.Second)
	sum := parseChecksSummary(t, prom.RunK6(t, promtest.K6Run{Script: checksScript, TestID: id, Env: map[string]string{"BASE": srv.URL}}))
	end := time.Now().Add(time.Second).Truncate(time.Second)
	heavy, depth := sum.metrics["heavy_basket"], sum.metrics["queue_depth"]
	if heavy == nil || depth == nil {
		t.Fatalf("k6's summary lacks the Rate or the Gauge: %v", sum.metrics)
	}
	share := 100 * heavy["value"]
	q := func(v float64) *resource.Quantity {
		x := resource.MustParse(strconv.FormatFloat(v, 'f', 6, 64))
		return &x
	}
	objectives := []perfexpv1alpha1.Objective{
		{Metric: perfexpv1alpha1.MetricPercent, Scenario: "desk", Rate: "heavy_basket", Max: q(share + 1)},
		{Metric: perfexpv1alpha1.MetricPercent, Scenario: "desk", Rate: "heavy_basket", Max: q(share - 1)},
		{Metric: perfexpv1alpha1.MetricLast, Scenario: "desk", Gauge: "queue_depth", Min: q(depth["value"]), Max: q(depth["value"])},
		{Metric: perfexpv1alpha1.MetricMax, Scenario: "desk", Gauge: "queue_depth", Max: q(depth["max"])},
		{Metric: perfexpv1alpha1.MetricMin, Scenario: "desk", Gauge: "queue_depth", Min: q(depth["min"])},
		{Metric: perfexpv1alpha1.MetricMax, Scenario: "desk", Gauge: "open_carts", Max: q(1)},
	}
	r, err := Analyze(context.Background(), prom.API(t), Input{Experiment: id, TestID: id, Start: start, End: end, Scenarios: []string{"desk"},
		Analysis: perfexpv1alpha1.Analysis{Objectives: objectives}})
	if err != nil {
		t.Fatal(err)
	}
	want := []perfexpv1alpha1.ObjectiveOutcome{perfexpv1alpha1.ObjectiveMet, perfexpv1alpha1.ObjectiveMissed, perfexpv1alpha1.ObjectiveMet,
		perfexpv1alpha1.ObjectiveMet, perfexpv1alpha1.ObjectiveMet, perfexpv1alpha1.ObjectiveUnknown}
	for i, o := range r.Objectives {
		if o.Outcome != want[i] {
			t.Errorf("%s: %s (%v): %s; want %s (k6: heavy_basket %.4f%%, queue_depth %v)", o.Name, o.Outcome, deref(o.Value), o.Message, want[i], share, depth)
		}
	}
	if g := r.Scenarios[0].Gauges; len(g) == 1 {
		t.Logf("k6: heavy_basket %.4f%%, queue_depth value %v min %v max %v; perfexp: last %v min %v max %v", share, depth["value"], depth["min"], depth["max"],
			deref(g[0].Last), deref(g[0].Min), deref(g[0].Max))
	}
	for _, o := range r.Objectives {
		t.Logf("%s: %s %s", o.Name, o.Outcome, o.Message)
	}
}
