package judge

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/resource"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/result"
)

// A variant reverted during the run (the Drifted condition) makes otherwise valid results
// Invalid, with the field and its manager in the reason, whatever the objectives say.
func TestDriftedResultsAreInvalid(t *testing.T) {
	tests := []struct {
		name        string
		drifted     string
		wantVerdict perfexpv1alpha1.Verdict
	}{
		{"no drift", "", perfexpv1alpha1.VerdictPass},
		{"image put back by Argo CD", `Deployment shop/web spec.template.spec.containers[app].image is "web:1"; changed by "argocd-controller" (Apply)`, perfexpv1alpha1.VerdictInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &result.Result{Validity: perfexpv1alpha1.Valid}
			Drift(r, tt.drifted)
			if got := Verdict(r); got != tt.wantVerdict {
				t.Fatalf("verdict %s, want %s (reasons %v)", got, tt.wantVerdict, r.InvalidReasons)
			}
			if tt.drifted != "" && (len(r.InvalidReasons) != 1 || !strings.Contains(r.InvalidReasons[0], "argocd-controller")) {
				t.Fatalf("invalid reasons %v do not name the manager", r.InvalidReasons)
			}
		})
	}
}

func requestRow(name string, requests, errors int64) result.RequestResult {
	return result.RequestResult{Name: name, RequestStats: result.RequestStats{Requests: result.Count(requests), Errors: result.Count(errors),
		ErrorPercent: result.Num(100 * float64(errors) / float64(requests))}}
}

// A request name that fails wholesale under a small share of the traffic makes the run Invalid
// even though the scenario's error rate is under the maximum.
func TestValidityPerRequestName(t *testing.T) {
	tests := []struct {
		name    string
		rows    []result.RequestResult
		invalid string // part of the reason; empty: Valid
	}{
		{"all names healthy", []result.RequestResult{requestRow("check-out", 9600, 10), requestRow("check-in", 400, 0)}, ""},
		{"one name failing 100 % under 4 % of traffic", []result.RequestResult{requestRow("check-out", 9600, 0), requestRow("renew", 400, 400)}, "renew 100.00% (400 of 400)"},
		{"a rare name with too few errors to count", []result.RequestResult{requestRow("check-out", 9997, 0), requestRow("admin", 3, 3)}, ""},
		{"at the maximum is still valid", []result.RequestResult{requestRow("check-out", 1000, 50)}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var total, errs int64
			for _, rr := range tc.rows {
				total += *rr.Requests
				errs += *rr.Errors
			}
			r := &result.Result{Validity: perfexpv1alpha1.Valid, Scenarios: []result.ScenarioResult{{Name: "main", Validity: perfexpv1alpha1.Valid,
				RequestStats: result.RequestStats{Requests: result.Count(total), Errors: result.Count(errs), ErrorPercent: result.Num(100 * float64(errs) / float64(total))}, Requests: tc.rows}}}
			Validity(r, DefaultMaxErrorRatePercent)
			s := r.Scenarios[0]
			switch {
			case tc.invalid == "" && s.Validity != perfexpv1alpha1.Valid:
				t.Errorf("Invalid (%s), want Valid", s.InvalidReason)
			case tc.invalid != "" && (s.Validity != perfexpv1alpha1.Invalid || r.Validity != perfexpv1alpha1.Invalid || !strings.Contains(s.InvalidReason, tc.invalid)):
				t.Errorf("%s (%q), want Invalid naming %q", s.Validity, s.InvalidReason, tc.invalid)
			}
		})
	}
}

// In the trend-stats fallback a percentile over several runners is the largest of theirs, an
// upper bound: below a maximum it proves the objective met; above it, or against a minimum, it
// proves nothing.
func TestObjectivesOnUpperBoundPercentiles(t *testing.T) {
	q := func(s string) *resource.Quantity { v := resource.MustParse(s); return &v }
	tests := []struct {
		name    string
		bounded bool
		o       perfexpv1alpha1.Objective
		want    perfexpv1alpha1.ObjectiveOutcome
	}{
		{"merged p95 above the maximum is missed", false, perfexpv1alpha1.Objective{Metric: perfexpv1alpha1.MetricP95, Max: q("300")}, perfexpv1alpha1.ObjectiveMissed},
		{"upper bound above the maximum is unknown", true, perfexpv1alpha1.Objective{Metric: perfexpv1alpha1.MetricP95, Max: q("300")}, perfexpv1alpha1.ObjectiveUnknown},
		{"upper bound below the maximum is met", true, perfexpv1alpha1.Objective{Metric: perfexpv1alpha1.MetricP95, Max: q("500")}, perfexpv1alpha1.ObjectiveMet},
		{"upper bound against a minimum is unknown", true, perfexpv1alpha1.Objective{Metric: perfexpv1alpha1.MetricP95, Min: q("100")}, perfexpv1alpha1.ObjectiveUnknown},
		{"the average is not a bound", true, perfexpv1alpha1.Objective{Metric: perfexpv1alpha1.MetricAvg, Max: q("100")}, perfexpv1alpha1.ObjectiveMissed},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := &result.Result{Total: result.RequestStats{Avg: result.Num(200), P95: result.Num(400), PercentilesUpperBound: tc.bounded}}
			got := Objectives(r, []perfexpv1alpha1.Objective{tc.o})[0]
			if got.Outcome != tc.want {
				t.Errorf("%s (%s), want %s", got.Outcome, got.Message, tc.want)
			}
		})
	}
}

// A scenario whose k6 samples reached Prometheus without an HTTP request (the script sleeps,
// or speaks gRPC) is invalid for want of requests, not for want of samples: the reason must
// not send its author looking for a broken remote write.
func TestValidityScenarioWithoutRequests(t *testing.T) {
	tests := []struct {
		name     string
		scenario result.ScenarioResult
		want     string
	}{
		{"iterations, no request", result.ScenarioResult{Name: "idle", Iterations: result.Count(20)},
			"scenario idle: no HTTP requests in Prometheus with testid=run-1 (its 20 iterations reached it)"},
		{"nothing at all", result.ScenarioResult{Name: "idle"}, "scenario idle: no k6 samples with testid=run-1 reached Prometheus"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &result.Result{TestID: "run-1", Validity: perfexpv1alpha1.Valid, Scenarios: []result.ScenarioResult{tt.scenario}}
			Validity(r, DefaultMaxErrorRatePercent)
			if r.Validity != perfexpv1alpha1.Invalid || len(r.InvalidReasons) != 1 || !strings.Contains(r.InvalidReasons[0], tt.want) {
				t.Fatalf("validity %s, reasons %q, want one containing %q", r.Validity, r.InvalidReasons, tt.want)
			}
		})
	}
}
