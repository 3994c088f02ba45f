package controllers

import (
	"context"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/step"
)

// baselineRecheck is how often analysis looks whether a running baseline has finished.
const baselineRecheck = 15 * time.Second

func orPending(p perfexpv1alpha1.Phase) perfexpv1alpha1.Phase {
	if p == "" {
		return perfexpv1alpha1.PhasePending
	}
	return p
}

// reconcileAnalyzing reads the results of the recorded window. The environment is restored and
// the queue released by now, so a slow or absent Prometheus only delays the report.
func (r *PerfExperimentReconciler) reconcileAnalyzing(ctx context.Context, s *scope) (ctrl.Result, error) {
	exp := s.exp
	var baseline *perfexpv1alpha1.PerfExperiment
	if exp.Spec.Baseline != nil {
		b := &perfexpv1alpha1.PerfExperiment{}
		err := r.Get(ctx, client.ObjectKey{Namespace: exp.Namespace, Name: exp.Spec.Baseline.Name}, b)
		switch {
		case err == nil:
			baseline = b
		case !apierrors.IsNotFound(err):
			return ctrl.Result{}, err
		}
	}
	var res step.Result
	var err error
	deadline := analysisDeadline(s, baseline)
	if baseline != nil && !baseline.Status.Phase.IsTerminal() {
		// The baseline released the queue before its own analysis; compare with its results,
		// not with nothing.
		res = step.Wait(baselineRecheck, "the baseline %s to finish (it is %s)", baseline.Name, orPending(baseline.Status.Phase))
		setCondition(exp, perfexpv1alpha1.ConditionAnalyzed, metav1.ConditionFalse, perfexpv1alpha1.ReasonWaitingForBaseline, "waiting for %s", res.Waiting)
	} else {
		var p analysisPoll
		p, err = r.analyzeAttempt(ctx, s, baseline)
		res = p.res
		// A first attempt that began after the deadline (the baseline took the time) is
		// judged when it ends, as one attempt always was.
		if !p.firstStarted.IsZero() && !p.firstStarted.Before(deadline) {
			deadline = time.Time{}
		}
		// While an attempt is under way the condition keeps what the last one waited for, so
		// each attempt does not cost two status writes.
		last := meta.FindStatusCondition(exp.Status.Conditions, perfexpv1alpha1.ConditionAnalyzed)
		underWay := res.Waiting == analysisRuns && last != nil && last.Reason != perfexpv1alpha1.ReasonWaitingForBaseline
		if !res.Done && res.Failure == nil && err == nil && res.Waiting != attemptRanOut && !underWay {
			setCondition(exp, perfexpv1alpha1.ConditionAnalyzed, metav1.ConditionFalse, perfexpv1alpha1.ReasonWaitingForPrometheus, "waiting for %s", orSomething(res.Waiting))
		}
	}
	if res.Failure != nil {
		setCondition(exp, perfexpv1alpha1.ConditionAnalyzed, metav1.ConditionFalse, res.Failure.Reason, "%s", res.Failure.Message)
	}
	return r.advance(ctx, s, res, err, deadline, perfexpv1alpha1.ReasonAnalysisTimedOut, func() {
		setCondition(exp, perfexpv1alpha1.ConditionAnalyzed, metav1.ConditionTrue, perfexpv1alpha1.ReasonAnalyzed, "results were read from Prometheus")
		r.recordHistory(ctx, s)
		r.finishOrConfirm(s)
	})
}

// DefaultAnalysisAttemptTimeout bounds one call into the Analyzer when the reconciler names no
// bound of its own. It is longer than a healthy analysis takes (a few queries, a report) and
// short enough that a hung Prometheus costs an attempt minutes, not for ever.
const DefaultAnalysisAttemptTimeout = 2 * time.Minute

// attemptRanOut is what an experiment waits for after an analysis attempt ran out of time.
const attemptRanOut = "another analysis attempt (the last one ran out of time)"

// analyzeAttempt reads the outcome of the experiment's analysis, which runs apart from the
// reconciler's workers (analysis_runner.go): a Prometheus that accepts connections and never
// answers holds an analysis slot for one attempt, never a worker that restores or admits
// another queue's experiment. timeouts.analysis still ends the phase.
func (r *PerfExperimentReconciler) analyzeAttempt(ctx context.Context, s *scope, baseline *perfexpv1alpha1.PerfExperiment) (analysisPoll, error) {
	p, err := r.analyses.poll(ctx, s.exp, baseline)
	if p.ranOut {
		setCondition(s.exp, perfexpv1alpha1.ConditionAnalyzed, metav1.ConditionFalse, perfexpv1alpha1.ReasonAnalysisAttemptTimedOut,
			"an analysis attempt got no answer within %s; trying again", r.analyses.timeout)
	}
	return p, err
}

// analysisDeadline bounds the time analysis spends on Prometheus, not the time it waits for a
// running baseline: timeouts.analysis counts from when the phase began or the baseline ended,
// whichever is later, and there is no deadline while the baseline runs. (The baseline is
// bounded by its own timeouts, and a cycle of baselines is refused when leaving the queue.)
func analysisDeadline(s *scope, baseline *perfexpv1alpha1.PerfExperiment) time.Time {
	from := phaseStart(s)
	if baseline != nil {
		if !baseline.Status.Phase.IsTerminal() {
			return time.Time{}
		}
		if end := baseline.Status.CompletionTime; end != nil && end.After(from) {
			from = end.Time
		}
	}
	return from.Add(timeouts(s.exp).Analysis)
}
