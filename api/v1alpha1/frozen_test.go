package v1alpha1_test

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/testenv"
)

// TestEveryFieldIsFrozen reads the frozen-spec admission policy and checks that it compares
// every field of the spec but abort, so a field added to the spec cannot be changed under a
// running experiment (spec.teardown once could: its image and service account were swapped
// during Running).
func TestEveryFieldIsFrozen(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(testenv.Root(), "config", "policy", "spec_frozen.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var policy struct {
		Spec struct {
			Validations []struct {
				Expression string `json:"expression"`
			} `json:"validations"`
		} `json:"spec"`
	}
	if err := yaml.Unmarshal([]byte(strings.Split(string(data), "\n---\n")[0]), &policy); err != nil {
		t.Fatal(err)
	}
	if len(policy.Spec.Validations) == 0 {
		t.Fatal("the policy has no validations")
	}
	expr := policy.Spec.Validations[0].Expression
	spec := reflect.TypeOf(perfexpv1alpha1.PerfExperimentSpec{})
	for i := range spec.NumField() {
		name, _, _ := strings.Cut(spec.Field(i).Tag.Get("json"), ",")
		if name == "abort" {
			continue
		}
		optional := "object.spec.?" + name + " == oldObject.spec.?" + name
		required := "object.spec." + name + " == oldObject.spec." + name
		if !strings.Contains(expr, optional) && !strings.Contains(expr, required) {
			t.Errorf("spec.%s is not frozen: config/policy/spec_frozen.yaml does not compare it", name)
		}
	}
}
