package controllers

import (
	"context"

	ctrl "sigs.k8s.io/controller-runtime"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
)

// reconcileSettingUp runs the data-preparation Job within the setup timeout.
func (r *PerfExperimentReconciler) reconcileSettingUp(ctx context.Context, s *scope) (ctrl.Result, error) {
	exp := s.exp
	res, err := r.Load.Setup(ctx, exp)
	deadline := phaseStart(s).Add(timeouts(exp).Setup)
	return r.advance(ctx, s, res, err, deadline, perfexpv1alpha1.ReasonSetupTimedOut, func() {
		if exp.Spec.Load.WarmUp != nil {
			r.enter(s, perfexpv1alpha1.PhaseWarmingUp, "setup finished; warming up")
			return
		}
		r.enter(s, perfexpv1alpha1.PhaseRunning, "setup finished; running load")
	})
}
