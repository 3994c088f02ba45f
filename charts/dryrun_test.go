package charts_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/perfexp/perfexp/internal/testenv"
)

// What `helm template | kubectl apply --server-side --dry-run=server` checks, against a real
// kube-apiserver: every object the chart renders, in both RBAC forms, is accepted (schemas,
// CEL of the admission policies, RBAC references) without being stored.
func TestChartAppliesToAnAPIServer(t *testing.T) {
	env := testenv.Start(t)
	for _, ns := range []string{releaseNamespace, "library", "perfexp-demo"} {
		if err := env.Client.Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name   string
		values map[string]any
	}{
		{name: "cluster-wide RBAC"},
		{name: "per-namespace RBAC, every option set", values: map[string]any{
			"rbac":           map[string]any{"environmentPatch": map[string]any{"clusterWide": false, "namespaces": []any{"library", "perfexp-demo"}}},
			"access":         map[string]any{"allowedNamespaces": []any{"library"}, "allowedRunnerImages": []any{"grafana/k6:*"}},
			"replicas":       2,
			"podAnnotations": map[string]any{"example.com/team": "perf"},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			objs := render(t, tt.values).objects
			if len(objs) < 10 {
				t.Fatalf("only %d objects rendered", len(objs))
			}
			for _, o := range objs {
				err := env.Client.Apply(t.Context(), client.ApplyConfigurationFromUnstructured(o),
					client.DryRunAll, client.FieldOwner("helm"), client.ForceOwnership)
				if err != nil {
					t.Errorf("%s %s/%s refused: %v", o.GetKind(), o.GetNamespace(), o.GetName(), err)
				}
			}
		})
	}
}
