package analysis

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/perfexp/perfexp/internal/analysis/promtest"
)

// countingServer is the system under test for real k6 runs: it counts what it served, so
// counts can be checked against a truth that is neither k6 nor Prometheus.
type countingServer struct {
	*httptest.Server
	ok, failed atomic.Int64
}

func newCountingServer(t *testing.T) *countingServer {
	s := &countingServer{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// A spread of latencies over several histogram buckets: 0.2 to about 6 ms.
		time.Sleep(time.Duration(200+rand.IntN(2000)+rand.IntN(2)*rand.IntN(4000)) * time.Microsecond)
		if r.URL.Path == "/fail" {
			s.failed.Add(1)
			w.WriteHeader(http.StatusInternalServerError)
			return
		}
		s.ok.Add(1)
	}))
	t.Cleanup(s.Close)
	return s
}

const realScript = `
import http from 'k6/http';
export const options = { vus: 6, duration: '5s' };
export default function () {
  http.get(__ENV.BASE + '/ok', { tags: { name: 'get-ok' } });
  if (__ITER % 10 === 0) {
    http.get(__ENV.BASE + '/fail', { tags: { name: 'get-fail' } });
  }
}
`

// runK6 runs the script over n parallel runners (k6 execution segments, one k6 process each,
// tagged runner=<i>) and returns the summaries and the recorded window, with the whole-second
// precision a Kubernetes status keeps.
func runK6(t *testing.T, prom *promtest.Server, base, testID string, n int, outputEnv ...string) ([]K6Summary, time.Time, time.Time) {
	t.Helper()
	start := time.Now().Truncate(time.Second)
	seq := "0"
	for i := 1; i <= n; i++ {
		seq += fmt.Sprintf(",%d/%d", i, n)
	}
	sums := make([]K6Summary, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			run := promtest.K6Run{Script: realScript, TestID: testID, Env: map[string]string{"BASE": base},
				Tags: map[string]string{"instance_id": fmt.Sprint(i)}, OutputEnv: map[string]string{}}
			for j := 0; j+1 < len(outputEnv); j += 2 {
				run.OutputEnv[outputEnv[j]] = outputEnv[j+1]
			}
			if n > 1 {
				run.Segment, run.Sequence = fmt.Sprintf("%d/%d:%d/%d", i, n, i+1, n), seq
			}
			s, err := ParseK6Summary(prom.RunK6(t, run))
			if err != nil {
				t.Error(err)
			}
			sums[i] = s
		}()
	}
	wg.Wait()
	end := time.Now().Truncate(time.Second)
	return sums, start, end
}

func within(got, want, rel float64) bool { return math.Abs(got-want) <= rel*math.Abs(want) }

// The bound of a percentile against the true order statistic, for k6's schema-3 histograms.
var schema3Bound = math.Pow(2, 1.0/8) - 1

// Story: k6 is run with stale markers (K6_PROMETHEUS_RW_STALE_MARKERS=true), which hide every
// series from instant queries once the run is over. The counts are still exact and the
// histograms still read to their last sample.
func TestRealK6WithStaleMarkers(t *testing.T) {
	prom := promtest.Start(t)
	srv := newCountingServer(t)
	sums, start, end := runK6(t, prom, srv.URL, "stale", 1, "K6_PROMETHEUS_RW_STALE_MARKERS", "true")
	r, err := Analyze(context.Background(), prom.API(t), Input{Experiment: "stale", TestID: "stale", Start: start, End: end, Scenarios: []string{"default"}})
	if err != nil {
		t.Fatal(err)
	}
	sc := r.Scenarios[0]
	if *sc.RequestStats.Requests != sums[0].Requests || *sc.Errors != sums[0].Failed {
		t.Errorf("requests/errors %d/%d, k6 %d/%d", *sc.RequestStats.Requests, *sc.Errors, sums[0].Requests, sums[0].Failed)
	}
	if sc.P95 == nil || !within(*sc.P95, sums[0].Duration["p(95)"], schema3Bound) || !within(*sc.Avg, sums[0].Duration["avg"], 0.01) {
		t.Errorf("p95 %v avg %v, k6 %v %v", deref(sc.P95), deref(sc.Avg), sums[0].Duration["p(95)"], sums[0].Duration["avg"])
	}
	for _, n := range r.Notes {
		if strings.Contains(n, "histogram holds") {
			t.Errorf("histogram and counter disagree: %s", n)
		}
	}
}

// Story: a performance engineer runs one k6 runner; perfexp's numbers are exactly k6's own
// counts, and its percentiles are within the native histogram's bucket error of k6's.
func TestRealK6OneRunnerMatchesItsSummary(t *testing.T) {
	prom := promtest.Start(t)
	srv := newCountingServer(t)
	sums, start, end := runK6(t, prom, srv.URL, "one-runner", 1)
	sum := sums[0]

	r, err := Analyze(context.Background(), prom.API(t), Input{Experiment: "one", TestID: "one-runner", Start: start, End: end, Scenarios: []string{"default"}})
	if err != nil {
		t.Fatal(err)
	}
	sc := r.Scenarios[0]
	if got := *sc.RequestStats.Requests; got != sum.Requests || got != srv.ok.Load()+srv.failed.Load() {
		t.Errorf("requests = %d, k6 summary %d, server served %d", got, sum.Requests, srv.ok.Load()+srv.failed.Load())
	}
	if got := *sc.Errors; got != sum.Failed || got != srv.failed.Load() {
		t.Errorf("errors = %d, k6 summary %d, server failed %d", got, sum.Failed, srv.failed.Load())
	}
	if got := *sc.Iterations; got != sum.Iterations {
		t.Errorf("iterations = %d, k6 summary %d", got, sum.Iterations)
	}
	if !within(*sc.Avg, sum.Duration["avg"], 0.01) {
		t.Errorf("avg = %.4f ms, k6 %.4f ms: more than 1%% apart", *sc.Avg, sum.Duration["avg"])
	}
	for _, p := range []struct {
		name string
		got  *float64
	}{{"p(50)", sc.P50}, {"p(75)", sc.P75}, {"p(90)", sc.P90}, {"p(95)", sc.P95}, {"p(99)", sc.P99}} {
		want := sum.Duration[p.name]
		if !within(*p.got, want, schema3Bound) {
			t.Errorf("%s = %.4f ms, k6 %.4f ms: beyond the bucket bound of %.2f%%", p.name, *p.got, want, 100*schema3Bound)
		}
		t.Logf("%s: perfexp %.4f ms, k6 %.4f ms (%+.2f%%)", p.name, *p.got, want, 100*(*p.got/want-1))
	}
	if *sc.Max < sum.Duration["max"] || *sc.Max > sum.Duration["max"]*(1+schema3Bound) {
		t.Errorf("max = %.4f ms, k6 %.4f: not in [max, max*2^(1/8)]", *sc.Max, sum.Duration["max"])
	}
	if r.LatencyErrorBound == nil || !within(*r.LatencyErrorBound, schema3Bound, 1e-9) {
		t.Errorf("latency error bound = %v, want %.4f", r.LatencyErrorBound, schema3Bound)
	}
	t.Logf("%d requests, %d failed, avg %.4f ms (k6 %.4f), %d queries", *sc.RequestStats.Requests, *sc.Errors, *sc.Avg, sum.Duration["avg"], r.PrometheusQueries)
}

// Story: the load is split over three k6 pods. perfexp merges their histograms: counts are the
// exact sums of the three summaries, the average is the request-weighted average, and every
// merged percentile lies between the runners' own (a percentile of a mixture does), widened
// by the bucket bound.
func TestRealK6ThreeParallelRunnersMerge(t *testing.T) {
	prom := promtest.Start(t)
	srv := newCountingServer(t)
	sums, start, end := runK6(t, prom, srv.URL, "three-runners", 3)

	r, err := Analyze(context.Background(), prom.API(t), Input{Experiment: "three", TestID: "three-runners", Start: start, End: end, Scenarios: []string{"default"}})
	if err != nil {
		t.Fatal(err)
	}
	sc := r.Scenarios[0]
	var reqs, failed int64
	var weighted float64
	for _, s := range sums {
		reqs += s.Requests
		failed += s.Failed
		weighted += s.Duration["avg"] * float64(s.Requests)
	}
	if *sc.RequestStats.Requests != reqs || *sc.Errors != failed {
		t.Errorf("requests/errors = %d/%d, sum of summaries %d/%d", *sc.RequestStats.Requests, *sc.Errors, reqs, failed)
	}
	if served := srv.ok.Load() + srv.failed.Load(); reqs != served {
		t.Errorf("summaries count %d requests, the server served %d", reqs, served)
	}
	if avg := weighted / float64(reqs); !within(*sc.Avg, avg, 0.01) {
		t.Errorf("avg = %.4f ms, weighted k6 average %.4f ms", *sc.Avg, avg)
	}
	for _, p := range []struct {
		name string
		got  *float64
	}{{"p(50)", sc.P50}, {"p(95)", sc.P95}, {"p(99)", sc.P99}} {
		lo, hi := math.Inf(1), math.Inf(-1)
		for _, s := range sums {
			lo, hi = math.Min(lo, s.Duration[p.name]), math.Max(hi, s.Duration[p.name])
		}
		if *p.got < lo*(1-schema3Bound) || *p.got > hi*(1+schema3Bound) {
			t.Errorf("merged %s = %.4f ms, runners' between %.4f and %.4f ms", p.name, *p.got, lo, hi)
		}
	}
	if len(sc.Requests) != 2 || sc.Requests[0].Name != "get-ok" || sc.Requests[1].Name != "get-fail" {
		t.Fatalf("request names = %+v", sc.Requests)
	}
	if *sc.Requests[1].Errors != failed || *sc.Requests[1].ErrorPercent != 100 {
		t.Errorf("get-fail: %d errors (%.1f%%), want %d (100%%)", *sc.Requests[1].Errors, *sc.Requests[1].ErrorPercent, failed)
	}
	if r.Validity != "Invalid" {
		t.Errorf("validity = %s: %.1f%% errors is above the default 5%%", r.Validity, *sc.ErrorPercent)
	}
	notes, compared := CrossCheck(r, map[string]K6Summary{"default-0.json": sums[0], "default-1.json": sums[1], "default-2.json": sums[2], "warm-up-0.json": {Requests: 7}})
	if len(notes) > 0 || compared != 3 {
		t.Errorf("cross-check of %d summaries: %v", compared, notes)
	}
}
