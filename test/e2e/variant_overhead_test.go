//go:build e2e

package e2e

import (
	"testing"
	"time"

	"github.com/perfexp/perfexp/internal/step"
	"github.com/perfexp/perfexp/test/e2e/framework"
)

// BenchmarkVariantOverhead measures what Preparing and Restoring cost beyond the rollouts on
// the local cluster: one op removes the CPU limit of the four demo services, waits for the
// real rollouts, restores and waits again. The timer runs only inside perfexp's calls (reads,
// dry runs, patches, rollout checks), never while the rollouts run between them; the
// rollouts' own time is reported as rollout-s/op. Run it with:
//
//	go test -tags e2e -run '^$' -bench VariantOverhead -benchtime 5x ./test/e2e/
func BenchmarkVariantOverhead(b *testing.B) {
	framework.RequireCluster(b)
	ns := demoNamespace(b, "e2e-variant-bench")
	var reqs requests
	c := clusterClient(b, &reqs)
	e := newEnvironment(c)
	ctx := b.Context()
	var calls int
	var wall, inside time.Duration
	b.ResetTimer()
	b.StopTimer()
	for i := 0; i < b.N; i++ {
		exp := noCPULimits(ns)
		for _, f := range []func() (step.Result, error){
			func() (step.Result, error) { return e.Prepare(ctx, exp) },
			func() (step.Result, error) { return e.Restore(ctx, exp) },
		} {
			tm := untilDone(b, "Prepare/Restore", f, 5*time.Minute)
			calls += tm.calls
			wall += tm.wall
			inside += tm.inside
		}
	}
	b.ReportMetric(float64(calls)/float64(b.N), "calls/op")
	b.ReportMetric(float64(reqs.n.Load())/float64(b.N), "requests/op")
	b.ReportMetric((wall-inside).Seconds()/float64(b.N), "rollout-s/op")
}
