package testenv

import (
	"context"
	"fmt"
	"reflect"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// RollOut plays the Deployment and StatefulSet controllers, which envtest does not run: every
// workload in ns reports a finished rollout of its current spec.
func RollOut(ctx context.Context, c client.Client, ns string) error {
	var deps appsv1.DeploymentList
	if err := c.List(ctx, &deps, client.InNamespace(ns)); err != nil {
		return err
	}
	for i := range deps.Items {
		d := &deps.Items[i]
		r := ptr.Deref(d.Spec.Replicas, 1)
		want := appsv1.DeploymentStatus{ObservedGeneration: d.Generation, Replicas: r, UpdatedReplicas: r, ReadyReplicas: r, AvailableReplicas: r}
		if reflect.DeepEqual(d.Status, want) {
			continue
		}
		d.Status = want
		if err := c.Status().Update(ctx, d); err != nil {
			return fmt.Errorf("rolling out Deployment %s: %w", d.Name, err)
		}
	}
	var stss appsv1.StatefulSetList
	if err := c.List(ctx, &stss, client.InNamespace(ns)); err != nil {
		return err
	}
	for i := range stss.Items {
		s := &stss.Items[i]
		r := ptr.Deref(s.Spec.Replicas, 1)
		rev := fmt.Sprintf("%s-%d", s.Name, s.Generation)
		want := appsv1.StatefulSetStatus{ObservedGeneration: s.Generation, Replicas: r, ReadyReplicas: r, UpdatedReplicas: r,
			AvailableReplicas: r, CurrentReplicas: r, CurrentRevision: rev, UpdateRevision: rev}
		if reflect.DeepEqual(s.Status, want) {
			continue
		}
		s.Status = want
		if err := c.Status().Update(ctx, s); err != nil {
			return fmt.Errorf("rolling out StatefulSet %s: %w", s.Name, err)
		}
	}
	return nil
}
