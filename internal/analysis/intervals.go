package analysis

import (
	"context"
	"fmt"
	"math"
	"time"

	promv1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
)

// Per-interval samples are the input of the significance test: one value per interval of the
// measured window (the p95 of that interval's requests, their mean, the interval's error rate
// and throughput), for each scenario, for all scenarios together, and for each request name.
//
// Two range queries read every series' cumulative value at each interval boundary; the
// increments, their sums per scenario and request name, and the percentiles are computed here.
// That is exact where rate() would extrapolate, and far cheaper: Prometheus 2.42 evaluates
// rate() over native histograms slowly (seconds per query for a few hundred series).

// allScenarios labels the samples of all scenarios together; no scenario can have this name.
const allScenarios = "*"

// intervalKey names a sample series: a scenario (or allScenarios), and a request name or "".
type intervalKey struct{ scenario, request string }

// intervalSamples hold one value per interval, in time order; NaN where an interval had no
// data (no requests), so the samples stay aligned with time.
type intervalSamples map[intervalKey]map[perfexpv1alpha1.ObjectiveMetric][]float64

// present drops the intervals without data.
func present(vs []float64) []float64 {
	out := make([]float64, 0, len(vs))
	for _, v := range vs {
		if finite(v) {
			out = append(out, v)
		}
	}
	return out
}

// intervalLength aims at 20 intervals per window, at least 15 s (three k6 pushes at its default
// 5 s).
func intervalLength(w time.Duration) time.Duration {
	return max((w / 20).Round(time.Second), 15*time.Second)
}

// Both runs of a comparison use the same interval length, since the spread of a per-interval
// percentile depends on how many requests an interval holds.
func readIntervals(ctx context.Context, q Querier, testID string, scenarios []string, ms, end time.Time, step time.Duration) (intervalSamples, error) {
	out := intervalSamples{}
	if end.Sub(ms) < step {
		return out, nil
	}
	sel := fmt.Sprintf("{testid=%s,scenario=~%s}", quote(testID), quote(anyOf(scenarios)))
	r := promv1.Range{Start: ms, End: end, Step: step}
	reqs, err := rangeMatrix(ctx, q, metricRequests+sel, r)
	if err != nil {
		return nil, err
	}
	hists, err := rangeMatrix(ctx, q, metricDuration+sel, r)
	if err != nil {
		return nil, err
	}
	g := intervalGrid{start: ms, step: step, steps: int(end.Sub(ms)/step) + 1}
	out.addRequestRates(sumRequestIncrements(reqs, g), step)
	out.addLatencies(sumHistogramIncrements(hists, g))
	return out, nil
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
		failed := ss.Metric[tagExpectedResponse] == "false"
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
				if perKey[k] == nil {
					perKey[k] = make([]*Histogram, g.steps-1)
				}
				if perKey[k][i] == nil {
					perKey[k][i] = NewHistogram()
				}
				perKey[k][i].Add(d)
			}
		}
	}
	return perKey
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
	out := make([]*Histogram, g.steps-1)
	var prev *Histogram
	for i, cur := range at {
		if cur == nil {
			cur = prev // no sample within the lookback: nothing new, carry the last value
		}
		if i > 0 && cur != nil {
			d := cur.Clone()
			if prev != nil && cur.Count >= prev.Count {
				d.Sub(prev)
			} // else a reset: the new value is all increment
			out[i-1] = d
		}
		prev = cur
	}
	return out
}

func (s intervalSamples) add(k intervalKey, m perfexpv1alpha1.ObjectiveMetric, v float64) {
	if s[k] == nil {
		s[k] = map[perfexpv1alpha1.ObjectiveMetric][]float64{}
	}
	s[k][m] = append(s[k][m], v)
}

// addRequestRates adds each interval's throughput and error rate; the error rate of an
// interval without requests is NaN, not 0.
func (s intervalSamples) addRequestRates(perKey map[intervalKey]*requestCounts, step time.Duration) {
	for k, c := range perKey {
		for i := range c.all {
			s.add(k, perfexpv1alpha1.MetricRate, c.all[i]/step.Seconds())
			errRate := math.NaN()
			if c.all[i] > 0 {
				errRate = 100 * c.failed[i] / c.all[i]
			}
			s.add(k, perfexpv1alpha1.MetricErrorRate, errRate)
		}
	}
}

// intervalQuantiles are the percentiles read from each interval's histogram.
var intervalQuantiles = []struct {
	m perfexpv1alpha1.ObjectiveMetric
	q float64
}{{perfexpv1alpha1.MetricP50, 0.5}, {perfexpv1alpha1.MetricP95, 0.95}, {perfexpv1alpha1.MetricP99, 0.99}}

// addLatencies adds each interval's mean and percentiles in milliseconds; NaN for an interval
// without requests.
func (s intervalSamples) addLatencies(perKey map[intervalKey][]*Histogram) {
	for k, hs := range perKey {
		for _, h := range hs {
			avg := math.NaN()
			if h != nil {
				if m, ok := h.Mean(); ok {
					avg = 1000 * m
				}
			}
			s.add(k, perfexpv1alpha1.MetricAvg, avg)
			for _, p := range intervalQuantiles {
				v := math.NaN()
				if h != nil {
					if x, ok := h.Quantile(p.q); ok {
						v = 1000 * x
					}
				}
				s.add(k, p.m, v)
			}
		}
	}
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

// timeline keeps the scenario-level samples for the report's charts.
func timeline(cur intervalSamples, start time.Time, step time.Duration, scenarios []string) *Timeline {
	t := &Timeline{Start: start, StepSeconds: step.Seconds()}
	ptrs := func(vs []float64) []*float64 {
		out := make([]*float64, len(vs))
		for i, v := range vs {
			out[i] = num(v)
		}
		return out
	}
	for _, s := range append([]string{allScenarios}, scenarios...) {
		m := cur[intervalKey{scenario: s}]
		if m == nil {
			continue
		}
		t.Series = append(t.Series, TimelineSeries{Scenario: s, P95: ptrs(m[perfexpv1alpha1.MetricP95]),
			Rate: ptrs(m[perfexpv1alpha1.MetricRate]), ErrorRate: ptrs(m[perfexpv1alpha1.MetricErrorRate])})
	}
	if len(t.Series) == 0 {
		return nil
	}
	return t
}
