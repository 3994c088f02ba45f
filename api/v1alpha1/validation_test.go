package v1alpha1_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/testenv"
	"github.com/perfexp/perfexp/internal/testexp"
)

// These tests send manifests to a real kube-apiserver with perfexp's CRD installed, the way
// `kubectl apply` would, and check that bad input is refused with a message a person
// understands and that the samples users copy are accepted.

func TestValidation(t *testing.T) {
	env := testenv.Start(t)
	ns := env.Namespace(t, "validation")

	t.Run("invalid manifests are refused with a clear message", func(t *testing.T) {
		files, err := filepath.Glob("testdata/invalid/*.yaml")
		if err != nil || len(files) < 25 {
			t.Fatalf("want at least 25 invalid manifests, found %d (%v)", len(files), err)
		}
		for _, file := range files {
			t.Run(strings.TrimSuffix(filepath.Base(file), ".yaml"), func(t *testing.T) {
				obj, want := readManifest(t, file)
				obj.SetNamespace(ns)
				err := env.Client.Create(t.Context(), obj, client.DryRunAll)
				if err == nil {
					t.Fatalf("the API server accepted the manifest; want an error containing %q", want)
				}
				if !strings.Contains(err.Error(), want) {
					t.Fatalf("error %q does not contain %q", err, want)
				}
			})
		}
	})

	t.Run("samples are accepted", func(t *testing.T) {
		files, err := filepath.Glob(filepath.Join(testenv.Root(), "config", "samples", "perfexp_*.yaml"))
		if err != nil || len(files) < 4 {
			t.Fatalf("want the reference samples, found %d (%v)", len(files), err)
		}
		for _, file := range files {
			t.Run(filepath.Base(file), func(t *testing.T) {
				obj, _ := readManifest(t, file)
				obj.SetNamespace(ns)
				if err := env.Client.Create(t.Context(), obj); err != nil {
					t.Fatalf("sample refused: %v", err)
				}
			})
		}
	})

	t.Run("defaults are filled in", func(t *testing.T) {
		exp := minimal(ns, "defaults")
		exp.Spec.Timeouts = &perfexpv1alpha1.Timeouts{}
		if err := env.Client.Create(t.Context(), exp); err != nil {
			t.Fatal(err)
		}
		s := exp.Spec
		if s.Load.Runner != perfexpv1alpha1.RunnerJob || s.Load.Scenarios[0].Parallelism != 1 ||
			s.Timeouts.Rollout == nil || s.Timeouts.Rollout.Duration.String() != "10m0s" {
			t.Fatalf("defaults not applied: runner=%q parallelism=%d rollout=%v", s.Load.Runner, s.Load.Scenarios[0].Parallelism, s.Timeouts.Rollout)
		}
	})

	t.Run("values at the bounds are accepted", func(t *testing.T) {
		exp := minimal(ns, "bounds")
		sc := &exp.Spec.Load.Scenarios[0]
		sc.Duration, sc.StartDelay = duration("168h"), duration("0s")
		exp.Spec.Timeouts = &perfexpv1alpha1.Timeouts{
			Rollout: duration("24h"), Setup: duration("23h59m59s"), LoadGrace: duration("1440m"),
			Analysis: duration("168h"), Overall: duration("720h"),
		}
		exp.Spec.Analysis = &perfexpv1alpha1.Analysis{Slices: []perfexpv1alpha1.TimeSlice{
			{Name: "all", From: duration("0s"), To: duration("720h")},
			{Name: "tail", Last: duration("2592000s")},
		}}
		exp.Spec.Baseline = &perfexpv1alpha1.BaselineRef{Name: "bounds-before"}
		exp.Spec.Variant = &perfexpv1alpha1.Variant{Workloads: []perfexpv1alpha1.WorkloadChange{{
			WorkloadSelector: perfexpv1alpha1.WorkloadSelector{Names: []string{"api"}},
			Resources: &perfexpv1alpha1.ResourcesChange{Limits: corev1.ResourceList{
				corev1.ResourceCPU: resource.MustParse("1m"), corev1.ResourceMemory: resource.MustParse("0"),
			}},
		}}}
		if err := env.Client.Create(t.Context(), exp, client.DryRunAll); err != nil {
			t.Fatalf("values at the bounds refused: %v", err)
		}
	})

	t.Run("custom queries with every placeholder, spaced or not, are accepted", func(t *testing.T) {
		exp := minimal(ns, "placeholders")
		exp.Spec.Analysis = &perfexpv1alpha1.Analysis{Queries: []perfexpv1alpha1.CustomQuery{
			{Name: "all", Query: `x{ns="{{.Namespace}}",t="{{ .TestID }}"} @ {{.Start}} {{.End}} {{.WarmUpEnd}} [{{` + "\t.Window\n" + `}}]`},
			{Name: "braces", Query: `sum(x{a="}}"}) + y{} + z{a="{"}`},
		}}
		if err := env.Client.Create(t.Context(), exp, client.DryRunAll); err != nil {
			t.Fatalf("valid queries refused: %v", err)
		}
	})

	t.Run("the spec is immutable once the experiment joined its queue, except abort", func(t *testing.T) {
		ctx := t.Context()
		exp := minimal(ns, "immutable")
		if err := env.Client.Create(ctx, exp); err != nil {
			t.Fatal(err)
		}

		// Before the operator has checked it (Pending), the spec may change.
		exp.Spec.Priority = 5
		if err := env.Client.Update(ctx, exp); err != nil {
			t.Fatalf("changing a pending experiment: %v", err)
		}
		exp.Status.Phase = perfexpv1alpha1.PhasePending
		if err := env.Client.Status().Update(ctx, exp); err != nil {
			t.Fatal(err)
		}
		exp.Spec.Priority = 6
		if err := env.Client.Update(ctx, exp); err != nil {
			t.Fatalf("changing a pending experiment: %v", err)
		}

		// Queued: its queue and overall timeout were checked against the operator's maximum
		// as it joined; a retarget or a longer timeout and load would bypass both.
		exp.Status.Phase = perfexpv1alpha1.PhaseQueued
		if err := env.Client.Status().Update(ctx, exp); err != nil {
			t.Fatal(err)
		}
		for what, edit := range map[string]func(*perfexpv1alpha1.PerfExperiment){
			"a longer overall timeout": func(e *perfexpv1alpha1.PerfExperiment) {
				e.Spec.Timeouts = &perfexpv1alpha1.Timeouts{Overall: &metav1.Duration{Duration: 720 * time.Hour}}
			},
			"another target namespace": func(e *perfexpv1alpha1.PerfExperiment) { e.Spec.TargetNamespace = "elsewhere" },
			"another queue":            func(e *perfexpv1alpha1.PerfExperiment) { e.Spec.Queue = "elsewhere" },
		} {
			changed := exp.DeepCopy()
			edit(changed)
			err := env.Client.Update(ctx, changed)
			if err == nil || !strings.Contains(err.Error(), "the spec cannot change once the experiment has joined its queue (it is Queued)") {
				t.Fatalf("%s for a queued experiment: got %v, want a refusal", what, err)
			}
		}

		exp.Status.Phase = perfexpv1alpha1.PhaseRunning
		if err := env.Client.Status().Update(ctx, exp); err != nil {
			t.Fatal(err)
		}
		changed := exp.DeepCopy()
		changed.Spec.Load.Scenarios[0].VUs = ptr(int32(50))
		err := env.Client.Update(ctx, changed)
		if err == nil || !strings.Contains(err.Error(), "the spec cannot change once the experiment has joined its queue") {
			t.Fatalf("changing a running experiment: got %v, want a refusal", err)
		}
		t.Logf("refused as expected: %v", err)
		// The teardown Job runs after the load: swapping its image or service account during
		// the run would run anything the author likes under the operator's name.
		changed = exp.DeepCopy()
		changed.Spec.Teardown = &perfexpv1alpha1.Setup{Image: "registry.example.com/anything:1", ServiceAccountName: "admin"}
		err = env.Client.Update(ctx, changed)
		if err == nil || !strings.Contains(err.Error(), "the spec cannot change once the experiment has joined its queue") {
			t.Fatalf("adding a teardown to a running experiment: got %v, want a refusal", err)
		}
		exp.Spec.Abort = true
		if err := env.Client.Update(ctx, exp); err != nil {
			t.Fatalf("aborting a running experiment: %v", err)
		}
	})
}

func readManifest(t *testing.T, file string) (*unstructured.Unstructured, string) {
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
		t.Fatalf("%s: %v", file, err)
	}
	return obj, want
}

// minimal is the smallest experiment the API server accepts (testexp.New: its validity is
// tested here).
func minimal(ns, name string) *perfexpv1alpha1.PerfExperiment {
	return testexp.New(ns, name)
}

func ptr[T any](v T) *T { return &v }
