package load

import (
	"context"
	"fmt"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/log"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
)

// The objects a run creates (Jobs, TestRuns, script ConfigMaps) are owned by the experiment;
// these keep that ownership honest across re-applied experiments of the same name.

// createOwned creates obj owned by the experiment. When an object of that name exists it must be
// the experiment's own (created by an earlier call); existing is filled with it.
func (r *Runner) createOwned(ctx context.Context, exp *perfexpv1alpha1.PerfExperiment, obj, existing client.Object) error {
	if err := controllerutil.SetControllerReference(exp, obj, r.c.Scheme()); err != nil {
		return err
	}
	err := r.c.Create(ctx, obj)
	if err == nil {
		kind := fmt.Sprintf("%T", obj)
		log.FromContext(ctx).Info("Created load object", "kind", kind[strings.LastIndex(kind, ".")+1:], "name", obj.GetName(), "namespace", obj.GetNamespace())
		return nil
	}
	if apierrors.IsInvalid(err) {
		// Retrying cannot make the API server accept it: fail with its words rather than leave
		// the experiment Running with "Reconciler error" only in the operator's log.
		kind := fmt.Sprintf("%T", obj)
		return failure(perfexpv1alpha1.ReasonLoadFailed, "the API server refused the %s %s: %v", kind[strings.LastIndex(kind, ".")+1:], obj.GetName(), err)
	}
	if !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating %s: %w", obj.GetName(), err)
	}
	if err := r.c.Get(ctx, client.ObjectKeyFromObject(obj), existing); err != nil {
		return err
	}
	return r.checkOwned(ctx, exp, existing)
}

// checkOwned accepts an object the experiment owns. An object of an earlier experiment of the
// same name (deleted and applied again, as a GitOps tool or a sweep run again does) that the
// garbage collector has not removed yet is deleted here and waited for; any other owner's object
// is left alone and fails the run.
func (r *Runner) checkOwned(ctx context.Context, exp *perfexpv1alpha1.PerfExperiment, obj client.Object) error {
	owner := metav1.GetControllerOf(obj)
	if owner != nil && owner.UID == exp.UID {
		return nil
	}
	if !earlierIncarnation(exp, owner) {
		return failure(perfexpv1alpha1.ReasonLoadFailed, "%s already exists in namespace %s and does not belong to this experiment", obj.GetName(), exp.Namespace)
	}
	// Names are unique in a namespace: the owner, a PerfExperiment of this name with another
	// UID, no longer exists, so what it owned is garbage the collector would delete anyway.
	if obj.GetDeletionTimestamp() == nil {
		err := r.c.Delete(ctx, obj, client.PropagationPolicy(metav1.DeletePropagationBackground), client.Preconditions{UID: ptr.To(obj.GetUID())})
		if client.IgnoreNotFound(err) != nil && !apierrors.IsConflict(err) {
			return fmt.Errorf("deleting %s, left by an earlier experiment named %s: %w", obj.GetName(), exp.Name, err)
		}
		log.FromContext(ctx).Info("Deleted a load object left by an earlier experiment of the same name", "name", obj.GetName(), "namespace", obj.GetNamespace(), "ownerUID", owner.UID)
	}
	return &waitError{after: 2 * time.Second, why: fmt.Sprintf("waiting for %s, left by an earlier experiment named %s, to be deleted", obj.GetName(), exp.Name)}
}

// earlierIncarnation reports whether owner is a PerfExperiment of the experiment's name but not
// the experiment itself.
func earlierIncarnation(exp *perfexpv1alpha1.PerfExperiment, owner *metav1.OwnerReference) bool {
	if owner == nil || owner.Kind != "PerfExperiment" || owner.Name != exp.Name || owner.UID == exp.UID {
		return false
	}
	gv, err := schema.ParseGroupVersion(owner.APIVersion)
	return err == nil && gv.Group == perfexpv1alpha1.GroupVersion.Group
}
