package judge

import (
	"testing"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/result"
)

func TestObjectivesAndVerdict(t *testing.T) {
	q := func(s string) *resource.Quantity { v := resource.MustParse(s); return &v }
	pct := func(v int32) *int32 { return &v }
	// withComparison gives the p95 row a change of delta % with the interval [low, high].
	withComparison := func(r *result.Result, delta, low, high float64) *result.Result {
		r.Comparison = &result.Comparison{Baseline: "b", Metrics: []result.MetricComparison{{Kind: perfexpv1alpha1.MetricP95, Scenario: "s", Value: ptr(1), Baseline: ptr(1),
			DeltaPercent: &delta, Estimate: &delta, Low: &low, High: &high, Scale: result.ScalePercent, PValue: ptr(0.2)},
			{Kind: perfexpv1alpha1.MetricQuery, Metric: "query q", Value: ptr(1), Baseline: ptr(1), DeltaPercent: &delta, Change: perfexpv1alpha1.ChangeUnknown}}}
		return r
	}
	tests := []struct {
		name    string
		r       *result.Result
		obj     perfexpv1alpha1.Objective
		outcome perfexpv1alpha1.ObjectiveOutcome
		verdict perfexpv1alpha1.Verdict
	}{
		{"p95 under its max", oneScenario(400, 0), perfexpv1alpha1.Objective{Metric: perfexpv1alpha1.MetricP95, Scenario: "s", Max: q("500")}, perfexpv1alpha1.ObjectiveMet, perfexpv1alpha1.VerdictPass},
		{"p95 over its max", oneScenario(600, 0), perfexpv1alpha1.Objective{Metric: perfexpv1alpha1.MetricP95, Max: q("500")}, perfexpv1alpha1.ObjectiveMissed, perfexpv1alpha1.VerdictFail},
		{"error rate in percent", oneScenario(1, 1.5), perfexpv1alpha1.Objective{Metric: perfexpv1alpha1.MetricErrorRate, Max: q("1")}, perfexpv1alpha1.ObjectiveMissed, perfexpv1alpha1.VerdictFail},
		{"a decimal bound", oneScenario(1, 0.4), perfexpv1alpha1.Objective{Metric: perfexpv1alpha1.MetricErrorRate, Max: q("0.5")}, perfexpv1alpha1.ObjectiveMet, perfexpv1alpha1.VerdictPass},
		{"query under its min", oneScenario(1, 0), perfexpv1alpha1.Objective{Metric: perfexpv1alpha1.MetricQuery, Query: "q", Min: q("4")}, perfexpv1alpha1.ObjectiveMissed, perfexpv1alpha1.VerdictFail},
		{"no data is unknown", oneScenario(1, 0), perfexpv1alpha1.Objective{Metric: perfexpv1alpha1.MetricP99, Max: q("4")}, perfexpv1alpha1.ObjectiveUnknown, perfexpv1alpha1.VerdictInconclusive},
		{"unknown request", oneScenario(1, 0), perfexpv1alpha1.Objective{Metric: perfexpv1alpha1.MetricP95, Scenario: "s", Request: "nope", Max: q("4")}, perfexpv1alpha1.ObjectiveUnknown, perfexpv1alpha1.VerdictInconclusive},
		{"relative: interval wholly above the bound is missed", withComparison(oneScenario(1, 0), 30, 20, 40), perfexpv1alpha1.Objective{Metric: perfexpv1alpha1.MetricP95, Scenario: "s", MaxIncreasePercent: pct(10)}, perfexpv1alpha1.ObjectiveMissed, perfexpv1alpha1.VerdictFail},
		{"relative: interval straddling the bound is unknown", withComparison(oneScenario(1, 0), 30, -5, 65), perfexpv1alpha1.Objective{Metric: perfexpv1alpha1.MetricP95, Scenario: "s", MaxIncreasePercent: pct(10)}, perfexpv1alpha1.ObjectiveUnknown, perfexpv1alpha1.VerdictInconclusive},
		{"relative: interval wholly within the bound is met", withComparison(oneScenario(1, 0), 5, 1, 9), perfexpv1alpha1.Objective{Metric: perfexpv1alpha1.MetricP95, Scenario: "s", MaxIncreasePercent: pct(10)}, perfexpv1alpha1.ObjectiveMet, perfexpv1alpha1.VerdictPass},
		{"relative: a decrease beyond the bound is missed", withComparison(oneScenario(1, 0), -30, -40, -21), perfexpv1alpha1.Objective{Metric: perfexpv1alpha1.MetricP95, Scenario: "s", MaxDecreasePercent: pct(20)}, perfexpv1alpha1.ObjectiveMissed, perfexpv1alpha1.VerdictFail},
		{"relative: query judged on the delta alone", withComparison(oneScenario(1, 0), -30, 0, 0), perfexpv1alpha1.Objective{Metric: perfexpv1alpha1.MetricQuery, Query: "q", MaxDecreasePercent: pct(20)}, perfexpv1alpha1.ObjectiveMissed, perfexpv1alpha1.VerdictFail},
		{"relative without a usable baseline", func() *result.Result {
			r := oneScenario(1, 0)
			r.Comparison = &result.Comparison{Baseline: "b", Message: "baseline b not found"}
			return r
		}(), perfexpv1alpha1.Objective{Metric: perfexpv1alpha1.MetricP95, MaxIncreasePercent: pct(10)}, perfexpv1alpha1.ObjectiveUnknown, perfexpv1alpha1.VerdictInconclusive},
		{"invalid results are Invalid whatever the objectives", func() *result.Result { r := oneScenario(1, 0); MarkInvalid(r, "too many errors"); return r }(),
			perfexpv1alpha1.Objective{Metric: perfexpv1alpha1.MetricP95, Max: q("500")}, perfexpv1alpha1.ObjectiveMet, perfexpv1alpha1.VerdictInvalid},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.r.Objectives = Objectives(tc.r, []perfexpv1alpha1.Objective{tc.obj})
			if got := tc.r.Objectives[0]; got.Outcome != tc.outcome {
				t.Errorf("outcome = %s (%s), want %s", got.Outcome, got.Message, tc.outcome)
			}
			if got := Verdict(tc.r); got != tc.verdict {
				t.Errorf("verdict = %s, want %s", got, tc.verdict)
			}
			status, reason, _ := ObjectivesCondition(tc.r)
			want := map[perfexpv1alpha1.Verdict]metav1.ConditionStatus{perfexpv1alpha1.VerdictPass: metav1.ConditionTrue, perfexpv1alpha1.VerdictFail: metav1.ConditionFalse,
				perfexpv1alpha1.VerdictInconclusive: metav1.ConditionUnknown, perfexpv1alpha1.VerdictInvalid: metav1.ConditionUnknown}[tc.verdict]
			if status != want {
				t.Errorf("ObjectivesMet = %s (%s), want %s", status, reason, want)
			}
		})
	}
}

func TestObjectiveName(t *testing.T) {
	q := resource.MustParse("500")
	inc := int32(10)
	tests := []struct {
		o    perfexpv1alpha1.Objective
		want string
	}{
		{perfexpv1alpha1.Objective{Name: "mine", Metric: perfexpv1alpha1.MetricP95}, "mine"},
		{perfexpv1alpha1.Objective{Metric: perfexpv1alpha1.MetricP95, Scenario: "s", Request: "r", Max: &q}, "s/r P95 <= 500 ms"},
		{perfexpv1alpha1.Objective{Metric: perfexpv1alpha1.MetricErrorRate, Max: &q, MaxIncreasePercent: &inc}, "all scenarios ErrorRate <= 500%, at most +10% vs baseline"},
	}
	for _, tc := range tests {
		if got := ObjectiveName(tc.o); got != tc.want {
			t.Errorf("name = %q, want %q", got, tc.want)
		}
	}
}
