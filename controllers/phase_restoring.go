package controllers

import (
	"context"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
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
	if err := r.Lock.Release(ctx, QueueName(exp), exp.UID); err != nil {
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
		return true, ctrl.Result{}, nil
	}
	setCondition(exp, perfexpv1alpha1.ConditionEnvironmentRestored, metav1.ConditionTrue, perfexpv1alpha1.ReasonRestored, "every touched object is back as it was")
	return true, ctrl.Result{}, nil
}
