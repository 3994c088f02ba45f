package controllers

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/log"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/sweep"
	"github.com/perfexp/perfexp/internal/text"
)

// sweepRecheck is how often a sweep whose runs are being deleted looks again, in case an event
// was missed; every other change of a run reaches the sweep through Owns().
const sweepRecheck = 5 * time.Second

// PerfSweepReconciler stamps out a sweep's runs as owned PerfExperiments, follows their
// progress, and writes the sweep report when every run has ended. The runs themselves are
// driven by the PerfExperiment reconciler, through the queue like any other experiment.
type PerfSweepReconciler struct {
	client.Client
	// APIReader reads past the cache (the PerfHistory objects a one-run comparison learns its
	// noise from, which the operator does not cache); nil reads through Client.
	APIReader client.Reader
	Recorder  events.EventRecorder

	// SkipNameValidation lets tests start several managers, one after another, in one process.
	SkipNameValidation bool

	// FailOnRegression is the default of spec.analysis.failOnRegression: a sweep with a
	// Regressed arm ends with verdict Fail.
	FailOnRegression bool
}

// sweepScope is what one reconcile of one sweep works on.
type sweepScope struct {
	sweep *perfexpv1alpha1.PerfSweep
	plan  *sweep.Plan
	// runs maps run names to the sweep's existing PerfExperiments.
	runs map[string]*perfexpv1alpha1.PerfExperiment
}

// +kubebuilder:rbac:groups=perfexp.dev,resources=perfsweeps,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=perfexp.dev,resources=perfsweeps/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=perfexp.dev,resources=perfsweeps/finalizers,verbs=update
// +kubebuilder:rbac:groups=perfexp.dev,resources=perfexperiments,verbs=create;delete

// Reconcile gets the sweep, makes sure it carries its finalizer, plans it, and then creates its
// runs, propagates an abort, or writes the report, as the runs' progress calls for. The status
// is written once, at the end.
func (r *PerfSweepReconciler) Reconcile(ctx context.Context, req ctrl.Request) (result ctrl.Result, reterr error) {
	sw := &perfexpv1alpha1.PerfSweep{}
	if err := r.Get(ctx, req.NamespacedName, sw); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	original := sw.DeepCopy()
	defer func() {
		// Come back when the deadline passes, whatever else the sweep waits for.
		if until := time.Until(sw.DeadlineAt()); !sw.Status.Phase.IsTerminal() && sw.DeletionTimestamp.IsZero() && until > 0 &&
			(result.RequeueAfter == 0 || result.RequeueAfter > until) {
			result.RequeueAfter = until
		}
		sw.SetKStatusConditions()
		if err := r.writeSweepStatus(ctx, original, sw); err != nil {
			reterr = errors.Join(reterr, err)
		}
	}()

	s := &sweepScope{sweep: sw}
	runs, err := r.sweepRuns(ctx, sw)
	if err != nil {
		return ctrl.Result{}, err
	}
	s.runs = runs

	if !sw.DeletionTimestamp.IsZero() {
		return r.reconcileSweepDelete(ctx, s)
	}
	// A sweep that ended stays as it ended until its spec changes.
	if sw.Status.Phase.IsTerminal() && sw.Status.ObservedGeneration == sw.Generation {
		return ctrl.Result{}, nil
	}
	if !controllerutil.ContainsFinalizer(sw, perfexpv1alpha1.SweepFinalizer) {
		patch := client.MergeFrom(sw.DeepCopy())
		controllerutil.AddFinalizer(sw, perfexpv1alpha1.SweepFinalizer)
		if err := r.Patch(ctx, sw, patch); err != nil {
			return ctrl.Result{}, fmt.Errorf("adding finalizer: %w", err)
		}
		original.Finalizers, original.ResourceVersion = sw.Finalizers, sw.ResourceVersion
	}

	plan, err := newSweepPlan(sw)
	if err != nil {
		// Refused: nothing is created; a corrected spec is a new generation and a new reconcile.
		sw.Status.Phase = perfexpv1alpha1.SweepFailed
		sw.Status.Message = "refused: " + err.Error()
		setSweepCondition(sw, perfexpv1alpha1.ConditionExperimentsCreated, metav1.ConditionFalse, perfexpv1alpha1.ReasonInvalidSweep, "%v", err)
		setSweepCondition(sw, perfexpv1alpha1.ConditionReady, metav1.ConditionFalse, perfexpv1alpha1.ReasonInvalidSweep, "%v", err)
		if r.Recorder != nil && original.Status.Phase != perfexpv1alpha1.SweepFailed {
			r.Recorder.Eventf(sw, nil, corev1.EventTypeWarning, perfexpv1alpha1.ReasonInvalidSweep, "Plan", "%v", err)
		}
		return ctrl.Result{}, nil
	}
	s.plan = plan
	if sw.Status.Phase == perfexpv1alpha1.SweepFailed {
		// A new generation of a refused sweep: judge it afresh.
		sw.Status.Phase = perfexpv1alpha1.SweepRunning
	}

	if sw.Spec.Abort && original.Status.Phase == perfexpv1alpha1.SweepSucceeded {
		// Nothing is left to stop, and aborting cannot undo the report: say so and keep it.
		setSweepCondition(sw, perfexpv1alpha1.ConditionSpecChangeRefused, metav1.ConditionTrue, perfexpv1alpha1.ReasonExperimentEnded,
			"spec.abort was set at generation %d after the sweep had Succeeded; nothing was aborted and the report stands", sw.Generation)
		return ctrl.Result{}, nil
	}
	if sw.Spec.Abort {
		return r.reconcileSweepAbort(ctx, s)
	}
	if !time.Now().Before(sw.DeadlineAt()) {
		return r.reconcileSweepDeadline(ctx, s)
	}
	if sw.Spec.Capacity != nil {
		return r.reconcileCapacity(ctx, s)
	}
	if sw.Spec.Bisect != nil {
		return r.reconcileBisect(ctx, s)
	}
	if err := r.createRuns(ctx, s); err != nil {
		return ctrl.Result{}, err
	}
	progress := r.updateProgress(s)
	if !progress.AllEnded() {
		return ctrl.Result{}, nil
	}
	outcomes, err := r.sweepOutcomes(ctx, s)
	if err != nil {
		return ctrl.Result{}, err
	}
	now := time.Now()
	noise, err := r.sweepNoise(ctx, s, outcomes, now)
	if err != nil {
		return ctrl.Result{}, err
	}
	compared := sweep.Compare(sw, s.plan, outcomes, noise)
	if r.nextLook(ctx, s, compared, now) {
		// The status write that records the new repeat brings the next reconcile, which plans it.
		return ctrl.Result{RequeueAfter: time.Second}, nil
	}
	return r.reconcileSweepReport(ctx, s, compared)
}

// sweepRuns lists the PerfExperiments the sweep controls, by run name.
func (r *PerfSweepReconciler) sweepRuns(ctx context.Context, sw *perfexpv1alpha1.PerfSweep) (map[string]*perfexpv1alpha1.PerfExperiment, error) {
	list := &perfexpv1alpha1.PerfExperimentList{}
	if err := r.List(ctx, list, client.InNamespace(sw.Namespace), client.MatchingLabels{perfexpv1alpha1.LabelSweep: sweepLabel(sw)}); err != nil {
		return nil, fmt.Errorf("listing the sweep's runs: %w", err)
	}
	out := map[string]*perfexpv1alpha1.PerfExperiment{}
	for i := range list.Items {
		exp := &list.Items[i]
		if ref := metav1.GetControllerOf(exp); ref != nil && ref.UID == sw.UID {
			out[exp.Name] = exp
		}
	}
	return out, nil
}

// writeSweepStatus patches the status when it changed, with an optimistic lock so a write from
// a stale copy fails and the reconcile is retried.
func (r *PerfSweepReconciler) writeSweepStatus(ctx context.Context, original, sw *perfexpv1alpha1.PerfSweep) error {
	sw.Status.ObservedGeneration = sw.Generation
	if equalSweepStatus(original, sw) {
		return nil
	}
	patch := client.MergeFromWithOptions(original, client.MergeFromWithOptimisticLock{})
	if err := r.Status().Patch(ctx, sw, patch); err != nil {
		if apierrors.IsNotFound(err) {
			return nil
		}
		if apierrors.IsConflict(err) {
			log.FromContext(ctx).V(1).Info("Sweep status write conflicted; retrying")
		}
		return fmt.Errorf("writing sweep status: %w", err)
	}
	return nil
}

// setSweepCondition sets a condition stamped with the sweep's generation.
func setSweepCondition(sw *perfexpv1alpha1.PerfSweep, typ string, status metav1.ConditionStatus, reason, format string, args ...any) {
	meta.SetStatusCondition(&sw.Status.Conditions, metav1.Condition{
		Type:               typ,
		Status:             status,
		Reason:             reason,
		Message:            text.Truncate(fmt.Sprintf(format, args...), 1024),
		ObservedGeneration: sw.Generation,
	})
}

// SetupWithManager registers the reconciler: every change of a sweep's runs (phase, deletion)
// reaches the sweep through the owner reference.
func (r *PerfSweepReconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		For(&perfexpv1alpha1.PerfSweep{}).
		Owns(&perfexpv1alpha1.PerfExperiment{}).
		Named("perfsweep").
		WithOptions(controller.Options{SkipNameValidation: &r.SkipNameValidation}).
		Complete(r)
}
