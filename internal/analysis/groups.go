package analysis

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/prometheus/common/model"

	"github.com/perfexp/perfexp/internal/result"
)

// Bounds of the rows per scenario in the results; the notes say when they were reached.
const (
	maxGroupsPerScenario = 100
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
func (t *trendData) between(a, b int, declared map[string]bool) (groups, trends map[string]map[string]*result.Histogram) {
	groups, trends = map[string]map[string]*result.Histogram{}, map[string]map[string]*result.Histogram{}
	add := func(into map[string]map[string]*result.Histogram, scenario, name string, h *result.Histogram) {
		if into[scenario] == nil {
			into[scenario] = map[string]*result.Histogram{}
		}
		if into[scenario][name] == nil {
			into[scenario][name] = result.NewHistogram()
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
func (t *trendData) fill(a, b int, seconds func(scenario string) float64, scenarios []result.ScenarioResult) []string {
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
			if !h.Consistent() {
				notes = append(notes, fmt.Sprintf("scenario %s: group %s: the duration histogram decreased; a counter reset went unnoticed", sr.Name, groupName(tag)))
			}
			n := math.Round(h.Count)
			if n <= 0 {
				continue
			}
			g := result.GroupResult{Name: groupName(tag), Count: result.Count(int64(n)), Latency: *distribution(h, 1000)}
			if s := seconds(sr.Name); s > 0 {
				g.Rate = result.Num(h.Count / s)
			}
			sr.Groups = append(sr.Groups, g)
		}
		sortGroups(sr.Groups)
		if len(sr.Groups) > maxGroupsPerScenario {
			notes = append(notes, fmt.Sprintf("scenario %s: %d groups ran; the %d most frequent are reported", sr.Name, len(sr.Groups), maxGroupsPerScenario))
			sr.Groups = sr.Groups[:maxGroupsPerScenario]
		}
		for metric, h := range trends[sr.Name] {
			if !h.Consistent() {
				notes = append(notes, fmt.Sprintf("scenario %s: Trend %s: the histogram decreased; a counter reset went unnoticed", sr.Name, metric))
			}
			n := math.Round(h.Count)
			if n <= 0 {
				continue
			}
			name, isTime := trendName(metric)
			tr := result.TrendResult{Name: name, Metric: metric, Count: result.Count(int64(n))}
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
			len(t.names)+len(t.dropped), len(t.names), result.ShortList(t.dropped, 5)))
	}
	return out
}

// distribution is a histogram's mean, percentiles and max bound, multiplied by scale (1000
// turns k6's seconds into milliseconds).
func distribution(h *result.Histogram, scale float64) *result.Latency {
	l := &result.Latency{}
	if m, ok := h.Mean(); ok {
		l.Avg = result.Num(m * scale)
	}
	for _, p := range []struct {
		q   float64
		dst **float64
	}{{0.5, &l.P50}, {0.75, &l.P75}, {0.9, &l.P90}, {0.95, &l.P95}, {0.99, &l.P99}} {
		if v, ok := h.Quantile(p.q); ok {
			*p.dst = result.Num(v * scale)
		}
	}
	if v, ok := h.MaxBound(); ok {
		l.Max = result.Num(v * scale)
	}
	return l
}

// sortGroups orders groups by count, highest first, then by name.
func sortGroups(gs []result.GroupResult) {
	sort.SliceStable(gs, func(i, j int) bool {
		ci, cj := *gs[i].Count, *gs[j].Count
		if ci != cj {
			return ci > cj
		}
		return gs[i].Name < gs[j].Name
	})
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
func transactionIncrements(hists model.Matrix, g intervalGrid) map[result.IntervalKey][]*result.Histogram {
	perKey := map[result.IntervalKey][]*result.Histogram{}
	for _, ss := range hists {
		k := result.IntervalKey{Scenario: string(ss.Metric[tagScenario])}
		if name := string(ss.Metric[model.MetricNameLabel]); name == metricGroupDuration {
			k.Group = groupName(string(ss.Metric[tagGroup]))
		} else {
			k.Trend, _ = trendName(name)
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
func executions(hs []*result.Histogram, n int) *requestCounts {
	c := &requestCounts{all: make([]float64, n), failed: make([]float64, n)}
	for i, h := range hs {
		if i < n && h != nil {
			c.all[i] = h.Count
		}
	}
	return c
}
