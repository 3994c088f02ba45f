package charts_test

import (
	"strings"
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
		{name: "another prefix, every platform block on", values: map[string]any{
			"fullnameOverride":    "perf-b",
			"image":               map[string]any{"digest": "sha256:" + strings.Repeat("0f", 32)},
			"replicas":            2,
			"podDisruptionBudget": map[string]any{"enabled": true, "minAvailable": "50%"},
			"networkPolicy": map[string]any{"enabled": true, "metricsFrom": []any{map[string]any{
				"namespaceSelector": map[string]any{"matchLabels": map[string]any{"kubernetes.io/metadata.name": "monitoring"}}}}},
			"topologySpreadConstraints": []any{map[string]any{"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone", "whenUnsatisfiable": "ScheduleAnyway"}},
			"podSecurityContext":        map[string]any{"runAsNonRoot": true, "runAsUser": 1000700000, "fsGroup": 1000700000},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := render(t, tt.values)
			objs := append(r.objects, r.hooks...)
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
