package controllers

import (
	"context"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/queue"
)

// reconcileQueued keeps the experiment's queue position current and takes the queue's lock
// when it is first in line and the lock is free (or its holder is gone).
func (r *PerfExperimentReconciler) reconcileQueued(ctx context.Context, s *scope) (ctrl.Result, error) {
	exp := s.exp
	p, err := r.placeInQueue(ctx, exp)
	if err != nil {
		return ctrl.Result{}, err
	}
	name, mates, holder, position := p.queue, p.mates, p.holder, p.position

	acquired := holder.UID == exp.UID // a restart after taking the lock but before saying so
	if !acquired && position == 1 {
		// The queue orders a baseline before the experiments compared with it only once the
		// cache shows it; an experiment applied in the same request as its baseline, or whose
		// baseline waits in another queue, must not run first on a copy that lags.
		wait, err := r.waitForBaseline(ctx, s)
		if err != nil {
			return ctrl.Result{}, err
		}
		if wait != "" {
			exp.Status.QueuePosition = position
			setCondition(exp, perfexpv1alpha1.ConditionQueued, metav1.ConditionTrue, perfexpv1alpha1.ReasonWaitingForBaseline, "%s", wait)
			exp.Status.Message = wait
			return ctrl.Result{RequeueAfter: queuedBaselineRecheck}, nil
		}
		// While the cache shows the lock held by a mate that still holds its environment, the
		// head need not ask the API server: that mate's leaving (Analyzing, an end, a deletion)
		// moves the queue and wakes the head again, and the cache shows it by then.
		if !heldByRunningMate(mates, holder) {
			acquired, err = r.Lock.TryAcquire(ctx, name, exp.UID, exp.Namespace+"/"+exp.Name, func(ctx context.Context, h queue.Holder) (bool, error) {
				return r.holderAlive(ctx, mates, h)
			})
			if err != nil {
				return ctrl.Result{}, err
			}
			if acquired && !holder.Free() {
				log.FromContext(ctx).Info("Reclaimed queue lock from an experiment that is gone", "queue", name, "previousHolder", holder.UID)
			}
		}
	}
	if !acquired {
		return ctrl.Result{RequeueAfter: waitingRecheckAt(showWaiting(exp, p))}, nil
	}
	wait, err := r.takeEnvironment(ctx, exp, name)
	if err != nil {
		return ctrl.Result{}, err
	}
	if wait != "" {
		exp.Status.QueuePosition = position
		setCondition(exp, perfexpv1alpha1.ConditionQueued, metav1.ConditionTrue, perfexpv1alpha1.ReasonWaitingForQueue, "%s", wait)
		exp.Status.Message = wait
		return ctrl.Result{RequeueAfter: environmentRecheck}, nil
	}

	// The finalizer goes on before the status says Preparing, so before anything is patched.
	if err := r.ensureFinalizer(ctx, s); err != nil {
		return ctrl.Result{}, err
	}

	// What can be known wrong now fails the run before anything is patched, and frees the queue.
	res, err := r.precheck(ctx, exp)
	if err != nil {
		return ctrl.Result{}, err
	}
	if res.Failure != nil {
		if err := r.releaseLocks(ctx, exp); err != nil {
			return ctrl.Result{}, err
		}
		exp.Status.QueuePosition = 0
		setCondition(exp, perfexpv1alpha1.ConditionQueued, metav1.ConditionFalse, res.Failure.Reason, "left queue %s without running", name)
		r.fail(s, res.Failure.Reason, "%s", res.Failure.Message)
		return ctrl.Result{}, nil
	}

	now := metav1.NewTime(s.now)
	exp.Status.QueuePosition = 0
	exp.Status.StartTime = &now
	setCondition(exp, perfexpv1alpha1.ConditionQueued, metav1.ConditionFalse, perfexpv1alpha1.ReasonLockAcquired, "holds the lock of queue %s", name)
	r.reportOrphans(exp)
	r.enter(s, perfexpv1alpha1.PhasePreparing, "took the lock of queue %s; preparing the environment", name)
	return ctrl.Result{}, nil
}

// queuedMessage says where a waiting experiment stands. It names neither the length of the
// queue nor, behind the exact places, the holder: either would change the message, and so
// cost a status write, of every waiting member at every arrival or dequeue.
func queuedMessage(shown int32, queueName, holder string) string {
	if !queue.Exact(shown) {
		return fmt.Sprintf("about position %d in queue %s", shown, queueName)
	}
	msg := fmt.Sprintf("position %d in queue %s", shown, queueName)
	if holder != "" {
		msg += "; " + holder + " is running"
	}
	return msg
}

// waitingRecheckAt is how long a waiting experiment at the shown position waits before looking
// at its queue again when nothing it watches changed. Changes of the queue wake the members
// they concern (see queueMates); this is a safety net, so members far from the head, which
// cannot start soon, look less often.
func waitingRecheckAt(shown int32) time.Duration {
	if queue.Exact(shown) {
		return waitingRecheck
	}
	return farWaitingRecheck
}

// sweepRunsCreatedWithin bounds how long a sweep's run waits for its baseline run to be
// created, whatever --baseline-arrival-grace says: the sweep creates all its runs within one
// reconcile, so a baseline still missing after this was refused (the sweep says why).
const sweepRunsCreatedWithin = 30 * time.Second

// queuedBaselineRecheck is how often an experiment first in line looks again at a baseline that
// has not run yet.
const queuedBaselineRecheck = 2 * time.Second

// waitForBaseline says why the experiment must not take its queue's lock yet, or "" when it may:
// its baseline exists and has not run yet, or does not exist yet while the experiment is younger
// than BaselineArrivalGrace. The baseline is read from the API server, not the cache.
func (r *PerfExperimentReconciler) waitForBaseline(ctx context.Context, s *scope) (string, error) {
	exp := s.exp
	if exp.Spec.Baseline == nil || exp.Spec.Baseline.Name == exp.Name {
		return "", nil // a self-reference is the precheck's to refuse
	}
	var reader client.Reader = r.Client
	if r.APIReader != nil {
		reader = r.APIReader
	}
	grace := r.BaselineArrivalGrace
	if sweepOrdered(exp) {
		// A sweep creates its runs one by one in one reconcile, in its plan's order, and a
		// randomized plan may put a variant before its baseline: the variant, first in line,
		// must not fail for a baseline its sweep is about to create.
		grace = max(grace, sweepRunsCreatedWithin)
	}
	b := &perfexpv1alpha1.PerfExperiment{}
	err := reader.Get(ctx, client.ObjectKey{Namespace: exp.Namespace, Name: exp.Spec.Baseline.Name}, b)
	switch {
	case apierrors.IsNotFound(err):
		if s.now.Sub(exp.CreationTimestamp.Time) < grace {
			return fmt.Sprintf("waiting up to %s for its baseline %s to be created", grace, exp.Spec.Baseline.Name), nil
		}
		return "", nil // the precheck fails it: BaselineNotFound
	case err != nil:
		return "", fmt.Errorf("reading baseline %s: %w", exp.Spec.Baseline.Name, err)
	case sweepOrdered(exp):
		// The sweep's plan orders its runs; a baseline that runs later is waited for in the
		// analysis.
		return "", nil
	case isWaiting(b) && !leadsBackTo(ctx, reader, b, exp):
		return fmt.Sprintf("waiting for its baseline %s to run first", b.Name), nil
	}
	return "", nil
}

// leadsBackTo reports whether following spec.baseline from b comes back to exp: a cycle, which
// the precheck refuses, so nobody on it may wait for the others.
func leadsBackTo(ctx context.Context, reader client.Reader, b, exp *perfexpv1alpha1.PerfExperiment) bool {
	for range maxBaselineChain {
		if b.Spec.Baseline == nil {
			return false
		}
		if b.Spec.Baseline.Name == exp.Name {
			return true
		}
		next := &perfexpv1alpha1.PerfExperiment{}
		if err := reader.Get(ctx, client.ObjectKey{Namespace: exp.Namespace, Name: b.Spec.Baseline.Name}, next); err != nil {
			return false
		}
		b = next
	}
	return true // longer than any chain the precheck follows: let it judge
}

// sweepOrdered reports whether the experiment's place in its queue was set by a PerfSweep,
// which may put a run before its baseline on purpose (spec.order Randomized): such a run keeps
// its place, and its analysis waits for the baseline's results instead.
func sweepOrdered(exp *perfexpv1alpha1.PerfExperiment) bool {
	_, ok := exp.Annotations[queue.AnnotationSequence]
	return ok
}

// queueMembers lists every experiment of a queue, from the cache. The experiments are the
// cache's own: callers must not modify them.
//
// They are read from the informer's own index when there is one: the client's List, even
// without deep copies, copies every member into a fresh slice, about 2 MB for a queue of 1,000
// at every reconcile of every member, which was most of what a long queue allocated.
func (r *PerfExperimentReconciler) queueMembers(ctx context.Context, name string) ([]*perfexpv1alpha1.PerfExperiment, error) {
	if r.membersIndex != nil {
		objs, err := r.membersIndex.ByIndex(queueIndex, name)
		if err != nil {
			return nil, fmt.Errorf("listing queue %s: %w", name, err)
		}
		out := make([]*perfexpv1alpha1.PerfExperiment, 0, len(objs))
		for _, o := range objs {
			if exp, ok := o.(*perfexpv1alpha1.PerfExperiment); ok {
				out = append(out, exp)
			}
		}
		return out, nil
	}
	list := &perfexpv1alpha1.PerfExperimentList{}
	if err := r.List(ctx, list, client.MatchingFields{queueIndex: name}, client.UnsafeDisableDeepCopy); err != nil {
		return nil, fmt.Errorf("listing queue %s: %w", name, err)
	}
	out := make([]*perfexpv1alpha1.PerfExperiment, len(list.Items))
	for i := range list.Items {
		out[i] = &list.Items[i]
	}
	return out, nil
}

func member(exp *perfexpv1alpha1.PerfExperiment) queue.Member {
	m := queue.Member{UID: exp.UID, Namespace: exp.Namespace, Name: exp.Name, Priority: exp.Spec.Priority, Created: exp.CreationTimestamp.Time}.
		WithOrderAnnotations(exp.Annotations)
	if exp.Spec.Baseline != nil && !sweepOrdered(exp) {
		m.Baseline = exp.Spec.Baseline.Name
	}
	return m
}

// holderAlive reports whether the lock holder still needs the lock: it exists and has not yet
// restored the environment. A holder that was deleted without its finalizer, or that ended
// without releasing the lock (a crash at the wrong moment), is gone.
// The holder is read from the API server by the name the Lease records and must carry the
// recorded UID: the cache may not yet show a holder that just took the lock, and an experiment
// re-created under the holder's name is not the holder. Leases that name no holder fall back
// to the queue's members.
func (r *PerfExperimentReconciler) holderAlive(ctx context.Context, mates []*perfexpv1alpha1.PerfExperiment, h queue.Holder) (bool, error) {
	stillHolds := func(e *perfexpv1alpha1.PerfExperiment) bool {
		p := e.Status.Phase
		return !p.IsTerminal() && p != perfexpv1alpha1.PhaseAnalyzing && p != perfexpv1alpha1.PhaseConfirming
	}
	if h.Name == "" {
		for _, m := range mates {
			if m.UID == h.UID {
				return stillHolds(m), nil
			}
		}
		return false, nil
	}
	var reader client.Reader = r.Client
	if r.APIReader != nil {
		reader = r.APIReader
	}
	e := &perfexpv1alpha1.PerfExperiment{}
	err := reader.Get(ctx, client.ObjectKey{Namespace: h.Namespace, Name: h.Name}, e)
	switch {
	case apierrors.IsNotFound(err):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("reading the queue lock's holder %s/%s: %w", h.Namespace, h.Name, err)
	}
	return e.UID == h.UID && stillHolds(e), nil
}

// heldByRunningMate reports whether the holder is a member of the queue whose cached phase
// holds the environment (Preparing to Restoring).
func heldByRunningMate(mates []*perfexpv1alpha1.PerfExperiment, h queue.Holder) bool {
	if h.Free() {
		return false
	}
	for _, m := range mates {
		if m.UID == h.UID {
			return holdsEnvironment(m.Status.Phase) && m.DeletionTimestamp.IsZero()
		}
	}
	return false
}

func holderName(mates []*perfexpv1alpha1.PerfExperiment, uid types.UID) string {
	for _, m := range mates {
		if m.UID == uid && uid != "" {
			return m.Namespace + "/" + m.Name
		}
	}
	return ""
}
