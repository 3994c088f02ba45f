// The checks a plan makes of its targets before anything is written: the rollout strategy, an
// autoscaler that would fight the variant, and other experiments' objects in the namespace.

package variant

import (
	"context"
	"fmt"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/selection"
	"sigs.k8s.io/controller-runtime/pkg/client"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
)

// checkUpdateStrategy refuses to change the pod template of a workload that would not roll
// it out: a StatefulSet whose pods are only replaced when someone deletes them, or a paused
// Deployment. The experiment would measure the old pods.
func checkUpdateStrategy(p *plan, src string, t *target) {
	switch perfexpv1alpha1.WorkloadKind(t.ref.Kind) {
	case perfexpv1alpha1.WorkloadKindStatefulSet:
		if s, _, _ := unstructured.NestedString(t.obj.Object, "spec", "updateStrategy", "type"); s == "OnDelete" {
			p.fail(perfexpv1alpha1.ReasonInvalidVariant, "%s: %s uses the OnDelete update strategy, so its pods would keep the old template", src, t.ref)
		}
	case perfexpv1alpha1.WorkloadKindDeployment:
		if paused, _, _ := unstructured.NestedBool(t.obj.Object, "spec", "paused"); paused {
			p.fail(perfexpv1alpha1.ReasonInvalidVariant, "%s: %s is paused, so its pods would keep the old template", src, t.ref)
		}
	}
}

// checkAutoscaled refuses replicas on a workload a HorizontalPodAutoscaler scales: the
// autoscaler would set them back seconds after the rollout, and the load would measure its
// choice, not the variant's. The autoscalers of the namespace are read once per plan.
func (e *Environment) checkAutoscaled(ctx context.Context, p *plan, src string, t *target) error {
	if p.hpas == nil {
		list := &autoscalingv2.HorizontalPodAutoscalerList{}
		if err := e.c.List(ctx, list, client.InNamespace(p.ns)); err != nil && !meta.IsNoMatchError(err) {
			return fmt.Errorf("listing HorizontalPodAutoscalers in %s: %w", p.ns, err)
		}
		p.hpas = list.Items
		if p.hpas == nil {
			p.hpas = []autoscalingv2.HorizontalPodAutoscaler{}
		}
	}
	for _, h := range p.hpas {
		ref := h.Spec.ScaleTargetRef
		gv, err := schema.ParseGroupVersion(ref.APIVersion)
		if err != nil || gv.Group != t.ref.gvk().Group || ref.Kind != t.ref.Kind || ref.Name != t.ref.Name {
			continue
		}
		p.fail(perfexpv1alpha1.ReasonReplicasManagedByHPA,
			"%s: %s is scaled by HorizontalPodAutoscaler %s, which would undo replicas during the run; change the autoscaler's minReplicas and maxReplicas with a patch instead",
			src, t.ref, h.Name)
	}
	return nil
}

// othersInNamespace finds the Deployments and StatefulSets of the namespace still labelled as
// patched by another experiment, whether this experiment's variant touches them or not, and
// whether it has a variant at all: a baseline measured while another experiment's variant is
// still in force (its queue is another one, or its restore has not finished) is not a
// baseline. While that experiment exists this one waits for it to restore; a label left by an
// experiment that is gone, or without a readable snapshot, is for a person to settle.
func (e *Environment) othersInNamespace(ctx context.Context, exp *perfexpv1alpha1.PerfExperiment, ns string) (*plan, error) {
	p := &plan{exp: exp, ns: ns, byRef: map[objKey]*target{}, fields: map[string]string{}}
	patched, err := labels.NewRequirement(LabelPatchedBy, selection.Exists, nil)
	if err != nil {
		return nil, err
	}
	notUs, err := labels.NewRequirement(LabelPatchedBy, selection.NotEquals, []string{string(exp.UID)})
	if err != nil {
		return nil, err
	}
	sel := labels.NewSelector().Add(*patched, *notUs)
	for _, kind := range []perfexpv1alpha1.WorkloadKind{perfexpv1alpha1.WorkloadKindDeployment, perfexpv1alpha1.WorkloadKindStatefulSet} {
		list := &unstructured.UnstructuredList{}
		list.SetGroupVersionKind(appsv1.SchemeGroupVersion.WithKind(string(kind) + "List"))
		if err := e.c.List(ctx, list, client.InNamespace(ns), client.MatchingLabelsSelector{Selector: sel}); err != nil {
			return nil, fmt.Errorf("listing %ss patched by other experiments in %s: %w", kind, ns, err)
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
	if err := e.checkOtherExperiments(ctx, p); err != nil {
		return nil, err
	}
	return p, nil
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
