package main

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
)

func i32(v int32) *int32 { return &v }

func TestRenderSweep(t *testing.T) {
	meta := func(name string) metav1.ObjectMeta { return metav1.ObjectMeta{Namespace: "perfexp-demo", Name: name} }
	tests := []struct {
		name string
		sw   perfexpv1alpha1.PerfSweep
		want string
	}{
		{"a bisect at its second step", perfexpv1alpha1.PerfSweep{ObjectMeta: meta("demo-bisect"),
			Spec: perfexpv1alpha1.PerfSweepSpec{Bisect: &perfexpv1alpha1.SweepBisect{}},
			Status: perfexpv1alpha1.PerfSweepStatus{Phase: perfexpv1alpha1.SweepRunning, Total: 12, Done: 7,
				CurrentExperiment: "demo-bisect-step-2-1", CurrentArm: "step-2",
				Bisect: &perfexpv1alpha1.SweepBisectStatus{Steps: []perfexpv1alpha1.BisectStepStatus{
					{Description: "circulation, inventory", Repeats: 3, Outcome: perfexpv1alpha1.BisectReproduces, Message: "p95 +800.0 % [+700.1, +901.3]"},
					{Description: "circulation", Repeats: 1}}}}},
			`perfexp-demo/demo-bisect  Running  (bisect)
  runs       [##################------------] 7 of 12 done (the plan grows as the search goes)
  now        demo-bisect-step-2-1 (step-2) holds the environment: kubectl perfexp watch demo-bisect-step-2-1 -n perfexp-demo
  step 1     circulation, inventory  3 repeats: Reproduces, p95 +800.0 % [+700.1, +901.3]
  step 2     circulation  1 repeat: running
`},
		{"a capacity search that ended", perfexpv1alpha1.PerfSweep{ObjectMeta: meta("demo-capacity"),
			Spec: perfexpv1alpha1.PerfSweepSpec{Capacity: &perfexpv1alpha1.SweepCapacity{Parameter: perfexpv1alpha1.LoadRate}},
			Status: perfexpv1alpha1.PerfSweepStatus{Phase: perfexpv1alpha1.SweepSucceeded, Total: 3, Done: 3, Verdict: perfexpv1alpha1.VerdictPass,
				Capacity: &perfexpv1alpha1.SweepCapacityStatus{LastHeld: i32(74), FirstBroken: i32(80),
					Summary: "74-80 iterations/s", LimitingFactor: "p95 of checkinout; circulation throttled in 98 % of its CPU periods",
					Probes: []perfexpv1alpha1.CapacityProbeStatus{
						{Load: 40, Runs: 1, Outcome: perfexpv1alpha1.ProbeHeld},
						{Load: 80, Runs: 1, Outcome: perfexpv1alpha1.ProbeBroke, Message: "p95 274.8 ms > 150"},
						{Load: 74, Runs: 1, Outcome: perfexpv1alpha1.ProbeHeld}}},
				ReportRef: &perfexpv1alpha1.LocalObjectReference{Name: "demo-capacity-report"}}},
			`perfexp-demo/demo-capacity  Succeeded  (capacity search)
  runs       [##############################] 3 of 3 done (the plan grows as the search goes)
  probe 1    40 iterations/s  1 run: Held
  probe 2    80 iterations/s  1 run: Broke, p95 274.8 ms > 150
  probe 3    74 iterations/s  1 run: Held
  bracket    held at 74, broke at 80
  capacity   74-80 iterations/s
  limit      p95 of checkinout; circulation throttled in 98 % of its CPU periods
  verdict    Pass
  report     kubectl perfexp compare demo-capacity -n perfexp-demo
`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := renderSweep(&tt.sw); got != tt.want {
				t.Errorf("got:\n%s\nwant:\n%s", got, tt.want)
			}
		})
	}
}
