package analyzer_test

import (
	"context"
	"errors"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	promv1 "github.com/prometheus/client_golang/api/prometheus/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/access"
	"github.com/perfexp/perfexp/internal/analyzer"
	"github.com/perfexp/perfexp/internal/testenv"
)

// spec.analysis.prometheusURL is a request the operator sends from its own network position:
// a URL outside the operator's allow-list fails the analysis with its reason, and no client
// is ever made for it.
func TestAnalyzerRefusesPrometheusURLs(t *testing.T) {
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name    string
		url     string
		allowed []string
		refused bool
	}{
		{name: "the operator's own Prometheus", url: "http://prometheus.monitoring:9090/"},
		{name: "cloud metadata endpoint", url: "http://169.254.169.254/latest/meta-data/", refused: true},
		{name: "listed exactly", url: "http://thanos.monitoring:9090", allowed: []string{"http://thanos.monitoring:9090/"}},
		{name: "listed by prefix", url: "http://thanos.monitoring:9090/tenant-a", allowed: []string{"http://thanos.monitoring:9090/*"}},
		{name: "a prefix does not reach another host", url: "http://thanos.monitoring:9090.evil.example/", allowed: []string{"http://thanos.monitoring:9090/*"}, refused: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var dialled []string
			a := &analyzer.PrometheusAnalyzer{
				PrometheusURL:         "http://prometheus.monitoring:9090",
				AllowedPrometheusURLs: tt.allowed,
				Clock:                 clocktesting.NewFakePassiveClock(now),
				NewAPI: func(url string) (promv1.API, error) {
					dialled = append(dialled, url)
					return nil, errors.New("stop here: the URL was accepted")
				},
			}
			exp := &perfexpv1alpha1.PerfExperiment{}
			exp.Spec.Analysis = &perfexpv1alpha1.Analysis{PrometheusURL: tt.url}
			exp.Status.Window = &perfexpv1alpha1.Window{
				Start: &metav1.Time{Time: now.Add(-time.Hour)}, End: &metav1.Time{Time: now.Add(-30 * time.Minute)}}
			res, err := a.Analyze(context.Background(), exp, nil)
			if err != nil {
				t.Fatal(err)
			}
			if !tt.refused {
				if res.Failure == nil || res.Failure.Reason != perfexpv1alpha1.ReasonNoPrometheus || len(dialled) != 1 {
					t.Fatalf("an allowed URL was not used: %+v, dialled %v", res.Failure, dialled)
				}
				return
			}
			if res.Failure == nil || res.Failure.Reason != perfexpv1alpha1.ReasonPrometheusURLNotAllowed || !strings.Contains(res.Failure.Message, tt.url) {
				t.Fatalf("Analyze: %+v; want %s naming %s", res.Failure, perfexpv1alpha1.ReasonPrometheusURLNotAllowed, tt.url)
			}
			if len(dialled) != 0 {
				t.Fatalf("a client was made for a refused URL: %v", dialled)
			}

			// The custom queries are tried when the experiment leaves the queue, before
			// Analyze ever runs: that trial obeys the same allow-list.
			exp.Spec.Analysis.Queries = []perfexpv1alpha1.CustomQuery{{Name: "up", Query: "up"}}
			res, err = a.CheckQueries(context.Background(), exp)
			if err != nil {
				t.Fatal(err)
			}
			if res.Failure == nil || res.Failure.Reason != perfexpv1alpha1.ReasonPrometheusURLNotAllowed || len(dialled) != 0 {
				t.Fatalf("CheckQueries: %+v, dialled %v; want %s and no client", res.Failure, dialled, perfexpv1alpha1.ReasonPrometheusURLNotAllowed)
			}
		})
	}
}

// The analysis reads observed namespaces after the environment is restored: they are checked
// again then, so a namespace that opted out meanwhile is not read.
func TestAnalyzerRefusesObservedNamespaces(t *testing.T) {
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	reader := fake.NewClientBuilder().WithScheme(testenv.Scheme()).WithObjects(
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "db"}}).Build()
	a := &analyzer.PrometheusAnalyzer{
		PrometheusURL: "http://prometheus.monitoring:9090",
		Clock:         clocktesting.NewFakePassiveClock(now),
		Access:        &access.Rules{Reader: reader},
		NewAPI: func(string) (promv1.API, error) {
			t.Fatal("Prometheus was queried for an experiment reading a refused namespace")
			return nil, nil
		},
	}
	exp := &perfexpv1alpha1.PerfExperiment{ObjectMeta: metav1.ObjectMeta{Namespace: "perf", Name: "e"}}
	exp.Spec.Analysis = &perfexpv1alpha1.Analysis{Observe: []perfexpv1alpha1.ObservedWorkloads{{Namespace: "db"}}}
	exp.Status.Window = &perfexpv1alpha1.Window{
		Start: &metav1.Time{Time: now.Add(-time.Hour)}, End: &metav1.Time{Time: now.Add(-30 * time.Minute)}}
	res, err := a.Analyze(context.Background(), exp, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Failure == nil || res.Failure.Reason != perfexpv1alpha1.ReasonNamespaceNotAllowed || !strings.Contains(res.Failure.Message, "namespace db: the namespace has not opted in") {
		t.Fatalf("Analyze: %+v; want NamespaceNotAllowed naming db", res.Failure)
	}
}

// A Prometheus that accepts connections and never answers must not hold the reconciler: each
// request gives up after the analyzer's timeout, and the analysis waits to retry later, as for
// a Prometheus that is down.
func TestAnalyzerGivesUpOnAHungPrometheus(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var held []net.Conn
	var mu sync.Mutex
	t.Cleanup(func() {
		_ = l.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range held {
			_ = c.Close()
		}
	})
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			held = append(held, c) // read nothing, answer nothing
			mu.Unlock()
		}
	}()
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	url := "http://" + l.Addr().String()
	a := &analyzer.PrometheusAnalyzer{
		Client:        fake.NewClientBuilder().WithScheme(testenv.Scheme()).Build(),
		PrometheusURL: url,
		Clock:         clocktesting.NewFakePassiveClock(now),
		Timeout:       300 * time.Millisecond,
	}
	exp := &perfexpv1alpha1.PerfExperiment{ObjectMeta: metav1.ObjectMeta{Namespace: "perf", Name: "e"}}
	exp.Spec.Load.Scenarios = []perfexpv1alpha1.Scenario{{Name: "main"}}
	exp.Status.TestID = "e-1"
	exp.Status.Window = &perfexpv1alpha1.Window{
		Start: &metav1.Time{Time: now.Add(-time.Hour)}, End: &metav1.Time{Time: now.Add(-30 * time.Minute)}}
	began := time.Now()
	res, err := a.Analyze(context.Background(), exp, nil)
	took := time.Since(began)
	if err != nil {
		t.Fatal(err)
	}
	if res.Failure != nil || res.RequeueAfter <= 0 || !strings.Contains(res.Waiting, "to answer") {
		t.Fatalf("Analyze: %+v; want a wait for Prometheus to answer", res)
	}
	if took > 5*time.Second {
		t.Fatalf("Analyze took %s against a hung Prometheus with a 300ms timeout", took)
	}
}
