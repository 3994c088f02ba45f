// Package controllers holds perfexp's reconcilers. They orchestrate: the work of each phase is
// done by collaborators in internal/ (variant, load, analysis, report), and no PromQL or report
// formatting lives here.
package controllers

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/events"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/metrics"
	"github.com/perfexp/perfexp/internal/queue"
)

// queueIndex indexes experiments by their resolved queue name.
const queueIndex = "perfexp.dev/queue"

// waitingRecheck is how often a waiting experiment at an exact position looks at its queue even
// when nothing it watches changed, as a safety net for missed events; farWaitingRecheck is the
// same for members further back.
const (
	waitingRecheck    = 30 * time.Second
	farWaitingRecheck = 5 * time.Minute
)

// positionBatchDelay is how long a change of a queue waits before it rewrites the positions of
// members behind the exact places: the changes of a burst of arrivals, or of a dequeue and the
// start that follows it, reach those members together, as one status write each at most.
const positionBatchDelay = 2 * time.Second

// PerfExperimentReconciler drives PerfExperiments through their phases.
//
// Several experiments may be reconciled at once (MaxConcurrentReconciles); controller-runtime
// never reconciles one experiment in two workers at a time. What workers share is safe for
// that: the queue lock is a Lease written with optimistic concurrency, so two workers taking
// the lock of one queue cannot both win; the reconciler's own fields are set once at start,
// except refused, which is a sync.Map; the collaborators keep no per-experiment state in memory.
type PerfExperimentReconciler struct {
	client.Client
	// APIReader reads without the cache: the holder of a queue's lock is looked up through it,
	// so a lock is never reclaimed on a stale copy. Client when nil.
	APIReader client.Reader
	Recorder  events.EventRecorder
	Clock     clock.PassiveClock
	Lock      *queue.Lock

	Environment Environment
	Load        LoadRunner
	Analyzer    Analyzer

	// MaxConcurrentReconciles is how many experiments are reconciled at once (1 when unset), so
	// a slow analysis of one experiment never holds back another one's restore.
	MaxConcurrentReconciles int
	// AnalysisAttemptTimeout bounds one call into the Analyzer (DefaultAnalysisAttemptTimeout
	// when unset). A call that runs out returns and the experiment tries again later; the
	// experiment's own timeouts.analysis still ends the phase.
	AnalysisAttemptTimeout time.Duration

	// BaselineArrivalGrace is how long an experiment whose baseline does not exist yet waits for
	// it before failing with BaselineNotFound: GitOps tools apply a queue in their own order.
	// 0 fails at once.
	BaselineArrivalGrace time.Duration

	// DefaultOverallTimeout bounds an experiment without spec.timeouts.overall
	// (DefaultOverallTimeout when unset); MaxOverallTimeout is the longest overall timeout an
	// experiment may ask for (DefaultMaxOverallTimeout when unset). See overall.go.
	DefaultOverallTimeout, MaxOverallTimeout time.Duration

	// Dashboards deletes the dashboards an experiment had delivered to another namespace once
	// it is gone; the Analyzer writes them. Nil deletes none.
	Dashboards DashboardJanitor

	// SkipNameValidation lets tests start several managers, one after another, in one process.
	SkipNameValidation bool

	// membersIndex is the experiments informer's index by queue (see queueMembers); nil lists
	// through the client.
	membersIndex toolscache.Indexer

	// refused holds the UIDs of experiments whose status writes the API server refused while
	// their environment may be patched (see status_refused.go).
	refused sync.Map
}

// scope is what one reconcile of one experiment works on.
type scope struct {
	exp *perfexpv1alpha1.PerfExperiment
	// original is the experiment as read; the status patch is computed against it.
	original *perfexpv1alpha1.PerfExperiment
	now      time.Time
}

// phaseFunc advances an experiment that is in one phase.
type phaseFunc func(ctx context.Context, s *scope) (ctrl.Result, error)

// +kubebuilder:rbac:groups=perfexp.dev,resources=perfexperiments,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=perfexp.dev,resources=perfexperiments/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=perfexp.dev,resources=perfexperiments/finalizers,verbs=update
// +kubebuilder:rbac:groups=coordination.k8s.io,resources=leases,verbs=get;list;watch;create;update
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// Reconcile gets the experiment and runs the function of its phase. The status is written once,
// at the end, whatever happened; the finalizer is dropped after that write once the
// environment can no longer be patched (see finalizer.go).
func (r *PerfExperimentReconciler) Reconcile(ctx context.Context, req ctrl.Request) (result ctrl.Result, reterr error) {
	exp := &perfexpv1alpha1.PerfExperiment{}
	if err := r.Get(ctx, req.NamespacedName, exp); err != nil {
		metrics.Forget(req.NamespacedName, err)
		if apierrors.IsNotFound(err) && r.Dashboards != nil {
			return ctrl.Result{}, r.Dashboards.Forget(ctx, r.Client, req.NamespacedName)
		}
		if apierrors.IsNotFound(err) {
			return ctrl.Result{}, nil
		}
		return ctrl.Result{}, err
	}
	original := exp.DeepCopy()
	s := &scope{exp: exp, original: original, now: r.Clock.Now()}
	if r.statusRefused(exp) {
		return r.reconcileStatusRefused(ctx, s)
	}
	defer func() {
		exp.SetKStatusConditions()
		if err := r.writeStatus(ctx, original, exp); err != nil {
			reterr = errors.Join(reterr, err)
			if isRefusal(err) {
				reterr = errors.Join(reterr, r.onStatusRefused(ctx, s, err))
			}
			return
		}
		metrics.Record(original, exp, QueueName(exp))
		if err := r.dropFinalizerWhenRestored(ctx, s); err != nil {
			reterr = errors.Join(reterr, err)
		}
	}()

	if !exp.DeletionTimestamp.IsZero() {
		return r.reconcileDelete(ctx, s)
	}
	if exp.Status.Phase.IsTerminal() {
		refuseSpecChange(exp)
		return ctrl.Result{}, nil
	}

	if decided, err := r.checkAbortAndDeadline(ctx, s); decided || err != nil {
		return ctrl.Result{}, err
	}
	phases := map[perfexpv1alpha1.Phase]phaseFunc{
		"":                             r.reconcilePending,
		perfexpv1alpha1.PhasePending:   r.reconcilePending,
		perfexpv1alpha1.PhaseQueued:    r.reconcileQueued,
		perfexpv1alpha1.PhasePreparing: r.reconcilePreparing,
		perfexpv1alpha1.PhaseSettingUp: r.reconcileSettingUp,
		perfexpv1alpha1.PhaseWarmingUp: r.reconcileWarmingUp,
		perfexpv1alpha1.PhaseRunning:   r.reconcileRunning,
		perfexpv1alpha1.PhaseRestoring: r.reconcileRestoring,
		perfexpv1alpha1.PhaseAnalyzing: r.reconcileAnalyzing,
	}
	phase, ok := phases[exp.Status.Phase]
	if !ok {
		return ctrl.Result{}, fmt.Errorf("unknown phase %q", exp.Status.Phase)
	}
	return phase(ctx, s)
}

// writeStatus patches the status when it changed or its observedGeneration lags the spec, so
// every generation is acknowledged, an ended experiment's too (kstatus and Argo CD read a
// lagging observedGeneration as in progress). The status is trimmed to the object budget first
// (see status_budget.go). The optimistic lock makes a write from a stale copy fail (and the request
// retry) instead of undoing another writer's progress.
func (r *PerfExperimentReconciler) writeStatus(ctx context.Context, original, exp *perfexpv1alpha1.PerfExperiment) error {
	if equalStatus(original, exp) && exp.Status.ObservedGeneration == exp.Generation {
		return nil
	}
	exp.Status.ObservedGeneration = exp.Generation
	if trimmed := fitStatus(exp); len(trimmed) > 0 {
		log.FromContext(ctx).Info("Trimmed the status to fit the object budget", "left out", trimmed)
		if r.Recorder != nil {
			r.Recorder.Eventf(exp, nil, corev1.EventTypeWarning, "StatusTrimmed", "WriteStatus",
				"left out of status to stay under %d bytes (the report ConfigMap keeps them): %s", objectBudget, strings.Join(trimmed, ", "))
		}
	}
	patch := client.MergeFromWithOptions(original, client.MergeFromWithOptimisticLock{})
	if err := r.Status().Patch(ctx, exp, patch); err != nil {
		if apierrors.IsNotFound(err) {
			return nil
		}
		if apierrors.IsConflict(err) {
			log.FromContext(ctx).V(1).Info("Status write conflicted; retrying")
		}
		return fmt.Errorf("writing status: %w", err)
	}
	return nil
}

// SetupWithManager registers the reconciler. Besides its own experiments it reacts to changes of
// other experiments in the same queue, so queue positions stay current and the next experiment
// starts as soon as the lock is released.
func (r *PerfExperimentReconciler) SetupWithManager(ctx context.Context, mgr ctrl.Manager) error {
	if err := mgr.GetFieldIndexer().IndexField(ctx, &perfexpv1alpha1.PerfExperiment{}, queueIndex, func(o client.Object) []string {
		return []string{QueueName(o.(*perfexpv1alpha1.PerfExperiment))}
	}); err != nil {
		return err
	}
	if err := r.indexQueues(ctx, mgr); err != nil {
		return err
	}
	workers := r.MaxConcurrentReconciles
	if workers < 1 {
		workers = 1
	}
	// Waiting experiments read their queue's holder from the cache, which the Lease watch below
	// keeps current, instead of asking the API server at each of their reconciles.
	if r.Lock != nil && r.Lock.Cache == nil {
		r.Lock.Cache = mgr.GetCache()
	}
	return ctrl.NewControllerManagedBy(mgr).
		// Every change, status included, is reconciled: a phase that finished writes the status,
		// and that write starts the next phase. A reconcile that changes nothing writes nothing,
		// so this does not loop.
		For(&perfexpv1alpha1.PerfExperiment{}).
		// Load and setup Jobs belong to their experiment; their progress moves it on.
		Owns(&batchv1.Job{}).
		Watches(&perfexpv1alpha1.PerfExperiment{}, r.queueMates()).
		Watches(&coordinationv1.Lease{}, r.lockTakers(), builder.WithPredicates(predicate.NewPredicateFuncs(r.isQueueLease))).
		Named("perfexperiment").
		WithOptions(controller.Options{SkipNameValidation: &r.SkipNameValidation, MaxConcurrentReconciles: workers}).
		Complete(r)
}

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
			if QueueName(old) != QueueName(cur) {
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
			return []string{QueueName(exp)}, nil
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
	released := func(ctx context.Context, e event.UpdateEvent, q queueT) {
		old, ok := e.ObjectOld.(*coordinationv1.Lease)
		cur, ok2 := e.ObjectNew.(*coordinationv1.Lease)
		if !ok || !ok2 || queue.HolderOf(cur).UID != "" {
			return
		}
		h := queue.HolderOf(old)
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
			released(ctx, e, q)
		},
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
		QueueName(old) != QueueName(cur) ||
		member(old) != member(cur)
}

// wakeQueue enqueues the members of o's queue that need a reconcile after o changed.
func (r *PerfExperimentReconciler) wakeQueue(ctx context.Context, o client.Object, newHolder bool, q workqueue.TypedRateLimitingInterface[ctrl.Request]) {
	exp, ok := o.(*perfexpv1alpha1.PerfExperiment)
	if !ok {
		return
	}
	mates, err := r.queueMembers(ctx, QueueName(exp))
	if err != nil {
		log.FromContext(ctx).Error(err, "Listing queue mates failed", "queue", QueueName(exp))
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
