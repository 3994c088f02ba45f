package controllers

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/load"
)

// reconcilePending gives a new experiment its test ID and queue and puts it in the queue, at
// its place.
//
// The place goes into the same status write as the phase: written apart, the write that
// followed (Queued's first reconcile) doubled the cost of joining, 2,000 status writes for a
// burst of 1,000 applies. The event still says what the transition did; the status says where
// the experiment waits, as Queued's reconciles keep it. Taking the lock stays Queued's: the
// head is seen Queued before it runs, and the baseline and precheck rules live there.
func (r *PerfExperimentReconciler) reconcilePending(ctx context.Context, s *scope) (ctrl.Result, error) {
	exp := s.exp
	exp.Status.Queue = exp.QueueName()
	exp.Status.TestID = exp.TestID()
	if si, ok := r.Load.(ScriptInspector); ok {
		res, err := si.Inspect(ctx, exp)
		switch {
		case err != nil:
			return ctrl.Result{}, err
		case res.Failure != nil:
			r.fail(s, res.Failure.Reason, "%s", res.Failure.Message)
			return ctrl.Result{}, nil
		case !res.Done:
			setCondition(exp, perfexpv1alpha1.ConditionReady, metav1.ConditionUnknown, perfexpv1alpha1.ReasonInProgress, "waiting for %s", res.Waiting)
			return ctrl.Result{RequeueAfter: res.RequeueAfter}, nil
		}
	}
	if problem := r.overallTimeoutProblem(exp); problem != "" {
		r.fail(s, perfexpv1alpha1.ReasonInvalidTimeouts, "%s", problem)
		return ctrl.Result{}, nil
	}
	if problem, err := r.queueProblem(ctx, exp); err != nil || problem != "" {
		if err != nil {
			return ctrl.Result{}, err
		}
		r.fail(s, perfexpv1alpha1.ReasonQueueNotAllowed, "%s", problem)
		return ctrl.Result{}, nil
	}
	p, err := r.placeInQueue(ctx, exp)
	if err != nil {
		return ctrl.Result{}, err
	}
	setCondition(exp, perfexpv1alpha1.ConditionReady, metav1.ConditionUnknown, perfexpv1alpha1.ReasonInProgress, "the experiment is in progress")
	setCondition(exp, perfexpv1alpha1.ConditionQueued, metav1.ConditionTrue, perfexpv1alpha1.ReasonWaitingForQueue, "waiting in queue %s", exp.Status.Queue)
	msg := "waiting in queue " + exp.Status.Queue
	if found := load.InspectionSummary(exp); found != "" {
		msg += "; " + found
	}
	r.enter(s, perfexpv1alpha1.PhaseQueued, "%s", msg)
	if p.position > 0 {
		showWaiting(exp, p)
	}
	return ctrl.Result{}, nil
}
