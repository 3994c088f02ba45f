package load_test

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
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/access"
	"github.com/perfexp/perfexp/internal/load"
	"github.com/perfexp/perfexp/internal/step"
	"github.com/perfexp/perfexp/internal/testenv"
	"github.com/perfexp/perfexp/internal/testexp"
)

// envtest runs an API server only: no kubelet, no Job controller, no garbage collector. The
// tests play those parts: they create the pods a Job would get and write the statuses a kubelet
// would report, and fakeLogs stands in for the kubelet's log endpoint.

const remoteWrite = "http://prometheus.monitoring.svc:9090/api/v1/write"

// fakeLogs serves pod logs the tests set, as the kubelet would.
type fakeLogs struct {
	mu   sync.Mutex
	logs map[string]string
	read map[string]int
}

func (l *fakeLogs) set(pod, log string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.logs[pod] = log
}

func (l *fakeLogs) Tail(_ context.Context, _, pod, _ string, maxBytes int) ([]byte, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.read[pod]++
	log, ok := l.logs[pod]
	if !ok {
		return nil, errors.New("the kubelet has no log for this pod")
	}
	if len(log) > maxBytes {
		log = log[len(log)-maxBytes:]
	}
	return []byte(log), nil
}

type fixture struct {
	t     testing.TB
	c     client.Client
	ns    string
	clock *clocktesting.FakeClock
	logs  *fakeLogs
	r     *load.Runner
}

func newFixture(t testing.TB, env *testenv.Env, ns string) *fixture {
	t.Helper()
	f := &fixture{
		t: t, c: env.Client, ns: env.Namespace(t, ns),
		// Pods get their creation time from the API server, so the fake clock starts at the
		// real time and is stepped from there.
		clock: clocktesting.NewFakeClock(time.Now()),
		logs:  &fakeLogs{logs: map[string]string{}, read: map[string]int{}},
	}
	f.r = load.New(env.Client, load.Options{
		K6Image: "perfexp/k6:v1.8.1", RemoteWriteURL: remoteWrite, Clock: f.clock, Logs: f.logs,
		// The placement story names the service account k6 and tolerations, as an
		// administrator would allow.
		Pods: access.RunnerPods{ServiceAccounts: []string{"k6"}, Placement: access.Placement{Tolerations: []string{"*"}}},
	})
	return f
}

// vusScenario is a scenario of an inline script run by vus VUs for d.
func vusScenario(name string, vus int32, d time.Duration) perfexpv1alpha1.Scenario {
	return perfexpv1alpha1.Scenario{
		Name: name, Script: perfexpv1alpha1.ScriptSource{Inline: "export default function () {}\n"},
		VUs: ptr.To(vus), Duration: &metav1.Duration{Duration: d},
	}
}

// experiment creates an experiment through the API server (so its validation and defaults
// apply) and gives it the test id the reconciler would.
func (f *fixture) experiment(name string, scenarios []perfexpv1alpha1.Scenario, mutate ...func(*perfexpv1alpha1.PerfExperiment)) *perfexpv1alpha1.PerfExperiment {
	f.t.Helper()
	exp := testexp.New(f.ns, name, append([]testexp.Option{testexp.WithScenarios(scenarios...)}, mutate...)...)
	if err := f.c.Create(f.t.Context(), exp); err != nil {
		f.t.Fatalf("creating experiment %s: %v", name, err)
	}
	exp.Status.TestID = name + "-" + strings.ReplaceAll(string(exp.UID), "-", "")[:8]
	return exp
}

func (f *fixture) get(name string, obj client.Object) bool {
	f.t.Helper()
	err := f.c.Get(f.t.Context(), types.NamespacedName{Namespace: f.ns, Name: name}, obj)
	if err != nil && client.IgnoreNotFound(err) != nil {
		f.t.Fatal(err)
	}
	return err == nil
}

func (f *fixture) job(exp *perfexpv1alpha1.PerfExperiment, unit string) *batchv1.Job {
	f.t.Helper()
	job := &batchv1.Job{}
	if !f.get(load.UnitName(exp, unit), job) {
		f.t.Fatalf("no Job for %s", unit)
	}
	return job
}

// runPod creates the pod the Job controller would create for one completion index and reports
// its k6 container running since startedAt, as the kubelet would.
func (f *fixture) runPod(job *batchv1.Job, index int, startedAt time.Time) *corev1.Pod {
	f.t.Helper()
	idx := fmt.Sprint(index)
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{
		Name: fmt.Sprintf("%s-%d-abcde", job.Name, index), Namespace: job.Namespace,
		Labels:      map[string]string{batchv1.JobCompletionIndexAnnotation: idx, batchv1.JobNameLabel: job.Name},
		Annotations: map[string]string{batchv1.JobCompletionIndexAnnotation: idx},
	}, Spec: *job.Spec.Template.Spec.DeepCopy()}
	for k, v := range job.Spec.Template.Labels {
		pod.Labels[k] = v
	}
	if err := f.c.Create(f.t.Context(), pod); err != nil {
		f.t.Fatal(err)
	}
	if !startedAt.IsZero() {
		f.setState(pod, corev1.PodRunning, corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(startedAt)}})
	}
	return pod
}

func (f *fixture) setState(pod *corev1.Pod, phase corev1.PodPhase, state corev1.ContainerState, mutate ...func(*corev1.PodStatus)) {
	f.t.Helper()
	c := pod.Spec.Containers[0]
	pod.Status = corev1.PodStatus{Phase: phase, ContainerStatuses: []corev1.ContainerStatus{{
		Name: c.Name, Image: c.Image, State: state,
	}}}
	for _, m := range mutate {
		m(&pod.Status)
	}
	if err := f.c.Status().Update(f.t.Context(), pod); err != nil {
		f.t.Fatal(err)
	}
}

// endPod reports the k6 container ended with code, with log as its log.
func (f *fixture) endPod(pod *corev1.Pod, code int32, reason string, started, finished time.Time, log string) {
	f.t.Helper()
	phase := corev1.PodSucceeded
	if code != 0 {
		phase = corev1.PodFailed
	}
	f.logs.set(pod.Name, log)
	f.setState(pod, phase, corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
		ExitCode: code, Reason: reason, StartedAt: metav1.NewTime(started), FinishedAt: metav1.NewTime(finished),
	}})
}

// k6Log is what a k6 pod prints: its text summary and the JSON one.
func k6Log(iterations int) string {
	return fmt.Sprintf(`
  █ TOTAL RESULTS

    iterations...........: %[1]d
{
    "metrics": {
        "iterations": {"count": %[1]d, "rate": 1.5},
        "vus_max": {"value": 1, "min": 1, "max": 1}
    },
    "root_group": {"name": "", "path": "", "groups": {}, "checks": {}}
}
`, iterations)
}

// mustStep fails the test when a step returns an error: mustStep(t)(r.Run(ctx, exp)).
func mustStep(t *testing.T) func(step.Result, error) step.Result {
	return func(res step.Result, err error) step.Result {
		t.Helper()
		if err != nil {
			t.Fatalf("step returned an error: %v", err)
		}
		return res
	}
}

func scenarioState(exp *perfexpv1alpha1.PerfExperiment, name string) *perfexpv1alpha1.ScenarioStatus {
	if exp.Status.Load == nil {
		return nil
	}
	for i := range exp.Status.Load.Scenarios {
		if exp.Status.Load.Scenarios[i].Name == name {
			return &exp.Status.Load.Scenarios[i]
		}
	}
	return nil
}

func second(t time.Time) time.Time { return t.Truncate(time.Second) }
