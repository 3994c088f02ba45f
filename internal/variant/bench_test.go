package variant

import (
	"fmt"
	"net/http"
	"sync/atomic"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/step"
)

type countingTransport struct {
	rt http.RoundTripper
	n  *atomic.Int64
}

func (c countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	c.n.Add(1)
	return c.rt.RoundTrip(r)
}

// BenchmarkPrepareRestore measures what perfexp itself spends on one experiment's environment
// beyond the rollouts: resolving, validating (dry runs), snapshotting, patching, checking the
// rollouts and restoring 20 Deployments, against a real kube-apiserver. Rollouts are made
// instant by writing the Deployments' status with the timer stopped, so what is timed is
// perfexp's own work and its API round trips: one Prepare that patches, one that finds the
// rollouts done, one Restore that restores and one that finds the rollouts done.
func BenchmarkPrepareRestore(b *testing.B) {
	te := startEnv(b)
	ns := te.Namespace(b, "bench")
	const workloads = 20
	for i := range workloads {
		create(b, te.Client, deployment(ns, fmt.Sprintf("svc-%02d", i), nil, service("app")))
	}
	rollOut(b, te.Client, ns)
	var n atomic.Int64
	cfg := rest.CopyConfig(te.Config)
	cfg.QPS = -1 // as the manager's config: no client-side rate limit
	cfg.WrapTransport = func(rt http.RoundTripper) http.RoundTripper { return countingTransport{rt: rt, n: &n} }
	c, err := client.New(cfg, client.Options{Scheme: te.Scheme})
	if err != nil {
		b.Fatal(err)
	}
	e := New(c, Options{})
	variant := &perfexpv1alpha1.Variant{Workloads: []perfexpv1alpha1.WorkloadChange{{
		WorkloadSelector: perfexpv1alpha1.WorkloadSelector{Selector: selectAll()},
		Resources:        &perfexpv1alpha1.ResourcesChange{RemoveLimits: []corev1.ResourceName{corev1.ResourceCPU}},
		Env:              &perfexpv1alpha1.EnvChange{Set: []perfexpv1alpha1.EnvVar{{Name: "HTTP_MAXPOOLSIZE", Value: "100"}}},
	}}}
	ctx := b.Context()
	var requests int64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		exp := experiment(b, te.Client, ns, fmt.Sprintf("bench-%d", i), variant)
		n.Store(0)
		b.StartTimer()
		for _, call := range []func() error{
			func() error { return expect(e.Prepare(ctx, exp)) },
			func() error { return done(e.Prepare(ctx, exp)) },
			func() error { return expect(e.Restore(ctx, exp)) },
			func() error { return done(e.Restore(ctx, exp)) },
		} {
			if err := call(); err != nil {
				b.Fatal(err)
			}
			b.StopTimer()
			requests += n.Swap(0)
			rollOut(b, te.Client, ns)
			b.StartTimer()
		}
	}
	b.ReportMetric(float64(requests)/float64(b.N), "requests/op")
	b.ReportMetric(float64(workloads), "workloads")
}

// expect checks a call that patched (or restored) and now waits for the rollouts.
func expect(res step.Result, err error) error {
	if err != nil {
		return err
	}
	if res.Failure != nil || res.Done {
		return fmt.Errorf("want a wait for rollouts, got %+v", res)
	}
	return nil
}

// done checks a call that found everything done.
func done(res step.Result, err error) error {
	if err != nil {
		return err
	}
	if !res.Done {
		return fmt.Errorf("want done, got %+v", res)
	}
	return nil
}
