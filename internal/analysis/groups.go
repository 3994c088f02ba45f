package analysis

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/prometheus/common/model"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
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

// Bounds of the rows per scenario in the results; the notes say when they were reached.
const (
	maxGroupsPerScenario = 100
)

// Bounds of the groups and Trends per scenario in the experiment's status.
const (
	statusTopGroups = 10
	statusTopTrends = 8
)

// groupName turns k6's group tag into the name people wrote: "::a::b" -> "a::b".
func groupName(tag string) string { return strings.TrimPrefix(tag, "::") }

// trendName is the script's name of a Trend metric and whether it is a time Trend.
func trendName(metric string) (string, bool) {
	n := strings.TrimPrefix(metric, "k6_")
	if strings.HasSuffix(n, secondsSuffix) {
		return strings.TrimSuffix(n, secondsSuffix), true
	}
	return n, false
}

// between sums, per scenario, each group's and each custom Trend's histograms over the window
// between edges a and b: the histogram at b minus the one at a, series by series (a series
// that began inside the window has nothing at a), then summed bucket by bucket over runners
// and tag sets.
func (t *trendData) between(a, b int, declared map[string]bool) (groups, trends map[string]map[string]*Histogram) {
	groups, trends = map[string]map[string]*Histogram{}, map[string]map[string]*Histogram{}
	add := func(into map[string]map[string]*Histogram, scenario, name string, h *Histogram) {
		if into[scenario] == nil {
			into[scenario] = map[string]*Histogram{}
		}
		if into[scenario][name] == nil {
			into[scenario][name] = NewHistogram()
		}
		into[scenario][name].Add(h)
	}
	for k, hb := range t.hists[b] {
		m := t.labels[k]
		scenario := string(m[tagScenario])
		if !declared[scenario] {
			continue
		}
		h := hb.Clone()
		h.Sub(t.hists[a][k])
		name := string(m[model.MetricNameLabel])
		switch {
		case name == metricGroupDuration:
			add(groups, scenario, string(m[tagGroup]), h)
		case slices.Contains(t.names, name):
			add(trends, scenario, name, h)
		}
	}
	return groups, trends
}

// fill sets every scenario's groups and custom Trends between edges a and b, and returns
// notes on what a reader must know (rows left out, a histogram that went down).
func (t *trendData) fill(a, b int, seconds func(scenario string) float64, scenarios []ScenarioResult) []string {
	if t == nil {
		return nil
	}
	declared := map[string]bool{}
	for _, s := range scenarios {
		declared[s.Name] = true
	}
	groups, trends := t.between(a, b, declared)
	var notes []string
	for i := range scenarios {
		sr := &scenarios[i]
		sr.Groups, sr.Trends = nil, nil
		for tag, h := range groups[sr.Name] {
			if !h.consistent() {
				notes = append(notes, fmt.Sprintf("scenario %s: group %s: the duration histogram decreased; a counter reset went unnoticed", sr.Name, groupName(tag)))
			}
			n := math.Round(h.Count)
			if n <= 0 {
				continue
			}
			g := GroupResult{Name: groupName(tag), Count: count(int64(n)), Latency: *distribution(h, 1000)}
			if s := seconds(sr.Name); s > 0 {
				g.Rate = num(h.Count / s)
			}
			sr.Groups = append(sr.Groups, g)
		}
		sortGroups(sr.Groups)
		if len(sr.Groups) > maxGroupsPerScenario {
			notes = append(notes, fmt.Sprintf("scenario %s: %d groups ran; the %d most frequent are reported", sr.Name, len(sr.Groups), maxGroupsPerScenario))
			sr.Groups = sr.Groups[:maxGroupsPerScenario]
		}
		for metric, h := range trends[sr.Name] {
			if !h.consistent() {
				notes = append(notes, fmt.Sprintf("scenario %s: Trend %s: the histogram decreased; a counter reset went unnoticed", sr.Name, metric))
			}
			n := math.Round(h.Count)
			if n <= 0 {
				continue
			}
			name, isTime := trendName(metric)
			tr := TrendResult{Name: name, Metric: metric, Count: count(int64(n))}
			scale := 1.0
			if isTime {
				tr.Unit, scale = "ms", 1000
			}
			tr.Latency = *distribution(h, scale)
			sr.Trends = append(sr.Trends, tr)
		}
		sort.Slice(sr.Trends, func(i, j int) bool { return sr.Trends[i].Name < sr.Trends[j].Name })
	}
	return notes
}

// notes are the caveats of the whole read, for the result's notes.
func (t *trendData) notes() []string {
	if t == nil {
		return nil
	}
	var out []string
	if t.reread > 0 {
		out = append(out, fmt.Sprintf("%d group and Trend histograms were read sample by sample, as the request histograms were", t.reread))
	}
	if len(t.dropped) > 0 {
		out = append(out, fmt.Sprintf("the script wrote %d custom Trends; the first %d by name are reported, left out: %s",
			len(t.names)+len(t.dropped), len(t.names), shortList(t.dropped, 5)))
	}
	return out
}

// distribution is a histogram's mean, percentiles and max bound, multiplied by scale (1000
// turns k6's seconds into milliseconds).
func distribution(h *Histogram, scale float64) *Latency {
	l := &Latency{}
	if m, ok := h.Mean(); ok {
		l.Avg = num(m * scale)
	}
	for _, p := range []struct {
		q   float64
		dst **float64
	}{{0.5, &l.P50}, {0.75, &l.P75}, {0.9, &l.P90}, {0.95, &l.P95}, {0.99, &l.P99}} {
		if v, ok := h.Quantile(p.q); ok {
			*p.dst = num(v * scale)
		}
	}
	if v, ok := h.MaxBound(); ok {
		l.Max = num(v * scale)
	}
	return l
}

// sortGroups orders groups by count, highest first, then by name.
func sortGroups(gs []GroupResult) {
	sort.SliceStable(gs, func(i, j int) bool {
		ci, cj := *gs[i].Count, *gs[j].Count
		if ci != cj {
			return ci > cj
		}
		return gs[i].Name < gs[j].Name
	})
}

// statusGroups are the most frequent groups, bounded for the experiment's status.
func statusGroups(gs []GroupResult) []perfexpv1alpha1.GroupResult {
	var out []perfexpv1alpha1.GroupResult
	for i, g := range gs {
		if i == statusTopGroups {
			break
		}
		out = append(out, perfexpv1alpha1.GroupResult{Name: truncate(g.Name, 256), Count: g.Count, Distribution: statusDistribution(g.Latency)})
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
		out = append(out, perfexpv1alpha1.TrendResult{Name: truncate(t.Name, 256), Unit: t.Unit, Count: t.Count, Distribution: statusDistribution(t.Latency)})
	}
	return out
}

// statusDistribution renders a distribution with microsecond resolution for milliseconds
// (three decimals), which keeps plain-number Trends readable too.
func statusDistribution(l Latency) perfexpv1alpha1.Distribution {
	return perfexpv1alpha1.Distribution{Avg: ms(l.Avg), P50: ms(l.P50), P75: ms(l.P75), P90: ms(l.P90), P95: ms(l.P95), Max: ms(l.Max)}
}

// transactionStats is a scenario's group (group != "") or custom Trend as statistics an
// objective or comparison row can read, with its unit; nil and a reason when the run has none
// by that name.
func transactionStats(r *Result, scenario, group, trend string) (*RequestStats, string, string) {
	s, why := r.scenarioNamed(scenario)
	if s == nil {
		return nil, "", why
	}
	if group != "" {
		var names []string
		for _, g := range s.Groups {
			if g.Name == group {
				return latencyStats(g.Latency), "ms", ""
			}
			names = append(names, g.Name)
		}
		return nil, "", fmt.Sprintf("scenario %s has no group %q in the window (groups: %s)", scenario, group, orNoneList(names))
	}
	var names []string
	for _, t := range s.Trends {
		if t.Name == trend {
			return latencyStats(t.Latency), t.Unit, ""
		}
		names = append(names, t.Name)
	}
	return nil, "", fmt.Sprintf("scenario %s has no custom Trend %q in the window (Trends: %s)", scenario, trend, orNoneList(names))
}

// scenarioNamed is the scenario an objective or comparison row names, or why there is none.
func (r *Result) scenarioNamed(name string) (*ScenarioResult, string) {
	if r == nil {
		return nil, noResults
	}
	for i := range r.Scenarios {
		if r.Scenarios[i].Name == name {
			return &r.Scenarios[i], ""
		}
	}
	return nil, fmt.Sprintf("no scenario %q in the results", name)
}

// noResults is why an objective has no value when there are no results at all.
const noResults = "no results"

func latencyStats(l Latency) *RequestStats {
	return &RequestStats{Avg: l.Avg, P50: l.P50, P75: l.P75, P90: l.P90, P95: l.P95, P99: l.P99, Max: l.Max}
}

func orNoneList(names []string) string {
	if len(names) == 0 {
		return "the run wrote none"
	}
	return shortList(names, 10)
}

// transactionSelector selects the group_duration series (when groups), the iteration_duration
// series (when iterations) and the named custom Trends of a run, time Trends (name_seconds)
// and plain ones alike; "" when none is wanted.
func transactionSelector(sel string, groups bool, trends []string, iterations bool) string {
	var alts []string
	if groups {
		alts = append(alts, metricGroupDuration)
	}
	if iterations {
		alts = append(alts, metricIterationDuration)
	}
	for _, t := range trends {
		alts = append(alts, "k6_"+t+secondsSuffix, "k6_"+t)
	}
	if len(alts) == 0 {
		return ""
	}
	slices.Sort(alts)
	return strings.TrimSuffix(sel, "}") + fmt.Sprintf(",__name__=~%s}", quote(anyOf(alts)))
}

// transactionIncrements sums each group's and custom Trend's per-interval histogram increments
// over runners and tag sets, per scenario, the way request names are summed.
func transactionIncrements(hists model.Matrix, g intervalGrid) map[intervalKey][]*Histogram {
	perKey := map[intervalKey][]*Histogram{}
	for _, ss := range hists {
		k := intervalKey{scenario: string(ss.Metric[tagScenario])}
		if name := string(ss.Metric[model.MetricNameLabel]); name == metricGroupDuration {
			k.group = groupName(string(ss.Metric[tagGroup]))
		} else {
			k.trend, _ = trendName(name)
		}
		for i, d := range histogramIncrements(ss, g) {
			if d == nil {
				continue
			}
			addIncrement(perKey, k, i, g, d)
		}
	}
	return perKey
}

// executions counts a group's executions (a Trend's values) per interval from its
// histograms: what the comparison's "intervals with requests" counts for it.
func executions(hs []*Histogram, n int) *requestCounts {
	c := &requestCounts{all: make([]float64, n), failed: make([]float64, n)}
	for i, h := range hs {
		if i < n && h != nil {
			c.all[i] = h.Count
		}
	}
	return c
}
