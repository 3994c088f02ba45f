package controllers_test

import (
	"context"
	"testing"

	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/perfexp/perfexp/controllers"
	"github.com/perfexp/perfexp/internal/testenv"
)

type recordingJanitor struct{ forgotten []types.NamespacedName }

func (j *recordingJanitor) Forget(_ context.Context, _ client.Client, key types.NamespacedName) error {
	j.forgotten = append(j.forgotten, key)
	return nil
}

// An experiment that is gone has its dashboards in other namespaces deleted by the analysis'
// janitor; without one, the reconcile of a gone experiment is simply done.
func TestGoneExperimentsDashboardsAreForgotten(t *testing.T) {
	key := types.NamespacedName{Namespace: "perf", Name: "gone"}
	c := fake.NewClientBuilder().WithScheme(testenv.Scheme()).Build()
	tests := []struct {
		name    string
		janitor *recordingJanitor
	}{
		{name: "with a janitor", janitor: &recordingJanitor{}},
		{name: "without one"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &controllers.PerfExperimentReconciler{Client: c}
			if tt.janitor != nil {
				r.Dashboards = tt.janitor
			}
			res, err := r.Reconcile(t.Context(), ctrl.Request{NamespacedName: key})
			if err != nil || res != (ctrl.Result{}) {
				t.Fatalf("Reconcile: %+v, %v", res, err)
			}
			if tt.janitor != nil && (len(tt.janitor.forgotten) != 1 || tt.janitor.forgotten[0] != key) {
				t.Errorf("forgotten %v, want %v", tt.janitor.forgotten, key)
			}
		})
	}
}
