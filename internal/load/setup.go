package load

import (
	"context"
	"errors"
	"fmt"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/step"
)

// dataJob is one of the two data Jobs: spec.setup before the load, spec.teardown after it.
type dataJob struct {
	what      string // "setup" or "teardown", for messages
	spec      *perfexpv1alpha1.Setup
	name      string
	component string
	failed    string // the failure's reason
}

func setupOf(exp *perfexpv1alpha1.PerfExperiment) dataJob {
	return dataJob{what: "setup", spec: exp.Spec.Setup, name: SetupJobName(exp), component: componentSetup, failed: perfexpv1alpha1.ReasonSetupFailed}
}

func teardownOf(exp *perfexpv1alpha1.PerfExperiment) dataJob {
	return dataJob{what: "teardown", spec: exp.Spec.Teardown, name: TeardownJobName(exp), component: componentTeardown, failed: perfexpv1alpha1.ReasonTeardownFailed}
}

// setup runs spec.setup as a Job and waits for it.
func (r *Runner) setup(ctx context.Context, exp *perfexpv1alpha1.PerfExperiment) (step.Result, error) {
	return r.runDataJob(ctx, exp, setupOf(exp))
}

// teardown runs spec.teardown as a Job and waits for it.
func (r *Runner) teardown(ctx context.Context, exp *perfexpv1alpha1.PerfExperiment) (step.Result, error) {
	return r.runDataJob(ctx, exp, teardownOf(exp))
}

// runDataJob runs a data Job and waits for it. The Job's own conditions say whether it
// succeeded or used up its retries; its pods are looked at for what no retry fixes (a missing
// image, a pod that cannot be scheduled).
func (r *Runner) runDataJob(ctx context.Context, exp *perfexpv1alpha1.PerfExperiment, d dataJob) (step.Result, error) {
	if d.spec == nil {
		return step.Done(), nil
	}
	if exp.Status.TestID == "" {
		return step.Result{}, errors.New("the experiment has no test id yet")
	}
	job := r.dataJobObject(exp, d)
	existing := &batchv1.Job{}
	spec := &job.Spec.Template.Spec
	if err := r.admitPod(ctx, exp, "the "+d.what+" Job "+job.Name, spec.ServiceAccountName, spec.Containers[0].Image); err != nil {
		return asResult(err)
	}
	if err := r.createOwned(ctx, exp, job, existing); err != nil {
		res, err := asResult(err)
		if res.Failure != nil {
			res.Failure.Reason = d.failed
		}
		return res, err
	}
	if existing.Name != "" {
		job = existing
	}
	pods := &corev1.PodList{}
	if err := r.c.List(ctx, pods, client.InNamespace(exp.Namespace), client.MatchingLabels(job.Spec.Template.Labels)); err != nil {
		return step.Result{}, fmt.Errorf("listing the %s pods: %w", d.what, err)
	}
	now := r.opts.Clock.Now()
	var latest *corev1.Pod
	for i := range pods.Items {
		p := &pods.Items[i]
		if latest == nil || latest.CreationTimestamp.Before(&p.CreationTimestamp) {
			latest = p
		}
	}
	for _, c := range job.Status.Conditions {
		if c.Status != corev1.ConditionTrue {
			continue
		}
		switch c.Type {
		case batchv1.JobComplete:
			log.FromContext(ctx).Info("Data Job finished", "job", job.Name, "step", d.what)
			return step.Done(), nil
		case batchv1.JobFailed:
			msg := fmt.Sprintf("%s Job %s failed (%s): %s", d.what, job.Name, c.Reason, c.Message)
			if latest != nil {
				msg += r.podLogTail(ctx, latest, setupContainer)
			}
			return step.Fail(d.failed, "%s", msg), nil
		}
	}
	if latest == nil {
		if v := missingPod(0, job.CreationTimestamp.Time, now, r.opts.PendingTimeout); v.phase == podBroken {
			return step.Fail(d.failed, "%s Job %s: %s", d.what, job.Name, v.message), nil
		}
		return step.Wait(r.opts.PollInterval, "%s Job %s to start a pod", d.what, job.Name), nil
	}
	if v := viewPod(latest, setupContainer, 0, now, r.opts.PendingTimeout); v.phase == podBroken {
		return step.Fail(d.failed, "%s Job %s, pod %s: %s", d.what, job.Name, latest.Name, brokenWhat(&v)), nil
	}
	return step.Wait(r.opts.PollInterval, "%s Job %s", d.what, job.Name), nil
}

// podLogTail is "; log tail:" and the end of a container's log (or the kubelet's termination
// message when the log cannot be read), or "" when there is neither.
func (r *Runner) podLogTail(ctx context.Context, pod *corev1.Pod, container string) string {
	var text string
	for _, cs := range pod.Status.ContainerStatuses {
		if cs.Name == container && cs.State.Terminated != nil {
			text = cs.State.Terminated.Message
		}
	}
	if r.opts.Logs != nil {
		if data, err := r.opts.Logs.Tail(ctx, pod.Namespace, pod.Name, container, 64*1024); err == nil {
			text = string(data)
		}
	}
	if tail := LogTail([]byte(text), tailLinesInMessage, tailBytesInMessage); tail != "" {
		return "; log tail:\n" + tail
	}
	return ""
}
