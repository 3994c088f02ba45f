package analysis

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	promv1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"

	"github.com/perfexp/perfexp/internal/judge"
	"github.com/perfexp/perfexp/internal/result"
)

// Per-interval data is the input of a single-run comparison: for each interval of the
// measured window, the requests, the failed requests and the latency histogram, for each
// scenario, for all scenarios together, and for each request name. A comparison resamples
// blocks of these intervals (internal/judge/bootstrap.go); the report's charts show their p95, throughput and
// error rate.
//
// Two range queries read every series' cumulative value at each interval boundary; the
// increments and their sums per scenario and request name are computed here. That is exact
// where rate() would extrapolate, and far cheaper: Prometheus 2.42 evaluates rate() over
// native histograms slowly (seconds per query for a few hundred series).

// newIntervalSeries packs per-interval counts and histograms.
func newIntervalSeries(k result.IntervalKey, n int, c *requestCounts, hs []*result.Histogram) result.IntervalSeries {
	s := result.IntervalSeries{Scenario: k.Scenario, Request: k.Request, Group: k.Group, Trend: k.Trend, Iteration: k.Iteration, Counter: k.Counter,
		Requests: make([]float64, n), Failed: make([]float64, n)}
	if c != nil {
		copy(s.Requests, c.all)
		copy(s.Failed, c.failed)
	}
	pos := map[[2]float64]int{}
	for _, h := range hs {
		if h == nil {
			continue
		}
		h.EachBucket(func(lower, upper, v float64) {
			if key := [2]float64{lower, upper}; v > 0 {
				if _, ok := pos[key]; !ok {
					pos[key] = 0
					s.Bounds = append(s.Bounds, key)
				}
			}
		})
	}
	if len(s.Bounds) == 0 {
		return s
	}
	sort.Slice(s.Bounds, func(i, j int) bool {
		if s.Bounds[i][1] != s.Bounds[j][1] {
			return s.Bounds[i][1] < s.Bounds[j][1]
		}
		return s.Bounds[i][0] < s.Bounds[j][0]
	})
	for i, b := range s.Bounds {
		pos[b] = i
	}
	s.Counts, s.Sums = make([][]float64, n), make([]float64, n)
	for i, h := range hs {
		if i >= n || h == nil {
			continue
		}
		row := make([]float64, len(s.Bounds))
		last := -1
		h.EachBucket(func(lower, upper, v float64) {
			if v > 0 {
				j := pos[[2]float64{lower, upper}]
				row[j] += v
				last = max(last, j)
			}
		})
		s.Counts[i] = row[:last+1]
		s.Sums[i] = h.Sum
	}
	return s
}

// intervalLength aims at 20 intervals per window, at least 15 s (three k6 pushes at its default
// 5 s).
func intervalLength(w time.Duration) time.Duration {
	return max((w / 20).Round(time.Second), 15*time.Second)
}

// readIntervals reads a run's per-interval data: request counts for every scenario and request
// name, latency histograms for every scenario and for the request names named in keep (those
// a comparison or a later run can use). Both runs of a comparison read from Prometheus use the
// same interval length, so their blocks hold alike amounts of time.
//
// Reading every series' histogram at every boundary would move tens of megabytes of JSON for
// a few hundred series (most of an analysis' time), so the scenarios' histograms are summed by
// Prometheus. A sum is exact only while every series is in it: k6 writes a series only when it
// has new samples, so one that stopped (a request name used early, an error status that went
// away) drops out of an instant evaluation five minutes later, and a restarted runner's
// series starts again at zero. Such series are found from their request counters (one float
// per boundary, cheap), and only they are read one by one to put back what the sum lost.
//
// With successfulOnly the histograms are those of the requests k6 did not mark failed
// (expected_response!="false", so a run whose k6 drops that tag keeps all its requests): a
// failed request is often fast (a 500 at once, a refused connection) and would pull the
// latency of a run that fails more towards "faster".
func readIntervals(ctx context.Context, q Querier, testID string, scenarios []string, ms, end time.Time, step time.Duration, keep map[result.IntervalKey]bool, successfulOnly bool) (*result.IntervalData, error) {
	out := &result.IntervalData{StepSeconds: step.Seconds(), SuccessfulOnly: successfulOnly}
	if end.Sub(ms) < step {
		return out, nil
	}
	sel := fmt.Sprintf("{testid=%s,scenario=~%s}", quote(testID), quote(anyOf(scenarios)))
	hsel := sel
	if successfulOnly {
		hsel = strings.TrimSuffix(sel, "}") + fmt.Sprintf(",%s!=%s}", tagExpectedResponse, quote(unexpected))
	}
	var names, trendNames, counters []string
	groups, iterations := false, false
	for k := range keep {
		switch {
		case k.Request != "":
			names = append(names, k.Request)
		case k.Group != "":
			groups = true
		case k.Trend != "":
			trendNames = append(trendNames, k.Trend)
		case k.Iteration:
			iterations = true
		case k.Counter != "":
			counters = append(counters, counterMetric(k.Counter))
		}
	}
	r := promv1.Range{Start: ms, End: end, Step: step}
	var reqs, sums, named model.Matrix
	fns := []func() error{
		// The custom Counters ride in the request counters' query: one float per series and
		// boundary either way, and no query more however many Counters there are.
		func() (err error) { reqs, err = rangeMatrix(ctx, q, countersSelector(sel, counters), r); return err },
		func() (err error) {
			sums, err = rangeMatrix(ctx, q, fmt.Sprintf("sum by (%s) (%s%s)", tagScenario, metricDuration, hsel), r)
			return err
		},
	}
	// The named requests' histograms and the groups', Trends' and iterations' come in one
	// query: every run has iteration durations, and a query of their own would be one more
	// per analysis. They are told apart by name afterwards.
	var histSels []string
	if len(names) > 0 {
		histSels = append(histSels, metricDuration+withNames(hsel, names))
	}
	if tsel := transactionSelector(sel, groups, trendNames, iterations); tsel != "" {
		histSels = append(histSels, tsel)
	}
	if len(histSels) > 0 {
		fns = append(fns, func() (err error) { named, err = rangeMatrix(ctx, q, histogramsOf(histSels), r); return err })
	}
	if err := together(fns...); err != nil {
		return nil, err
	}
	named, transactions := splitNamed(named)
	g := intervalGrid{start: ms, step: step, steps: int(end.Sub(ms)/step) + 1}
	reqs, counterSeries := splitCounters(reqs)
	transactions, iterationSeries := splitIterations(transactions)
	counts := sumRequestIncrements(reqs, g)
	var irregular model.Matrix
	if odd := irregularSeries(reqs, g); len(odd) > 0 {
		var oddNames []string
		for _, m := range odd {
			oddNames = append(oddNames, string(m[tagName]))
		}
		m, err := rangeMatrix(ctx, q, metricDuration+withNames(hsel, oddNames), r)
		if err != nil {
			return nil, err
		}
		for _, ss := range m {
			if _, ok := odd[seriesKey(ss.Metric)]; ok {
				irregular = append(irregular, ss)
			}
		}
	}
	hs := scenarioIncrements(sums, irregular, g)
	for k, v := range sumHistogramIncrements(named, g) {
		if k.Request != "" && keep[k] {
			hs[k] = v
		}
	}
	for k, v := range transactionIncrements(transactions, g) {
		if keep[k] {
			hs[k] = v
			counts[k] = executions(v, g.steps-1)
		}
	}
	for k, v := range iterationIncrements(iterationSeries, g) {
		if keep[k] {
			hs[k] = v
			counts[k] = executions(v, g.steps-1)
		}
	}
	for k, v := range counterIncrements(counterSeries, g) {
		if keep[k] {
			counts[k] = v
		}
	}
	keys := map[result.IntervalKey]bool{}
	for k := range counts {
		keys[k] = true
	}
	for k := range hs {
		keys[k] = true
	}
	for k := range keys {
		out.Series = append(out.Series, newIntervalSeries(k, g.steps-1, counts[k], hs[k]))
	}
	sort.Slice(out.Series, func(i, j int) bool { return out.Series[i].Key().Less(out.Series[j].Key()) })
	return out, nil
}

// withNames narrows a selector to the given request names.
func withNames(sel string, names []string) string {
	return strings.TrimSuffix(sel, "}") + fmt.Sprintf(",%s=~%s}", tagName, quote(anyOf(names)))
}

// irregularSeries are the request counters that leave a Prometheus sum at some boundary after
// having been in it, or go down (a restarted runner): their histogram twins (same labels) are
// the ones a sum gets wrong.
func irregularSeries(reqs model.Matrix, g intervalGrid) map[string]model.Metric {
	out := map[string]model.Metric{}
	for _, ss := range reqs {
		seen := make([]bool, g.steps)
		val := make([]float64, g.steps)
		for _, p := range ss.Values {
			if i, ok := g.boundary(p.Timestamp); ok && result.Finite(float64(p.Value)) {
				seen[i], val[i] = true, float64(p.Value)
			}
		}
		started, odd := false, false
		var prev float64
		for i := range seen {
			switch {
			case seen[i] && started && val[i] < prev:
				odd = true
			case !seen[i] && started:
				odd = true
			}
			if seen[i] {
				started, prev = true, val[i]
			}
		}
		if odd {
			out[seriesKey(ss.Metric)] = ss.Metric
		}
	}
	return out
}

// scenarioIncrements turns Prometheus' per-scenario sums of the cumulative histograms into
// per-interval increments per scenario and for all scenarios together. Each irregular series
// is read on its own: what it should contribute at a boundary (its last value carried over a
// gap, plus everything it counted before a reset) minus what the sum holds of it (its value
// when present) is added back, which makes the sum what adding every series' own increments
// would give.
func scenarioIncrements(sums, irregular model.Matrix, g intervalGrid) map[result.IntervalKey][]*result.Histogram {
	cum := map[string][]*result.Histogram{}
	at := func(scenario string) []*result.Histogram {
		if cum[scenario] == nil {
			cum[scenario] = make([]*result.Histogram, g.steps)
		}
		return cum[scenario]
	}
	for _, ss := range sums {
		row := at(string(ss.Metric[tagScenario]))
		for _, p := range ss.Histograms {
			if i, ok := g.boundary(p.Timestamp); ok {
				row[i] = histogramFromModel(p.Histogram)
			}
		}
	}
	for _, ss := range irregular {
		row := at(string(ss.Metric[tagScenario]))
		vals := make([]*result.Histogram, g.steps)
		for _, p := range ss.Histograms {
			if i, ok := g.boundary(p.Timestamp); ok {
				vals[i] = histogramFromModel(p.Histogram)
			}
		}
		var prev, offset *result.Histogram
		for i, v := range vals {
			cur := v
			switch {
			case cur == nil:
				cur = prev
			case prev != nil && cur.Count < prev.Count:
				if offset == nil {
					offset = result.NewHistogram()
				}
				offset.Add(prev)
			}
			prev = cur
			if cur == nil {
				continue
			}
			fix := cur.Clone()
			fix.Add(offset)
			fix.Sub(v)
			if fix.Count == 0 && fix.Sum == 0 {
				continue
			}
			if row[i] == nil {
				row[i] = result.NewHistogram()
			}
			row[i].Add(fix)
		}
	}
	out := map[result.IntervalKey][]*result.Histogram{}
	for sc, row := range cum {
		inc := increasesOf(row)
		out[result.IntervalKey{Scenario: sc}] = inc
		all := out[result.IntervalKey{Scenario: result.AllScenarios}]
		if all == nil {
			all = make([]*result.Histogram, g.steps-1)
			out[result.IntervalKey{Scenario: result.AllScenarios}] = all
		}
		for i, h := range inc {
			if h == nil {
				continue
			}
			if all[i] == nil {
				all[i] = result.NewHistogram()
			}
			all[i].Add(h)
		}
	}
	return out
}

// timeline keeps the scenario-level per-interval p95, throughput and error rate for the
// report's charts.
func timeline(d *result.IntervalData, start time.Time, scenarios []string) *result.Timeline {
	t := &result.Timeline{Start: start, StepSeconds: d.StepSeconds}
	for _, sc := range append([]string{result.AllScenarios}, scenarios...) {
		s := d.Find(result.IntervalKey{Scenario: sc})
		if s == nil {
			continue
		}
		ts := result.TimelineSeries{Scenario: sc}
		for i := range s.Requests {
			var p95, errRate *float64
			if h := s.Histogram(i); h != nil {
				if x, ok := h.Quantile(0.95); ok {
					p95 = result.Num(1000 * x)
				}
			}
			if s.Requests[i] > 0 {
				errRate = result.Num(100 * s.Failed[i] / s.Requests[i])
			}
			ts.P95, ts.ErrorRate = append(ts.P95, p95), append(ts.ErrorRate, errRate)
			ts.Rate = append(ts.Rate, result.Num(s.Requests[i]/d.StepSeconds))
		}
		t.Series = append(t.Series, ts)
	}
	if len(t.Series) == 0 {
		return nil
	}
	return t
}

// stored keeps the per-interval data a later comparison with this run needs: all scenarios
// together, each scenario, and its most frequent request names (those a comparison shows),
// then its iteration duration, groups, custom Trends and Counters, as many as fit
// result.MaxStoredSeries. A run's request names
// could run into the hundreds.
func stored(d *result.IntervalData, r *result.Result) *result.IntervalData {
	if d == nil || len(d.Series) == 0 {
		return nil
	}
	keep := map[result.IntervalKey]bool{{Scenario: result.AllScenarios}: true}
	perScenario := judge.TopRequestsCompared
	if n := len(r.Scenarios); n > 0 {
		perScenario = min(perScenario, max(0, (result.MaxStoredSeries-1-n)/n))
	}
	for _, s := range r.Scenarios {
		keep[result.IntervalKey{Scenario: s.Name}] = true
		for i, rr := range s.Requests {
			if i == perScenario {
				break
			}
			keep[result.IntervalKey{Scenario: s.Name, Request: rr.Name}] = true
		}
	}
	// Then each scenario's iteration duration, its groups and Trends (most frequent group
	// first), then its Counters (no histogram: a few hundred bytes each), while the bound
	// allows: a later single-run comparison with this run decides only what it kept.
	for _, s := range r.Scenarios {
		if s.IterationDuration != nil && len(keep) < result.MaxStoredSeries {
			keep[result.IntervalKey{Scenario: s.Name, Iteration: true}] = true
		}
	}
	for _, s := range r.Scenarios {
		for _, g := range s.Groups {
			if len(keep) < result.MaxStoredSeries {
				keep[result.IntervalKey{Scenario: s.Name, Group: g.Name}] = true
			}
		}
		for _, t := range s.Trends {
			if len(keep) < result.MaxStoredSeries {
				keep[result.IntervalKey{Scenario: s.Name, Trend: t.Name}] = true
			}
		}
	}
	for _, k := range scriptIntervalKeys(r) {
		if k.Counter != "" && len(keep) < result.MaxStoredSeries {
			keep[k] = true
		}
	}
	out := &result.IntervalData{StepSeconds: d.StepSeconds, SuccessfulOnly: d.SuccessfulOnly, Workloads: d.Workloads, Routes: d.Routes}
	for _, s := range d.Series {
		if keep[s.Key()] {
			out.Series = append(out.Series, s)
		}
	}
	return out
}
