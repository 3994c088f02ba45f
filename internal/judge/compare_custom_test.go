package judge

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/resource"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/result"
)

// customRun is one run's results with a check passing pass %, a Rate at share %, a Gauge
// (one series) peaking at depth, and a Gauge written by two runners; each with a run-to-run
// noise (known truth: the arguments are the run's true values).
func customRun(name string, i int, pass, share, depth float64) *result.Result {
	r := transactionRun(name, i, 1)
	noise := math.Sin(float64(7*i + 3))
	s := &r.Scenarios[0]
	s.Checks = []result.CheckResult{
		{Name: "body has id", PassPercent: result.Num(100), Series: 1},
		{Name: "status is 200", PassPercent: result.Num(pass + 0.02*noise), Series: 1},
	}
	s.Rates = []result.RateResult{{Name: "heavy_basket", Metric: "k6_heavy_basket_rate", Percent: result.Num(share + 0.3*noise)}}
	s.Gauges = []result.GaugeResult{
		{Name: "pool_size", Metric: "k6_pool_size", Min: result.Num(4), Max: result.Num(8), Series: 2},
		{Name: "queue_depth", Metric: "k6_queue_depth", Min: result.Num(2), Max: result.Num(depth * (1 + 0.02*noise)), Last: result.Num(depth / 2), Series: 1},
	}
	return r
}

// Story: one run against one baseline run shows every check, Rate and Gauge found in both with
// the baseline, the value and the difference, Unknown with the reason (k6 writes a Rate
// without counts; a Gauge's statistic is one value per run); a Gauge written by several runners
// has no Last row. None is primary, and the headline is the requests'.
func TestCustomSingleRunComparison(t *testing.T) {
	base, cur := customRun("base", 0, 99.5, 20, 30), customRun("arm", 1, 97, 30, 45)
	c := Compare(cur, &result.IntervalData{}, &Baseline{Name: "base", Result: base}, &result.IntervalData{}, CompareOptions{})
	if c.Message != "" {
		t.Fatalf("comparison refused: %s", c.Message)
	}
	tests := []struct {
		label       string
		unit        string
		base, value float64
		why         string
	}{
		{`desk check "status is 200" passrate`, "%", *base.Scenarios[0].Checks[1].PassPercent, *cur.Scenarios[0].Checks[1].PassPercent, "without counts"},
		{`desk check "body has id" passrate`, "%", 100, 100, "without counts"},
		{"desk rate heavy_basket percent", "%", *base.Scenarios[0].Rates[0].Percent, *cur.Scenarios[0].Rates[0].Percent, "k6 writes a Rate as a ratio"},
		{"desk gauge queue_depth max", "", *base.Scenarios[0].Gauges[1].Max, *cur.Scenarios[0].Gauges[1].Max, "a Gauge's max is one value per run"},
		{"desk gauge queue_depth min", "", 2, 2, "a Gauge's min is one value per run"},
		{"desk gauge queue_depth last", "", 15, 22.5, "a Gauge's last is one value per run"},
		{"desk gauge pool_size max", "", 8, 8, "one value per run"},
	}
	for _, tc := range tests {
		mc := comparedRow(c, tc.label)
		if mc == nil {
			t.Errorf("%s: not compared; rows: %v", tc.label, labels(c))
			continue
		}
		if mc.Change != perfexpv1alpha1.ChangeUnknown || !strings.Contains(mc.Why, tc.why) || mc.Primary || mc.Unit != tc.unit {
			t.Errorf("%s: %s (primary %v, unit %q): %s; want Unknown, secondary, unit %q, with %q", tc.label, mc.Change, mc.Primary, mc.Unit, mc.Why, tc.unit, tc.why)
		}
		if mc.Baseline == nil || mc.Value == nil || mc.Delta == nil || *mc.Baseline != tc.base || *mc.Value != tc.value || math.Abs(*mc.Delta-(tc.value-tc.base)) > 1e-9 {
			t.Errorf("%s: baseline %v value %v delta %v; want %g, %g, %g", tc.label, deref(mc.Baseline), deref(mc.Value), deref(mc.Delta), tc.base, tc.value, tc.value-tc.base)
		}
	}
	if mc := comparedRow(c, "desk gauge pool_size last"); mc != nil {
		t.Errorf("a Gauge of two series was compared on its last value: %+v", mc)
	}
	if mc := comparedRow(c, `desk check "status is 200" passrate`); mc != nil && (mc.DeltaPercent == nil || math.Abs(*mc.DeltaPercent - 100*(*mc.Value-*mc.Baseline) / *mc.Baseline) > 1e-9) {
		t.Errorf("delta percent %v", deref(mc.DeltaPercent))
	}
	if c.Change != perfexpv1alpha1.ChangeNoMeaningfulChange && c.Change != perfexpv1alpha1.ChangeInconclusive && c.Change != perfexpv1alpha1.ChangeUnknown {
		t.Errorf("headline %s: only checks, Rates and Gauges changed", c.Change)
	}
}

// Story: across 3 against 3 runs a check whose pass rate fell from 99.5 % to 97 % is Regressed
// (and one that rose, Improved), an unchanged one NoMeaningfulChange; a Rate that rose from
// 20 % to 30 % is Regressed when an objective caps it (max), Improved when one floors it (min),
// and Inconclusive with the reason when none says which way is better; a Gauge peaking 50 %
// higher is Regressed under a max objective. None of them changes the headline.
func TestCustomRunsComparison(t *testing.T) {
	q := func(s string) *resource.Quantity { v := resource.MustParse(s); return &v }
	capRate := perfexpv1alpha1.Objective{Metric: perfexpv1alpha1.MetricPercent, Scenario: "desk", Rate: "heavy_basket", Max: q("40")}
	floorRate := perfexpv1alpha1.Objective{Metric: perfexpv1alpha1.MetricPercent, Scenario: "desk", Rate: "heavy_basket", Min: q("10")}
	capDepth := perfexpv1alpha1.Objective{Metric: perfexpv1alpha1.MetricMax, Scenario: "desk", Gauge: "queue_depth", Max: q("60")}
	runs := func(name string, from int, pass, share, depth float64) []*result.Result {
		var out []*result.Result
		for i := range 3 {
			out = append(out, customRun(name, from+i, pass, share, depth))
		}
		return out
	}
	tests := []struct {
		name       string
		base, cur  []*result.Result
		objectives []perfexpv1alpha1.Objective
		label      string
		want       perfexpv1alpha1.Change
		why        string
	}{
		{"pass rate fell", runs("base", 0, 99.5, 20, 30), runs("arm", 3, 97, 20, 30), nil, `desk check "status is 200" passrate`, perfexpv1alpha1.ChangeRegressed, ""},
		{"pass rate rose", runs("base", 0, 97, 20, 30), runs("arm", 3, 99.5, 20, 30), nil, `desk check "status is 200" passrate`, perfexpv1alpha1.ChangeImproved, ""},
		{"pass rate identical", runs("base", 0, 99.5, 20, 30), runs("arm", 0, 99.5, 20, 30), nil, `desk check "status is 200" passrate`, perfexpv1alpha1.ChangeNoMeaningfulChange, ""},
		{"always passing", runs("base", 0, 99.5, 20, 30), runs("arm", 3, 97, 20, 30), nil, `desk check "body has id" passrate`, perfexpv1alpha1.ChangeNoMeaningfulChange, ""},
		{"rate rose, capped", runs("base", 0, 99.5, 20, 30), runs("arm", 3, 99.5, 30, 30), []perfexpv1alpha1.Objective{capRate}, "desk rate heavy_basket percent", perfexpv1alpha1.ChangeRegressed, ""},
		{"rate rose, floored", runs("base", 0, 99.5, 20, 30), runs("arm", 3, 99.5, 30, 30), []perfexpv1alpha1.Objective{floorRate}, "desk rate heavy_basket percent", perfexpv1alpha1.ChangeImproved, ""},
		{"rate rose, no direction", runs("base", 0, 99.5, 20, 30), runs("arm", 3, 99.5, 30, 30), nil, "desk rate heavy_basket percent", perfexpv1alpha1.ChangeInconclusive, "whether higher is better is the script's to say"},
		{"rate rose, both bounds", runs("base", 0, 99.5, 20, 30), runs("arm", 3, 99.5, 30, 30), []perfexpv1alpha1.Objective{capRate, floorRate}, "desk rate heavy_basket percent", perfexpv1alpha1.ChangeInconclusive, "whether higher is better"},
		{"rate unchanged", runs("base", 0, 99.5, 20, 30), runs("arm", 0, 99.5, 20, 30), nil, "desk rate heavy_basket percent", perfexpv1alpha1.ChangeNoMeaningfulChange, ""},
		{"gauge peak rose, capped", runs("base", 0, 99.5, 20, 30), runs("arm", 3, 99.5, 20, 45), []perfexpv1alpha1.Objective{capDepth}, "desk gauge queue_depth max", perfexpv1alpha1.ChangeRegressed, ""},
		{"gauge last rose, capped", runs("base", 0, 99.5, 20, 30), runs("arm", 3, 99.5, 20, 45), []perfexpv1alpha1.Objective{capDepth}, "desk gauge queue_depth last", perfexpv1alpha1.ChangeRegressed, ""},
		{"gauge min unchanged", runs("base", 0, 99.5, 20, 30), runs("arm", 3, 99.5, 20, 45), nil, "desk gauge queue_depth min", perfexpv1alpha1.ChangeNoMeaningfulChange, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := CompareRuns(tc.base, tc.cur, CompareOptions{Objectives: tc.objectives})
			if c.Message != "" {
				t.Fatalf("comparison refused: %s", c.Message)
			}
			mc := comparedRow(c, tc.label)
			if mc == nil {
				t.Fatalf("%s: not compared; rows: %v", tc.label, labels(c))
			}
			if mc.Change != tc.want || !strings.Contains(mc.Why, tc.why) || mc.Primary || mc.Method != result.MethodRuns || mc.Samples != 3 || mc.BaselineSamples != 3 {
				t.Errorf("%s [%v, %v] %s: %s (primary %v, %s, %d vs %d): %s; want %s with %q", tc.label, deref(mc.Low), deref(mc.High), mc.Scale,
					mc.Change, mc.Primary, mc.Method, mc.Samples, mc.BaselineSamples, mc.Why, tc.want, tc.why)
			}
			if c.Change == perfexpv1alpha1.ChangeRegressed || c.Change == perfexpv1alpha1.ChangeImproved {
				t.Errorf("headline %s: the requests did not change", c.Change)
			}
		})
	}
	// The pass rate's interval is in points and holds the true change, -2.5.
	c := CompareRuns(runs("base", 0, 99.5, 20, 30), runs("arm", 3, 97, 20, 30), CompareOptions{})
	mc := comparedRow(c, `desk check "status is 200" passrate`)
	if mc.Scale != result.ScalePoints || *mc.Low > -2.5 || *mc.High < -2.5 || *mc.High > -2 {
		t.Errorf("pass rate change [%v, %v] %s; want points around -2.5", *mc.Low, *mc.High, mc.Scale)
	}
}

// Story: a Gauge at zero in one run cannot be compared as a ratio: Unknown with the reason.
func TestCustomRunsComparisonGaugeAtZero(t *testing.T) {
	var base, cur []*result.Result
	for i := range 3 {
		base = append(base, customRun("base", i, 99.5, 20, 30))
		cur = append(cur, customRun("arm", i+3, 99.5, 20, 30))
	}
	cur[1].Scenarios[0].Gauges[1].Min = result.Num(0)
	c := CompareRuns(base, cur, CompareOptions{})
	mc := comparedRow(c, "desk gauge queue_depth min")
	if mc == nil || mc.Change != perfexpv1alpha1.ChangeUnknown || !strings.Contains(mc.Why, "zero or negative") {
		t.Errorf("%+v; want Unknown: zero or negative", mc)
	}
}

// Story: a script with 12 checks has the first 10 by name compared, and a note names the two
// left out.
func TestCustomComparisonCap(t *testing.T) {
	base, cur := customRun("base", 0, 99.5, 20, 30), customRun("arm", 1, 99.5, 20, 30)
	for _, r := range []*result.Result{base, cur} {
		r.Scenarios[0].Checks = nil
		for i := range 12 {
			r.Scenarios[0].Checks = append(r.Scenarios[0].Checks, result.CheckResult{Name: fmt.Sprintf("check %02d", i), PassPercent: result.Num(100), Series: 1})
		}
	}
	c := Compare(cur, &result.IntervalData{}, &Baseline{Name: "base", Result: base}, &result.IntervalData{}, CompareOptions{})
	n := 0
	for _, mc := range c.Metrics {
		if mc.Kind == perfexpv1alpha1.MetricPassRate {
			n++
		}
	}
	if n != maxCustomCompared || comparedRow(c, `desk check "check 09" passrate`) == nil || comparedRow(c, `desk check "check 10" passrate`) != nil {
		t.Errorf("%d checks compared; want the first %d by name: %v", n, maxCustomCompared, labels(c))
	}
	note := strings.Join(c.Notes, "; ")
	if !strings.Contains(note, "the first 10 of each kind per scenario") || !strings.Contains(note, "desk check check 10") || !strings.Contains(note, "desk check check 11") {
		t.Errorf("notes %q; want the cap and the two left out", note)
	}
}
