package judge

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/analysis/result"
)

// topRequestsCompared is how many request names per scenario (the most frequent) are compared.
const TopRequestsCompared = 10

// singleRunNote is said of every single-run comparison: its interval is the noise within the
// two runs, not the noise between runs of the same configuration, which is often larger.
const singleRunNote = "one run per side: the intervals show the noise within the two runs, not the noise between runs of the same configuration (another pod placement, a noisy neighbour, cache and database state); repeat the runs (a PerfSweep with repeats >= 2) to include it"

// metricUnit is the unit of a metric in results and objectives.
func metricUnit(m perfexpv1alpha1.ObjectiveMetric) string {
	switch m {
	case perfexpv1alpha1.MetricErrorRate, perfexpv1alpha1.MetricPassRate:
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

// successfulIntervals is true when a run's interval histograms hold the successful requests'
// latency only: read so, or none of its requests failed.
func SuccessfulIntervals(d *result.IntervalData, r *result.Result) bool {
	return d != nil && (d.SuccessfulOnly || !failedIn(r))
}

// successfulLatencyNote is said when latencies were compared over the successful requests and
// some failed.
const SuccessfulLatencyNote = "latencies are compared over the successful requests only (a failed request is often fast, and would pull a run that fails more towards faster); the error rate covers every request, and the response-time tables show all of them"

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

// baselineProblem says why a baseline cannot be compared with, or "": it is not there, it is
// not Valid (fast 404s are not fast responses), it ran other scenarios, or it ran them with
// another load shape.
func BaselineProblem(r *result.Result, b *Baseline) string {
	switch {
	case b.Problem != "":
		return b.Problem
	case b.Result == nil:
		return fmt.Sprintf("baseline %s has no results", b.Name)
	case b.Result.Validity != perfexpv1alpha1.Valid:
		why := ""
		if len(b.Result.InvalidReasons) > 0 {
			why = ": " + strings.Join(b.Result.InvalidReasons, "; ")
		}
		return fmt.Sprintf("baseline %s is not valid (%s)%s", b.Name, orNone(string(b.Result.Validity)), why)
	}
	mine, theirs := scenarioNames(r.Scenarios), slices.Clone(b.Scenarios)
	if len(theirs) == 0 {
		theirs = scenarioNames(b.Result.Scenarios)
	}
	sort.Strings(theirs)
	if !slices.Equal(mine, theirs) {
		return fmt.Sprintf("baseline %s ran the scenarios [%s], this experiment [%s]", b.Name, strings.Join(theirs, ", "), strings.Join(mine, ", "))
	}
	shape := b.Result.LoadShape
	if len(shape) == 0 {
		shape = b.LoadShape
	}
	if d := shapeDifference(r.LoadShape, shape); d != "" {
		return fmt.Sprintf("baseline %s ran another load shape: %s", b.Name, d)
	}
	return ""
}

func orNone(s string) string {
	if s == "" {
		return "no validity recorded"
	}
	return s
}

func scenarioNames(ss []result.ScenarioResult) []string {
	out := make([]string, 0, len(ss))
	for _, s := range ss {
		out = append(out, s.Name)
	}
	sort.Strings(out)
	return out
}

// scenarioMetrics are compared for every scenario (and all together), in the report's order.
var scenarioMetrics = []perfexpv1alpha1.ObjectiveMetric{perfexpv1alpha1.MetricP95, perfexpv1alpha1.MetricErrorRate, perfexpv1alpha1.MetricAvg,
	perfexpv1alpha1.MetricP50, perfexpv1alpha1.MetricP90, perfexpv1alpha1.MetricP99, perfexpv1alpha1.MetricRate, perfexpv1alpha1.MetricMax}

// requestMetrics are compared for the most frequent request names.
var requestMetrics = []perfexpv1alpha1.ObjectiveMetric{perfexpv1alpha1.MetricP95, perfexpv1alpha1.MetricAvg}

// noIntervalsWhy is why a single-run row is Unknown when one run has no per-interval data for it.
const noIntervalsWhy = "no per-interval data for it in one of the runs"

// transactionMetrics are compared for each group and custom Trend found in both runs.
var transactionMetrics = []perfexpv1alpha1.ObjectiveMetric{perfexpv1alpha1.MetricP95, perfexpv1alpha1.MetricAvg}

// row names one compared metric: of a scenario (or all), one of its request names, groups
// or custom Trends.
type row struct {
	scenario, request string
	group, trend      string
	// iteration is the scenario's iteration duration (k6's iteration_duration).
	iteration bool
	// counter names a custom k6 Counter of the scenario (kind Count; see compare_script.go).
	counter string
	kind    perfexpv1alpha1.ObjectiveMetric
}

func (w row) label() string {
	label := w.scenario
	if w.scenario == "" {
		label = "all"
	}
	switch {
	case w.request != "":
		label += "/" + w.request
	case w.group != "":
		label += " group " + w.group
	case w.trend != "":
		label += " trend " + w.trend
	case w.iteration:
		label += " iteration"
	case w.counter != "":
		return label + " counter " + w.counter + " rate"
	}
	return label + " " + strings.ToLower(string(w.kind))
}

// transaction is true for a group's, a custom Trend's, an iteration duration's or a Counter's
// row: all are secondary, and none has a successful-only variant.
func (w row) transaction() bool {
	return w.group != "" || w.trend != "" || w.iteration || w.counter != ""
}

// stats are the statistics a row reads from a run, nil when the run has none.
func (w row) stats(r *result.Result) *result.RequestStats {
	if w.counter != "" {
		return r.CounterStats(w.scenario, w.counter)
	}
	if w.iteration {
		s, _ := r.IterationStats(w.scenario)
		return s
	}
	if w.transaction() {
		s, _, _ := transactionStats(r, w.scenario, w.group, w.trend)
		return s
	}
	return r.Lookup(w.scenario, w.request)
}

// unit is a row's unit in a run: a plain-number Trend's is the script's own (empty).
func (w row) unit(r *result.Result) string {
	if w.counter != "" {
		return counterUnit
	}
	if w.trend != "" {
		_, u, _ := transactionStats(r, w.scenario, w.group, w.trend)
		return u
	}
	return metricUnit(w.kind)
}

func (w row) key() result.IntervalKey {
	if w.scenario == "" {
		return result.IntervalKey{Scenario: result.AllScenarios}
	}
	return result.IntervalKey{Scenario: w.scenario, Request: w.request, Group: w.group, Trend: w.trend, Iteration: w.iteration, Counter: w.counter}
}

// rows lists what to compare for a result: all scenarios together (when there are several),
// each scenario, its most frequent request names found in the baseline too, and every primary
// metric and relative objective not among those.
func rows(r, base *result.Result, o CompareOptions) []row {
	var out []row
	seen := map[row]bool{}
	add := func(w row) {
		if !seen[w] {
			seen[w] = true
			out = append(out, w)
		}
	}
	if len(r.Scenarios) > 1 {
		for _, m := range scenarioMetrics {
			add(row{kind: m})
		}
	}
	for _, s := range r.Scenarios {
		for _, m := range scenarioMetrics {
			add(row{scenario: s.Name, kind: m})
		}
	}
	for _, s := range r.Scenarios {
		n := 0
		for _, rr := range s.Requests {
			if n == TopRequestsCompared {
				break
			}
			if base.Lookup(s.Name, rr.Name) == nil {
				continue
			}
			n++
			for _, m := range requestMetrics {
				add(row{scenario: s.Name, request: rr.Name, kind: m})
			}
		}
	}
	// Groups and custom Trends found in both runs: secondary rows (never primary, so out of
	// the headline's Holm family unless an objective names them).
	for _, s := range r.Scenarios {
		n := 0
		for _, g := range s.Groups {
			if n == TopRequestsCompared {
				break
			}
			if st, _, _ := transactionStats(base, s.Name, g.Name, ""); st == nil {
				continue
			}
			n++
			for _, m := range transactionMetrics {
				add(row{scenario: s.Name, group: g.Name, kind: m})
			}
		}
		for _, t := range s.Trends {
			if st, _, _ := transactionStats(base, s.Name, "", t.Name); st == nil {
				continue
			}
			for _, m := range transactionMetrics {
				add(row{scenario: s.Name, trend: t.Name, kind: m})
			}
		}
	}
	// Each scenario's iteration duration and custom Counters, when both runs have them:
	// secondary as well.
	for _, w := range scriptRows(r, base) {
		add(w)
	}
	for _, p := range o.Primary {
		if p.Scenario != "" {
			add(row{scenario: p.Scenario, request: p.Request, kind: p.Metric})
			continue
		}
		for _, s := range r.Scenarios {
			add(row{scenario: s.Name, kind: p.Metric})
		}
	}
	for _, ob := range o.Objectives {
		if (ob.MaxIncreasePercent != nil || ob.MaxDecreasePercent != nil) && ob.Metric != perfexpv1alpha1.MetricQuery {
			add(objectiveRow(ob))
		}
	}
	return out
}

// comparedIntervals are the per-interval series a comparison of r with base shows: its request
// names and transactions (groups, Trends, iterations).
func ComparedIntervals(r, base *result.Result, a perfexpv1alpha1.Analysis) []result.IntervalKey {
	opts, _ := OptionsFor(a)
	var keys []result.IntervalKey
	for _, w := range rows(r, base, opts.withDefaults()) {
		if w.request != "" || w.transaction() {
			keys = append(keys, w.key())
		}
	}
	return keys
}

// compare compares a single run with a single baseline run, metric by metric, with a
// moving-block bootstrap over both runs' per-interval data.
func Compare(r *result.Result, cur *result.IntervalData, b *Baseline, base *result.IntervalData, o CompareOptions) *result.Comparison {
	o = o.withDefaults()
	c := &result.Comparison{Baseline: b.Name, Method: result.MethodBlockBootstrap, Runs: 1, BaselineRuns: 1, MinChangePercent: o.MinChangePercent}
	if msg := BaselineProblem(r, b); msg != "" {
		c.Message, c.Change = msg, perfexpv1alpha1.ChangeUnknown
		return c
	}
	c.Notes = []string{singleRunNote}
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
	effects := map[result.IntervalKey]map[perfexpv1alpha1.ObjectiveMetric]*effect{}
	effectOf := func(k result.IntervalKey, m perfexpv1alpha1.ObjectiveMetric) (*effect, string) {
		if _, done := effects[k]; !done {
			cs, bs := cur.Find(k), base.Find(k)
			if cs == nil || bs == nil {
				effects[k] = nil
			} else {
				effects[k] = blockBootstrap(cs, bs, cur.StepSeconds, base.StepSeconds, o.MinChangePercent, o.Resamples,
					seedOf(append([]string{r.TestID, baseID}, k.SeedParts()...)...))
			}
		}
		if effects[k] == nil {
			return nil, noIntervalsWhy
		}
		if e := effects[k][m]; e != nil {
			return e, ""
		}
		return nil, "no data for it in one of the runs"
	}
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
		switch {
		case w.kind == perfexpv1alpha1.MetricMax:
			setUnknown(&mc, "a maximum is one request's latency: it has no interval to decide on")
		case mixed && isLatency(w.kind) && !w.transaction():
			setUnknown(&mc, "one run's stored latency intervals hold every request, the other's only the successful ones, and requests failed: not comparable; analyse the older run again")
		default:
			e, why := effectOf(w.key(), w.bootstrapKind())
			if e == nil {
				setUnknown(&mc, w.noEffectWhy(why, r, b.Result))
				break
			}
			fill(&mc, e, result.MethodBlockBootstrap, "intervals")
			w.orientCounter(&mc, o.Objectives)
		}
		c.Metrics = append(c.Metrics, mc)
	}
	if intervalRates {
		c.Notes = append(c.Notes, intervalRateNote)
	}
	c.Metrics = append(c.Metrics, workloadRows(r, b.Result, cur, base, o, r.TestID, baseID)...)
	c.Metrics = append(c.Metrics, queryRows(r.Queries, b.Result)...)
	compareCustom(c, r, b.Result)
	finish(c)
	c.NodeLoad, c.BaselineNodeLoad = r.NodeLoad, b.Result.NodeLoad
	for _, why := range []string{NodeLoadProblem(r.NodeLoad, b.Result.NodeLoad, o.MaxNodeLoadDifference), ThrottleProblem(r, b.Result)} {
		if why != "" {
			Undecide(c, why)
		}
	}
	return c
}

// undecide withdraws every claim of a comparison whose two runs were not measured on a
// comparable node: a change, or the absence of one, may be the neighbour's.
func Undecide(c *result.Comparison, why string) {
	c.Disturbed = strings.TrimPrefix(c.Disturbed+"; "+why, "; ")
	for i := range c.Metrics {
		mc := &c.Metrics[i]
		switch mc.Change {
		case perfexpv1alpha1.ChangeRegressed, perfexpv1alpha1.ChangeImproved, perfexpv1alpha1.ChangeNoMeaningfulChange:
			mc.Why = fmt.Sprintf("%s on its interval, but not claimed: the runs' conditions differed (see the comparison's notes)", mc.Change)
			mc.Change = perfexpv1alpha1.ChangeInconclusive
		}
	}
	c.Change = Headline(c.Metrics)
	c.Notes = append([]string{why}, c.Notes...)
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

// queryRows compare custom queries on their value alone: one value per run has no interval.
func queryRows(qs []result.QueryResult, base *result.Result) []result.MetricComparison {
	out := make([]result.MetricComparison, 0, len(qs))
	for _, qr := range qs {
		mc := result.MetricComparison{Metric: "query " + qr.Name, Kind: perfexpv1alpha1.MetricQuery, Unit: qr.Unit, Value: qr.Value}
		setUnknown(&mc, "a custom query has one value per run: no interval to decide on")
		if bq := base.Query(qr.Name); bq != nil {
			mc.Baseline = bq.Value
		}
		fillDelta(&mc)
		out = append(out, mc)
	}
	return out
}

// finish puts primary metrics first and decides the headline with Holm across them.
func finish(c *result.Comparison) {
	sort.SliceStable(c.Metrics, func(i, j int) bool { return c.Metrics[i].Primary && !c.Metrics[j].Primary })
	adjust([]*result.Comparison{c})
}

func newMetricComparison(w row, o CompareOptions) result.MetricComparison {
	return result.MetricComparison{Metric: w.label(), Scenario: w.scenario, Request: w.request, Kind: w.kind, Unit: metricUnit(w.kind),
		Primary: !w.transaction() && o.primary(w.scenario, w.request, w.kind)}
}

func setUnknown(mc *result.MetricComparison, why string) {
	mc.Change, mc.Why = perfexpv1alpha1.ChangeUnknown, why
	mc.Unadjusted, mc.UnadjustedWhy = mc.Change, mc.Why
}

// fill records an effect and its verdict before any multiplicity control.
func fill(mc *result.MetricComparison, e *effect, method, sampleUnit string) {
	mc.Method, mc.SampleUnit, mc.Samples, mc.BaselineSamples = method, sampleUnit, e.n, e.baseN
	mc.Scale = result.ScalePercent
	if !e.logScale {
		mc.Scale = result.ScalePoints
	}
	mc.Threshold = result.Num(e.toDisplay(e.up))
	mc.Constant = e.constant
	if e.few == "" {
		mc.Estimate, mc.Low, mc.High = result.Num(e.toDisplay(e.point)), result.Num(e.toDisplay(e.low)), result.Num(e.toDisplay(e.high))
		mc.PValue, mc.PBeyond = result.Num(e.pNoChange), result.Num(e.pBeyond)
	}
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
