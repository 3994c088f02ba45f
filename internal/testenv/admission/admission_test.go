package admission_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/perfexp/perfexp/internal/testenv"
	"github.com/perfexp/perfexp/internal/testenv/admission"
)

// The in-process admission must answer as the API server does. api/v1alpha1's TestValidation
// sends the same manifests to a real kube-apiserver and checks the same messages; here they
// run through this package instead, so a difference between the two shows as one test failing
// and the other passing.
func TestAdmissionAgreesWithTheAPIServer(t *testing.T) {
	crds := map[string]*admission.CRD{}
	for kind, file := range map[string]string{"PerfExperiment": "perfexp.dev_perfexperiments.yaml", "PerfSweep": "perfexp.dev_perfsweeps.yaml", "PerfHistory": "perfexp.dev_perfhistories.yaml"} {
		crd, err := admission.Load(filepath.Join(testenv.Root(), "config", "crd", "bases", file))
		if err != nil {
			t.Fatal(err)
		}
		crds[kind] = crd
	}
	admit := func(t *testing.T, file string) (string, string) {
		t.Helper()
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		var want string
		for _, line := range strings.Split(string(data), "\n") {
			if rest, ok := strings.CutPrefix(line, "# want: "); ok {
				want = rest
			}
		}
		obj := &unstructured.Unstructured{}
		if err := yaml.Unmarshal(data, &obj.Object); err != nil {
			t.Fatal(err)
		}
		obj.SetNamespace("team")
		crd := crds[obj.GetKind()]
		if crd == nil {
			t.Fatalf("kind %q", obj.GetKind())
		}
		if errs := crd.Create(t.Context(), obj); len(errs) > 0 {
			return errs.ToAggregate().Error(), want
		}
		return "", want
	}

	invalid, _ := filepath.Glob(filepath.Join(testenv.Root(), "api", "v1alpha1", "testdata", "invalid", "*.yaml"))
	if len(invalid) < 25 {
		t.Fatalf("found %d invalid manifests", len(invalid))
	}
	for _, file := range invalid {
		t.Run(filepath.Base(file), func(t *testing.T) {
			got, want := admit(t, file)
			if !strings.Contains(got, want) {
				t.Fatalf("answer %q does not contain %q", got, want)
			}
		})
	}
	samples, _ := filepath.Glob(filepath.Join(testenv.Root(), "config", "samples", "perfexp_*.yaml"))
	for _, file := range samples {
		t.Run(filepath.Base(file), func(t *testing.T) {
			if got, _ := admit(t, file); got != "" {
				t.Fatalf("sample refused: %s", got)
			}
		})
	}
}

// BenchmarkCreate is the cost of one admission of the largest sample, what each fuzz input
// pays before the operator's checks.
func BenchmarkCreate(b *testing.B) {
	crd, err := admission.Load(filepath.Join(testenv.Root(), "config", "crd", "bases", "perfexp.dev_perfexperiments.yaml"))
	if err != nil {
		b.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(testenv.Root(), "config", "samples", "perfexp_v1alpha1_kafka_kraft.yaml"))
	if err != nil {
		b.Fatal(err)
	}
	sample := &unstructured.Unstructured{}
	if err := yaml.Unmarshal(data, &sample.Object); err != nil {
		b.Fatal(err)
	}
	sample.SetNamespace("team")
	for b.Loop() {
		if errs := crd.Create(b.Context(), sample.DeepCopy()); len(errs) > 0 {
			b.Fatal(errs)
		}
	}
}
