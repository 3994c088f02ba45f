package load_test

import (
	"fmt"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/testenv"
)

type countingTransport struct {
	n    *atomic.Int64
	next http.RoundTripper
}

func (c countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	c.n.Add(1)
	return c.next.RoundTrip(r)
}

// BenchmarkRunWhileLoadRuns measures one call of Run on a real API server while the load runs:
// 4 scenarios of 3 pods each, every pod running. Every reconcile of a Running experiment costs
// this; the API requests per call are reported too (the client reads the API server directly,
// as an uncached client would: the manager's cache makes most of them local reads).
func BenchmarkRunWhileLoadRuns(b *testing.B) {
	env := testenv.Start(b)
	var requests atomic.Int64
	cfg := rest.CopyConfig(env.Config)
	cfg.QPS = -1
	cfg.WrapTransport = func(rt http.RoundTripper) http.RoundTripper { return countingTransport{&requests, rt} }
	c, err := client.New(cfg, client.Options{Scheme: env.Scheme})
	if err != nil {
		b.Fatal(err)
	}
	f := newFixture(b, &testenv.Env{Config: cfg, Client: c, Scheme: env.Scheme}, "bench")
	var scenarios []perfexpv1alpha1.Scenario
	for i := 0; i < 4; i++ {
		s := vusScenario(fmt.Sprintf("s%d", i), 6, time.Hour)
		s.Parallelism = 3
		scenarios = append(scenarios, s)
	}
	exp := f.experiment("bench", scenarios)
	if _, err := f.r.Run(b.Context(), exp); err != nil {
		b.Fatal(err)
	}
	now := time.Now()
	for _, s := range scenarios {
		job := f.job(exp, s.Name)
		for i := 0; i < 3; i++ {
			f.runPod(job, i, now)
		}
	}
	requests.Store(0)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		res, err := f.r.Run(b.Context(), exp)
		if err != nil || res.Done || res.Failure != nil {
			b.Fatalf("Run() = %+v, %v", res, err)
		}
	}
	b.ReportMetric(float64(requests.Load())/float64(b.N), "requests/op")
}
