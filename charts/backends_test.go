package charts_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/perfexp/perfexp/internal/backend"
)

// prometheusAuth mounts the administrator's http_config Secret where the flag points and
// renders the tenant map into a ConfigMap the operator's own parser reads; a misspelt key or a
// bad header name is refused.
func TestPrometheusAuthValues(t *testing.T) {
	r := render(t, set(t, "prometheusAuth.httpConfigSecret=mimir-auth", "prometheusAuth.tenants.shop=team-shop", "prometheusAuth.tenants.payments=team-pay"))
	deploy := r.find("Deployment", releaseNamespace, "perfexp-manager")
	args := strings.Join(stringArgs(container(t, deploy)), " ")
	for _, want := range []string{"--prometheus-http-config-file=/etc/perfexp/prometheus/http.yaml", "--prometheus-tenants-file=/etc/perfexp/tenants/tenants.yaml", "--prometheus-tenant-header=X-Scope-OrgID"} {
		if !strings.Contains(args, want) {
			t.Errorf("args %s lack %s", args, want)
		}
	}
	mounts := map[string]string{}
	for _, m := range container(t, deploy)["volumeMounts"].([]any) {
		mm := m.(map[string]any)
		mounts[mm["name"].(string)] = mm["mountPath"].(string)
	}
	vols, _, _ := unstructured.NestedSlice(deploy.Object, "spec", "template", "spec", "volumes")
	sources := map[string]string{}
	for _, v := range vols {
		vm := v.(map[string]any)
		if s, ok := vm["secret"].(map[string]any); ok {
			sources[vm["name"].(string)] = "secret/" + s["secretName"].(string)
		}
		if c, ok := vm["configMap"].(map[string]any); ok {
			sources[vm["name"].(string)] = "configmap/" + c["name"].(string)
		}
	}
	if mounts["prometheus-auth"] != "/etc/perfexp/prometheus" || sources["prometheus-auth"] != "secret/mimir-auth" ||
		mounts["prometheus-tenants"] != "/etc/perfexp/tenants" || sources["prometheus-tenants"] != "configmap/perfexp-manager-tenants" {
		t.Fatalf("mounts %v, volumes %v", mounts, sources)
	}
	cm := r.find("ConfigMap", releaseNamespace, "perfexp-manager-tenants")
	if cm == nil {
		t.Fatal("no tenants ConfigMap")
	}
	data, _, _ := unstructured.NestedString(cm.Object, "data", "tenants.yaml")
	f := filepath.Join(t.TempDir(), "tenants.yaml")
	if err := os.WriteFile(f, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	m, err := backend.LoadTenantsFile(f)
	if err != nil || m["shop"] != "team-shop" || m["payments"] != "team-pay" || len(m) != 2 {
		t.Fatalf("the operator reads %v, %v from\n%s", m, err, data)
	}

	plain := render(t, nil)
	if args := strings.Join(stringArgs(container(t, plain.find("Deployment", releaseNamespace, "perfexp-manager"))), " "); strings.Contains(args, "--prometheus-tenant") || strings.Contains(args, "--prometheus-http-config-file") {
		t.Errorf("the defaults render %s", args)
	}
	for _, bad := range [][]string{{"prometheusAuth.httpConfigSecrets=x"}, {"prometheusAuth.tenantHeader=X Scope"}} {
		if _, err := renderRelease(t, releaseName, releaseNamespace, set(t, bad...)); err == nil {
			t.Errorf("--set %s rendered", bad[0])
		}
	}
}
