package analysis

import (
	"context"
	"fmt"
	"math"
	"sort"
	"time"

	"github.com/prometheus/common/model"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/result"
)

// k6 metric names as k6's experimental-prometheus-rw output writes them: counters get _total,
// trends written as native histograms (K6_PROMETHEUS_RW_TREND_AS_NATIVE_HISTOGRAM=true) get
// their base unit (seconds), trend stats are gauges named after the stat (p95, avg, max, ...)
// in seconds without a unit suffix.
const (
	metricRequests   = "k6_http_reqs_total"
	metricIterations = "k6_iterations_total"
	// metricDropped is k6's dropped_iterations: iterations an arrival-rate executor could not
	// start (no free VU, or the runner saturated). k6 writes it from the first drop on.
	metricDropped   = "k6_dropped_iterations_total"
	metricDuration  = "k6_http_req_duration_seconds"
	trendStatPrefix = "k6_http_req_duration_"
)

// k6 tags perfexp reads. expected_response is one of k6's default system tags; a request whose
// response was not expected (by default any status outside 200-399) is what http_req_failed
// counts, so errors are the requests tagged expected_response="false".
const (
	tagScenario         = "scenario"
	tagName             = "name"
	tagExpectedResponse = "expected_response"
	// unexpected is expected_response's value on a failed request.
	unexpected = "false"
)

// k6Data holds every k6 series of a run, read at each edge.
type k6Data struct {
	labels     map[string]model.Metric
	iterLabels map[string]model.Metric
	reqs       []map[string]float64
	iters      []map[string]float64
	dropped    []map[string]float64
	dropLabels map[string]model.Metric
	hists      []map[string]*result.Histogram
	// resets counts series with counter resets, mismatched histogram reads that disagreed with
	// their counters; both were re-read sample by sample.
	resets, mismatched int
	// histSeries counts the latency histograms that exist, wherever their samples are.
	histSeries int
}

func readK6(ctx context.Context, q Querier, testID string, from time.Time, edges []time.Time) (*k6Data, error) {
	tid := "testid=" + quote(testID)
	d := &k6Data{labels: map[string]model.Metric{}, iterLabels: map[string]model.Metric{}, dropLabels: map[string]model.Metric{}}
	last := edges[len(edges)-1]
	resetSel := fmt.Sprintf("{__name__=~%s,%s}", quote(metricRequests+"|"+metricIterations), tid)
	var reread map[string]model.Metric
	var exists []model.LabelSet
	// The reads are independent; each gets its own label map (the request counter and its
	// histogram twin share keys, so merging them loses nothing).
	histLabels := map[string]model.Metric{}
	err := together(
		// The histograms are read after the counters: a counter whose histogram is not found
		// at an edge names a series that went quiet.
		func() (err error) {
			if d.reqs, err = floatsAt(ctx, q, metricRequests+"{"+tid+"}", from, edges, d.labels); err != nil {
				return err
			}
			d.hists, err = histogramsAt(ctx, q, metricDuration+"{"+tid+"}", from, edges, histLabels, d.reqs, d.labels)
			return err
		},
		func() (err error) {
			d.iters, err = floatsAt(ctx, q, metricIterations+"{"+tid+"}", from, edges, d.iterLabels)
			return err
		},
		func() (err error) {
			d.dropped, err = floatsAt(ctx, q, metricDropped+"{"+tid+"}", from, edges, d.dropLabels)
			return err
		},
		func() (err error) {
			reread, err = findResets(ctx, q, resetSel, from, last)
			return err
		},
		// A histogram whose count disagrees with its request counter (same labels, one sample
		// each per request), or that exists but was not found at an edge, was not read at its
		// last sample: k6's stale markers (K6_PROMETHEUS_RW_STALE_MARKERS) hide a series from
		// instant queries once its run is over. The index knows which histograms exist (stale
		// markers do not remove a series); the others are read sample by sample too.
		func() (err error) {
			exists, err = seriesIn(ctx, q, metricDuration+"{"+tid+"}", from, last)
			return err
		},
	)
	if err != nil {
		return nil, err
	}
	for k, m := range histLabels {
		d.labels[k] = m
	}
	d.resets = len(reread)
	d.histSeries = len(exists)
	histExists := map[string]bool{}
	for _, ls := range exists {
		histExists[seriesKey(model.Metric(ls))] = true
	}
	for i := range edges {
		for k, v := range d.reqs[i] {
			if !histExists[k] || v <= 0 {
				continue
			}
			if h, ok := d.hists[i][k]; !ok || math.Abs(h.Count-v) > 0.5 {
				if _, already := reread[k]; !already {
					d.mismatched++
				}
				reread[k] = d.labels[k]
			}
		}
	}
	raw, err := readRaw(ctx, q, reread, metricRequests+"|"+metricIterations+"|"+metricDuration, tid, from, last)
	if err != nil {
		return nil, err
	}
	// Re-read series are recomputed from their samples; the histogram twin of a reset request
	// counter (same labels) was reset with it, since one runner writes both.
	for name, series := range raw {
		for k, rs := range series {
			for i, t := range edges {
				switch name {
				case metricRequests:
					if v, ok := rs.floatAt(t); ok {
						d.reqs[i][k] = v
					} else {
						delete(d.reqs[i], k)
					}
				case metricIterations:
					if v, ok := rs.floatAt(t); ok {
						d.iters[i][k] = v
					} else {
						delete(d.iters[i], k)
					}
				case metricDuration:
					if h, ok := rs.histogramAt(t); ok {
						d.hists[i][k] = h
					} else {
						delete(d.hists[i], k)
					}
				}
			}
		}
	}
	return d, nil
}

// hasHistograms reports whether any latency histogram was found.
func (d *k6Data) hasHistograms() bool {
	if d.histSeries > 0 {
		return true
	}
	for _, m := range d.hists {
		if len(m) > 0 {
			return true
		}
	}
	return false
}

type groupKey struct{ scenario, name string }

// agg accumulates the series of one group between two edges.
type agg struct {
	reqs, errs  float64
	series      int
	errLabelled bool
	hist        *result.Histogram
	// okHist holds the latencies of the requests k6 expected (expected_response="true"), when
	// some were not: objectives judge latency on them, since failed requests are often fast.
	okHist     *result.Histogram
	iters      float64
	iterSeries int
	dropped    float64
}

// groupBy maps a series to its group; ok is false for series outside every group.
type groupBy func(m model.Metric) (groupKey, bool)

func byScenario(declared map[string]bool) groupBy {
	return func(m model.Metric) (groupKey, bool) {
		s := string(m[tagScenario])
		return groupKey{scenario: s}, declared[s]
	}
}

func byRequest(declared map[string]bool) groupBy {
	return func(m model.Metric) (groupKey, bool) {
		s := string(m[tagScenario])
		return groupKey{scenario: s, name: string(m[tagName])}, declared[s]
	}
}

func allTogether(declared map[string]bool) groupBy {
	return func(m model.Metric) (groupKey, bool) {
		return groupKey{}, declared[string(m[tagScenario])]
	}
}

// between aggregates what happened between edges a and b.
func (d *k6Data) between(a, b int, by groupBy, iterations bool) map[groupKey]*agg {
	out := map[groupKey]*agg{}
	get := func(g groupKey) *agg {
		if out[g] == nil {
			out[g] = &agg{}
		}
		return out[g]
	}
	for k, vb := range d.reqs[b] {
		m := d.labels[k]
		g, ok := by(m)
		if !ok {
			continue
		}
		delta := vb - d.reqs[a][k]
		ag := get(g)
		ag.series++
		ag.reqs += delta
		if er, ok := m[tagExpectedResponse]; ok {
			ag.errLabelled = true
			if er == unexpected {
				ag.errs += delta
			}
		}
	}
	for k, hb := range d.hists[b] {
		g, ok := by(d.labels[k])
		if !ok {
			continue
		}
		h := hb.Clone()
		h.Sub(d.hists[a][k])
		ag := get(g)
		if ag.hist == nil {
			ag.hist = result.NewHistogram()
		}
		ag.hist.Add(h)
		if d.labels[k][tagExpectedResponse] != unexpected {
			if ag.okHist == nil {
				ag.okHist = result.NewHistogram()
			}
			ag.okHist.Add(h)
		}
	}
	for k, vb := range d.iters[b] {
		if !iterations {
			break
		}
		m := d.iterLabels[k]
		g, ok := by(m)
		if !ok {
			continue
		}
		ag := get(g)
		ag.iters += vb - d.iters[a][k]
		ag.iterSeries++
	}
	for k, vb := range d.dropped[b] {
		if !iterations {
			break
		}
		g, ok := by(d.dropLabels[k])
		if !ok {
			continue
		}
		// A series first written inside the window counted only drops since then.
		get(g).dropped += vb - d.dropped[a][k]
	}
	return out
}

// stats turns an aggregate into request statistics over a window of the given length.
func (a *agg) stats(seconds float64) result.RequestStats {
	var s result.RequestStats
	if a == nil {
		return s
	}
	if a.series > 0 {
		n := int64(math.Round(a.reqs))
		s.Requests = result.Count(n)
		if seconds > 0 {
			s.Rate = result.Num(a.reqs / seconds)
		}
		if a.errLabelled {
			s.Errors = result.Count(int64(math.Round(a.errs)))
			if n > 0 {
				s.ErrorPercent = result.Num(100 * a.errs / a.reqs)
			}
		}
	}
	if a.hist != nil && a.hist.Count > 0 {
		if m, ok := a.hist.Mean(); ok {
			s.Avg = result.Num(m * 1000)
		}
		for _, p := range []struct {
			q   float64
			dst **float64
		}{{0.5, &s.P50}, {0.75, &s.P75}, {0.9, &s.P90}, {0.95, &s.P95}, {0.99, &s.P99}} {
			if v, ok := a.hist.Quantile(p.q); ok {
				*p.dst = result.Num(v * 1000)
			}
		}
		if v, ok := a.hist.MaxBound(); ok {
			s.Max = result.Num(v * 1000)
		}
	}
	if a.errs > 0 && a.okHist != nil && a.okHist.Count > 0 {
		s.Successful = latencyOf(a.okHist)
	}
	return s
}

// latencyOf is a histogram's mean, percentiles and max bound in milliseconds.
func latencyOf(h *result.Histogram) *result.Latency { return distribution(h, 1000) }

// k6Window computes scenario, request and total results between edges a and b. seconds gives
// the active seconds of a scenario in the window ("" for all of them together).
func (d *k6Data) k6Window(a, b int, seconds func(scenario string) float64, scenarios []string) (result.RequestStats, []result.ScenarioResult, []string) {
	declared := map[string]bool{}
	for _, s := range scenarios {
		declared[s] = true
	}
	var notes []string
	total := d.between(a, b, allTogether(declared), true)[groupKey{}]
	perScenario := d.between(a, b, byScenario(declared), true)
	perRequest := d.between(a, b, byRequest(declared), false)
	out := make([]result.ScenarioResult, 0, len(scenarios))
	for _, name := range scenarios {
		ag := perScenario[groupKey{scenario: name}]
		active := seconds(name)
		sr := result.ScenarioResult{Name: name, RequestStats: ag.stats(active), Validity: perfexpv1alpha1.Valid, ActiveSeconds: result.Num(active)}
		if ag != nil && ag.iterSeries > 0 {
			sr.Iterations = result.Count(int64(math.Round(ag.iters)))
			// No dropped-iterations series means none were dropped: k6 writes it from the
			// first drop on.
			sr.DroppedIterations = result.Count(int64(math.Round(ag.dropped)))
			if planned := ag.iters + ag.dropped; planned > 0 {
				sr.DroppedPercent = result.Num(100 * ag.dropped / planned)
			}
		}
		if ag != nil && ag.hist != nil && ag.series > 0 && math.Round(ag.hist.Count) != math.Round(ag.reqs) {
			notes = append(notes, fmt.Sprintf("scenario %s: the latency histogram holds %.0f observations for %.0f requests; percentiles cover only those", name, ag.hist.Count, ag.reqs))
		}
		if ag != nil && ag.hist != nil && !ag.hist.Consistent() {
			notes = append(notes, fmt.Sprintf("scenario %s: the latency histogram decreased; a counter reset went unnoticed", name))
		}
		for g, ra := range perRequest {
			if g.scenario != name {
				continue
			}
			sr.Requests = append(sr.Requests, result.RequestResult{Name: g.name, RequestStats: ra.stats(active)})
		}
		sortRequests(sr.Requests)
		out = append(out, sr)
	}
	return total.stats(seconds("")), out, notes
}

// sortRequests orders request names by count, highest first, then by name.
func sortRequests(rs []result.RequestResult) {
	sort.SliceStable(rs, func(i, j int) bool {
		ci, cj := int64(-1), int64(-1)
		if rs[i].Requests != nil {
			ci = *rs[i].Requests
		}
		if rs[j].Requests != nil {
			cj = *rs[j].Requests
		}
		if ci != cj {
			return ci > cj
		}
		return rs[i].Name < rs[j].Name
	})
}
