// Fresh pods: rolling a workload the way `kubectl rollout restart` does, as one more field of
// the plan, so its snapshot, restore, drift checks and crash recovery are a variant's.

package variant

import (
	"context"
	"fmt"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
)

// restartedAtPath is the pod-template annotation whose change rolls a workload's pods.
var restartedAtPath = path("spec", "template", "metadata", "annotations", perfexpv1alpha1.AnnotationRestartedAt)

// resolveFreshPods adds to the plan a restart of every workload spec.freshPods chooses. The
// annotation's value is the experiment's UID: unlike a time, it is the same on every call of
// Prepare and differs from whatever an earlier experiment left, so the template always changes.
func (e *Environment) resolveFreshPods(ctx context.Context, p *plan, fp *perfexpv1alpha1.FreshPods) error {
	for i, sel := range fp.Workloads {
		src := fmt.Sprintf("freshPods.workloads[%d]", i)
		objs, err := e.selectWorkloads(ctx, p, src, sel)
		if err != nil {
			return err
		}
		for _, u := range objs {
			t := p.target(u)
			if t.restarts {
				continue // chosen by an earlier selector too: rolled once
			}
			t.restarts = true
			checkUpdateStrategy(p, src, t)
			p.addFieldOp(t, src, []edit{{path: restartedAtPath, value: string(p.exp.UID),
				what: "the " + perfexpv1alpha1.AnnotationRestartedAt + " annotation of the pod template"}})
		}
	}
	return nil
}

// hasEnvironmentChange reports whether Prepare has anything to write: a variant, or workloads
// to roll for spec.freshPods.
func hasEnvironmentChange(exp *perfexpv1alpha1.PerfExperiment) bool {
	return exp.Spec.Variant != nil || exp.Spec.FreshPods != nil
}
