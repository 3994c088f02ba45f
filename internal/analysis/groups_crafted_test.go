package analysis

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/perfexp/perfexp/internal/analysis/promtest"
	"github.com/perfexp/perfexp/internal/result"
)

// craftedTrend is one k6 Trend series as k6's remote-write output writes it with native
// histograms: cumulative, one sample per flush that had values, stamped with the flush's time.
// It remembers every value so tests know the truth.
type craftedTrend struct {
	labels  map[string]string
	hist    *promtest.NativeHistogram
	obs     []promtest.Observation
	samples []promtest.HistogramSample
	floats  []promtest.Float
}

func newCraftedTrend(metric, testID, scenario, group, instance string) *craftedTrend {
	return &craftedTrend{
		labels: map[string]string{"__name__": metric, "testid": testID, "scenario": scenario, "group": group, "instance_id": instance},
		hist:   promtest.NewNativeHistogram(),
	}
}

func (c *craftedTrend) flush(t time.Time, vs ...float64) {
	c.hist.Observe(vs...)
	c.samples = append(c.samples, promtest.HistogramSample{T: t, H: c.hist.Snapshot()})
	for _, v := range vs {
		c.obs = append(c.obs, promtest.Observation{T: t, V: v})
	}
}

// restart is a restarted runner: the histogram starts again from empty.
func (c *craftedTrend) restart() { c.hist = promtest.NewNativeHistogram() }

// end writes k6's stale marker after the last sample (K6_PROMETHEUS_RW_STALE_MARKERS=true).
func (c *craftedTrend) end(t time.Time) {
	c.floats = append(c.floats, promtest.Float{T: t, V: promtest.StaleNaN})
}

// gauge writes a float sample instead: a script's Gauge named like a Trend of plain numbers.
func (c *craftedTrend) gauge(t time.Time, v float64) {
	c.floats = append(c.floats, promtest.Float{T: t, V: v})
}

func (c *craftedTrend) series() promtest.Series {
	return promtest.Series{Labels: c.labels, Histograms: c.samples, Floats: c.floats}
}

// valuesIn are the values flushed in (a, b], sorted.
func valuesIn(cs []*craftedTrend, a, b time.Time) []float64 {
	lists := make([][]promtest.Observation, len(cs))
	for i, c := range cs {
		lists[i] = c.obs
	}
	return observedIn(a, b, lists...)
}

// assertDistribution checks a row against the true values (in k6's units; scale turns them
// into the row's): count exact, mean exact, percentiles within the bucket bound, max in
// [true max, true max * 2^(1/8)].
func assertDistribution(t *testing.T, what string, n *int64, l result.Latency, want []float64, scale float64) {
	t.Helper()
	if len(want) == 0 {
		t.Fatalf("%s: the test has no truth", what)
	}
	if n == nil || *n != int64(len(want)) {
		t.Errorf("%s: count = %v, want %d", what, deref(n), len(want))
		return
	}
	var sum float64
	for _, v := range want {
		sum += v
	}
	if avg := scale * sum / float64(len(want)); l.Avg == nil || !within(*l.Avg, avg, 1e-9) {
		t.Errorf("%s: avg = %v, want %.6f", what, deref(l.Avg), avg)
	}
	for _, p := range []struct {
		q   float64
		got *float64
	}{{0.5, l.P50}, {0.75, l.P75}, {0.9, l.P90}, {0.95, l.P95}} {
		w := scale * orderStatistic(want, p.q)
		if p.got == nil || !within(*p.got, w, schema3Bound) {
			t.Errorf("%s: p%.0f = %v, true %.5f: beyond %.2f%%", what, 100*p.q, deref(p.got), w, 100*schema3Bound)
		}
	}
	if mx := scale * want[len(want)-1]; l.Max == nil || *l.Max < mx*(1-1e-12) || *l.Max > mx*(1+schema3Bound) {
		t.Errorf("%s: max = %v, true max %.5f", what, deref(l.Max), mx)
	}
}

func groupOf(sr result.ScenarioResult, name string) *result.GroupResult {
	for i := range sr.Groups {
		if sr.Groups[i].Name == name {
			return &sr.Groups[i]
		}
	}
	return nil
}

func trendOf(sr result.ScenarioResult, name string) *result.TrendResult {
	for i := range sr.Trends {
		if sr.Trends[i].Name == name {
			return &sr.Trends[i]
		}
	}
	return nil
}

// Story: transactions and custom Trends are read with the exactness of request latencies. Each
// case is crafted into a real Prometheus through remote write with k6's histogram encoding:
// runners are merged bucket by bucket, the warm-up is subtracted at the window's edge, a group
// that went quiet long before the end is still found, and stale markers or a restarted runner
// do not lose or double anything.
func TestCraftedGroupsAndTrends(t *testing.T) {
	base := time.Now().Add(-55 * time.Minute).Truncate(time.Second)
	at := func(d time.Duration) time.Time { return base.Add(d) }
	const sec = time.Second

	type want struct {
		// groups and trends name the rows and the series whose values make them up.
		groups   map[string][]*craftedTrend
		trends   map[string][]*craftedTrend
		units    map[string]string
		from, to time.Time
		// absent rows must not be reported.
		absent []string
	}
	tests := []struct {
		name  string
		build func(id string) ([]*craftedTrend, []*promtest.K6Series, Input, want)
	}{
		{
			name: "two runners, two groups, a warm-up in the same series: merged and subtracted",
			build: func(id string) ([]*craftedTrend, []*promtest.K6Series, Input, want) {
				var all, outs, ins []*craftedTrend
				for r := range 2 {
					inst := string(rune('0' + r))
					o := newCraftedTrend(metricGroupDuration, id, "desk", "::check-out", inst)
					i := newCraftedTrend(metricGroupDuration, id, "desk", "::check-in", inst)
					for k := 1; k <= 30; k++ {
						lo, hi := 0.02, 0.4
						if k <= 6 { // a slow warm-up
							lo, hi = 1, 3
						}
						o.flush(at(time.Duration(k)*5*sec+time.Duration(r)*300*time.Millisecond), latencies(6+r, lo*(1+float64(r)), hi*(1+float64(r)), k)...)
						i.flush(at(time.Duration(k)*5*sec+time.Duration(r)*400*time.Millisecond), latencies(6+r, lo/2, hi/2, k+50)...)
					}
					all = append(all, o, i)
					outs, ins = append(outs, o), append(ins, i)
				}
				inp := Input{Start: at(0), WarmUpEnd: at(32 * sec), End: at(152 * sec), Scenarios: []string{"desk"}}
				return all, nil, inp, want{groups: map[string][]*craftedTrend{"check-out": outs, "check-in": ins}, from: at(32 * sec), to: at(time.Hour)}
			},
		},
		{
			name: "a group seen only in the first minute of a 40-minute run is still counted",
			build: func(id string) ([]*craftedTrend, []*promtest.K6Series, Input, want) {
				login := newCraftedTrend(metricGroupDuration, id, "desk", "::login", "0")
				steady := newCraftedTrend(metricGroupDuration, id, "desk", "::check-out", "0")
				for k := 1; k <= 12; k++ {
					login.flush(at(time.Duration(k)*5*sec), latencies(3, 0.1, 0.9, k)...)
				}
				for k := 1; k <= 480; k++ {
					steady.flush(at(time.Duration(k)*5*sec), 0.02, 0.03)
				}
				inp := Input{Start: at(0), End: at(2401 * sec), Scenarios: []string{"desk"}}
				return []*craftedTrend{login, steady}, nil, inp, want{groups: map[string][]*craftedTrend{"login": {login}, "check-out": {steady}}, from: at(0), to: at(time.Hour)}
			},
		},
		{
			name: "custom Trends: a time Trend in ms, a plain one in its own unit, groups summed; other scenarios, setup and a Gauge left out",
			build: func(id string) ([]*craftedTrend, []*promtest.K6Series, Input, want) {
				var tx, items []*craftedTrend
				var all []*craftedTrend
				for _, g := range []string{"", "::check-out"} {
					c := newCraftedTrend("k6_checkout_transaction_seconds", id, "desk", g, "0")
					b := newCraftedTrend("k6_basket_items", id, "desk", g, "0")
					for k := 1; k <= 20; k++ {
						c.flush(at(time.Duration(k)*5*sec), latencies(5, 0.05, 2, k)...)
						b.flush(at(time.Duration(k)*5*sec), float64(1+k%7), float64(3+k%11), 250)
					}
					tx, items = append(tx, c), append(items, b)
					all = append(all, c, b)
				}
				other := newCraftedTrend("k6_checkout_transaction_seconds", id, "other", "", "0")
				setup := newCraftedTrend("k6_setup_seconds", id, "", "::setup", "0")
				other.flush(at(10*sec), 9, 9)
				setup.flush(at(1*sec), 1)
				queue := newCraftedTrend("k6_queue_depth", id, "desk", "", "0")
				for k := 1; k <= 20; k++ {
					queue.gauge(at(time.Duration(k)*5*sec), float64(k))
				}
				all = append(all, other, setup, queue)
				inp := Input{Start: at(0), End: at(101 * sec), Scenarios: []string{"desk"}}
				return all, nil, inp, want{trends: map[string][]*craftedTrend{"checkout_transaction": tx, "basket_items": items},
					units: map[string]string{"checkout_transaction": "ms", "basket_items": ""}, from: at(0), to: at(time.Hour), absent: []string{"setup", "queue_depth"}}
			},
		},
		{
			name: "k6 stale markers hide every series at the end: read sample by sample",
			build: func(id string) ([]*craftedTrend, []*promtest.K6Series, Input, want) {
				var gs []*craftedTrend
				var reqs []*promtest.K6Series
				for r := range 2 {
					inst := string(rune('0' + r))
					g := newCraftedTrend(metricGroupDuration, id, "desk", "::check-out", inst)
					s := promtest.NewK6Series(promtest.K6Labels(id, "desk", "check-out", inst, true))
					for k := 1; k <= 10; k++ {
						g.flush(at(time.Duration(k)*5*sec), latencies(4, 0.01, 0.5, k+r)...)
						s.Flush(at(time.Duration(k)*5*sec), latencies(4, 0.01, 0.5, k+r)...)
					}
					g.end(at(50*sec + time.Millisecond))
					s.Stale(at(50*sec + time.Millisecond))
					gs, reqs = append(gs, g), append(reqs, s)
				}
				inp := Input{Start: at(0), End: at(52 * sec), Scenarios: []string{"desk"}}
				return gs, reqs, inp, want{groups: map[string][]*craftedTrend{"check-out": gs}, from: at(0), to: at(time.Hour)}
			},
		},
		{
			name: "a runner restarted mid-run: its group histogram's reset is added, not lost",
			build: func(id string) ([]*craftedTrend, []*promtest.K6Series, Input, want) {
				g := newCraftedTrend(metricGroupDuration, id, "desk", "::check-out", "0")
				s := promtest.NewK6Series(promtest.K6Labels(id, "desk", "check-out", "0", true))
				for k := 1; k <= 24; k++ {
					if k == 13 {
						g.restart()
						s.Restart()
					}
					g.flush(at(time.Duration(k)*5*sec), latencies(5, 0.01, 0.3, k)...)
					s.Flush(at(time.Duration(k)*5*sec), latencies(5, 0.01, 0.3, k)...)
				}
				inp := Input{Start: at(0), End: at(125 * sec), Scenarios: []string{"desk"}}
				return []*craftedTrend{g}, []*promtest.K6Series{s}, inp, want{groups: map[string][]*craftedTrend{"check-out": {g}}, from: at(0), to: at(time.Hour)}
			},
		},
	}
	prom := promtest.Start(t)
	api := prom.API(t)
	for i, tc := range tests {
		id := "groups-" + string(rune('a'+i))
		trends, reqs, in, w := tc.build(id)
		var write []promtest.Series
		for _, c := range trends {
			write = append(write, c.series())
		}
		for _, s := range reqs {
			write = append(write, s.Series()...)
		}
		prom.Write(t, write)
		in.TestID, in.Experiment = id, id
		t.Run(tc.name, func(t *testing.T) {
			r, err := Analyze(context.Background(), api, in)
			if err != nil {
				t.Fatal(err)
			}
			sr := r.Scenarios[0]
			if len(sr.Groups) != len(w.groups) || len(sr.Trends) != len(w.trends) {
				t.Errorf("%d groups and %d trends, want %d and %d: %+v %+v", len(sr.Groups), len(sr.Trends), len(w.groups), len(w.trends), sr.Groups, sr.Trends)
			}
			for name, series := range w.groups {
				g := groupOf(sr, name)
				if g == nil {
					t.Errorf("group %s not reported", name)
					continue
				}
				assertDistribution(t, "group "+name, g.Count, g.Latency, valuesIn(series, w.from, w.to), 1000)
			}
			for name, series := range w.trends {
				tr := trendOf(sr, name)
				if tr == nil {
					t.Errorf("Trend %s not reported", name)
					continue
				}
				scale := 1.0
				if w.units[name] == "ms" {
					scale = 1000
				}
				if tr.Unit != w.units[name] {
					t.Errorf("Trend %s: unit %q, want %q", name, tr.Unit, w.units[name])
				}
				assertDistribution(t, "Trend "+name, tr.Count, tr.Latency, valuesIn(series, w.from, w.to), scale)
			}
			for _, name := range w.absent {
				if groupOf(sr, name) != nil || trendOf(sr, name) != nil {
					t.Errorf("%s reported, but it is not the scenario's", name)
				}
			}
			t.Logf("%d queries; notes %v", r.PrometheusQueries, r.Notes)
		})
	}
}

// Story: the number of queries does not grow with the number of groups and Trends (doc.go): a
// script with 40 groups and 10 Trends costs what one with one of each costs.
func TestCraftedGroupsQueryCountIndependentOfGroups(t *testing.T) {
	base := time.Now().Add(-20 * time.Minute).Truncate(time.Second)
	prom := promtest.Start(t)
	api := prom.API(t)
	queries := map[int]int{}
	for _, n := range []int{1, 40} {
		id := "count-" + string(rune('a'+n%26))
		var write []promtest.Series
		for g := range n {
			c := newCraftedTrend(metricGroupDuration, id, "desk", "::g"+string(rune('a'+g%26))+string(rune('a'+g/26)), "0")
			for k := 1; k <= 10; k++ {
				c.flush(base.Add(time.Duration(k)*5*time.Second), latencies(3, 0.01, 0.2, k+g)...)
			}
			write = append(write, c.series())
		}
		for tr := range min(n, 10) {
			c := newCraftedTrend("k6_t"+string(rune('a'+tr))+"_seconds", id, "desk", "", "0")
			for k := 1; k <= 10; k++ {
				c.flush(base.Add(time.Duration(k)*5*time.Second), latencies(2, 0.01, 0.2, k)...)
			}
			write = append(write, c.series())
		}
		prom.Write(t, write)
		r, err := Analyze(context.Background(), api, Input{Experiment: id, TestID: id, Start: base, End: base.Add(51 * time.Second), Scenarios: []string{"desk"}})
		if err != nil {
			t.Fatal(err)
		}
		if got := len(r.Scenarios[0].Groups); got != n {
			t.Fatalf("%d groups reported, want %d", got, n)
		}
		queries[n] = r.PrometheusQueries
	}
	if queries[1] != queries[40] {
		t.Errorf("queries: %d for 1 group, %d for 40: the count depends on the groups", queries[1], queries[40])
	}
	t.Logf("queries: %v", queries)
}

// The trend name helpers follow k6's naming: a time Trend's base unit is stripped.
func TestTrendNames(t *testing.T) {
	tests := []struct {
		metric, name string
		isTime       bool
		custom       bool
	}{
		{"k6_checkout_transaction_seconds", "checkout_transaction", true, true},
		{"k6_basket_items", "basket_items", false, true},
		{"k6_http_req_duration_seconds", "http_req_duration", true, false},
		{"k6_iteration_duration_seconds", "iteration_duration", true, false},
		{"k6_group_duration_seconds", "group_duration", true, false},
		{"k6_list_refresh_stuck_total", "list_refresh_stuck_total", false, false},
		{"k6_checks_rate", "checks_rate", false, false},
		{"up", "up", false, false},
	}
	for _, tc := range tests {
		t.Run(tc.metric, func(t *testing.T) {
			name, isTime := trendName(tc.metric)
			if name != tc.name || isTime != tc.isTime {
				t.Errorf("trendName = %q, %v; want %q, %v", name, isTime, tc.name, tc.isTime)
			}
			if got := isCustomTrendName(tc.metric); got != tc.custom {
				t.Errorf("isCustomTrendName = %v, want %v", got, tc.custom)
			}
		})
	}
	if g := groupName("::outer::inner"); g != "outer::inner" {
		t.Errorf("groupName = %q", g)
	}
}

// Story: a script that makes a Trend per item cannot flood the results: the first 32 Trend
// names are read and a note names the rest.
func TestCraftedTrendNamesAreCapped(t *testing.T) {
	base := time.Now().Add(-10 * time.Minute).Truncate(time.Second)
	prom := promtest.Start(t)
	var write []promtest.Series
	const written = maxTrendNames + 3
	for i := range written {
		c := newCraftedTrend(fmt.Sprintf("k6_item_%02d", i), "cap", "desk", "", "0")
		c.flush(base.Add(5*time.Second), 1, 2, 3)
		write = append(write, c.series())
	}
	prom.Write(t, write)
	r, err := Analyze(context.Background(), prom.API(t), Input{Experiment: "cap", TestID: "cap", Start: base, End: base.Add(10 * time.Second), Scenarios: []string{"desk"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := len(r.Scenarios[0].Trends); got != maxTrendNames {
		t.Errorf("%d Trends reported, want the cap %d", got, maxTrendNames)
	}
	var noted bool
	for _, n := range r.Notes {
		noted = noted || strings.Contains(n, fmt.Sprintf("wrote %d custom Trends", written)) && strings.Contains(n, "k6_item_34")
	}
	if !noted {
		t.Errorf("no note names the Trends left out: %v", r.Notes)
	}
}
