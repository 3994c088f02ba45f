package judge

import (
	"fmt"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/judge/stats"
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
	// experiment may be before a single-run comparison widens its intervals for it; 0 is the
	// default, a tenth of the node's cores (see maxNodeLoadDifference).
	MaxNodeLoadDifference float64
	// Alpha is the error rate of this comparison's intervals and multiplicity control: 0 is
	// the default, 1 - Confidence; a sequential sweep's look spends less (sequential.go).
	Alpha float64
	// Look, when set, is the sequential look this comparison is made at: its intervals are
	// drawn at Look.Alpha() and its multiplicity control at Look.AlphaFor (Alpha is ignored).
	Look *stats.Look
	// Design pairs repeated runs within the blocks they ran in (CompareRuns); nil compares
	// them unpaired.
	Design *Design
	// BetweenRun is the environment's run-to-run noise that a single-run comparison adds to
	// its intervals; nil is DefaultBetweenRun, a conservative assumption.
	BetweenRun *BetweenRun
	// History is the between-run noise learned from the PerfHistory segments of this
	// comparison's configurations (noise_history.go), per metric; used by a single-run
	// comparison for the rows it has an estimate of, when BetweenRun is not set.
	History *HistoryNoise
}

// level is the comparison's Holm level for a family of m.
func (o CompareOptions) level(m int) float64 {
	if o.Look != nil {
		return o.Look.AlphaFor(m)
	}
	return o.alpha()
}

// alpha is the comparison's error rate.
func (o CompareOptions) alpha() float64 {
	if o.Look != nil {
		return o.Look.Alpha()
	}
	if o.Alpha > 0 && o.Alpha < alpha {
		return o.Alpha
	}
	return alpha
}

// betweenRun is the noise a single-run comparison holds.
func (o CompareOptions) betweenRun() BetweenRun {
	if o.BetweenRun != nil && o.BetweenRun.SDPercent > 0 {
		return *o.BetweenRun
	}
	return assumedBetweenRun()
}

// assumedBetweenRun is the noise assumed when none was given: DefaultBetweenRun. The tests of
// the within-run machinery (the block bootstrap, its rows and their reasons) replace it with
// none, so that they see the bootstrap's own intervals; the default's own tests restore it.
var assumedBetweenRun = DefaultBetweenRun

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
	if br := a.BetweenRun; br != nil && br.SDPercent != nil {
		if v := br.SDPercent.AsApproximateFloat64(); v <= 0 || v >= 100 {
			return o, fmt.Sprintf("betweenRun.sdPercent %s is outside (0, 100); the default %g%% was assumed", br.SDPercent.String(), DefaultBetweenRunSDPercent)
		}
		o.BetweenRun = &BetweenRun{SDPercent: br.SDPercent.AsApproximateFloat64(), Runs: int(br.Runs), Source: "spec.analysis.betweenRun"}
		if br.Source != "" {
			o.BetweenRun.Source = "spec.analysis.betweenRun: " + br.Source
		}
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
