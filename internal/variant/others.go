// The check that no other experiment's patch is still in force in the namespace, on any kind a
// variant can patch: a baseline measured beside another experiment's variant is not a baseline.

package variant

import (
	"context"
	"fmt"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/selection"
	"sigs.k8s.io/controller-runtime/pkg/client"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/access"
)

// othersInNamespace finds the objects of the namespace still carrying another experiment's
// patch, whether this experiment's variant touches them or not, and whether it has a variant
// at all: a baseline measured while another experiment's variant is still in force (its queue
// is another one, or its restore has not finished, or its finalizer was removed by force) is
// not a baseline. Deployments and StatefulSets are found by their LabelPatchedBy label; the
// other kinds a variant can patch (the generic patch kinds and Strimzi's Kafka) carry no
// label and are found by their snapshot annotation. While that experiment exists this one
// waits for it to restore; a mark left by an experiment that is gone, or without a readable
// snapshot, is for a person to settle.
func (e *Environment) othersInNamespace(ctx context.Context, exp *perfexpv1alpha1.PerfExperiment, ns string) (*plan, error) {
	p := &plan{exp: exp, ns: ns, byRef: map[objKey]*target{}, fields: map[string]string{}}
	if err := e.workloadsOfOthers(ctx, p, ns); err != nil {
		return nil, err
	}
	kinds, err := e.unlabelledKinds()
	if err != nil {
		return nil, err
	}
	for _, gvk := range kinds {
		if err := e.annotatedOfOthers(ctx, p, ns, gvk); err != nil {
			return nil, err
		}
	}
	if err := e.checkOtherExperiments(ctx, p); err != nil {
		return nil, err
	}
	return p, nil
}

// workloadsOfOthers adds the Deployments and StatefulSets labelled by another experiment.
func (e *Environment) workloadsOfOthers(ctx context.Context, p *plan, ns string) error {
	patched, err := labels.NewRequirement(LabelPatchedBy, selection.Exists, nil)
	if err != nil {
		return err
	}
	notUs, err := labels.NewRequirement(LabelPatchedBy, selection.NotEquals, []string{string(p.exp.UID)})
	if err != nil {
		return err
	}
	sel := labels.NewSelector().Add(*patched, *notUs)
	for _, kind := range []perfexpv1alpha1.WorkloadKind{perfexpv1alpha1.WorkloadKindDeployment, perfexpv1alpha1.WorkloadKindStatefulSet} {
		list := &unstructured.UnstructuredList{}
		list.SetGroupVersionKind(appsv1.SchemeGroupVersion.WithKind(string(kind) + "List"))
		if err := e.c.List(ctx, list, client.InNamespace(ns), client.MatchingLabelsSelector{Selector: sel}); err != nil {
			return fmt.Errorf("listing %ss patched by other experiments in %s: %w", kind, ns, err)
		}
		for i := range list.Items {
			u := &list.Items[i]
			u.SetGroupVersionKind(appsv1.SchemeGroupVersion.WithKind(string(kind)))
			if _, ok := u.GetAnnotations()[perfexpv1alpha1.AnnotationSnapshot]; !ok {
				p.fail(perfexpv1alpha1.ReasonPatchedByAnotherExperiment,
					"%s carries the %s label of experiment UID %s but no %s annotation, so its baseline is not known: put it back by hand and remove the label",
					refOf(u), LabelPatchedBy, u.GetLabels()[LabelPatchedBy], perfexpv1alpha1.AnnotationSnapshot)
				continue
			}
			p.target(u)
		}
	}
	return nil
}

// annotatedOfOthers adds the objects of one unlabelled kind that carry a snapshot annotation
// not this experiment's. Only metadata is listed, from the API server (no informer is kept on
// every ConfigMap of the cluster for this).
func (e *Environment) annotatedOfOthers(ctx context.Context, p *plan, ns string, gvk schema.GroupVersionKind) error {
	list := &metav1.PartialObjectMetadataList{}
	list.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
	if err := e.reader.List(ctx, list, client.InNamespace(ns)); err != nil {
		if apierrors.IsForbidden(err) {
			// Not knowing is not "none": a patch of this kind may be in force.
			p.fail(perfexpv1alpha1.ReasonTargetForbidden,
				"perfexp may not list %ss in %s, so it cannot tell whether another experiment's patch of one is still in force: grant its service account list on this kind there (config/rbac/optional), or remove the kind from --generic-patch-kinds: %v",
				gvk.Kind, ns, err)
			return nil
		}
		return fmt.Errorf("listing %ss in %s: %w", gvk.Kind, ns, err)
	}
	ours := p.exp.Namespace + "/" + p.exp.Name
	for _, m := range list.Items {
		text, ok := m.Annotations[perfexpv1alpha1.AnnotationSnapshot]
		if !ok {
			continue
		}
		snap, err := decodeSnapshot(text)
		if err == nil && snap.UID == p.exp.UID || err != nil && m.Annotations[perfexpv1alpha1.AnnotationExperiment] == ours {
			continue // this experiment's own: its variant's resolve and restore deal with it
		}
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(gvk)
		u.SetNamespace(m.Namespace)
		u.SetName(m.Name)
		u.SetAnnotations(m.Annotations)
		u.SetLabels(m.Labels)
		p.target(u) // records an unreadable snapshot as a problem, another's as theirs
	}
	return nil
}

// unlabelledKinds are the kinds other than Deployments and StatefulSets a variant can patch and
// the cluster serves: the generic patch kinds and Strimzi's Kafka (kafka.strimziMode patches it
// whatever --generic-patch-kinds says).
func (e *Environment) unlabelledKinds() ([]schema.GroupVersionKind, error) {
	names := e.opts.GenericPatchKinds
	if names == nil {
		names = access.DefaultGenericPatchKinds
	}
	names = append(append([]string{}, names...), kafkaGVK.GroupKind().String())
	seen := map[schema.GroupKind]bool{}
	var out []schema.GroupVersionKind
	for _, k := range names {
		gk := schema.ParseGroupKind(k)
		if seen[gk] || gk.Group == appsv1.GroupName && (gk.Kind == "Deployment" || gk.Kind == "StatefulSet") {
			continue
		}
		seen[gk] = true
		mapping, err := e.c.RESTMapper().RESTMapping(gk)
		if meta.IsNoMatchError(err) {
			continue // not served in this cluster (Strimzi not installed)
		}
		if err != nil {
			return nil, fmt.Errorf("resolving %s: %w", k, err)
		}
		if mapping.Scope.Name() != meta.RESTScopeNameNamespace {
			continue
		}
		out = append(out, mapping.GroupVersionKind)
	}
	return out, nil
}

// checkOtherExperiments looks at objects that carry another experiment's snapshot: while that
// experiment exists it will restore them, so this one waits; a snapshot left by an experiment
// that no longer exists means nobody knows the object's baseline, which a person must settle.
func (e *Environment) checkOtherExperiments(ctx context.Context, p *plan) error {
	for _, t := range p.targets {
		if t.theirs == nil {
			continue
		}
		ns, name, _ := strings.Cut(t.theirs.Experiment, "/")
		other := &perfexpv1alpha1.PerfExperiment{}
		err := e.c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, other)
		switch {
		case err == nil && other.UID == t.theirs.UID:
			p.waits = append(p.waits, fmt.Sprintf("experiment %s to restore %s", t.theirs.Experiment, t.ref))
		case err == nil || apierrors.IsNotFound(err):
			p.fail(perfexpv1alpha1.ReasonPatchedByAnotherExperiment,
				"%s still carries the snapshot of experiment %s (UID %s), which no longer exists: put the object back from its %s annotation, or remove perfexp's annotations and %s label if it is as it should be",
				t.ref, t.theirs.Experiment, t.theirs.UID, perfexpv1alpha1.AnnotationSnapshot, perfexpv1alpha1.LabelPatchedBy)
		default:
			return fmt.Errorf("reading experiment %s: %w", t.theirs.Experiment, err)
		}
	}
	return nil
}
