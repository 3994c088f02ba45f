// Queue wake-ups: which experiments of a queue an event concerns (a member moved, a Lease
// changed hands), and the index by queue they are found with.

package controllers

import (
	"context"
	"fmt"
	"strings"

	coordinationv1 "k8s.io/api/coordination/v1"
	"k8s.io/apimachinery/pkg/types"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/queue"
)

// queueMates wakes the members of a queue that a change of one experiment concerns. Only changes
// that move the queue count (see movesQueue): a waiting member's own status writes, such as its
// position, wake nobody, or a burst of n arrivals would reconcile n members n times.
// Of the queue it wakes the head (so the next experiment starts as soon as the lock is
// released), the exact places when a new holder took the lock (their message names it), and
// the members whose shown position is now out of its band, those behind the exact places after
// positionBatchDelay.
func (r *PerfExperimentReconciler) queueMates() handler.EventHandler {
	type queueT = workqueue.TypedRateLimitingInterface[ctrl.Request]
	return handler.Funcs{
		CreateFunc: func(ctx context.Context, e event.CreateEvent, q queueT) {
			// At start-up every experiment arrives as a creation, the holder too.
			exp, ok := e.Object.(*perfexpv1alpha1.PerfExperiment)
			r.wakeQueue(ctx, e.Object, ok && holdsEnvironment(exp.Status.Phase), q)
		},
		UpdateFunc: func(ctx context.Context, e event.UpdateEvent, q queueT) {
			old, okOld := e.ObjectOld.(*perfexpv1alpha1.PerfExperiment)
			cur, okNew := e.ObjectNew.(*perfexpv1alpha1.PerfExperiment)
			if !okOld || !okNew || !movesQueue(old, cur) {
				return
			}
			// A release wakes only the head: its taking the lock moves every place and names the
			// new holder, so the exact places are rewritten once, not once for the free lock and
			// again for the new holder.
			newHolder := !holdsEnvironment(old.Status.Phase) && holdsEnvironment(cur.Status.Phase)
			r.wakeQueue(ctx, cur, newHolder, q)
			if old.QueueName() != cur.QueueName() {
				r.wakeQueue(ctx, old, newHolder, q)
			}
		},
		DeleteFunc: func(ctx context.Context, e event.DeleteEvent, q queueT) {
			r.wakeQueue(ctx, e.Object, false, q)
		},
	}
}

// indexQueues adds an index by queue to the experiments informer and keeps it for
// queueMembers, which then reads the cache's objects without the copy a List makes.
func (r *PerfExperimentReconciler) indexQueues(ctx context.Context, mgr ctrl.Manager) error {
	inf, err := mgr.GetCache().GetInformer(ctx, &perfexpv1alpha1.PerfExperiment{})
	if err != nil {
		return err
	}
	if err := inf.AddIndexers(toolscache.Indexers{queueIndex: func(obj any) ([]string, error) {
		if exp, ok := obj.(*perfexpv1alpha1.PerfExperiment); ok {
			return []string{exp.QueueName()}, nil
		}
		return nil, nil
	}}); err != nil {
		return fmt.Errorf("indexing experiments by queue: %w", err)
	}
	// controller-runtime's informers are client-go's shared index informers; with a cache whose
	// informers are not, queueMembers lists through the client instead.
	if si, ok := inf.(interface{ GetIndexer() toolscache.Indexer }); ok {
		r.membersIndex = si.GetIndexer()
	}
	return nil
}

// lockTakers wakes the experiment a queue's Lease names as its holder while the cache still
// shows it waiting: it took the lock and its reconcile ended before its status said so (a
// status write that failed, a crash). It finds the lock its own at its next reconcile; without
// the wake-up that would be its next recheck, up to farWaitingRecheck later, while the rest of
// its queue waits for it. In the ordinary flow the holder's own status write follows the
// Lease's at once, and the workqueue folds the two wake-ups into one reconcile or adds one.
func (r *PerfExperimentReconciler) lockTakers() handler.EventHandler {
	type queueT = workqueue.TypedRateLimitingInterface[ctrl.Request]
	wake := func(ctx context.Context, o client.Object, q queueT) {
		lease, ok := o.(*coordinationv1.Lease)
		if !ok {
			return
		}
		h := queue.HolderOf(lease)
		if h.Name == "" {
			return // a Lease without the holder's name: its members' rechecks find it
		}
		key := types.NamespacedName{Namespace: h.Namespace, Name: h.Name}
		exp := &perfexpv1alpha1.PerfExperiment{}
		if err := r.Get(ctx, key, exp); err != nil || exp.UID != h.UID || !isWaiting(exp) {
			return
		}
		q.Add(ctrl.Request{NamespacedName: key})
	}
	// released wakes the head of the queue whose lock the old holder gave up. A holder's own
	// status change wakes its queue too (wakeQueue), but a holder whose status writes are
	// refused releases the lock without one, and its head would wait for its recheck (30 s).
	// A lock is released by deleting its Lease (internal/queue); cur is nil then.
	released := func(ctx context.Context, old, cur client.Object, q queueT) {
		oldLease, ok := old.(*coordinationv1.Lease)
		if !ok {
			return
		}
		if curLease, ok := cur.(*coordinationv1.Lease); ok && queue.HolderOf(curLease).UID != "" {
			return
		}
		h := queue.HolderOf(oldLease)
		if h.Name == "" {
			return // no holder before, or one without its name: the members' rechecks find it
		}
		exp := &perfexpv1alpha1.PerfExperiment{}
		if err := r.Get(ctx, types.NamespacedName{Namespace: h.Namespace, Name: h.Name}, exp); err != nil || exp.UID != h.UID {
			return // gone: its deletion woke the queue
		}
		r.wakeQueue(ctx, exp, false, q)
	}
	return handler.Funcs{
		CreateFunc: func(ctx context.Context, e event.CreateEvent, q queueT) { wake(ctx, e.Object, q) },
		UpdateFunc: func(ctx context.Context, e event.UpdateEvent, q queueT) {
			wake(ctx, e.ObjectNew, q)
			released(ctx, e.ObjectOld, e.ObjectNew, q)
		},
		DeleteFunc: func(ctx context.Context, e event.DeleteEvent, q queueT) { released(ctx, e.Object, nil, q) },
	}
}

// isQueueLease reports whether o is a queue's Lease (not, say, the leader election's).
func (r *PerfExperimentReconciler) isQueueLease(o client.Object) bool {
	return r.Lock != nil && o.GetNamespace() == r.Lock.Namespace && strings.HasPrefix(o.GetName(), "perfexp-queue")
}

// movesQueue reports whether a change of an experiment can change its queue: who waits, in
// what order, and who holds the environment.
func movesQueue(old, cur *perfexpv1alpha1.PerfExperiment) bool {
	return isWaiting(old) != isWaiting(cur) ||
		holdsEnvironment(old.Status.Phase) != holdsEnvironment(cur.Status.Phase) ||
		old.Status.Phase.IsTerminal() != cur.Status.Phase.IsTerminal() ||
		(old.Status.Phase == perfexpv1alpha1.PhaseAnalyzing) != (cur.Status.Phase == perfexpv1alpha1.PhaseAnalyzing) ||
		old.QueueName() != cur.QueueName() ||
		member(old) != member(cur)
}

// wakeQueue enqueues the members of o's queue that need a reconcile after o changed.
func (r *PerfExperimentReconciler) wakeQueue(ctx context.Context, o client.Object, newHolder bool, q workqueue.TypedRateLimitingInterface[ctrl.Request]) {
	exp, ok := o.(*perfexpv1alpha1.PerfExperiment)
	if !ok {
		return
	}
	mates, err := r.queueMembers(ctx, exp.QueueName())
	if err != nil {
		log.FromContext(ctx).Error(err, "Listing queue mates failed", "queue", exp.QueueName())
		return
	}
	waiting := make([]queue.Member, 0, len(mates))
	shown := make(map[types.UID]int32, len(mates))
	for _, m := range mates {
		if isWaiting(m) {
			waiting = append(waiting, member(m))
			shown[m.UID] = m.Status.QueuePosition
		}
	}
	queue.Order(waiting)
	for i, m := range waiting {
		exact := int32(i + 1)
		req := ctrl.Request{NamespacedName: types.NamespacedName{Namespace: m.Namespace, Name: m.Name}}
		switch {
		case m.UID == exp.UID:
			// Its own change reconciles it already (For).
		case exact == 1:
			addFirst(q, req)
		case queue.Exact(exact) && newHolder:
			q.Add(req)
		case queue.ShownPosition(shown[m.UID], exact) == shown[m.UID]:
		case queue.Exact(exact):
			q.Add(req)
		default:
			q.AddAfter(req, positionBatchDelay)
		}
	}
}

// headPriority is the workqueue priority of a queue's head: when the lock is released, the next
// experiment goes before the reconciles already waiting (a burst of other queues' work), so it
// takes the lock at once instead of after the whole backlog.
const headPriority = 10

// addFirst adds req ahead of the items of lower priority when the controller's workqueue is
// controller-runtime's priority queue (the default), else at the end.
func addFirst(q workqueue.TypedRateLimitingInterface[ctrl.Request], req ctrl.Request) {
	if pq, ok := q.(priorityqueue.PriorityQueue[ctrl.Request]); ok {
		pq.AddWithOpts(priorityqueue.AddOpts{Priority: ptr.To(headPriority)}, req)
		return
	}
	q.Add(req)
}
