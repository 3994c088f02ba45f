package sweep_test

import (
	"testing"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/queue"
	"github.com/perfexp/perfexp/internal/sweep"
)

func TestExperimentOfARun(t *testing.T) {
	s := newSweep(withRepeats(2), withOrder(perfexpv1alpha1.SweepOrderInterleaved), withArms(envArm("pool-10", "10"),
		perfexpv1alpha1.SweepArm{Name: "alone", Load: &perfexpv1alpha1.LoadOverride{Scenarios: []string{"checkinout"}}},
		perfexpv1alpha1.SweepArm{Name: "fast", Load: &perfexpv1alpha1.LoadOverride{Rate: ptr(int32(40))}},
	), func(s *perfexpv1alpha1.PerfSweep) {
		s.Spec.Queue, s.Spec.Priority = "library", 7
		s.Spec.Template.Analysis = &perfexpv1alpha1.Analysis{Objectives: []perfexpv1alpha1.Objective{
			{Name: "relative", Metric: perfexpv1alpha1.MetricP95, Scenario: "checkinout", MaxIncreasePercent: ptr(int32(10))},
			{Name: "import only", Metric: perfexpv1alpha1.MetricP95, Scenario: "import"},
		}}
	})
	p, err := sweep.NewPlan(s)
	if err != nil {
		t.Fatal(err)
	}
	build := func(name string) *perfexpv1alpha1.PerfExperiment {
		t.Helper()
		for _, r := range p.Runs {
			if r.Name == name {
				exp, err := p.Experiment(s, r)
				if err != nil {
					t.Fatal(err)
				}
				return exp
			}
		}
		t.Fatalf("no run %s", name)
		return nil
	}

	t.Run("a variant run is compared with the baseline run of its repeat, in the sweep's queue and order", func(t *testing.T) {
		exp := build("pool-pool-10-2")
		if exp.Spec.Baseline == nil || exp.Spec.Baseline.Name != "pool-baseline-2" {
			t.Errorf("baseline %+v, want pool-baseline-2", exp.Spec.Baseline)
		}
		if exp.Spec.Queue != "library" || exp.Spec.Priority != 7 {
			t.Errorf("queue %q priority %d", exp.Spec.Queue, exp.Spec.Priority)
		}
		if exp.Labels[perfexpv1alpha1.LabelSweep] != "pool" || exp.Labels[perfexpv1alpha1.LabelArm] != "pool-10" || exp.Labels[perfexpv1alpha1.LabelRepeat] != "2" {
			t.Errorf("labels %v", exp.Labels)
		}
		if exp.Annotations[queue.AnnotationSequence] != "5" || exp.Annotations[queue.AnnotationEnqueuedAt] != "2026-03-01T09:00:00Z" {
			t.Errorf("order annotations %v, want sequence 5 at the sweep's creation", exp.Annotations)
		}
		if exp.Spec.Variant == nil || exp.Spec.Variant.Description == "" {
			t.Errorf("variant %+v: want it described", exp.Spec.Variant)
		}
		if n := len(exp.Spec.Analysis.Objectives); n != 2 {
			t.Errorf("%d objectives, want both", n)
		}
	})
	t.Run("a baseline run keeps no relative objective and no baseline", func(t *testing.T) {
		exp := build("pool-baseline-1")
		if exp.Spec.Baseline != nil || exp.Spec.Variant != nil {
			t.Errorf("baseline %+v variant %+v, want none", exp.Spec.Baseline, exp.Spec.Variant)
		}
		if o := exp.Spec.Analysis.Objectives; len(o) != 1 || o[0].Name != "import only" {
			t.Errorf("objectives %+v, want only the absolute one", o)
		}
		if s.Spec.Template.Analysis.Objectives[0].Name != "relative" {
			t.Error("building a run changed the sweep's template")
		}
	})
	t.Run("an arm's scenarios leave the others out, with their objectives", func(t *testing.T) {
		exp := build("pool-alone-1")
		if len(exp.Spec.Load.Scenarios) != 1 || exp.Spec.Load.Scenarios[0].Name != "checkinout" {
			t.Errorf("scenarios %+v", exp.Spec.Load.Scenarios)
		}
		if o := exp.Spec.Analysis.Objectives; len(o) != 1 || o[0].Name != "relative" {
			t.Errorf("objectives %+v", o)
		}
	})
	t.Run("an arm's rate changes the arrival-rate scenarios only", func(t *testing.T) {
		exp := build("pool-fast-1")
		sc := exp.Spec.Load.Scenarios
		if sc[1].ArrivalRate.Rate != 40 || *sc[0].VUs != 5 {
			t.Errorf("rate %d vus %d, want 40 and the template's 5", sc[1].ArrivalRate.Rate, *sc[0].VUs)
		}
		if s.Spec.Template.Load.Scenarios[1].ArrivalRate.Rate != 10 {
			t.Error("building a run changed the sweep's template")
		}
	})
}

// A fromScript scenario's k6 scenarios are named by its script only, so objectives on them stay.
func TestExperimentKeepsObjectivesOnAScriptsOwnScenarios(t *testing.T) {
	s := newSweep(withArms(envArm("pool-10", "10")), func(s *perfexpv1alpha1.PerfSweep) {
		sc := &s.Spec.Template.Load.Scenarios[0]
		sc.FromScript, sc.VUs, sc.Duration = true, nil, nil
		s.Spec.Template.Analysis = &perfexpv1alpha1.Analysis{Objectives: []perfexpv1alpha1.Objective{
			{Name: "news p95", Metric: perfexpv1alpha1.MetricP95, Scenario: "news"},
		}}
	})
	p, err := sweep.NewPlan(s)
	if err != nil {
		t.Fatal(err)
	}
	exp, err := p.Experiment(s, p.Runs[0])
	if err != nil {
		t.Fatal(err)
	}
	if o := exp.Spec.Analysis.Objectives; len(o) != 1 || o[0].Scenario != "news" {
		t.Fatalf("objectives %+v, want the one on the script's k6 scenario news", o)
	}
}

func TestExperimentKeepsOnlyThePrimaryMetricsItsArmRuns(t *testing.T) {
	alone := perfexpv1alpha1.SweepArm{Name: "alone", Load: &perfexpv1alpha1.LoadOverride{Scenarios: []string{"checkinout"}}}
	s := newSweep(withArms(alone), func(s *perfexpv1alpha1.PerfSweep) {
		s.Spec.Template.Analysis = &perfexpv1alpha1.Analysis{PrimaryMetrics: []perfexpv1alpha1.PrimaryMetric{
			{Metric: perfexpv1alpha1.MetricP95, Scenario: "checkinout"},
			{Metric: perfexpv1alpha1.MetricAvg, Scenario: "import", Trend: "import_duration"},
		}}
	})
	p, err := sweep.NewPlan(s)
	if err != nil {
		t.Fatal(err)
	}
	for _, run := range p.Runs {
		exp, err := p.Experiment(s, run)
		if err != nil {
			t.Fatal(err)
		}
		pm := exp.Spec.Analysis.PrimaryMetrics
		if run.Arm == "alone" {
			if len(pm) != 1 || pm[0].Scenario != "checkinout" {
				t.Errorf("run %s: primary metrics %+v, want only checkinout's: the arm does not run import", exp.Name, pm)
			}
		} else if len(pm) != 2 {
			t.Errorf("run %s: primary metrics %+v, want both", exp.Name, pm)
		}
	}
}
