package analyzer

import (
	"testing"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
)

func TestGateInput(t *testing.T) {
	yes, no := true, false
	sums := summaryData{kept: true, data: map[string]string{
		"browse-0.json": `{"metrics":{"http_req_duration":{"thresholds":{"p(95)<500":true}}}}`,
	}}
	tests := []struct {
		name         string
		spec         *bool
		operatorDef  bool
		crossed      bool
		s            summaryData
		wantGate     bool
		wantCrossed  bool
		wantNamedLen int
	}{
		{name: "operator default applies", operatorDef: true, wantGate: true},
		{name: "the spec overrides the default", spec: &no, operatorDef: true},
		{name: "the spec turns it on", spec: &yes, wantGate: true},
		{name: "exit code 99 and named thresholds", crossed: true, s: sums, wantCrossed: true, wantNamedLen: 1},
		{name: "summaries that could not be read name nothing", s: summaryData{kept: true, err: errNoTestID}, wantNamedLen: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			exp := &perfexpv1alpha1.PerfExperiment{}
			exp.Spec.Analysis = &perfexpv1alpha1.Analysis{FailOnRegression: tt.spec}
			exp.Status.Load = &perfexpv1alpha1.LoadStatus{ThresholdsCrossed: tt.crossed}
			in := gateInput(exp, tt.s, tt.operatorDef)
			if in.FailOnRegression != tt.wantGate || in.ThresholdsCrossed != tt.wantCrossed || len(in.Thresholds) != tt.wantNamedLen {
				t.Errorf("got %+v", in)
			}
		})
	}
}
