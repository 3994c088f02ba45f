//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/testenv"
	"github.com/perfexp/perfexp/test/e2e/framework"
)

// overheadScript is one cheap GET per VU per 100 ms: the load is not what is measured.
const overheadScript = `
import http from 'k6/http';
import { sleep } from 'k6';
export default function () {
  http.get(__ENV.BASE_URL + '/healthz', { tags: { name: 'healthz' } });
  sleep(0.1);
}
`

// BenchmarkExperimentOverhead measures, on the local cluster and through the deployed
// operator, what perfexp adds to a user's own time for one experiment (issue 14 item 4):
//
//   - apply -> load start, minus the variant's rollout: queueing, admission, the patch, the
//     rollout checks and the k6 pod's creation (start-s/op), with the k6 pod's own start
//     from creation to running given apart (k6-pod-start-s/op);
//   - load end -> results in status (results-s/op), and the same minus the restore's rollout,
//     which comes between them (results-net-s/op);
//   - restore, minus the restore's rollout (restore-s/op).
//
// Every time is when this process saw the change through a watch, in milliseconds, so the
// phase history's whole seconds do not limit it. The variant removes circulation's CPU limit
// (a real rollout of one pod); the load is 10 s of two VUs. The operator must be running
// (`make demo` or `make cluster-up` and `make deploy-local` leave it so); it is not restarted.
//
//	go test -tags e2e -run '^$' -bench ExperimentOverhead -benchtime 3x ./test/e2e/
func BenchmarkExperimentOverhead(b *testing.B) {
	framework.RequireCluster(b)
	if _, err := framework.KubectlErr("-n", "perfexp-system", "get", "deploy/perfexp-manager"); err != nil {
		b.Skip("the operator is not deployed (make demo deploys it)")
	}
	ns := demoNamespace(b, "e2e-overhead")
	c := clusterClient(b, nil)
	cfg, err := clientcmd.BuildConfigFromFlags("", framework.Kubeconfig())
	if err != nil {
		b.Fatal(err)
	}
	cs := kubernetes.NewForConfigOrDie(cfg)
	wc, err := client.NewWithWatch(cfg, client.Options{Scheme: testenv.Scheme()})
	if err != nil {
		b.Fatal(err)
	}

	var sums overheadTimes
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		tl := runObserved(b, c, wc, cs, ns, fmt.Sprintf("overhead-%d", i))
		o := tl.overheads(b)
		b.Logf("run %d: %s\n%s", i, o, tl)
		sums.add(o)
	}
	b.StopTimer()
	n := float64(b.N)
	b.ReportMetric(sums.start.Seconds()/n, "start-s/op")
	b.ReportMetric(sums.k6PodStart.Seconds()/n, "k6-pod-start-s/op")
	b.ReportMetric(sums.results.Seconds()/n, "results-s/op")
	b.ReportMetric(sums.resultsNet.Seconds()/n, "results-net-s/op")
	b.ReportMetric(sums.restore.Seconds()/n, "restore-s/op")
	b.ReportMetric(sums.rollout.Seconds()/n, "rollout-s/op")
}

// timeline holds when each step of one experiment was seen.
type timeline struct {
	mu sync.Mutex
	applied,
	patched, rolledOut, // the variant's rollout of circulation
	runnerCreated, runnerRunning, runnerDone, // the k6 pod
	restoring, restorePatched, restoreRolledOut, restored, // the restore and its rollout
	results, done time.Time
	phases []string
}

// see records t at *at unless it was recorded already.
func (tl *timeline) see(at *time.Time, t time.Time) {
	if at.IsZero() {
		*at = t
	}
}

type overheadTimes struct {
	start, k6PodStart, results, resultsNet, restore, rollout time.Duration
}

func (o *overheadTimes) add(p overheadTimes) {
	o.start += p.start
	o.k6PodStart += p.k6PodStart
	o.results += p.results
	o.resultsNet += p.resultsNet
	o.restore += p.restore
	o.rollout += p.rollout
}

func (o overheadTimes) String() string {
	return fmt.Sprintf("apply->load start minus rollout %s (of which k6 pod start %s); load end->results %s, minus the restore's rollout %s; restore minus rollout %s; rollouts %s",
		o.start.Round(time.Millisecond), o.k6PodStart.Round(time.Millisecond), o.results.Round(time.Millisecond),
		o.resultsNet.Round(time.Millisecond), o.restore.Round(time.Millisecond), o.rollout.Round(time.Millisecond))
}

// String is the timeline relative to the apply, for finding where the time goes.
func (tl *timeline) String() string {
	tl.mu.Lock()
	defer tl.mu.Unlock()
	at := func(t time.Time) string { return "+" + t.Sub(tl.applied).Round(time.Millisecond).String() }
	return fmt.Sprintf("phases %v\nvariant patched %s rolled out %s; k6 pod created %s running %s done %s; Restoring %s, restore patched %s rolled out %s, restored %s; results %s",
		tl.phases, at(tl.patched), at(tl.rolledOut), at(tl.runnerCreated), at(tl.runnerRunning), at(tl.runnerDone),
		at(tl.restoring), at(tl.restorePatched), at(tl.restoreRolledOut), at(tl.restored), at(tl.results))
}

func (tl *timeline) overheads(b *testing.B) overheadTimes {
	tl.mu.Lock()
	defer tl.mu.Unlock()
	for name, t := range map[string]time.Time{
		"variant patched": tl.patched, "variant rolled out": tl.rolledOut, "k6 pod created": tl.runnerCreated,
		"k6 pod running": tl.runnerRunning, "k6 pod done": tl.runnerDone, "Restoring": tl.restoring,
		"restore patched": tl.restorePatched, "restore rolled out": tl.restoreRolledOut, "restored": tl.restored,
		"results": tl.results,
	} {
		if t.IsZero() {
			b.Fatalf("never saw %q (phases %v)", name, tl.phases)
		}
	}
	variantRollout := tl.rolledOut.Sub(tl.patched)
	restoreRollout := tl.restoreRolledOut.Sub(tl.restorePatched)
	return overheadTimes{
		start:      tl.runnerRunning.Sub(tl.applied) - variantRollout,
		k6PodStart: tl.runnerRunning.Sub(tl.runnerCreated),
		results:    tl.results.Sub(tl.runnerDone),
		resultsNet: tl.results.Sub(tl.runnerDone) - restoreRollout,
		restore:    tl.restored.Sub(tl.restoring) - restoreRollout,
		rollout:    variantRollout + restoreRollout,
	}
}

// runObserved applies one experiment and records its timeline from three watches: the
// experiment, circulation's Deployment and the namespace's k6 pods.
func runObserved(b *testing.B, c client.Client, wc client.WithWatch, cs kubernetes.Interface, ns, name string) *timeline {
	ctx, cancel := context.WithTimeout(b.Context(), 6*time.Minute)
	defer cancel()
	tl := &timeline{}

	var dep appsv1.Deployment
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "circulation"}, &dep); err != nil {
		b.Fatal(err)
	}
	startGen := dep.Generation

	// Resource version "0" starts each watch from the API server's watch cache: a watch from
	// "now" waits for that cache to catch up with etcd, which the local cluster's etcd 3.4
	// does not hurry (504 "Too large resource version").
	any := &metav1.ListOptions{ResourceVersion: "0"}
	expW, err := wc.Watch(ctx, &perfexpv1alpha1.PerfExperimentList{}, client.InNamespace(ns), &client.ListOptions{Raw: any})
	if err != nil {
		b.Fatal(err)
	}
	depW, err := cs.AppsV1().Deployments(ns).Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=circulation", ResourceVersion: "0"})
	if err != nil {
		b.Fatal(err)
	}
	podW, err := cs.CoreV1().Pods(ns).Watch(ctx, metav1.ListOptions{LabelSelector: batchv1.JobNameLabel, ResourceVersion: "0"})
	if err != nil {
		b.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); watchDeployment(depW, tl, startGen) }()
	go func() { defer wg.Done(); watchRunners(podW, tl) }()
	defer func() { depW.Stop(); podW.Stop(); expW.Stop(); wg.Wait() }()

	exp := &perfexpv1alpha1.PerfExperiment{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: perfexpv1alpha1.PerfExperimentSpec{
			Variant: &perfexpv1alpha1.Variant{
				Description: "circulation without a CPU limit",
				Workloads: []perfexpv1alpha1.WorkloadChange{{
					WorkloadSelector: perfexpv1alpha1.WorkloadSelector{Kind: perfexpv1alpha1.WorkloadKindDeployment, Names: []string{"circulation"}},
					Resources:        &perfexpv1alpha1.ResourcesChange{RemoveLimits: []corev1.ResourceName{corev1.ResourceCPU}},
				}},
			},
			Load: perfexpv1alpha1.Load{Scenarios: []perfexpv1alpha1.Scenario{{
				Name: "healthz", Script: perfexpv1alpha1.ScriptSource{Inline: overheadScript},
				VUs: ptr.To(int32(2)), Duration: &metav1.Duration{Duration: 10 * time.Second},
				Env: []perfexpv1alpha1.EnvVar{{Name: "BASE_URL", Value: "http://circulation:8080"}},
			}}},
		},
	}
	if err := c.Create(ctx, exp); err != nil {
		b.Fatal(err)
	}
	tl.mu.Lock()
	tl.applied = time.Now()
	tl.mu.Unlock()

	for {
		select {
		case <-ctx.Done():
			b.Fatalf("%s did not finish: phases %v", name, tl.phases)
		case ev, ok := <-expW.ResultChan():
			if !ok {
				b.Fatalf("the watch of %s ended: phases %v", name, tl.phases)
			}
			if ev.Type == watch.Error {
				b.Fatalf("watching %s: %v", name, ev.Object)
			}
			e, isExp := ev.Object.(*perfexpv1alpha1.PerfExperiment)
			if !isExp || e.Name != name {
				continue
			}
			now := time.Now()
			tl.mu.Lock()
			phase := string(e.Status.Phase)
			if len(tl.phases) == 0 || !strings.HasPrefix(tl.phases[len(tl.phases)-1], phase+" ") {
				tl.phases = append(tl.phases, fmt.Sprintf("%s +%s", phase, now.Sub(tl.applied).Round(time.Millisecond)))
			}
			if e.Status.Phase == perfexpv1alpha1.PhaseRestoring {
				tl.see(&tl.restoring, now)
			}
			if e.Status.Environment != nil && e.Status.Environment.Restored {
				tl.see(&tl.restored, now)
			}
			if e.Status.Results != nil {
				tl.see(&tl.results, now)
			}
			finished := e.Status.Phase == perfexpv1alpha1.PhaseSucceeded || e.Status.Phase == perfexpv1alpha1.PhaseFailed
			if finished {
				tl.see(&tl.done, now)
			}
			tl.mu.Unlock()
			if e.Status.Phase == perfexpv1alpha1.PhaseFailed || e.Status.Phase == perfexpv1alpha1.PhaseAborted {
				b.Fatalf("%s ended %s: %s", name, e.Status.Phase, e.Status.Message)
			}
			if finished {
				if err := c.Delete(ctx, e); err != nil {
					b.Fatal(err)
				}
				return tl
			}
		}
	}
}

// watchDeployment records when circulation's template changed (its generation rose) and when
// the rollout that followed was complete, once for the variant and once for the restore.
func watchDeployment(w watch.Interface, tl *timeline, startGen int64) {
	var patchedGen int64
	for ev := range w.ResultChan() {
		d, ok := ev.Object.(*appsv1.Deployment)
		if !ok {
			continue
		}
		now := time.Now()
		tl.mu.Lock()
		complete := d.Status.ObservedGeneration >= d.Generation && d.Spec.Replicas != nil &&
			d.Status.UpdatedReplicas == *d.Spec.Replicas && d.Status.AvailableReplicas == *d.Spec.Replicas &&
			d.Status.Replicas == *d.Spec.Replicas
		switch {
		case tl.patched.IsZero() && d.Generation > startGen:
			tl.patched, patchedGen = now, d.Generation
		case !tl.patched.IsZero() && tl.rolledOut.IsZero() && complete:
			tl.rolledOut = now
		case !tl.rolledOut.IsZero() && tl.restorePatched.IsZero() && d.Generation > patchedGen:
			tl.restorePatched = now
		case !tl.restorePatched.IsZero() && tl.restoreRolledOut.IsZero() && complete:
			tl.restoreRolledOut = now
		}
		tl.mu.Unlock()
	}
}

// watchRunners records the k6 pod's creation, its start and its end.
func watchRunners(w watch.Interface, tl *timeline) {
	for ev := range w.ResultChan() {
		p, ok := ev.Object.(*corev1.Pod)
		if !ok || strings.HasPrefix(p.Name, "warm") {
			continue
		}
		now := time.Now()
		tl.mu.Lock()
		tl.see(&tl.runnerCreated, now)
		for _, s := range p.Status.ContainerStatuses {
			if s.State.Running != nil || s.State.Terminated != nil {
				tl.see(&tl.runnerRunning, now)
			}
		}
		if p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
			tl.see(&tl.runnerDone, now)
		}
		tl.mu.Unlock()
	}
}
