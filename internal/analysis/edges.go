package analysis

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/prometheus/common/model"

	"github.com/perfexp/perfexp/internal/result"
)

// Reading cumulative series at the edges of a window.
//
// A cumulative series (a counter or a native histogram) holds, at time t, everything observed up
// to t. What happened between two edges a < b is value(b) - value(a), where value(t) is the
// series' last sample at or before t (none: 0). Three facts of k6's remote-write output and of
// Prometheus shape how value(t) is read:
//
//  1. k6 sends a series only when it got new samples, so its last sample may lie long before t.
//     An instant query sees only 5 minutes back (the lookback delta). For floats,
//     max_over_time over a range reaching back before the run gives the last value exactly
//     (counters only grow). For native histograms Prometheus 2.42 has no such function
//     (last_over_time returns a float 0 for them; 3.x has it, but one set of queries serves
//     both), so the histogram's last sample is found with a subquery: at every 4-minute
//     step, `x offset 4m unless x` yields the series whose samples stopped for at least the
//     lookback, with their last value. Together with instant queries of `x` and `x offset 4m`
//     at t, every series' last sample before t is among the candidates, and because the
//     histogram only grows, the candidate with the largest count is the last one. This needs a lookback delta of at least 4 minutes (the default is 5). The
//     offset query and the subquery are asked only for the request names whose counter (read
//     first) has no histogram in the lookback at t.
//     Prometheus 3 made the lookback and ranges left-open: a sample exactly 5 minutes before
//     the evaluation time is no longer seen (2.x saw it). The cover holds under either rule: at
//     t, `x` and `x offset 4m` see (t-5m, t] and (t-9m, t-4m] (3.x; closed intervals on 2.x);
//     a subquery step s yields a last sample L with L in (s-9m, s-5m] (3.x) or [s-9m, s-5m)
//     (2.x), an interval as long as the step, so exactly one step finds it.
//     TestCraftedEdgesOnLookbackAndSubqueryBoundaries puts last samples on each boundary.
//  2. A restarted runner starts its counters again from zero (a counter reset). resets() finds
//     such series; they are then read sample by sample and their value at t is the sum of the
//     peaks before each reset plus the last value.
//  3. Every query is evaluated at fixed timestamps: the window's edges.

// subqueryStep must stay below Prometheus' lookback delta (5 minutes by default).
const subqueryStep = 4 * time.Minute

// seriesKey identifies a series without its metric name.
func seriesKey(m model.Metric) string {
	c := m.Clone()
	delete(c, model.MetricNameLabel)
	return c.String()
}

func withoutName(m model.Metric) model.Metric {
	c := m.Clone()
	delete(c, model.MetricNameLabel)
	return c
}

// floatsAt reads a counter's value per series at each edge: max_over_time over a range that
// starts at from. One query per edge.
func floatsAt(ctx context.Context, q Querier, selector string, from time.Time, edges []time.Time, labels map[string]model.Metric) ([]map[string]float64, error) {
	out := make([]map[string]float64, len(edges))
	for i, t := range edges {
		query := fmt.Sprintf("max_over_time(%s[%s])", selector, promDuration(t.Sub(from)))
		vec, err := vector(ctx, q, query, t)
		if err != nil {
			return nil, err
		}
		out[i] = map[string]float64{}
		for _, s := range vec {
			if s.Histogram != nil || !result.Finite(float64(s.Value)) {
				continue
			}
			k := seriesKey(s.Metric)
			labels[k] = withoutName(s.Metric)
			out[i][k] = float64(s.Value)
		}
	}
	return out, nil
}

// histogramsAt reads a native histogram per series at each edge (see the comment at the top).
// One instant query per edge finds every histogram with a sample in the lookback. A request
// counter at the edge (reqs, read with max_over_time, which finds series that stopped long
// ago) whose histogram twin was not found names the series that went quiet: only for their
// request names, two more queries find their last samples. Decoding every histogram at every
// step of a subquery is the costliest thing an analysis could ask of Prometheus, and most runs
// need none of it.
func histogramsAt(ctx context.Context, q Querier, selector string, from time.Time, edges []time.Time, labels map[string]model.Metric,
	reqs []map[string]float64, reqLabels map[string]model.Metric) ([]map[string]*result.Histogram, error) {
	out := make([]map[string]*result.Histogram, len(edges))
	off := promDuration(subqueryStep)
	for i, t := range edges {
		best := map[string]*result.Histogram{}
		consider := func(m model.Metric, h *model.SampleHistogram) {
			if h == nil {
				return
			}
			k := seriesKey(m)
			labels[k] = withoutName(m)
			if cur, ok := best[k]; !ok || float64(h.Count) > cur.Count {
				best[k] = histogramFromModel(h)
			}
		}
		vec, err := vector(ctx, q, selector, t)
		if err != nil {
			return nil, err
		}
		for _, s := range vec {
			consider(s.Metric, s.Histogram)
		}
		var quiet []string
		for k, v := range reqs[i] {
			if _, ok := best[k]; !ok && v > 0 {
				quiet = append(quiet, string(reqLabels[k][tagName]))
			}
		}
		if len(quiet) > 0 {
			narrow := withNames(selector, quiet)
			recent := fmt.Sprintf("%s offset %s", narrow, off)
			if vec, err = vector(ctx, q, recent, t); err != nil {
				return nil, err
			}
			for _, s := range vec {
				consider(s.Metric, s.Histogram)
			}
			rng := t.Sub(from) + subqueryStep
			stopped := fmt.Sprintf("(%s offset %s unless %s)[%s:%s]", narrow, off, narrow, promDuration(rng), off)
			m, err := matrix(ctx, q, stopped, t)
			if err != nil {
				return nil, err
			}
			for _, ss := range m {
				for _, p := range ss.Histograms {
					consider(ss.Metric, p.Histogram)
				}
			}
		}
		out[i] = best
	}
	return out, nil
}

// rawSeries is one series' samples, read in full.
type rawSeries struct {
	name   string
	floats []model.SamplePair
	hists  []model.SampleHistogramPair
}

// findResets returns the series of the selector whose counters were reset between from and
// until, by key, with their labels.
func findResets(ctx context.Context, q Querier, selector string, from, until time.Time) (map[string]model.Metric, error) {
	vec, err := vector(ctx, q, fmt.Sprintf("resets(%s[%s]) > 0", selector, promDuration(until.Sub(from))), until)
	if err != nil {
		return nil, err
	}
	out := map[string]model.Metric{}
	for _, s := range vec {
		out[seriesKey(s.Metric)] = withoutName(s.Metric)
	}
	return out, nil
}

// readRaw reads every sample of the given series (by key, for the given metric names) between
// from and until, in one query. The matchers narrow the read to the scenarios and request names
// involved; the exact series are picked here.
func readRaw(ctx context.Context, q Querier, series map[string]model.Metric, rawMetrics, testIDMatcher string, from, until time.Time) (map[string]map[string]*rawSeries, error) {
	if len(series) == 0 {
		return nil, nil
	}
	narrow := map[model.LabelName]map[string]bool{"scenario": {}, "name": {}}
	for _, m := range series {
		for ln := range narrow {
			narrow[ln][string(m[ln])] = true
		}
	}
	matchers := []string{fmt.Sprintf("__name__=~%s", quote(rawMetrics)), testIDMatcher}
	for _, ln := range []model.LabelName{"scenario", "name"} {
		var vs []string
		for v := range narrow[ln] {
			vs = append(vs, v)
		}
		sort.Strings(vs)
		// An empty alternative also matches series without the label (iterations have no name).
		matchers = append(matchers, fmt.Sprintf("%s=~%s", ln, quote(anyOf(vs))))
	}
	raw, err := matrix(ctx, q, fmt.Sprintf("{%s}[%s]", strings.Join(matchers, ","), promDuration(until.Sub(from))), until)
	if err != nil {
		return nil, err
	}
	out := map[string]map[string]*rawSeries{}
	for _, ss := range raw {
		k := seriesKey(ss.Metric)
		if _, ok := series[k]; !ok {
			continue
		}
		name := string(ss.Metric[model.MetricNameLabel])
		if out[name] == nil {
			out[name] = map[string]*rawSeries{}
		}
		out[name][k] = &rawSeries{name: name, floats: ss.Values, hists: ss.Histograms}
	}
	return out, nil
}

// floatAt is a reset counter's value at t: the peaks before each reset plus the last value.
func (r *rawSeries) floatAt(t time.Time) (float64, bool) {
	var acc, last float64
	seen := false
	for _, p := range r.floats {
		if p.Timestamp.Time().After(t) {
			break
		}
		v := float64(p.Value)
		if !result.Finite(v) {
			continue
		}
		if seen && v < last {
			acc += last
		}
		last, seen = v, true
	}
	return acc + last, seen
}

// histogramAt is a reset histogram's value at t, as floatAt.
func (r *rawSeries) histogramAt(t time.Time) (*result.Histogram, bool) {
	acc := result.NewHistogram()
	var last *result.Histogram
	for _, p := range r.hists {
		if p.Timestamp.Time().After(t) {
			break
		}
		h := histogramFromModel(p.Histogram)
		if last != nil && h.Count < last.Count {
			acc.Add(last)
		}
		last = h
	}
	if last == nil {
		return nil, false
	}
	acc.Add(last)
	return acc, true
}
