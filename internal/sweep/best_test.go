package sweep

import (
	"testing"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/report"
	"github.com/perfexp/perfexp/internal/result"
)

func TestBestArm(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	arm := func(name string, change perfexpv1alpha1.Change, p95Deltas ...float64) report.SweepArmResult {
		c := &result.Comparison{Change: change}
		for _, d := range p95Deltas {
			c.Metrics = append(c.Metrics, result.MetricComparison{Scenario: "s", Kind: perfexpv1alpha1.MetricP95, DeltaPercent: f(d)})
		}
		// A request-level metric with a larger change must not count: the headline is per scenario.
		c.Metrics = append(c.Metrics, result.MetricComparison{Scenario: "s", Request: "r", Kind: perfexpv1alpha1.MetricP95, DeltaPercent: f(-90)})
		return report.SweepArmResult{Name: name, Comparison: c}
	}
	tests := []struct {
		name string
		arms []report.SweepArmResult
		want string
	}{
		{"the Improved arm with the largest fall of p95", []report.SweepArmResult{{Name: "baseline"},
			arm("a", perfexpv1alpha1.ChangeImproved, -10), arm("b", perfexpv1alpha1.ChangeImproved, -30, -10), arm("c", perfexpv1alpha1.ChangeImproved, -15)}, "b"},
		{"a larger point estimate without the verdict does not win", []report.SweepArmResult{{Name: "baseline"},
			arm("a", perfexpv1alpha1.ChangeImproved, -8), arm("noisy", perfexpv1alpha1.ChangeUnknown, -60)}, "a"},
		{"no arm improved", []report.SweepArmResult{{Name: "baseline"}, arm("a", perfexpv1alpha1.ChangeRegressed, 20)}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := bestArm(tt.arms); got != tt.want {
				t.Errorf("best arm %q, want %q", got, tt.want)
			}
		})
	}
}
