package charts_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// The chart README's values table lists every value of values.yaml (maps the chart passes
// through whole, such as resources, as one row), so a new value cannot ship undocumented.
func TestReadmeListsEveryValue(t *testing.T) {
	dir := filepath.Join(root(t), "charts", "perfexp")
	raw, err := os.ReadFile(filepath.Join(dir, "values.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	values := map[string]any{}
	if err := yaml.Unmarshal(raw, &values); err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile(filepath.Join(dir, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	whole := map[string]bool{"resources": true, "podSecurityContext": true, "securityContext": true}
	var walk func(prefix string, v any)
	walk = func(prefix string, v any) {
		if m, ok := v.(map[string]any); ok && len(m) > 0 && !whole[prefix] {
			for k, child := range m {
				walk(strings.TrimPrefix(prefix+"."+k, "."), child)
			}
			return
		}
		if !strings.Contains(string(readme), "| `"+prefix+"` |") {
			t.Errorf("charts/perfexp/README.md has no row for %s", prefix)
		}
	}
	walk("", values)
}
