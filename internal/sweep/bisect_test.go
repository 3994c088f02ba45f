package sweep_test

import (
	"strings"
	"testing"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/result"
	"github.com/perfexp/perfexp/internal/sweep"
)

func withBisect(names ...string) func(*perfexpv1alpha1.PerfSweep) {
	return func(s *perfexpv1alpha1.PerfSweep) {
		s.Spec.Bisect = &perfexpv1alpha1.SweepBisect{MaxRepeats: 4, MaxSteps: 10}
		for _, n := range names {
			s.Spec.Bisect.Services = append(s.Spec.Bisect.Services, perfexpv1alpha1.BisectService{Name: n, Container: n, Baseline: n + ":old", Candidate: n + ":new"})
		}
	}
}

func TestBisectPlanFromStatus(t *testing.T) {
	s := newSweep(withBisect("a", "b", "c"))
	if p := sweep.NewBisectPlan(s); len(p.Runs) != 0 {
		t.Fatalf("a new bisect plans %d runs", len(p.Runs))
	}
	s.Status.Bisect = &perfexpv1alpha1.SweepBisectStatus{Steps: []perfexpv1alpha1.BisectStepStatus{{Services: []int32{1}, Description: "b", Repeats: 2}}}
	p := sweep.NewBisectPlan(s)
	var names []string
	for _, r := range p.Runs {
		names = append(names, r.Name)
	}
	// The order within a repeat alternates.
	if got := strings.Join(names, " "); got != "pool-step-1-baseline-1 pool-step-1-1 pool-step-1-2 pool-step-1-baseline-2" {
		t.Fatalf("runs %s", got)
	}
	exp, err := p.Experiment(s, p.Runs[1])
	if err != nil {
		t.Fatal(err)
	}
	var images []string
	for _, w := range exp.Spec.Variant.Workloads {
		images = append(images, w.Image)
	}
	if got := strings.Join(images, " "); got != "a:old b:new c:old" {
		t.Errorf("the step runs %s, want only b's new image", got)
	}
	if exp.Spec.Baseline == nil || exp.Spec.Baseline.Name != "pool-step-1-baseline-1" {
		t.Errorf("compared with %+v, want the step's baseline run of the same repeat", exp.Spec.Baseline)
	}
}

// TestAdvanceBisect walks a bisect over two services through the status: the confirming step,
// a repeat, then the halves, until the slower service is named.
func TestAdvanceBisect(t *testing.T) {
	s := newSweep(withBisect("a", "b"))
	outcomes := map[string]sweep.Outcome{}
	// b's new image is 30 % slower; each run's p95 wanders a little.
	jitter := []float64{1, 1.02, 0.99, 1.01}
	play := func() (bool, string) {
		t.Helper()
		p := sweep.NewBisectPlan(s)
		for _, r := range p.Runs {
			if _, ok := outcomes[r.Name]; ok {
				continue
			}
			exp, err := p.Experiment(s, r)
			if err != nil {
				t.Fatal(err)
			}
			p95 := 100 * jitter[(r.Repeat+len(r.Name))%len(jitter)]
			for _, w := range exp.Spec.Variant.Workloads {
				if w.Image == "b:new" {
					p95 *= 1.3
				}
			}
			o := succeeded(p95)
			o.Result.Experiment, o.Result.TestID = r.Name, r.Name
			o.Result.Scenarios[0].Validity = perfexpv1alpha1.Valid
			o.Result.LoadShape = []result.ScenarioShape{{Name: "checkinout", Executor: "constant-vus", VUs: 5, Duration: "1m0s", Parallelism: 1}}
			outcomes[r.Name] = o
		}
		return sweep.AdvanceBisect(s, p, outcomes)
	}
	for range 30 {
		if done, _ := play(); done {
			break
		}
	}
	st := s.Status.Bisect
	if st.Summary != "b" || st.Interaction {
		t.Fatalf("answer %q, steps %+v", st.Summary, st.Steps)
	}
	if len(st.Steps) != 3 || st.Steps[0].Outcome != perfexpv1alpha1.BisectReproduces || !strings.Contains(st.Steps[0].Message, "checkinout") {
		t.Errorf("steps %+v, want all, then a, then b", st.Steps)
	}
	rep := sweep.BisectReport(s, sweep.NewBisectPlan(s), outcomes)
	if len(rep.Steps) != 3 || rep.Steps[2].Comparison == nil || rep.Culprits[0] != "b" {
		t.Errorf("report %+v", rep)
	}
}
