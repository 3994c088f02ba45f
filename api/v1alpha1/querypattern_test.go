package v1alpha1_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/testenv"
)

// The CEL rule on a custom query is written in a marker, which cannot name a Go constant; the
// operator's check is tested against QueryPattern (internal/analysis FuzzRenderQuery), so the
// rule the API server runs must be that pattern, in both kinds that hold queries.
func TestQueryRuleIsQueryPattern(t *testing.T) {
	rule := "self.matches('" + perfexpv1alpha1.QueryPattern + "')"
	for _, crd := range []string{"perfexp.dev_perfexperiments.yaml", "perfexp.dev_perfsweeps.yaml"} {
		data, err := os.ReadFile(filepath.Join(testenv.Root(), "config", "crd", "bases", crd))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(data), rule) {
			t.Errorf("%s has no rule %s", crd, rule)
		}
	}
}
