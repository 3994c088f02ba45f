package controllers

import (
	"context"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/step"
)

// reconcilePreparing applies the variant and waits for the rollouts, within the rollout
// timeout, then leaves the environment alone for spec.settle.
func (r *PerfExperimentReconciler) reconcilePreparing(ctx context.Context, s *scope) (ctrl.Result, error) {
	exp := s.exp
	res, err := r.Environment.Prepare(ctx, exp)
	settle := settleOf(exp)
	switch {
	case err != nil:
	case res.Failure != nil:
		setCondition(exp, perfexpv1alpha1.ConditionEnvironmentReady, metav1.ConditionFalse, res.Failure.Reason, "%s", res.Failure.Message)
	case !res.Done:
		setCondition(exp, perfexpv1alpha1.ConditionEnvironmentReady, metav1.ConditionFalse, perfexpv1alpha1.ReasonRollingOut, "waiting for %s", orSomething(res.Waiting))
	default:
		if left := settleLeft(settle, settleSince(exp, phaseStart(s)), s.now); left > 0 {
			setCondition(exp, perfexpv1alpha1.ConditionEnvironmentReady, metav1.ConditionFalse, perfexpv1alpha1.ReasonSettling,
				"every rollout finished; settling for %s more (spec.settle %s)", left.Round(time.Second), settle)
			res = step.Wait(left, "the environment to settle (spec.settle)")
		}
	}
	// The settle is the run's own choice: it does not count against the rollout's bound.
	deadline := phaseStart(s).Add(timeouts(exp).Rollout + settle)
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

// settleOf is spec.settle, zero when unset.
func settleOf(exp *perfexpv1alpha1.PerfExperiment) time.Duration {
	if exp.Spec.Settle == nil || exp.Spec.Settle.Duration < 0 {
		return 0
	}
	return exp.Spec.Settle.Duration
}

// settleSince is when the settle began: when every rollout of the variant and of
// spec.freshPods was found finished, or, when nothing rolled, when Preparing began (right
// after the queue was handed over by the previous run's restore).
func settleSince(exp *perfexpv1alpha1.PerfExperiment, preparingSince time.Time) time.Time {
	if env := exp.Status.Environment; env != nil && env.RolledOutAt != nil {
		return env.RolledOutAt.Time
	}
	return preparingSince
}

// settleLeft is how much of the settle is still to wait at now.
func settleLeft(settle time.Duration, since, now time.Time) time.Duration {
	if settle <= 0 {
		return 0
	}
	return max(0, since.Add(settle).Sub(now))
}
