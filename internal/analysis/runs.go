package analysis

import perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"

// CompareOptions configure a comparison of an arm with its baseline.
type CompareOptions struct {
	// MinChangePercent is the smallest relative change that matters (default 5): a metric is
	// Regressed or Improved only when its whole 95 % interval lies beyond it, and
	// NoMeaningfulChange when the whole interval lies inside it.
	MinChangePercent float64
}

// CompareRuns compares the repeated runs of an arm with the repeated runs of its baseline,
// with the run as the unit of replication. base and cur hold one Result per run (from each
// experiment's report). The sweep controller calls it once per arm; AdjustArms then applies
// the multiplicity control across the arms of a sweep.
func CompareRuns(base, cur []*Result, opts CompareOptions) *Comparison {
	_ = opts
	c := &Comparison{Change: perfexpv1alpha1.ChangeUnknown}
	if len(base) == 0 || len(cur) == 0 {
		c.Message = "no runs to compare"
		return c
	}
	c.Baseline = base[0].Experiment
	c.Message = "run-level comparison is not implemented yet"
	return c
}

// AdjustArms applies the multiplicity control across the arms of one sweep to their headline
// changes, in place.
func AdjustArms(arms []*Comparison) { _ = arms }
