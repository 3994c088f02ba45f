package analysis

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/perfexp/perfexp/internal/analysis/promtest"
	"github.com/perfexp/perfexp/internal/result"
)

// checksScript checks every response twice (one check always passes, one fails on every
// third request), counts baskets with a Counter, and records with a Rate whether a basket was
// heavy and with a Gauge a queue's depth. EXTRA adds that many more checks and Counters, to show the queries do not grow.
const checksScript = `
import http from 'k6/http';
import { check } from 'k6';
import { Counter, Gauge, Rate } from 'k6/metrics';

const baskets = new Counter('baskets');
const heavy = new Rate('heavy_basket');
const depth = new Gauge('queue_depth');
const extra = [];
for (let i = 0; i < Number(__ENV.EXTRA || 0); i++) extra.push(new Counter('extra_' + i));

export const options = { scenarios: { desk: { executor: 'constant-vus', vus: 3, duration: '4s' } } };

export default function () {
  const res = http.get(__ENV.BASE + '/out');
  check(res, {
    'status is 200': (r) => r.status === 200,
    'not every third': (r) => r.body !== 'third',
  });
  for (let i = 0; i < extra.length; i++) {
    check(res, { ['extra check ' + i]: () => true });
    extra[i].add(1);
  }
  baskets.add(2);
  heavy.add(Math.random() < 0.3);
  depth.add(__VU * 10 + __ITER % 7);
}
`

// checksSummary is what the test reads from --summary-export: each check's passes and fails,
// and each metric's values.
type checksSummary struct {
	checks  map[string][2]int64
	metrics map[string]map[string]float64
}

func parseChecksSummary(t *testing.T, b []byte) checksSummary {
	t.Helper()
	var doc struct {
		RootGroup struct {
			Checks map[string]struct {
				Name   string `json:"name"`
				Passes int64  `json:"passes"`
				Fails  int64  `json:"fails"`
			} `json:"checks"`
		} `json:"root_group"`
		Metrics map[string]map[string]float64 `json:"metrics"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	s := checksSummary{checks: map[string][2]int64{}, metrics: doc.Metrics}
	for _, c := range doc.RootGroup.Checks {
		s.checks[c.Name] = [2]int64{c.Passes, c.Fails}
	}
	return s
}

// Story: the desk's script checks its responses and counts its baskets. perfexp reports each
// check's pass rate as k6's own summary computes it, the custom Counter's total exactly, and
// the custom Rate's share; a script with eight more checks and Counters costs no more queries.
func TestRealK6ChecksCountersAndRatesMatchTheSummary(t *testing.T) {
	prom := promtest.Start(t)
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(time.Millisecond)
		if n.Add(1)%3 == 0 {
			_, _ = w.Write([]byte("third"))
		}
	}))
	defer srv.Close()
	queries := map[int]int{}
	for _, extra := range []int{0, 8} {
		id := fmt.Sprintf("checks-real-%d", extra)
		start := time.Now().Truncate(time.Second)
		sum := parseChecksSummary(t, prom.RunK6(t, promtest.K6Run{Script: checksScript, TestID: id,
			Env: map[string]string{"BASE": srv.URL, "EXTRA": fmt.Sprint(extra)}}))
		end := time.Now().Add(time.Second).Truncate(time.Second)
		r, err := Analyze(context.Background(), prom.API(t), Input{Experiment: id, TestID: id, Start: start, End: end, Scenarios: []string{"desk"}})
		if err != nil {
			t.Fatal(err)
		}
		queries[extra] = r.PrometheusQueries
		sr := r.Scenarios[0]
		if len(sr.Checks) != 2+extra {
			t.Fatalf("extra %d: %d checks reported, want %d: %+v", extra, len(sr.Checks), 2+extra, sr.Checks)
		}
		for _, c := range sr.Checks {
			pf, ok := sum.checks[c.Name]
			if !ok {
				t.Fatalf("check %q is not in k6's summary", c.Name)
			}
			want := 100 * float64(pf[0]) / float64(pf[0]+pf[1])
			if c.PassPercent == nil || math.Abs(*c.PassPercent-want) > 1e-9 {
				t.Errorf("check %q: %v%%, k6 %d passes %d fails = %.6f%%", c.Name, deref(c.PassPercent), pf[0], pf[1], want)
			}
		}
		if pf := sum.checks["not every third"]; pf[1] == 0 {
			t.Errorf("the failing check never failed: %v", pf)
		}
		counters := map[string]result.CounterResult{}
		for _, c := range sr.Counters {
			counters[c.Name] = c
		}
		if len(sr.Counters) != 1+extra {
			t.Errorf("extra %d: counters %+v", extra, sr.Counters)
		}
		if c := counters["baskets"]; c.Total == nil || *c.Total != sum.metrics["baskets"]["count"] || *c.Total != 2*sum.metrics["iterations"]["count"] {
			t.Errorf("baskets: %v, k6 %v, iterations %v", deref(c.Total), sum.metrics["baskets"]["count"], sum.metrics["iterations"]["count"])
		}
		if len(sr.Rates) != 1 || sr.Rates[0].Name != "heavy_basket" || sr.Rates[0].Percent == nil ||
			math.Abs(*sr.Rates[0].Percent-100*sum.metrics["heavy_basket"]["value"]) > 1e-9 {
			t.Errorf("rates %+v, k6 heavy_basket %v", sr.Rates, sum.metrics["heavy_basket"])
		}
		// iteration_duration: the mean exact, percentiles within the bucket bound, the max bound
		// at or above k6's max by at most that bound.
		id2, l := sum.metrics["iteration_duration"], sr.IterationDuration
		if l == nil || l.Avg == nil || !within(*l.Avg, id2["avg"], 0.001) {
			t.Errorf("iteration duration %+v, k6 avg %v", l, id2["avg"])
		} else {
			for _, p := range []struct {
				key string
				got *float64
			}{{"p(50)", l.P50}, {"p(90)", l.P90}, {"p(95)", l.P95}} {
				if p.got == nil || !within(*p.got, id2[p.key], schema3Bound) {
					t.Errorf("iteration duration %s: %v ms, k6 %.4f", p.key, deref(p.got), id2[p.key])
				}
			}
			if l.Max == nil || *l.Max < id2["max"]*(1-1e-9) || *l.Max > id2["max"]*(1+schema3Bound) {
				t.Errorf("iteration duration max %v, k6 %v", deref(l.Max), id2["max"])
			}
			t.Logf("iteration duration avg %.4f p95 %.4f ms, k6 %.4f %.4f", *l.Avg, deref(l.P95), id2["avg"], id2["p(95)"])
		}
		// A Gauge: the last value is k6's own; min and max are of the values pushed, within
		// k6's min and max.
		kg := sum.metrics["queue_depth"]
		if len(sr.Gauges) != 1 || sr.Gauges[0].Name != "queue_depth" {
			t.Errorf("gauges %+v", sr.Gauges)
		} else if g := sr.Gauges[0]; g.Last == nil || *g.Last != kg["value"] || g.Min == nil || g.Max == nil ||
			*g.Min < kg["min"] || *g.Max > kg["max"] || *g.Min > *g.Max || g.Series != 1 {
			t.Errorf("gauge last %v min %v max %v, k6 %v", deref(g.Last), deref(g.Min), deref(g.Max), kg)
		} else {
			t.Logf("gauge last %v min %v max %v, k6 %v", *g.Last, *g.Min, *g.Max, kg)
		}
		if extra == 0 {
			checkScriptIntervals(t, prom, id, start, end, sum)
		}
		t.Logf("extra %d: checks %s %v%% / %s %v%%, baskets %v, heavy %v%%, %d queries", extra, sr.Checks[0].Name, deref(sr.Checks[0].PassPercent), sr.Checks[1].Name, deref(sr.Checks[1].PassPercent), deref(counters["baskets"].Total), deref(sr.Rates[0].Percent), r.PrometheusQueries)
	}
	if queries[0] != queries[8] {
		t.Errorf("queries grew with the checks and Counters: %v", queries)
	}
}

// Story: two runners share the desk's load (k6 execution segments), each failing its check at
// its own rate. perfexp's Counter is the two runners' sum exactly; the check's pass rate is the
// lower runner's own, as k6's two summaries give them; the Gauge spans both runners' values.
func TestRealK6ChecksOverTwoRunners(t *testing.T) {
	prom := promtest.Start(t)
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(time.Millisecond)
		if n.Add(1)%3 == 0 {
			_, _ = w.Write([]byte("third"))
		}
	}))
	defer srv.Close()
	const id = "checks-real-two"
	start := time.Now().Truncate(time.Second)
	sums := make([]checksSummary, 2)
	var wg sync.WaitGroup
	for i := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sums[i] = parseChecksSummary(t, prom.RunK6(t, promtest.K6Run{Script: checksScript, TestID: id,
				Env:     map[string]string{"BASE": srv.URL},
				Tags:    map[string]string{"instance_id": fmt.Sprint(i)},
				Segment: fmt.Sprintf("%d/2:%d/2", i, i+1), Sequence: "0,1/2,1"}))
		}()
	}
	wg.Wait()
	end := time.Now().Add(time.Second).Truncate(time.Second)
	r, err := Analyze(context.Background(), prom.API(t), Input{Experiment: id, TestID: id, Start: start, End: end, Scenarios: []string{"desk"}})
	if err != nil {
		t.Fatal(err)
	}
	sr := r.Scenarios[0]
	for _, c := range sr.Checks {
		lowest := math.Inf(1)
		for _, s := range sums {
			pf := s.checks[c.Name]
			lowest = math.Min(lowest, 100*float64(pf[0])/float64(pf[0]+pf[1]))
		}
		if c.Series != 2 || c.PassPercent == nil || math.Abs(*c.PassPercent-lowest) > 1e-9 {
			t.Errorf("check %q: %v%% over %d series, the lower runner's %.6f%%", c.Name, deref(c.PassPercent), c.Series, lowest)
		}
	}
	var baskets, kmin, kmax float64
	kmin = math.Inf(1)
	for _, s := range sums {
		baskets += s.metrics["baskets"]["count"]
		kmin, kmax = math.Min(kmin, s.metrics["queue_depth"]["min"]), math.Max(kmax, s.metrics["queue_depth"]["max"])
	}
	if len(sr.Counters) != 1 || sr.Counters[0].Total == nil || *sr.Counters[0].Total != baskets {
		t.Errorf("counters %+v, k6's two summaries %v", sr.Counters, baskets)
	}
	if len(sr.Gauges) != 1 {
		t.Fatalf("gauges %+v", sr.Gauges)
	}
	if g := sr.Gauges[0]; g.Series != 2 || g.Last != nil || g.Min == nil || g.Max == nil || *g.Min < kmin || *g.Max > kmax {
		t.Errorf("gauge %+v (last %v), k6 min %v max %v", g, deref(g.Last), kmin, kmax)
	}
	t.Logf("checks %s %v%% / %s %v%%, baskets %v of k6's %v", sr.Checks[0].Name, deref(sr.Checks[0].PassPercent), sr.Checks[1].Name, deref(sr.Checks[1].PassPercent), deref(sr.Counters[0].Total), baskets)
}

// checkScriptIntervals reads the run's per-interval iteration durations and baskets Counter
// (one-second intervals: the run is shorter than an analysis' shortest) and checks that their
// increments add up to k6's own counts: every iteration and every basket in exactly one
// interval.
func checkScriptIntervals(t *testing.T, prom *promtest.Server, id string, start, end time.Time, sum checksSummary) {
	t.Helper()
	keep := map[result.IntervalKey]bool{{Scenario: "desk", Iteration: true}: true, {Scenario: "desk", Counter: "baskets"}: true}
	d, err := readIntervals(context.Background(), prom.API(t), id, []string{"desk"}, start, end, time.Second, keep, true)
	if err != nil {
		t.Fatal(err)
	}
	it, baskets := d.Find(result.IntervalKey{Scenario: "desk", Iteration: true}), d.Find(result.IntervalKey{Scenario: "desk", Counter: "baskets"})
	if it == nil || baskets == nil {
		t.Fatalf("iteration series %v, baskets series %v", it != nil, baskets != nil)
	}
	var iterations, added, durations float64
	for i := range it.Requests {
		iterations, added = iterations+it.Requests[i], added+baskets.Requests[i]
		if h := it.Histogram(i); h != nil {
			durations += h.Sum
		}
	}
	k := sum.metrics["iteration_duration"]
	if iterations != sum.metrics["iterations"]["count"] || added != sum.metrics["baskets"]["count"] ||
		!within(1000*durations/iterations, k["avg"], 0.001) {
		t.Errorf("per interval: %v iterations (avg %.4f ms), %v baskets; k6: %v iterations (avg %.4f ms), %v baskets",
			iterations, 1000*durations/iterations, added, sum.metrics["iterations"]["count"], k["avg"], sum.metrics["baskets"]["count"])
	}
	t.Logf("per interval: %d intervals, %v iterations, %v baskets, as k6 counted", len(it.Requests), iterations, added)
}
