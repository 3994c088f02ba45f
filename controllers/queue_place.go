package controllers

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/queue"
)

// place is where a waiting experiment stands in its queue, as the cache shows it.
type place struct {
	queue  string
	mates  []*perfexpv1alpha1.PerfExperiment // the cache's own objects: read only
	holder queue.Holder
	// position is the exact 1-based place among the waiting members; 0 when the cache does not
	// show the experiment waiting.
	position int32
}

// placeInQueue orders the experiment's queue and finds its place in it. Both Pending (joining)
// and Queued (waiting) ask, so that the first status write of a new experiment already carries
// what Queued's reconciles would write.
func (r *PerfExperimentReconciler) placeInQueue(ctx context.Context, exp *perfexpv1alpha1.PerfExperiment) (place, error) {
	name := exp.QueueName()
	mates, err := r.queueMembers(ctx, name)
	if err != nil {
		return place{}, err
	}
	holder, err := r.Lock.Holder(ctx, name)
	if err != nil {
		return place{}, err
	}
	waiting := []queue.Member{}
	for _, m := range mates {
		if isWaiting(m) {
			waiting = append(waiting, member(m))
		}
	}
	queue.Order(waiting)
	return place{queue: name, mates: mates, holder: holder, position: queue.Position(waiting, exp.UID)}, nil
}

// showWaiting puts a waiting experiment's place into its status (position, Queued condition and
// message) and returns the position shown.
func showWaiting(exp *perfexpv1alpha1.PerfExperiment, p place) int32 {
	shown := queue.ShownPosition(exp.Status.QueuePosition, p.position)
	exp.Status.QueuePosition = shown
	msg := queuedMessage(shown, p.queue, holderName(p.mates, p.holder.UID))
	setCondition(exp, perfexpv1alpha1.ConditionQueued, metav1.ConditionTrue, perfexpv1alpha1.ReasonWaitingForQueue, "%s", msg)
	exp.Status.Message = msg
	return shown
}
