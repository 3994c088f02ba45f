package controllers

import (
	"context"

	ctrl "sigs.k8s.io/controller-runtime"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
)

// reconcileWarmingUp runs the warm-up load, whose samples the analysis leaves out.
func (r *PerfExperimentReconciler) reconcileWarmingUp(ctx context.Context, s *scope) (ctrl.Result, error) {
	exp := s.exp
	res, err := r.Load.WarmUp(ctx, exp)
	deadline := phaseStart(s).Add(exp.Spec.Load.WarmUp.Duration.Duration + timeouts(exp).LoadGrace)
	return r.advance(ctx, s, res, err, deadline, perfexpv1alpha1.ReasonLoadTimedOut, func() {
		r.enter(s, perfexpv1alpha1.PhaseRunning, "warm-up finished; running load")
	})
}
