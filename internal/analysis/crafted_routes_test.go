package analysis

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/analysis/promtest"
	"github.com/perfexp/perfexp/internal/judge"
	"github.com/perfexp/perfexp/internal/result"
)

// routeHist is one pod's histogram of one route and status, as a service exports it and a
// scrape every 15 s would store it: native (one histogram sample) or classic (_bucket per le,
// _sum and _count).
type routeHist struct {
	labels map[string]string
	native *promtest.NativeHistogram
	hist   prometheus.Histogram
	out    []promtest.Series
	byName map[string]int
}

func newRouteHist(native bool, labels map[string]string) *routeHist {
	h := &routeHist{labels: labels, byName: map[string]int{}}
	if native {
		h.native = promtest.NewNativeHistogram()
	} else {
		h.hist = prometheus.NewHistogram(prometheus.HistogramOpts{Name: "crafted", Buckets: prometheus.DefBuckets})
	}
	return h
}

func (h *routeHist) add(name string, extra map[string]string) *promtest.Series {
	key := name + extra["le"]
	if i, ok := h.byName[key]; ok {
		return &h.out[i]
	}
	ls := map[string]string{"__name__": name}
	for k, v := range h.labels {
		ls[k] = v
	}
	for k, v := range extra {
		ls[k] = v
	}
	h.out = append(h.out, promtest.Series{Labels: ls})
	h.byName[key] = len(h.out) - 1
	return &h.out[len(h.out)-1]
}

// scrape observes vs (seconds) and stores the cumulative state at t.
func (h *routeHist) scrape(t time.Time, metric string, vs ...float64) {
	if h.native != nil {
		h.native.Observe(vs...)
		s := h.add(metric, nil)
		s.Histograms = append(s.Histograms, promtest.HistogramSample{T: t, H: h.native.Snapshot()})
		return
	}
	for _, v := range vs {
		h.hist.Observe(v)
	}
	m := &dto.Metric{}
	if err := h.hist.Write(m); err != nil {
		panic(err)
	}
	hm := m.GetHistogram()
	for _, b := range hm.GetBucket() {
		s := h.add(metric+"_bucket", map[string]string{"le": strconv.FormatFloat(b.GetUpperBound(), 'g', -1, 64)})
		s.Floats = append(s.Floats, promtest.Float{T: t, V: float64(b.GetCumulativeCount())})
	}
	inf := h.add(metric+"_bucket", map[string]string{"le": "+Inf"})
	inf.Floats = append(inf.Floats, promtest.Float{T: t, V: float64(hm.GetSampleCount())})
	sum := h.add(metric+"_sum", nil)
	sum.Floats = append(sum.Floats, promtest.Float{T: t, V: hm.GetSampleSum()})
	cnt := h.add(metric+"_count", nil)
	cnt.Floats = append(cnt.Floats, promtest.Float{T: t, V: float64(hm.GetSampleCount())})
}

// Story: the reference report that found "automated-patron-blocks 150 % slower inside the
// check-out workflow" read the services' own per-route histograms. Here circulation (native
// histograms) serves check-out and check-in, inventory (classic buckets, the default of most
// client libraries) serves get; the new release makes circulation's check-out 150 % slower and
// leaves everything else alone, 2 % of check-in failing with 500 in both runs. The table and
// the comparison must name check-out Regressed by about +150 % with an interval that excludes
// no change, and read the other routes as no meaningful change.
func TestCraftedRoutesNameTheSlowerAPI(t *testing.T) {
	prom := promtest.Start(t)
	base := time.Now().Add(-50 * time.Minute).Truncate(time.Minute)
	window := 12 * time.Minute
	release1, release2 := base.Add(2*time.Minute), base.Add(22*time.Minute)
	changed := base.Add(18 * time.Minute)
	const metric = "demo_http_request_duration_seconds"
	labels := func(pod, service, route, code string) map[string]string {
		return map[string]string{"namespace": "shop", "pod": pod, "service": service, "job": service, "route": route, "code": code}
	}
	circ, inv := "circulation-5d8f7b9c4-x1y2z", "inventory-6c7d8e9f0-abcde"
	type routeLoad struct {
		h        *routeHist
		n        int
		lo, hi   float64
		slowerBy float64 // the new release's factor
	}
	loads := []routeLoad{
		{h: newRouteHist(true, labels(circ, "circulation", "check-out", "200")), n: 30, lo: 0.016, hi: 0.030, slowerBy: 2.5},
		{h: newRouteHist(true, labels(circ, "circulation", "check-in", "200")), n: 49, lo: 0.010, hi: 0.020, slowerBy: 1},
		{h: newRouteHist(true, labels(circ, "circulation", "check-in", "500")), n: 1, lo: 0.001, hi: 0.002, slowerBy: 1},
		{h: newRouteHist(false, labels(inv, "inventory", "get", "200")), n: 40, lo: 0.004, hi: 0.009, slowerBy: 1},
	}
	// A decoy: another namespace's pod of the same name pattern must not be read.
	decoy := newRouteHist(true, map[string]string{"namespace": "other", "pod": circ, "route": "check-out", "code": "200"})
	to := base.Add(40 * time.Minute)
	i := 0
	for at := base; at.Before(to); at = at.Add(15 * time.Second) {
		i++
		for j, l := range loads {
			vs := latencies(l.n, l.lo, l.hi, i*7+j)
			for k := range vs {
				vs[k] *= 1 + 0.1*jitter(base, at, float64(j*31+k))
				if !at.Before(changed) {
					vs[k] *= l.slowerBy
				}
			}
			l.h.scrape(at, metric, vs...)
		}
		decoy.scrape(at, metric, latencies(30, 1, 2, i)...)
	}
	var series []promtest.Series
	for _, l := range loads {
		series = append(series, l.h.out...)
	}
	series = append(series, decoy.out...)
	for _, run := range []struct {
		id    string
		start time.Time
	}{{"release-1", release1}, {"release-2", release2}} {
		ok := promtest.NewK6Series(promtest.K6Labels(run.id, "checkout", "pay", "0", true))
		for i := 1; i <= int(window/(5*time.Second)); i++ {
			ok.Flush(run.start.Add(time.Duration(i)*5*time.Second), latencies(20, 0.030, 0.060, i)...)
		}
		series = append(series, ok.Series()...)
	}
	prom.Write(t, series)

	spec := perfexpv1alpha1.RouteHistogram{Metric: metric}
	sources := []RouteSource{
		{Kind: perfexpv1alpha1.WorkloadKindDeployment, Namespace: "shop", Name: "circulation", Spec: spec},
		{Kind: perfexpv1alpha1.WorkloadKindDeployment, Namespace: "shop", Name: "inventory", Spec: spec},
	}
	analyze := func(t *testing.T, id string, start time.Time, b *judge.Baseline) (*result.Result, int) {
		cq := &CountingQuerier{Querier: prom.API(t)}
		r, err := Analyze(context.Background(), cq, Input{Experiment: id, TestID: id, TargetNamespace: "shop", Start: start, End: start.Add(window),
			Scenarios: []string{"checkout"}, Routes: sources, Baseline: b, Analysis: perfexpv1alpha1.Analysis{BetweenRun: quietEnvironment()}})
		if err != nil {
			t.Fatal(err)
		}
		return r, cq.Count()
	}
	first, _ := analyze(t, "release-1", release1, nil)
	t.Run("each route's server-side latency, errors and rate over the window", func(t *testing.T) {
		if len(first.Routes) != 3 {
			t.Fatalf("routes %+v, want circulation check-out and check-in, inventory get", first.Routes)
		}
		want := map[string]struct{ avg, reqPerS, errPct float64 }{
			// log-uniform in [lo, hi] on average (hi-lo)/ln(hi/lo), times the jitter's mean 1.
			"Deployment/shop/circulation check-out": {(0.030 - 0.016) / math.Log(0.030/0.016) * 1000, 30.0 / 15, 0},
			"Deployment/shop/circulation check-in":  {(0.020 - 0.010) / math.Log(2) * 1000, 50.0 / 15, 2},
			"Deployment/shop/inventory get":         {(0.009 - 0.004) / math.Log(0.009/0.004) * 1000, 40.0 / 15, 0},
		}
		for _, rr := range first.Routes {
			w, ok := want[rr.Workload+" "+rr.Route]
			if !ok {
				t.Errorf("unexpected route %s %s", rr.Workload, rr.Route)
				continue
			}
			t.Logf("%s %s: %v req, %v req/s, %v %% errors, avg %v p95 %v ms", rr.Workload, rr.Route, deref(rr.Requests), deref(rr.Rate), deref(rr.ErrorPercent), deref(rr.Avg), deref(rr.P95))
			if rr.Avg == nil || math.Abs(*rr.Avg-w.avg)/w.avg > 0.05 {
				t.Errorf("%s avg %v ms, want about %.2f", rr.Route, deref(rr.Avg), w.avg)
			}
			if rr.Rate == nil || math.Abs(*rr.Rate-w.reqPerS)/w.reqPerS > 0.02 {
				t.Errorf("%s rate %v, want %.3f", rr.Route, deref(rr.Rate), w.reqPerS)
			}
			if rr.ErrorPercent == nil || math.Abs(*rr.ErrorPercent-w.errPct) > 0.01 {
				t.Errorf("%s errors %v %%, want %v", rr.Route, deref(rr.ErrorPercent), w.errPct)
			}
			if rr.P50 == nil || rr.P95 == nil || rr.P99 == nil || *rr.P50 > *rr.P95 || *rr.P95 > *rr.P99 {
				t.Errorf("%s percentiles %v %v %v", rr.Route, deref(rr.P50), deref(rr.P95), deref(rr.P99))
			}
		}
		if first.Routes[0].Route != "check-out" {
			t.Errorf("slowest first: %s first", first.Routes[0].Route)
		}
	})

	stored, err := json.Marshal(first)
	if err != nil {
		t.Fatal(err)
	}
	var reread result.Result
	if err := json.Unmarshal(stored, &reread); err != nil {
		t.Fatal(err)
	}
	if reread.Intervals == nil || len(reread.Intervals.Routes) != 3 || len(reread.Routes) != 3 {
		t.Fatalf("results.json keeps no routes: %+v", reread.Intervals)
	}
	b := &judge.Baseline{Name: "release-1", TestID: "release-1", Start: release1, End: release1.Add(window), Scenarios: []string{"checkout"}, Result: &reread}
	r, queries := analyze(t, "release-2", release2, b)
	rows := map[string]result.MetricComparison{}
	for _, mc := range r.Comparison.Metrics {
		if mc.Route != "" {
			rows[mc.Metric] = mc
		}
	}
	for _, tc := range []struct {
		metric   string
		want     perfexpv1alpha1.Change
		estimate float64 // percent; NaN: not checked
	}{
		{"shop/circulation check-out p95 (server)", perfexpv1alpha1.ChangeRegressed, 150},
		{"shop/circulation check-out avg (server)", perfexpv1alpha1.ChangeRegressed, 150},
		{"shop/circulation check-in p95 (server)", perfexpv1alpha1.ChangeNoMeaningfulChange, math.NaN()},
		{"shop/circulation check-in avg (server)", perfexpv1alpha1.ChangeNoMeaningfulChange, math.NaN()},
		{"shop/circulation check-in errors (server)", perfexpv1alpha1.ChangeNoMeaningfulChange, math.NaN()},
		{"shop/inventory get p95 (server)", perfexpv1alpha1.ChangeNoMeaningfulChange, math.NaN()},
		{"shop/inventory get avg (server)", perfexpv1alpha1.ChangeNoMeaningfulChange, math.NaN()},
	} {
		t.Run(tc.metric, func(t *testing.T) {
			m, ok := rows[tc.metric]
			if !ok {
				t.Fatalf("no row %q among %d route rows", tc.metric, len(rows))
			}
			t.Logf("%s: %v -> %v %s, %s %+.1f [%+.1f, %+.1f], %d vs %d intervals, q %v", tc.metric, deref(m.Baseline), deref(m.Value), m.Unit,
				m.Change, deref(m.Estimate), deref(m.Low), deref(m.High), m.Samples, m.BaselineSamples, deref(m.AdjustedP))
			if m.Change != tc.want || m.Primary || m.Method != result.MethodBlockBootstrap {
				t.Errorf("%s (%s), primary %v, %s", m.Change, m.Why, m.Primary, m.Method)
			}
			if !math.IsNaN(tc.estimate) && (m.Estimate == nil || math.Abs(*m.Estimate-tc.estimate) > 15 || *m.Low <= 0) {
				t.Errorf("estimate %v %% [%v, %v], want about %v %%", deref(m.Estimate), deref(m.Low), deref(m.High), tc.estimate)
			}
		})
	}
	// ROUTES_FIXTURES=1 writes both runs' results for internal/report's golden Slowest APIs
	// tables: go test ./internal/analysis -run TestCraftedRoutes -count=1 with it set.
	if os.Getenv("ROUTES_FIXTURES") != "" {
		for name, res := range map[string]*result.Result{"routes.baseline.results.json": first, "routes.run.results.json": r} {
			js, err := json.MarshalIndent(res, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join("..", "report", "testdata", name), js, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	// Which API moved: the findings name check-out's server-side p95 with its interval, backed
	// by its Slowest APIs row, and no route that did not move.
	t.Run("the findings name the API that moved", func(t *testing.T) {
		var routes []result.Finding
		for _, f := range r.Findings {
			if f.Kind == result.FindingRoute {
				routes = append(routes, f)
			}
		}
		t.Logf("route findings %+v", routes)
		if len(routes) != 1 || routes[0].Row != "Slowest APIs / shop/circulation check-out" ||
			!strings.HasPrefix(routes[0].Text, "Mover: shop/circulation check-out p95 (server) rose by +1") || !strings.HasSuffix(routes[0].Text, "against the baseline (Regressed).") {
			t.Errorf("route findings %+v, want check-out's p95 only", routes)
		}
	})
	t.Run("route rows never decide the headline", func(t *testing.T) {
		if r.Comparison.Change != perfexpv1alpha1.ChangeNoMeaningfulChange {
			t.Errorf("headline %s", r.Comparison.Change)
		}
	})
	t.Run("a route as the primary metric decides the headline", func(t *testing.T) {
		cq := &CountingQuerier{Querier: prom.API(t)}
		a := perfexpv1alpha1.Analysis{BetweenRun: quietEnvironment(), PrimaryMetrics: []perfexpv1alpha1.PrimaryMetric{
			{Metric: perfexpv1alpha1.MetricP95, Workload: &perfexpv1alpha1.MetricWorkload{Name: "circulation"}, Route: "check-out"},
			{Metric: perfexpv1alpha1.MetricP95, Workload: &perfexpv1alpha1.MetricWorkload{Name: "circulation"}, Route: "renew"},
		}}
		r, err := Analyze(context.Background(), cq, Input{Experiment: "release-2", TestID: "release-2", TargetNamespace: "shop", Start: release2, End: release2.Add(window),
			Scenarios: []string{"checkout"}, Routes: sources, Baseline: b, Analysis: a})
		if err != nil {
			t.Fatal(err)
		}
		var primary []string
		for _, mc := range r.Comparison.Metrics {
			if mc.Primary {
				primary = append(primary, mc.Metric+" "+string(mc.Change)+" "+mc.Why)
			}
		}
		t.Logf("headline %s; primary rows %q", r.Comparison.Change, primary)
		if r.Comparison.Change != perfexpv1alpha1.ChangeRegressed || len(primary) != 2 ||
			!strings.HasPrefix(primary[0], "shop/circulation check-out p95 (server) Regressed") ||
			!strings.Contains(primary[1], "renew") || !strings.Contains(primary[1], string(perfexpv1alpha1.ChangeUnknown)) {
			t.Errorf("headline %s, primary rows %q", r.Comparison.Change, primary)
		}
	})
	t.Run("one query more per route histogram", func(t *testing.T) {
		_, without := func() (*result.Result, int) {
			saved := sources
			sources = nil
			defer func() { sources = saved }()
			return analyze(t, "release-2", release2, b)
		}()
		if queries != without+1 {
			t.Errorf("%d queries with routes, %d without", queries, without)
		}
	})
	t.Run("a histogram the pods do not have says so", func(t *testing.T) {
		saved := sources
		sources = []RouteSource{{Kind: perfexpv1alpha1.WorkloadKindDeployment, Namespace: "shop", Name: "circulation", Spec: perfexpv1alpha1.RouteHistogram{Metric: "http_server_requests_seconds"}}}
		defer func() { sources = saved }()
		r, _ := analyze(t, "release-1", release1, nil)
		if len(r.Routes) != 0 || !strings.Contains(strings.Join(r.Notes, "\n"), "no series of http_server_requests_seconds") {
			t.Errorf("routes %+v, notes %q", r.Routes, r.Notes)
		}
	})
}
