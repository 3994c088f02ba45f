package sweep_test

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/resource"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/result"
	"github.com/perfexp/perfexp/internal/sweep"
)

func withCapacity(param perfexpv1alpha1.LoadParameter, lo, hi int32) func(*perfexpv1alpha1.PerfSweep) {
	return func(s *perfexpv1alpha1.PerfSweep) {
		p95 := resource.MustParse("300")
		s.Spec.Template.Analysis = &perfexpv1alpha1.Analysis{Objectives: []perfexpv1alpha1.Objective{{Scenario: "checkinout", Metric: perfexpv1alpha1.MetricP95, Max: &p95}}}
		s.Spec.Capacity = &perfexpv1alpha1.SweepCapacity{Parameter: param, Min: lo, Max: hi, MaxRepeats: 2}
	}
}

// succeeded is a run's outcome with the checkinout scenario at p95, and workloads.
func succeeded(p95 float64, workloads ...result.WorkloadResult) sweep.Outcome {
	return sweep.Outcome{Phase: perfexpv1alpha1.PhaseSucceeded, Result: &result.Result{Validity: perfexpv1alpha1.Valid,
		Scenarios: []result.ScenarioResult{{Name: "checkinout", RequestStats: result.RequestStats{P95: &p95, Rate: ptr(40.0)}}}, Workloads: workloads}}
}

func TestCapacityPlanFromStatus(t *testing.T) {
	s := newSweep(withCapacity(perfexpv1alpha1.LoadVUs, 5, 100))
	p, err := sweep.NewCapacityPlan(s)
	if err != nil || len(p.Runs) != 0 {
		t.Fatalf("a new search plans %v runs (%v), want none", p, err)
	}
	s.Status.Capacity = &perfexpv1alpha1.SweepCapacityStatus{Probes: []perfexpv1alpha1.CapacityProbeStatus{{Load: 5, Runs: 1, Outcome: perfexpv1alpha1.ProbeHeld}, {Load: 10, Runs: 2}}}
	p, err = sweep.NewCapacityPlan(s)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, r := range p.Runs {
		names = append(names, r.Name)
	}
	if got := strings.Join(names, " "); got != "pool-vus-5-1 pool-vus-10-1 pool-vus-10-2" {
		t.Fatalf("runs %s", got)
	}
	exp, err := p.Experiment(s, p.Runs[2])
	if err != nil {
		t.Fatal(err)
	}
	if got := *exp.Spec.Load.Scenarios[0].VUs; got != 10 || exp.Spec.Baseline != nil {
		t.Errorf("probe run at %d VUs with baseline %v, want 10 and none", got, exp.Spec.Baseline)
	}
	if exp.Spec.Load.Scenarios[1].ArrivalRate.Rate != 10 {
		t.Error("the VUs search changed the arrival-rate scenario")
	}
}

func TestCapacityPlanRefusals(t *testing.T) {
	pct := int32(10)
	tests := []struct {
		name string
		opt  func(*perfexpv1alpha1.PerfSweep)
		want string
	}{
		{"no objectives", func(s *perfexpv1alpha1.PerfSweep) { s.Spec.Template.Analysis = nil }, "needs objectives"},
		{"a relative objective", func(s *perfexpv1alpha1.PerfSweep) {
			s.Spec.Template.Analysis.Objectives[0].Max, s.Spec.Template.Analysis.Objectives[0].MaxIncreasePercent = nil, &pct
		}, "relative to a baseline"},
		{"a rate search without an arrival-rate scenario", func(s *perfexpv1alpha1.PerfSweep) {
			s.Spec.Capacity.Parameter = perfexpv1alpha1.LoadRate
			s.Spec.Template.Load.Scenarios = s.Spec.Template.Load.Scenarios[:1]
		}, "applies to no scenario"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := sweep.NewCapacityPlan(newSweep(withCapacity(perfexpv1alpha1.LoadVUs, 5, 100), tc.opt))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want %q", err, tc.want)
			}
		})
	}
}

// TestAdvanceCapacity walks a search through the status, as the controller does between its
// reconciles: the first probe, a repeat of a probe near the bound, the answer and its report.
func TestAdvanceCapacity(t *testing.T) {
	s := newSweep(withCapacity(perfexpv1alpha1.LoadVUs, 5, 20))
	outcomes := map[string]sweep.Outcome{}
	advance := func() sweep.CapacityStep {
		t.Helper()
		p, err := sweep.NewCapacityPlan(s)
		if err != nil {
			t.Fatal(err)
		}
		return sweep.AdvanceCapacity(s, p, outcomes)
	}
	if st := advance(); st.Done || len(s.Status.Capacity.Probes) != 1 || s.Status.Capacity.Probes[0].Load != 5 {
		t.Fatalf("first step %+v, probes %+v", st, s.Status.Capacity.Probes)
	}
	outcomes["pool-vus-5-1"] = succeeded(100)
	advance()
	outcomes["pool-vus-10-1"] = succeeded(290) // near the bound: another run
	advance()
	if pr := s.Status.Capacity.Probes[1]; pr.Runs != 2 || pr.Outcome != "" {
		t.Fatalf("probe near the bound %+v, want a second run", pr)
	}
	outcomes["pool-vus-10-2"] = succeeded(295)
	st := advance()
	throttled := result.WorkloadResult{Kind: "Deployment", Name: "circulation", CPUThrottledPercent: ptr(42.0)}
	calm := result.WorkloadResult{Kind: "Deployment", Name: "inventory", CPUThrottledPercent: ptr(1.0)}
	if st.Done {
		t.Fatalf("done after an undecided probe at 10: %+v", s.Status.Capacity)
	}
	if pr := s.Status.Capacity.Probes[1]; pr.Outcome != perfexpv1alpha1.ProbeUndecided {
		t.Fatalf("probe %+v, want Undecided after its budget", pr)
	}
	// The bracket is 5-10: the next probe bisects it.
	next := s.Status.Capacity.Probes[2].Load
	if next != 7 {
		t.Fatalf("next probe at %d, want 7", next)
	}
	outcomes["pool-vus-7-1"] = succeeded(900, throttled, calm)
	advance()
	outcomes["pool-vus-6-1"] = succeeded(120)
	if st := advance(); !st.Done {
		t.Fatalf("not done: %+v", s.Status.Capacity)
	}
	c := s.Status.Capacity
	if c.Summary != "6-7 VUs" || *c.LastHeld != 6 || *c.FirstBroken != 7 {
		t.Fatalf("answer %+v", c)
	}
	p, _ := sweep.NewCapacityPlan(s)
	rep := sweep.CapacityReport(s, p, outcomes)
	if !strings.Contains(c.LimitingFactor, "P95") || !strings.Contains(c.LimitingFactor, "Deployment/circulation: 42 % of its CPU periods throttled") {
		t.Errorf("limiting factor %q", c.LimitingFactor)
	}
	if len(rep.Probes) != 4 || rep.Probes[0].Load != 5 || rep.Probes[3].Load != 10 || rep.Probes[3].Succeeded != 2 {
		t.Errorf("report probes %+v, want 5, 6, 7, 10 by load", rep.Probes)
	}
}
