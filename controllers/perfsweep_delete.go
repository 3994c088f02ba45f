package controllers

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/log"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
)

// reconcileSweepAbort sets spec.abort on every run that has not ended, creates no new run, and
// ends the sweep as Aborted once every run has ended. Each run stops its load and restores the
// environment on its own, as an aborted PerfExperiment does.
func (r *PerfSweepReconciler) reconcileSweepAbort(ctx context.Context, s *sweepScope) (ctrl.Result, error) {
	sw := s.sweep
	aborting := 0
	for _, exp := range s.runs {
		if exp.Status.Phase.IsTerminal() || !exp.DeletionTimestamp.IsZero() {
			continue
		}
		aborting++
		if exp.Spec.Abort {
			continue
		}
		patch := client.MergeFrom(exp.DeepCopy())
		exp.Spec.Abort = true
		if err := r.Patch(ctx, exp, patch); client.IgnoreNotFound(err) != nil {
			return ctrl.Result{}, fmt.Errorf("aborting run %s: %w", exp.Name, err)
		}
		log.FromContext(ctx).Info("Aborted a run of the sweep", "run", exp.Name)
	}
	r.updateProgress(s)
	if aborting > 0 {
		msg := fmt.Sprintf("aborting: %d run(s) are stopping and restoring the environment", aborting)
		sw.Status.Phase, sw.Status.Message = perfexpv1alpha1.SweepRunning, msg
		setSweepCondition(sw, perfexpv1alpha1.ConditionReady, metav1.ConditionUnknown, perfexpv1alpha1.ReasonAborted, "%s", msg)
		return ctrl.Result{}, nil
	}
	msg := fmt.Sprintf("aborted: %d of %d runs had ended before, the others were aborted or never created", sw.Status.Done-sw.Status.Failed, sw.Status.Total)
	sw.Status.Phase, sw.Status.Message = perfexpv1alpha1.SweepAborted, msg
	sw.Status.CurrentArm, sw.Status.CurrentExperiment = "", ""
	setSweepCondition(sw, perfexpv1alpha1.ConditionReady, metav1.ConditionFalse, perfexpv1alpha1.ReasonAborted, "%s", msg)
	return ctrl.Result{}, nil
}

// reconcileSweepDeadline stops a sweep whose deadline passed as an abort does, and says why.
func (r *PerfSweepReconciler) reconcileSweepDeadline(ctx context.Context, s *sweepScope) (ctrl.Result, error) {
	sw := s.sweep
	res, err := r.reconcileSweepAbort(ctx, s)
	if err != nil {
		return res, err
	}
	why := fmt.Sprintf("the sweep's deadline passed at %s (spec.deadline %s after its creation)",
		sw.DeadlineAt().UTC().Format(time.RFC3339), sw.DeadlineAt().Sub(sw.CreationTimestamp.Time))
	msg := why + "; " + sw.Status.Message
	status := metav1.ConditionUnknown
	if sw.Status.Phase == perfexpv1alpha1.SweepAborted {
		status = metav1.ConditionFalse
	}
	sw.Status.Message = msg
	setSweepCondition(sw, perfexpv1alpha1.ConditionReady, status, perfexpv1alpha1.ReasonDeadlineExceeded, "%s", msg)
	if r.Recorder != nil && status == metav1.ConditionFalse {
		r.Recorder.Eventf(sw, nil, corev1.EventTypeWarning, perfexpv1alpha1.ReasonDeadlineExceeded, "Abort", "%s", why)
	}
	return res, nil
}

// reconcileSweepDelete deletes the sweep's runs and keeps the sweep until they are gone. A run
// that holds the environment keeps its own finalizer until it has restored it, so when the
// sweep disappears the environment is back as it was. Owner references alone would let the
// garbage collector do the deleting, but only after the sweep is gone, with nothing to wait on.
func (r *PerfSweepReconciler) reconcileSweepDelete(ctx context.Context, s *sweepScope) (ctrl.Result, error) {
	sw := s.sweep
	if !controllerutil.ContainsFinalizer(sw, perfexpv1alpha1.SweepFinalizer) {
		return ctrl.Result{}, nil
	}
	for _, exp := range s.runs {
		if !exp.DeletionTimestamp.IsZero() {
			continue
		}
		if err := r.Delete(ctx, exp, client.PropagationPolicy(metav1.DeletePropagationBackground)); err != nil && !apierrors.IsNotFound(err) {
			return ctrl.Result{}, fmt.Errorf("deleting run %s: %w", exp.Name, err)
		}
	}
	if len(s.runs) > 0 {
		sw.Status.Message = fmt.Sprintf("deleting: waiting for %d run(s) to restore the environment and go", len(s.runs))
		return ctrl.Result{RequeueAfter: sweepRecheck}, nil
	}
	patch := client.MergeFrom(sw.DeepCopy())
	controllerutil.RemoveFinalizer(sw, perfexpv1alpha1.SweepFinalizer)
	if err := client.IgnoreNotFound(r.Patch(ctx, sw, patch)); err != nil {
		return ctrl.Result{}, fmt.Errorf("removing finalizer: %w", err)
	}
	return ctrl.Result{}, nil
}
