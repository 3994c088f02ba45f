package report

import (
	"reflect"
	"strings"
	"testing"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/result"
)

// Story: a comparison where many rows share a reason (Inconclusive because the interval
// straddles ±δ, each row with its own interval and adjusted p) states the reason once, as a
// numbered note under "How this was decided"; a different reason gets the next number;
// results.json keeps each row's full reason.
func TestComparisonReasonsOnceAsFootnotes(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	r := sample()
	r.Comparison.Metrics = nil
	for i, iv := range [][2]float64{{-2.0, 9.8}, {-1.2, 5.9}, {-0.5, 8.3}} {
		r.Comparison.Metrics = append(r.Comparison.Metrics, result.MetricComparison{
			Metric: []string{"all p50", "all p90", "all avg"}[i], Kind: perfexpv1alpha1.MetricP50, Unit: "ms",
			Baseline: f(10), Value: f(10.3), Estimate: f(3), Low: f(iv[0]), High: f(iv[1]), Samples: 20, BaselineSamples: 20,
			Change: perfexpv1alpha1.ChangeInconclusive, AdjustedP: f(0.4),
			Why: "the 95% interval [" + strings.Join([]string{fmtSigned(iv[0]), fmtSigned(iv[1])}, ", ") + "]% straddles ±5% (q 0.41)",
		})
	}
	r.Comparison.Metrics = append(r.Comparison.Metrics, result.MetricComparison{Metric: "all max", Kind: perfexpv1alpha1.MetricMax, Unit: "ms",
		Baseline: f(100), Value: f(90), DeltaPercent: f(-10), Change: perfexpv1alpha1.ChangeUnknown,
		Why: "a maximum is one request's latency: it has no interval to decide on"})
	md := Markdown(r)
	if n := strings.Count(md, "straddles ±5%"); n != 1 {
		t.Errorf("the straddle reason is stated %d times, want once:\n%s", n, md)
	}
	for _, want := range []string{"| Inconclusive ¹ |", "| Unknown ² |", "¹ the 95% interval straddles ±5%.", "² a maximum is one request's latency: it has no interval to decide on."} {
		if !strings.Contains(md, want) {
			t.Errorf("the report lacks %q:\n%s", want, md)
		}
	}
	js, err := JSON(r)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(js), "[-2.0, +9.8]% straddles ±5% (q 0.41)") {
		t.Errorf("results.json lost a row's full reason")
	}
}

func fmtSigned(v float64) string {
	return strings.TrimSpace(signed(&v, 1))
}

// Story: a single-run comparison's Inconclusive rows all name the same between-run noise and
// differ in how many runs would decide them. The report states the noise once, and each row's
// own clause as a note of its own: a row carries the numbers of both, and no note repeats
// another's words.
func TestSingleRunReasonsShareTheNoiseNote(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	noise := "one run per side cannot separate a change this size from run-to-run noise (between-run sd 10 % (assumed: no calibration for this environment))"
	calibrate := "a calibration (docs/comparison.md) narrows the interval"
	r := sample()
	r.Comparison.Metrics = nil
	for i, tail := range []string{
		"the change is too close to ±δ for a few more runs to decide it",
		"about 3 runs per side would decide it (a PerfSweep with repeats: 3)",
		"the change is too close to ±δ for a few more runs to decide it",
	} {
		r.Comparison.Metrics = append(r.Comparison.Metrics, result.MetricComparison{
			Metric: []string{"search p95", "all avg", "all p50"}[i], Kind: perfexpv1alpha1.MetricP95, Unit: "ms", Primary: i == 0,
			Baseline: f(10), Value: f(10.3), Estimate: f(3), Low: f(-20), High: f(30), Samples: 20, BaselineSamples: 20,
			Change: perfexpv1alpha1.ChangeInconclusive,
			Why:    "the 95% interval [-20.0, +30.0]% straddles ±5%: " + noise + "; " + tail + "; " + calibrate,
		})
	}
	md := Markdown(r)
	for _, want := range []string{
		"| ★ search p95 |", "| Inconclusive ¹ ² |", "| all avg |", "| Inconclusive ¹ ³ |",
		"¹ the 95% interval straddles ±5%: " + noise + "; " + calibrate + ".",
		"² the change is too close to ±δ for a few more runs to decide it.",
		"³ about 3 runs per side would decide it (a PerfSweep with repeats: 3).",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("the report lacks %q:\n%s", want, md)
		}
	}
	if n := strings.Count(md, "cannot separate a change this size"); n != 1 {
		t.Errorf("the noise is stated %d times, want once:\n%s", n, md)
	}
}

// A reason is cut at its first ": " and each "; " after it, never inside brackets.
func TestClauses(t *testing.T) {
	tests := []struct {
		in   string
		want []clause
	}{
		{"a maximum has no interval", []clause{{"a maximum has no interval", ""}}},
		{"head: one (x; y: z); two", []clause{{"head", ": "}, {"one (x; y: z)", "; "}, {"two", ""}}},
		{"not claimed: the node was busy: 2 cores", []clause{{"not claimed", ": "}, {"the node was busy: 2 cores", ""}}},
	}
	for _, tc := range tests {
		if got := clauses(tc.in); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("clauses(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
