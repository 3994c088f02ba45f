package controllers

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/step"
	"github.com/perfexp/perfexp/internal/text"
)

// restoreRetry is how long to wait before trying again to restore after a problem.
const restoreRetry = 15 * time.Second

// reconcileRestoring stops any load, puts the environment back and releases the queue. It
// runs on every path (success, failure, abort) and never gives up: the queue stays locked
// until the environment is really back, so no other experiment runs on a half-restored one.
func (r *PerfExperimentReconciler) reconcileRestoring(ctx context.Context, s *scope) (ctrl.Result, error) {
	exp := s.exp
	done, res, err := r.restore(ctx, s)
	if err != nil || !done {
		return res, err
	}
	if err := r.releaseLocks(ctx, exp); err != nil {
		return ctrl.Result{}, err
	}
	if failure(exp) != nil {
		r.finish(s)
		return ctrl.Result{}, nil
	}
	r.enter(s, perfexpv1alpha1.PhaseAnalyzing, "the environment is restored; analysing results")
	return ctrl.Result{}, nil
}

// restore stops load and restores the environment, reporting whether both are done. It is
// shared by Restoring and by deletion.
func (r *PerfExperimentReconciler) restore(ctx context.Context, s *scope) (bool, ctrl.Result, error) {
	exp := s.exp
	stopped, err := r.Load.Stop(ctx, exp)
	if err != nil {
		return false, ctrl.Result{}, err
	}
	if !stopped.Done {
		setCondition(exp, perfexpv1alpha1.ConditionEnvironmentRestored, metav1.ConditionFalse, perfexpv1alpha1.ReasonRestoring, "stopping load: %s", orSomething(stopped.Waiting))
		return false, ctrl.Result{RequeueAfter: orDefault(stopped.RequeueAfter)}, nil
	}
	res, err := r.Environment.Restore(ctx, exp)
	if err != nil {
		setCondition(exp, perfexpv1alpha1.ConditionEnvironmentRestored, metav1.ConditionFalse, perfexpv1alpha1.ReasonRestoring, "restoring failed, will retry: %v", err)
		return false, ctrl.Result{}, err
	}
	if res.Failure != nil {
		// Restoring never gives up; a failure here is reported and retried.
		log.FromContext(ctx).Info("Restoring met a problem; retrying", "reason", res.Failure.Reason, "message", res.Failure.Message)
		setCondition(exp, perfexpv1alpha1.ConditionEnvironmentRestored, metav1.ConditionFalse, res.Failure.Reason, "restoring failed, will retry: %s", res.Failure.Message)
		return false, ctrl.Result{RequeueAfter: restoreRetry}, nil
	}
	if !res.Done {
		setCondition(exp, perfexpv1alpha1.ConditionEnvironmentRestored, metav1.ConditionFalse, perfexpv1alpha1.ReasonRestoring, "waiting for %s", orSomething(res.Waiting))
		return false, ctrl.Result{RequeueAfter: orDefault(res.RequeueAfter)}, nil
	}
	if res.Waiting != "" {
		// Every field is back, but a rollout did not finish within the restore bound: the
		// queue is released and the condition names what is still not healthy.
		setCondition(exp, perfexpv1alpha1.ConditionEnvironmentRestored, metav1.ConditionTrue, perfexpv1alpha1.ReasonRestoredNotHealthy, "%s", res.Waiting)
	} else {
		setCondition(exp, perfexpv1alpha1.ConditionEnvironmentRestored, metav1.ConditionTrue, perfexpv1alpha1.ReasonRestored, "every touched object is back as it was")
	}
	return r.tearDown(ctx, s)
}

// TearDowner runs spec.teardown (internal/load). A LoadRunner without it cannot run teardowns.
type TearDowner interface {
	// Teardown runs the teardown Job; Done once it succeeded, a Failure once it failed.
	Teardown(ctx context.Context, exp *perfexpv1alpha1.PerfExperiment) (step.Result, error)
	// StopTeardown stops the teardown Job after its timeout, without waiting.
	StopTeardown(ctx context.Context, exp *perfexpv1alpha1.PerfExperiment) error
}

// teardownRecheck is how often a running teardown Job is looked at.
const teardownRecheck = 5 * time.Second

// tearDown runs spec.teardown once the workloads are back, so it can never keep them from being
// restored, and before the queue is released, so the next experiment finds the data reset. It
// runs only when setup or load may have begun (the experiment reached SettingUp, WarmingUp or
// Running). It reports whether it has ended: succeeded, failed or timed out, as the TornDown
// condition says; an ended teardown is never run again.
func (r *PerfExperimentReconciler) tearDown(ctx context.Context, s *scope) (bool, ctrl.Result, error) {
	exp := s.exp
	td, ok := r.Load.(TearDowner)
	if exp.Spec.Teardown == nil || !ok || !loadMayHaveBegun(exp) {
		return true, ctrl.Result{}, nil
	}
	cond := meta.FindStatusCondition(exp.Status.Conditions, perfexpv1alpha1.ConditionTornDown)
	if cond != nil && cond.Reason != perfexpv1alpha1.ReasonTearingDown {
		return true, ctrl.Result{}, nil
	}
	if cond == nil {
		meta.SetStatusCondition(&exp.Status.Conditions, metav1.Condition{Type: perfexpv1alpha1.ConditionTornDown, Status: metav1.ConditionFalse,
			Reason: perfexpv1alpha1.ReasonTearingDown, Message: "starting the teardown Job", ObservedGeneration: exp.Generation,
			LastTransitionTime: metav1.NewTime(s.now)})
		cond = meta.FindStatusCondition(exp.Status.Conditions, perfexpv1alpha1.ConditionTornDown)
	}
	limit := timeouts(exp).Teardown
	if s.now.Sub(cond.LastTransitionTime.Time) > limit {
		if err := td.StopTeardown(ctx, exp); err != nil {
			return false, ctrl.Result{}, err
		}
		setCondition(exp, perfexpv1alpha1.ConditionTornDown, metav1.ConditionFalse, perfexpv1alpha1.ReasonTeardownTimedOut,
			"the teardown Job did not finish within timeouts.teardown (%s) and was stopped; the data may not be reset", limit)
		r.Recorder.Eventf(exp, nil, corev1.EventTypeWarning, perfexpv1alpha1.ReasonTeardownTimedOut, "Teardown", "the teardown Job did not finish within %s", limit)
		return true, ctrl.Result{}, nil
	}
	res, err := td.Teardown(ctx, exp)
	switch {
	case err != nil:
		return false, ctrl.Result{}, err
	case res.Failure != nil:
		setCondition(exp, perfexpv1alpha1.ConditionTornDown, metav1.ConditionFalse, perfexpv1alpha1.ReasonTeardownFailed, "%s", res.Failure.Message)
		r.Recorder.Eventf(exp, nil, corev1.EventTypeWarning, perfexpv1alpha1.ReasonTeardownFailed, "Teardown", "%s", text.Truncate(res.Failure.Message, 512))
		return true, ctrl.Result{}, nil
	case !res.Done:
		setCondition(exp, perfexpv1alpha1.ConditionTornDown, metav1.ConditionFalse, perfexpv1alpha1.ReasonTearingDown, "waiting for %s", orSomething(res.Waiting))
		after := res.RequeueAfter
		if after <= 0 || after > teardownRecheck {
			after = teardownRecheck
		}
		return false, ctrl.Result{RequeueAfter: after}, nil
	}
	setCondition(exp, perfexpv1alpha1.ConditionTornDown, metav1.ConditionTrue, perfexpv1alpha1.ReasonTornDown, "the teardown Job succeeded")
	return true, ctrl.Result{}, nil
}

// loadMayHaveBegun reports whether the experiment got as far as its setup or load, after which
// its data may have changed.
func loadMayHaveBegun(exp *perfexpv1alpha1.PerfExperiment) bool {
	for _, h := range exp.Status.PhaseHistory {
		switch h.Phase {
		case perfexpv1alpha1.PhaseSettingUp, perfexpv1alpha1.PhaseWarmingUp, perfexpv1alpha1.PhaseRunning:
			return true
		}
	}
	return false
}
