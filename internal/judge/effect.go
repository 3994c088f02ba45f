package judge

import (
	"fmt"
	"math"

	moremath "github.com/aclements/go-moremath/stats"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/judge/stats"
)

// Confidence is the coverage of every interval perfexp reports; a verdict is decided on it.
// It is stats.Confidence, so a sequential look's spending and a verdict's intervals share it.
const Confidence = stats.Confidence

// alpha is 1 - Confidence: the error rate a claim of change is held to.
const alpha = 1 - Confidence

// DefaultMinChangePercent is the minimum meaningful change δ when
// spec.analysis.minMeaningfulChangePercent is unset.
const DefaultMinChangePercent = 5.0

// errorRateFloorPoints is the smallest meaningful difference of two error rates, in percentage
// points. Error rates are compared as differences, not ratios: near zero a ratio explodes
// (0.01 % to 0.02 % is +100 %) while nothing a user cares about changed.
const errorRateFloorPoints = 0.1

// effect is an estimated change with its 95 % interval, on the metric's decision scale: log
// ratio for relative metrics, percentage points for error rates. Logs make ratios symmetric
// (×2 and ×½ are equally far from 1) and turn the products of noise into sums.
type effect struct {
	// point, low and high are the estimate and the interval on the decision scale.
	point, low, high float64
	// logScale is true when point/low/high are natural logs of the ratio cur/base.
	logScale bool
	// relative is true when point/low/high are the change as a fraction of the baseline's mean
	// (cur/base - 1) on the linear scale: counts of which some run saw none (runEffect).
	relative bool
	// up and down are +δ and -δ on the decision scale: log(1+δ) and log(1-δ) for ratios.
	up, down float64
	// pNoChange is the two-sided p-value of "no change", a detail for the report.
	pNoChange float64
	// pBeyond is the two-sided p-value of "the change lies within ±δ": below alpha exactly
	// when the interval lies beyond ±δ. Holm adjusts these.
	pBeyond float64
	// constant is true when both sides are the same constant (no errors anywhere): the
	// change is exactly zero and can never be claimed, so it is left out of the multiplicity
	// family (a hypothesis that cannot be rejected does not spend any of alpha).
	constant bool
	// n and baseN count the samples (intervals or runs) behind the estimate.
	n, baseN int
	// few is set when there were too few samples to estimate anything; the reason says so.
	few string
	// between is the run-to-run noise a single-run effect's interval holds (noise.go), and
	// withinVar the within-run variance of its estimate; nil for effects between repeated runs.
	between   *BetweenRun
	withinVar float64
	// noise says how a calibration was combined with a paired design's own estimate of the
	// run-to-run noise (withCalibration); "" when none was given.
	noise string
	// ownNoise is true when a paired effect's variance is the arm's own (its paired
	// differences, n-1 degrees of freedom), larger than the design's pooled one.
	ownNoise bool
	// biases name the bounded biases the interval was widened by (addBias).
	biases []string
	// withdrawn says why no claim may be made from this effect at all (its runs' node was
	// saturated); its interval is still shown.
	withdrawn string
	// se and df are the standard error and degrees of freedom of a t interval (repeated runs),
	// kept so that atLevel can draw it at another level; 0 for other methods.
	se, df float64
	// level is the coverage of the interval when atLevel redrew it at another than Confidence
	// (a sequential look's); 0 for Confidence.
	level float64
	// zeroBase states the counts of a Counter every baseline run had none of (zeroBaseEffect):
	// decided on pNoChange alone, with no interval, since a change relative to 0 has no value.
	zeroBase string
	// resampled are a bootstrap effect's sorted resampled changes, centred on point before
	// any centredOn; nil for other methods.
	resampled []float64
}

// levelText is the interval's coverage as the reasons state it: "95%" by default.
func (e *effect) levelText() string {
	if e.level == 0 {
		return fmt.Sprintf("%.3g%%", 100*Confidence)
	}
	return fmt.Sprintf("%.3g%%", 100*e.level)
}

// atLevel redraws a t interval at confidence 1 - a: a sequential sweep spends its error rate
// over its looks (sequential.go), each look's intervals at its share. Other intervals, and a at
// the default, are left as they are.
func (e *effect) atLevel(a float64) *effect {
	if e.zeroBase != "" && a > 0 && a != alpha {
		e.level = 1 - a
	}
	if e.se <= 0 || a <= 0 || a == alpha || e.few != "" {
		return e
	}
	q := moremath.InvCDF(moremath.TDist{V: e.df})(1 - a/2)
	e.low, e.high = e.point-q*e.se, e.point+q*e.se
	e.level = 1 - a
	return e
}

// thresholds returns δ on the decision scale for a relative metric (in logs) or for an
// error rate (in points, δ percent of the baseline's rate but at least the floor).
func thresholds(kind perfexpv1alpha1.ObjectiveMetric, minChangePercent, baseErrorPercent float64) (up, down float64, logScale bool) {
	if kind == perfexpv1alpha1.MetricErrorRate {
		t := math.Max(errorRateFloorPoints, minChangePercent/100*baseErrorPercent)
		return t, -t, false
	}
	return math.Log1p(minChangePercent / 100), math.Log1p(-minChangePercent / 100), true
}

// toDisplay turns a value on the decision scale into the reported one: percent of the
// baseline for ratios, points for error rates.
func (e *effect) toDisplay(v float64) float64 {
	switch {
	case e.logScale:
		return 100 * math.Expm1(v)
	case e.relative:
		return 100 * v
	}
	return v
}

// decide applies the rule: beyond ±δ with the whole interval is a change (its direction named
// by whether higher is better), inside ±δ with the whole interval is no meaningful change,
// anything else is inconclusive, with the reason.
func decide(e *effect, kind perfexpv1alpha1.ObjectiveMetric, sampleUnit string) (perfexpv1alpha1.Change, string) {
	if e.withdrawn != "" && e.few == "" {
		return perfexpv1alpha1.ChangeInconclusive, "not claimed: " + e.withdrawn
	}
	if e.few != "" {
		return perfexpv1alpha1.ChangeInconclusive, e.few
	}
	worse, better := perfexpv1alpha1.ChangeRegressed, perfexpv1alpha1.ChangeImproved
	if higherIsBetter(kind) {
		worse, better = better, worse
	}
	if e.zeroBase != "" {
		a := alpha
		if e.level != 0 {
			a = 1 - e.level
		}
		if e.pBeyond < a {
			return worse, fmt.Sprintf("rose from 0: %s (p %.2g); a change relative to 0 has no value", e.zeroBase, e.pBeyond)
		}
		return perfexpv1alpha1.ChangeInconclusive, fmt.Sprintf("%s: not clearly above 0 (p %.2g, held to %.3g); more runs decide", e.zeroBase, e.pBeyond, a)
	}
	switch {
	case e.low > e.up:
		return worse, ""
	case e.high < e.down:
		return better, ""
	case e.low >= e.down && e.high <= e.up:
		return perfexpv1alpha1.ChangeNoMeaningfulChange, ""
	}
	unit := "%"
	if !e.logScale && !e.relative {
		unit = " points"
	}
	lo, hi := e.toDisplay(e.low), e.toDisplay(e.high)
	why := fmt.Sprintf("the %s interval [%+.1f, %+.1f]%s straddles ±%.3g%s", e.levelText(), lo, hi, unit, e.toDisplay(e.up), unit)
	switch nw := e.noiseWhy(); {
	case nw != "":
		why += ": " + nw
	case e.low < e.down && e.high > e.up:
		why += fmt.Sprintf(": too noisy (%d and %d %s); more or longer runs narrow it", e.n, e.baseN, sampleUnit)
	}
	return perfexpv1alpha1.ChangeInconclusive, why
}

// tInterval draws the effect's 95 % interval and p-values from Student's t with standard error
// se and df degrees of freedom, and keeps both for atLevel. With no spread at all (every run
// agrees exactly, as error rates do without errors) the change is what it is: its interval is
// the point, and a change of exactly zero is a constant that can never be claimed.
func (e *effect) tInterval(se, df float64) {
	if se == 0 || math.IsNaN(se) {
		e.low, e.high = e.point, e.point
		e.pValues(func(x float64) float64 {
			if x < e.point {
				return 0
			}
			return 1
		})
		if e.point == 0 {
			e.constant = true
			e.pNoChange, e.pBeyond = 1, 1
		}
		return
	}
	t := moremath.TDist{V: df}
	q := moremath.InvCDF(t)(1 - alpha/2)
	e.low, e.high = e.point-q*se, e.point+q*se
	e.se, e.df = se, df
	e.pValues(func(x float64) float64 { return t.CDF((x - e.point) / se) })
}

// pValues fills pNoChange and pBeyond from the distribution of the estimate: cdf(x) is the
// probability that it lies at or below x under the sampling distribution centred on point.
// For a t interval this is the t distribution; for the bootstrap the replicates' share.
func (e *effect) pValues(cdf func(x float64) float64) {
	p0 := 2 * math.Min(cdf(0), 1-cdf(0))
	// H0 "change <= up" is rejected upwards when the estimate's distribution lies above up:
	// its p-value is the share at or below up; likewise downwards.
	pUp, pDown := cdf(e.up), 1-cdf(e.down)
	e.pNoChange = math.Min(1, p0)
	e.pBeyond = math.Min(1, 2*math.Min(pUp, pDown))
}
