package controllers

import (
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
)

func TestVerdictWhy(t *testing.T) {
	withCondition := func(typ string, status metav1.ConditionStatus, msg string) func(*perfexpv1alpha1.PerfExperiment) {
		return func(e *perfexpv1alpha1.PerfExperiment) {
			meta.SetStatusCondition(&e.Status.Conditions, metav1.Condition{Type: typ, Status: status, Reason: "R", Message: msg})
		}
	}
	regressed := func(e *perfexpv1alpha1.PerfExperiment) {
		e.Status.Comparison = &perfexpv1alpha1.Comparison{Change: perfexpv1alpha1.ChangeRegressed}
	}
	tests := []struct {
		name    string
		verdict perfexpv1alpha1.Verdict
		mutate  []func(*perfexpv1alpha1.PerfExperiment)
		want    string
	}{
		{"Pass says nothing more", perfexpv1alpha1.VerdictPass, []func(*perfexpv1alpha1.PerfExperiment){regressed}, ""},
		{"a crossed threshold", perfexpv1alpha1.VerdictFail, []func(*perfexpv1alpha1.PerfExperiment){
			withCondition(perfexpv1alpha1.ConditionThresholdsCrossed, metav1.ConditionTrue, "k6 thresholds crossed: http_req_duration p(95)<500; the verdict is Fail"),
			withCondition(perfexpv1alpha1.ConditionObjectivesMet, metav1.ConditionTrue, "all 2 objectives met"),
		}, ": k6 thresholds crossed: http_req_duration p(95)<500"},
		{"a missed objective and a regression", perfexpv1alpha1.VerdictFail, []func(*perfexpv1alpha1.PerfExperiment){
			withCondition(perfexpv1alpha1.ConditionObjectivesMet, metav1.ConditionFalse, "1 of 2 objectives missed: errors: 2 % > 1 %"), regressed,
		}, ": 1 of 2 objectives missed: errors: 2 % > 1 %; the comparison with the baseline Regressed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := &perfexpv1alpha1.PerfExperiment{}
			e.Status.Verdict = tt.verdict
			for _, m := range tt.mutate {
				m(e)
			}
			if got := verdictWhy(e); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}
