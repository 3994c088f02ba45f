package argocdhealth

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"testing"
	"time"

	appv1 "github.com/argoproj/argo-cd/v3/pkg/apis/application/v1alpha1"
	"github.com/argoproj/argo-cd/v3/util/lua"
	"github.com/argoproj/argo-cd/v3/util/settings"
	"github.com/argoproj/gitops-engine/pkg/health"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes/fake"
	kstatus "sigs.k8s.io/cli-utils/pkg/kstatus/status"
	"sigs.k8s.io/yaml"
)

// gitops is perfexp's config/gitops; the default holds when the test runs in this folder (as
// `go test` and `make argocd-health` run it).
var gitops = flag.String("gitops", filepath.Join("..", "..", "config", "gitops"), "perfexp's config/gitops folder")

// healthTests is a health_test.yaml of argo-cd's resource_customizations layout.
type healthTests struct {
	Tests []struct {
		HealthStatus struct {
			Status  string `json:"status"`
			Message string `json:"message"`
		} `json:"healthStatus"`
		InputPath string `json:"inputPath"`
	} `json:"tests"`
}

// customization is one resource_customizations/<group>/<Kind> folder.
type customization struct {
	dir, group, kind string
	script           string
	cases            healthTests
}

func customizations(t *testing.T) []customization {
	t.Helper()
	dirs, err := filepath.Glob(filepath.Join(*gitops, "resource_customizations", "*", "*"))
	if err != nil {
		t.Fatal(err)
	}
	if len(dirs) == 0 {
		t.Fatalf("no resource_customizations/<group>/<Kind> under %s", *gitops)
	}
	sort.Strings(dirs)
	out := make([]customization, 0, len(dirs))
	for _, dir := range dirs {
		c := customization{dir: dir, group: filepath.Base(filepath.Dir(dir)), kind: filepath.Base(dir)}
		script, err := os.ReadFile(filepath.Join(dir, "health.lua"))
		if err != nil {
			t.Fatal(err)
		}
		c.script = string(script)
		raw, err := os.ReadFile(filepath.Join(dir, "health_test.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		if err := yaml.UnmarshalStrict(raw, &c.cases); err != nil {
			t.Fatalf("%s/health_test.yaml: %v", dir, err)
		}
		if len(c.cases.Tests) == 0 {
			t.Fatalf("%s/health_test.yaml has no tests", dir)
		}
		out = append(out, c)
	}
	return out
}

func readObject(t *testing.T, path string) *unstructured.Unstructured {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// Through JSON, as a live object reaches Argo CD and kstatus from the API server: integers
	// decode as int64, which kstatus needs for metadata.generation.
	data, err := yaml.YAMLToJSON(raw)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	obj := &unstructured.Unstructured{}
	if err := obj.UnmarshalJSON(data); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return obj
}

// argoHealth is the health Argo CD's application controller gives obj with these resource
// overrides: the call controller/health.go makes for every live resource of an Application.
func argoHealth(t *testing.T, obj *unstructured.Unstructured, overrides map[string]appv1.ResourceOverride) *health.HealthStatus {
	t.Helper()
	hs, err := health.GetResourceHealth(obj, lua.ResourceHealthOverrides(overrides))
	if err != nil {
		t.Fatalf("Argo CD's health assessment: %v", err)
	}
	if hs == nil {
		t.Fatalf("Argo CD has no health check for %s", obj.GroupVersionKind())
	}
	return hs
}

// Every testdata object of resource_customizations gets, from Argo CD's Lua VM, exactly the
// status and message its health_test.yaml names, health.lua given to Argo CD as the
// ResourceOverride it builds from argocd-cm's resource.customizations.health.<group>_<Kind>.
func TestResourceCustomizationsInArgoCD(t *testing.T) {
	for _, c := range customizations(t) {
		overrides := map[string]appv1.ResourceOverride{c.group + "/" + c.kind: {HealthLua: c.script}}
		for _, tc := range c.cases.Tests {
			t.Run(c.kind+"/"+tc.InputPath, func(t *testing.T) {
				obj := readObject(t, filepath.Join(c.dir, tc.InputPath))
				hs := argoHealth(t, obj, overrides)
				// kstatus is shown beside, not asserted: most testdata objects carry only the
				// fields the health check reads, not the kstatus conditions the operator writes.
				k, err := kstatus.Compute(obj)
				if err != nil {
					t.Fatal(err)
				}
				t.Logf("Argo CD: %s %q; kstatus (conditions %v): %s %q", hs.Status, hs.Message, conditionTypes(obj), k.Status, k.Message)
				if string(hs.Status) != tc.HealthStatus.Status || hs.Message != tc.HealthStatus.Message {
					t.Errorf("Argo CD gives %s %q, health_test.yaml wants %s %q", hs.Status, hs.Message, tc.HealthStatus.Status, tc.HealthStatus.Message)
				}
			})
		}
	}
}

// conditionTypes are the types of obj's status.conditions, in order.
func conditionTypes(obj *unstructured.Unstructured) []string {
	conditions, _, _ := unstructured.NestedSlice(obj.Object, "status", "conditions")
	types := make([]string, 0, len(conditions))
	for _, c := range conditions {
		if m, ok := c.(map[string]any); ok {
			types = append(types, fmt.Sprint(m["type"]))
		}
	}
	return types
}

// argocd-cm.yaml, merged into an installed argocd-cm (which carries Argo CD's part-of label),
// is read by Argo CD's settings manager into the same overrides, and they give the same
// health to every testdata object.
func TestArgoCDConfigMapInArgoCD(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(*gitops, "argocd-cm.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	cm := &corev1.ConfigMap{}
	if err := yaml.Unmarshal(raw, cm); err != nil {
		t.Fatal(err)
	}
	if cm.Labels == nil {
		cm.Labels = map[string]string{}
	}
	cm.Labels["app.kubernetes.io/part-of"] = "argocd"
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	mgr := settings.NewSettingsManager(ctx, fake.NewClientset(cm), cm.Namespace)
	overrides, err := mgr.GetResourceOverrides()
	if err != nil {
		t.Fatalf("Argo CD's settings manager: %v", err)
	}
	for _, c := range customizations(t) {
		key := c.group + "/" + c.kind
		if overrides[key].HealthLua != c.script {
			t.Errorf("Argo CD reads no health check for %s from argocd-cm.yaml equal to %s/health.lua", key, c.dir)
			continue
		}
		for _, tc := range c.cases.Tests {
			t.Run(c.kind+"/"+tc.InputPath, func(t *testing.T) {
				hs := argoHealth(t, readObject(t, filepath.Join(c.dir, tc.InputPath)), overrides)
				if string(hs.Status) != tc.HealthStatus.Status || hs.Message != tc.HealthStatus.Message {
					t.Errorf("Argo CD gives %s %q, health_test.yaml wants %s %q", hs.Status, hs.Message, tc.HealthStatus.Status, tc.HealthStatus.Message)
				}
			})
		}
	}
}

// A PerfExperiment that ended with a Regressed comparison under failOnRegression (verdict Fail,
// the Stalled condition the operator writes) is Degraded in Argo CD and Failed in kstatus.
func TestRegressedUnderFailOnRegression(t *testing.T) {
	dir := filepath.Join(*gitops, "resource_customizations", "perfexp.dev", "PerfExperiment")
	path := filepath.Join(dir, "testdata", "succeeded-fail.yaml")
	obj := readObject(t, path)
	for _, f := range []struct {
		want   any
		fields []string
	}{
		{true, []string{"spec", "analysis", "failOnRegression"}},
		{"Regressed", []string{"status", "comparison", "change"}},
		{"Succeeded", []string{"status", "phase"}},
		{"Fail", []string{"status", "verdict"}},
	} {
		got, _, _ := unstructured.NestedFieldNoCopy(obj.Object, f.fields...)
		if got != f.want {
			t.Fatalf("%s: %v is %v, not %v: not the object this test is about", path, f.fields, got, f.want)
		}
	}
	script, err := os.ReadFile(filepath.Join(dir, "health.lua"))
	if err != nil {
		t.Fatal(err)
	}
	hs := argoHealth(t, obj, map[string]appv1.ResourceOverride{"perfexp.dev/PerfExperiment": {HealthLua: string(script)}})
	t.Logf("%s: Argo CD %s %q", path, hs.Status, hs.Message)
	if hs.Status != health.HealthStatusDegraded {
		t.Errorf("Argo CD health %s (%s), want %s", hs.Status, hs.Message, health.HealthStatusDegraded)
	}
	res, err := kstatus.Compute(obj)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s: kstatus %s %q", path, res.Status, res.Message)
	if res.Status != kstatus.FailedStatus {
		t.Errorf("kstatus %s (%s), want %s", res.Status, res.Message, kstatus.FailedStatus)
	}
}
