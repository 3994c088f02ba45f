package charts_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"sigs.k8s.io/yaml"
)

// promtool is Prometheus' rule checker: PROMTOOL, else the one on the PATH.
func promtool(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("PROMTOOL"); p != "" {
		return p
	}
	p, err := exec.LookPath("promtool")
	if err != nil {
		t.Skip("no promtool on the PATH (set PROMTOOL): the PrometheusRule's alerts are not tested")
	}
	return p
}

// The chart's PrometheusRule, rendered as a Prometheus rule file, passes `promtool check rules`
// and the alert tests of testdata/rules/: each alert fires on the series that mean trouble, with
// its labels and annotations, and stays silent on the healthy ones and on another release's.
func TestPrometheusRuleAlerts(t *testing.T) {
	bin := promtool(t)
	// The runbook links are pinned so the fixture holds in a release commit too (its default
	// follows appVersion: TestAlertRunbooks).
	got := render(t, map[string]any{"prometheusRule": map[string]any{"enabled": true,
		"runbookBaseURL": "https://github.com/perfexp/perfexp/blob/main/docs/operations.md"}})
	rule := got.find("PrometheusRule", releaseNamespace, "perfexp-manager")
	if rule == nil {
		t.Fatal("no PrometheusRule rendered with prometheusRule.enabled=true")
	}
	data, err := yaml.Marshal(rule.Object["spec"])
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "rules.yaml"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	tests, err := os.ReadFile(filepath.Join("testdata", "rules", "perfexp_test.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "perfexp_test.yaml"), tests, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"check", "rules", "rules.yaml"}, {"test", "rules", "perfexp_test.yaml"}} {
		cmd := exec.Command(bin, args...)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Errorf("promtool %v: %v\n%s", args, err, out)
		}
	}
}

// The rule is created as the ServiceMonitor is: with prometheus-operator, unless forced.
func TestPrometheusRuleFollowsTheCluster(t *testing.T) {
	tests := []struct {
		name        string
		values      map[string]any
		apiVersions []string
		want        bool
	}{
		{name: "auto without prometheus-operator"},
		{name: "auto with prometheus-operator", apiVersions: []string{monitoringAPI}, want: true},
		{name: "forced off", values: map[string]any{"prometheusRule": map[string]any{"enabled": false}}, apiVersions: []string{monitoringAPI}},
		{name: "no metrics endpoint", values: map[string]any{"metrics": map[string]any{"port": 0}}, apiVersions: []string{monitoringAPI}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := len(render(t, tt.values, tt.apiVersions...).kinds("PrometheusRule")) == 1; got != tt.want {
				t.Errorf("PrometheusRule rendered: %v, want %v", got, tt.want)
			}
		})
	}
}
