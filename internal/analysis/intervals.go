package analysis

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	promv1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"
)

// Per-interval data is the input of a single-run comparison: for each interval of the
// measured window, the requests, the failed requests and the latency histogram, for each
// scenario, for all scenarios together, and for each request name. A comparison resamples
// blocks of these intervals (bootstrap.go); the report's charts show their p95, throughput and
// error rate.
//
// Two range queries read every series' cumulative value at each interval boundary; the
// increments and their sums per scenario and request name are computed here. That is exact
// where rate() would extrapolate, and far cheaper: Prometheus 2.42 evaluates rate() over
// native histograms slowly (seconds per query for a few hundred series).

// allScenarios labels the samples of all scenarios together; no scenario can have this name.
const allScenarios = "*"

// intervalKey names a sample series: a scenario (or allScenarios), and a request name, a
// group, a custom Trend or a custom Counter of it, its iteration duration, or none.
type intervalKey struct {
	scenario, request, group, trend string
	iteration                       bool
	counter                         string
}

// IntervalData is a run's per-interval counts and latency histograms: what a later comparison
// needs, kept in results.json so a baseline older than Prometheus' retention can still be
// compared with.
type IntervalData struct {
	// StepSeconds is the length of one interval.
	StepSeconds float64 `json:"stepSeconds"`
	// Series are per scenario ("*" is all scenarios together) and per compared request name.
	Series []IntervalSeries `json:"series"`
	// SuccessfulOnly is true when the latency histograms hold the successful requests only
	// (expected_response not "false"), what comparisons judge; results analysed before perfexp
	// read them so hold all requests. Request and failure counts always cover every request.
	SuccessfulOnly bool `json:"successfulOnly,omitempty"`
	// Workloads are each reported workload's CPU and memory on the same intervals; absent in
	// results analysed before perfexp kept them.
	Workloads []WorkloadIntervals `json:"workloads,omitempty"`
}

// IntervalSeries is one scenario's (or request name's) per-interval data. Interval i of every
// slice is the same interval of the window.
type IntervalSeries struct {
	Scenario string `json:"scenario"`
	Request  string `json:"request,omitempty"`
	// Group or Trend name a k6 group's or custom Trend's series instead: Requests then
	// counts its executions (or values) per interval, Failed is zero, and the histogram is
	// in k6's unit (seconds for a group or time Trend).
	Group string `json:"group,omitempty"`
	Trend string `json:"trend,omitempty"`
	// Iteration names the scenario's iteration_duration series: Requests counts the
	// iterations that ended in each interval, the histogram is in seconds.
	Iteration bool `json:"iteration,omitempty"`
	// Counter names a custom k6 Counter's series (by its script name): Requests holds what the
	// script added to it in each interval (summed over runners and tag sets), Failed is zero
	// and there is no histogram.
	Counter string `json:"counter,omitempty"`
	// Requests and Failed count the requests of each interval.
	Requests []float64 `json:"requests"`
	Failed   []float64 `json:"failed"`
	// Bounds are the latency histogram's buckets ([lower, upper] in seconds) that hold any
	// observation, shared by all intervals; Counts[i][j] is bucket j's count in interval i
	// (trailing zeros dropped), Sums[i] the sum of interval i's latencies in seconds.
	Bounds [][2]float64 `json:"bounds,omitempty"`
	Counts [][]float64  `json:"counts,omitempty"`
	Sums   []float64    `json:"sums,omitempty"`
}

func (d *IntervalData) find(k intervalKey) *IntervalSeries {
	if d == nil {
		return nil
	}
	for i := range d.Series {
		if d.Series[i].key() == k {
			return &d.Series[i]
		}
	}
	return nil
}

func (s *IntervalSeries) key() intervalKey {
	return intervalKey{scenario: s.Scenario, request: s.Request, group: s.Group, trend: s.Trend, iteration: s.Iteration, counter: s.Counter}
}

// histogram is interval i's latency histogram, nil when it had none.
func (s *IntervalSeries) histogram(i int) *Histogram {
	if i >= len(s.Counts) || len(s.Counts[i]) == 0 {
		return nil
	}
	h := NewHistogram()
	for j, c := range s.Counts[i] {
		if c != 0 {
			h.buckets[bucketKey{lower: s.Bounds[j][0], upper: s.Bounds[j][1]}] += c
			h.Count += c
		}
	}
	if i < len(s.Sums) {
		h.Sum = s.Sums[i]
	}
	return h
}

// newIntervalSeries packs per-interval counts and histograms.
func newIntervalSeries(k intervalKey, n int, c *requestCounts, hs []*Histogram) IntervalSeries {
	s := IntervalSeries{Scenario: k.scenario, Request: k.request, Group: k.group, Trend: k.trend, Iteration: k.iteration, Counter: k.counter,
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
func readIntervals(ctx context.Context, q Querier, testID string, scenarios []string, ms, end time.Time, step time.Duration, keep map[intervalKey]bool, successfulOnly bool) (*IntervalData, error) {
	out := &IntervalData{StepSeconds: step.Seconds(), SuccessfulOnly: successfulOnly}
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
		case k.request != "":
			names = append(names, k.request)
		case k.group != "":
			groups = true
		case k.trend != "":
			trendNames = append(trendNames, k.trend)
		case k.iteration:
			iterations = true
		case k.counter != "":
			counters = append(counters, counterMetric(k.counter))
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
		if k.request != "" && keep[k] {
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
	keys := map[intervalKey]bool{}
	for k := range counts {
		keys[k] = true
	}
	for k := range hs {
		keys[k] = true
	}
	for k := range keys {
		out.Series = append(out.Series, newIntervalSeries(k, g.steps-1, counts[k], hs[k]))
	}
	sort.Slice(out.Series, func(i, j int) bool { return out.Series[i].key().less(out.Series[j].key()) })
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
			if i, ok := g.boundary(p.Timestamp); ok && finite(float64(p.Value)) {
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
func scenarioIncrements(sums, irregular model.Matrix, g intervalGrid) map[intervalKey][]*Histogram {
	cum := map[string][]*Histogram{}
	at := func(scenario string) []*Histogram {
		if cum[scenario] == nil {
			cum[scenario] = make([]*Histogram, g.steps)
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
		vals := make([]*Histogram, g.steps)
		for _, p := range ss.Histograms {
			if i, ok := g.boundary(p.Timestamp); ok {
				vals[i] = histogramFromModel(p.Histogram)
			}
		}
		var prev, offset *Histogram
		for i, v := range vals {
			cur := v
			switch {
			case cur == nil:
				cur = prev
			case prev != nil && cur.Count < prev.Count:
				if offset == nil {
					offset = NewHistogram()
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
				row[i] = NewHistogram()
			}
			row[i].Add(fix)
		}
	}
	out := map[intervalKey][]*Histogram{}
	for sc, row := range cum {
		inc := increasesOf(row)
		out[intervalKey{scenario: sc}] = inc
		all := out[intervalKey{scenario: allScenarios}]
		if all == nil {
			all = make([]*Histogram, g.steps-1)
			out[intervalKey{scenario: allScenarios}] = all
		}
		for i, h := range inc {
			if h == nil {
				continue
			}
			if all[i] == nil {
				all[i] = NewHistogram()
			}
			all[i].Add(h)
		}
	}
	return out
}

// intervalGrid is the range queries' grid: steps boundaries, step apart from start, and so
// steps-1 intervals between them.
type intervalGrid struct {
	start time.Time
	step  time.Duration
	steps int
}

// boundary places a sample on the grid; false if it falls outside.
func (g intervalGrid) boundary(ts model.Time) (int, bool) {
	i := int(ts.Time().Sub(g.start) / g.step)
	return i, i >= 0 && i < g.steps
}

// intervalKeys are the sample series a k6 series counts towards: all scenarios together, its
// scenario, and its request name within that scenario.
func intervalKeys(m model.Metric) []intervalKey {
	s := string(m[tagScenario])
	return []intervalKey{{scenario: allScenarios}, {scenario: s}, {scenario: s, request: string(m[tagName])}}
}

// requestCounts are the requests of each interval: all of them, and those that failed.
type requestCounts struct{ all, failed []float64 }

// sumRequestIncrements sums every request counter's per-interval increments into the sample
// series it counts towards.
func sumRequestIncrements(reqs model.Matrix, g intervalGrid) map[intervalKey]*requestCounts {
	perKey := map[intervalKey]*requestCounts{}
	for _, ss := range reqs {
		at := make([]float64, g.steps)
		seen := make([]bool, g.steps)
		for _, p := range ss.Values {
			if i, ok := g.boundary(p.Timestamp); ok && finite(float64(p.Value)) {
				at[i], seen[i] = float64(p.Value), true
			}
		}
		deltas := increments(at, seen, func(a, b float64) (float64, bool) { return b - a, b < a })
		failed := ss.Metric[tagExpectedResponse] == unexpected
		for _, k := range intervalKeys(ss.Metric) {
			c := perKey[k]
			if c == nil {
				c = &requestCounts{all: make([]float64, g.steps-1), failed: make([]float64, g.steps-1)}
				perKey[k] = c
			}
			for i, d := range deltas {
				c.all[i] += d
				if failed {
					c.failed[i] += d
				}
			}
		}
	}
	return perKey
}

// sumHistogramIncrements merges every duration histogram's per-interval increments into the
// sample series it counts towards. An interval no series had a value for stays nil, and a
// sample series no histogram counted towards is absent.
func sumHistogramIncrements(hists model.Matrix, g intervalGrid) map[intervalKey][]*Histogram {
	perKey := map[intervalKey][]*Histogram{}
	for _, ss := range hists {
		for i, d := range histogramIncrements(ss, g) {
			if d == nil {
				continue
			}
			for _, k := range intervalKeys(ss.Metric) {
				addIncrement(perKey, k, i, g, d)
			}
		}
	}
	return perKey
}

// addIncrement adds one series' histogram increment d of interval i to key k's sums.
func addIncrement(perKey map[intervalKey][]*Histogram, k intervalKey, i int, g intervalGrid, d *Histogram) {
	if perKey[k] == nil {
		perKey[k] = make([]*Histogram, g.steps-1)
	}
	if perKey[k][i] == nil {
		perKey[k][i] = NewHistogram()
	}
	perKey[k][i].Add(d)
}

// histogramIncrements is increments for one series' cumulative histograms; nil for the
// intervals before its first value.
func histogramIncrements(ss *model.SampleStream, g intervalGrid) []*Histogram {
	at := make([]*Histogram, g.steps)
	for _, p := range ss.Histograms {
		if i, ok := g.boundary(p.Timestamp); ok {
			at[i] = histogramFromModel(p.Histogram)
		}
	}
	return increasesOf(at)
}

// increasesOf turns cumulative histograms at each boundary into per-interval increments. A
// boundary without a value carries the last one (nothing new within the lookback); a count
// below the previous one is a reset, so all of it is new.
func increasesOf(at []*Histogram) []*Histogram {
	out := make([]*Histogram, len(at)-1)
	var prev *Histogram
	for i, cur := range at {
		if cur == nil {
			cur = prev
		}
		if i > 0 && cur != nil {
			d := cur.Clone()
			if prev != nil && cur.Count >= prev.Count {
				d.Sub(prev)
			}
			out[i-1] = d
		}
		prev = cur
	}
	return out
}

// increments turns a counter's values at each step into per-interval increments. A step
// without a sample carries the last value (nothing new within the lookback); a value below the
// previous one is a reset, so all of it is new.
func increments(at []float64, seen []bool, diff func(a, b float64) (float64, bool)) []float64 {
	out := make([]float64, len(at)-1)
	var prev float64
	for i := range at {
		cur := prev
		if seen[i] {
			cur = at[i]
		}
		if i > 0 {
			d, reset := diff(prev, cur)
			if reset {
				d = cur
			}
			out[i-1] = d
		}
		prev = cur
	}
	return out
}

// timeline keeps the scenario-level per-interval p95, throughput and error rate for the
// report's charts.
func timeline(d *IntervalData, start time.Time, scenarios []string) *Timeline {
	t := &Timeline{Start: start, StepSeconds: d.StepSeconds}
	for _, sc := range append([]string{allScenarios}, scenarios...) {
		s := d.find(intervalKey{scenario: sc})
		if s == nil {
			continue
		}
		ts := TimelineSeries{Scenario: sc}
		for i := range s.Requests {
			var p95, errRate *float64
			if h := s.histogram(i); h != nil {
				if x, ok := h.Quantile(0.95); ok {
					p95 = num(1000 * x)
				}
			}
			if s.Requests[i] > 0 {
				errRate = num(100 * s.Failed[i] / s.Requests[i])
			}
			ts.P95, ts.ErrorRate = append(ts.P95, p95), append(ts.ErrorRate, errRate)
			ts.Rate = append(ts.Rate, num(s.Requests[i]/d.StepSeconds))
		}
		t.Series = append(t.Series, ts)
	}
	if len(t.Series) == 0 {
		return nil
	}
	return t
}

// maxStoredSeries bounds the per-interval series results.json keeps: about 5 KB each, so at
// most a quarter of the report ConfigMap.
const maxStoredSeries = 48

// stored keeps the per-interval data a later comparison with this run needs: all scenarios
// together, each scenario, and its most frequent request names (those a comparison shows),
// then its iteration duration, groups, custom Trends and Counters, as many as fit
// maxStoredSeries. A run's request names
// could run into the hundreds.
func stored(d *IntervalData, r *Result) *IntervalData {
	if d == nil || len(d.Series) == 0 {
		return nil
	}
	keep := map[intervalKey]bool{{scenario: allScenarios}: true}
	perScenario := topRequestsCompared
	if n := len(r.Scenarios); n > 0 {
		perScenario = min(perScenario, max(0, (maxStoredSeries-1-n)/n))
	}
	for _, s := range r.Scenarios {
		keep[intervalKey{scenario: s.Name}] = true
		for i, rr := range s.Requests {
			if i == perScenario {
				break
			}
			keep[intervalKey{scenario: s.Name, request: rr.Name}] = true
		}
	}
	// Then each scenario's iteration duration, its groups and Trends (most frequent group
	// first), then its Counters (no histogram: a few hundred bytes each), while the bound
	// allows: a later single-run comparison with this run decides only what it kept.
	for _, s := range r.Scenarios {
		if s.IterationDuration != nil && len(keep) < maxStoredSeries {
			keep[intervalKey{scenario: s.Name, iteration: true}] = true
		}
	}
	for _, s := range r.Scenarios {
		for _, g := range s.Groups {
			if len(keep) < maxStoredSeries {
				keep[intervalKey{scenario: s.Name, group: g.Name}] = true
			}
		}
		for _, t := range s.Trends {
			if len(keep) < maxStoredSeries {
				keep[intervalKey{scenario: s.Name, trend: t.Name}] = true
			}
		}
	}
	for _, k := range scriptIntervalKeys(r) {
		if k.counter != "" && len(keep) < maxStoredSeries {
			keep[k] = true
		}
	}
	out := &IntervalData{StepSeconds: d.StepSeconds, SuccessfulOnly: d.SuccessfulOnly, Workloads: d.Workloads}
	for _, s := range d.Series {
		if keep[s.key()] {
			out.Series = append(out.Series, s)
		}
	}
	return out
}

// intervalSeriesJSON is IntervalSeries as results.json holds it: every list of numbers as one
// space-separated string, one per interval for the histogram counts. The report is written
// indented, which would put each of a run's thousands of bucket counts on its own line.
type intervalSeriesJSON struct {
	Scenario string   `json:"scenario"`
	Request  string   `json:"request,omitempty"`
	Group    string   `json:"group,omitempty"`
	Trend    string   `json:"trend,omitempty"`
	Iter     bool     `json:"iteration,omitempty"`
	Counter  string   `json:"counter,omitempty"`
	Requests string   `json:"requests"`
	Failed   string   `json:"failed"`
	Bounds   string   `json:"bounds,omitempty"`
	Counts   []string `json:"counts,omitempty"`
	Sums     string   `json:"sums,omitempty"`
}

// MarshalJSON writes the compact form.
func (s IntervalSeries) MarshalJSON() ([]byte, error) {
	w := intervalSeriesJSON{Scenario: s.Scenario, Request: s.Request, Group: s.Group, Trend: s.Trend, Iter: s.Iteration, Counter: s.Counter, Requests: numbers(s.Requests), Failed: numbers(s.Failed), Sums: numbers(s.Sums)}
	flat := make([]float64, 0, 2*len(s.Bounds))
	for _, b := range s.Bounds {
		flat = append(flat, b[0], b[1])
	}
	w.Bounds = numbers(flat)
	if len(s.Counts) > 0 {
		w.Counts = make([]string, len(s.Counts))
		for i, c := range s.Counts {
			w.Counts[i] = numbers(c)
		}
	}
	return json.Marshal(w)
}

// UnmarshalJSON reads the compact form.
func (s *IntervalSeries) UnmarshalJSON(b []byte) error {
	var w intervalSeriesJSON
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	var err error
	out := IntervalSeries{Scenario: w.Scenario, Request: w.Request, Group: w.Group, Trend: w.Trend, Iteration: w.Iter, Counter: w.Counter}
	if out.Requests, err = parseNumbers(w.Requests); err != nil {
		return err
	}
	if out.Failed, err = parseNumbers(w.Failed); err != nil {
		return err
	}
	if out.Sums, err = parseNumbers(w.Sums); err != nil {
		return err
	}
	flat, err := parseNumbers(w.Bounds)
	if err != nil {
		return err
	}
	if len(flat)%2 != 0 {
		return fmt.Errorf("interval series %s/%s: an odd number of bucket bounds", w.Scenario, w.Request)
	}
	for i := 0; i < len(flat); i += 2 {
		out.Bounds = append(out.Bounds, [2]float64{flat[i], flat[i+1]})
	}
	for _, c := range w.Counts {
		row, err := parseNumbers(c)
		if err != nil {
			return err
		}
		if len(row) > len(out.Bounds) {
			return fmt.Errorf("interval series %s/%s: %d counts for %d buckets", w.Scenario, w.Request, len(row), len(out.Bounds))
		}
		out.Counts = append(out.Counts, row)
	}
	*s = out
	return nil
}

// numbers writes floats with the shortest text that reads back the same.
func numbers(vs []float64) string {
	parts := make([]string, len(vs))
	for i, v := range vs {
		parts[i] = strconv.FormatFloat(v, 'g', -1, 64)
	}
	return strings.Join(parts, " ")
}

func parseNumbers(s string) ([]float64, error) {
	fields := strings.Fields(s)
	if len(fields) == 0 {
		return nil, nil
	}
	out := make([]float64, len(fields))
	for i, f := range fields {
		v, err := strconv.ParseFloat(f, 64)
		if err != nil {
			return nil, fmt.Errorf("reading interval data: %w", err)
		}
		out[i] = v
	}
	return out, nil
}
