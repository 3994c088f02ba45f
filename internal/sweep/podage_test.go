package sweep_test

import (
	"reflect"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/result"
	"github.com/perfexp/perfexp/internal/sweep"
)

// runsOf builds every run's PerfExperiment.
func runsOf(t *testing.T, s *perfexpv1alpha1.PerfSweep) map[string]*perfexpv1alpha1.PerfExperiment {
	t.Helper()
	p, err := sweep.NewPlan(s)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*perfexpv1alpha1.PerfExperiment{}
	for _, r := range p.Runs {
		exp, err := p.Experiment(s, r)
		if err != nil {
			t.Fatal(err)
		}
		out[r.Arm] = exp
	}
	return out
}

// By default every run of a sweep, the baseline's included, rolls the union of the workloads
// the arms change, and settles 30 s after the rollout: no arm is measured on fresh pods
// against a baseline on old ones.
func TestPodAgeEqualRollsTheUnionOnEveryRun(t *testing.T) {
	edge := &perfexpv1alpha1.Variant{
		Workloads: []perfexpv1alpha1.WorkloadChange{{
			WorkloadSelector: perfexpv1alpha1.WorkloadSelector{Names: []string{"edge", "circulation"}},
			Replicas:         ptr(int32(2)),
		}},
		Kafka: &perfexpv1alpha1.KafkaVariant{Bootstrap: &perfexpv1alpha1.KafkaBootstrapSwitch{
			Workloads: perfexpv1alpha1.WorkloadSelector{Kind: perfexpv1alpha1.WorkloadKindStatefulSet, Names: []string{"importer"}},
			Address:   "kafka-kraft:9092",
		}},
		Patches: []perfexpv1alpha1.ObjectPatch{
			{Target: perfexpv1alpha1.ObjectTarget{APIVersion: "apps/v1", Kind: "Deployment", Name: "users"}, Patch: "{}"},
			{Target: perfexpv1alpha1.ObjectTarget{APIVersion: "v1", Kind: "ConfigMap", Name: "settings"}, Patch: "{}"},
		},
	}
	labelled := &perfexpv1alpha1.Variant{Workloads: []perfexpv1alpha1.WorkloadChange{{
		WorkloadSelector: perfexpv1alpha1.WorkloadSelector{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"tier": "backend"}}},
		Env:              &perfexpv1alpha1.EnvChange{Set: []perfexpv1alpha1.EnvVar{{Name: "X", Value: "1"}}},
	}}}
	s := newSweep(withArms(envArm("pool-10", "10"),
		perfexpv1alpha1.SweepArm{Name: "edge", Variant: edge},
		perfexpv1alpha1.SweepArm{Name: "backend", Variant: labelled},
		perfexpv1alpha1.SweepArm{Name: "backend-again", Variant: &perfexpv1alpha1.Variant{Workloads: []perfexpv1alpha1.WorkloadChange{{
			WorkloadSelector: labelled.Workloads[0].WorkloadSelector,
			Env:              &perfexpv1alpha1.EnvChange{Set: []perfexpv1alpha1.EnvVar{{Name: "X", Value: "2"}}},
		}}}},
	))
	want := &perfexpv1alpha1.FreshPods{Workloads: []perfexpv1alpha1.WorkloadSelector{
		{Kind: perfexpv1alpha1.WorkloadKindDeployment, Names: []string{"circulation", "edge", "users"}},
		{Kind: perfexpv1alpha1.WorkloadKindStatefulSet, Names: []string{"importer"}},
		{Kind: perfexpv1alpha1.WorkloadKindDeployment, Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"tier": "backend"}}},
	}}
	runs := runsOf(t, s)
	for arm, exp := range runs {
		if !reflect.DeepEqual(exp.Spec.FreshPods, want) {
			t.Errorf("run of %s rolls %+v; want %+v", arm, exp.Spec.FreshPods, want)
		}
		if exp.Spec.Settle == nil || exp.Spec.Settle.Duration != sweep.DefaultSettle {
			t.Errorf("run of %s settles %v; want %s", arm, exp.Spec.Settle, sweep.DefaultSettle)
		}
	}
	if b := runs[perfexpv1alpha1.BaselineArm]; b.Spec.Variant != nil {
		t.Errorf("the baseline run has a variant %+v; it must only roll its pods", b.Spec.Variant)
	}

	t.Run("the template's settle wins", func(t *testing.T) {
		s := s.DeepCopy()
		s.Spec.Template.Settle = &metav1.Duration{Duration: 90 * time.Second}
		for arm, exp := range runsOf(t, s) {
			if exp.Spec.Settle.Duration != 90*time.Second {
				t.Errorf("run of %s settles %v", arm, exp.Spec.Settle)
			}
		}
	})
	t.Run("podAge AsFound rolls only what a variant changes", func(t *testing.T) {
		s := s.DeepCopy()
		s.Spec.PodAge = perfexpv1alpha1.SweepPodAgeAsFound
		for arm, exp := range runsOf(t, s) {
			if exp.Spec.FreshPods != nil || exp.Spec.Settle != nil {
				t.Errorf("run of %s: freshPods %+v, settle %v; want neither", arm, exp.Spec.FreshPods, exp.Spec.Settle)
			}
		}
	})
}

// A sweep whose arms change only the load rolls nothing and waits for nothing.
func TestPodAgeEqualWithoutWorkloadsRollsNothing(t *testing.T) {
	s := newSweep(withArms(perfexpv1alpha1.SweepArm{Name: "fast", Load: &perfexpv1alpha1.LoadOverride{Rate: ptr(int32(40))}}))
	for arm, exp := range runsOf(t, s) {
		if exp.Spec.FreshPods != nil || exp.Spec.Settle != nil {
			t.Errorf("run of %s: freshPods %+v, settle %v", arm, exp.Spec.FreshPods, exp.Spec.Settle)
		}
	}
}

// The sweep's report states the choice, with the time from the rollouts' end to the load
// that each side's runs recorded.
func TestSweepReportStatesPodAge(t *testing.T) {
	ok := func(name string, rolled *float64) sweep.Outcome {
		r := runResult(name, 100, 50)
		r.PodAge = &result.PodAge{FreshPods: rolled != nil, RolledSecondsBeforeLoad: rolled}
		return sweep.Outcome{Phase: perfexpv1alpha1.PhaseSucceeded, Result: r}
	}
	note := func(s *perfexpv1alpha1.PerfSweep, base, arm *float64) string {
		t.Helper()
		p, err := sweep.NewPlan(s)
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]sweep.Outcome{"pool-baseline-1": ok("pool-baseline-1", base), "pool-pool-10-1": ok("pool-pool-10-1", arm)}
		for _, n := range sweep.Compare(s, p, out, nil).Notes {
			if strings.HasPrefix(n, "pod age:") {
				return n
			}
		}
		t.Fatal("no pod age note")
		return ""
	}
	s := newSweep(withArms(envArm("pool-10", "10")))
	if n := note(s, f(41), f(38)); !strings.Contains(n, "Equal") || !strings.Contains(n, "41 s before the load on the baseline's runs and 38 s on the arms'") || !strings.Contains(n, "settle 30s") {
		t.Errorf("Equal: %q", n)
	}
	s.Spec.PodAge = perfexpv1alpha1.SweepPodAgeAsFound
	if n := note(s, nil, f(12)); !strings.Contains(n, "AsFound: the baseline ran on the pods as found (runs that recorded no rollout: 1)") || !strings.Contains(n, "created 12 s before") {
		t.Errorf("AsFound: %q", n)
	}
}
