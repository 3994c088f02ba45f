package result

import (
	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/text"
)

// GroupResult is one k6 group of a scenario: a transaction (check-out, check-in) of one or
// more requests timed as a whole by k6's group_duration. Durations are in milliseconds.
type GroupResult struct {
	// Name is the group's path without k6's leading "::": "check-out", or "outer::inner" for
	// a group inside another.
	Name string `json:"name"`
	// Count is how many executions of the group ended in the window (exact: the histogram's
	// count).
	Count *int64 `json:"count,omitempty"`
	// Rate is Count per second of the scenario's active span in the window.
	Rate *float64 `json:"rate,omitempty"`
	// The durations: mean (exact), percentiles (within the histogram's bucket bound) and max
	// (the top of the highest bucket, an upper bound).
	Latency
}

// TrendResult is one custom k6 Trend of a scenario (`new Trend('name')` in the script).
type TrendResult struct {
	// Name is the Trend's name in the script; Metric is the Prometheus metric k6 wrote.
	Name   string `json:"name"`
	Metric string `json:"metric"`
	// Unit is "ms" for a time Trend (`new Trend(name, true)`); empty for a Trend of plain
	// numbers, whose values are in the script's own unit.
	Unit string `json:"unit,omitempty"`
	// Count is how many values the script added in the window (exact).
	Count *int64 `json:"count,omitempty"`
	// The distribution, in Unit: mean (exact), percentiles (within the bucket bound) and max
	// (an upper bound). Every tag set (groups included) is summed into one row.
	Latency
}

// Bounds of the groups and Trends per scenario in the experiment's status.
const (
	statusTopGroups = 10
	statusTopTrends = 8
)

// statusGroups are the most frequent groups, bounded for the experiment's status.
func statusGroups(gs []GroupResult) []perfexpv1alpha1.GroupResult {
	var out []perfexpv1alpha1.GroupResult
	for i, g := range gs {
		if i == statusTopGroups {
			break
		}
		out = append(out, perfexpv1alpha1.GroupResult{Name: text.Truncate(g.Name, 256), Count: g.Count, Distribution: statusDistribution(g.Latency)})
	}
	return out
}

// statusTrends are the first custom Trends by name, bounded for the experiment's status.
func statusTrends(ts []TrendResult) []perfexpv1alpha1.TrendResult {
	var out []perfexpv1alpha1.TrendResult
	for i, t := range ts {
		if i == statusTopTrends {
			break
		}
		out = append(out, perfexpv1alpha1.TrendResult{Name: text.Truncate(t.Name, 256), Unit: t.Unit, Count: t.Count, Distribution: statusDistribution(t.Latency)})
	}
	return out
}

// statusDistribution renders a distribution with microsecond resolution for milliseconds
// (three decimals), which keeps plain-number Trends readable too.
func statusDistribution(l Latency) perfexpv1alpha1.Distribution {
	return perfexpv1alpha1.Distribution{Avg: ms(l.Avg), P50: ms(l.P50), P75: ms(l.P75), P90: ms(l.P90), P95: ms(l.P95), Max: ms(l.Max)}
}
