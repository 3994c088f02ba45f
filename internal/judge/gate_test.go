package judge

import (
	"strings"
	"testing"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/result"
)

func TestGate(t *testing.T) {
	crossed := []result.ThresholdResult{
		{Metric: "http_req_duration", Expression: "p(95)<500", Crossed: true, Scenarios: []string{"browse"}},
		{Metric: "http_req_failed", Expression: "rate<0.01"},
	}
	passed := []result.ThresholdResult{{Metric: "http_req_duration", Expression: "p(95)<500"}}
	tests := []struct {
		name       string
		verdict    perfexpv1alpha1.Verdict
		in         GateInput
		want       perfexpv1alpha1.Verdict
		wantReason string
	}{
		{name: "nothing crossed", verdict: perfexpv1alpha1.VerdictPass, in: GateInput{Thresholds: passed}, want: perfexpv1alpha1.VerdictPass},
		{name: "a named threshold crossed fails a Pass", verdict: perfexpv1alpha1.VerdictPass,
			in: GateInput{ThresholdsCrossed: true, Thresholds: crossed}, want: perfexpv1alpha1.VerdictFail,
			wantReason: "k6 threshold crossed: http_req_duration p(95)<500 (scenario browse)"},
		{name: "a crossed threshold fails an Inconclusive", verdict: perfexpv1alpha1.VerdictInconclusive,
			in: GateInput{Thresholds: crossed}, want: perfexpv1alpha1.VerdictFail, wantReason: "p(95)<500"},
		{name: "exit code 99 without summaries still fails", verdict: perfexpv1alpha1.VerdictPass,
			in: GateInput{ThresholdsCrossed: true}, want: perfexpv1alpha1.VerdictFail, wantReason: "exit code 99"},
		{name: "Invalid stays Invalid", verdict: perfexpv1alpha1.VerdictInvalid,
			in: GateInput{ThresholdsCrossed: true, Thresholds: crossed}, want: perfexpv1alpha1.VerdictInvalid, wantReason: "p(95)<500"},
		{name: "Regressed without the setting passes", verdict: perfexpv1alpha1.VerdictPass,
			in: GateInput{Headline: perfexpv1alpha1.ChangeRegressed}, want: perfexpv1alpha1.VerdictPass},
		{name: "Regressed with the setting fails", verdict: perfexpv1alpha1.VerdictPass,
			in: GateInput{Headline: perfexpv1alpha1.ChangeRegressed, FailOnRegression: true}, want: perfexpv1alpha1.VerdictFail,
			wantReason: "headline is Regressed"},
		{name: "Improved with the setting passes", verdict: perfexpv1alpha1.VerdictPass,
			in: GateInput{Headline: perfexpv1alpha1.ChangeImproved, FailOnRegression: true}, want: perfexpv1alpha1.VerdictPass},
		{name: "Inconclusive headline with the setting passes", verdict: perfexpv1alpha1.VerdictInconclusive,
			in: GateInput{Headline: perfexpv1alpha1.ChangeInconclusive, FailOnRegression: true}, want: perfexpv1alpha1.VerdictInconclusive},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, reasons := Gate(tt.verdict, tt.in)
			if got != tt.want {
				t.Errorf("verdict %s, want %s (reasons %q)", got, tt.want, reasons)
			}
			joined := strings.Join(reasons, "; ")
			if tt.wantReason == "" && len(reasons) > 0 || !strings.Contains(joined, tt.wantReason) {
				t.Errorf("reasons %q, want one with %q", joined, tt.wantReason)
			}
		})
	}
}

func TestApplyGateReadsTheHeadline(t *testing.T) {
	r := &result.Result{Verdict: perfexpv1alpha1.VerdictPass, Comparison: &result.Comparison{Change: perfexpv1alpha1.ChangeRegressed}}
	ApplyGate(r, GateInput{FailOnRegression: true})
	if r.Verdict != perfexpv1alpha1.VerdictFail || len(r.VerdictReasons) != 1 {
		t.Errorf("verdict %s, reasons %q", r.Verdict, r.VerdictReasons)
	}
}

func TestFailOnRegressionSetting(t *testing.T) {
	yes, no := true, false
	tests := []struct {
		a    *perfexpv1alpha1.Analysis
		def  bool
		want bool
	}{
		{nil, false, false}, {nil, true, true},
		{&perfexpv1alpha1.Analysis{}, true, true},
		{&perfexpv1alpha1.Analysis{FailOnRegression: &no}, true, false},
		{&perfexpv1alpha1.Analysis{FailOnRegression: &yes}, false, true},
	}
	for _, tt := range tests {
		if got := FailOnRegression(tt.a, tt.def); got != tt.want {
			t.Errorf("FailOnRegression(%+v, %v) = %v, want %v", tt.a, tt.def, got, tt.want)
		}
	}
}
