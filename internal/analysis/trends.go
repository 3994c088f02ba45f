package analysis

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/prometheus/common/model"

	"github.com/perfexp/perfexp/internal/result"
)

// k6 groups and custom Trends as native histograms.
//
// With K6_PROMETHEUS_RW_TREND_AS_NATIVE_HISTOGRAM=true every k6 Trend becomes one native
// histogram per tag set. k6 appends the base unit to a time Trend's name and converts its
// values to seconds (group_duration -> k6_group_duration_seconds, a script's
// `new Trend('checkout_transaction', true)` -> k6_checkout_transaction_seconds); a Trend of
// plain numbers keeps its name and its values (`new Trend('basket_items')` ->
// k6_basket_items). Both carry the sample's tags (k6 v1.8: testid, scenario, the run's
// --tag values): group_duration has group="::check-out" ("::outer::inner" when nested), and a
// Trend added inside a group has that group tag, one added outside every group none. These
// facts are checked against real k6 in groups_real_test.go.
//
// They are read the way request latencies are (edges.go): each series' cumulative histogram
// at every edge, summed and subtracted bucket by bucket in Go. They have no request counter
// twin to say which series went quiet, so the index (the series API) says which exist, and
// only when one of them is not found at an edge are its last samples looked for with the
// offset query and the subquery. The number of queries depends on the edges, never on the
// number of groups or Trends.
const (
	// metricGroupDuration is k6's group_duration: one sample per execution of a group.
	metricGroupDuration = "k6_group_duration_seconds"
	// tagGroup is k6's group tag: "::outer::inner" for a nested group.
	tagGroup = "group"
	// secondsSuffix is the base-unit suffix of a time Trend.
	secondsSuffix = "_seconds"
)

// builtinTrendPrefixes are k6's own Trends (and other metrics whose names start alike): a
// custom Trend is any other k6_* native histogram. group_duration is read on its own.
var builtinTrendPrefixes = []string{
	"k6_http_req_", "k6_iteration_duration", "k6_group_duration", "k6_ws_", "k6_grpc_", "k6_browser_", "k6_data_", "k6_vus",
}

// notTrendSuffixes end k6's counters and rates, which are never histograms.
var notTrendSuffixes = []string{"_total", "_rate"}

// maxTrendNames bounds the custom Trend names read: a script that makes a Trend per item
// would otherwise turn one query into thousands of histograms. The cap is said in the notes.
const maxTrendNames = 32

// trendData holds every group and custom Trend histogram of a run at each edge, by series key
// (the full metric, name included).
type trendData struct {
	labels map[string]model.Metric
	hists  []map[string]*result.Histogram
	// names are the custom Trends' metric names read, dropped those left out by the cap.
	names   []string
	dropped []string
	// reread counts series read sample by sample.
	reread int
}

// isCustomTrendName reports whether a k6 metric name may be a script's own Trend.
func isCustomTrendName(name string) bool {
	if !strings.HasPrefix(name, "k6_") {
		return false
	}
	for _, p := range builtinTrendPrefixes {
		if strings.HasPrefix(name, p) {
			return false
		}
	}
	for _, s := range notTrendSuffixes {
		if strings.HasSuffix(name, s) {
			return false
		}
	}
	return true
}

// readK6WithTrends reads the run's request series, then its groups and custom Trends: they
// come from the same runners, so what made the request histograms need reading sample by
// sample (a restarted runner, stale markers) applies to them too.
func readK6WithTrends(ctx context.Context, q Querier, in Input, from time.Time, edges []time.Time) (*k6Data, *trendData, error) {
	k6, err := readK6(ctx, q, in.TestID, from, edges)
	if err != nil {
		return nil, nil, err
	}
	trends, err := readTrends(ctx, q, in.TestID, in.Scenarios, from, edges, k6.resets > 0 || k6.mismatched > 0)
	if err != nil {
		return nil, nil, err
	}
	return k6, trends, nil
}

// readTrends reads group_duration and every custom Trend of the declared scenarios at the
// edges. sampleBySample says the request histograms needed reading sample by sample (a
// restarted runner, or k6's stale markers hiding series at the edges): the same then holds
// for these, which share their runners, so they are read that way too.
func readTrends(ctx context.Context, q Querier, testID string, scenarios []string, from time.Time, edges []time.Time, sampleBySample bool) (*trendData, error) {
	d := &trendData{labels: map[string]model.Metric{}, hists: make([]map[string]*result.Histogram, len(edges))}
	for i := range edges {
		d.hists[i] = map[string]*result.Histogram{}
	}
	if len(scenarios) == 0 {
		return d, nil
	}
	scope := fmt.Sprintf("testid=%s,%s=~%s", quote(testID), tagScenario, quote(anyOf(scenarios)))
	known, err := d.discover(ctx, q, scope, from, edges[len(edges)-1])
	if err != nil || len(known) == 0 {
		return d, err
	}
	selector := func(names []string) string {
		return fmt.Sprintf("{__name__=~%s,%s}", quote(anyOf(names)), scope)
	}
	if sampleBySample {
		return d, d.readRaw(ctx, q, selector(append([]string{metricGroupDuration}, d.names...)), from, edges)
	}
	// A script's Gauge can be named like a Trend of plain numbers; once seen as a float it is
	// known not to be a histogram, and is not looked for again.
	floats := map[string]bool{}
	for i, t := range edges {
		if err := d.readAt(ctx, q, i, t, from, known, floats, selector); err != nil {
			return nil, err
		}
	}
	return d, nil
}

// discover lists, from the series index (no sample is read), the group and custom Trend
// series of the scope with samples in [from, until], and keeps the first maxTrendNames Trend
// names. k6's counters and rates are left out by name so the answer stays small.
func (d *trendData) discover(ctx context.Context, q Querier, scope string, from, until time.Time) (map[string]model.Metric, error) {
	exists, err := seriesIn(ctx, q, fmt.Sprintf(`{__name__=~"k6_.+",__name__!~".+_total|.+_rate|k6_http_req_.+",%s}`, scope), from, until)
	if err != nil {
		return nil, err
	}
	names := map[string]bool{}
	for _, ls := range exists {
		if name := string(ls[model.MetricNameLabel]); isCustomTrendName(name) {
			names[name] = true
		}
	}
	d.names = slices.Sorted(maps.Keys(names))
	if len(d.names) > maxTrendNames {
		d.names, d.dropped = d.names[:maxTrendNames], d.names[maxTrendNames:]
	}
	known := map[string]model.Metric{}
	for _, ls := range exists {
		m := model.Metric(ls)
		if name := string(m[model.MetricNameLabel]); name == metricGroupDuration || slices.Contains(d.names, name) {
			known[m.String()] = m
		}
	}
	return known, nil
}

// readAt reads every known series' histogram at edge i (time t): an instant query finds those
// with a sample in the lookback; for the others the offset query and the subquery of edges.go
// find their last sample, if they had one before t.
func (d *trendData) readAt(ctx context.Context, q Querier, i int, t, from time.Time, known map[string]model.Metric, floats map[string]bool,
	selector func(names []string) string) error {
	best := d.hists[i]
	consider := func(m model.Metric, h *model.SampleHistogram) {
		if h == nil {
			return
		}
		k := m.String()
		d.labels[k] = m
		if cur, ok := best[k]; !ok || float64(h.Count) > cur.Count {
			best[k] = histogramFromModel(h)
		}
	}
	vec, err := vector(ctx, q, selector(append([]string{metricGroupDuration}, d.names...)), t)
	if err != nil {
		return err
	}
	for _, s := range vec {
		if s.Histogram == nil {
			floats[s.Metric.String()] = true
		}
		consider(s.Metric, s.Histogram)
	}
	// A series the index knows but the instant query did not see either went quiet more than
	// the lookback before t or had not started yet; the subquery tells them apart.
	quiet := map[string]bool{}
	for k, m := range known {
		if _, ok := best[k]; !ok && !floats[k] {
			quiet[string(m[model.MetricNameLabel])] = true
		}
	}
	if len(quiet) == 0 {
		return nil
	}
	narrow := selector(slices.Sorted(maps.Keys(quiet)))
	off := promDuration(subqueryStep)
	if vec, err = vector(ctx, q, fmt.Sprintf("%s offset %s", narrow, off), t); err != nil {
		return err
	}
	for _, s := range vec {
		consider(s.Metric, s.Histogram)
	}
	stopped := fmt.Sprintf("(%s offset %s unless %s)[%s:%s]", narrow, off, narrow, promDuration(t.Sub(from)+subqueryStep), off)
	m, err := matrix(ctx, q, stopped, t)
	if err != nil {
		return err
	}
	for _, ss := range m {
		for _, p := range ss.Histograms {
			consider(ss.Metric, p.Histogram)
		}
	}
	return nil
}

// readRaw reads every sample of the selected series in one query and takes each one's value at
// every edge, adding up the peaks before a counter reset.
func (d *trendData) readRaw(ctx context.Context, q Querier, selector string, from time.Time, edges []time.Time) error {
	last := edges[len(edges)-1]
	m, err := matrix(ctx, q, fmt.Sprintf("%s[%s]", selector, promDuration(last.Sub(from))), last)
	if err != nil {
		return err
	}
	for _, ss := range m {
		if len(ss.Histograms) == 0 {
			continue
		}
		k := ss.Metric.String()
		d.labels[k] = ss.Metric
		d.reread++
		rs := &rawSeries{hists: ss.Histograms}
		for i, t := range edges {
			if h, ok := rs.histogramAt(t); ok {
				d.hists[i][k] = h
			}
		}
	}
	return nil
}
