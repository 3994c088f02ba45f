package findings

import (
	"strings"
	"testing"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/result"
)

// routeCmp is a route comparison as internal/judge's route rows are: no scenario, no workload,
// the service in RouteWorkload.
func routeCmp(workload, route string, kind perfexpv1alpha1.ObjectiveMetric, est, lo, hi float64, change perfexpv1alpha1.Change) result.MetricComparison {
	short := workload[strings.Index(workload, "/")+1:]
	return result.MetricComparison{Metric: short + " " + route + " " + strings.ToLower(string(kind)) + " (server)", Kind: kind, Route: route, RouteWorkload: workload,
		Estimate: f(est), Low: f(lo), High: f(hi), Scale: result.ScalePercent, Change: change}
}

// The API that moved is named among a run's findings, the largest change first, never stronger
// than its row: a route whose interval lies within ±δ is no mover, one that cannot decide reads
// "no clear change", and a route's average or errors do not add a second line for it.
func TestRouteMoversNameTheAPIThatMoved(t *testing.T) {
	c := &result.Comparison{Baseline: "release-1", MinChangePercent: 5, Metrics: []result.MetricComparison{
		routeCmp("Deployment/shop/circulation", "check-in", perfexpv1alpha1.MetricP95, 1, -2, 3, perfexpv1alpha1.ChangeNoMeaningfulChange),
		routeCmp("Deployment/shop/circulation", "check-out", perfexpv1alpha1.MetricP95, 150, 131, 170, perfexpv1alpha1.ChangeRegressed),
		routeCmp("Deployment/shop/circulation", "check-out", perfexpv1alpha1.MetricAvg, 148, 130, 166, perfexpv1alpha1.ChangeRegressed),
		routeCmp("Deployment/shop/inventory", "get", perfexpv1alpha1.MetricP95, -9, -30, 12, perfexpv1alpha1.ChangeInconclusive),
		routeCmp("Deployment/shop/inventory", "list", perfexpv1alpha1.MetricP95, -20, -26, -14, perfexpv1alpha1.ChangeImproved),
		routeCmp("Deployment/shop/inventory", "put", perfexpv1alpha1.MetricP95, 6, 5.5, 6.5, perfexpv1alpha1.ChangeRegressed),
	}}
	fs := Run(&result.Result{Comparison: c}, nil)
	var got []result.Finding
	for _, x := range fs {
		if x.Kind == result.FindingRoute {
			got = append(got, x)
		}
	}
	want := []result.Finding{
		{Kind: result.FindingRoute, Row: "Slowest APIs / shop/circulation check-out", Text: "Mover: shop/circulation check-out p95 (server) rose by +150.0 % [+131.0, +170.0] against the baseline (Regressed)."},
		{Kind: result.FindingRoute, Row: "Slowest APIs / shop/inventory list", Text: "Mover: shop/inventory list p95 (server) fell by -20.0 % [-26.0, -14.0] against the baseline (Improved)."},
		{Kind: result.FindingRoute, Row: "Slowest APIs / shop/inventory get", Text: "No clear change in shop/inventory get p95 (server): -9.0 % [-30.0, +12.0] (Inconclusive)."},
	}
	if len(got) != len(want) {
		t.Fatalf("route findings %+v, want %d", got, len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("route finding %d = %+v, want %+v", i, got[i], want[i])
		}
	}
	// Route rows are not request latency: the p95 movers of scenarios and requests stay theirs.
	for _, x := range fs {
		if x.Kind == result.FindingMover && strings.Contains(x.Text, "(server)") {
			t.Errorf("a route counted as a request's mover: %q", x.Text)
		}
	}
}

// A sweep names the routes whose p95 an arm's verdict claims changed, with the arm, largest
// first; an arm's inconclusive route is not a sweep finding.
func TestSweepRouteMovers(t *testing.T) {
	arms := []Arm{
		{Name: "baseline"},
		{Name: "cache", Baseline: "baseline", Comparison: &result.Comparison{MinChangePercent: 5, Metrics: []result.MetricComparison{
			routeCmp("Deployment/shop/circulation", "check-out", perfexpv1alpha1.MetricP95, -40, -45, -35, perfexpv1alpha1.ChangeImproved),
			routeCmp("Deployment/shop/inventory", "get", perfexpv1alpha1.MetricP95, 30, -5, 60, perfexpv1alpha1.ChangeInconclusive),
		}}},
		{Name: "no-cache", Baseline: "baseline", Comparison: &result.Comparison{MinChangePercent: 5, Metrics: []result.MetricComparison{
			routeCmp("Deployment/shop/circulation", "check-out", perfexpv1alpha1.MetricP95, 150, 131, 170, perfexpv1alpha1.ChangeRegressed),
		}}},
	}
	var got []string
	for _, x := range Sweep(arms) {
		if x.Kind == result.FindingRoute {
			got = append(got, x.Row+": "+x.Text)
		}
	}
	want := []string{
		"Arm no-cache / Slowest APIs / shop/circulation check-out: Arm no-cache: Mover: shop/circulation check-out p95 (server) rose by +150.0 % [+131.0, +170.0] against the baseline (Regressed).",
		"Arm cache / Slowest APIs / shop/circulation check-out: Arm cache: Mover: shop/circulation check-out p95 (server) fell by -40.0 % [-45.0, -35.0] against the baseline (Improved).",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("sweep route findings\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
