package report

import (
	"strings"
	"testing"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/result"
)

// withCustomRows is the sample with a check's, a custom Rate's and a Gauge's comparison rows:
// one decided in points (repeats), two Unknown without an interval (a single run).
func withCustomRows() *result.Result {
	r := sample()
	r.Comparison.Metrics = append(r.Comparison.Metrics,
		result.MetricComparison{Metric: `checkinout check "status is 200" passrate`, Scenario: "checkinout", Kind: perfexpv1alpha1.MetricPassRate, Unit: "%",
			Baseline: f(99.5), Value: f(97), Delta: f(-2.5), DeltaPercent: f(-2.5126), Estimate: f(-2.5), Low: f(-2.6), High: f(-2.4), Scale: result.ScalePoints,
			Threshold: f(0.1), Samples: 3, BaselineSamples: 3, SampleUnit: "runs", Method: result.MethodRuns, Change: perfexpv1alpha1.ChangeRegressed},
		result.MetricComparison{Metric: "checkinout rate heavy_basket percent", Scenario: "checkinout", Kind: perfexpv1alpha1.MetricPercent, Unit: "%",
			Baseline: f(20), Value: f(30.25), Delta: f(10.25), DeltaPercent: f(51.25), Change: perfexpv1alpha1.ChangeUnknown,
			Why: "k6 writes a Rate as a ratio since each runner began, without counts: nothing per interval to decide on; repeated runs compare it run by run"},
		result.MetricComparison{Metric: "checkinout gauge queue_depth max", Scenario: "checkinout", Kind: perfexpv1alpha1.MetricMax, Unit: "",
			Baseline: f(30), Value: f(45), Delta: f(15), DeltaPercent: f(50), Change: perfexpv1alpha1.ChangeUnknown,
			Why: "a Gauge's max is one value per run: no interval to decide on; repeated runs compare it run by run"},
	)
	return r
}

// Story: the Markdown report lists the check, Rate and Gauge rows in the comparison table: a
// share's difference in points (with its interval when decided), a Gauge's in percent and in
// its own unit, each with its verdict and its reasons as numbered notes, the clause the two
// reasons share ("repeated runs compare it run by run") stated once; the method paragraph says
// how they are read.
func TestMarkdownCustomComparisonRows(t *testing.T) {
	md := Markdown(withCustomRows())
	for _, want := range []string{
		`| checkinout check "status is 200" passrate | 99.5% | 97% | -2.50 pt [-2.60, -2.40] | 3 vs 3 runs | Regressed | - |`,
		`| checkinout rate heavy_basket percent | 20% | 30.25% | +10.25 pt | - | Unknown ³ ⁴ | - |`,
		`| checkinout gauge queue_depth max | 30 | 45 | +50.0 % | - | Unknown ⁴ ⁵ | - |`,
		"³ k6 writes a Rate as a ratio since each runner began",
		"⁴ repeated runs compare it run by run.",
		"⁵ a Gauge's max is one value per run",
		"Check pass rates and custom Rates are shares in percent, compared in points like error rates",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("the report lacks %q:\n%s", want, md)
		}
	}
	if strings.Contains(Markdown(sample()), "Check pass rates and custom Rates") {
		t.Error("the method speaks of check and Rate rows in a comparison without any")
	}
}

// Story: the HTML report charts a decided pass rate on the points chart, captioned for error
// rates, pass rates and Rates together, and lists the undecided rows as not charted.
func TestHTMLCustomComparisonRows(t *testing.T) {
	page, err := HTML(withCustomRows(), HTMLOptions{})
	if err != nil {
		t.Fatal(err)
	}
	selfContained(t, page)
	for _, want := range []string{
		"Error rates, check pass rates and custom Rates are compared as differences in percentage points",
		"checkinout gauge queue_depth max",
		"Not charted, no interval",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	plain, err := HTML(sample(), HTMLOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(plain, "check pass rates and custom Rates") {
		t.Error("the points chart speaks of pass rates with none charted")
	}
}
