package judge

import (
	"fmt"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/judge/stats"
	"github.com/perfexp/perfexp/internal/result"
)

// adjustSecondary controls the false discovery rate of a comparison's secondary rows (p50, p99,
// request names, groups, Trends, iterations, Counters, workloads' CPU and memory): a row claimed
// Regressed or Improved on its own interval whose Benjamini-Hochberg q across the secondary rows
// is not below alpha reads Inconclusive, with why. Without it a run with 8 secondary rows shows
// some claimed row in one A/A comparison of six. NoMeaningfulChange needs no control: it is the
// absence of a claim. The rows' AdjustedP holds their q.
func adjustSecondary(c *result.Comparison, a float64) {
	var fam []*result.MetricComparison
	for i := range c.Metrics {
		mc := &c.Metrics[i]
		if !mc.Primary && mc.PBeyond != nil && !mc.Constant {
			fam = append(fam, mc)
		}
	}
	if len(fam) == 0 {
		return
	}
	ps := make([]float64, len(fam))
	for i, mc := range fam {
		ps[i] = *mc.PBeyond
	}
	qs := stats.BenjaminiHochberg(ps)
	for i, mc := range fam {
		mc.AdjustedP = result.Num(qs[i])
		claimed := mc.Unadjusted == perfexpv1alpha1.ChangeRegressed || mc.Unadjusted == perfexpv1alpha1.ChangeImproved
		if claimed && qs[i] >= a && mc.Change == mc.Unadjusted {
			mc.Change = perfexpv1alpha1.ChangeInconclusive
			mc.Why = fmt.Sprintf("%s at 95%%, but not after Benjamini-Hochberg across the %d secondary rows (q %.3g)", mc.Unadjusted, len(fam), qs[i])
		}
	}
}
