package controllers

import (
	"context"
	"fmt"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
)

// The finalizer is carried only while the environment may be patched: it is added when the
// experiment takes its queue's lock, before the status says Preparing (so before anything is
// patched), and dropped once the status says the environment is restored (Analyzing or an end
// phase). A queued, analysing or finished experiment can therefore be deleted, and its
// namespace or the operator uninstalled, without the operator.
//
// Order of writes, and what a crash between them leaves:
//   lock taken, no finalizer yet: the experiment is still Queued and nothing is patched; the
//     next reconcile sees it holds the lock and adds the finalizer; deleted meanwhile, it goes at
//     once and the lock is reclaimed because its holder no longer exists.
//   finalizer added, status still Queued: the next reconcile goes on to Preparing.
//   restored and status written, finalizer still there: the next reconcile drops it.

// ensureFinalizer adds the finalizer. It patches a copy, so the status changes of this reconcile
// are kept, and carries the new resourceVersion into both copies for the status write.
func (r *PerfExperimentReconciler) ensureFinalizer(ctx context.Context, s *scope) error {
	return r.setFinalizer(ctx, s, true)
}

// dropFinalizerWhenRestored removes the finalizer once the experiment's phase says its
// environment can no longer be patched. It runs after the status was written, never before.
func (r *PerfExperimentReconciler) dropFinalizerWhenRestored(ctx context.Context, s *scope) error {
	if holdsEnvironment(s.exp.Status.Phase) {
		return nil
	}
	return r.setFinalizer(ctx, s, false)
}

func (r *PerfExperimentReconciler) setFinalizer(ctx context.Context, s *scope, present bool) error {
	if controllerutil.ContainsFinalizer(s.exp, perfexpv1alpha1.Finalizer) == present {
		return nil
	}
	obj := s.exp.DeepCopy()
	patch := client.MergeFrom(obj.DeepCopy())
	if present {
		controllerutil.AddFinalizer(obj, perfexpv1alpha1.Finalizer)
	} else {
		controllerutil.RemoveFinalizer(obj, perfexpv1alpha1.Finalizer)
	}
	if err := r.Patch(ctx, obj, patch); err != nil {
		if !present {
			err = client.IgnoreNotFound(err)
		}
		if err != nil {
			return fmt.Errorf("setting finalizer %s to %v: %w", perfexpv1alpha1.Finalizer, present, err)
		}
		return nil
	}
	for _, e := range []*perfexpv1alpha1.PerfExperiment{s.exp, s.original} {
		e.Finalizers = obj.Finalizers
		e.ResourceVersion = obj.ResourceVersion
	}
	return nil
}
