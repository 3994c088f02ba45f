package controllers

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/log"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/confirm"
	"github.com/perfexp/perfexp/internal/publish"
	"github.com/perfexp/perfexp/internal/report"
)

// confirmRecheck is how often a confirming experiment looks at its sweep in case an event was
// missed; every change of the sweep reaches it through Owns().
const confirmRecheck = time.Minute

// +kubebuilder:rbac:groups=perfexp.dev,resources=perfsweeps,verbs=get;list;watch;create;patch

// finishOrConfirm ends an analysed experiment, unless spec.analysis.confirm asks for more runs
// because its single run was not decisive: then it goes on to Confirming, with its own results
// in status already and no lock held.
func (r *PerfExperimentReconciler) finishOrConfirm(s *scope) {
	exp := s.exp
	if !confirm.Wanted(exp) || failure(exp) != nil {
		r.finish(s)
		return
	}
	if !confirm.Needed(exp) {
		setCondition(exp, perfexpv1alpha1.ConditionConfirmed, metav1.ConditionTrue, perfexpv1alpha1.ReasonSingleRunDecisive,
			"one run against one run was already decisive (%s); nothing was run again", exp.Status.Comparison.Change)
		r.finish(s)
		return
	}
	if why := confirm.Refusal(exp); why != "" {
		setCondition(exp, perfexpv1alpha1.ConditionConfirmed, metav1.ConditionFalse, perfexpv1alpha1.ReasonConfirmationFailed,
			"one run was not decisive, and it cannot be confirmed: %s; the single run's comparison stands", why)
		r.finish(s)
		return
	}
	single := perfexpv1alpha1.ChangeUnknown
	if c := exp.Status.Comparison; c != nil && c.Change != "" {
		single = c.Change
	}
	exp.Status.Confirmation = &perfexpv1alpha1.Confirmation{Sweep: confirm.SweepName(exp)}
	setCondition(exp, perfexpv1alpha1.ConditionConfirmed, metav1.ConditionUnknown, perfexpv1alpha1.ReasonConfirming,
		"one run against one run was %s; running the baseline and the variant again in blocks (sweep %s)", single, exp.Status.Confirmation.Sweep)
	r.enter(s, perfexpv1alpha1.PhaseConfirming, "the comparison was %s; confirming with repeated runs of the baseline and the variant (sweep %s)",
		single, exp.Status.Confirmation.Sweep)
}

// reconcileConfirming creates the experiment's confirmation sweep, follows it, and ends the
// experiment with the sweep's answer. The sweep's runs go through the experiment's queue like
// any other run, each restoring the environment before the next starts; this experiment holds
// no lock meanwhile. spec.abort aborts the sweep and ends the experiment once its runs have.
func (r *PerfExperimentReconciler) reconcileConfirming(ctx context.Context, s *scope) (ctrl.Result, error) {
	exp := s.exp
	if exp.Status.Confirmation == nil {
		exp.Status.Confirmation = &perfexpv1alpha1.Confirmation{Sweep: confirm.SweepName(exp)}
	}
	conf := exp.Status.Confirmation
	sw, err := r.confirmationSweep(ctx, exp, conf.Sweep)
	if err != nil {
		return ctrl.Result{}, err
	}
	switch {
	case sw == nil && exp.Spec.Abort:
		r.endConfirmation(ctx, s, metav1.ConditionFalse, perfexpv1alpha1.ReasonAborted, "aborted by spec.abort before the confirmation started")
		return ctrl.Result{}, nil
	case sw == nil && conf.EnvironmentTime != nil:
		// It had been created (its progress is recorded) and is gone: deleted by someone.
		r.endConfirmation(ctx, s, metav1.ConditionFalse, perfexpv1alpha1.ReasonConfirmationFailed,
			fmt.Sprintf("the confirmation sweep %s was deleted before it ended; the single run's comparison stands", conf.Sweep))
		return ctrl.Result{}, nil
	case sw == nil:
		return r.createConfirmation(ctx, s)
	case !metav1.IsControlledBy(sw, exp):
		r.endConfirmation(ctx, s, metav1.ConditionFalse, perfexpv1alpha1.ReasonConfirmationFailed,
			fmt.Sprintf("a PerfSweep named %s exists and is not this experiment's; nothing was run again", conf.Sweep))
		return ctrl.Result{}, nil
	}

	runs, err := r.confirmationRuns(ctx, sw)
	if err != nil {
		return ctrl.Result{}, err
	}
	ended := sw.Status.Phase.IsTerminal() && sw.Status.ObservedGeneration == sw.Generation
	if exp.Spec.Abort && !ended {
		if !sw.Spec.Abort {
			patch := client.MergeFrom(sw.DeepCopy())
			sw.Spec.Abort = true
			if err := r.Patch(ctx, sw, patch); err != nil {
				return ctrl.Result{}, fmt.Errorf("aborting the confirmation sweep: %w", err)
			}
			log.FromContext(ctx).Info("Aborted the confirmation sweep", "sweep", sw.Name)
		}
		setCondition(exp, perfexpv1alpha1.ConditionConfirmed, metav1.ConditionUnknown, perfexpv1alpha1.ReasonConfirming,
			"aborting: waiting for the runs of sweep %s to end and restore the environment", sw.Name)
		return ctrl.Result{RequeueAfter: confirmRecheck}, nil
	}
	if !ended {
		p := confirm.Progress(sw, runs)
		p.Elapsed = &metav1.Duration{Duration: s.now.Sub(sw.CreationTimestamp.Time).Round(time.Second)}
		*conf = p
		setCondition(exp, perfexpv1alpha1.ConditionConfirmed, metav1.ConditionUnknown, perfexpv1alpha1.ReasonConfirming,
			"sweep %s: %d of %d runs ended (%d blocks planned, %s of environment time so far)%s",
			sw.Name, sw.Status.Done, sw.Status.Total, p.Repeats, p.EnvironmentTime.Duration, withNote(exp))
		return ctrl.Result{RequeueAfter: confirmRecheck}, nil
	}

	out := confirm.Read(sw, runs, s.now)
	*conf = out.Confirmation
	if exp.Spec.Abort {
		r.endConfirmation(ctx, s, metav1.ConditionFalse, perfexpv1alpha1.ReasonAborted, "aborted by spec.abort; "+out.Message)
		return ctrl.Result{}, nil
	}
	if out.FailVerdict && exp.Status.Verdict != perfexpv1alpha1.VerdictInvalid {
		exp.Status.Verdict = perfexpv1alpha1.VerdictFail
	}
	r.endConfirmation(ctx, s, out.Status, out.Reason, out.Message+withNote(exp))
	return ctrl.Result{}, nil
}

// withNote is "; " and what the confirmation had to adapt, or nothing.
func withNote(exp *perfexpv1alpha1.PerfExperiment) string {
	if n := confirm.Note(exp); n != "" {
		return "; " + n
	}
	return ""
}

// confirmationSweep reads the confirmation sweep; nil when it does not exist. A sweep the cache
// does not show is looked up on the API server before it is taken as absent, so one created a
// moment ago is not created twice nor taken for deleted.
func (r *PerfExperimentReconciler) confirmationSweep(ctx context.Context, exp *perfexpv1alpha1.PerfExperiment, name string) (*perfexpv1alpha1.PerfSweep, error) {
	sw := &perfexpv1alpha1.PerfSweep{}
	key := client.ObjectKey{Namespace: exp.Namespace, Name: name}
	err := r.Get(ctx, key, sw)
	if apierrors.IsNotFound(err) && r.APIReader != nil {
		err = r.APIReader.Get(ctx, key, sw)
	}
	switch {
	case apierrors.IsNotFound(err):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("reading the confirmation sweep %s: %w", name, err)
	}
	return sw, nil
}

// createConfirmation creates the sweep that runs the baseline's and this experiment's variants
// again, owned by the experiment (deleting the experiment deletes it, and its runs restore
// first). What makes a confirmation impossible ends it with the single run's comparison.
func (r *PerfExperimentReconciler) createConfirmation(ctx context.Context, s *scope) (ctrl.Result, error) {
	exp := s.exp
	baseline := &perfexpv1alpha1.PerfExperiment{}
	if err := r.Get(ctx, client.ObjectKey{Namespace: exp.Namespace, Name: exp.Spec.Baseline.Name}, baseline); err != nil {
		if apierrors.IsNotFound(err) {
			r.endConfirmation(ctx, s, metav1.ConditionFalse, perfexpv1alpha1.ReasonConfirmationFailed,
				fmt.Sprintf("the baseline %s no longer exists, so its variant cannot be run again; the single run's comparison stands", exp.Spec.Baseline.Name))
			return ctrl.Result{}, nil
		}
		return ctrl.Result{}, err
	}
	sw, note, err := confirm.Sweep(exp, baseline)
	if err != nil {
		r.endConfirmation(ctx, s, metav1.ConditionFalse, perfexpv1alpha1.ReasonConfirmationFailed, err.Error()+"; the single run's comparison stands")
		return ctrl.Result{}, nil
	}
	if err := controllerutil.SetControllerReference(exp, sw, r.Scheme()); err != nil {
		return ctrl.Result{}, err
	}
	if err := r.Create(ctx, sw); err != nil && !apierrors.IsAlreadyExists(err) {
		if apierrors.IsInvalid(err) || apierrors.IsForbidden(err) || apierrors.IsBadRequest(err) {
			r.endConfirmation(ctx, s, metav1.ConditionFalse, perfexpv1alpha1.ReasonConfirmationFailed,
				fmt.Sprintf("the confirmation sweep %s was refused: %v; the single run's comparison stands", sw.Name, err))
			return ctrl.Result{}, nil
		}
		return ctrl.Result{}, fmt.Errorf("creating the confirmation sweep: %w", err)
	}
	log.FromContext(ctx).Info("Created the confirmation sweep", "sweep", sw.Name, "maxRepeats", sw.Spec.Sequential.MaxRepeats)
	exp.Status.Confirmation = &perfexpv1alpha1.Confirmation{Sweep: sw.Name, Repeats: sw.Spec.Repeats, EnvironmentTime: &metav1.Duration{}}
	msg := fmt.Sprintf("sweep %s runs the baseline and the variant in blocks, %d before the first look, at most %d", sw.Name, sw.Spec.Repeats, sw.Spec.Sequential.MaxRepeats)
	if note != "" {
		msg += "; " + note
	}
	setCondition(exp, perfexpv1alpha1.ConditionConfirmed, metav1.ConditionUnknown, perfexpv1alpha1.ReasonConfirming, "%s", msg)
	return ctrl.Result{RequeueAfter: confirmRecheck}, nil
}

// confirmationRuns lists the sweep's runs.
func (r *PerfExperimentReconciler) confirmationRuns(ctx context.Context, sw *perfexpv1alpha1.PerfSweep) ([]perfexpv1alpha1.PerfExperiment, error) {
	list := &perfexpv1alpha1.PerfExperimentList{}
	if err := r.List(ctx, list, client.InNamespace(sw.Namespace), client.MatchingLabels{perfexpv1alpha1.LabelSweep: confirm.LabelValue(sw)}); err != nil {
		return nil, fmt.Errorf("listing the confirmation's runs: %w", err)
	}
	runs := list.Items[:0]
	for _, e := range list.Items {
		if metav1.IsControlledBy(&e, sw) {
			runs = append(runs, e)
		}
	}
	return runs, nil
}

// endConfirmation records the Confirmed condition and ends the experiment: Aborted when
// spec.abort stopped it, else Succeeded (its own run succeeded; the condition says whether the
// confirmation decided).
func (r *PerfExperimentReconciler) endConfirmation(ctx context.Context, s *scope, status metav1.ConditionStatus, reason, msg string) {
	setCondition(s.exp, perfexpv1alpha1.ConditionConfirmed, status, reason, "%s", msg)
	r.reportConfirmation(ctx, s, fmt.Sprintf("Confirmed=%s, %s", status, reason), msg)
	if reason == perfexpv1alpha1.ReasonAborted {
		r.fail(s, perfexpv1alpha1.ReasonAborted, "aborted by spec.abort while confirming; the single run's results stand unconfirmed")
		return
	}
	r.finish(s)
}

// confirmationSummary is what the end message adds about a confirmation that ran.
func confirmationSummary(exp *perfexpv1alpha1.PerfExperiment) string {
	c := exp.Status.Confirmation
	if c == nil || c.Change == "" {
		return ""
	}
	env := time.Duration(0)
	if c.EnvironmentTime != nil {
		env = c.EnvironmentTime.Duration
	}
	return fmt.Sprintf("; confirmed %s over %d blocks (%d runs, %s of environment time)", c.Change, c.Repeats, c.Runs, env)
}

// reportConfirmation adds the confirmation's section to the experiment's report (report.md,
// and confirmation.md alone). The answer is in status already, so a failed write is logged and
// reported as an event and the experiment still ends.
func (r *PerfExperimentReconciler) reportConfirmation(ctx context.Context, s *scope, outcome, msg string) {
	exp := s.exp
	if exp.Status.ReportRef == nil || exp.Status.Confirmation == nil || exp.Status.Confirmation.EnvironmentTime == nil {
		return
	}
	single := perfexpv1alpha1.Change("")
	if c := exp.Status.Comparison; c != nil {
		single = c.Change
	}
	section := report.ConfirmationSection(single, exp.Status.Confirmation, outcome, msg)
	reader := r.APIReader
	if reader == nil {
		reader = r.Client
	}
	target := publish.Report(exp)
	target.Reader, target.ExistingOnly = reader, true
	_, err := publish.ConfigMap(ctx, r.Client, target, func(cm *corev1.ConfigMap) error {
		if cm.Data == nil {
			cm.Data = map[string]string{}
		}
		cm.Data[report.KeyConfirmation] = section
		cm.Data[report.KeyMarkdown] = report.WithConfirmation(cm.Data[report.KeyMarkdown], section)
		return nil
	})
	if err != nil {
		log.FromContext(ctx).Error(err, "Could not add the confirmation to the report")
		if r.Recorder != nil {
			r.Recorder.Eventf(exp, nil, corev1.EventTypeWarning, "ConfirmationNotReported", "ReportConfirmation",
				"the confirmation's section was not added to the report: %v", err)
		}
	}
}
