package judge

import (
	"fmt"
	"math"
	"strings"

	moremath "github.com/aclements/go-moremath/stats"

	"github.com/perfexp/perfexp/internal/result"
)

// DefaultBetweenRunSDPercent is the run-to-run standard deviation (log scale, in percent) a
// single-run comparison assumes when nothing better is known about the environment, and
// DefaultBetweenRunDF the degrees of freedom of Student's t its intervals are drawn with: the
// assumption is taken as uncertain, as if 4 runs had measured 10 %. Together they hold what a
// shared cluster does to runs of one configuration (docs/comparison.md, "One run per side under
// the noise of real environments"): a normal run-to-run sd up to 16 % (t with 3 degrees of
// freedom is 1.62 times the normal quantile, so the interval is the normal's at 16.2 %), heavy
// tails (t3) up to an sd of 10 %, and any share of runs on a node up to 40 % slower beside 3 %
// noise. The normal at 10 % held none of the bad node pools: with 20 % of runs 40 % slower one
// run per side claimed a change of exactly δ in 11 %. With it, one run against one run claims a
// change only when it is far larger than run-to-run noise can be (about +85 % or −50 % and
// beyond, a 120x slowdown; the normal at 10 % claimed +44 % or −34 %), never "+8 %", and never
// "no meaningful change".
const (
	DefaultBetweenRunSDPercent = 10.0
	DefaultBetweenRunDF        = 3
)

// zNormal is the standard normal's 97.5 % quantile: a bootstrap interval's half-width divided
// by it is the within-run standard error it stands for.
const zNormal = 1.959963984540054

// BetweenRun is the noise between runs of one configuration that a single-run comparison adds
// to its interval: each run's level is its configuration's plus a run effect with this standard
// deviation, so the difference of two runs carries twice its variance.
type BetweenRun struct {
	// SDPercent is the standard deviation of a run's level on the log scale, in percent.
	SDPercent float64
	// Runs is how many runs it was estimated from; 0 when it is an assumption (the default).
	Runs int
	// AssumedDF, for an assumption (Runs 0), is the degrees of freedom of Student's t its
	// intervals are drawn with (the default's DefaultBetweenRunDF: heavy tails); 0 takes it as
	// known, normal.
	AssumedDF float64
	// Source says where it came from, for the report.
	Source string
	// WithinIncluded says SDPercent is the spread of whole runs' values, their within-run
	// noise included (a PerfHistory segment's runs): the difference of two such runs then
	// carries 2·sd² in all, of which the bootstrap's within-run part is already in the
	// interval, so only the rest is added (addedVariance).
	WithinIncluded bool
}

// DefaultBetweenRun is the assumption when the environment was never calibrated.
func DefaultBetweenRun() BetweenRun {
	return BetweenRun{SDPercent: DefaultBetweenRunSDPercent, AssumedDF: DefaultBetweenRunDF,
		Source: "assumed: no calibration for this environment, with Student's t on 3 degrees of freedom"}
}

// assumed reports whether the noise is the default assumption rather than a measurement.
func (b BetweenRun) assumed() bool { return b.Runs == 0 }

func (b BetweenRun) String() string {
	if b.SDPercent <= 0 {
		return "none added"
	}
	if b.Runs > 1 {
		return fmt.Sprintf("between-run sd %.3g %% (%s, %d runs)", b.SDPercent, b.Source, b.Runs)
	}
	return fmt.Sprintf("between-run sd %.3g %% (%s)", b.SDPercent, b.Source)
}

// variance of the difference of two runs' levels on the log scale.
func (b BetweenRun) diffVariance() float64 {
	sd := b.SDPercent / 100
	return 2 * sd * sd
}

// addedVariance is the variance a single-run interval whose within-run variance is vw adds for
// the noise between runs. A calibration's or the default sd is of the run effect alone: 2·sd².
// A history's (WithinIncluded) is of whole runs, so the difference of two runs has variance
// 2·sd² in all and the interval adds what the bootstrap does not hold, max(0, 2·sd² − vw): the
// random-effects decomposition, truncated at zero when the pair's own within-run noise is the
// larger.
func (b BetweenRun) addedVariance(vw float64) float64 {
	if b.WithinIncluded {
		return math.Max(0, b.diffVariance()-vw)
	}
	return b.diffVariance()
}

// df is the degrees of freedom of the estimate: an assumption's AssumedDF, infinite when it
// has none.
func (b BetweenRun) df() float64 {
	if b.Runs < 2 {
		if b.Runs == 0 && b.AssumedDF > 0 {
			return b.AssumedDF
		}
		return math.Inf(1)
	}
	return float64(b.Runs - 1)
}

// addBetweenRun widens a single-run effect on the log scale by the between-run noise: each side
// of the interval becomes q * sqrt((h/z)^2 + 2 sd^2), where h/z is the within-run standard error
// the bootstrap's half-width stands for, and q the normal quantile, or Student's t with the
// Welch-Satterthwaite degrees of freedom when sd was estimated from few runs. The p-values follow
// the same distribution. Error rates (points) are left as they are: their noise is the count of
// failed requests, which the bootstrap holds. A constant or too-few effect is not touched.
func (e *effect) addBetweenRun(b BetweenRun) {
	if b.SDPercent <= 0 {
		return
	}
	if e.few != "" || e.constant || !e.logScale {
		e.between = &b
		return
	}
	lo, hi := (e.point-e.low)/zNormal, (e.high-e.point)/zNormal
	vw := e.withinVariance()
	vb := b.addedVariance(vw)
	q, cdf := zNormal, moremath.NormalDist{Mu: 0, Sigma: 1}.CDF
	switch df := b.df(); {
	case math.IsInf(df, 1):
	case b.WithinIncluded:
		// The total, max(vw, 2·sd²), is the history's estimate with its degrees of freedom
		// (or the bootstrap's, when larger): Student's t on the history's.
		t := moremath.TDist{V: df}
		q, cdf = moremath.InvCDF(t)(1-alpha/2), t.CDF
	default:
		satt := (vw + vb) * (vw + vb) / (vb * vb / df)
		t := moremath.TDist{V: satt}
		q, cdf = moremath.InvCDF(t)(1-alpha/2), t.CDF
	}
	e.low = e.point - q*math.Sqrt(lo*lo+vb)
	e.high = e.point + q*math.Sqrt(hi*hi+vb)
	se := math.Sqrt(vw + vb)
	e.pValues(func(x float64) float64 { return cdf((x - e.point) / se) })
	e.between = &b
	e.withinVar = vw
}

// withinVariance is the within-run variance a bootstrap effect's interval stands for: the
// square of its mean half-width over z.
func (e *effect) withinVariance() float64 {
	lo, hi := (e.point-e.low)/zNormal, (e.high-e.point)/zNormal
	return (lo + hi) / 2 * (lo + hi) / 2
}

// addBias widens an effect's interval by a bound on a bias that its two runs may carry (their
// node was busier with other work, or a CPU quota decided the latency of both), on the decision
// scale: a claim survives only if it holds whatever the bias within the bound.
func (e *effect) addBias(bound float64, why string) {
	if e.few != "" || e.constant || bound <= 0 {
		return
	}
	e.low -= bound
	e.high += bound
	e.pBeyondFromInterval()
	e.biases = append(e.biases, why)
}

// pBeyondFromInterval re-derives pBeyond for an interval widened without a distribution: the
// normal that has the interval as its 95 % range. Below alpha exactly when the interval lies
// beyond ±δ, as for the other methods.
func (e *effect) pBeyondFromInterval() {
	se := (e.high - e.low) / (2 * zNormal)
	if se <= 0 {
		return
	}
	mid := (e.high + e.low) / 2
	n := moremath.NormalDist{Mu: mid, Sigma: se}
	e.pBeyond = math.Min(1, 2*math.Min(n.CDF(e.up), 1-n.CDF(e.down)))
}

// maxRunsAdvised is how many runs per side runsToDecide names at the most; past it the change
// is too close to ±δ for repeats to settle it at a reasonable cost.
const maxRunsAdvised = 30

// runsToDecide estimates how many runs per side would make the interval decisive, taking the
// estimate as the truth and the between-run sd as known: the interval's half-width then falls
// with the square root of the runs. 0 when more than maxRunsAdvised would be needed.
func (e *effect) runsToDecide() int {
	if e.between == nil || e.few != "" || !e.logScale {
		return 0
	}
	gap := math.Abs(math.Abs(e.point) - e.up)
	if gap == 0 {
		return 0
	}
	perRun := e.withinVar + e.between.addedVariance(e.withinVar)
	n := int(math.Ceil(zNormal * zNormal * perRun / (gap * gap)))
	if n > maxRunsAdvised {
		return 0
	}
	return max(n, 3)
}

// noiseWhy is what an inconclusive single-run effect adds to its reason.
func (e *effect) noiseWhy() string {
	if e.between == nil || !e.logScale {
		return ""
	}
	why := "one run per side cannot separate a change this size from run-to-run noise (" + e.between.String() + ")"
	if n := e.runsToDecide(); n > 0 {
		why += fmt.Sprintf("; about %d runs per side would decide it (a PerfSweep with repeats: %d)", n, n)
	} else {
		why += "; the change is too close to ±δ for a few more runs to decide it"
	}
	if e.between.assumed() {
		why += "; a calibration (docs/comparison.md) narrows the interval"
	}
	return why
}

// singleRunWidening is what a single-run comparison adds to each of its intervals: the
// between-run noise (an explicit value or a calibration, else the history's estimate for the
// row's metric, else the assumed default), and the bounded biases its two runs may carry (a
// busier node, throttling on both sides), which widen every interval rather than withdraw
// every claim: a change far larger than they could cause is still one. It records the biases in
// the comparison (Disturbed, the notes); the widening's done records where the noise came from
// (Noise and a note), once every row has been widened.
func singleRunWidening(c *result.Comparison, r, base *result.Result, o CompareOptions) *widening {
	wd := &widening{c: c, o: o, fallback: o.betweenRun(), used: map[string]BetweenRun{}}
	saturated := saturationProblem(r.NodeLoad, base.NodeLoad)
	for _, g := range []func() (string, float64){
		func() (string, float64) { return nodeLoadBias(r.NodeLoad, base.NodeLoad, o.MaxNodeLoadDifference) },
		func() (string, float64) { return throttleBias(r, base) },
	} {
		// No interval is widened when no claim is made at all: a widening of thousands of
		// percent beside "no change is claimed" only confuses.
		if why, bound := g(); why != "" && saturated == "" {
			wd.biases = append(wd.biases, bias{why, bound})
			c.Disturbed = strings.TrimPrefix(c.Disturbed+"; "+why, "; ")
			c.Notes = append(c.Notes, why)
		}
	}
	// The single-run note says where the noise came from once every row is widened (done).
	wd.note = len(c.Notes)
	c.Notes = append(c.Notes, "")
	if saturated != "" {
		c.Disturbed = strings.TrimPrefix(c.Disturbed+"; "+saturated, "; ")
		c.Notes = append([]string{saturated}, c.Notes...)
		wd.note++
		wd.withdrawn = saturated
	}
	return wd
}

type bias struct {
	why   string
	bound float64
}

// widening widens the effects of one single-run comparison (singleRunWidening).
type widening struct {
	c         *result.Comparison
	o         CompareOptions
	fallback  BetweenRun
	biases    []bias
	withdrawn string
	// used are the rows' history estimates by key; others is true when a log-scale row took
	// the fallback.
	used   map[string]BetweenRun
	others bool
	// kept counts the rows whose history estimate added less noise than the explicit value,
	// which they kept (a floor).
	kept int
	// note is the index of the single-run note in the comparison's notes.
	note int
}

// noiseFor is the between-run noise of the row with history key key, for an effect of
// within-run variance vw: the history's estimate of that series when there is one and nothing
// explicit is set, else the explicit value or calibration, else the default. With both an
// explicit value and a history estimate, the one that adds the more noise: a calibration is a
// floor, not an override of a history that measured its runs varying more (a 3 % calibration
// beside runs whose history varies by 5 % narrowed every interval as if exact).
func (wd *widening) noiseFor(key string, vw float64) BetweenRun {
	if b, ok := wd.o.History.For(key); ok {
		explicit := wd.o.BetweenRun != nil && wd.o.BetweenRun.SDPercent > 0
		if !explicit || b.addedVariance(vw) > wd.fallback.addedVariance(vw) {
			wd.used[key] = b
			return b
		}
		wd.kept++
	}
	wd.others = true
	return wd.fallback
}

// widen returns e widened for the row with history key key (NoiseKey, WorkloadNoiseKey; "" for
// none).
func (wd *widening) widen(key string, e *effect) *effect {
	w := *e
	if wd.withdrawn != "" {
		w.withdrawn = wd.withdrawn
		// No claim can come of it, so it takes no part in the multiplicity control.
		w.pBeyond = 1
		return &w
	}
	if e.logScale && e.few == "" && !e.constant {
		w.addBetweenRun(wd.noiseFor(key, e.withinVariance()))
	} else {
		w.addBetweenRun(wd.fallback)
	}
	for _, bi := range wd.biases {
		w.addBias(bi.bound, bi.why)
	}
	return &w
}

// done records where the noise of the comparison's rows came from: status.comparison.noise
// (at most noiseMax characters) and the single-run note.
func (wd *widening) done() {
	if len(wd.used) == 0 || wd.o.History == nil {
		wd.c.Noise = wd.fallback.String()
	} else {
		wd.c.Noise = wd.o.History.summary(wd.used, wd.fallback, wd.others, noiseMax)
	}
	wd.c.Notes[wd.note] = singleRunNote(wd.c.Noise) + wd.calibrationNote()
}

// calibrationNote says, after the single-run note, what an explicit calibration was taken for:
// a floor under the history's estimate (which rows the history overruled, or that it measured
// less and was set aside), and that it measured one configuration's runs, so a variant varying
// more between runs than they did is outside what the claim controls. "" without one.
func (wd *widening) calibrationNote() string {
	if wd.o.BetweenRun == nil || wd.o.BetweenRun.SDPercent <= 0 || wd.o.BetweenRun.AssumedDF > 0 {
		// None, or the default given explicitly.
		return ""
	}
	cal := wd.o.BetweenRun.SDPercent
	var why string
	switch {
	case len(wd.used) > 0:
		why = fmt.Sprintf("; the calibration (sd %.3g %%) is a floor, not an override: %d %s whose PerfHistory varies more took the history's sd",
			cal, len(wd.used), plural(len(wd.used), "row", "rows"))
	case wd.kept > 0:
		why = fmt.Sprintf("; the runs' PerfHistory varies less than the calibration (sd %.3g %%), which is a floor: the calibration was kept", cal)
	}
	return why + "; the calibration measured the runs of one configuration: a claim is error-controlled only if the other side varies no more between runs than they did (one run per side cannot show it; repeats, a PerfSweep, measure each side's own noise)"
}

// noiseMax is the length of status.comparison.noise.
const noiseMax = 512

// saturationCompareNotes say, per scenario, which side could not sustain the planned arrival
// rate and by how much (the share of planned iterations k6 dropped): the rate rows then
// compare the throughput each side did sustain.
func saturationCompareNotes(cur, base []*result.Result) []string {
	var out []string //nolint:prealloc // most comparisons have no saturated scenario
	for _, side := range []struct {
		name string
		rs   []*result.Result
	}{{"this arm", cur}, {theBaseline, base}} {
		worst := map[string]float64{}
		var names []string
		for _, r := range side.rs {
			for _, s := range r.Scenarios {
				if s.Saturated && s.DroppedPercent != nil {
					if _, seen := worst[s.Name]; !seen {
						names = append(names, s.Name)
					}
					worst[s.Name] = math.Max(worst[s.Name], *s.DroppedPercent)
				}
			}
		}
		for _, n := range names {
			out = append(out, fmt.Sprintf("scenario %s: %s could not sustain the planned arrival rate (k6 dropped up to %.1f %% of the planned iterations while its runners were not CPU-bound); its rate rows show the throughput it did sustain",
				n, side.name, worst[n]))
		}
	}
	return out
}
