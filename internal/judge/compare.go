package judge

import (
	"fmt"
	"math"
	"sort"

	moremath "github.com/aclements/go-moremath/stats"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/result"
)

// TopRequestsCompared is how many request names per scenario (the most frequent) are compared.
const TopRequestsCompared = 10

// singleRunNote is said of every single-run comparison: its intervals hold the noise within the
// two runs and the noise between runs of the same configuration, which one run per side cannot
// see and so takes from a calibration or a conservative assumption.
func singleRunNote(noise string) string {
	return "one run per side: each interval holds the noise within the two runs plus the noise between runs of the same configuration (another pod placement, a noisy neighbour, cache and database state), " +
		noise + "; repeat the runs (a PerfSweep with repeats) to measure it instead"
}

// metricUnit is the unit of a metric in results and objectives.
func metricUnit(m perfexpv1alpha1.ObjectiveMetric) string {
	switch m {
	case perfexpv1alpha1.MetricErrorRate, perfexpv1alpha1.MetricPassRate, result.MetricCPUPercentOfRequest:
		return "%"
	case perfexpv1alpha1.MetricRate:
		return "req/s"
	case perfexpv1alpha1.MetricQuery, perfexpv1alpha1.MetricCount:
		return ""
	case result.MetricCPU:
		return "cores"
	case result.MetricMemory:
		return "MiB"
	}
	return "ms"
}

// higherIsBetter is true for throughput; latency and errors are better lower.
func higherIsBetter(m perfexpv1alpha1.ObjectiveMetric) bool { return m == perfexpv1alpha1.MetricRate }

// statOf picks one metric from request statistics.
func statOf(s *result.RequestStats, m perfexpv1alpha1.ObjectiveMetric) *float64 {
	if s == nil {
		return nil
	}
	switch m {
	case perfexpv1alpha1.MetricAvg:
		return s.Avg
	case perfexpv1alpha1.MetricP50:
		return s.P50
	case perfexpv1alpha1.MetricP75:
		return s.P75
	case perfexpv1alpha1.MetricP90:
		return s.P90
	case perfexpv1alpha1.MetricP95:
		return s.P95
	case perfexpv1alpha1.MetricP99:
		return s.P99
	case perfexpv1alpha1.MetricMax:
		return s.Max
	case perfexpv1alpha1.MetricErrorRate:
		return s.ErrorPercent
	case perfexpv1alpha1.MetricRate:
		return s.Rate
	}
	return nil
}

// comparedStat is the value of a metric a comparison judges: for latencies, with
// successfulOnly, the successful requests' (failed requests are often fast, and objectives
// judge the same), which is every request's when none failed; other metrics cover every
// request.
func comparedStat(s *result.RequestStats, m perfexpv1alpha1.ObjectiveMetric, successfulOnly bool) *float64 {
	if successfulOnly && s != nil && s.Successful != nil && isLatency(m) {
		return successfulOf(s, m)
	}
	return statOf(s, m)
}

// isLatency is true for the metrics read from latency histograms.
func isLatency(m perfexpv1alpha1.ObjectiveMetric) bool {
	return metricUnit(m) == "ms"
}

// failedIn is true when a request failed in either run.
func failedIn(rs ...*result.Result) bool {
	for _, r := range rs {
		if r != nil && r.Total.Errors != nil && *r.Total.Errors > 0 {
			return true
		}
	}
	return false
}

// SuccessfulIntervals is true when a run's interval histograms hold the successful requests'
// latency only: read so, or none of its requests failed.
func SuccessfulIntervals(d *result.IntervalData, r *result.Result) bool {
	return d != nil && (d.SuccessfulOnly || !failedIn(r))
}

// SuccessfulLatencyNote is said when latencies were compared over the successful requests and
// some failed.
const SuccessfulLatencyNote = "latencies are compared over the successful requests only (a failed request is often fast, and would pull a run that fails more towards faster); the error rate covers every request, and the response-time tables show all of them"

// intervalEffects bootstraps each compared series of two runs once, for all its metrics.
type intervalEffects struct {
	cur, base     *result.IntervalData
	o             CompareOptions
	curID, baseID string
	done          map[result.IntervalKey]map[perfexpv1alpha1.ObjectiveMetric]*effect
}

// of is metric m's effect on series k, or nil and why there is none.
func (ie *intervalEffects) of(k result.IntervalKey, m perfexpv1alpha1.ObjectiveMetric) (*effect, string) {
	if _, done := ie.done[k]; !done {
		cs, bs := ie.cur.Find(k), ie.base.Find(k)
		if cs == nil || bs == nil {
			ie.done[k] = nil
		} else {
			ie.done[k] = blockBootstrap(cs, bs, ie.cur.StepSeconds, ie.base.StepSeconds, ie.o.MinChangePercent, ie.o.Resamples,
				seedOf(append([]string{ie.curID, ie.baseID}, k.SeedParts()...)...))
		}
	}
	if ie.done[k] == nil {
		return nil, noIntervalsWhy
	}
	if e := ie.done[k][m]; e != nil {
		return e, ""
	}
	return nil, "no data for it in one of the runs"
}

// Compare compares a single run with a single baseline run, metric by metric, with a
// moving-block bootstrap over both runs' per-interval data.
func Compare(r *result.Result, cur *result.IntervalData, b *Baseline, base *result.IntervalData, o CompareOptions) *result.Comparison {
	o = o.withDefaults()
	c := &result.Comparison{Baseline: b.Name, Method: result.MethodBlockBootstrap, Runs: 1, BaselineRuns: 1, MinChangePercent: o.MinChangePercent}
	if msg := BaselineProblem(r, b); msg != "" {
		c.Message, c.Change = msg, perfexpv1alpha1.ChangeUnknown
		return c
	}
	wd := singleRunWidening(c, r, b.Result, o)
	cs, bs := SuccessfulIntervals(cur, r), SuccessfulIntervals(base, b.Result)
	successfulOnly, mixed := cs && bs, cs != bs
	switch {
	case successfulOnly && failedIn(r, b.Result):
		c.Notes = append(c.Notes, SuccessfulLatencyNote)
	case !successfulOnly && !mixed:
		c.Notes = append(c.Notes, "latencies are compared over all requests, failed ones included: the baseline's stored intervals hold all its requests' latency (analysed by an older perfexp)")
	}
	baseID := b.TestID
	if baseID == "" {
		baseID = b.Result.TestID
	}
	effects := &intervalEffects{cur: cur, base: base, o: o, curID: r.TestID, baseID: baseID, done: map[result.IntervalKey]map[perfexpv1alpha1.ObjectiveMetric]*effect{}}
	intervalRates := false
	for _, w := range rows(r, b.Result, o) {
		mc := newMetricComparison(w, o)
		mc.Value, mc.Baseline = w.compared(r, successfulOnly), w.compared(b.Result, successfulOnly)
		mc.Unit = w.unit(r)
		if w.bootstrapKind() == perfexpv1alpha1.MetricRate {
			// The change is decided on the compared intervals' rates (requests, or a Counter's
			// increments): show those, not the results' rates over each scenario's active
			// span, so value, baseline and change come from one source.
			if vc, vb := intervalRate(cur.Find(w.key()), cur.StepSeconds), intervalRate(base.Find(w.key()), base.StepSeconds); vc != nil && vb != nil {
				mc.Value, mc.Baseline = vc, vb
				intervalRates = true
			}
		}
		fillDelta(&mc)
		missing := w.missing([]*result.Result{r}, []*result.Result{b.Result})
		switch {
		case w.kind == perfexpv1alpha1.MetricMax:
			setUnknown(&mc, "a maximum is one request's latency: it has no interval to decide on")
		case missing != "":
			setUnknown(&mc, missing)
		case mixed && isLatency(w.kind) && !w.transaction():
			setUnknown(&mc, "one run's stored latency intervals hold every request, the other's only the successful ones, and requests failed: not comparable; analyse the older run again")
		default:
			e, why := effects.of(w.key(), w.bootstrapKind())
			if e == nil {
				setUnknown(&mc, w.noEffectWhy(why, r, b.Result))
				break
			}
			if mc.Value != nil && mc.Baseline != nil && *mc.Value > 0 && *mc.Baseline > 0 {
				e = e.centredOn(math.Log(*mc.Value / *mc.Baseline))
			}
			e = wd.widen(w.noiseKey(), e).singleAtLevel(o.alpha())
			fill(&mc, e, result.MethodBlockBootstrap, "intervals")
			o.orientRow(w, &mc)
			if mc.Primary && e.few != "" && w.transaction() {
				// A workflow's Trend (an import's duration) often has a value or two per run:
				// say how many runs would decide it instead.
				mc.Why += "; " + runsHint(mc.Value, mc.Baseline, o)
				mc.UnadjustedWhy = mc.Why
			}
		}
		c.Metrics = append(c.Metrics, mc)
	}
	if intervalRates {
		c.Notes = append(c.Notes, intervalRateNote)
	}
	c.Notes = append(c.Notes, notRunNotes(r, b.Result, o)...)
	c.Notes = append(c.Notes, saturationCompareNotes([]*result.Result{r}, []*result.Result{b.Result})...)
	c.Metrics = append(c.Metrics, workloadRows(r, b.Result, cur, base, o, wd.widen, r.TestID, baseID)...)
	c.Metrics = append(c.Metrics, routeRows(r, b.Result, cur, base, o, wd.widen, r.TestID, baseID)...)
	wd.done()
	c.Metrics = append(c.Metrics, queryRows(r, b.Result, o)...)
	compareCustom(c, r, b.Result, o)
	// At a sequential look (an arm left with one valid run per side) the family is held at the
	// look's level, as every other arm of the look is.
	finishLevel(c, o.level)
	c.NodeLoad, c.BaselineNodeLoad = r.NodeLoad, b.Result.NodeLoad
	return c
}

// intervalRateNote is said of a single-run comparison with rate rows.
const intervalRateNote = "Rate rows (requests, and Counters) are per second over the compared intervals, the same intervals their change is decided on; the results' rates are over each scenario's own active span, so the two can differ slightly"

// intervalRate is a series' requests per second over all its intervals, nil without one.
func intervalRate(s *result.IntervalSeries, step float64) *float64 {
	if s == nil || len(s.Requests) == 0 || step <= 0 {
		return nil
	}
	var all float64
	for _, v := range s.Requests {
		all += v
	}
	return result.Num(all / (float64(len(s.Requests)) * step))
}

// finishLevel puts primary metrics first, decides the headline with Holm across them at
// level(m) for a family of m, and controls the false discovery rate of the secondary rows at
// level(1).
func finishLevel(c *result.Comparison, level func(m int) float64) {
	sort.SliceStable(c.Metrics, func(i, j int) bool { return c.Metrics[i].Primary && !c.Metrics[j].Primary })
	adjustLevel([]*result.Comparison{c}, level, 0)
	adjustSecondary(c, level(1))
}

func newMetricComparison(w row, o CompareOptions) result.MetricComparison {
	return result.MetricComparison{Metric: w.label(), Scenario: w.scenario, Request: w.request, Kind: w.kind, Unit: metricUnit(w.kind),
		Primary: o.primaryRow(w).ok}
}

func setUnknown(mc *result.MetricComparison, why string) {
	mc.Change, mc.Why = perfexpv1alpha1.ChangeUnknown, why
	mc.Unadjusted, mc.UnadjustedWhy = mc.Change, mc.Why
}

// fill records an effect and its verdict before any multiplicity control.
func fill(mc *result.MetricComparison, e *effect, method, sampleUnit string) {
	mc.Method, mc.SampleUnit, mc.Samples, mc.BaselineSamples = method, sampleUnit, e.n, e.baseN
	mc.Scale = result.ScalePercent
	if !e.logScale && !e.relative {
		mc.Scale = result.ScalePoints
	}
	mc.Threshold = result.Num(e.toDisplay(e.up))
	mc.Constant = e.constant
	mc.Withdrawn = e.withdrawn
	switch {
	case e.zeroBase != "":
		// A rise from 0: no relative estimate or interval; the reason gives the counts.
		mc.PValue, mc.PBeyond = result.Num(e.pNoChange), result.Num(e.pBeyond)
	case e.few == "":
		mc.Estimate, mc.Low, mc.High = result.Num(e.toDisplay(e.point)), result.Num(e.toDisplay(e.low)), result.Num(e.toDisplay(e.high))
		mc.PValue, mc.PBeyond = result.Num(e.pNoChange), result.Num(e.pBeyond)
	}
	mc.PEquivalent = result.Num(e.pEquivalent())
	mc.Unadjusted, mc.UnadjustedWhy = decide(e, mc.Kind, sampleUnit)
	mc.Change, mc.Why = mc.Unadjusted, mc.UnadjustedWhy
}

func fillDelta(mc *result.MetricComparison) {
	if mc.Value == nil || mc.Baseline == nil {
		return
	}
	d := *mc.Value - *mc.Baseline
	mc.Delta = result.Num(d)
	if *mc.Baseline != 0 {
		mc.DeltaPercent = result.Num(100 * d / *mc.Baseline)
	}
}

func fmtFew(n, baseN, need int, what string) string {
	return fmt.Sprintf("too few samples: %d and %d %s, at least %d of each are needed", n, baseN, what, need)
}

// singleAtLevel redraws a single-run effect's interval at 1 - a, when a is below the default
// (a sequential look's level, for an arm left with one valid run per side): its half-widths
// scaled by the ratio of the quantiles of the distribution its interval was drawn from
// (addBetweenRun: the normal, or Student's t on a calibration's or a history's degrees of
// freedom, Welch-Satterthwaite's when the bootstrap's part is added); a bounded bias is scaled
// with them, which errs wide. The p-values are those of that distribution already, whatever
// the level.
func (e *effect) singleAtLevel(a float64) *effect {
	if a <= 0 || a >= alpha || e.few != "" || e.constant || e.high <= e.low {
		return e
	}
	inv := moremath.InvCDF(moremath.NormalDist{Mu: 0, Sigma: 1})
	if b := e.between; b != nil && e.logScale {
		vw := e.withinVar
		vb := b.addedVariance(vw)
		switch df := b.df(); {
		case math.IsInf(df, 1):
		case b.WithinIncluded:
			inv = moremath.InvCDF(moremath.TDist{V: df})
		case vb > 0:
			inv = moremath.InvCDF(moremath.TDist{V: (vw + vb) * (vw + vb) / (vb * vb / df)})
		}
	}
	r := inv(1-a/2) / inv(1-alpha/2)
	w := *e
	w.low, w.high = e.point-r*(e.point-e.low), e.point+r*(e.high-e.point)
	w.level = 1 - a
	return &w
}
