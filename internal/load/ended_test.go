package load_test

import (
	"context"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/load"
	"github.com/perfexp/perfexp/internal/step"
	"github.com/perfexp/perfexp/internal/testenv"
)

// A load is over once its runners ended, whatever else is slow to say so: these stories are
// the ways a finished load used to stay Running until a timeout failed it.
func TestLoadEndsWhenItsRunnersEnded(t *testing.T) {
	env := testenv.Start(t)
	t.Run("a Job that counts its pods completed ends the load when their ends were not seen", func(t *testing.T) { countedByJob(t, env) })
	t.Run("a Job that counts a pod failed whose end was not seen fails the load", func(t *testing.T) { failedByJob(t, env) })
	t.Run("an unreadable log is awaited for the summary timeout and said so", func(t *testing.T) { unreadableLog(t, env) })
	t.Run("a log stream that never ends is cut after the log timeout", func(t *testing.T) { endlessLog(t, env) })
}

// stalledLogs is a kubelet whose log streams never end.
type stalledLogs struct{}

func (stalledLogs) Tail(ctx context.Context, _, _, _ string, _ int) ([]byte, error) {
	<-ctx.Done()
	return nil, ctx.Err()
}

func endlessLog(t *testing.T, env *testenv.Env) {
	f := newFixture(t, env, "endless")
	f.r = load.New(env.Client, load.Options{K6Image: "perfexp/k6:v1.8.1", Clock: f.clock, Logs: stalledLogs{}, LogTimeout: 200 * time.Millisecond})
	exp := f.experiment("stalled", []perfexpv1alpha1.Scenario{vusScenario("checkinout", 1, 20*time.Second)})
	mustStep(t)(f.r.Run(t.Context(), exp))
	t1 := second(time.Now())
	pod := f.runPod(f.job(exp, "checkinout"), 0, t1)
	f.endPod(pod, 0, "Completed", t1, t1.Add(20*time.Second), k6Log(400))
	type outcome struct {
		res step.Result
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		res, err := f.r.Run(t.Context(), exp)
		done <- outcome{res, err}
	}()
	select {
	case o := <-done:
		if o.err != nil || o.res.Done || !strings.Contains(o.res.Waiting, "context deadline exceeded") {
			t.Fatalf("Run() = %+v, %v; want a wait naming the cut read", o.res, o.err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Run() still reads a log that never ends after 10s; it holds the experiment's reconcile")
	}
}

// setJobStatus writes a Job's status as the Job controller would once its pods ended.
func (f *fixture) setJobStatus(job *batchv1.Job, mutate func(*batchv1.JobStatus)) {
	f.t.Helper()
	mutate(&job.Status)
	if err := f.c.Status().Update(f.t.Context(), job); err != nil {
		f.t.Fatal(err)
	}
}

func countedByJob(t *testing.T, env *testenv.Env) {
	f := newFixture(t, env, "counted")
	s := vusScenario("checkinout", 2, 20*time.Second)
	s.Parallelism = 2
	exp := f.experiment("gone", []perfexpv1alpha1.Scenario{s})
	mustStep(t)(f.r.Run(t.Context(), exp))
	job := f.job(exp, "checkinout")
	t1 := second(time.Now())
	pods := []*corev1.Pod{f.runPod(job, 0, t1), f.runPod(job, 1, t1)}
	f.endPod(pods[0], 0, "Completed", t1, t1.Add(21*time.Second), k6Log(400))
	// Pod 1 ended too, but its end never reached this operator: it is gone, as a pod
	// deleted by hand, by the pod garbage collector or with its node is.
	if err := f.c.Delete(t.Context(), pods[1]); err != nil {
		t.Fatal(err)
	}
	if res := mustStep(t)(f.r.Run(t.Context(), exp)); res.Done {
		t.Fatal("done before the Job said how its pod 1 ended")
	}
	end := metav1.NewTime(t1.Add(22 * time.Second))
	f.setJobStatus(job, func(st *batchv1.JobStatus) {
		st.StartTime = &metav1.Time{Time: t1}
		st.Succeeded, st.CompletedIndexes, st.CompletionTime = 2, "0-1", &end
		st.Conditions = []batchv1.JobCondition{
			{Type: batchv1.JobSuccessCriteriaMet, Status: corev1.ConditionTrue, LastTransitionTime: end},
			{Type: batchv1.JobComplete, Status: corev1.ConditionTrue, LastTransitionTime: end},
		}
	})
	res := mustStep(t)(f.r.Run(t.Context(), exp))
	if !res.Done {
		t.Fatalf("the Job counts both pods completed, and the load still waits: %+v", res)
	}
	st := scenarioState(exp, "checkinout")
	if st.State != perfexpv1alpha1.ScenarioSucceeded || !slicesEqual(st.ExitCodes, []int32{0, 0}) {
		t.Fatalf("scenario %+v", st)
	}
	if w := exp.Status.Window; w.End == nil || !w.End.Time.Equal(end.Add(time.Second)) {
		t.Fatalf("window %+v, want its end at the Job's completion %s, rounded up", w, end)
	}
	cm := &corev1.ConfigMap{}
	if !f.get(load.SummariesName(exp), cm) {
		t.Fatal("no summaries ConfigMap")
	}
	if _, ok := cm.Data["checkinout-0.json"]; !ok || !strings.Contains(cm.Annotations["perfexp.dev/summaries-omitted"], "checkinout-1.json") {
		t.Fatalf("summaries %v, omitted %q: want pod 0's kept and pod 1's given up", keys(cm.Data), cm.Annotations["perfexp.dev/summaries-omitted"])
	}
}

func failedByJob(t *testing.T, env *testenv.Env) {
	f := newFixture(t, env, "failed-by-job")
	exp := f.experiment("gone", []perfexpv1alpha1.Scenario{vusScenario("checkinout", 1, 20*time.Second)})
	mustStep(t)(f.r.Run(t.Context(), exp))
	job := f.job(exp, "checkinout")
	pod := f.runPod(job, 0, second(time.Now()))
	// The pod failed and is gone before the operator saw how.
	if err := f.c.Delete(t.Context(), pod); err != nil {
		t.Fatal(err)
	}
	f.setJobStatus(job, func(st *batchv1.JobStatus) {
		st.StartTime = &metav1.Time{Time: time.Now()}
		st.Failed, st.FailedIndexes = 1, ptr.To("0")
	})
	res := mustStep(t)(f.r.Run(t.Context(), exp))
	if res.Failure == nil || res.Failure.Reason != perfexpv1alpha1.ReasonLoadFailed || !strings.Contains(res.Failure.Message, "the Job counts this pod failed") {
		t.Fatalf("Run() = %+v, want a LoadFailed failure saying the Job counted the pod failed", res)
	}
}

func unreadableLog(t *testing.T, env *testenv.Env) {
	f := newFixture(t, env, "unreadable")
	exp := f.experiment("quiet", []perfexpv1alpha1.Scenario{vusScenario("checkinout", 1, 20*time.Second)})
	mustStep(t)(f.r.Run(t.Context(), exp))
	job := f.job(exp, "checkinout")
	t1 := second(time.Now())
	pod := f.runPod(job, 0, t1)
	f.endPod(pod, 0, "Completed", t1, t1.Add(20*time.Second), "")
	delete(f.logs.logs, pod.Name)
	f.clock.SetTime(t1.Add(30 * time.Second))
	res := mustStep(t)(f.r.Run(t.Context(), exp))
	if res.Done {
		t.Fatal("done before the summary was read or given up")
	}
	// What is awaited is said: the load ended, only the summary is read, and until when.
	for _, want := range []string{"every k6 pod ended at", "reading the summary of " + pod.Name, "the kubelet has no log for this pod", "until"} {
		if !strings.Contains(res.Waiting, want) {
			t.Errorf("waiting %q, want it to say %q", res.Waiting, want)
		}
	}
	f.clock.SetTime(t1.Add(81 * time.Second))
	if res := mustStep(t)(f.r.Run(t.Context(), exp)); !res.Done {
		t.Fatalf("still waiting a minute after the pod ended: %+v", res)
	}
}

func slicesEqual(a, b []int32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func keys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}
