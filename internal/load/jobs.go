package load

import (
	"context"
	"fmt"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
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
		if err := checkOwned(exp, job); err != nil {
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
	return views, time.Time{}, nil
}
