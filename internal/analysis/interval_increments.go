// Per-interval increments of the cumulative counters and native histograms k6 writes: the
// grid of intervals, and the request counts and latency histograms of each one.

package analysis

import (
	"time"

	"github.com/prometheus/common/model"

	"github.com/perfexp/perfexp/internal/result"
)

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
func intervalKeys(m model.Metric) []result.IntervalKey {
	s := string(m[tagScenario])
	return []result.IntervalKey{{Scenario: result.AllScenarios}, {Scenario: s}, {Scenario: s, Request: string(m[tagName])}}
}

// requestCounts are the requests of each interval: all of them, and those that failed.
type requestCounts struct{ all, failed []float64 }

// sumRequestIncrements sums every request counter's per-interval increments into the sample
// series it counts towards.
func sumRequestIncrements(reqs model.Matrix, g intervalGrid) map[result.IntervalKey]*requestCounts {
	perKey := map[result.IntervalKey]*requestCounts{}
	for _, ss := range reqs {
		at := make([]float64, g.steps)
		seen := make([]bool, g.steps)
		for _, p := range ss.Values {
			if i, ok := g.boundary(p.Timestamp); ok && result.Finite(float64(p.Value)) {
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
func sumHistogramIncrements(hists model.Matrix, g intervalGrid) map[result.IntervalKey][]*result.Histogram {
	perKey := map[result.IntervalKey][]*result.Histogram{}
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
func addIncrement(perKey map[result.IntervalKey][]*result.Histogram, k result.IntervalKey, i int, g intervalGrid, d *result.Histogram) {
	if perKey[k] == nil {
		perKey[k] = make([]*result.Histogram, g.steps-1)
	}
	if perKey[k][i] == nil {
		perKey[k][i] = result.NewHistogram()
	}
	perKey[k][i].Add(d)
}

// histogramIncrements is increments for one series' cumulative histograms; nil for the
// intervals before its first value.
func histogramIncrements(ss *model.SampleStream, g intervalGrid) []*result.Histogram {
	at := make([]*result.Histogram, g.steps)
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
func increasesOf(at []*result.Histogram) []*result.Histogram {
	out := make([]*result.Histogram, len(at)-1)
	var prev *result.Histogram
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
