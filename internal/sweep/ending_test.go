package sweep_test

import (
	"testing"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/sweep"
)

// A sweep never reads Pass when it could not answer: every run failed is Invalid and a failed
// sweep; an arm without a successful run makes it Inconclusive; a regression fails it only
// when regressions fail.
func TestEndingOf(t *testing.T) {
	arm := func(name string, runs, ok int32, change perfexpv1alpha1.Change) perfexpv1alpha1.SweepArmStatus {
		return perfexpv1alpha1.SweepArmStatus{Name: name, Runs: runs, Succeeded: ok, Failed: runs - ok, Change: change}
	}
	tests := []struct {
		name       string
		arms       []perfexpv1alpha1.SweepArmStatus
		failOnReg  bool
		want       perfexpv1alpha1.Verdict
		wantFailed bool
	}{
		{"all good", []perfexpv1alpha1.SweepArmStatus{arm("baseline", 2, 2, ""), arm("a", 2, 2, perfexpv1alpha1.ChangeNoMeaningfulChange)}, true, perfexpv1alpha1.VerdictPass, false},
		{"every run failed", []perfexpv1alpha1.SweepArmStatus{arm("baseline", 2, 0, ""), arm("a", 2, 0, "")}, true, perfexpv1alpha1.VerdictInvalid, true},
		{"the baseline never ran well", []perfexpv1alpha1.SweepArmStatus{arm("baseline", 2, 0, ""), arm("a", 2, 2, "")}, false, perfexpv1alpha1.VerdictInconclusive, false},
		{"one arm never ran well", []perfexpv1alpha1.SweepArmStatus{arm("baseline", 2, 2, ""), arm("a", 2, 2, perfexpv1alpha1.ChangeImproved), arm("b", 2, 0, "")}, false, perfexpv1alpha1.VerdictInconclusive, false},
		{"a regression that fails", []perfexpv1alpha1.SweepArmStatus{arm("baseline", 2, 2, ""), arm("a", 2, 2, perfexpv1alpha1.ChangeRegressed), arm("b", 2, 0, "")}, true, perfexpv1alpha1.VerdictFail, false},
		{"a regression that does not fail", []perfexpv1alpha1.SweepArmStatus{arm("baseline", 2, 2, ""), arm("a", 2, 2, perfexpv1alpha1.ChangeRegressed)}, false, perfexpv1alpha1.VerdictPass, false},
		{"some runs failed, every arm answered", []perfexpv1alpha1.SweepArmStatus{arm("baseline", 3, 2, ""), arm("a", 3, 1, perfexpv1alpha1.ChangeNoMeaningfulChange)}, true, perfexpv1alpha1.VerdictPass, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := sweep.EndingOf(tt.arms, tt.failOnReg)
			if got.Verdict != tt.want || got.Failed != tt.wantFailed {
				t.Errorf("EndingOf = %+v, want verdict %s, failed %v", got, tt.want, tt.wantFailed)
			}
			if (got.Verdict == perfexpv1alpha1.VerdictPass || got.Verdict == perfexpv1alpha1.VerdictFail) != (got.Problem == "") {
				t.Errorf("problem %q with verdict %s", got.Problem, got.Verdict)
			}
		})
	}
}
