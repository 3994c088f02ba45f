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

// newSweepPlan is a sweep's plan: its declared arms, a capacity search's probes so far, or a
// bisect's steps so far.
func newSweepPlan(sw *perfexpv1alpha1.PerfSweep) (*sweep.Plan, error) {
	if sw.Spec.Capacity != nil {
		return sweep.NewCapacityPlan(sw)
	}
	if sw.Spec.Bisect != nil {
		return sweep.NewBisectPlan(sw), nil
	}
	return sweep.NewPlan(sw)
}

// reconcileCapacity runs a capacity search: it creates the planned runs of the probes so far
// and, once they have all ended, lets the search decide its next move (another run of the
// probe, a new probe, or the answer) in the status. The status write brings the next
// reconcile, which plans and creates what was decided, as a sequential sweep's repeats are.
func (r *PerfSweepReconciler) reconcileCapacity(ctx context.Context, s *sweepScope) (ctrl.Result, error) {
	sw := s.sweep
	if err := r.createRuns(ctx, s); err != nil {
		return ctrl.Result{}, err
	}
	progress := r.updateProgress(s)
	if sw.Status.Phase == perfexpv1alpha1.SweepFailed {
		return ctrl.Result{}, nil
	}
	if progress.Total > 0 && !progress.AllEnded() {
		r.capacityProgress(sw)
		return ctrl.Result{}, nil
	}
	outcomes, err := r.sweepOutcomes(ctx, s)
	if err != nil {
		return ctrl.Result{}, err
	}
	step := sweep.AdvanceCapacity(sw, s.plan, outcomes)
	log.FromContext(ctx).Info("Moved the capacity search on", "decision", step.Log)
	if !step.Done {
		r.capacityProgress(sw)
		return ctrl.Result{RequeueAfter: time.Second}, nil
	}
	return r.reconcileCapacityReport(ctx, s, sweep.CapacityReport(sw, s.plan, outcomes))
}

// capacityProgress says which probe is running, in the status message and conditions.
func (r *PerfSweepReconciler) capacityProgress(sw *perfexpv1alpha1.PerfSweep) {
	st := sw.Status.Capacity
	if st == nil || len(st.Probes) == 0 {
		return
	}
	p := st.Probes[len(st.Probes)-1]
	msg := fmt.Sprintf("probe %d of at most %d: %d %s, run %d", len(st.Probes), sweep.Search(sw).MaxProbes, p.Load, sw.Spec.Capacity.Parameter, p.Runs)
	searching(sw, perfexpv1alpha1.ReasonProbing, msg)
}

// reconcileCapacityReport writes the search's report ConfigMap and ends the sweep with its
// answer.
func (r *PerfSweepReconciler) reconcileCapacityReport(ctx context.Context, s *sweepScope, res *report.CapacityResult) (ctrl.Result, error) {
	sw := s.sweep
	cm, err := r.publishCapacityReport(ctx, sw, res)
	if err != nil {
		reportFailed(sw, "capacity report", err)
		return ctrl.Result{}, nil
	}
	sw.Status.ReportRef = &perfexpv1alpha1.LocalObjectReference{Name: cm.Name}
	sw.Status.Phase = perfexpv1alpha1.SweepSucceeded
	sw.Status.CurrentArm, sw.Status.CurrentExperiment = "", ""
	sw.Status.Verdict = perfexpv1alpha1.VerdictPass
	msg := fmt.Sprintf("capacity %s after %d probes (%d runs, %d failed): %s", orNone(res.Summary), len(res.Probes), sw.Status.Done, sw.Status.Failed, sw.Status.Capacity.StopReason)
	if f := res.LimitingFactor(); f != "" {
		msg += "; " + f
	}
	sw.Status.Message = text.Truncate(msg+"; report in ConfigMap "+cm.Name, 1024)
	setSweepCondition(sw, perfexpv1alpha1.ConditionReported, metav1.ConditionTrue, perfexpv1alpha1.ReasonReported, "report in ConfigMap %s", cm.Name)
	setSweepCondition(sw, perfexpv1alpha1.ConditionReady, metav1.ConditionTrue, perfexpv1alpha1.ReasonSucceeded, "%s", sw.Status.Message)
	if r.Recorder != nil {
		r.Recorder.Eventf(sw, nil, corev1.EventTypeNormal, perfexpv1alpha1.ReasonReported, "Report", "%s", sw.Status.Message)
	}
	return ctrl.Result{}, nil
}

func orNone(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

// publishCapacityReport writes <sweep>-report, owned by the sweep so it goes with it.
func (r *PerfSweepReconciler) publishCapacityReport(ctx context.Context, sw *perfexpv1alpha1.PerfSweep, res *report.CapacityResult) (*corev1.ConfigMap, error) {
	js, err := report.CapacityJSON(res)
	if err != nil {
		return nil, err
	}
	page, err := report.CapacityHTML(res)
	if err != nil {
		return nil, err
	}
	return r.publishSweepData(ctx, sw, "capacity report", map[string]string{report.KeySweepMarkdown: report.CapacityMarkdown(res), report.KeySweepJSON: string(js), report.KeySweepHTML: page})
}
