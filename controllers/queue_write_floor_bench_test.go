package controllers_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/testenv"
)

// BenchmarkQueueStatusWriteFloor measures the least a status write costs on this machine's API
// server, to read the reconcile latency of the queue benchmarks against: the burst of
// BenchmarkQueueBurst (N experiments applied at once to one queue), and one status write per
// experiment of the kind and size of the reconciler's first one (a merge patch with an
// optimistic lock that makes it Queued with its position, conditions and message), from a
// plain client. No reconciler, no informer, no events: the API server and etcd do nothing but
// the burst and these writes, so a reconciler that writes its status inside its reconcile
// cannot have a p99 below this one's here.
//
// The round trip is timed on the client's transport, as apiCounter times the reconciler's
// writes (p50/p99-status-write-ms of the queue benchmarks).
//
//   - after-burst/1-writer: the burst is applied, then the writes go one after another: the
//     floor of the floor, one request in flight.
//   - after-burst/4-writers: the same, from 4 goroutines (the operator's 4 workers).
//   - during-burst/1-writer, during-burst/4-writers: each experiment is written as soon as its
//     create returned, by 1 or 4 goroutines, while the burst is still being applied, as the
//     reconciler's writes are (with 1 worker, or the operator's 4).
func BenchmarkQueueStatusWriteFloor(b *testing.B) {
	n := benchExperiments(b)
	env := testenv.Start(b)
	cases := []struct {
		name    string
		writers int
		during  bool
	}{
		{"after-burst/1-writer", 1, false},
		{"after-burst/4-writers", 4, false},
		{"during-burst/1-writer", 1, true},
		{"during-burst/4-writers", 4, true},
	}
	runs := 0 // each run writes in a namespace of its own
	for _, bc := range cases {
		b.Run(bc.name, func(b *testing.B) {
			for b.Loop() {
				runs++
				ns := env.Namespace(b, fmt.Sprintf("floor-%d", runs))
				api := newAPICounter(env.Scheme)
				cfg := rest.CopyConfig(env.Config)
				cfg.QPS = -1 // as the operator: no client-side throttling
				cfg.WrapTransport = api.wrap
				c, err := client.New(cfg, client.Options{Scheme: env.Scheme})
				if err != nil {
					b.Fatal(err)
				}
				names := make([]string, n)
				for i := range names {
					names[i] = fmt.Sprintf("exp-%04d", i)
				}

				created := make(chan *perfexpv1alpha1.PerfExperiment, n)
				write := func() {
					start := time.Now()
					var wg sync.WaitGroup
					errs := make(chan error, n)
					for range bc.writers {
						wg.Go(func() {
							for exp := range created {
								if err := writeQueuedStatus(c, exp); err != nil {
									errs <- err
								}
							}
						})
					}
					wg.Wait()
					close(errs)
					for err := range errs {
						b.Fatal(err)
					}
					b.ReportMetric(float64(n)/time.Since(start).Seconds(), "writes/s")
				}
				if bc.during {
					done := make(chan struct{})
					go func() { defer close(done); write() }()
					createAll(b, env.Client, ns, names, func(string) string { return "floor" }, created)
					close(created)
					<-done
				} else {
					createAll(b, env.Client, ns, names, func(string) string { return "floor" }, created)
					close(created)
					write()
				}

				counts := api.snapshot()
				if got := api.statusWritesSoFar(); got != n {
					b.Fatalf("%d status writes succeeded, want %d: %s", got, n, counts)
				}
				api.reportPatchTimes(b, 0)
				b.Logf("%d experiments, %d writers, during the burst %v: %s; load average %s", n, bc.writers, bc.during, counts, loadAverage())
			}
		})
	}
}

// writeQueuedStatus writes what the reconciler writes when an experiment joins its queue, the
// way it writes it (writeStatus: a merge patch against the object as read, with its
// resourceVersion).
func writeQueuedStatus(c client.Client, exp *perfexpv1alpha1.PerfExperiment) error {
	original := exp.DeepCopy()
	now := metav1.Now()
	st := &exp.Status
	st.Phase = perfexpv1alpha1.PhaseQueued
	st.Queue = "floor"
	st.TestID = exp.Name + "-" + strings.ReplaceAll(string(exp.UID), "-", "")[:8]
	st.QueuePosition = 42
	st.Message = "about position 42 in queue floor"
	st.ObservedGeneration = exp.Generation
	st.PhaseHistory = []perfexpv1alpha1.PhaseTransition{{Phase: perfexpv1alpha1.PhaseQueued, Time: now}}
	for _, cond := range []metav1.Condition{
		{Type: perfexpv1alpha1.ConditionReady, Status: metav1.ConditionUnknown, Reason: perfexpv1alpha1.ReasonInProgress, Message: "the experiment is in progress"},
		{Type: perfexpv1alpha1.ConditionQueued, Status: metav1.ConditionTrue, Reason: perfexpv1alpha1.ReasonWaitingForQueue, Message: st.Message},
		{Type: perfexpv1alpha1.ConditionReconciling, Status: metav1.ConditionTrue, Reason: string(perfexpv1alpha1.PhaseQueued), Message: "phase Queued"},
	} {
		cond.ObservedGeneration = exp.Generation
		meta.SetStatusCondition(&st.Conditions, cond)
	}
	patch := client.MergeFromWithOptions(original, client.MergeFromWithOptimisticLock{})
	if err := c.Status().Patch(context.Background(), exp, patch); err != nil {
		return fmt.Errorf("writing the status of %s: %w", exp.Name, err)
	}
	return nil
}

// loadAverage is the first three fields of /proc/loadavg, "" where there is none: the machine
// is shared, and the times depend on what else runs.
func loadAverage() string {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	f := strings.Fields(string(data))
	if len(f) < 3 {
		return ""
	}
	return strings.Join(f[:3], " ")
}
