package admission_test

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/perfexp/perfexp/internal/admission"
)

// The CRDs built into the binary admit as the files do: defaults filled in, rules enforced,
// and an unknown kind is named with the kinds there are.
func TestForKind(t *testing.T) {
	crd, err := admission.ForKind("PerfSweep")
	if err != nil {
		t.Fatal(err)
	}
	sweep := func(spec map[string]any) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "perfexp.dev/v1alpha1", "kind": "PerfSweep",
			"metadata": map[string]any{"name": "s", "namespace": "ns"}, "spec": spec}}
	}
	template := map[string]any{"load": map[string]any{"scenarios": []any{map[string]any{"name": "s", "script": map[string]any{"inline": "x"},
		"vus": int64(1), "duration": "1m"}}}, "timeouts": map[string]any{}}
	ok := sweep(map[string]any{"template": template, "arms": []any{map[string]any{"name": "a", "load": map[string]any{"vus": int64(2)}}}})
	if errs := crd.Create(t.Context(), ok); len(errs) > 0 {
		t.Fatalf("refused: %v", errs)
	}
	if got, _, _ := unstructured.NestedString(ok.Object, "spec", "template", "timeouts", "rollout"); got != "10m" {
		t.Errorf("timeouts.rollout defaulted to %q, want the CRD's 10m", got)
	}
	if got, _, _ := unstructured.NestedString(ok.Object, "spec", "order"); got != "Randomized" {
		t.Errorf("order defaulted to %q, want Randomized", got)
	}
	errs := crd.Create(t.Context(), sweep(map[string]any{"template": template}))
	if len(errs) == 0 || !strings.Contains(errs.ToAggregate().Error(), "a sweep needs something to compare") {
		t.Errorf("a sweep without arms: %v, want the CEL rule's message", errs)
	}
	if _, err := admission.ForKind("PerfThing"); err == nil || !strings.Contains(err.Error(), "PerfExperiment") {
		t.Errorf("unknown kind: %v, want the kinds there are", err)
	}
}
