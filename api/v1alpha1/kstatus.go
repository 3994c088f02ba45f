package v1alpha1

import (
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The kstatus conditions (sigs.k8s.io/cli-utils kstatus, used by Flux's health checks and
// kpt): both are "abnormal-true", present only while True. Tools that know nothing of perfexp
// read an object as in progress while Reconciling is True, failed while Stalled is True, and
// done (Current) otherwise, once status.observedGeneration equals metadata.generation. Ready
// (above) stays the summary for people; these two are derived from the phase and verdict
// alone, by SetKStatusConditions, so they never disagree with it.
const (
	// ConditionReconciling is True while the experiment (or sweep) has not ended; its reason is
	// the phase. Absent once it ended.
	ConditionReconciling = "Reconciling"

	// ConditionStalled is True when the experiment ended without a usable result: phase Failed
	// or Aborted (reason: Ready's reason), or Succeeded with verdict Fail or Invalid (reason
	// VerdictFail, VerdictInvalid); for a sweep, phase Failed or Aborted, or Succeeded with
	// verdict Fail (an arm Regressed under failOnRegression). Absent otherwise.
	ConditionStalled = "Stalled"
)

// SetKStatusConditions sets Reconciling and Stalled from the experiment's phase and verdict.
// The reconciler calls it once, just before it writes the status.
func (e *PerfExperiment) SetKStatusConditions() {
	st := &e.Status
	phase := st.Phase
	if phase == "" {
		phase = PhasePending
	}
	stalled := ""
	switch {
	case phase == PhaseFailed || phase == PhaseAborted:
		stalled = string(phase)
		if c := meta.FindStatusCondition(st.Conditions, ConditionReady); c != nil && c.Reason != "" {
			stalled = c.Reason
		}
	case phase == PhaseSucceeded && (st.Verdict == VerdictFail || st.Verdict == VerdictInvalid):
		stalled = "Verdict" + string(st.Verdict)
	}
	setKStatus(&st.Conditions, e.Generation, !phase.IsTerminal(), string(phase), stalled, st.Message)
}

// SetKStatusConditions sets Reconciling and Stalled from the sweep's phase. The sweep
// reconciler calls it once, just before it writes the status.
func (s *PerfSweep) SetKStatusConditions() {
	st := &s.Status
	phase := st.Phase
	if phase == "" {
		phase = SweepPending
	}
	stalled := ""
	switch {
	case phase == SweepFailed || phase == SweepAborted:
		stalled = string(phase)
	case phase == SweepSucceeded && st.Verdict == VerdictFail:
		stalled = "Verdict" + string(st.Verdict)
	}
	setKStatus(&st.Conditions, s.Generation, !phase.IsTerminal(), string(phase), stalled, st.Message)
}

func setKStatus(conds *[]metav1.Condition, generation int64, reconciling bool, phase, stalledReason, message string) {
	if reconciling {
		meta.SetStatusCondition(conds, metav1.Condition{Type: ConditionReconciling, Status: metav1.ConditionTrue,
			Reason: phase, Message: "phase " + phase, ObservedGeneration: generation})
	} else {
		meta.RemoveStatusCondition(conds, ConditionReconciling)
	}
	if stalledReason != "" {
		meta.SetStatusCondition(conds, metav1.Condition{Type: ConditionStalled, Status: metav1.ConditionTrue,
			Reason: stalledReason, Message: message, ObservedGeneration: generation})
	} else {
		meta.RemoveStatusCondition(conds, ConditionStalled)
	}
}
