package controllers

import (
	"context"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
)

// queueProblem says why exp may not join its queue, or "" when it may. A queue's name is one
// cluster-wide string, and every experiment's default queue is its target namespace's name: a
// queue named like a namespace is that namespace's, so an experiment targeting another
// namespace joins it (and, with a high priority, holds it) only when that namespace's
// administrator lists the experiment's target namespace in its perfexp.dev/queue-members
// annotation. A queue named like no namespace is shared by whoever names it.
func (r *PerfExperimentReconciler) queueProblem(ctx context.Context, exp *perfexpv1alpha1.PerfExperiment) (string, error) {
	queue, target := exp.QueueName(), exp.TargetNamespace()
	if queue == target {
		return "", nil
	}
	var reader client.Reader = r.Client
	if r.APIReader != nil {
		reader = r.APIReader
	}
	ns := &corev1.Namespace{}
	switch err := reader.Get(ctx, client.ObjectKey{Name: queue}, ns); {
	case apierrors.IsNotFound(err):
		return "", nil
	case err != nil:
		return "", fmt.Errorf("reading namespace %s for its %s annotation: %w", queue, perfexpv1alpha1.AnnotationQueueMembers, err)
	}
	var members []string
	for _, m := range strings.Split(ns.Annotations[perfexpv1alpha1.AnnotationQueueMembers], ",") {
		members = append(members, strings.TrimSpace(m))
	}
	if slices.Contains(members, target) || slices.Contains(members, "*") {
		return "", nil
	}
	return fmt.Sprintf("queue %s is namespace %s's own queue, and this experiment targets namespace %s: it may join that queue only if namespace %s's administrator lists %s in its annotation %s; leave spec.queue unset to use the queue of %s",
		queue, queue, target, queue, target, perfexpv1alpha1.AnnotationQueueMembers, target), nil
}
