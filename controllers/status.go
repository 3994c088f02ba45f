package controllers

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/text"
)

// isWaiting reports whether an experiment waits in its queue (or has not yet joined it).
func isWaiting(exp *perfexpv1alpha1.PerfExperiment) bool {
	p := exp.Status.Phase
	return (p == "" || p == perfexpv1alpha1.PhasePending || p == perfexpv1alpha1.PhaseQueued) &&
		exp.DeletionTimestamp.IsZero() && !exp.Spec.Abort
}

// holdsEnvironment reports whether an experiment in this phase may have changed the environment
// or run load, so it must hold its queue's lock until it is restored.
func holdsEnvironment(p perfexpv1alpha1.Phase) bool {
	switch p {
	case perfexpv1alpha1.PhasePreparing, perfexpv1alpha1.PhaseSettingUp, perfexpv1alpha1.PhaseWarmingUp,
		perfexpv1alpha1.PhaseRunning, perfexpv1alpha1.PhaseRestoring:
		return true
	}
	return false
}

// setCondition sets a condition stamped with the experiment's generation.
func setCondition(exp *perfexpv1alpha1.PerfExperiment, typ string, status metav1.ConditionStatus, reason, format string, args ...any) {
	meta.SetStatusCondition(&exp.Status.Conditions, metav1.Condition{
		Type:               typ,
		Status:             status,
		Reason:             reason,
		Message:            text.Truncate(fmt.Sprintf(format, args...), 1024),
		ObservedGeneration: exp.Generation,
	})
}

// equalStatus reports whether the status changed during a reconcile.
func equalStatus(a, b *perfexpv1alpha1.PerfExperiment) bool {
	return equality.Semantic.DeepEqual(a.Status, b.Status)
}

// failure returns the Ready condition when the experiment is on its way to failing or aborting.
func failure(exp *perfexpv1alpha1.PerfExperiment) *metav1.Condition {
	c := meta.FindStatusCondition(exp.Status.Conditions, perfexpv1alpha1.ConditionReady)
	if c != nil && c.Status == metav1.ConditionFalse {
		return c
	}
	return nil
}

// eventType picks the event type for a phase.
func eventType(p perfexpv1alpha1.Phase) string {
	if p == perfexpv1alpha1.PhaseFailed || p == perfexpv1alpha1.PhaseAborted {
		return corev1.EventTypeWarning
	}
	return corev1.EventTypeNormal
}

// refuseSpecChange records, on an experiment that has ended, that a spec change it has not
// observed yet will not be acted on: an ended experiment does not run again, and spec.abort
// cannot undo a result. The status write that follows acknowledges the generation.
func refuseSpecChange(exp *perfexpv1alpha1.PerfExperiment) {
	if exp.Status.ObservedGeneration == 0 || exp.Generation <= exp.Status.ObservedGeneration {
		return
	}
	msg := fmt.Sprintf("the spec changed at generation %d after the experiment had ended (%s); an ended experiment does not run again: apply a new experiment to measure the change",
		exp.Generation, exp.Status.Phase)
	if exp.Spec.Abort && exp.Status.Phase == perfexpv1alpha1.PhaseSucceeded {
		msg = fmt.Sprintf("spec.abort was set at generation %d after the experiment had Succeeded; nothing was aborted and the results stand", exp.Generation)
	}
	setCondition(exp, perfexpv1alpha1.ConditionSpecChangeRefused, metav1.ConditionTrue, perfexpv1alpha1.ReasonExperimentEnded, "%s", msg)
}
