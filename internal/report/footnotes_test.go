package report

import (
	"strings"
	"testing"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/result"
)

// Story: a comparison where many rows share a reason (Inconclusive because the interval
// straddles ±δ, each row with its own interval and adjusted p) states the reason once, as a
// numbered footnote under the table; a different reason gets the next number; results.json
// keeps each row's full reason.
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
