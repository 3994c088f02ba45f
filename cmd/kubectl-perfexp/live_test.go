package main

import (
	"math"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/analysis/promtest"
)

func TestServiceProxyPath(t *testing.T) {
	tests := []struct {
		url       string
		want      string
		proxiable bool
	}{
		{"http://prometheus-operated.monitoring:9090", "/api/v1/namespaces/monitoring/services/prometheus-operated:9090/proxy", true},
		{"http://prometheus.monitoring.svc:9090/", "/api/v1/namespaces/monitoring/services/prometheus:9090/proxy", true},
		{"http://prometheus.monitoring.svc.cluster.local:9090/prom", "/api/v1/namespaces/monitoring/services/prometheus:9090/proxy/prom", true},
		{"https://thanos-query.obs", "/api/v1/namespaces/obs/services/https:thanos-query:443/proxy", true},
		{"http://thanos.obs", "/api/v1/namespaces/obs/services/thanos:80/proxy", true},
		{"http://10.244.0.1:9090", "", false},
		{"http://localhost:9090", "", false},
		{"https://prometheus.example.com", "", false},
	}
	for _, tc := range tests {
		t.Run(tc.url, func(t *testing.T) {
			u, err := url.Parse(tc.url)
			if err != nil {
				t.Fatal(err)
			}
			got, ok := serviceProxyPath(u)
			if ok != tc.proxiable || got != tc.want {
				t.Errorf("serviceProxyPath(%s) = %q, %v; want %q, %v", tc.url, got, ok, tc.want, tc.proxiable)
			}
		})
	}
}

func TestPrometheusURLFor(t *testing.T) {
	own := newExperiment("demo", "x")
	own.Spec.Analysis = &perfexpv1alpha1.Analysis{PrometheusURL: "http://thanos.obs:9090"}
	tests := []struct {
		name, flag string
		exp        *perfexpv1alpha1.PerfExperiment
		operator   string
		want       string
	}{
		{"the flag wins", "http://localhost:9090", own, "", "http://localhost:9090"},
		{"then the experiment's own", "", own, "http://10.244.0.1:9090", "http://thanos.obs:9090"},
		{"then the operator's", "", newExperiment("demo", "y"), "http://10.244.0.1:9090", "http://10.244.0.1:9090"},
		{"then the chart's default", "", newExperiment("demo", "y"), "", defaultPrometheusURL},
		{"none switches it off", noPrometheus, own, "", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := prometheusURLFor(tc.flag, tc.exp, tc.operator); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

// Through the service proxy, the plugin asks the API server (as the kubeconfig user) at the
// path that proxies to the Prometheus service; a fake API server checks path and credentials.
func TestLivePrometheusThroughServiceProxy(t *testing.T) {
	var mu sync.Mutex
	var paths []string
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		paths = append(paths, r.URL.Path)
		mu.Unlock()
		if r.Header.Get("Authorization") != "Bearer user-token" {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"status":"success","data":{"resultType":"vector","result":[{"metric":{},"value":[1700000000,"0.25"]}]}}`))
	}))
	defer api.Close()
	p, err := newLivePrometheus("http://prometheus-operated.monitoring:9090", &rest.Config{Host: api.URL, BearerToken: "user-token"})
	if err != nil {
		t.Fatal(err)
	}
	got := p.read(t.Context(), "run-1", time.Now())
	if got.Unavailable != "" || got.P95 == nil || *got.P95 != 0.25 {
		t.Fatalf("live stats %+v, want p95 0.25 s", got)
	}
	want := "/api/v1/namespaces/monitoring/services/prometheus-operated:9090/proxy/api/v1/query"
	if len(paths) != 3 || paths[0] != want {
		t.Errorf("asked %v, want 3 queries at %s", paths, want)
	}
}

// An unreachable Prometheus gives n/a with the reason, not an error that stops watch.
func TestLivePrometheusUnreachable(t *testing.T) {
	dead := httptest.NewServer(http.NotFoundHandler())
	addr := dead.URL
	dead.Close()
	p, err := newLivePrometheus(addr, nil)
	if err != nil {
		t.Fatal(err)
	}
	got := p.read(t.Context(), "run-1", time.Now())
	if !strings.HasPrefix(got.Unavailable, "Prometheus: ") || !strings.HasPrefix(got.String(), "p95 n/a, errors n/a (Prometheus: ") {
		t.Errorf("got %+v (%s), want n/a with the reason", got, got.String())
	}
}

// The live queries, run by a real Prometheus on k6-shaped series: the p95 of a known latency
// within the native histogram's bucket bound, the warm-up's slow requests left out, a run
// without failed requests at 0 % (not n/a), and a failing run's share of errors.
func TestLiveQueriesOnPrometheus(t *testing.T) {
	srv := promtest.Start(t)
	end := time.Now().Truncate(time.Second)
	start := end.Add(-3 * time.Minute)
	var series []promtest.Series
	// run writes one scenario's requests: rate per second, latency in seconds, a share failed.
	run := func(testID, scenario string, rate, latency, failedShare float64) {
		ok := map[string]string{"__name__": "k6_http_reqs_total", "testid": testID, "scenario": scenario, "expected_response": "true"}
		bad := map[string]string{"__name__": "k6_http_reqs_total", "testid": testID, "scenario": scenario, "expected_response": "false"}
		hist := map[string]string{"__name__": "k6_http_req_duration_seconds", "testid": testID, "scenario": scenario}
		h := promtest.NewNativeHistogram()
		okS, badS, histS := promtest.Series{Labels: ok}, promtest.Series{Labels: bad}, promtest.Series{Labels: hist}
		var n float64
		for ts := start; !ts.After(end); ts = ts.Add(5 * time.Second) {
			n += rate * 5
			obs := make([]float64, int(rate*5))
			for i := range obs {
				obs[i] = latency
			}
			h.Observe(obs...)
			okS.Floats = append(okS.Floats, promtest.Float{T: ts, V: n * (1 - failedShare)})
			badS.Floats = append(badS.Floats, promtest.Float{T: ts, V: n * failedShare})
			histS.Histograms = append(histS.Histograms, promtest.HistogramSample{T: ts, H: h.Snapshot()})
		}
		series = append(series, okS, histS)
		if failedShare > 0 {
			series = append(series, badS)
		}
	}
	run("clean", "checkout", 40, 0.2, 0)
	run("clean", "warm-up", 40, 5, 0)
	run("failing", "checkout", 50, 0.1, 0.1)
	srv.Write(t, series)

	p, err := newLivePrometheus(srv.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	// Schema 3 buckets grow by 2^(1/8): a quantile is off by at most that factor.
	bound := math.Pow(2, 1.0/8)
	tests := []struct {
		testID        string
		p95, errs, rq float64
	}{
		{"clean", 0.2, 0, 40},
		{"failing", 0.1, 0.1, 50},
	}
	for _, tc := range tests {
		t.Run(tc.testID, func(t *testing.T) {
			got := p.read(t.Context(), tc.testID, end)
			if got.Unavailable != "" || got.P95 == nil || got.ErrorRate == nil || got.RequestRate == nil {
				t.Fatalf("live stats %+v (%s), want every number", got, got.String())
			}
			if *got.P95 < tc.p95/bound || *got.P95 > tc.p95*bound {
				t.Errorf("p95 %.4f s, want %.4f s within the bucket bound", *got.P95, tc.p95)
			}
			if math.Abs(*got.ErrorRate-tc.errs) > 1e-9 {
				t.Errorf("error rate %v, want %v", *got.ErrorRate, tc.errs)
			}
			if math.Abs(*got.RequestRate-tc.rq) > 0.5 {
				t.Errorf("request rate %v, want %v", *got.RequestRate, tc.rq)
			}
		})
	}
	t.Run("a test id without samples reads n/a", func(t *testing.T) {
		got := p.read(t.Context(), "nothing", end)
		if got.Unavailable != "" || got.P95 != nil || got.RequestRate != nil || got.ErrorRate != nil {
			t.Errorf("got %+v, want every number absent", got)
		}
	})
}

// The operator's --prometheus-url is read from its Deployment, in either spelling of the flag;
// a Deployment of another app, or none readable, gives "".
func TestOperatorPrometheusURL(t *testing.T) {
	deployment := func(name string, labels map[string]string, args ...string) *appsv1.Deployment {
		return &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "perfexp-system", Name: name, Labels: labels},
			Spec: appsv1.DeploymentSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
				Containers: []corev1.Container{{Name: "sidecar"}, {Name: "manager", Args: args}}}}}}
	}
	ours := map[string]string{operatorLabel: "perfexp"}
	tests := []struct {
		name    string
		objects []client.Object
		want    string
	}{
		{"--flag=value", []client.Object{deployment("m", ours, "--leader-elect", "--prometheus-url=http://10.244.0.1:9090")}, "http://10.244.0.1:9090"},
		{"--flag value", []client.Object{deployment("m", ours, "--prometheus-url", "http://prometheus-operated.monitoring:9090")}, "http://prometheus-operated.monitoring:9090"},
		{"another app's flag", []client.Object{deployment("other", map[string]string{operatorLabel: "other"}, "--prometheus-url=http://x:9090")}, ""},
		{"no operator", nil, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := fake.NewClientBuilder().WithObjects(tc.objects...).Build()
			if got := operatorPrometheusURL(t.Context(), c); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}
