package controllers

import (
	"context"
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/text"
)

// AnnotationStatusRefused marks an experiment whose status the API server refused while its
// environment could be patched; its value is the API server's message. While it is set and the
// status names no end phase, the operator only restores the environment and frees the queue.
const AnnotationStatusRefused = "perfexp.dev/status-refused"

// isRefusal reports whether a write failed because the API server (or an admission policy)
// said no to its content, which writing the same again will not change. Conflicts, timeouts
// and an unavailable API server are not refusals: they are retried as usual.
func isRefusal(err error) bool {
	return apierrors.IsInvalid(err) || apierrors.IsForbidden(err) || apierrors.IsBadRequest(err) ||
		apierrors.IsRequestEntityTooLargeError(err)
}

// statusRefused reports whether an earlier reconcile found the experiment's status refused and
// its environment not yet known to be restored.
func (r *PerfExperimentReconciler) statusRefused(exp *perfexpv1alpha1.PerfExperiment) bool {
	if exp.Status.Phase.IsTerminal() || (!exp.DeletionTimestamp.IsZero() && !holdsEnvironment(exp.Status.Phase)) {
		return false
	}
	if _, ok := r.refused.Load(exp.UID); ok {
		return true
	}
	_, ok := exp.Annotations[AnnotationStatusRefused]
	return ok
}

// onStatusRefused runs when the status write of a reconcile was refused. When the environment
// may be patched (by the phase stored or the phase this reconcile reached) it must not stay so
// because the experiment's progress cannot be recorded: it marks the experiment (in memory and,
// where the API server allows, in an annotation) so that later reconciles only restore, and
// restores at once, from this reconcile's copy, which knows every object it patched.
func (r *PerfExperimentReconciler) onStatusRefused(ctx context.Context, s *scope, writeErr error) error {
	if !holdsEnvironment(s.original.Status.Phase) && !holdsEnvironment(s.exp.Status.Phase) {
		return nil
	}
	msg := text.Truncate(writeErr.Error(), 1024)
	log.FromContext(ctx).Error(writeErr, "The API server refused the status while the environment may be patched; restoring now")
	r.refused.Store(s.exp.UID, msg)
	var errs []error
	if err := r.annotateRefused(ctx, s, msg); err != nil {
		errs = append(errs, err)
	}
	if _, err := r.reconcileStatusRefused(ctx, s); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// annotateRefused records the refusal on the object itself, so a restarted operator knows it too.
func (r *PerfExperimentReconciler) annotateRefused(ctx context.Context, s *scope, msg string) error {
	if _, ok := s.exp.Annotations[AnnotationStatusRefused]; ok {
		return nil
	}
	obj := s.original.DeepCopy()
	patch := client.MergeFrom(obj.DeepCopy())
	if obj.Annotations == nil {
		obj.Annotations = map[string]string{}
	}
	obj.Annotations[AnnotationStatusRefused] = msg
	if err := r.Patch(ctx, obj, patch); err != nil {
		return client.IgnoreNotFound(fmt.Errorf("marking the refused status: %w", err))
	}
	return nil
}

// reconcileStatusRefused restores the environment of an experiment whose status cannot be
// written, frees its queue, drops its finalizer (nothing is patched any more) and tries to
// record the end as Failed with reason StatusRefused. Restoring is idempotent, so repeating this
// until the status can be written never patches anything again.
func (r *PerfExperimentReconciler) reconcileStatusRefused(ctx context.Context, s *scope) (ctrl.Result, error) {
	exp := s.exp
	done, res, err := r.restore(ctx, s)
	if err != nil || !done {
		return res, err
	}
	if err := r.releaseLocks(ctx, exp); err != nil {
		return ctrl.Result{}, err
	}
	if err := r.setFinalizer(ctx, s, false); err != nil {
		return ctrl.Result{}, err
	}
	msg, _ := r.refused.Load(exp.UID)
	if msg == nil {
		msg = exp.Annotations[AnnotationStatusRefused]
	}
	if failure(exp) == nil {
		setCondition(exp, perfexpv1alpha1.ConditionReady, metav1.ConditionFalse, perfexpv1alpha1.ReasonStatusRefused,
			"the API server refused the status (%v); the environment was restored and the queue freed", msg)
	}
	r.finish(s)
	if err := r.writeStatus(ctx, s.original, exp); err != nil {
		return ctrl.Result{}, err
	}
	r.refused.Delete(exp.UID)
	return ctrl.Result{}, nil
}
