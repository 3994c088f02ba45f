package load

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
)

// jobBackend runs each unit as an Indexed Job of k6 pods.
type jobBackend struct{ r *Runner }

func (b jobBackend) ensure(ctx context.Context, exp *perfexpv1alpha1.PerfExperiment, u unit) (runnerRef, error) {
	name := UnitName(exp, u.name)
	job := &batchv1.Job{}
	err := b.r.c.Get(ctx, types.NamespacedName{Namespace: exp.Namespace, Name: name}, job)
	if err == nil {
		if err := b.r.checkOwned(ctx, exp, job); err != nil {
			return runnerRef{}, err
		}
		return runnerRef{name: name, created: job.CreationTimestamp.Time}, nil
	}
	if client.IgnoreNotFound(err) != nil {
		return runnerRef{}, err
	}
	cm, err := b.r.ensureScriptConfigMap(ctx, exp, u, true)
	if err != nil {
		return runnerRef{}, err
	}
	job = b.r.k6Job(exp, u, cm)
	spec := &job.Spec.Template.Spec
	if err := b.r.admitPod(ctx, exp, "scenario "+u.name+"'s Job "+name, spec.ServiceAccountName, spec.Containers[0].Image); err != nil {
		return runnerRef{}, err
	}
	if err := b.r.admitPlacement("scenario "+u.name+"'s Job "+name, exp.Spec.Load.Pod); err != nil {
		return runnerRef{}, err
	}
	existing := &batchv1.Job{}
	if err := b.r.createOwned(ctx, exp, job, existing); err != nil {
		return runnerRef{}, err
	}
	if existing.Name != "" {
		job = existing
	}
	created := job.CreationTimestamp.Time
	if created.IsZero() {
		created = b.r.opts.Clock.Now()
	}
	return runnerRef{name: name, created: created}, nil
}

func (b jobBackend) observe(ctx context.Context, exp *perfexpv1alpha1.PerfExperiment, u unit, ref runnerRef) ([]podView, time.Time, error) {
	pods := &corev1.PodList{}
	if err := b.r.c.List(ctx, pods, client.InNamespace(exp.Namespace), client.MatchingLabels(unitSelector(exp, u.name))); err != nil {
		return nil, time.Time{}, fmt.Errorf("listing the pods of %s: %w", ref.name, err)
	}
	job := &batchv1.Job{}
	if err := b.r.c.Get(ctx, types.NamespacedName{Namespace: exp.Namespace, Name: ref.name}, job); client.IgnoreNotFound(err) != nil {
		return nil, time.Time{}, fmt.Errorf("reading Job %s: %w", ref.name, err)
	}
	n := int(u.parallelism)
	byIndex := jobPods(pods.Items, n)
	now := b.r.opts.Clock.Now()
	views := make([]podView, n)
	for i := 0; i < n; i++ {
		if p, ok := byIndex[i]; ok {
			views[i] = viewPod(p, k6Container, i, now, b.r.opts.PendingTimeout)
		} else {
			views[i] = missingPod(i, ref.created, now, b.r.opts.PendingTimeout)
		}
	}
	return jobAccount(job, views, now), time.Time{}, nil
}

// jobAccount corrects the pods' views with the Job's own account of its indexes. The Job
// controller counts an index completed or failed only once it saw its pod end, so an index it
// counts has ended even when the view has no pod for it (a pod gone since) or still has the
// pod pending or running (a status update this operator has not seen: believed once the Job
// has been finished for jobAccountGrace, as the two caches may lag each other by a moment).
// Without this, a load whose Job had finished waited for a pod that would never report
// again, until a timeout failed it.
func jobAccount(job *batchv1.Job, views []podView, now time.Time) []podView {
	completed := indexSet(job.Status.CompletedIndexes)
	failed := indexSet(ptr.Deref(job.Status.FailedIndexes, ""))
	if len(completed) == 0 && len(failed) == 0 {
		return views
	}
	end, finished := jobEnd(job)
	if !finished {
		end = now
	}
	staleView := finished && now.Sub(end) >= jobAccountGrace
	for i := range views {
		v := &views[i]
		if v.phase == podEnded || v.phase == podBroken || (v.name != "" && !staleView) {
			continue
		}
		switch {
		case completed[v.index]:
			// A pod the Job counts completed exited 0 (restartPolicy Never, one container).
			v.phase, v.exitCode, v.reason, v.finished = podEnded, 0, reasonJobCounted, end
			if v.started.IsZero() {
				v.started = end
			}
		case failed[v.index]:
			v.phase, v.reason = podBroken, reasonJobCounted
			v.message = "the Job counts this pod failed, and its end was never seen (the pod is gone or its status was not read); how k6 exited is not known"
		}
	}
	return views
}

// jobAccountGrace is how long after its Job finished a pod still seen running is believed
// over by the Job's account.
const jobAccountGrace = 30 * time.Second

// jobEnd is when the Job finished (Complete or Failed), if it did.
func jobEnd(job *batchv1.Job) (time.Time, bool) {
	if job.Status.CompletionTime != nil {
		return job.Status.CompletionTime.Time, true
	}
	for _, c := range job.Status.Conditions {
		if (c.Type == batchv1.JobComplete || c.Type == batchv1.JobFailed) && c.Status == corev1.ConditionTrue {
			return c.LastTransitionTime.Time, true
		}
	}
	return time.Time{}, false
}

// reasonJobCounted marks a pod whose end is known from its Job only.
const reasonJobCounted = "CountedByJob"

// indexSet reads a Job's completedIndexes or failedIndexes ("1,3-5,7").
func indexSet(s string) map[int]bool {
	out := map[int]bool{}
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		lo, hi, isRange := strings.Cut(part, "-")
		first, err := strconv.Atoi(lo)
		if err != nil {
			continue
		}
		last := first
		if isRange {
			if last, err = strconv.Atoi(hi); err != nil {
				continue
			}
		}
		for i := first; i <= last && i-first < 1024; i++ {
			out[i] = true
		}
	}
	return out
}
