package controllers_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime/debug"
	"sync/atomic"
	"testing"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/analyzer"
	"github.com/perfexp/perfexp/internal/testenv"
)

// endlessProm answers every query with an instant vector that never ends, as a custom query
// over a label with millions of values would (sum by (request_id) ...), and counts the bytes
// the client took before hanging up.
func endlessProm(t *testing.T) (*httptest.Server, *atomic.Int64) {
	var sent atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		n, err := io.WriteString(w, `{"status":"success","data":{"resultType":"vector","result":[`)
		sent.Add(int64(n))
		for i := 0; err == nil; i++ {
			n, err = fmt.Fprintf(w, `{"metric":{"request_id":"%012d"},"value":[1700000000,"1"]},`, i)
			sent.Add(int64(n))
		}
	}))
	t.Cleanup(srv.Close)
	return srv, &sent
}

// A custom query whose answer never ends is tried before the run while another queue's
// experiment goes through its phases: the operator reads at most its cap of the answer, its
// heap stays far below the manager's 256 MiB limit, both experiments start and the other one
// restores and succeeds. Before the
// caps the pre-run check read the answer for its whole 10 s, gigabytes.
func TestHugeAnswerBeforeTheRun(t *testing.T) {
	env := testenv.Start(t)
	env.Namespace(t, leaseNamespace)
	c := env.Client
	prom, sent := endlessProm(t)
	ns := env.Namespace(t, "huge-answer")
	lab := newLab()
	startOperatorWith(t, env, lab, lab, labWithQueries{lab: lab, queries: &analyzer.PrometheusAnalyzer{Client: c, PrometheusURL: prom.URL}})

	// Memory the package's earlier tests freed but the runtime still holds would count in the
	// peak below (a whole-package run read 327 MiB, the test alone 176): hand it back first.
	debug.FreeOSMemory()
	rssFromHere := testenv.ResetPeakRSS()
	stop := make(chan struct{})
	peak := make(chan uint64)
	go func() { peak <- testenv.PeakHeap(stop) }()

	greedy := experiment(ns, "greedy", "greedy", 0)
	greedy.Spec.Analysis = &perfexpv1alpha1.Analysis{Queries: []perfexpv1alpha1.CustomQuery{
		{Name: "by-request", Query: `sum by (request_id) (rate(http_requests_total{namespace="{{.Namespace}}"}[{{.Window}}]))`},
	}}
	mustCreate(t, c, greedy)
	// Another environment: one environment runs one experiment at a time, whatever the queue.
	other := experiment(ns, "other", "other", 0)
	other.Spec.TargetNamespace = env.Namespace(t, "huge-answer-other")
	mustCreate(t, c, other)
	waitPhase(t, c, ns, "other", perfexpv1alpha1.PhaseRunning)
	waitPhase(t, c, ns, "greedy", perfexpv1alpha1.PhaseRunning)
	lab.finishLoad("other")
	waitPhase(t, c, ns, "other", perfexpv1alpha1.PhaseSucceeded) // restored, its queue released
	close(stop)

	heap := <-peak
	t.Logf("the fake Prometheus sent %.1f MiB; the test process' heap peaked at %.1f MiB", float64(sent.Load())/(1<<20), float64(heap)/(1<<20))
	if heap > 128<<20 {
		t.Errorf("the heap peaked at %.1f MiB while the answer was read; want it far below the manager's 256 MiB", float64(heap)/(1<<20))
	}
	// The resident set of the whole test process (the operator, the fake Prometheus, the
	// test's clients) bounds the operator's own: under the manager's 256 MiB limit.
	if rss, ok := testenv.PeakRSS(); ok && rssFromHere {
		t.Logf("the test process' resident set peaked at %.1f MiB", float64(rss)/(1<<20))
		if rss > 256<<20 {
			t.Errorf("the test process' resident set peaked at %.1f MiB; the manager's limit is 256 MiB", float64(rss)/(1<<20))
		}
	}
}
