package controllers

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/report"
	"github.com/perfexp/perfexp/internal/sweep"
	"github.com/perfexp/perfexp/internal/text"
)

// reconcileBisect runs a performance bisect as reconcileCapacity runs a capacity search: the
// planned runs of the steps so far are created, and once they have all ended the bisect decides
// its next move (another repeat of the step, a new step, or the answer) in the status.
func (r *PerfSweepReconciler) reconcileBisect(ctx context.Context, s *sweepScope) (ctrl.Result, error) {
	sw := s.sweep
	if err := r.createRuns(ctx, s); err != nil {
		return ctrl.Result{}, err
	}
	progress := r.updateProgress(s)
	if sw.Status.Phase == perfexpv1alpha1.SweepFailed {
		return ctrl.Result{}, nil
	}
	if progress.Total > 0 && !progress.AllEnded() {
		r.bisectProgress(sw)
		return ctrl.Result{}, nil
	}
	outcomes, err := r.sweepOutcomes(ctx, s)
	if err != nil {
		return ctrl.Result{}, err
	}
	done, decision := sweep.AdvanceBisect(sw, s.plan, outcomes)
	log.FromContext(ctx).Info("Moved the bisect on", "decision", decision)
	if !done {
		r.bisectProgress(sw)
		return ctrl.Result{RequeueAfter: time.Second}, nil
	}
	res := sweep.BisectReport(sw, s.plan, outcomes)
	res.Duration = time.Since(sw.CreationTimestamp.Time).Round(time.Second).String()
	return r.reconcileBisectReport(ctx, s, res)
}

// bisectProgress says which step is running, in the status message and conditions.
func (r *PerfSweepReconciler) bisectProgress(sw *perfexpv1alpha1.PerfSweep) {
	st := sw.Status.Bisect
	if st == nil || len(st.Steps) == 0 {
		return
	}
	step := st.Steps[len(st.Steps)-1]
	_, maxSteps := sweep.BisectBudget(sw)
	msg := fmt.Sprintf("step %d of at most %d: new images of %s, repeat %d", len(st.Steps), maxSteps, step.Description, step.Repeats)
	searching(sw, perfexpv1alpha1.ReasonBisecting, msg)
}

// reconcileBisectReport writes the bisect's report ConfigMap and ends the sweep with its answer.
func (r *PerfSweepReconciler) reconcileBisectReport(ctx context.Context, s *sweepScope, res *report.BisectResult) (ctrl.Result, error) {
	sw := s.sweep
	js, err := report.BisectJSON(res)
	if err != nil {
		return ctrl.Result{}, err
	}
	page, err := report.BisectHTML(res)
	if err != nil {
		return ctrl.Result{}, err
	}
	cm, err := r.publishSweepData(ctx, sw, "bisect report", map[string]string{report.KeySweepMarkdown: report.BisectMarkdown(res), report.KeySweepJSON: string(js), report.KeySweepHTML: page})
	if err != nil {
		reportFailed(sw, "bisect report", err)
		return ctrl.Result{}, nil
	}
	sw.Status.ReportRef = &perfexpv1alpha1.LocalObjectReference{Name: cm.Name}
	sw.Status.Phase = perfexpv1alpha1.SweepSucceeded
	sw.Status.CurrentArm, sw.Status.CurrentExperiment = "", ""
	sw.Status.Verdict = perfexpv1alpha1.VerdictPass
	sw.Status.Message = text.Truncate(fmt.Sprintf("culprit %s after %d steps (%d runs, %d failed, %s): %s; report in ConfigMap %s",
		sw.Status.Bisect.Summary, len(res.Steps), sw.Status.Done, sw.Status.Failed, res.Duration, sw.Status.Bisect.StopReason, cm.Name), 1024)
	setSweepCondition(sw, perfexpv1alpha1.ConditionReported, metav1.ConditionTrue, perfexpv1alpha1.ReasonReported, "report in ConfigMap %s", cm.Name)
	setSweepCondition(sw, perfexpv1alpha1.ConditionReady, metav1.ConditionTrue, perfexpv1alpha1.ReasonSucceeded, "%s", sw.Status.Message)
	if r.Recorder != nil {
		r.Recorder.Eventf(sw, nil, corev1.EventTypeNormal, perfexpv1alpha1.ReasonReported, "Report", "%s", sw.Status.Message)
	}
	return ctrl.Result{}, nil
}
