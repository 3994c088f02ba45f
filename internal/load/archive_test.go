package load

import (
	"strings"
	"testing"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
)

// k6 archives cannot be wrapped by the entry script, so they are refused with a reason rather
// than run without tags, segments or summaries.
func TestScriptConfigMapRefusesArchives(t *testing.T) {
	exp := &perfexpv1alpha1.PerfExperiment{}
	exp.Name, exp.Namespace = "archive", "perf"
	sc := &perfexpv1alpha1.Scenario{Name: "docs", FromScript: true}
	files := scriptFiles{binary: map[string][]byte{"test.tar": []byte("archive")}, main: "test.tar"}
	_, err := scriptConfigMap(exp, unit{name: "docs", sc: sc, parallelism: 1, fromScript: true}, files, false)
	if err == nil || !strings.Contains(err.Error(), "k6 archive") {
		t.Fatalf("scriptConfigMap() error %v, want the archive refused", err)
	}
}
