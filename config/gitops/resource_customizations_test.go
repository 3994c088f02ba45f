package gitops_test

import (
	"os"
	"path/filepath"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

// healthTests is argo-cd's health_test.yaml: each input and the health its check must give.
type healthTests struct {
	Tests []struct {
		HealthStatus struct {
			Status  string `json:"status"`
			Message string `json:"message"`
		} `json:"healthStatus"`
		InputPath string `json:"inputPath"`
	} `json:"tests"`
}

// resource_customizations/<group>/<Kind>/ is the layout argo-cd keeps its built-in checks in
// and tests them by (health.lua, health_test.yaml, testdata/): every case there gives exactly
// its status and message, as argo-cd's own harness asserts, and health.lua is byte for byte
// the check argocd-cm.yaml carries, so the two ways of installing it cannot drift apart.
func TestResourceCustomizations(t *testing.T) {
	data, err := os.ReadFile("argocd-cm.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var cm corev1.ConfigMap
	if err := yaml.Unmarshal(data, &cm); err != nil {
		t.Fatal(err)
	}
	dirs, err := filepath.Glob(filepath.Join("resource_customizations", "*", "*"))
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]bool{}
	for _, dir := range dirs {
		group, kind := filepath.Base(filepath.Dir(dir)), filepath.Base(dir)
		kinds[group+"_"+kind] = true
		t.Run(group+"/"+kind, func(t *testing.T) {
			script, err := os.ReadFile(filepath.Join(dir, "health.lua"))
			if err != nil {
				t.Fatal(err)
			}
			if got := cm.Data["resource.customizations.health."+group+"_"+kind]; got != string(script) {
				t.Errorf("argocd-cm.yaml's health check for %s/%s is not %s/health.lua", group, kind, dir)
			}
			raw, err := os.ReadFile(filepath.Join(dir, "health_test.yaml"))
			if err != nil {
				t.Fatal(err)
			}
			var cases healthTests
			if err := yaml.UnmarshalStrict(raw, &cases); err != nil {
				t.Fatal(err)
			}
			if len(cases.Tests) == 0 {
				t.Fatal("health_test.yaml has no tests")
			}
			for _, c := range cases.Tests {
				t.Run(c.InputPath, func(t *testing.T) {
					input, err := os.ReadFile(filepath.Join(dir, c.InputPath))
					if err != nil {
						t.Fatal(err)
					}
					var obj map[string]any
					if err := yaml.Unmarshal(input, &obj); err != nil {
						t.Fatal(err)
					}
					status, message := health(t, string(script), obj)
					if status != c.HealthStatus.Status || message != c.HealthStatus.Message {
						t.Errorf("got %s %q, want %s %q", status, message, c.HealthStatus.Status, c.HealthStatus.Message)
					}
				})
			}
		})
	}
	for key := range cm.Data {
		const prefix = "resource.customizations.health."
		if len(key) > len(prefix) && key[:len(prefix)] == prefix && !kinds[key[len(prefix):]] {
			t.Errorf("argocd-cm.yaml has %s with no resource_customizations folder", key)
		}
	}
}
