// Package controllers holds perfexp's reconcilers. They orchestrate: the work of each phase is
// done by collaborators in internal/ (variant, load, analysis, report), and no PromQL or report
// formatting lives here.
package controllers

import (
	"context"
	"errors"
	"fmt"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/metrics"
	"github.com/perfexp/perfexp/internal/queue"
)

// queueIndex indexes experiments by their resolved queue name.
const queueIndex = "perfexp.dev/queue"

// waitingRecheck is how often a waiting experiment looks at its queue even when nothing
// it watches changed, as a safety net for missed events.
const waitingRecheck = 30 * time.Second

// PerfExperimentReconciler drives PerfExperiments through their phases.
type PerfExperimentReconciler struct {
	client.Client
	Recorder events.EventRecorder
	Clock    clock.PassiveClock
	Lock     *queue.Lock

	Environment Environment
	Load        LoadRunner
	Analyzer    Analyzer

	// SkipNameValidation lets tests start several managers, one after another, in one process.
	SkipNameValidation bool
}

// scope is what one reconcile of one experiment works on.
type scope struct {
	exp *perfexpv1alpha1.PerfExperiment
	now time.Time
}

// phaseFunc advances an experiment that is in one phase.
type phaseFunc func(ctx context.Context, s *scope) (ctrl.Result, error)

// +kubebuilder:rbac:groups=perfexp.dev,resources=perfexperiments,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=perfexp.dev,resources=perfexperiments/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=perfexp.dev,resources=perfexperiments/finalizers,verbs=update
// +kubebuilder:rbac:groups=coordination.k8s.io,resources=leases,verbs=get;list;watch;create;update
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// Reconcile gets the experiment, makes sure it carries the finalizer, and runs the function of
// its phase. The status is written once, at the end, whatever happened.
func (r *PerfExperimentReconciler) Reconcile(ctx context.Context, req ctrl.Request) (result ctrl.Result, reterr error) {
	exp := &perfexpv1alpha1.PerfExperiment{}
	if err := r.Get(ctx, req.NamespacedName, exp); err != nil {
		metrics.Forget(req.NamespacedName, err)
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	s := &scope{exp: exp, now: r.Clock.Now()}
	original := exp.DeepCopy()
	defer func() {
		exp.SetKStatusConditions()
		if err := r.writeStatus(ctx, original, exp); err != nil {
			reterr = errors.Join(reterr, err)
		} else {
			metrics.Record(original, exp, QueueName(exp))
		}
	}()

	if !exp.DeletionTimestamp.IsZero() {
		return r.reconcileDelete(ctx, s)
	}
	if exp.Status.Phase.IsTerminal() {
		return ctrl.Result{}, nil
	}
	if !controllerutil.ContainsFinalizer(exp, perfexpv1alpha1.Finalizer) {
		patch := client.MergeFrom(exp.DeepCopy())
		controllerutil.AddFinalizer(exp, perfexpv1alpha1.Finalizer)
		if err := r.Patch(ctx, exp, patch); err != nil {
			return ctrl.Result{}, fmt.Errorf("adding finalizer: %w", err)
		}
		original.Finalizers = exp.Finalizers
		original.ResourceVersion = exp.ResourceVersion
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

// writeStatus patches the status when it changed. The optimistic lock makes a write from a
// stale copy fail (and the request retry) instead of undoing another writer's progress.
func (r *PerfExperimentReconciler) writeStatus(ctx context.Context, original, exp *perfexpv1alpha1.PerfExperiment) error {
	if equalStatus(original, exp) {
		return nil
	}
	exp.Status.ObservedGeneration = exp.Generation
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
	return ctrl.NewControllerManagedBy(mgr).
		// Every change, status included, is reconciled: a phase that finished writes the status,
		// and that write starts the next phase. A reconcile that changes nothing writes nothing,
		// so this does not loop.
		For(&perfexpv1alpha1.PerfExperiment{}).
		// Load and setup Jobs belong to their experiment; their progress moves it on.
		Owns(&batchv1.Job{}).
		Watches(&perfexpv1alpha1.PerfExperiment{}, handler.EnqueueRequestsFromMapFunc(r.queueMates)).
		Named("perfexperiment").
		WithOptions(controller.Options{SkipNameValidation: &r.SkipNameValidation}).
		Complete(r)
}

// queueMates maps a change of any experiment to the waiting experiments of its queue.
func (r *PerfExperimentReconciler) queueMates(ctx context.Context, o client.Object) []ctrl.Request {
	exp, ok := o.(*perfexpv1alpha1.PerfExperiment)
	if !ok {
		return nil
	}
	list := &perfexpv1alpha1.PerfExperimentList{}
	if err := r.List(ctx, list, client.MatchingFields{queueIndex: QueueName(exp)}); err != nil {
		log.FromContext(ctx).Error(err, "Listing queue mates failed", "queue", QueueName(exp))
		return nil
	}
	var reqs []ctrl.Request
	for i := range list.Items {
		m := &list.Items[i]
		if isWaiting(m) && m.UID != exp.UID {
			reqs = append(reqs, ctrl.Request{NamespacedName: types.NamespacedName{Namespace: m.Namespace, Name: m.Name}})
		}
	}
	return reqs
}
