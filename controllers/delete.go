package controllers

import (
	"context"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
)

// reconcileDelete restores the environment of an experiment deleted mid-run, then frees its
// queue and lets it go.
func (r *PerfExperimentReconciler) reconcileDelete(ctx context.Context, s *scope) (ctrl.Result, error) {
	exp := s.exp
	if !controllerutil.ContainsFinalizer(exp, perfexpv1alpha1.Finalizer) {
		return ctrl.Result{}, nil
	}
	if holdsEnvironment(exp.Status.Phase) {
		if failure(exp) == nil {
			r.fail(s, perfexpv1alpha1.ReasonDeleted, "the experiment was deleted")
		}
		done, res, err := r.restore(ctx, s)
		if err != nil || !done {
			return res, err
		}
	}
	if err := r.releaseLocks(ctx, exp); err != nil {
		return ctrl.Result{}, err
	}
	return ctrl.Result{}, r.setFinalizer(ctx, s, false)
}
