package controllers

import (
	"context"
	"fmt"
	"time"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/queue"
)

// environmentRecheck is how soon an experiment that holds its queue's lock but waits for its
// target namespace's looks again: the other queue's moves do not wake it.
const environmentRecheck = 5 * time.Second

// takeEnvironment takes, for an experiment whose queue is not its target namespace, the lock of
// the target namespace's own queue as well. Queue names are the authors' strings: without it an
// experiment in a queue named like no namespace (or like another one) patched and loaded an
// environment while the experiment holding that namespace's queue ran there too. With it, one
// environment runs one experiment at a time whatever the queues are called.
//
// It returns why the experiment must wait, or "" once it holds both locks. While it waits it
// holds neither: holding its queue's lock while waiting for another could deadlock two queues
// each aimed at the other's namespace. It is the head of its queue, so it takes its queue's
// lock again at its next look.
func (r *PerfExperimentReconciler) takeEnvironment(ctx context.Context, exp *perfexpv1alpha1.PerfExperiment, queueName string) (string, error) {
	target := exp.TargetNamespace()
	if queueName == target {
		return "", nil
	}
	got, err := r.Lock.TryAcquire(ctx, target, exp.UID, exp.Namespace+"/"+exp.Name, func(ctx context.Context, h queue.Holder) (bool, error) {
		if h.Name == "" {
			return true, nil // no name to look it up by: the target's own queue judges it
		}
		return r.holderAlive(ctx, nil, h)
	})
	if err != nil || got {
		return "", err
	}
	if err := r.Lock.Release(ctx, queueName, exp.UID); err != nil {
		return "", err
	}
	holder, err := r.Lock.Holder(ctx, target)
	if err != nil {
		return "", err
	}
	by := "another experiment"
	if holder.Name != "" {
		by = holder.Namespace + "/" + holder.Name
	}
	return fmt.Sprintf("first in queue %s, waiting for namespace %s, where %s is running: one experiment at a time per environment, whatever the queue", queueName, target, by), nil
}

// releaseLocks frees the experiment's queue's lock and, when it is not the same, its target
// namespace's (takeEnvironment).
func (r *PerfExperimentReconciler) releaseLocks(ctx context.Context, exp *perfexpv1alpha1.PerfExperiment) error {
	if err := r.Lock.Release(ctx, exp.QueueName(), exp.UID); err != nil {
		return err
	}
	if target := exp.TargetNamespace(); target != exp.QueueName() {
		return r.Lock.Release(ctx, target, exp.UID)
	}
	return nil
}
