package sweep_test

import (
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"
	"time"

	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/sweep"
)

// The demo sweep `make demo-sweep` applies: baseline + HTTP_MAXPOOLSIZE 1/10/50, 2 repeats.
func TestDemoSweepPlan(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "scenarios", "demo-sweep", "pool-size-sweep.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	s := &perfexpv1alpha1.PerfSweep{}
	if err := yaml.UnmarshalStrict(data, s); err != nil {
		t.Fatal(err)
	}
	p, err := sweep.NewPlan(s)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"demo-pool-baseline-1", "demo-pool-pool-1-1", "demo-pool-pool-10-1", "demo-pool-pool-50-1",
		"demo-pool-baseline-2", "demo-pool-pool-1-2", "demo-pool-pool-10-2", "demo-pool-pool-50-2"}
	if len(p.Runs) != len(want) {
		t.Fatalf("%d runs, want %d", len(p.Runs), len(want))
	}
	// The demo runs in a random order within each repeat: compare each repeat as a set.
	for i, r := range p.Runs {
		if block := want[i/4*4 : i/4*4+4]; !slices.Contains(block, r.Name) {
			t.Errorf("run %d is %s, want one of %v", i, r.Name, block)
		}
		exp, err := p.Experiment(s, r)
		if err != nil {
			t.Fatal(err)
		}
		if r.Arm != perfexpv1alpha1.BaselineArm {
			env := exp.Spec.Variant.Workloads[0].Env.Set[0]
			if env.Name != "HTTP_MAXPOOLSIZE" || "pool-"+env.Value != r.Arm {
				t.Errorf("run %s sets %s=%s", r.Name, env.Name, env.Value)
			}
		}
	}
}

// The sequential A/A + A/B sweep `make demo-aa-sequential` applies: every run, the baseline's
// included, rolls circulation (the workload every arm changes) and settles 30 s, so no arm is
// compared on fresh pods against a baseline on old ones.
func TestDemoAASequentialRunsOnFreshPods(t *testing.T) {
	k := krusty.MakeKustomizer(krusty.MakeDefaultOptions())
	resMap, err := k.Run(filesys.MakeFsOnDisk(), filepath.Join("..", "..", "scenarios", "demo-aa-sequential"))
	if err != nil {
		t.Fatalf("kustomize build scenarios/demo-aa-sequential: %v", err)
	}
	stream, err := resMap.AsYaml()
	if err != nil {
		t.Fatal(err)
	}
	s := &perfexpv1alpha1.PerfSweep{}
	if err := yaml.UnmarshalStrict(stream, s); err != nil {
		t.Fatal(err)
	}
	p, err := sweep.NewPlan(s)
	if err != nil {
		t.Fatal(err)
	}
	want := []perfexpv1alpha1.WorkloadSelector{{Kind: perfexpv1alpha1.WorkloadKindDeployment, Names: []string{"circulation"}}}
	for _, r := range p.Runs {
		exp, err := p.Experiment(s, r)
		if err != nil {
			t.Fatal(err)
		}
		if exp.Spec.FreshPods == nil || !reflect.DeepEqual(exp.Spec.FreshPods.Workloads, want) {
			t.Errorf("run %s rolls %+v; want circulation", r.Name, exp.Spec.FreshPods)
		}
		if exp.Spec.Settle == nil || exp.Spec.Settle.Duration != 30*time.Second {
			t.Errorf("run %s settles %v; want 30s", r.Name, exp.Spec.Settle)
		}
	}
}
