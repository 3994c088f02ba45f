package access

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

func TestPlacement(t *testing.T) {
	tol := func(key string, op corev1.TolerationOperator, value string, effect corev1.TaintEffect) corev1.Toleration {
		return corev1.Toleration{Key: key, Operator: op, Value: value, Effect: effect}
	}
	loadgen := tol("dedicated", corev1.TolerationOpEqual, "loadgen", corev1.TaintEffectNoSchedule)
	tests := []struct {
		name      string
		rules     Placement
		selector  map[string]string
		tolerates []corev1.Toleration
		refused   string // part of the refusal; empty: allowed
	}{
		{name: "nothing asked, nothing allowed"},
		{name: "by default no toleration", tolerates: []corev1.Toleration{loadgen}, refused: `may not tolerate "dedicated=loadgen:NoSchedule"; allowed: none`},
		{name: "by default any node selector", selector: map[string]string{"pool": "loadgen"}},
		{name: "the listed toleration", rules: Placement{Tolerations: []string{"dedicated=loadgen:NoSchedule"}}, tolerates: []corev1.Toleration{loadgen}},
		{name: "another value of the listed key", rules: Placement{Tolerations: []string{"dedicated=loadgen:NoSchedule"}},
			tolerates: []corev1.Toleration{tol("dedicated", corev1.TolerationOpEqual, "billing", corev1.TaintEffectNoSchedule)}, refused: `"dedicated=billing:NoSchedule"`},
		{name: "Exists where a value is listed", rules: Placement{Tolerations: []string{"dedicated=loadgen"}},
			tolerates: []corev1.Toleration{tol("dedicated", corev1.TolerationOpExists, "", corev1.TaintEffectNoSchedule)}, refused: "may not tolerate"},
		{name: "any effect where one is listed", rules: Placement{Tolerations: []string{"dedicated=loadgen:NoSchedule"}},
			tolerates: []corev1.Toleration{tol("dedicated", corev1.TolerationOpEqual, "loadgen", "")}, refused: "may not tolerate"},
		{name: "a key listed without value or effect", rules: Placement{Tolerations: []string{"dedicated"}},
			tolerates: []corev1.Toleration{tol("dedicated", corev1.TolerationOpExists, "", "")}},
		{name: "the tolerate-everything toleration needs *", rules: Placement{Tolerations: []string{"dedicated"}},
			tolerates: []corev1.Toleration{tol("", corev1.TolerationOpExists, "", "")}, refused: `"every taint"`},
		{name: "* allows any", rules: Placement{Tolerations: []string{"*"}}, tolerates: []corev1.Toleration{tol("", corev1.TolerationOpExists, "", "")}},
		{name: "a listed selector", rules: Placement{NodeSelectors: []string{"pool=loadgen"}}, selector: map[string]string{"pool": "loadgen"}},
		{name: "a selector outside the list", rules: Placement{NodeSelectors: []string{"pool=loadgen"}}, selector: map[string]string{"kubernetes.io/hostname": "db-0"},
			refused: "may not select nodes by kubernetes.io/hostname=db-0"},
		{name: "a selector key with any value", rules: Placement{NodeSelectors: []string{"pool=*", "zone"}}, selector: map[string]string{"pool": "x", "zone": "a"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ref := tt.rules.Check("the load's pods", tt.selector, tt.tolerates)
			switch {
			case tt.refused == "" && ref != nil:
				t.Errorf("refused: %s", ref.Message)
			case tt.refused != "" && (ref == nil || !strings.Contains(ref.Message, tt.refused)):
				t.Errorf("got %v, want a refusal saying %q", ref, tt.refused)
			}
		})
	}
}
