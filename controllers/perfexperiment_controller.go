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
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/source"

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

	// MaxConcurrentReconciles is how many experiments are reconciled at once (1 when unset).
	MaxConcurrentReconciles int
	// AnalysisWorkers is how many analyses call the Analyzer at once (DefaultAnalysisWorkers
	// when unset). They run apart from the reconcile workers (analysis_runner.go), so a slow
	// or hung Prometheus never holds back another experiment's restore or queue admission.
	AnalysisWorkers int
	// AnalysisAttemptTimeout bounds one call into the Analyzer (DefaultAnalysisAttemptTimeout
	// when unset). A call that runs out returns and the experiment tries again later; the
	// experiment's own timeouts.analysis still ends the phase.
	AnalysisAttemptTimeout time.Duration
	// PrometheusURL is the operator's Prometheus: the analyses of experiments that name none
	// and of those that name it share its slots.
	PrometheusURL string

	// BaselineArrivalGrace is how long an experiment whose baseline does not exist yet waits for
	// it before failing with BaselineNotFound: GitOps tools apply a queue in their own order.
	// 0 fails at once.
	BaselineArrivalGrace time.Duration

	// DefaultOverallTimeout bounds an experiment without spec.timeouts.overall
	// (DefaultOverallTimeout when unset); MaxOverallTimeout is the longest overall timeout an
	// experiment may ask for (DefaultMaxOverallTimeout when unset). See overall.go.
	DefaultOverallTimeout, MaxOverallTimeout time.Duration

	// Orphans, when set, names the objects of a target namespace that are still patched for an
	// experiment that is gone and could not be put back (the OrphanJanitor); an experiment
	// that takes its queue's lock while some are there says so (UnrestoredOrphans).
	Orphans OrphanReports

	// Dashboards deletes the dashboards an experiment had delivered to another namespace once
	// it is gone; the Analyzer writes them. Nil deletes none.
	Dashboards DashboardJanitor

	// SkipNameValidation lets tests start several managers, one after another, in one process.
	SkipNameValidation bool

	// membersIndex is the experiments informer's index by queue (see queueMembers); nil lists
	// through the client.
	membersIndex toolscache.Indexer

	// analyses runs the Analyzer apart from the reconcile workers; set up by SetupWithManager.
	analyses *analysisRunner

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
// +kubebuilder:rbac:groups=coordination.k8s.io,resources=leases,verbs=get;list;watch;create;update;delete
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// Reconcile gets the experiment and runs the function of its phase. The status is written once,
// at the end, whatever happened; the finalizer is dropped after that write once the
// environment can no longer be patched (see finalizer.go).
func (r *PerfExperimentReconciler) Reconcile(ctx context.Context, req ctrl.Request) (result ctrl.Result, reterr error) {
	exp := &perfexpv1alpha1.PerfExperiment{}
	if err := r.Get(ctx, req.NamespacedName, exp); err != nil {
		metrics.Forget(req.NamespacedName, err)
		if apierrors.IsNotFound(err) {
			r.analyses.forgetKey(req.NamespacedName)
		}
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
		// An analysis under way is cancelled once its experiment left Analyzing (aborted,
		// timed out, ended) or is being deleted.
		if exp.Status.Phase != perfexpv1alpha1.PhaseAnalyzing || !exp.DeletionTimestamp.IsZero() {
			r.analyses.forget(exp.UID)
		}
		exp.SetKStatusConditions()
		if err := r.writeStatus(ctx, original, exp); err != nil {
			reterr = errors.Join(reterr, err)
			if isRefusal(err) {
				reterr = errors.Join(reterr, r.onStatusRefused(ctx, s, err))
			}
			return
		}
		metrics.Record(original, exp, exp.QueueName())
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
		"":                              r.reconcilePending,
		perfexpv1alpha1.PhasePending:    r.reconcilePending,
		perfexpv1alpha1.PhaseQueued:     r.reconcileQueued,
		perfexpv1alpha1.PhasePreparing:  r.reconcilePreparing,
		perfexpv1alpha1.PhaseSettingUp:  r.reconcileSettingUp,
		perfexpv1alpha1.PhaseWarmingUp:  r.reconcileWarmingUp,
		perfexpv1alpha1.PhaseRunning:    r.reconcileRunning,
		perfexpv1alpha1.PhaseRestoring:  r.reconcileRestoring,
		perfexpv1alpha1.PhaseAnalyzing:  r.reconcileAnalyzing,
		perfexpv1alpha1.PhaseConfirming: r.reconcileConfirming,
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
		return []string{o.(*perfexpv1alpha1.PerfExperiment).QueueName()}
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
	r.analyses = newAnalysisRunner(ctx, r.Analyzer, r.Clock, r.AnalysisWorkers, r.AnalysisAttemptTimeout)
	r.analyses.defaultPrometheus = r.PrometheusURL
	return ctrl.NewControllerManagedBy(mgr).
		// Every change, status included, is reconciled: a phase that finished writes the status,
		// and that write starts the next phase. A reconcile that changes nothing writes nothing,
		// so this does not loop.
		For(&perfexpv1alpha1.PerfExperiment{}).
		// Load and setup Jobs belong to their experiment; their progress moves it on.
		Owns(&batchv1.Job{}).
		// A confirmation sweep's progress and end move its experiment on (phase_confirming.go).
		Owns(&perfexpv1alpha1.PerfSweep{}).
		Watches(&perfexpv1alpha1.PerfExperiment{}, r.queueMates()).
		Watches(&coordinationv1.Lease{}, r.lockTakers(), builder.WithPredicates(predicate.NewPredicateFuncs(r.isQueueLease))).
		// An analysis attempt that ended brings its experiment back at once.
		WatchesRawSource(source.Channel(r.analyses.done, &handler.EnqueueRequestForObject{})).
		Named("perfexperiment").
		WithOptions(controller.Options{SkipNameValidation: &r.SkipNameValidation, MaxConcurrentReconciles: workers}).
		Complete(r)
}
