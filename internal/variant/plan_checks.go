// The checks a plan makes of its targets before anything is written: the rollout strategy, an
// autoscaler that would fight the variant (other experiments' objects: others.go).

package variant

import (
	"context"
	"fmt"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
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
