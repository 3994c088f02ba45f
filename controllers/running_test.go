package controllers_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/controllers"
	"github.com/perfexp/perfexp/internal/load"
	"github.com/perfexp/perfexp/internal/step"
	"github.com/perfexp/perfexp/internal/testenv"
	"github.com/perfexp/perfexp/internal/testexp"
)

// kubeletLogs serves the logs of the pods the test ended, as the kubelet's log endpoint would.
type kubeletLogs struct {
	mu   sync.Mutex
	logs map[string]string
}

func (l *kubeletLogs) set(pod, log string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.logs[pod] = log
}

func (l *kubeletLogs) Tail(_ context.Context, _, pod, _ string, _ int) ([]byte, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	log, ok := l.logs[pod]
	if !ok {
		return nil, errors.New("the kubelet has no log for this pod")
	}
	return []byte(log), nil
}

// allFailedLog is what k6 prints when every request of the run failed.
const allFailedLog = `
{
    "metrics": {
        "http_reqs": {"count": 800, "rate": 40},
        "http_req_failed": {"passes": 800, "fails": 0, "value": 1},
        "iterations": {"count": 400, "rate": 20},
        "checks": {"passes": 0, "fails": 800, "value": 0}
    }
}
`

// playJob plays the Job controller and the kubelet for a unit's Indexed Job of one pod: it
// waits for the Job, creates its pod and reports its k6 container running, then ended with
// exit code 0 and the log of a run whose every request failed.
func playJob(t *testing.T, c client.Client, logs *kubeletLogs, ns, job string) {
	t.Helper()
	pod := startJobPod(t, c, ns, job)
	logs.set(pod.Name, allFailedLog)
	started := pod.Status.ContainerStatuses[0].State.Running.StartedAt
	setContainer(t, c, pod, corev1.PodSucceeded, corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
		ExitCode: 0, Reason: "Completed", StartedAt: started, FinishedAt: metav1.NewTime(time.Now()),
	}})
}

// startJobPod waits for the Job, creates its pod and reports its k6 container running.
func startJobPod(t *testing.T, c client.Client, ns, job string) *corev1.Pod {
	t.Helper()
	j := &batchv1.Job{}
	eventually(t, 30*time.Second, "the Job "+job+" is created", func() error {
		return c.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: job}, j)
	})
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{
		Name: job + "-0-abcde", Namespace: ns,
		Labels:      map[string]string{batchv1.JobCompletionIndexAnnotation: "0", batchv1.JobNameLabel: job},
		Annotations: map[string]string{batchv1.JobCompletionIndexAnnotation: "0"},
	}, Spec: *j.Spec.Template.Spec.DeepCopy()}
	for k, v := range j.Spec.Template.Labels {
		pod.Labels[k] = v
	}
	mustCreate(t, c, pod)
	setContainer(t, c, pod, corev1.PodRunning, corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(time.Now())}})
	return pod
}

func setContainer(t *testing.T, c client.Client, pod *corev1.Pod, phase corev1.PodPhase, state corev1.ContainerState) {
	t.Helper()
	pod.Status = corev1.PodStatus{Phase: phase, ContainerStatuses: []corev1.ContainerStatus{{
		Name: pod.Spec.Containers[0].Name, Image: pod.Spec.Containers[0].Image, State: state,
	}}}
	if err := c.Status().Update(t.Context(), pod); err != nil {
		t.Fatal(err)
	}
}

// flakyLoad is the real runner behind a first few failing looks, as an API server that
// answers errors for a while gives them.
type flakyLoad struct {
	*load.Runner
	mu    sync.Mutex
	fails int
	calls int
}

func (f *flakyLoad) Run(ctx context.Context, exp *perfexpv1alpha1.PerfExperiment) (step.Result, error) {
	f.mu.Lock()
	f.calls++
	failing := f.calls <= f.fails
	f.mu.Unlock()
	if failing {
		return step.Result{}, errors.New("listing the pods of run-k6-checkinout: the server is currently unable to handle the request")
	}
	return f.Runner.Run(ctx, exp)
}

// These stories run the real load runner inside the real reconciler; the test plays the Job
// controller and the kubelet. Each is a way a load that had ended used to stay Running, saying
// "running load", until a timeout failed it.
func TestRunningEndsWhenTheLoadEnded(t *testing.T) {
	env := testenv.Start(t)
	env.Namespace(t, leaseNamespace)
	c := env.Client
	start := func(t *testing.T, name string, runner controllers.LoadRunner) string {
		ns := env.Namespace(t, name)
		lab := newLab()
		startOperatorWith(t, env, lab, runner, lab)
		exp := testexp.New(ns, "run", testexp.WithQueue(name), testexp.WithScenarios(testexp.Constant("checkinout", 1, 20*time.Second)))
		exp.Spec.Load.WarmUp = &perfexpv1alpha1.WarmUp{VUs: 2, Duration: metav1.Duration{Duration: 10 * time.Second}}
		mustCreate(t, c, exp)
		return ns
	}
	leavesRunning := func(t *testing.T, ns string, within time.Duration) *perfexpv1alpha1.PerfExperiment {
		t.Helper()
		var got *perfexpv1alpha1.PerfExperiment
		eventually(t, within, "the experiment leaves Running", func() error {
			got = get(t, c, ns, "run")
			if got.Status.Phase == perfexpv1alpha1.PhaseRunning {
				return fmt.Errorf("still Running: %+v", condition(got, perfexpv1alpha1.ConditionLoadCompleted))
			}
			return nil
		})
		if cond := condition(got, perfexpv1alpha1.ConditionLoadCompleted); cond == nil || cond.Status != metav1.ConditionTrue {
			t.Fatalf("LoadCompleted %+v, want True (phase %s: %s)", cond, got.Status.Phase, got.Status.Message)
		}
		return got
	}

	t.Run("a completed k6 pod whose every request failed ends the load", func(t *testing.T) {
		logs := &kubeletLogs{logs: map[string]string{}}
		ns := start(t, "all-failed", load.New(c, load.Options{K6Image: "perfexp/k6:v1.8.1", Logs: logs}))
		waitPhase(t, c, ns, "run", perfexpv1alpha1.PhaseWarmingUp)
		playJob(t, c, logs, ns, "run-k6-warm-up")
		waitPhase(t, c, ns, "run", perfexpv1alpha1.PhaseRunning)
		playJob(t, c, logs, ns, "run-k6-checkinout")
		leavesRunning(t, ns, 15*time.Second)
	})

	t.Run("a Job that counts its pod completed ends the load though the pod is gone", func(t *testing.T) {
		logs := &kubeletLogs{logs: map[string]string{}}
		ns := start(t, "pod-gone", load.New(c, load.Options{K6Image: "perfexp/k6:v1.8.1", Logs: logs}))
		waitPhase(t, c, ns, "run", perfexpv1alpha1.PhaseWarmingUp)
		playJob(t, c, logs, ns, "run-k6-warm-up")
		waitPhase(t, c, ns, "run", perfexpv1alpha1.PhaseRunning)
		pod := startJobPod(t, c, ns, "run-k6-checkinout")
		// The pod ends and is gone before the operator sees its end; the Job counted it.
		if err := c.Delete(t.Context(), pod); err != nil {
			t.Fatal(err)
		}
		job := &batchv1.Job{}
		if err := c.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: "run-k6-checkinout"}, job); err != nil {
			t.Fatal(err)
		}
		end := metav1.Now()
		job.Status = batchv1.JobStatus{StartTime: &end, Succeeded: 1, CompletedIndexes: "0", CompletionTime: &end, Conditions: []batchv1.JobCondition{
			{Type: batchv1.JobSuccessCriteriaMet, Status: corev1.ConditionTrue, LastTransitionTime: end},
			{Type: batchv1.JobComplete, Status: corev1.ConditionTrue, LastTransitionTime: end},
		}}
		if err := c.Status().Update(t.Context(), job); err != nil {
			t.Fatal(err)
		}
		leavesRunning(t, ns, 15*time.Second)
	})

	t.Run("looking at the load failing is said and retried every few seconds", func(t *testing.T) {
		logs := &kubeletLogs{logs: map[string]string{}}
		// Twelve errors in a row would put the controller's backoff at 10s, the next ones at
		// 20s, 40s and on.
		flaky := &flakyLoad{Runner: load.New(c, load.Options{K6Image: "perfexp/k6:v1.8.1", Logs: logs}), fails: 3}
		ns := start(t, "flaky", flaky)
		waitPhase(t, c, ns, "run", perfexpv1alpha1.PhaseWarmingUp)
		playJob(t, c, logs, ns, "run-k6-warm-up")
		eventually(t, 15*time.Second, "LoadCompleted says why the load is not known to be over", func() error {
			got := get(t, c, ns, "run")
			cond := condition(got, perfexpv1alpha1.ConditionLoadCompleted)
			if cond == nil || !strings.Contains(cond.Message, "looking at the load failed") || !strings.Contains(cond.Message, "unable to handle the request") {
				return fmt.Errorf("LoadCompleted %+v", cond)
			}
			return nil
		})
		playJob(t, c, logs, ns, "run-k6-checkinout")
		leavesRunning(t, ns, 30*time.Second)
	})
}
