package load_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/access"
	"github.com/perfexp/perfexp/internal/load"
	"github.com/perfexp/perfexp/internal/testenv"
)

// slowLogs is a kubelet that takes a while to answer each log read, as a busy node's does.
type slowLogs struct {
	next  *fakeLogs
	delay time.Duration
}

func (l slowLogs) Tail(ctx context.Context, ns, pod, container string, maxBytes int) ([]byte, error) {
	select {
	case <-time.After(l.delay):
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return l.next.Tail(ctx, ns, pod, container, maxBytes)
}

// One experiment's 256 k6 pods end together (4 scenarios of 64), each log taking 20 ms to read.
// Reconciles are simulated on one worker, taking turns with a second, small experiment: every
// call of the chatty experiment must be short (it reads a bounded number of logs, a few at once)
// and the second one's turn comes soon, while every summary is still read exactly once and kept.
func TestManyEndedPodsDoNotHoldAWorker(t *testing.T) {
	env := testenv.Start(t)
	f := newFixture(t, env, "chatty")
	const delay = 20 * time.Millisecond
	f.r = load.New(env.Client, load.Options{
		K6Image: "perfexp/k6:v1.8.1", RemoteWriteURL: remoteWrite, Clock: f.clock, Logs: slowLogs{f.logs, delay},
		Pods: access.RunnerPods{ServiceAccounts: []string{"k6"}, Placement: access.Placement{Tolerations: []string{"*"}}},
	})
	var scenarios []perfexpv1alpha1.Scenario
	for i := range 4 {
		s := vusScenario(fmt.Sprintf("s%d", i), 64, 20*time.Second)
		s.Parallelism = 64
		scenarios = append(scenarios, s)
	}
	chatty := f.experiment("chatty", scenarios)
	small := f.experiment("small", []perfexpv1alpha1.Scenario{vusScenario("one", 1, time.Hour)})
	mustStep(t)(f.r.Run(t.Context(), chatty))
	mustStep(t)(f.r.Run(t.Context(), small))
	t1 := second(time.Now())
	var pods []*corev1.Pod
	for _, s := range scenarios {
		job := f.job(chatty, s.Name)
		for i := range 64 {
			pod := f.runPod(job, i, t1)
			f.endPod(pod, 0, "Completed", t1, t1.Add(20*time.Second), k6Log(100+i))
			pods = append(pods, pod)
		}
	}
	f.runPod(f.job(small, "one"), 0, t1)

	var longest, smallLatest time.Duration
	calls := 0
	for ; ; calls++ {
		if calls == 200 {
			t.Fatal("the chatty experiment's load is not done after 200 calls")
		}
		start := time.Now()
		res, err := f.r.Run(t.Context(), chatty)
		took := time.Since(start)
		longest = max(longest, took)
		if err != nil || res.Failure != nil {
			t.Fatalf("Run(chatty) = %+v, %v", res, err)
		}
		if res, err := f.r.Run(t.Context(), small); err != nil || res.Failure != nil || res.Done {
			t.Fatalf("Run(small) = %+v, %v; want its load running", res, err)
		}
		// The small experiment's turn came this long after the chatty one's call began.
		smallLatest = max(smallLatest, time.Since(start))
		if res.Done {
			break
		}
		if res.RequeueAfter > time.Second {
			t.Fatalf("Run(chatty) waits %s with summaries left to read; want the next call soon", res.RequeueAfter)
		}
	}
	t.Logf("256 ended pods, %s per log read: %d calls, the longest %s; the small experiment's turn came at most %s after the chatty one's call began",
		delay, calls+1, longest.Round(time.Millisecond), smallLatest.Round(time.Millisecond))

	cm := &corev1.ConfigMap{}
	if !f.get(load.SummariesName(chatty), cm) || len(cm.Data) != len(pods) {
		t.Fatalf("%d summaries kept, want %d (omitted: %q)", len(cm.Data), len(pods), cm.Annotations["perfexp.dev/summaries-omitted"])
	}
	f.logs.mu.Lock()
	defer f.logs.mu.Unlock()
	for _, p := range pods {
		if n := f.logs.read[p.Name]; n != 1 {
			t.Errorf("the log of %s was read %d times, want once", p.Name, n)
		}
	}
	// 256 reads one after another take 256 x 20 ms = 5.1 s: a worker held that long per call is
	// what four such experiments did to every worker.
	if longest > 2*time.Second {
		t.Errorf("the longest call of the chatty experiment took %s; want at most 2s", longest)
	}
}
