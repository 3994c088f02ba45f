package sweep_test

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/sweep"
)

func TestMatrixExpansion(t *testing.T) {
	cpu := perfexpv1alpha1.SweepDimension{Name: "cpu", Resources: &perfexpv1alpha1.ResourcesDimension{
		WorkloadSelector: circulation, Resource: "cpu", Values: []string{"500m", "none"}}}
	replicas := perfexpv1alpha1.SweepDimension{Name: "replicas", Replicas: &perfexpv1alpha1.ReplicasDimension{WorkloadSelector: circulation, Values: []int32{1, 3}}}
	image := perfexpv1alpha1.SweepDimension{Name: "release", Image: &perfexpv1alpha1.ImageDimension{
		WorkloadSelector: circulation, Containers: []string{"circulation"}, Values: []string{"registry.local/circ:1.2", "registry.local/circ:1.3"}}}
	vus := perfexpv1alpha1.SweepDimension{Name: "users", Load: &perfexpv1alpha1.LoadDimension{Parameter: perfexpv1alpha1.LoadVUs, Values: []int32{1, 5, 8, 20}}}
	tests := []struct {
		name   string
		s      *perfexpv1alpha1.PerfSweep
		arms   string // name=parameter:value, the baseline first
		loadBy perfexpv1alpha1.LoadParameter
	}{
		{"cpu limit x replicas is a cross product, the first dimension slowest", newSweep(withMatrix(cpu, replicas)),
			"baseline=-:as deployed cpu-500m-replicas-1=cpu limit x replicas:500m x 1 cpu-500m-replicas-3=cpu limit x replicas:500m x 3 " +
				"cpu-none-replicas-1=cpu limit x replicas:none x 1 cpu-none-replicas-3=cpu limit x replicas:none x 3", ""},
		{"image values become names", newSweep(withMatrix(image)),
			"baseline=-:as deployed release-registry-local-circ-1-2=image:registry.local/circ:1.2 release-registry-local-circ-1-3=image:registry.local/circ:1.3", ""},
		{"a load dimension is a capacity curve with the baseline at the template's load", newSweep(withMatrix(vus)),
			"baseline=vus:5 users-1=vus:1 users-5=vus:5 users-8=vus:8 users-20=vus:20", perfexpv1alpha1.LoadVUs},
		{"explicit arms come before the matrix", newSweep(withArms(envArm("small", "1")), withMatrix(replicas)),
			"baseline=-:as deployed small=HTTP_MAXPOOLSIZE:1 replicas-1=replicas:1 replicas-3=replicas:3", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := sweep.NewPlan(tt.s)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, a := range p.Arms {
				got = append(got, a.Name+"="+a.Parameter+":"+a.Value)
			}
			if strings.Join(got, " ") != tt.arms {
				t.Errorf("arms\n got %s\nwant %s", strings.Join(got, " "), tt.arms)
			}
			if p.LoadParameter != tt.loadBy {
				t.Errorf("load parameter %q, want %q", p.LoadParameter, tt.loadBy)
			}
		})
	}

	t.Run("a cell's variant holds one workload change per dimension", func(t *testing.T) {
		p, err := sweep.NewPlan(newSweep(withMatrix(cpu, replicas)))
		if err != nil {
			t.Fatal(err)
		}
		cell := p.Arm("cpu-none-replicas-3")
		if cell == nil || cell.Variant == nil || len(cell.Variant.Workloads) != 2 {
			t.Fatalf("cell %+v", cell)
		}
		w0, w1 := cell.Variant.Workloads[0], cell.Variant.Workloads[1]
		if w0.Resources == nil || len(w0.Resources.RemoveLimits) != 1 || w0.Resources.RemoveLimits[0] != corev1.ResourceCPU {
			t.Errorf("cpu none should remove the CPU limit: %+v", w0.Resources)
		}
		if w1.Replicas == nil || *w1.Replicas != 3 {
			t.Errorf("replicas %v, want 3", w1.Replicas)
		}
		cell = p.Arm("cpu-500m-replicas-1")
		q := cell.Variant.Workloads[0].Resources.Limits[corev1.ResourceCPU]
		if q.String() != "500m" {
			t.Errorf("cpu limit %s, want 500m", q.String())
		}
	})
}

func TestBaselinesAtOtherLoads(t *testing.T) {
	pool := perfexpv1alpha1.SweepDimension{Name: "pool", Env: &perfexpv1alpha1.EnvDimension{
		WorkloadSelector: circulation, Variable: "HTTP_MAXPOOLSIZE", Values: []string{"1", "50"}}}
	users := perfexpv1alpha1.SweepDimension{Name: "users", Load: &perfexpv1alpha1.LoadDimension{Parameter: perfexpv1alpha1.LoadVUs, Values: []int32{1, 20}}}
	tests := []struct {
		name string
		s    *perfexpv1alpha1.PerfSweep
		want string // arm<baseline, in plan order
	}{
		{"a variant x load matrix gets a baseline per load, right after the baseline", newSweep(withMatrix(pool, users)),
			"baseline< baseline-vus-1< baseline-vus-20< pool-1-users-1<baseline-vus-1 pool-1-users-20<baseline-vus-20 " +
				"pool-50-users-1<baseline-vus-1 pool-50-users-20<baseline-vus-20"},
		{"an arm that already runs that load as the baseline does is used as its baseline",
			newSweep(withArms(perfexpv1alpha1.SweepArm{Name: "alone", Load: &perfexpv1alpha1.LoadOverride{Scenarios: []string{"checkinout"}}},
				perfexpv1alpha1.SweepArm{Name: "alone-pool-1", Variant: envVariant("1"), Load: &perfexpv1alpha1.LoadOverride{Scenarios: []string{"checkinout"}}})),
			"baseline< alone<baseline alone-pool-1<alone"},
		{"arms that change only the load, or only the variant, are compared with the baseline",
			newSweep(withArms(envArm("pool-1", "1"), perfexpv1alpha1.SweepArm{Name: "more", Load: &perfexpv1alpha1.LoadOverride{VUs: ptr(int32(9))}})),
			"baseline< pool-1<baseline more<baseline"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := sweep.NewPlan(tt.s)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, a := range p.Arms {
				got = append(got, a.Name+"<"+a.Baseline)
			}
			if strings.Join(got, " ") != tt.want {
				t.Errorf("arms\n got %s\nwant %s", strings.Join(got, " "), tt.want)
			}
		})
	}

	t.Run("a run is compared with the run of its arm's baseline in the same repeat, and a load baseline runs that load", func(t *testing.T) {
		s := newSweep(withMatrix(pool, users), withRepeats(2))
		p, err := sweep.NewPlan(s)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range p.Runs {
			if r.Name == "pool-pool-50-users-20-2" && r.Baseline != "pool-baseline-vus-20-2" {
				t.Errorf("run %s compared with %s, want pool-baseline-vus-20-2", r.Name, r.Baseline)
			}
			if r.Name != "pool-baseline-vus-20-2" {
				continue
			}
			exp, err := p.Experiment(s, r)
			if err != nil {
				t.Fatal(err)
			}
			if exp.Spec.Variant != nil || exp.Spec.Baseline != nil || *exp.Spec.Load.Scenarios[0].VUs != 20 {
				t.Errorf("the load baseline runs variant %+v, baseline %+v, vus %d; want none, none, 20", exp.Spec.Variant, exp.Spec.Baseline, *exp.Spec.Load.Scenarios[0].VUs)
			}
		}
		if len(p.Runs) != 2*7 {
			t.Errorf("%d runs, want (1 + 2 load baselines + 4 cells) x 2 = 14", len(p.Runs))
		}
	})
}
