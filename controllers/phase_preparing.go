package controllers

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
)

// reconcilePreparing applies the variant and waits for the rollouts, within the rollout timeout.
func (r *PerfExperimentReconciler) reconcilePreparing(ctx context.Context, s *scope) (ctrl.Result, error) {
	exp := s.exp
	res, err := r.Environment.Prepare(ctx, exp)
	if res.Failure != nil {
		setCondition(exp, perfexpv1alpha1.ConditionEnvironmentReady, metav1.ConditionFalse, res.Failure.Reason, "%s", res.Failure.Message)
	} else if !res.Done && err == nil {
		setCondition(exp, perfexpv1alpha1.ConditionEnvironmentReady, metav1.ConditionFalse, perfexpv1alpha1.ReasonRollingOut, "waiting for %s", orSomething(res.Waiting))
	}
	deadline := phaseStart(s).Add(timeouts(exp).Rollout)
	return r.advance(ctx, s, res, err, deadline, perfexpv1alpha1.ReasonRolloutTimedOut, func() {
		setCondition(exp, perfexpv1alpha1.ConditionEnvironmentReady, metav1.ConditionTrue, perfexpv1alpha1.ReasonRolledOut, "the variant is applied and every rollout finished")
		switch {
		case exp.Spec.Setup != nil:
			r.enter(s, perfexpv1alpha1.PhaseSettingUp, "the environment is ready; running setup")
		case exp.Spec.Load.WarmUp != nil:
			r.enter(s, perfexpv1alpha1.PhaseWarmingUp, "the environment is ready; warming up")
		default:
			r.enter(s, perfexpv1alpha1.PhaseRunning, "the environment is ready; running load")
		}
	})
}
