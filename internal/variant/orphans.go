package variant

import (
	"context"
	"fmt"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
)

// Orphan is an object that carries perfexp's marks of an experiment that no longer exists:
// its finalizer was removed by force, so it never restored what it had patched.
type Orphan struct {
	// Object is the object as found (for events).
	Object *unstructured.Unstructured
	// Experiment is the namespace/name of the experiment that patched it, when known.
	Experiment string
	// UID is that experiment's UID.
	UID types.UID
	// Restored says the object was put back from its snapshot annotation; Problem, when not
	// empty, says why it could not be (or what could not be put back).
	Restored bool
	Problem  string
	// Refused says the janitor would not act on the object at all: its snapshot is not one
	// perfexp recorded, its namespace has not opted in, or it names a field no variant may
	// change. Problem says which; nothing was written.
	Refused bool
}

// Ref names the orphan for people: Kind namespace/name.
func (o Orphan) Ref() string { return refOf(o.Object).String() }

// RecoverOrphans finds the objects perfexp patched for an experiment that no longer exists and
// puts each back from the snapshot annotation it carries, as the experiment's own restore
// would have (alive lists the UIDs of the experiments that exist). Workloads are found by
// their LabelPatchedBy label, the generic patch kinds by their snapshot annotation. The
// experiments are listed after the objects, so an experiment that patched an object before it
// was listed is seen if it still exists; each write is conditional on the object as read.
//
// Objects are looked for cluster-wide; where the operator may not list cluster-wide (a
// namespaced install), in each of Options.AllowedNamespaces.
func (e *Environment) RecoverOrphans(ctx context.Context, alive func(context.Context) (map[types.UID]bool, error)) ([]Orphan, error) {
	found, err := e.marked(ctx)
	if err != nil {
		return nil, err
	}
	if len(found) == 0 {
		return nil, nil
	}
	live, err := alive(ctx)
	if err != nil {
		return nil, err
	}
	var out []Orphan
	for _, u := range found {
		o, orphan := orphanOf(u)
		if !orphan || live[o.UID] {
			continue
		}
		if err := e.recoverOrphan(ctx, &o); err != nil {
			if apierrors.IsConflict(err) || apierrors.IsNotFound(err) {
				continue // changed or gone since it was listed: the next round sees it again
			}
			o.Problem = err.Error()
		}
		out = append(out, o)
	}
	return out, nil
}

// orphanOf reads whose marks u carries. orphan is false when it carries none that name an
// experiment.
func orphanOf(u *unstructured.Unstructured) (Orphan, bool) {
	o := Orphan{Object: u, UID: types.UID(u.GetLabels()[LabelPatchedBy]), Experiment: u.GetAnnotations()[perfexpv1alpha1.AnnotationExperiment]}
	text, ok := u.GetAnnotations()[perfexpv1alpha1.AnnotationSnapshot]
	if !ok {
		if o.UID == "" {
			return o, false
		}
		o.Problem = fmt.Sprintf("it carries the %s label of experiment UID %s but no %s annotation, so what it was before is not known: put it back by hand and remove the label",
			LabelPatchedBy, o.UID, perfexpv1alpha1.AnnotationSnapshot)
		return o, true
	}
	snap, err := decodeSnapshot(text)
	if err != nil {
		if o.UID == "" {
			// An unreadable annotation and no label: nothing says whose it is, or whether
			// that experiment still exists. Left alone.
			return o, false
		}
		o.Problem = fmt.Sprintf("its %s annotation cannot be read (%v): put it back by hand and remove perfexp's annotations and label", perfexpv1alpha1.AnnotationSnapshot, err)
		return o, true
	}
	o.UID = snap.UID
	if snap.Experiment != "" {
		o.Experiment = snap.Experiment
	}
	return o, snap.UID != ""
}

// recoverOrphan puts o back from its snapshot, unless o already has a problem.
func (e *Environment) recoverOrphan(ctx context.Context, o *Orphan) error {
	if o.Problem != "" {
		return nil
	}
	u := o.Object
	snap, err := decodeSnapshot(u.GetAnnotations()[perfexpv1alpha1.AnnotationSnapshot])
	if err != nil {
		return err
	}
	// The janitor writes with the operator's rights on behalf of no one: what it writes must
	// be what perfexp itself recorded, where experiments are allowed, on fields a variant may
	// change. Otherwise anyone who may annotate an object would have perfexp set its image or
	// service account past every admission rule keyed on the person.
	if refusal, err := e.orphanRefusal(ctx, u, snap); err != nil || refusal != "" {
		if err != nil {
			return err
		}
		o.Problem, o.Refused = refusal, true
		log.FromContext(ctx).Info("Refused to restore an object from its snapshot", "object", o.Ref(), "experiment", o.Experiment, "uid", o.UID, "reason", refusal)
		return nil
	}
	restored := u.DeepCopy()
	skipped := unwind(restored.Object, snap)
	removeOurs(restored)
	if err := e.write(ctx, u, restored, false); err != nil {
		return fmt.Errorf("restoring: %w", err)
	}
	o.Restored = true
	if len(skipped) > 0 {
		o.Problem = "restored except: " + strings.Join(skipped, "; ")
	}
	log.FromContext(ctx).Info("Restored an object whose experiment is gone", "object", o.Ref(), "experiment", o.Experiment, "uid", o.UID)
	return nil
}

// orphanRefusal says why the janitor may not restore u from snap, or "" when it may.
func (e *Environment) orphanRefusal(ctx context.Context, u *unstructured.Unstructured, snap *Snapshot) (string, error) {
	if problem := signatureProblem(e.opts.SnapshotKey, e.opts.PreviousSnapshotKeys, u); problem != "" {
		return "refused: not recorded by perfexp: " + problem + "; perfexp writes nothing from it. Put the object back by hand and remove perfexp's annotations and label", nil
	}
	ref, err := e.rules.Namespace(ctx, u.GetNamespace(), "restore objects in")
	if err != nil {
		return "", err
	}
	if ref != nil {
		return "refused: " + ref.Message, nil
	}
	for _, c := range snap.Changes {
		if !variantMayChange(c.Path) {
			return fmt.Sprintf("refused: its snapshot would set %s, a field no variant changes; perfexp writes nothing from it", c.Path), nil
		}
	}
	return "", nil
}

// variantMayChange reports whether a variant may change the field at p: not the API server's
// bookkeeping nor perfexp's own marks, and not the whole object.
func variantMayChange(p Path) bool {
	if len(p) == 0 || ignoredPath(p) {
		return false
	}
	for _, own := range ownPaths {
		if p.hasPrefix(own) {
			return false
		}
	}
	return true
}

// marked lists the objects that carry perfexp's label or snapshot annotation.
func (e *Environment) marked(ctx context.Context) ([]*unstructured.Unstructured, error) {
	var out []*unstructured.Unstructured
	for _, kind := range []string{"Deployment", "StatefulSet"} {
		gvk := appsv1.SchemeGroupVersion.WithKind(kind)
		list, err := e.listEverywhere(ctx, gvk, client.HasLabels{LabelPatchedBy})
		if err != nil {
			return nil, err
		}
		out = append(out, list...)
	}
	kinds, err := e.unlabelledKinds()
	if err != nil {
		return nil, err
	}
	for _, gvk := range kinds {
		// Generic kinds carry no label: their metadata is listed and the annotated ones read.
		metas, err := e.listMetadataEverywhere(ctx, gvk)
		if err != nil {
			return nil, err
		}
		for _, m := range metas {
			if _, ok := m.Annotations[perfexpv1alpha1.AnnotationSnapshot]; !ok {
				continue
			}
			u := &unstructured.Unstructured{}
			u.SetGroupVersionKind(gvk)
			if err := e.reader.Get(ctx, client.ObjectKey{Namespace: m.Namespace, Name: m.Name}, u); err != nil {
				if apierrors.IsNotFound(err) {
					continue
				}
				return nil, fmt.Errorf("reading %s %s/%s: %w", gvk.Kind, m.Namespace, m.Name, err)
			}
			u.SetGroupVersionKind(gvk)
			out = append(out, u)
		}
	}
	kept := out[:0]
	for _, u := range out {
		if !e.rules.Reserved(u.GetNamespace()) {
			kept = append(kept, u)
		}
	}
	return kept, nil
}

// listNamespaces calls list for each watched namespace in a namespaced install; otherwise
// for "" (every namespace) first, then, when that is forbidden, the namespaces the operator
// is told it may use.
func (e *Environment) listNamespaces(ctx context.Context, list func(ns string) error) error {
	if len(e.opts.WatchedNamespaces) > 0 {
		for _, ns := range e.opts.WatchedNamespaces {
			if err := list(ns); err != nil {
				return err
			}
		}
		return nil
	}
	err := list("")
	if !apierrors.IsForbidden(err) {
		return err
	}
	if len(e.opts.AllowedNamespaces) == 0 {
		log.FromContext(ctx).V(1).Info("May not list cluster-wide and no namespaces are listed; skipped", "error", err)
		return nil
	}
	for _, ns := range e.opts.AllowedNamespaces {
		if err := list(ns); err != nil && !apierrors.IsForbidden(err) {
			return err
		}
	}
	return nil
}

func (e *Environment) listEverywhere(ctx context.Context, gvk schema.GroupVersionKind, opts ...client.ListOption) ([]*unstructured.Unstructured, error) {
	var out []*unstructured.Unstructured
	err := e.listNamespaces(ctx, func(ns string) error {
		list := &unstructured.UnstructuredList{}
		list.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
		if err := e.reader.List(ctx, list, append([]client.ListOption{client.InNamespace(ns)}, opts...)...); err != nil {
			return err
		}
		for i := range list.Items {
			u := &list.Items[i]
			u.SetGroupVersionKind(gvk)
			out = append(out, u)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("listing %ss perfexp marked: %w", gvk.Kind, err)
	}
	return out, nil
}

func (e *Environment) listMetadataEverywhere(ctx context.Context, gvk schema.GroupVersionKind) ([]metav1.PartialObjectMetadata, error) {
	var out []metav1.PartialObjectMetadata
	err := e.listNamespaces(ctx, func(ns string) error {
		list := &metav1.PartialObjectMetadataList{}
		list.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
		if err := e.reader.List(ctx, list, client.InNamespace(ns)); err != nil {
			return err
		}
		out = append(out, list.Items...)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("listing %ss: %w", gvk.Kind, err)
	}
	return out, nil
}
