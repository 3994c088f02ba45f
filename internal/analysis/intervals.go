package analysis

import (
	"context"
	"fmt"
	"sort"
	"time"

	promv1 "github.com/prometheus/client_golang/api/prometheus/v1"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
)

// Per-interval samples are the input of the significance test: one value per interval of the
// measured window (the p95 of that interval's requests, their mean, the interval's error rate
// and throughput), for each scenario, for all scenarios together, and for each request name.
// Interval quantiles come from rate() of the native histograms, which scales a histogram
// without changing its shape, so they need no exact edges.

// allScenarios labels the samples of all scenarios together; no scenario can have this name.
const allScenarios = "*"

// intervalKey names a sample series: a scenario (or allScenarios), and a request name or "".
type intervalKey struct{ scenario, request string }

type intervalSamples map[intervalKey]map[perfexpv1alpha1.ObjectiveMetric][]float64

// intervalLength aims at 20 intervals per window, at least 15 s (three k6 pushes at its default
// 5 s) and at most 5 minutes.
func intervalLength(w time.Duration) time.Duration {
	i := (w / 20).Round(time.Second)
	return min(max(i, 15*time.Second), 5*time.Minute)
}

// readIntervals makes a fixed number of range queries, whatever the number of scenarios and
// request names.
// Both runs of a comparison use the same interval length, since the spread of a per-interval
// percentile depends on how many requests an interval holds.
func readIntervals(ctx context.Context, q Querier, testID string, scenarios []string, ms, end time.Time, step time.Duration) (intervalSamples, error) {
	out := intervalSamples{}
	if end.Sub(ms) < step {
		return out, nil
	}
	sel := fmt.Sprintf("testid=%s,scenario=~%s", quote(testID), quote(anyOf(scenarios)))
	i := promDuration(step)
	reqs := fmt.Sprintf("rate(%s{%s}[%s])", metricRequests, sel, i)
	failed := fmt.Sprintf("rate(%s{%s,%s=\"false\"}[%s])", metricRequests, sel, tagExpectedResponse, i)
	hist := fmt.Sprintf("rate(%s{%s}[%s])", metricDuration, sel, i)
	// withAll adds the all-scenarios series to a per-scenario expression.
	withAll := func(f func(by string) string) string {
		return fmt.Sprintf("%s or label_replace(%s, \"scenario\", %s, \"\", \"\")", f("sum by (scenario)"), f("sum"), quote(allScenarios))
	}
	type iq struct {
		metric  perfexpv1alpha1.ObjectiveMetric
		query   string
		request bool
	}
	queries := []iq{
		{perfexpv1alpha1.MetricRate, withAll(func(by string) string { return fmt.Sprintf("%s (%s)", by, reqs) }), false},
		{perfexpv1alpha1.MetricErrorRate, withAll(func(by string) string {
			return fmt.Sprintf("100 * (%s (%s) or 0 * %s (%s)) / %s (%s)", by, failed, by, reqs, by, reqs)
		}), false},
		{perfexpv1alpha1.MetricAvg, withAll(func(by string) string {
			return fmt.Sprintf("1000 * histogram_sum(%s (%s)) / histogram_count(%s (%s))", by, hist, by, hist)
		}), false},
		{perfexpv1alpha1.MetricAvg, fmt.Sprintf("1000 * histogram_sum(sum by (scenario, name) (%s)) / histogram_count(sum by (scenario, name) (%s))", hist, hist), true},
		{perfexpv1alpha1.MetricP95, fmt.Sprintf("1000 * histogram_quantile(0.95, sum by (scenario, name) (%s))", hist), true},
	}
	for _, p := range []struct {
		m perfexpv1alpha1.ObjectiveMetric
		q string
	}{{perfexpv1alpha1.MetricP50, "0.5"}, {perfexpv1alpha1.MetricP95, "0.95"}, {perfexpv1alpha1.MetricP99, "0.99"}} {
		queries = append(queries, iq{p.m, withAll(func(by string) string {
			return fmt.Sprintf("1000 * histogram_quantile(%s, %s (%s))", p.q, by, hist)
		}), false})
	}
	r := promv1.Range{Start: ms.Add(step), End: end, Step: step}
	for _, x := range queries {
		m, err := rangeMatrix(ctx, q, x.query, r)
		if err != nil {
			return nil, err
		}
		for _, ss := range m {
			k := intervalKey{scenario: string(ss.Metric[tagScenario])}
			if x.request {
				k.request = string(ss.Metric[tagName])
			}
			vals := make([]float64, 0, len(ss.Values))
			sort.Slice(ss.Values, func(a, b int) bool { return ss.Values[a].Timestamp < ss.Values[b].Timestamp })
			for _, p := range ss.Values {
				if v := float64(p.Value); finite(v) {
					vals = append(vals, v)
				}
			}
			if out[k] == nil {
				out[k] = map[perfexpv1alpha1.ObjectiveMetric][]float64{}
			}
			out[k][x.metric] = vals
		}
	}
	return out, nil
}
