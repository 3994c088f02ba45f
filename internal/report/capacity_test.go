package report

import (
	"strings"
	"testing"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	judgesearch "github.com/perfexp/perfexp/internal/judge/search"
)

func capacitySample() *CapacityResult {
	f := func(v float64) *float64 { return &v }
	held, broke := int32(37), int32(38)
	probe := func(load int64, outcome string, p95 float64) CapacityProbe {
		return CapacityProbe{Load: load, Outcome: outcome, Why: "every objective within its bound", Experiments: []string{"cap-vus-1"}, Succeeded: 1,
			Limiting: "checkinout P95 <= 300 ms",
			Objectives: []judgesearch.ObjectiveInterval{{Name: "checkinout P95 <= 300 ms", Unit: "ms", Bound: 300, Upper: true, Value: f(p95), Low: f(p95 * 0.9), High: f(p95 * 1.1), Runs: 1,
				Outcome: perfexpv1alpha1.ObjectiveMet}},
			Scenarios: []SweepScenarioStats{{Name: "checkinout", Runs: 1, P95: f(p95), Rate: f(float64(load) * 2), ErrorPercent: f(0)}}}
	}
	return &CapacityResult{Sweep: "cap", Namespace: "perf", Parameter: perfexpv1alpha1.LoadVUs, Min: 5, Max: 200, ResolutionPercent: 10, MaxProbes: 12, MaxRepeats: 3,
		Summary: "37-38 VUs", LastHeld: &held, FirstBroken: &broke, StopReason: "within half the resolution",
		LimitingObjective: "checkinout P95 <= 300 ms", LimitingWorkload: "Deployment/circulation: 42 % of its CPU periods throttled",
		Probes: []CapacityProbe{probe(5, "Held", 109), probe(37, "Held", 260), probe(38, "Undecided", 290)}}
}

func TestCapacityMarkdown(t *testing.T) {
	md := CapacityMarkdown(capacitySample())
	for _, want := range []string{
		"**Capacity: 37-38 VUs** — the objectives held at 37 VUs and did not at 38.",
		"Limiting factor: first objective to break: checkinout P95 <= 300 ms; most constrained workload: Deployment/circulation: 42 % of its CPU periods throttled.",
		"- First load that did not: 38 VUs, Undecided — every objective within its bound",
		"| 38 | Undecided | 1/1 | 290.0 | 76.0 | 0.00 % | checkinout P95 <= 300 ms: 290.0 [261.0, 319.0] ms |",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("report.md lacks %q:\n%s", want, md)
		}
	}
}

func TestCapacityHTML(t *testing.T) {
	page, err := CapacityHTML(capacitySample())
	if err != nil {
		t.Fatal(err)
	}
	if strings.Count(page, `class="capacity-line`) < 2 || !strings.Contains(page, "37-38 VUs") {
		t.Error("the page lacks the two capacity curves or the answer")
	}
}
