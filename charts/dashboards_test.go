package charts_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"sigs.k8s.io/yaml"
)

// The overview and sweep dashboards render as ConfigMaps for Grafana's sidecar when
// grafana.staticDashboards.enabled, with the configured label, namespace and folder, holding
// exactly config/grafana's files; by default the chart renders none.
func TestStaticDashboards(t *testing.T) {
	tests := []struct {
		name       string
		values     map[string]any
		namespace  string
		label      [2]string
		folder     string
		configMaps int
	}{
		{name: "off by default", values: nil},
		{name: "kube-prometheus-stack's defaults in the release namespace",
			values:    map[string]any{"grafana": map[string]any{"staticDashboards": map[string]any{"enabled": true}}},
			namespace: releaseNamespace, label: [2]string{"grafana_dashboard", "1"}, configMaps: 2},
		{name: "Grafana's namespace, own label, a folder",
			values: map[string]any{"grafana": map[string]any{"staticDashboards": map[string]any{"enabled": true},
				"dashboards": map[string]any{"namespace": "monitoring", "label": "team_dashboard", "labelValue": "perf", "folderAnnotation": "grafana_folder", "folder": "Performance"}}},
			namespace: "monitoring", label: [2]string{"team_dashboard", "perf"}, folder: "Performance", configMaps: 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var found int
			for _, cm := range render(t, tt.values).kinds("ConfigMap") {
				file := map[string]string{"perfexp-dashboard-overview": "overview.json", "perfexp-dashboard-sweep": "sweep.json"}[cm.GetName()]
				if file == "" {
					continue
				}
				found++
				if cm.GetNamespace() != tt.namespace || cm.GetLabels()[tt.label[0]] != tt.label[1] {
					t.Errorf("%s in %q with labels %v", cm.GetName(), cm.GetNamespace(), cm.GetLabels())
				}
				if tt.folder != "" && cm.GetAnnotations()["grafana_folder"] != tt.folder {
					t.Errorf("%s annotations %v", cm.GetName(), cm.GetAnnotations())
				}
				data, _ := cm.Object["data"].(map[string]any)
				got, _ := data["perfexp-"+file].(string)
				want, err := os.ReadFile(filepath.Join(root(t), "config", "grafana", file))
				if err != nil {
					t.Fatal(err)
				}
				var gotJSON, wantJSON any
				if err := json.Unmarshal([]byte(got), &gotJSON); err != nil {
					t.Fatalf("%s holds no JSON dashboard: %v", cm.GetName(), err)
				}
				_ = json.Unmarshal(want, &wantJSON)
				if string(mustJSON(t, gotJSON)) != string(mustJSON(t, wantJSON)) {
					t.Errorf("%s differs from config/grafana/%s", cm.GetName(), file)
				}
			}
			if found != tt.configMaps {
				t.Errorf("%d dashboard ConfigMaps, want %d", found, tt.configMaps)
			}
		})
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// The perfexp values of docs/dashboards.md install as written: the manager gets the dashboard
// flags and the static dashboards land in Grafana's namespace.
func TestDashboardsDocValues(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join(root(t), "docs", "dashboards.md"))
	if err != nil {
		t.Fatal(err)
	}
	blocks := regexp.MustCompile("(?s)```yaml\n(# perfexp values.*?)```").FindSubmatch(doc)
	if blocks == nil {
		t.Fatal("docs/dashboards.md has no perfexp values block")
	}
	values := map[string]any{}
	if err := yaml.Unmarshal(blocks[1], &values); err != nil {
		t.Fatal(err)
	}
	r := render(t, values, monitoringAPI)
	o, _ := managerArgs(t, stringArgs(container(t, r.find("Deployment", releaseNamespace, "perfexp-manager"))))
	d := o.Dashboards
	if !d.Enabled || d.Namespace != "monitoring" || d.BaseURL != "https://grafana.example.com" || d.FolderAnnotation != "grafana_folder" {
		t.Errorf("dashboard options from the documented values: %+v", d)
	}
	for _, name := range []string{"perfexp-dashboard-overview", "perfexp-dashboard-sweep"} {
		if cm := r.find("ConfigMap", "monitoring", name); cm == nil || cm.GetLabels()["grafana_dashboard"] != "1" {
			t.Errorf("ConfigMap monitoring/%s with grafana_dashboard=1 not rendered", name)
		}
	}
	if sm := r.find("ServiceMonitor", releaseNamespace, "perfexp-manager"); sm == nil || sm.GetLabels()["release"] != "kube-prometheus-stack" {
		t.Errorf("the ServiceMonitor the phase annotations need is missing or unlabelled")
	}
}
