package load

import (
	"context"
	"fmt"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/step"
)

// stopRecheck is how often Stop looks again while k6 pods are shutting down (k6 stops its VUs,
// prints its summary and exits within seconds of SIGTERM). Each look lists the experiment's own
// pods from the cache; the environment is restored only after it, so its lateness adds to
// every run's restore.
const stopRecheck = 500 * time.Millisecond

// stuckTerminating is how long past its deletion deadline a pod (or a TestRun past its
// deletion) may linger before Stop stops waiting for it. A pod on a NotReady node stays
// Terminating until the node comes back or someone force-deletes it, and a TestRun's finalizer
// may never be removed: restoring the environment must not wait for either. Such a pod can no
// longer send load through a node that is gone, and its Job is suspended, so nothing replaces it.
const stuckTerminating = 2 * time.Minute

// stuck reports whether an object being deleted has lingered past its deadline.
func (r *Runner) stuck(deletion *metav1.Time) bool {
	return deletion != nil && r.opts.Clock.Since(deletion.Time) > stuckTerminating
}

// stop suspends every unfinished Job of the experiment (the Job controller then creates no new
// pod and removes the active ones), deletes unfinished TestRuns, and deletes every running
// load or setup pod itself so the load stops promptly even when the Job controller is slow.
// Finished Jobs and their pods are left alone, so their logs stay readable. Scenarios that had
// not finished are marked Stopped. Done once no pod of the experiment runs, or the
// only ones left have been stuck terminating for longer than stuckTerminating.
func (r *Runner) stop(ctx context.Context, exp *perfexpv1alpha1.PerfExperiment) (step.Result, error) {
	if exp.Status.TestID == "" {
		return step.Done(), nil
	}
	sel := client.MatchingLabels(selector(exp))
	ns := client.InNamespace(exp.Namespace)

	// The pods are read first: a Job whose every pod has already ended is not running, even
	// when the Job controller has not yet marked it Complete, and suspending it would delete
	// its pods and their logs and leave it reading "Suspended".
	pods := &corev1.PodList{}
	if err := r.c.List(ctx, pods, ns, sel); err != nil {
		return step.Result{}, fmt.Errorf("listing the experiment's pods: %w", err)
	}
	pods.Items = withoutTeardown(pods.Items, func(p corev1.Pod) map[string]string { return p.Labels })
	byJob := podsByJob(pods.Items)

	jobs := &batchv1.JobList{}
	if err := r.c.List(ctx, jobs, ns, sel); err != nil {
		return step.Result{}, fmt.Errorf("listing the experiment's Jobs: %w", err)
	}
	jobs.Items = withoutTeardown(jobs.Items, func(j batchv1.Job) map[string]string { return j.Labels })
	for i := range jobs.Items {
		j := &jobs.Items[i]
		if jobFinished(j) || jobAllEnded(j, byJob[j.Name]) || ptr.Deref(j.Spec.Suspend, false) {
			continue
		}
		patch := client.MergeFrom(j.DeepCopy())
		j.Spec.Suspend = ptr.To(true)
		if err := r.c.Patch(ctx, j, patch); client.IgnoreNotFound(err) != nil {
			return step.Result{}, fmt.Errorf("suspending Job %s: %w", j.Name, err)
		}
		log.FromContext(ctx).Info("Suspended load Job", "job", j.Name)
	}

	testRuns := &unstructured.UnstructuredList{}
	testRuns.SetGroupVersionKind(TestRunGVK.GroupVersion().WithKind(TestRunGVK.Kind + "List"))
	unfinishedRuns := 0
	var stuck []string
	if err := r.c.List(ctx, testRuns, ns, sel); err != nil && !meta.IsNoMatchError(err) {
		return step.Result{}, fmt.Errorf("listing the experiment's TestRuns: %w", err)
	}
	for i := range testRuns.Items {
		tr := &testRuns.Items[i]
		if testRunFinished(tr) {
			continue
		}
		if r.stuck(tr.GetDeletionTimestamp()) {
			stuck = append(stuck, "TestRun "+tr.GetName())
			continue
		}
		unfinishedRuns++
		if tr.GetDeletionTimestamp() != nil {
			continue
		}
		if err := r.c.Delete(ctx, tr, client.PropagationPolicy("Background")); client.IgnoreNotFound(err) != nil {
			return step.Result{}, fmt.Errorf("deleting TestRun %s: %w", tr.GetName(), err)
		}
		log.FromContext(ctx).Info("Deleted load TestRun", "testRun", tr.GetName())
	}

	running := 0
	for i := range pods.Items {
		p := &pods.Items[i]
		if p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
			continue
		}
		if r.stuck(p.DeletionTimestamp) {
			stuck = append(stuck, "pod "+p.Name)
			continue
		}
		running++
		if p.DeletionTimestamp != nil {
			continue
		}
		if err := r.c.Delete(ctx, p); err != nil && !apierrors.IsNotFound(err) {
			return step.Result{}, fmt.Errorf("deleting pod %s: %w", p.Name, err)
		}
		log.FromContext(ctx).Info("Deleted running load pod", "pod", p.Name)
	}

	markStopped(exp)
	if len(stuck) > 0 {
		log.FromContext(ctx).Info("Stopped waiting for load objects stuck terminating (a node gone, a finalizer never removed)",
			"objects", stuck, "past their deletion by more than", stuckTerminating.String())
	}
	if running > 0 || unfinishedRuns > 0 {
		return step.Wait(stopRecheck, "%d load pods and %d TestRuns to stop", running, unfinishedRuns), nil
	}
	return step.Done(), nil
}

// markStopped records that the scenarios that had not ended were stopped.
func markStopped(exp *perfexpv1alpha1.PerfExperiment) {
	if exp.Status.Load == nil {
		return
	}
	for i := range exp.Status.Load.Scenarios {
		st := &exp.Status.Load.Scenarios[i]
		if st.State == perfexpv1alpha1.ScenarioWaiting || st.State == perfexpv1alpha1.ScenarioRunning {
			st.State = perfexpv1alpha1.ScenarioStopped
		}
	}
}

// jobFinished reports whether the Job controller has decided the Job's outcome. It sets
// SuccessCriteriaMet or FailureTarget first, and Complete or Failed once its pods are gone.
func jobFinished(j *batchv1.Job) bool {
	for _, c := range j.Status.Conditions {
		switch c.Type {
		case batchv1.JobComplete, batchv1.JobFailed, batchv1.JobSuccessCriteriaMet, batchv1.JobFailureTarget:
			if c.Status == corev1.ConditionTrue {
				return true
			}
		}
	}
	return false
}

// jobAllEnded reports whether every completion of the Job has a pod that ended and none of its
// pods is still alive, so no pod of it runs now or will be started. It trusts the pods over the
// Job's own counts, which lag them by a sync of the Job controller.
func jobAllEnded(j *batchv1.Job, p podsOfJob) bool {
	completions := ptr.Deref(j.Spec.Completions, 1)
	return p.alive == 0 && (int32(len(p.ended)) >= completions || j.Status.Active == 0 && j.Status.Succeeded+j.Status.Failed >= completions)
}

// podsOfJob is what the pods of one Job say about it.
type podsOfJob struct {
	// ended holds the completion indexes whose pod ended. perfexp's Indexed Jobs never retry an
	// index, so a failed pod ends its index; a Job that is not Indexed (setup) may retry, so
	// only its succeeded pods count, by name.
	ended map[string]bool
	// alive counts the pods that have not ended.
	alive int
}

func podsByJob(pods []corev1.Pod) map[string]podsOfJob {
	byJob := map[string]podsOfJob{}
	for i := range pods {
		p := &pods[i]
		job := p.Labels[batchv1.JobNameLabel]
		if job == "" {
			continue
		}
		jp := byJob[job]
		if jp.ended == nil {
			jp.ended = map[string]bool{}
		}
		index, indexed := p.Annotations[batchv1.JobCompletionIndexAnnotation]
		switch {
		case p.Status.Phase == corev1.PodSucceeded && indexed:
			jp.ended[index] = true
		case p.Status.Phase == corev1.PodSucceeded:
			jp.ended[p.Name] = true
		case p.Status.Phase == corev1.PodFailed && indexed:
			jp.ended[index] = true
		case p.Status.Phase == corev1.PodFailed:
		default:
			jp.alive++
		}
		byJob[job] = jp
	}
	return byJob
}

// withoutTeardown drops the teardown Job and its pods: the teardown runs after the load is
// stopped, on a reconcile that calls Stop again, and has a timeout of its own (stopTeardown).
func withoutTeardown[T any](items []T, labelsOf func(T) map[string]string) []T {
	out := items[:0]
	for _, it := range items {
		if labelsOf(it)[labelComponent] != componentTeardown {
			out = append(out, it)
		}
	}
	return out
}

// stopTeardown suspends the teardown Job and deletes its running pods, without waiting: its
// timeout passed, and the queue is released whether or not its pod is gone yet.
func (r *Runner) stopTeardown(ctx context.Context, exp *perfexpv1alpha1.PerfExperiment) error {
	if exp.Status.TestID == "" {
		return nil
	}
	job := &batchv1.Job{}
	err := r.c.Get(ctx, client.ObjectKey{Namespace: exp.Namespace, Name: TeardownJobName(exp)}, job)
	switch {
	case apierrors.IsNotFound(err):
		return nil
	case err != nil:
		return fmt.Errorf("reading the teardown Job: %w", err)
	}
	if !jobFinished(job) && !ptr.Deref(job.Spec.Suspend, false) {
		patch := client.MergeFrom(job.DeepCopy())
		job.Spec.Suspend = ptr.To(true)
		if err := r.c.Patch(ctx, job, patch); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("suspending the teardown Job %s: %w", job.Name, err)
		}
	}
	pods := &corev1.PodList{}
	if err := r.c.List(ctx, pods, client.InNamespace(exp.Namespace), client.MatchingLabels(job.Spec.Template.Labels)); err != nil {
		return fmt.Errorf("listing the teardown pods: %w", err)
	}
	for i := range pods.Items {
		p := &pods.Items[i]
		if p.DeletionTimestamp != nil || p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
			continue
		}
		if err := r.c.Delete(ctx, p); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("deleting teardown pod %s: %w", p.Name, err)
		}
	}
	log.FromContext(ctx).Info("Stopped the teardown Job after its timeout", "job", job.Name)
	return nil
}
