package judge

import (
	"strings"
	"testing"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/result"
)

// A secondary row claimed on its own interval keeps its claim only when it survives the false
// discovery rate control across the secondary rows; primary rows are Holm's, not BH's.
func TestSecondaryRowsAreAdjusted(t *testing.T) {
	row := func(name string, primary bool, p float64) result.MetricComparison {
		return result.MetricComparison{Metric: name, Primary: primary, PBeyond: result.Num(p),
			Unadjusted: perfexpv1alpha1.ChangeRegressed, Change: perfexpv1alpha1.ChangeRegressed}
	}
	c := &result.Comparison{Metrics: []result.MetricComparison{
		row("s p95", true, 0.04), row("s p99", false, 0.001), row("s/a p95", false, 0.04), row("s/b p95", false, 0.5),
	}}
	adjustSecondary(c, alpha)
	if c.Metrics[0].Change != perfexpv1alpha1.ChangeRegressed || c.Metrics[0].AdjustedP != nil {
		t.Errorf("the primary row was touched: %+v", c.Metrics[0])
	}
	if c.Metrics[1].Change != perfexpv1alpha1.ChangeRegressed {
		t.Errorf("p99 (q 0.003) lost its claim: %s", c.Metrics[1].Why)
	}
	if m := c.Metrics[2]; m.Change != perfexpv1alpha1.ChangeInconclusive || !strings.Contains(m.Why, "Benjamini-Hochberg across the 3 secondary rows (q 0.06)") {
		t.Errorf("s/a p95 (p 0.04, q 0.06): %s (%s)", m.Change, m.Why)
	}
}
