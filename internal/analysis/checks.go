package analysis

import (
	"context"
	"fmt"
	"maps"
	"math"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/prometheus/common/model"

	"github.com/perfexp/perfexp/internal/result"
)

// k6 checks, custom Counters and custom Rates.
//
// k6 v1.8's experimental-prometheus-rw output writes a Counter as k6_<name>_total, the running
// sum since the runner began, and a Rate as k6_<name>_rate, a gauge holding the share of
// non-zero values since the runner began (RateSink's Trues/Total) with no count next to it
// (internal/output/prometheusrw/remotewrite, MapPrompb). So:
//   - a Counter is read like the request counter: its value at each window edge, the edges'
//     difference per series (warm-up subtracted), summed over runners and tag sets. Exact.
//   - a Rate (checks included) cannot be turned into passes and fails in the window: the
//     ratio has no denominator. What is exact is each series' ratio at the window's end and
//     whether it is below 1 (a fail happened on that runner, since it began: warm-up
//     included). The report gives, per check, the lowest ratio among runners and tag sets.
//
// Both kinds come from one instant query per edge (last_over_time over every k6_*_total and
// k6_*_rate series of the test), whatever the number of checks or metrics. A Gauge (k6_<name>,
// the value at each push) takes two queries in all: one finds the Gauges, one reads their
// samples.
const (
	metricChecks = "k6_checks_rate"
	tagCheck     = "check"
)

// builtinCounterRatePrefixes are k6's own Counters and Rates: a custom one is any other
// k6_*_total or k6_*_rate series. checks is read on its own.
// notGauge matches the k6 metrics that are not a script's Gauge: Counters, Rates, and k6's
// own (vus, and the trend-stat gauges of its built-in Trends).
const notGauge = ".+_total|.+_rate|k6_http_req_.+|k6_iteration_duration.*|k6_group_duration.*|k6_vus.*|k6_data_.+|k6_ws_.+|k6_grpc_.+|k6_browser_.+"

var builtinCounterRatePrefixes = []string{
	"k6_http_req", "k6_iterations_", "k6_dropped_iterations_", "k6_data_", "k6_checks_", "k6_ws_", "k6_grpc_", "k6_browser_",
}

// customData holds every check, Counter and Rate series of a run at each edge, by the full
// metric (name included).
type customData struct {
	labels map[string]model.Metric
	values []map[string]float64
	// gauges are every Gauge series' samples; edges the edges' times.
	gauges map[string][]model.SamplePair
	edges  []time.Time
	// dropped are the custom names left out by the cap.
	dropped []string
	names   map[string]bool
}

// customKind says what a k6 metric name is: "check", "counter", "rate", or "" for k6's own.
func customKind(name string) string {
	if name == metricChecks {
		return result.KindCheck
	}
	for _, p := range builtinCounterRatePrefixes {
		if strings.HasPrefix(name, p) {
			return ""
		}
	}
	switch {
	case !strings.HasPrefix(name, "k6_"):
		return ""
	case strings.HasSuffix(name, "_total"):
		return result.KindCounter
	case strings.HasSuffix(name, "_rate"):
		return result.KindRate
	}
	return ""
}

// customName is the script's name of a Counter or Rate metric.
func customName(metric string) string {
	n := strings.TrimPrefix(metric, "k6_")
	return strings.TrimSuffix(strings.TrimSuffix(n, "_total"), "_rate")
}

// readCustom reads the checks, custom Counters and Rates of the declared scenarios at the edges.
func readCustom(ctx context.Context, q Querier, testID string, scenarios []string, from time.Time, edges []time.Time) (*customData, error) {
	d := &customData{labels: map[string]model.Metric{}, values: make([]map[string]float64, len(edges)), names: map[string]bool{},
		gauges: map[string][]model.SamplePair{}, edges: edges}
	for i := range edges {
		d.values[i] = map[string]float64{}
	}
	if len(scenarios) == 0 {
		return d, nil
	}
	sel := fmt.Sprintf(`{__name__=~"k6_.+_total|k6_.+_rate",testid=%s,%s=~%s}`, quote(testID), tagScenario, quote(anyOf(scenarios)))
	seen := map[string]bool{}
	for i, t := range edges {
		vec, err := vector(ctx, q, fmt.Sprintf("last_over_time(%s[%s])", sel, promDuration(t.Sub(from))), t)
		if err != nil {
			return nil, err
		}
		for _, s := range vec {
			name := string(s.Metric[model.MetricNameLabel])
			kind := customKind(name)
			if kind == "" || s.Histogram != nil || !result.Finite(float64(s.Value)) {
				continue
			}
			if kind != result.KindCheck {
				seen[name] = true
			}
			k := s.Metric.String()
			d.labels[k] = s.Metric
			d.values[i][k] = float64(s.Value)
		}
	}
	// Gauges: the float series among the k6_* names that are not Counters, Rates or k6's own,
	// found with one query at the last edge (native histograms, the custom Trends, are
	// dropped), then every sample of them read in one more: min and max over a window need
	// each sample, and a range function over several names would drop the names.
	last := edges[len(edges)-1]
	gsel := fmt.Sprintf(`{__name__=~"k6_.+",__name__!~%s,testid=%s,%s=~%s}`, quote(notGauge), quote(testID), tagScenario, quote(anyOf(scenarios)))
	vec, err := vector(ctx, q, fmt.Sprintf("last_over_time(%s[%s])", gsel, promDuration(last.Sub(from))), last)
	if err != nil {
		return nil, err
	}
	gauges := map[string]bool{}
	for _, s := range vec {
		if s.Histogram == nil {
			gauges[string(s.Metric[model.MetricNameLabel])] = true
		}
	}
	if len(gauges) > 0 {
		raw := fmt.Sprintf(`{__name__=~%s,testid=%s,%s=~%s}[%s]`, quote(anyOf(slices.Collect(maps.Keys(gauges)))), quote(testID), tagScenario, quote(anyOf(scenarios)), promDuration(last.Sub(from)))
		m, err := matrix(ctx, q, raw, last)
		if err != nil {
			return nil, err
		}
		for _, ss := range m {
			if len(ss.Values) == 0 {
				continue
			}
			k := ss.Metric.String()
			d.labels[k] = ss.Metric
			d.gauges[k] = ss.Values
			seen[string(ss.Metric[model.MetricNameLabel])] = true
		}
	}
	names := slices.Sorted(maps.Keys(seen))
	if len(names) > result.MaxCustomNames {
		d.dropped = names[result.MaxCustomNames:]
		names = names[:result.MaxCustomNames]
	}
	for _, n := range names {
		d.names[n] = true
	}
	return d, nil
}

// fill sets every scenario's checks, Counters and Rates between edges a and b.
func (d *customData) fill(a, b int, seconds func(scenario string) float64, scenarios []result.ScenarioResult) {
	if d == nil {
		return
	}
	type acc struct {
		lowest, highest, last float64
		series                int
		total                 float64
	}
	per := map[string]map[string]*acc{}
	get := func(scenario, key string) *acc {
		if per[scenario] == nil {
			per[scenario] = map[string]*acc{}
		}
		if per[scenario][key] == nil {
			per[scenario][key] = &acc{lowest: math.Inf(1), highest: math.Inf(-1)}
		}
		return per[scenario][key]
	}
	for k, vb := range d.values[b] {
		m := d.labels[k]
		name := string(m[model.MetricNameLabel])
		scenario := string(m[tagScenario])
		switch kind := customKind(name); {
		case kind == result.KindCheck:
			c := get(scenario, result.KindCheck+"\x00"+string(m[tagCheck]))
			c.lowest, c.series = math.Min(c.lowest, vb), c.series+1
		case !d.names[name]:
		case kind == result.KindCounter:
			// A series first written inside the window has nothing at a: all of it is in.
			get(scenario, result.KindCounter+"\x00"+name).total += vb - d.values[a][k]
		case kind == result.KindRate:
			c := get(scenario, result.KindRate+"\x00"+name)
			c.lowest, c.series = math.Min(c.lowest, vb), c.series+1
		}
	}
	// A Gauge's window is (edge a, edge b], as a range selector's is.
	from, until := model.TimeFromUnixNano(d.edges[a].UnixNano()), model.TimeFromUnixNano(d.edges[b].UnixNano())
	for k, samples := range d.gauges {
		m := d.labels[k]
		name := string(m[model.MetricNameLabel])
		if !d.names[name] {
			continue
		}
		var c *acc
		for _, p := range samples {
			if p.Timestamp <= from || p.Timestamp > until || !result.Finite(float64(p.Value)) {
				continue
			}
			if c == nil {
				c = get(string(m[tagScenario]), result.KindGauge+"\x00"+name)
				c.series++
			}
			v := float64(p.Value)
			c.lowest, c.highest, c.last = math.Min(c.lowest, v), math.Max(c.highest, v), v
		}
	}
	for i := range scenarios {
		sr := &scenarios[i]
		sr.Checks, sr.Counters, sr.Rates, sr.Gauges = nil, nil, nil, nil
		for key, c := range per[sr.Name] {
			kind, name, _ := strings.Cut(key, "\x00")
			switch kind {
			case result.KindCheck:
				sr.Checks = append(sr.Checks, result.CheckResult{Name: name, PassPercent: result.Num(100 * c.lowest), Series: c.series})
			case result.KindCounter:
				cr := result.CounterResult{Name: customName(name), Metric: name, Total: result.Num(c.total)}
				if s := seconds(sr.Name); s > 0 {
					cr.Rate = result.Num(c.total / s)
				}
				sr.Counters = append(sr.Counters, cr)
			case result.KindRate:
				sr.Rates = append(sr.Rates, result.RateResult{Name: customName(name), Metric: name, Percent: result.Num(100 * c.lowest)})
			case result.KindGauge:
				if math.IsInf(c.lowest, 1) {
					// Nothing written in the window: the value is from before it.
					continue
				}
				g := result.GaugeResult{Name: customName(name), Metric: name, Min: result.Num(c.lowest), Max: result.Num(c.highest), Series: c.series}
				if c.series == 1 {
					g.Last = result.Num(c.last)
				}
				sr.Gauges = append(sr.Gauges, g)
			}
		}
		sort.Slice(sr.Checks, func(i, j int) bool { return sr.Checks[i].Name < sr.Checks[j].Name })
		sort.Slice(sr.Counters, func(i, j int) bool { return sr.Counters[i].Name < sr.Counters[j].Name })
		sort.Slice(sr.Rates, func(i, j int) bool { return sr.Rates[i].Name < sr.Rates[j].Name })
		sort.Slice(sr.Gauges, func(i, j int) bool { return sr.Gauges[i].Name < sr.Gauges[j].Name })
	}
}

// notes are the caveats of the read, for the result's notes.
func (d *customData) notes() []string {
	if d == nil {
		return nil
	}
	var out []string
	for _, v := range d.values {
		if len(v) > 0 {
			out = append(out, "check and custom Rate percentages are k6's ratios since each runner began (k6 writes a Rate without counts): the lowest among runners is shown, warm-up included; custom Counters are exact over the window")
			break
		}
	}
	if len(d.dropped) > 0 {
		out = append(out, fmt.Sprintf("the script wrote %d custom Counters, Rates and Gauges; the first %d by name are reported, left out: %s",
			len(d.names)+len(d.dropped), len(d.names), result.ShortList(d.dropped, 5)))
	}
	return out
}
