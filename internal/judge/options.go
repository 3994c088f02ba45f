package judge

import (
	"fmt"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
)

// CompareOptions configure a comparison with a baseline.
type CompareOptions struct {
	// MinChangePercent is the smallest relative change that matters, δ (default 5): a metric
	// is Regressed or Improved only when its whole 95 % interval lies beyond ±δ, and
	// NoMeaningfulChange when the whole interval lies inside it.
	MinChangePercent float64
	// Primary are the metrics the headline is decided on; default each scenario's P95 and
	// ErrorRate.
	Primary []perfexpv1alpha1.PrimaryMetric
	// Objectives are the experiment's objectives: a relative one is judged on the same
	// interval, so its metric is compared even when it is not in the default list.
	Objectives []perfexpv1alpha1.Objective
	// Resamples is the number of bootstrap resamples of a single-run comparison (default
	// DefaultResamples).
	Resamples int
	// MaxNodeLoadDifference is how far apart (cores) the two runs' CPU load outside the
	// experiment may be before a single-run comparison claims nothing; 0 is the default, a
	// tenth of the node's cores (see maxNodeLoadDifference).
	MaxNodeLoadDifference float64
}

// OptionsFor reads the comparison's options from spec.analysis. The second value is a note
// when a setting was out of range and the default was used.
func OptionsFor(a perfexpv1alpha1.Analysis) (CompareOptions, string) {
	o := CompareOptions{MinChangePercent: DefaultMinChangePercent, Primary: a.PrimaryMetrics, Objectives: a.Objectives}
	if q := a.MinMeaningfulChangePercent; q != nil {
		v := q.AsApproximateFloat64()
		if v <= 0 || v >= 100 {
			return o, fmt.Sprintf("minMeaningfulChangePercent %s is outside (0, 100); the default %g%% was used", q.String(), DefaultMinChangePercent)
		}
		o.MinChangePercent = v
	}
	if q := a.MaxNodeLoadDifference; q != nil {
		o.MaxNodeLoadDifference = q.AsApproximateFloat64()
	}
	return o, ""
}

func (o CompareOptions) withDefaults() CompareOptions {
	if o.MinChangePercent <= 0 || o.MinChangePercent >= 100 {
		o.MinChangePercent = DefaultMinChangePercent
	}
	if o.Resamples <= 0 {
		o.Resamples = DefaultResamples
	}
	return o
}

// primary reports whether a metric of a scenario/request is one of the primary metrics.
func (o CompareOptions) primary(scenario, request string, m perfexpv1alpha1.ObjectiveMetric) bool {
	if len(o.Primary) == 0 {
		return request == "" && scenario != "" && (m == perfexpv1alpha1.MetricP95 || m == perfexpv1alpha1.MetricErrorRate)
	}
	for _, p := range o.Primary {
		if p.Metric == m && p.Request == request && (p.Scenario == scenario || p.Scenario == "" && request == "" && scenario != "") {
			return true
		}
	}
	return false
}
