package confirm

import (
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/sets"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
)

// A confirmation re-applies the baseline experiment's variant, which its own author applied:
// the admission policy (config/policy/no_escalation.yaml) checked the confirmed experiment's
// author only for what that experiment's variant changes. The sweep is created by the
// operator, whose rights the policy cannot tell from a user's. So a confirmation runs only
// when everything the baseline's variant needs is needed by the experiment's variant too: in
// one target namespace (a confirmation runs both there) that means its author held each of
// those rights when the experiment was applied, and could have made the baseline's changes
// themselves.

// rights are what a variant needs of its author, as the admission policy words them: patch
// (and get) on each kind it changes in the target namespace, and get on a Kafka it reads the
// bootstrap address from in another namespace. Sorted, without repeats.
func rights(v *perfexpv1alpha1.Variant) []string {
	out := sets.New[string]()
	if v == nil {
		return nil
	}
	workload := func(k perfexpv1alpha1.WorkloadKind) {
		if k == "" {
			k = perfexpv1alpha1.WorkloadKindDeployment
		}
		out.Insert("patch " + schema.GroupKind{Group: "apps", Kind: string(k)}.String())
	}
	for _, w := range v.Workloads {
		workload(w.Kind)
	}
	if k := v.Kafka; k != nil {
		if b := k.Bootstrap; b != nil {
			workload(b.Workloads.Kind)
			if f := b.FromKafka; f != nil && f.Namespace != "" {
				out.Insert("get Kafka.kafka.strimzi.io in namespace " + f.Namespace)
			}
		}
		if k.StrimziMode != nil {
			out.Insert("patch Kafka.kafka.strimzi.io")
		}
	}
	for _, p := range v.Patches {
		gv, err := schema.ParseGroupVersion(p.Target.APIVersion)
		gk := schema.GroupKind{Group: gv.Group, Kind: p.Target.Kind}
		if err != nil {
			gk.Group = p.Target.APIVersion
		}
		out.Insert("patch " + gk.String())
	}
	return sets.List(out)
}

// rightsProblem says what the baseline's variant needs that the experiment's does not; empty
// when nothing.
func rightsProblem(exp, baseline *perfexpv1alpha1.PerfExperiment) string {
	own := rights(exp.Spec.Variant)
	var missing []string
	for _, r := range rights(baseline.Spec.Variant) {
		if !slices.Contains(own, r) {
			missing = append(missing, r)
		}
	}
	if len(missing) == 0 {
		return ""
	}
	return fmt.Sprintf("the baseline %s's variant needs %s, which this experiment's variant does not: its author was checked only for what "+
		"their own variant changes, so perfexp does not re-apply the baseline's on their behalf; whoever may make those changes can "+
		"confirm with a PerfSweep of the two variants (see docs/comparison.md), or give this experiment a variant that changes the same kinds",
		baseline.Name, strings.Join(missing, ", "))
}
