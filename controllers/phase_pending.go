package controllers

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
)

// reconcilePending gives a new experiment its test ID and queue and puts it in the queue.
func (r *PerfExperimentReconciler) reconcilePending(_ context.Context, s *scope) (ctrl.Result, error) {
	exp := s.exp
	exp.Status.Queue = QueueName(exp)
	exp.Status.TestID = TestID(exp)
	setCondition(exp, perfexpv1alpha1.ConditionReady, metav1.ConditionUnknown, perfexpv1alpha1.ReasonInProgress, "the experiment is in progress")
	setCondition(exp, perfexpv1alpha1.ConditionQueued, metav1.ConditionTrue, perfexpv1alpha1.ReasonWaitingForQueue, "waiting in queue %s", exp.Status.Queue)
	r.enter(s, perfexpv1alpha1.PhaseQueued, "waiting in queue %s", exp.Status.Queue)
	return ctrl.Result{}, nil
}
