package load

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
)

func TestUnitExec(t *testing.T) {
	tests := []struct {
		name          string
		scenarios     []perfexpv1alpha1.Scenario
		warmUpExec    string
		wantScenario  string
		wantWarmUpRun string
	}{
		{name: "default function", scenarios: []perfexpv1alpha1.Scenario{{Name: "a"}}},
		{name: "the scenario's exec, for its warm-up too", scenarios: []perfexpv1alpha1.Scenario{{Name: "a", Exec: "browse"}},
			wantScenario: "browse", wantWarmUpRun: "browse"},
		{name: "the warm-up's own exec wins", scenarios: []perfexpv1alpha1.Scenario{{Name: "a", Exec: "browse"}}, warmUpExec: "warm",
			wantScenario: "browse", wantWarmUpRun: "warm"},
		{name: "a fromScript script's warm-up function", scenarios: []perfexpv1alpha1.Scenario{{Name: "a", FromScript: true}}, warmUpExec: "warm",
			wantWarmUpRun: "warm"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			exp := &perfexpv1alpha1.PerfExperiment{}
			exp.Spec.Load.Scenarios = tt.scenarios
			exp.Spec.Load.WarmUp = &perfexpv1alpha1.WarmUp{Exec: tt.warmUpExec, VUs: 1, Duration: metav1.Duration{Duration: 1e9}}
			if got := scenarioUnits(exp)[0].exec; got != tt.wantScenario {
				t.Errorf("scenario runs %q, want %q", got, tt.wantScenario)
			}
			w, _ := warmUpUnit(exp)
			if w.exec != tt.wantWarmUpRun || w.fromScript {
				t.Errorf("warm-up runs %q (fromScript %v), want %q with the warm-up's shape", w.exec, w.fromScript, tt.wantWarmUpRun)
			}
		})
	}
}
