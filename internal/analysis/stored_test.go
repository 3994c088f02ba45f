package analysis

import (
	"fmt"
	"testing"

	"github.com/perfexp/perfexp/internal/result"
)

func TestStoredIntervalsAreBounded(t *testing.T) {
	build := func(scenarios, requests int) (*result.IntervalData, *result.Result) {
		d, r := &result.IntervalData{StepSeconds: 30}, &result.Result{}
		d.Series = append(d.Series, result.IntervalSeries{Scenario: result.AllScenarios})
		for s := range scenarios {
			sr := result.ScenarioResult{Name: fmt.Sprint("s", s)}
			d.Series = append(d.Series, result.IntervalSeries{Scenario: sr.Name})
			for q := range requests {
				sr.Requests = append(sr.Requests, result.RequestResult{Name: fmt.Sprint("r", q)})
				d.Series = append(d.Series, result.IntervalSeries{Scenario: sr.Name, Request: fmt.Sprint("r", q)})
			}
			r.Scenarios = append(r.Scenarios, sr)
		}
		return d, r
	}
	tests := []struct {
		name                string
		scenarios, requests int
		want                int
	}{
		{"one scenario keeps its ten most frequent request names", 1, 15, 1 + 1 + 10},
		{"three scenarios", 3, 12, 1 + 3 + 30},
		{"sixteen scenarios stay within the budget", 16, 20, 1 + 16 + 16*1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := stored(build(tc.scenarios, tc.requests))
			if len(got.Series) != tc.want || len(got.Series) > result.MaxStoredSeries {
				t.Errorf("%d series stored, want %d", len(got.Series), tc.want)
			}
		})
	}
}
