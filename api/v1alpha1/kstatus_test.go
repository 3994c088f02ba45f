package v1alpha1_test

import (
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
)

// kstatusOf reads conditions the way kstatus reads a custom resource it has no rules for
// (sigs.k8s.io/cli-utils/pkg/kstatus/status, generic conditions; Flux's health checks): a
// status behind the generation is InProgress, Reconciling=True is InProgress, Stalled=True is
// Failed, anything else is Current.
func kstatusOf(generation, observed int64, conds []metav1.Condition) string {
	switch {
	case observed != generation:
		return "InProgress"
	case meta.IsStatusConditionTrue(conds, perfexpv1alpha1.ConditionStalled):
		return "Failed"
	case meta.IsStatusConditionTrue(conds, perfexpv1alpha1.ConditionReconciling):
		return "InProgress"
	}
	return "Current"
}

// Every phase and verdict of an experiment reads as what it is to a tool that only knows the
// kstatus conventions, and every condition the setter writes carries the observed generation.
func TestExperimentKStatus(t *testing.T) {
	tests := []struct {
		phase       perfexpv1alpha1.Phase
		verdict     perfexpv1alpha1.Verdict
		readyReason string
		want        string
		wantStalled string
	}{
		{phase: "", want: "InProgress"},
		{phase: perfexpv1alpha1.PhasePending, want: "InProgress"},
		{phase: perfexpv1alpha1.PhaseQueued, want: "InProgress"},
		{phase: perfexpv1alpha1.PhasePreparing, want: "InProgress"},
		{phase: perfexpv1alpha1.PhaseSettingUp, want: "InProgress"},
		{phase: perfexpv1alpha1.PhaseWarmingUp, want: "InProgress"},
		{phase: perfexpv1alpha1.PhaseRunning, want: "InProgress"},
		{phase: perfexpv1alpha1.PhaseRestoring, want: "InProgress"},
		{phase: perfexpv1alpha1.PhaseAnalyzing, want: "InProgress"},
		{phase: perfexpv1alpha1.PhaseSucceeded, verdict: perfexpv1alpha1.VerdictPass, want: "Current"},
		{phase: perfexpv1alpha1.PhaseSucceeded, verdict: perfexpv1alpha1.VerdictInconclusive, want: "Current"},
		{phase: perfexpv1alpha1.PhaseSucceeded, want: "Current"},
		{phase: perfexpv1alpha1.PhaseSucceeded, verdict: perfexpv1alpha1.VerdictFail, want: "Failed", wantStalled: "VerdictFail"},
		{phase: perfexpv1alpha1.PhaseSucceeded, verdict: perfexpv1alpha1.VerdictInvalid, want: "Failed", wantStalled: "VerdictInvalid"},
		{phase: perfexpv1alpha1.PhaseFailed, readyReason: perfexpv1alpha1.ReasonRolloutFailed, want: "Failed", wantStalled: perfexpv1alpha1.ReasonRolloutFailed},
		{phase: perfexpv1alpha1.PhaseAborted, readyReason: perfexpv1alpha1.ReasonAborted, want: "Failed", wantStalled: perfexpv1alpha1.ReasonAborted},
	}
	for _, tt := range tests {
		t.Run(string(tt.phase)+"/"+string(tt.verdict), func(t *testing.T) {
			e := &perfexpv1alpha1.PerfExperiment{ObjectMeta: metav1.ObjectMeta{Generation: 3}}
			e.Status.ObservedGeneration = 3
			// A run that was in progress before: the setter must also clear what no longer holds.
			e.Status.Phase = perfexpv1alpha1.PhaseRunning
			e.SetKStatusConditions()
			e.Status.Phase, e.Status.Verdict, e.Status.Message = tt.phase, tt.verdict, "msg"
			if tt.readyReason != "" {
				meta.SetStatusCondition(&e.Status.Conditions, metav1.Condition{Type: perfexpv1alpha1.ConditionReady,
					Status: metav1.ConditionFalse, Reason: tt.readyReason, ObservedGeneration: 3})
			}
			e.SetKStatusConditions()

			if got := kstatusOf(e.Generation, e.Status.ObservedGeneration, e.Status.Conditions); got != tt.want {
				t.Errorf("kstatus %s, want %s (conditions %+v)", got, tt.want, e.Status.Conditions)
			}
			stalled := meta.FindStatusCondition(e.Status.Conditions, perfexpv1alpha1.ConditionStalled)
			if (stalled != nil) != (tt.wantStalled != "") || (stalled != nil && stalled.Reason != tt.wantStalled) {
				t.Errorf("Stalled %+v, want reason %q", stalled, tt.wantStalled)
			}
			for _, c := range e.Status.Conditions {
				if c.ObservedGeneration != e.Generation {
					t.Errorf("condition %s has observedGeneration %d, want %d", c.Type, c.ObservedGeneration, e.Generation)
				}
				if c.Status != metav1.ConditionTrue && (c.Type == perfexpv1alpha1.ConditionReconciling || c.Type == perfexpv1alpha1.ConditionStalled) {
					t.Errorf("%s is abnormal-true and must be absent rather than %s", c.Type, c.Status)
				}
			}
			// A spec change the operator has not seen yet reads as in progress whatever the phase.
			if got := kstatusOf(e.Generation+1, e.Status.ObservedGeneration, e.Status.Conditions); got != "InProgress" {
				t.Errorf("with a newer generation kstatus is %s", got)
			}
		})
	}
}

func TestSweepKStatus(t *testing.T) {
	tests := []struct {
		phase perfexpv1alpha1.SweepPhase
		want  string
	}{
		{"", "InProgress"}, {perfexpv1alpha1.SweepPending, "InProgress"}, {perfexpv1alpha1.SweepRunning, "InProgress"},
		{perfexpv1alpha1.SweepSucceeded, "Current"}, {perfexpv1alpha1.SweepFailed, "Failed"}, {perfexpv1alpha1.SweepAborted, "Failed"},
	}
	for _, tt := range tests {
		t.Run(string(tt.phase), func(t *testing.T) {
			s := &perfexpv1alpha1.PerfSweep{ObjectMeta: metav1.ObjectMeta{Generation: 2}}
			s.Status.ObservedGeneration = 2
			s.Status.Phase = perfexpv1alpha1.SweepRunning
			s.SetKStatusConditions()
			s.Status.Phase = tt.phase
			s.SetKStatusConditions()
			if got := kstatusOf(s.Generation, s.Status.ObservedGeneration, s.Status.Conditions); got != tt.want {
				t.Errorf("kstatus %s, want %s (conditions %+v)", got, tt.want, s.Status.Conditions)
			}
		})
	}
}

func TestSweepKStatusVerdictFail(t *testing.T) {
	s := &perfexpv1alpha1.PerfSweep{ObjectMeta: metav1.ObjectMeta{Generation: 1}}
	s.Status.ObservedGeneration = 1
	s.Status.Phase, s.Status.Verdict = perfexpv1alpha1.SweepSucceeded, perfexpv1alpha1.VerdictFail
	s.SetKStatusConditions()
	if got := kstatusOf(s.Generation, s.Status.ObservedGeneration, s.Status.Conditions); got != "Failed" {
		t.Errorf("a Succeeded sweep with verdict Fail reads %s in kstatus, want Failed", got)
	}
}
