package main

import (
	"strings"
	"testing"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/report"
)

func TestPrintCapacity(t *testing.T) {
	p95, rate, errs := 260.0, 74.0, 0.0
	held, broke := int32(37), int32(38)
	js, err := report.CapacityJSON(&report.CapacityResult{Sweep: "cap", Parameter: perfexpv1alpha1.LoadVUs, Summary: "37-38 VUs", LastHeld: &held, FirstBroken: &broke,
		StopReason: "within half the resolution", LimitingObjective: "checkinout P95 <= 300 ms",
		Probes: []report.CapacityProbe{{Load: 37, Outcome: "Held", Experiments: []string{"cap-vus-37-1"}, Succeeded: 1,
			Scenarios: []report.SweepScenarioStats{{Name: "checkinout", P95: &p95, Rate: &rate, ErrorPercent: &errs}}}}})
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := printCapacity(&b, string(js)); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"37   Held     1/1", "260.0 ms", "capacity 37-38 VUs", "limiting factor: first objective to break: checkinout P95 <= 300 ms"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, b.String())
		}
	}
}
