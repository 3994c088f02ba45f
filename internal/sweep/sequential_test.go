package sweep_test

import (
	"fmt"
	"strings"
	"testing"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/report"
	"github.com/perfexp/perfexp/internal/sweep"
)

func withSequential(maxRepeats int32) func(*perfexpv1alpha1.PerfSweep) {
	return func(s *perfexpv1alpha1.PerfSweep) {
		s.Spec.Sequential = &perfexpv1alpha1.SweepSequential{MaxRepeats: maxRepeats}
	}
}

// atLook sets the status of a sequential sweep that planned repeats so far, with the arms
// recorded as stopped after the given repeats.
func atLook(repeats int32, stopped map[string]int32) func(*perfexpv1alpha1.PerfSweep) {
	return func(s *perfexpv1alpha1.PerfSweep) {
		st := &perfexpv1alpha1.SweepSequentialStatus{Repeats: repeats}
		for name, n := range stopped {
			st.Arms = append(st.Arms, perfexpv1alpha1.SweepSequentialArm{Name: name, Repeats: n})
		}
		s.Status.Sequential = st
	}
}

func runsByArm(p *sweep.Plan) map[string][]int {
	out := map[string][]int{}
	for _, r := range p.Runs {
		out[r.Arm] = append(out[r.Arm], r.Repeat)
	}
	return out
}

func TestPlanStopsDecidedArms(t *testing.T) {
	s := newSweep(withArms(envArm("pool-a", "10"), envArm("pool-b", "20")), withRepeats(2), withSequential(5),
		atLook(4, map[string]int32{"pool-a": 2}))
	p, err := sweep.NewPlan(s)
	if err != nil {
		t.Fatal(err)
	}
	got := runsByArm(p)
	if fmt.Sprint(got["pool-a"]) != "[1 2]" || fmt.Sprint(got["pool-b"]) != "[1 2 3 4]" || fmt.Sprint(got["baseline"]) != "[1 2 3 4]" {
		t.Errorf("runs by arm %v: want pool-a only in repeats 1-2 (stopped), pool-b and the baseline in 1-4", got)
	}
	// The runs of the repeats planned before the stop keep their names and order.
	before, err := sweep.NewPlan(newSweep(withArms(envArm("pool-a", "10"), envArm("pool-b", "20")), withRepeats(2), withSequential(5)))
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range before.Runs {
		if p.Runs[i] != r {
			t.Errorf("run %d changed: %+v, was %+v", i, p.Runs[i], r)
		}
	}
	for _, r := range p.Runs {
		if r.Arm == "pool-b" && r.Baseline != sweep.RunName("pool", "baseline", r.Repeat) {
			t.Errorf("run %s is paired with %s", r.Name, r.Baseline)
		}
	}
}

func TestCompareSequentialFreezesDecidedArms(t *testing.T) {
	s := newSweep(withArms(envArm("pool-a", "10"), envArm("pool-b", "20")), withRepeats(2), withSequential(4),
		atLook(4, map[string]int32{"pool-a": 2}))
	p, err := sweep.NewPlan(s)
	if err != nil {
		t.Fatal(err)
	}
	// pool-a is three times slower in repeats 1 and 2 (decided there); had it run on, repeats
	// 3 and 4 would make it look faster. pool-b is 4 % slower, give or take 4 %: not decisive.
	p95 := map[string][]float64{
		"baseline": {100, 101, 100, 101},
		"pool-a":   {300, 303, 20, 20},
		"pool-b":   {108, 100, 108, 100},
	}
	outcomes := map[string]sweep.Outcome{}
	for arm, vs := range p95 {
		for i, v := range vs {
			name := sweep.RunName("pool", arm, i+1)
			outcomes[name] = sweep.Outcome{Phase: perfexpv1alpha1.PhaseSucceeded, Result: runResult(name, v, 80), Seconds: 60}
		}
	}
	r := sweep.Compare(s, p, outcomes, nil)
	var a, b *report.SweepArmResult
	for i := range r.Arms {
		switch r.Arms[i].Name {
		case "pool-a":
			a = &r.Arms[i]
		case "pool-b":
			b = &r.Arms[i]
		}
	}
	if a.Comparison.Change != perfexpv1alpha1.ChangeRegressed || a.Decision == nil || !a.Decision.Decided || a.Decision.Repeats != 2 ||
		a.Decision.Look != 1 || a.Decision.Runs != 2 || a.Decision.BaselineRuns != 2 || a.Decision.EnvironmentSeconds != 240 {
		t.Errorf("pool-a: %s, decision %+v: want Regressed, decided at look 1 on 2 repeats, 2+2 runs, 240 s", a.Comparison.Change, a.Decision)
	}
	if b.Decision == nil || b.Decision.Decided || b.Decision.Repeats != 4 || b.Decision.Runs != 4 || b.Decision.EnvironmentSeconds != 480 {
		t.Errorf("pool-b: decision %+v: want undecided after 4 repeats, 4 runs, 480 s", b.Decision)
	}
	if sweep.Decided(r) {
		t.Error("the sweep reads decided with pool-b undecided")
	}
	md := report.SweepMarkdown(r)
	for _, want := range []string{"## What each decision took", "| pool-a | Regressed | yes, stopped | 2 | 1 (", "| 2 + 2 | 4m0s |", "| pool-b | Inconclusive | no: budget spent | 4 |",
		"arms decided earlier stopped there"} {
		if !strings.Contains(md, want) {
			t.Errorf("the report lacks %q:\n%s", want, md)
		}
	}
	if strings.Contains(strings.Join(r.Notes, "\n"), "now read") {
		t.Errorf("notes %q say a verdict changed", r.Notes)
	}
	// Had pool-a been recorded with another verdict, the report says its results changed.
	s.Status.Sequential.Arms[0].Change = perfexpv1alpha1.ChangeImproved
	if notes := strings.Join(sweep.Compare(s, p, outcomes, nil).Notes, "\n"); !strings.Contains(notes, "arm pool-a stopped with the verdict Improved after 2 repeats; its runs' results now read Regressed") {
		t.Errorf("notes %q do not say pool-a's verdict changed", notes)
	}
	page, err := report.SweepHTML(r)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"an arm stopping once decided", "What each decision took", ">2 + 2</td>"} {
		if !strings.Contains(page, want) {
			t.Errorf("the HTML report lacks %q", want)
		}
	}
}

func TestDefaultIsSequential(t *testing.T) {
	values := make([]string, 63)
	for i := range values {
		values[i] = fmt.Sprint(i + 1)
	}
	tests := []struct {
		name      string
		sweep     *perfexpv1alpha1.PerfSweep
		budget    int32 // 0: not sequential
		firstLook int
	}{
		{"neither repeats nor sequential: auto, 3 repeats then up to 10", newSweep(withArms(envArm("pool-a", "10")), withRepeats(0)), 10, 3},
		{"auto with 64 arms: the budget fits 200 runs", newSweep(withMatrix(perfexpv1alpha1.SweepDimension{Name: "pool",
			Env: &perfexpv1alpha1.EnvDimension{WorkloadSelector: circulation, Variable: "HTTP_MAXPOOLSIZE", Values: values}}), withRepeats(0)), 3, 3},
		{"repeats set: fixed", newSweep(withArms(envArm("pool-a", "10")), withRepeats(1)), 0, 1},
		{"sequential set: its budget", newSweep(withArms(envArm("pool-a", "10")), withRepeats(0), withSequential(4)), 4, 2},
		{"a capacity search keeps its own repeats", newSweep(withCapacity(perfexpv1alpha1.LoadRate, 10, 200), withRepeats(0)), 0, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q := sweep.Sequential(tt.sweep)
			switch {
			case tt.budget == 0 && q != nil:
				t.Errorf("sequential %+v, want none", q)
			case tt.budget != 0 && (q == nil || q.MaxRepeats != tt.budget):
				t.Errorf("sequential %+v, want a budget of %d repeats", q, tt.budget)
			}
			if got := sweep.FirstLook(tt.sweep); got != tt.firstLook {
				t.Errorf("first look after %d repeats, want %d", got, tt.firstLook)
			}
			if tt.sweep.Spec.Capacity != nil {
				return
			}
			if _, err := sweep.NewPlan(tt.sweep); err != nil {
				t.Errorf("refused: %v", err)
			}
		})
	}
}

func TestSequentialSweepOverLoadWaitsForNoDecision(t *testing.T) {
	// Arms that change only the load are not comparable with the baseline: a sweep of them
	// alone (sequential by default) is done at its first look, not after the whole budget.
	s := newSweep(withMatrix(perfexpv1alpha1.SweepDimension{Name: "users",
		Load: &perfexpv1alpha1.LoadDimension{Parameter: perfexpv1alpha1.LoadVUs, Values: []int32{1, 20}}}), withRepeats(0))
	p, err := sweep.NewPlan(s)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Runs) != 9 {
		t.Fatalf("%d runs, want 3 arms x 3 repeats", len(p.Runs))
	}
	outcomes := map[string]sweep.Outcome{}
	for _, run := range p.Runs {
		p95 := map[string]float64{"baseline": 100, "users-1": 40, "users-20": 300}[run.Arm] + float64(run.Repeat)
		outcomes[run.Name] = sweep.Outcome{Phase: perfexpv1alpha1.PhaseSucceeded, Result: runResult(run.Name, p95, 50)}
	}
	r := sweep.Compare(s, p, outcomes, nil)
	if !sweep.Decided(r) {
		t.Error("a sweep over load alone waits for decisions no look can make")
	}
	for _, a := range r.Arms[1:] {
		if a.Decision != nil || a.Comparison == nil {
			t.Errorf("arm %s: decision %+v, comparison %v: want no decision and a comparison", a.Name, a.Decision, a.Comparison)
		}
	}
}
