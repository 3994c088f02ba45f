package metrics

import (
	"testing"

	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
)

// Record reaches controller-runtime's registry, the one the manager's /metrics serves.
func TestRecordIsServedByTheManagersRegistry(t *testing.T) {
	e := exp("served", []perfexpv1alpha1.Phase{perfexpv1alpha1.PhaseQueued, perfexpv1alpha1.PhaseRunning}, []int{0, 42})
	before := e.DeepCopy()
	before.Status.PhaseHistory = before.Status.PhaseHistory[:1]
	before.Status.Phase = perfexpv1alpha1.PhaseQueued
	Record(before, e, "served-queue")
	t.Cleanup(func() {
		gone := e.DeepCopy()
		gone.DeletionTimestamp = &gone.Status.PhaseHistory[0].Time
		Record(e, gone, "served-queue")
	})

	families, err := ctrlmetrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{"perfexp_experiments": false, "perfexp_queue_wait_seconds": false, "perfexp_experiment_info": false}
	for _, f := range families {
		if _, ok := want[f.GetName()]; ok {
			want[f.GetName()] = true
		}
	}
	for name, found := range want {
		if !found {
			t.Errorf("%s is not in controller-runtime's registry", name)
		}
	}
}
