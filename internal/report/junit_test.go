package report

import (
	"encoding/xml"
	"strings"
	"testing"
	"time"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/result"
)

func TestJUnit(t *testing.T) {
	v := func(f float64) *float64 { return &f }
	r := &result.Result{
		Experiment: "release-42", Namespace: "perf", Verdict: perfexpv1alpha1.VerdictFail, Validity: perfexpv1alpha1.Valid,
		Window:         result.WindowInfo{Start: time.Date(2026, 11, 25, 1, 0, 0, 0, time.UTC), MeasuredSeconds: 600},
		VerdictReasons: []string{"k6 threshold crossed: http_req_duration p(95)<500 (scenario browse)"},
		Objectives: []result.ObjectiveResult{
			{Name: "p95 under 800 ms", Outcome: perfexpv1alpha1.ObjectiveMet, Message: "p95 612 ms <= 800 ms"},
			{Name: "errors under 1 %", Outcome: perfexpv1alpha1.ObjectiveMissed, Message: "error rate 2.5 % > 1 %"},
			{Name: "p95 within 10 % of the baseline", Outcome: perfexpv1alpha1.ObjectiveUnknown, Message: "the interval straddles the bound"},
		},
		Thresholds: []result.ThresholdResult{
			{Metric: "http_req_duration", Expression: "p(95)<500", Crossed: true, Scenarios: []string{"browse"}},
			{Metric: "http_req_failed", Expression: "rate<0.05"},
		},
		Comparison: &result.Comparison{Baseline: "release-41", Change: perfexpv1alpha1.ChangeRegressed, Metrics: []result.MetricComparison{
			{Metric: "browse p95", Primary: true, Change: perfexpv1alpha1.ChangeRegressed, Estimate: v(12.5), Low: v(8.1), High: v(17.0)},
			{Metric: "browse error rate", Primary: true, Change: perfexpv1alpha1.ChangeInconclusive, Why: "the interval straddles ±δ"},
			{Metric: "browse p99", Change: perfexpv1alpha1.ChangeRegressed},
		}},
	}
	out, err := JUnit(r)
	if err != nil {
		t.Fatal(err)
	}
	var doc junitSuites
	if err := xml.Unmarshal(out, &doc); err != nil {
		t.Fatalf("not XML: %v\n%s", err, out)
	}
	if len(doc.Suites) != 1 || doc.Tests != 8 || doc.Failures != 4 || doc.Skipped != 2 {
		t.Fatalf("tests %d failures %d skipped %d, want 8 (verdict, 3 objectives, 2 thresholds, 2 primary rows), 4, 2:\n%s", doc.Tests, doc.Failures, doc.Skipped, out)
	}
	s := doc.Suites[0]
	if s.Name != "perf/release-42" || s.Time != "600.000" || s.Timestamp != "2026-11-25T01:00:00" {
		t.Errorf("suite %+v", s)
	}
	cases := map[string]junitCase{}
	for _, c := range s.Cases {
		cases[c.Classname+"/"+c.Name] = c
	}
	for key, want := range map[string]string{
		"perfexp.release-42/verdict":                                "k6 threshold crossed: http_req_duration p(95)<500",
		"perfexp.release-42.objectives/errors under 1 %":            "objective missed: error rate 2.5 % > 1 %",
		"perfexp.release-42.thresholds/http_req_duration p(95)<500": "k6 threshold crossed in scenario browse",
		"perfexp.release-42.comparison/browse p95":                  "Regressed against release-41: +12.5 % [+8.1, +17.0]",
	} {
		c, ok := cases[key]
		if !ok || c.Failure == nil || !strings.Contains(c.Failure.Message+c.Failure.Text, want) {
			t.Errorf("%s: %+v, want a failure with %q", key, c, want)
		}
	}
	for _, key := range []string{"perfexp.release-42.objectives/p95 under 800 ms", "perfexp.release-42.thresholds/http_req_failed rate<0.05"} {
		if c, ok := cases[key]; !ok || c.Failure != nil || c.Skipped != nil {
			t.Errorf("%s: %+v, want a pass", key, c)
		}
	}
	if _, ok := cases["perfexp.release-42.comparison/browse p99"]; ok {
		t.Error("a secondary comparison row is a test case")
	}
	if !strings.HasPrefix(string(out), xml.Header) {
		t.Error("no XML header")
	}
}
