package access_test

import (
	"os"
	"reflect"
	"strings"
	"testing"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
)

// The admission policy lets a spec.abort-only update through unchecked by comparing every
// other spec field of the old and new object. A field added to either kind and missing from
// that list would let its changes through unchecked too; this test names it.
func TestNoEscalationComparesEverySpecFieldButAbort(t *testing.T) {
	raw, err := os.ReadFile("../../config/policy/no_escalation.yaml")
	if err != nil {
		t.Fatal(err)
	}
	policy := string(raw)
	for _, spec := range []any{perfexpv1alpha1.PerfExperimentSpec{}, perfexpv1alpha1.PerfSweepSpec{}} {
		typ := reflect.TypeOf(spec)
		for i := range typ.NumField() {
			name, _, _ := strings.Cut(typ.Field(i).Tag.Get("json"), ",")
			if name == "" || name == "abort" {
				continue
			}
			if want := "object.spec.?" + name + " == oldObject.spec.?" + name; !strings.Contains(policy, want) {
				t.Errorf("%s.%s: the policy's match condition does not compare it (want %q)", typ.Name(), name, want)
			}
		}
	}
}
