//go:build thanos_e2e

package thanos

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/api"
	promv1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/analysis"
	"github.com/perfexp/perfexp/internal/analysis/promtest"
	"github.com/perfexp/perfexp/internal/analyzer"
	"github.com/perfexp/perfexp/internal/result"
	"github.com/perfexp/perfexp/internal/testenv"
	"github.com/perfexp/perfexp/internal/testexp"
)

// The bound of a percentile read from k6's schema-3 native histograms (buckets 2^(1/8) wide).
var schema3Bound = math.Pow(2, 1.0/8) - 1

// Two request names with different latencies and a few failures, at a constant arrival rate.
const script = `import http from 'k6/http';
export const options = { scenarios: { main: { executor: 'constant-arrival-rate', rate: 40, timeUnit: '1s', duration: '15s', preAllocatedVUs: 20 } } };
export default function () {
  http.get(__ENV.BASE + '/fast', { tags: { name: 'fast' } });
  http.get(__ENV.BASE + '/slow', { tags: { name: 'slow' } });
}
`

// app answers /fast in 2-8 ms and /slow in 20-60 ms, failing 3 % of the slow ones.
func app(t *testing.T) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		lo, hi := 2, 8
		if r.URL.Path == "/slow" {
			lo, hi = 20, 60
			if rand.IntN(100) < 3 {
				http.Error(w, "failed", http.StatusInternalServerError)
				return
			}
		}
		time.Sleep(time.Duration(lo)*time.Millisecond + rand.N(time.Duration(hi-lo)*time.Millisecond))
		_, _ = w.Write([]byte("ok"))
	}))
	t.Cleanup(srv.Close)
	return srv
}

func newAPI(t *testing.T, u string) promv1.API {
	t.Helper()
	c, err := api.NewClient(api.Config{Address: u})
	if err != nil {
		t.Fatal(err)
	}
	return promv1.NewAPI(c)
}

func within(got, want, rel float64) bool { return math.Abs(got-want) <= rel*math.Abs(want) }

func deref(p *float64) float64 {
	if p == nil {
		return math.NaN()
	}
	return *p
}

// One k6 run written at the same time to a plain Prometheus and to Thanos Receive (two
// replicas, replication factor 2), read by perfexp's analysis from both: through Thanos Query
// Frontend -> Query (deduplicating the replicas) -> Receive, and from Prometheus directly.
// The counts must be equal exactly (and k6's own), the percentiles within the histogram's
// bound, and Thanos may not take more queries than Prometheus.
func TestTheSameRunThroughThanosAndPrometheus(t *testing.T) {
	prom := promtest.Start(t)
	st := startStack(t)
	tee := newTeeWriter(t, prom.WriteURL, st.WriteURLs)
	base := app(t)

	const testID = "thanos-run"
	start := time.Now().Truncate(time.Second)
	raw := (&promtest.Server{WriteURL: tee.URL}).RunK6(t, promtest.K6Run{Script: script, TestID: testID, Env: map[string]string{"BASE": base.URL}})
	end := time.Now().Truncate(time.Second)
	sum, err := analysis.ParseK6Summary(raw)
	if err != nil {
		t.Fatal(err)
	}
	if tee.refusals.Load() != 0 || tee.writes.Load() == 0 {
		t.Fatalf("%d remote writes, %d refused by Prometheus or Receive", tee.writes.Load(), tee.refusals.Load())
	}
	t.Logf("k6: %d requests, %d failed, p95 %.3f ms; %d remote writes to both backends", sum.Requests, sum.Failed, sum.Duration["p(95)"], tee.writes.Load())

	// Replication is real: without deduplication every series is there once per replica.
	series := fmt.Sprintf(`k6_http_reqs_total{testid=%q}`, testID)
	perReplica := instant(t, st.QueryURL, fmt.Sprintf(`count by (%s) (%s)`, replicaLabel, series), url.Values{"dedup": {"false"}})
	promSeries := instant(t, prom.URL, fmt.Sprintf(`count(%s)`, series), nil)
	deduped := instant(t, st.QueryURL, fmt.Sprintf(`count(%s)`, series), nil)
	if len(perReplica) != 2 || len(promSeries) != 1 || len(deduped) != 1 {
		t.Fatalf("series per replica %v, in Prometheus %v, deduplicated %v", perReplica, promSeries, deduped)
	}
	for _, s := range perReplica {
		if s.Value != promSeries[0].Value {
			t.Errorf("replica %s holds %v request series, Prometheus %v", s.Metric[replicaLabel], s.Value, promSeries[0].Value)
		}
	}
	if deduped[0].Value != promSeries[0].Value {
		t.Errorf("deduplicated: %v request series, Prometheus %v", deduped[0].Value, promSeries[0].Value)
	}
	t.Logf("request series: %v in Prometheus, %v in each of %d Receive replicas, %v deduplicated", promSeries[0].Value, perReplica[0].Value, len(perReplica), deduped[0].Value)

	in := analysis.Input{Experiment: "thanos", TestID: testID, Start: start, End: end, Scenarios: []string{"main"}}
	backends := []struct {
		name  string
		proxy *countingProxy
		pids  []int
	}{
		{"prometheus", newCountingProxy(t, prom.URL), []int{prom.Pid}},
		{"thanos", newCountingProxy(t, st.FrontendURL), st.Pids},
	}
	results := map[string]*result.Result{}
	asked := map[string]int64{}
	const rounds = 3
	for round := range rounds {
		for _, b := range backends {
			before, cpu := b.proxy.queries.Load(), 0.0
			for _, pid := range b.pids {
				cpu -= cpuSeconds(t, pid)
			}
			began := time.Now()
			r, err := analysis.Analyze(t.Context(), newAPI(t, b.proxy.URL), in)
			took := time.Since(began)
			if err != nil {
				t.Fatalf("%s: %v", b.name, err)
			}
			for _, pid := range b.pids {
				cpu += cpuSeconds(t, pid)
			}
			results[b.name], asked[b.name] = r, b.proxy.queries.Load()-before
			t.Logf("round %d, %s: analysis %v, %d queries (%d counted by the proxy), backend CPU %.2f s", round+1, b.name, took.Round(time.Millisecond), r.PrometheusQueries, asked[b.name], cpu)
		}
	}
	p, th := results["prometheus"], results["thanos"]
	for name, r := range results {
		if r.Validity != perfexpv1alpha1.Valid || len(r.BackendWarnings) != 0 || r.CountsInexact {
			t.Errorf("%s: validity %s %v, warnings %v, inexact %v", name, r.Validity, r.InvalidReasons, r.BackendWarnings, r.CountsInexact)
		}
		if len(r.Scenarios) != 1 || r.Scenarios[0].RequestStats.Requests == nil || r.Scenarios[0].Errors == nil {
			t.Fatalf("%s: scenarios %+v", name, r.Scenarios)
		}
		sc := r.Scenarios[0]
		if *sc.RequestStats.Requests != sum.Requests || *sc.Errors != sum.Failed {
			t.Errorf("%s: %d requests, %d errors; k6 counted %d, %d", name, *sc.RequestStats.Requests, *sc.Errors, sum.Requests, sum.Failed)
		}
		if !within(deref(sc.P95), sum.Duration["p(95)"], schema3Bound) {
			t.Errorf("%s: p95 %.3f ms, k6 %.3f ms: beyond the bucket bound of %.2f %%", name, deref(sc.P95), sum.Duration["p(95)"], 100*schema3Bound)
		}
		t.Logf("%s: %d requests, %d errors, p95 %.3f ms (k6 %.3f), p99 %.3f ms, %d request names", name, *sc.RequestStats.Requests, *sc.Errors, deref(sc.P95), sum.Duration["p(95)"], deref(sc.P99), len(sc.Requests))
	}
	ps, ts := p.Scenarios[0], th.Scenarios[0]
	if *ps.RequestStats.Requests != *ts.RequestStats.Requests || *ps.Errors != *ts.Errors || *ps.Iterations != *ts.Iterations {
		t.Errorf("Prometheus %d requests %d errors %d iterations, Thanos %d %d %d", *ps.RequestStats.Requests, *ps.Errors, *ps.Iterations, *ts.RequestStats.Requests, *ts.Errors, *ts.Iterations)
	}
	if !within(deref(ts.P95), deref(ps.P95), schema3Bound) {
		t.Errorf("p95 through Thanos %.3f ms, Prometheus %.3f ms: beyond the bucket bound", deref(ts.P95), deref(ps.P95))
	}
	t.Logf("p95 through Thanos %.4f ms, Prometheus %.4f ms (%+.3f %%)", deref(ts.P95), deref(ps.P95), 100*(deref(ts.P95)/deref(ps.P95)-1))
	// The per-interval data single-run comparisons judge: the same, interval by interval.
	pi, _ := json.Marshal(p.Intervals)
	ti, _ := json.Marshal(th.Intervals)
	if p.Intervals == nil || len(p.Intervals.Series) == 0 || string(pi) != string(ti) {
		t.Errorf("interval data through Thanos:\n%s\nfrom Prometheus:\n%s", ti, pi)
	}
	t.Logf("interval data: %d series of %v s intervals, the same through Thanos", len(p.Intervals.Series), p.Intervals.StepSeconds)
	if th.PrometheusQueries > p.PrometheusQueries || asked["thanos"] > asked["prometheus"] {
		t.Errorf("%d queries through Thanos (%d at its frontend), %d against Prometheus (%d)", th.PrometheusQueries, asked["thanos"], p.PrometheusQueries, asked["prometheus"])
		onlyIn(t, "Thanos", backends[1].proxy.Asked(0), backends[0].proxy.Asked(0))
		onlyIn(t, "Prometheus", backends[0].proxy.Asked(0), backends[1].proxy.Asked(0))
	}

	// The test can fail: read without deduplication, the replicas double every count.
	t.Run("without deduplication the replicas are counted twice", func(t *testing.T) {
		raw := newCountingProxy(t, st.QueryURL)
		raw.Form = url.Values{"dedup": {"false"}}
		r, err := analysis.Analyze(t.Context(), newAPI(t, raw.URL), in)
		if err != nil {
			t.Fatal(err)
		}
		if got := r.Scenarios[0].RequestStats.Requests; got == nil || *got != 2*sum.Requests {
			t.Errorf("without deduplication %v requests, want twice k6's %d", got, sum.Requests)
		} else {
			t.Logf("without deduplication: %d requests (k6: %d)", *got, sum.Requests)
		}
	})

	// Query Frontend's default, --query-range.align-range-with-step, moves every range query
	// to multiples of its step: the interval series are read off the window's grid, a series
	// looks irregular at the moved boundary and costs a query more (the totals, read by
	// instant queries at the window's edges, stay exact). docs/backends.md says to turn it off.
	t.Run("a frontend that aligns ranges to the step moves the interval grid", func(t *testing.T) {
		aligned := newCountingProxy(t, st.startFrontend(t, "query-frontend-aligned"))
		r, err := analysis.Analyze(t.Context(), newAPI(t, aligned.URL), in)
		if err != nil {
			t.Fatal(err)
		}
		if got := r.Scenarios[0].RequestStats.Requests; got == nil || *got != sum.Requests {
			t.Errorf("through the aligning frontend %v requests, k6 %d", got, sum.Requests)
		}
		ai, _ := json.Marshal(r.Intervals)
		if start.Unix()%15 != 0 && (r.PrometheusQueries <= p.PrometheusQueries || string(ai) == string(pi)) {
			t.Errorf("through the aligning frontend %d queries (Prometheus %d), the same interval data: the grid did not move", r.PrometheusQueries, p.PrometheusQueries)
		}
		t.Logf("through the aligning frontend: %d queries, Prometheus %d, %d requests; interval data the same as Prometheus': %v", r.PrometheusQueries, p.PrometheusQueries, *r.Scenarios[0].RequestStats.Requests, string(ai) == string(pi))
	})

	// The operator's analyzer, as the Analyzing phase calls it, pointed at the Query Frontend.
	t.Run("the analyzer reads Thanos as it reads Prometheus", func(t *testing.T) {
		exp := testexp.New("perf", "through-thanos", testexp.WithScenarios(testexp.Constant("main", 1, time.Minute)))
		exp.Status = perfexpv1alpha1.PerfExperimentStatus{Phase: perfexpv1alpha1.PhaseAnalyzing, TestID: testID,
			Window: &perfexpv1alpha1.Window{Start: &metav1.Time{Time: start}, End: &metav1.Time{Time: end}}}
		c := fake.NewClientBuilder().WithScheme(testenv.Scheme()).WithObjects(exp.DeepCopy()).Build()
		a := &analyzer.PrometheusAnalyzer{Client: c, PrometheusURL: st.FrontendURL, Clock: clocktesting.NewFakePassiveClock(end.Add(time.Minute))}
		res, err := a.Analyze(t.Context(), exp, nil)
		if err != nil {
			t.Fatal(err)
		}
		r := exp.Status.Results
		if !res.Done || r == nil || r.Validity != perfexpv1alpha1.Valid || len(r.BackendWarnings) != 0 || len(r.Scenarios) != 1 {
			t.Fatalf("got %+v, results %+v", res, r)
		}
		if got := r.Scenarios[0].Requests; got == nil || *got != sum.Requests {
			t.Errorf("%v requests in the status, k6 counted %d", got, sum.Requests)
		}
		cm := &corev1.ConfigMap{}
		if err := c.Get(t.Context(), client.ObjectKey{Namespace: exp.Namespace, Name: exp.Status.ReportRef.Name}, cm); err != nil {
			t.Fatal(err)
		}
		all, _ := json.Marshal(cm.Data)
		if !strings.Contains(string(all), "measured window (exact;") {
			t.Errorf("the report does not call the counts exact")
		}
		t.Logf("status: %d requests, p95 %s ms, validity %s", *r.Scenarios[0].Requests, r.Scenarios[0].P95, r.Validity)
	})
}

// instant runs one instant query with extra form values and returns its vector.
func instant(t *testing.T, base, query string, extra url.Values) model.Vector {
	t.Helper()
	form := url.Values{"query": {query}}
	for k, v := range extra {
		form[k] = v
	}
	var body struct {
		Status string          `json:"status"`
		Data   json.RawMessage `json:"data"`
	}
	if err := getJSON(base+"/api/v1/query?"+form.Encode(), &body); err != nil {
		t.Fatal(err)
	}
	var data struct {
		Result model.Vector `json:"result"`
	}
	if err := json.Unmarshal(body.Data, &data); err != nil {
		t.Fatal(err)
	}
	return data.Result
}

// onlyIn logs the requests asked more often of one backend than of the other.
func onlyIn(t *testing.T, name string, these, those []string) {
	t.Helper()
	n := map[string]int{}
	for _, q := range those {
		n[q]++
	}
	for _, q := range these {
		if n[q]--; n[q] < 0 {
			t.Logf("asked of %s only: %s", name, q)
		}
	}
}
