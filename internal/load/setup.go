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

// setup runs spec.setup as a Job and waits for it. The Job's own conditions say whether it
// succeeded or used up its retries; its pods are looked at for what no retry fixes (a missing
// image, a pod that cannot be scheduled).
func (r *Runner) setup(ctx context.Context, exp *perfexpv1alpha1.PerfExperiment) (step.Result, error) {
	if exp.Spec.Setup == nil {
		return step.Done(), nil
	}
	if exp.Status.TestID == "" {
		return step.Result{}, errors.New("the experiment has no test id yet")
	}
	job := r.setupJob(exp)
	existing := &batchv1.Job{}
	if err := r.createOwned(ctx, exp, job, existing); err != nil {
		res, err := asResult(err)
		if res.Failure != nil {
			res.Failure.Reason = perfexpv1alpha1.ReasonSetupFailed
		}
		return res, err
	}
	if existing.Name != "" {
		job = existing
	}
	pods := &corev1.PodList{}
	if err := r.c.List(ctx, pods, client.InNamespace(exp.Namespace), client.MatchingLabels(job.Spec.Template.Labels)); err != nil {
		return step.Result{}, fmt.Errorf("listing the setup pods: %w", err)
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
			log.FromContext(ctx).Info("Setup finished", "job", job.Name)
			return step.Done(), nil
		case batchv1.JobFailed:
			msg := fmt.Sprintf("setup Job %s failed (%s): %s", job.Name, c.Reason, c.Message)
			if latest != nil {
				msg += r.podLogTail(ctx, latest, setupContainer)
			}
			return step.Fail(perfexpv1alpha1.ReasonSetupFailed, "%s", msg), nil
		}
	}
	if latest == nil {
		if v := missingPod(0, job.CreationTimestamp.Time, now, r.opts.PendingTimeout); v.phase == podBroken {
			return step.Fail(perfexpv1alpha1.ReasonSetupFailed, "setup Job %s: %s", job.Name, v.message), nil
		}
		return step.Wait(r.opts.PollInterval, "setup Job %s to start a pod", job.Name), nil
	}
	if v := viewPod(latest, setupContainer, 0, now, r.opts.PendingTimeout); v.phase == podBroken {
		return step.Fail(perfexpv1alpha1.ReasonSetupFailed, "setup Job %s, pod %s: %s", job.Name, latest.Name, brokenWhat(&v)), nil
	}
	return step.Wait(r.opts.PollInterval, "setup Job %s", job.Name), nil
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
