package sweep_test

import (
	"fmt"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/types"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/sweep"
)

func TestPlanInterleavesArmsAndPairsBaselinesByRepeat(t *testing.T) {
	s := newSweep(withArms(envArm("pool-1", "1"), envArm("pool-10", "10"), envArm("pool-50", "50")), withRepeats(2), withOrder(perfexpv1alpha1.SweepOrderInterleaved))
	p, err := sweep.NewPlan(s)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for i, r := range p.Runs {
		got = append(got, r.Name+"<"+r.Baseline)
		if r.Sequence != i {
			t.Errorf("run %s has sequence %d, want %d", r.Name, r.Sequence, i)
		}
	}
	want := []string{
		"pool-baseline-1<", "pool-pool-1-1<pool-baseline-1", "pool-pool-10-1<pool-baseline-1", "pool-pool-50-1<pool-baseline-1",
		"pool-baseline-2<", "pool-pool-1-2<pool-baseline-2", "pool-pool-10-2<pool-baseline-2", "pool-pool-50-2<pool-baseline-2",
	}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("runs (name<baseline)\n got %v\nwant %v", got, want)
	}
}

func TestRandomizedOrderIsACompleteBlockDesign(t *testing.T) {
	arms := withArms(envArm("pool-1", "1"), envArm("pool-10", "10"), envArm("pool-50", "50"))
	plan := func(uid string) *sweep.Plan {
		t.Helper()
		s := newSweep(arms, withRepeats(3))
		s.UID = types.UID(uid)
		p, err := sweep.NewPlan(s)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	names := func(p *sweep.Plan) string {
		var out []string
		for _, r := range p.Runs {
			out = append(out, r.Name)
		}
		return strings.Join(out, " ")
	}

	t.Run("every repeat runs every arm once, paired with the baseline of its repeat", func(t *testing.T) {
		p := plan("uid-1")
		if len(p.Runs) != 12 {
			t.Fatalf("%d runs, want 12", len(p.Runs))
		}
		for i, r := range p.Runs {
			if r.Sequence != i || r.Repeat != i/4+1 {
				t.Errorf("run %s: sequence %d repeat %d at position %d", r.Name, r.Sequence, r.Repeat, i)
			}
			if r.Arm != perfexpv1alpha1.BaselineArm && r.Baseline != sweep.RunName("pool", perfexpv1alpha1.BaselineArm, r.Repeat) {
				t.Errorf("run %s compared with %s", r.Name, r.Baseline)
			}
		}
		for block := 0; block < 3; block++ {
			seen := map[string]bool{}
			for _, r := range p.Runs[block*4 : block*4+4] {
				seen[r.Arm] = true
			}
			if len(seen) != 4 {
				t.Errorf("repeat %d runs arms %v, want all four once", block+1, seen)
			}
		}
	})

	t.Run("one sweep always gets the same order", func(t *testing.T) {
		if a, b := names(plan("uid-1")), names(plan("uid-1")); a != b {
			t.Errorf("two plans of one sweep differ:\n%s\n%s", a, b)
		}
	})

	t.Run("over many sweeps every arm is first in a block about equally often", func(t *testing.T) {
		first := map[string]int{}
		const sweeps = 400
		for i := 0; i < sweeps; i++ {
			p := plan(fmt.Sprintf("uid-%d", i))
			for block := 0; block < 3; block++ {
				first[p.Runs[block*4].Arm]++
			}
		}
		// 1,200 blocks, 4 arms: 300 each expected, sd about 15; 240..360 is four sd.
		for _, arm := range []string{perfexpv1alpha1.BaselineArm, "pool-1", "pool-10", "pool-50"} {
			if n := first[arm]; n < 240 || n > 360 {
				t.Errorf("%s ran first in %d of 1200 blocks, want about 300 (%v)", arm, n, first)
			}
		}
	})
}

func TestRunName(t *testing.T) {
	long := strings.Repeat("s", 50)
	tests := []struct {
		name, sweep, arm string
		repeat           int
		want             string
	}{
		{"short names are kept", "pool", "pool-10", 2, "pool-pool-10-2"},
		{"the baseline", "pool", "baseline", 1, "pool-baseline-1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := sweep.RunName(tt.sweep, tt.arm, tt.repeat); got != tt.want {
				t.Errorf("RunName = %q, want %q", got, tt.want)
			}
		})
	}
	t.Run("long names are cut to 63 characters, stay distinct and stable", func(t *testing.T) {
		a, b := sweep.RunName(long, "arm-with-a-long-name", 1), sweep.RunName(long, "arm-with-a-long-name", 2)
		if len(a) > 63 || len(b) > 63 || a == b {
			t.Errorf("names %q and %q: want at most 63 characters each and distinct", a, b)
		}
		if a != sweep.RunName(long, "arm-with-a-long-name", 1) {
			t.Error("the same run got two names")
		}
		if last := a[len(a)-1]; (last < 'a' || last > 'z') && (last < '0' || last > '9') {
			t.Errorf("%q does not end in a letter or digit", a)
		}
	})
}

func TestPlanRefuses(t *testing.T) {
	tests := []struct {
		name string
		s    *perfexpv1alpha1.PerfSweep
		want string
	}{
		{"two equal arms", newSweep(withArms(envArm("a", "10"), envArm("b", "10"))), "arms a and b are equal"},
		{"equal arms that differ only in their description", newSweep(withArms(envArm("a", "10"), func() perfexpv1alpha1.SweepArm {
			b := envArm("b", "10")
			b.Variant.Description = "the same, described"
			return b
		}())), "arms a and b are equal"},
		{"an arm equal to the baseline", newSweep(withArms(envArm("a", "10")), func(s *perfexpv1alpha1.PerfSweep) {
			s.Spec.Baseline = &perfexpv1alpha1.SweepBaseline{Variant: envVariant("10")}
		}), "arm a changes nothing compared with the baseline"},
		{"an explicit arm equal to a matrix cell", newSweep(withArms(envArm("ten", "10")), withMatrix(perfexpv1alpha1.SweepDimension{
			Name: "pool", Env: &perfexpv1alpha1.EnvDimension{WorkloadSelector: circulation, Containers: []string{"circulation"}, Variable: "HTTP_MAXPOOLSIZE", Values: []string{"10", "50"}}})),
			"arms ten and pool-10 are equal"},
		{"an arm whose vus applies to no scenario", newSweep(withArms(perfexpv1alpha1.SweepArm{Name: "v",
			Load: &perfexpv1alpha1.LoadOverride{Scenarios: []string{"import"}, VUs: ptr(int32(3))}})), "arm v changes no scenario's load"},
		{"an arm naming an unknown scenario", newSweep(withArms(perfexpv1alpha1.SweepArm{Name: "v",
			Load: &perfexpv1alpha1.LoadOverride{Scenarios: []string{"nope"}}})), "nope, which is not one of template.load.scenarios"},
		{"two load dimensions", newSweep(withMatrix(
			perfexpv1alpha1.SweepDimension{Name: "u", Load: &perfexpv1alpha1.LoadDimension{Parameter: perfexpv1alpha1.LoadVUs, Values: []int32{1, 2}}},
			perfexpv1alpha1.SweepDimension{Name: "r", Load: &perfexpv1alpha1.LoadDimension{Parameter: perfexpv1alpha1.LoadRate, Values: []int32{1, 2}}})),
			"at most one is allowed"},
		{"a matrix too large", newSweep(withMatrix(
			perfexpv1alpha1.SweepDimension{Name: "a", Replicas: &perfexpv1alpha1.ReplicasDimension{WorkloadSelector: circulation, Values: []int32{1, 2, 3, 4, 5, 6, 7, 8, 9}}},
			perfexpv1alpha1.SweepDimension{Name: "b", Env: &perfexpv1alpha1.EnvDimension{WorkloadSelector: circulation, Variable: "X", Values: []string{"1", "2", "3", "4", "5", "6", "7", "8"}}})),
			"more than 64 arms"},
		{"too many runs", newSweep(withRepeats(10), withMatrix(
			perfexpv1alpha1.SweepDimension{Name: "a", Replicas: &perfexpv1alpha1.ReplicasDimension{WorkloadSelector: circulation, Values: []int32{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}}},
			perfexpv1alpha1.SweepDimension{Name: "b", Env: &perfexpv1alpha1.EnvDimension{WorkloadSelector: circulation, Variable: "X", Values: []string{"1", "2"}}})),
			"would make 330 runs"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := sweep.NewPlan(tt.s)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v, want one containing %q", err, tt.want)
			}
		})
	}
}
