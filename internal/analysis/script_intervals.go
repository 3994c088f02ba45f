package analysis

import (
	"fmt"
	"strings"

	"github.com/prometheus/common/model"

	"github.com/perfexp/perfexp/internal/result"
)

// Per-interval data of a scenario's iterations and of a script's custom Counters: what a
// single-run comparison resamples for their rows (internal/judge/compare_script.go). Both are read by the
// range queries readIntervals makes anyway, so their number stays the same whatever the run's
// length or the number of Counters: the iteration-duration histograms with the request
// names', groups' and Trends' (every series read, as a sum would lose a runner that stopped),
// the Counters with the request counters.

// counterMetric is the series name k6 writes a custom Counter under.
func counterMetric(name string) string { return "k6_" + name + "_total" }

// countersSelector selects the request counters and the named custom Counters.
func countersSelector(sel string, counters []string) string {
	if len(counters) == 0 {
		return metricRequests + sel
	}
	return strings.TrimSuffix(sel, "}") + fmt.Sprintf(",__name__=~%s}", quote(anyOf(append([]string{metricRequests}, counters...))))
}

// splitCounters separates the custom Counters' series from the request counters'.
func splitCounters(m model.Matrix) (reqs, counters model.Matrix) {
	for _, ss := range m {
		if name := string(ss.Metric[model.MetricNameLabel]); name == "" || name == metricRequests {
			reqs = append(reqs, ss)
		} else {
			counters = append(counters, ss)
		}
	}
	return reqs, counters
}

// histogramsOf reads several selectors' histograms in one query. `or` keeps every series of
// both sides unless two have the same labels but their names, which a request's series (its
// name, method and status tags) and a group's, Trend's or iteration's never do.
func histogramsOf(sels []string) string { return strings.Join(sels, " or ") }

// splitNamed separates the request names' histograms from the groups', Trends' and iterations'.
func splitNamed(m model.Matrix) (named, transactions model.Matrix) {
	for _, ss := range m {
		if string(ss.Metric[model.MetricNameLabel]) == metricDuration {
			named = append(named, ss)
		} else {
			transactions = append(transactions, ss)
		}
	}
	return named, transactions
}

// splitIterations separates the iteration-duration series from the groups' and Trends'.
func splitIterations(m model.Matrix) (transactions, iterations model.Matrix) {
	for _, ss := range m {
		if string(ss.Metric[model.MetricNameLabel]) == metricIterationDuration {
			iterations = append(iterations, ss)
		} else {
			transactions = append(transactions, ss)
		}
	}
	return transactions, iterations
}

// iterationIncrements sums the iteration-duration histograms' per-interval increments over
// runners and tag sets, per scenario.
func iterationIncrements(hists model.Matrix, g intervalGrid) map[result.IntervalKey][]*result.Histogram {
	perKey := map[result.IntervalKey][]*result.Histogram{}
	for _, ss := range hists {
		k := result.IntervalKey{Scenario: string(ss.Metric[tagScenario]), Iteration: true}
		for i, d := range histogramIncrements(ss, g) {
			if d != nil {
				addIncrement(perKey, k, i, g, d)
			}
		}
	}
	return perKey
}

// counterIncrements sums the custom Counters' per-interval increments over runners and tag
// sets, per scenario and Counter, as the request counters are summed (a gap carries the last
// value, a drop is a restarted runner).
func counterIncrements(m model.Matrix, g intervalGrid) map[result.IntervalKey]*requestCounts {
	perKey := map[result.IntervalKey]*requestCounts{}
	for _, ss := range m {
		at := make([]float64, g.steps)
		seen := make([]bool, g.steps)
		for _, p := range ss.Values {
			if i, ok := g.boundary(p.Timestamp); ok && result.Finite(float64(p.Value)) {
				at[i], seen[i] = float64(p.Value), true
			}
		}
		k := result.IntervalKey{Scenario: string(ss.Metric[tagScenario]), Counter: customName(string(ss.Metric[model.MetricNameLabel]))}
		c := perKey[k]
		if c == nil {
			c = &requestCounts{all: make([]float64, g.steps-1), failed: make([]float64, g.steps-1)}
			perKey[k] = c
		}
		for i, d := range increments(at, seen, func(a, b float64) (float64, bool) { return b - a, b < a }) {
			c.all[i] += d
		}
	}
	return perKey
}

// scriptIntervalKeys are a result's iteration and Counter series worth reading per interval:
// each scenario's iteration duration, when it has one, and every Counter it reports (the
// report's cap, result.MaxCustomNames, already applies).
func scriptIntervalKeys(r *result.Result) []result.IntervalKey {
	var out []result.IntervalKey
	for _, s := range r.Scenarios {
		if s.IterationDuration != nil {
			out = append(out, result.IntervalKey{Scenario: s.Name, Iteration: true})
		}
		for _, c := range s.Counters {
			out = append(out, result.IntervalKey{Scenario: s.Name, Counter: c.Name})
		}
	}
	return out
}
