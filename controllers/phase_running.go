package controllers

import (
	"context"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/variant"
)

// loadRetry is how soon the Running phase looks at the load again after looking failed.
const loadRetry = 5 * time.Second

// reconcileRunning runs the scenarios until every one finished, within their planned duration
// plus the load grace.
func (r *PerfExperimentReconciler) reconcileRunning(ctx context.Context, s *scope) (ctrl.Result, error) {
	exp := s.exp
	r.recordInventory(ctx, s)
	res, err := r.Load.Run(ctx, exp)
	if dc, ok := r.Environment.(variant.DriftChecker); ok {
		// A variant reverted mid-run makes the results Invalid (the Drifted condition); a
		// failed check does not stop the load.
		if _, derr := variant.ReportDrift(ctx, dc, exp); derr != nil {
			log.FromContext(ctx).Info("Could not check the variant for drift", "error", derr.Error())
		}
	}
	deadline := phaseStart(s).Add(r.Load.PlannedDuration(exp) + timeouts(exp).LoadGrace)
	switch {
	case err != nil && s.now.Before(deadline):
		// Said, and tried again at a steady pace: left to the controller's backoff, a few
		// errors in a row put minutes between two looks, while the condition still said the
		// load was running and the load may long have ended.
		log.FromContext(ctx).Info("Looking at the load failed; retrying", "error", err.Error(), "after", loadRetry)
		setCondition(exp, perfexpv1alpha1.ConditionLoadCompleted, metav1.ConditionFalse, perfexpv1alpha1.ReasonLoadRunning,
			"running: looking at the load failed, retrying every %s: %v", loadRetry, err)
		return ctrl.Result{RequeueAfter: min(loadRetry, deadline.Sub(s.now))}, nil
	case res.Failure != nil:
		setCondition(exp, perfexpv1alpha1.ConditionLoadCompleted, metav1.ConditionFalse, res.Failure.Reason, "%s", res.Failure.Message)
	case !res.Done && err == nil:
		setCondition(exp, perfexpv1alpha1.ConditionLoadCompleted, metav1.ConditionFalse, perfexpv1alpha1.ReasonLoadRunning, "running: %s", orSomething(res.Waiting))
	}
	return r.advance(ctx, s, res, err, deadline, perfexpv1alpha1.ReasonLoadTimedOut, func() {
		setCondition(exp, perfexpv1alpha1.ConditionLoadCompleted, metav1.ConditionTrue, perfexpv1alpha1.ReasonLoadSucceeded, "every scenario finished")
		if exp.Status.Load != nil && exp.Status.Load.ThresholdsCrossed {
			setCondition(exp, perfexpv1alpha1.ConditionThresholdsCrossed, metav1.ConditionTrue, perfexpv1alpha1.ReasonThresholdsCrossed, "k6 reported crossed thresholds (exit code 99); results are still analysed")
		}
		setCondition(exp, perfexpv1alpha1.ConditionEnvironmentRestored, metav1.ConditionFalse, perfexpv1alpha1.ReasonRestoring, "restoring the environment")
		r.enter(s, perfexpv1alpha1.PhaseRestoring, "load finished; restoring the environment")
	})
}

// recordInventory records, once, what the workloads run with as the measured window begins
// (the variant applied and rolled out, the warm-up over). A failed read is said in the log and
// tried again at the next reconcile; a run that never records one is compared without it.
func (r *PerfExperimentReconciler) recordInventory(ctx context.Context, s *scope) {
	ir, ok := r.Analyzer.(InventoryRecorder)
	if !ok || s.exp.Status.Inventory != nil {
		return
	}
	inv, err := ir.Inventory(ctx, s.exp, metav1.NewTime(s.now))
	if err != nil {
		log.FromContext(ctx).Info("Could not record the environment inventory; trying again", "error", err.Error())
		return
	}
	s.exp.Status.Inventory = inv
}
