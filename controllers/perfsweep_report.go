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

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/history"
	"github.com/perfexp/perfexp/internal/judge"
	"github.com/perfexp/perfexp/internal/load"
	"github.com/perfexp/perfexp/internal/publish"
	"github.com/perfexp/perfexp/internal/report"
	"github.com/perfexp/perfexp/internal/result"
	"github.com/perfexp/perfexp/internal/sweep"
	"github.com/perfexp/perfexp/internal/text"
)

// reconcileSweepReport runs once every run has ended and no repeat is to be added: it writes
// the sweep's results (every arm's runs compared with the baseline's) as the sweep report
// ConfigMap and ends the sweep.
func (r *PerfSweepReconciler) reconcileSweepReport(ctx context.Context, s *sweepScope, result *report.SweepResult) (ctrl.Result, error) {
	sw := s.sweep
	cm, err := r.publishSweepReport(ctx, sw, result)
	if err != nil {
		reportFailed(sw, "sweep report", err)
		return ctrl.Result{}, nil
	}

	for i := range sw.Status.Arms {
		a := &sw.Status.Arms[i]
		for _, ar := range result.Arms {
			if ar.Name == a.Name && ar.Comparison != nil {
				a.Change, a.Message = ar.Comparison.Change, text.Truncate(report.VerdictReason(ar.Comparison), 512)
			}
		}
	}
	sw.Status.BestArm = result.BestArm
	sw.Status.ReportRef = &perfexpv1alpha1.LocalObjectReference{Name: cm.Name}
	sw.Status.Phase = perfexpv1alpha1.SweepSucceeded
	sw.Status.CurrentArm, sw.Status.CurrentExperiment = "", ""
	best := "no arm improved on the baseline"
	if result.BestArm != "" {
		best = "best arm " + result.BestArm
	}
	sw.Status.Message = fmt.Sprintf("%d runs ended (%d failed); %s; report in ConfigMap %s", sw.Status.Done, sw.Status.Failed, best, cm.Name)
	end := sweep.EndingOf(sw.Status.Arms, judge.FailOnRegression(sw.Spec.Template.Analysis, r.FailOnRegression))
	sw.Status.Verdict = end.Verdict
	switch {
	case end.Verdict == perfexpv1alpha1.VerdictFail:
		sw.Status.Message = "verdict Fail (an arm Regressed and failOnRegression is set); " + sw.Status.Message
	case end.Problem != "":
		sw.Status.Message = "verdict " + string(end.Verdict) + " (" + end.Problem + "); " + sw.Status.Message
	}
	setSweepCondition(sw, perfexpv1alpha1.ConditionReported, metav1.ConditionTrue, perfexpv1alpha1.ReasonReported, "report in ConfigMap %s", cm.Name)
	if end.Failed {
		sw.Status.Phase = perfexpv1alpha1.SweepFailed
		setSweepCondition(sw, perfexpv1alpha1.ConditionReady, metav1.ConditionFalse, perfexpv1alpha1.ReasonRunsFailed, "%s", sw.Status.Message)
		return ctrl.Result{}, nil
	}
	setSweepCondition(sw, perfexpv1alpha1.ConditionReady, metav1.ConditionTrue, perfexpv1alpha1.ReasonSucceeded, "%s", sw.Status.Message)
	if r.Recorder != nil {
		r.Recorder.Eventf(sw, nil, corev1.EventTypeNormal, perfexpv1alpha1.ReasonReported, "Report", "%s", sw.Status.Message)
	}
	return ctrl.Result{}, nil
}

// sweepOutcomes reads every ended run's phase and, when it succeeded, its results.
func (r *PerfSweepReconciler) sweepOutcomes(ctx context.Context, s *sweepScope) (map[string]sweep.Outcome, error) {
	outcomes := map[string]sweep.Outcome{}
	for name, exp := range s.runs {
		o := sweep.Outcome{Phase: exp.Status.Phase}
		o.Seconds = sweep.EnvironmentTime(exp).Seconds()
		if exp.Status.Phase == perfexpv1alpha1.PhaseSucceeded {
			res, err := r.runResult(ctx, exp)
			if err != nil {
				return nil, err
			}
			o.Result = res
		}
		outcomes[name] = o
	}
	return outcomes, nil
}

// sweepNoise reads, for each arm compared one run against one, the between-run noise of the
// PerfHistory of the arm's configuration and of its baseline's (history.ReadNoise, as a single
// experiment's analysis reads it). Nothing is read when the template sets betweenRun, nor for
// arms with repeated runs (their runs give the noise).
func (r *PerfSweepReconciler) sweepNoise(ctx context.Context, s *sweepScope, outcomes map[string]sweep.Outcome, now time.Time) (sweep.Noise, error) {
	if !sweep.LearnsNoise(s.sweep) {
		return nil, nil
	}
	var reader client.Reader = r.Client
	if r.APIReader != nil {
		reader = r.APIReader
	}
	first := func(arm string) *perfexpv1alpha1.PerfExperiment {
		for _, run := range s.plan.RunsOf(arm) {
			if exp := s.runs[run.Name]; exp != nil {
				return exp
			}
		}
		return nil
	}
	noise := sweep.Noise{}
	oneRun := sweep.OneRunArms(s.plan, outcomes)
	for _, arm := range s.plan.Arms {
		cur, base := first(arm.Name), first(arm.Baseline)
		if !oneRun[arm.Name] || cur == nil || base == nil {
			continue
		}
		scripts, err := load.ScenarioScripts(ctx, reader, cur)
		if err != nil {
			return nil, fmt.Errorf("reading the scripts of arm %s: %w", arm.Name, err)
		}
		n, err := history.ReadNoise(ctx, reader, s.sweep.Namespace, scripts, now, base, cur)
		if err != nil {
			return nil, fmt.Errorf("reading the histories of arm %s: %w", arm.Name, err)
		}
		if n != nil {
			noise[arm.Name] = n
		}
	}
	return noise, nil
}

// runResult reads a succeeded run's results from its report ConfigMap (results.json), or, when
// the report is gone or unreadable, the summary kept in its status.
func (r *PerfSweepReconciler) runResult(ctx context.Context, exp *perfexpv1alpha1.PerfExperiment) (*result.Result, error) {
	cm := &corev1.ConfigMap{}
	err := r.Get(ctx, publish.Report(exp).Key, cm)
	switch {
	case err == nil:
		if res, perr := report.ParseJSON([]byte(cm.Data[report.KeyJSON])); perr == nil {
			return res, nil
		}
	case !apierrors.IsNotFound(err):
		return nil, fmt.Errorf("reading the report of run %s: %w", exp.Name, err)
	}
	return result.FromStatus(exp.Status.Results), nil
}

// publishSweepReport writes <sweep>-report, owned by the sweep so it goes with it.
func (r *PerfSweepReconciler) publishSweepReport(ctx context.Context, sw *perfexpv1alpha1.PerfSweep, res *report.SweepResult) (*corev1.ConfigMap, error) {
	data, err := report.SweepConfigMapData(res)
	if err != nil {
		return nil, err
	}
	return r.publishSweepData(ctx, sw, "sweep report", data)
}

// publishSweepData writes a sweep's report ConfigMap with the given keys, refusing one larger
// than a ConfigMap holds.
func (r *PerfSweepReconciler) publishSweepData(ctx context.Context, sw *perfexpv1alpha1.PerfSweep, what string, data map[string]string) (*corev1.ConfigMap, error) {
	size := 0
	for _, v := range data {
		size += len(v)
	}
	if size > report.MaxConfigMapBytes {
		return nil, fmt.Errorf("the %s is %d bytes, more than a ConfigMap holds", what, size)
	}
	return publish.ConfigMap(ctx, r.Client, publish.SweepReport(sw), func(cm *corev1.ConfigMap) error {
		cm.Labels[perfexpv1alpha1.LabelSweep] = sweepLabel(sw)
		cm.Data = data
		return nil
	})
}

// reportFailed ends a sweep whose report (what: "sweep report", "capacity report", ...) could
// not be written: Failed, with ConfigMapNotOwned when the name is someone else's ConfigMap.
func reportFailed(sw *perfexpv1alpha1.PerfSweep, what string, err error) {
	msg, reason := err.Error(), perfexpv1alpha1.ReasonReportFailed
	if _, ok := publish.IsNotOwned(err); ok {
		reason = perfexpv1alpha1.ReasonConfigMapNotOwned
	}
	sw.Status.Phase, sw.Status.Message = perfexpv1alpha1.SweepFailed, text.Truncate("the "+what+" could not be written: "+msg, 1024)
	setSweepCondition(sw, perfexpv1alpha1.ConditionReported, metav1.ConditionFalse, reason, "%s", msg)
	setSweepCondition(sw, perfexpv1alpha1.ConditionReady, metav1.ConditionFalse, reason, "%s", msg)
}

// searching shows a capacity search's or bisect's current move (msg) as the sweep's running
// message and conditions, with the run that holds the environment.
func searching(sw *perfexpv1alpha1.PerfSweep, reason, msg string) {
	if sw.Status.CurrentExperiment != "" {
		msg += "; " + sw.Status.CurrentExperiment + " holds the environment"
	}
	sw.Status.Phase, sw.Status.Message = perfexpv1alpha1.SweepRunning, text.Truncate(msg, 1024)
	setSweepCondition(sw, perfexpv1alpha1.ConditionReported, metav1.ConditionFalse, reason, "%s", msg)
	setSweepCondition(sw, perfexpv1alpha1.ConditionReady, metav1.ConditionUnknown, reason, "%s", msg)
}
