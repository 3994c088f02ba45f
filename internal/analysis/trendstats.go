package analysis

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/prometheus/common/model"

	"github.com/perfexp/perfexp/internal/result"
)

// Trend stats are the labelled fallback when k6 wrote no native histograms (it was run without
// K6_PROMETHEUS_RW_TREND_AS_NATIVE_HISTOGRAM=true). They are gauges each runner computes over
// its own whole run, so they cannot be merged across runners nor have the warm-up removed:
//   - avg is exact: the runners' averages weighted by their request counts;
//   - max is exact: the largest of the runners' maxima;
//   - a percentile of one series is k6's own; of several it is the largest of theirs, an upper
//     bound (a percentile of a mixture never exceeds its components' largest).
var trendStats = map[string]func(*result.RequestStats) **float64{
	trendAvg: func(s *result.RequestStats) **float64 { return &s.Avg },
	trendMax: func(s *result.RequestStats) **float64 { return &s.Max },
	trendMed: func(s *result.RequestStats) **float64 { return &s.P50 },
	"p50":    func(s *result.RequestStats) **float64 { return &s.P50 },
	"p75":    func(s *result.RequestStats) **float64 { return &s.P75 },
	"p90":    func(s *result.RequestStats) **float64 { return &s.P90 },
	"p95":    func(s *result.RequestStats) **float64 { return &s.P95 },
	"p99":    func(s *result.RequestStats) **float64 { return &s.P99 },
}

// The trend stats applyTrendStats treats apart: avg is weighted by request counts, max is exact
// across runners (never a bound), and med only stands in for p50 where p50 is missing.
const (
	trendAvg = "avg"
	trendMax = "max"
	trendMed = "med"
)

// trendOrder fixes the query order (and so the query count).
var trendOrder = []string{trendAvg, trendMax, trendMed, "p50", "p75", "p90", "p95", "p99"}

// readTrendStats reads each stat's last value per series: one query per stat, floats, so
// last_over_time works.
func readTrendStats(ctx context.Context, q Querier, testID string, from, at time.Time, labels map[string]model.Metric) (map[string]map[string]float64, error) {
	out := map[string]map[string]float64{}
	for _, stat := range trendOrder {
		query := fmt.Sprintf("last_over_time(%s%s{testid=%s}[%s])", trendStatPrefix, stat, quote(testID), promDuration(at.Sub(from)))
		vec, err := vector(ctx, q, query, at)
		if err != nil {
			return nil, err
		}
		for _, s := range vec {
			if v := float64(s.Value); s.Histogram == nil && result.Finite(v) {
				if out[stat] == nil {
					out[stat] = map[string]float64{}
				}
				k := seriesKey(s.Metric)
				if _, ok := labels[k]; !ok {
					labels[k] = withoutName(s.Metric)
				}
				out[stat][k] = v
			}
		}
	}
	return out, nil
}

// applyTrendStats fills latencies from trend stats, per scenario, per request name and for all
// scenarios together. counts are each series' request counts at the end, the avg's weights.
// It reports whether any latency was found and whether some percentile is a bound.
func applyTrendStats(r *result.Result, stats map[string]map[string]float64, labels map[string]model.Metric, counts map[string]float64, declared map[string]bool) (found, bounded bool) {
	fill := func(dst *result.RequestStats, match func(m model.Metric) bool) {
		for _, stat := range trendOrder {
			var vals []float64
			var weighted, weight float64
			for k, v := range stats[stat] {
				m := labels[k]
				if !declared[string(m[tagScenario])] || !match(m) {
					continue
				}
				vals = append(vals, v)
				weighted += v * counts[k]
				weight += counts[k]
			}
			if len(vals) == 0 {
				continue
			}
			var v float64
			switch stat {
			case trendAvg:
				if weight == 0 {
					continue
				}
				v = weighted / weight
			default:
				v = math.Inf(-1)
				for _, x := range vals {
					v = math.Max(v, x)
				}
				if stat != trendMax && len(vals) > 1 {
					bounded = true
					dst.PercentilesUpperBound = true
				}
			}
			p := trendStats[stat](dst)
			if *p == nil || stat != trendMed {
				*p = result.Num(1000 * v)
			}
			found = true
		}
	}
	fill(&r.Total, func(model.Metric) bool { return true })
	for i := range r.Scenarios {
		s := &r.Scenarios[i]
		fill(&s.RequestStats, func(m model.Metric) bool { return string(m[tagScenario]) == s.Name })
		for j := range s.Requests {
			rr := &s.Requests[j]
			fill(&rr.RequestStats, func(m model.Metric) bool {
				return string(m[tagScenario]) == s.Name && string(m[tagName]) == rr.Name
			})
		}
	}
	return found, bounded
}
