package controllers

import (
	"context"
	"fmt"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/step"
	"github.com/perfexp/perfexp/internal/text"
)

// defaultWait is how long to wait before calling a step again that named no time of its own.
const defaultWait = 10 * time.Second

// enter moves the experiment to a phase, records when, and emits an event.
func (r *PerfExperimentReconciler) enter(s *scope, p perfexpv1alpha1.Phase, format string, args ...any) {
	exp := s.exp
	if exp.Status.Phase == p {
		return
	}
	msg := fmt.Sprintf(format, args...)
	exp.Status.Phase = p
	exp.Status.Message = text.Truncate(msg, 1024)
	history := append(exp.Status.PhaseHistory, perfexpv1alpha1.PhaseTransition{Phase: p, Time: metav1.NewTime(s.now)})
	if len(history) > 16 {
		history = history[len(history)-16:]
	}
	exp.Status.PhaseHistory = history
	if r.Recorder != nil {
		r.Recorder.Eventf(exp, nil, eventType(p), string(p), "Transition", "%s", msg)
	}
}

// phaseStart is when the experiment entered its current phase.
func phaseStart(s *scope) time.Time {
	h := s.exp.Status.PhaseHistory
	for i := len(h) - 1; i >= 0; i-- {
		if h[i].Phase == s.exp.Status.Phase {
			return h[i].Time.Time
		}
	}
	return s.now
}

// fail records why the experiment fails. When it may have touched the environment or started
// load, it goes to Restoring first; otherwise it ends at once. reason Aborted ends as Aborted.
func (r *PerfExperimentReconciler) fail(s *scope, reason, format string, args ...any) {
	exp := s.exp
	msg := fmt.Sprintf(format, args...)
	if failure(exp) == nil {
		setCondition(exp, perfexpv1alpha1.ConditionReady, metav1.ConditionFalse, reason, "%s", msg)
	}
	if holdsEnvironment(exp.Status.Phase) {
		if exp.Status.Phase != perfexpv1alpha1.PhaseRestoring {
			setCondition(exp, perfexpv1alpha1.ConditionEnvironmentRestored, metav1.ConditionFalse, perfexpv1alpha1.ReasonRestoring, "restoring after: %s", msg)
			r.enter(s, perfexpv1alpha1.PhaseRestoring, "%s; restoring the environment", msg)
		}
		return
	}
	r.finish(s)
}

// finish ends the experiment: Failed or Aborted when a failure was recorded, else Succeeded.
func (r *PerfExperimentReconciler) finish(s *scope) {
	exp := s.exp
	now := metav1.NewTime(s.now)
	exp.Status.CompletionTime = &now
	exp.Status.QueuePosition = 0
	if c := failure(exp); c != nil {
		phase := perfexpv1alpha1.PhaseFailed
		if c.Reason == perfexpv1alpha1.ReasonAborted || c.Reason == perfexpv1alpha1.ReasonDeleted {
			phase = perfexpv1alpha1.PhaseAborted
		}
		r.enter(s, phase, "%s", c.Message)
		return
	}
	why := verdictWhy(exp) + confirmationSummary(exp)
	setCondition(exp, perfexpv1alpha1.ConditionReady, metav1.ConditionTrue, perfexpv1alpha1.ReasonSucceeded, "the experiment ran and was analysed; verdict %s%s", verdictOrNone(exp), why)
	r.enter(s, perfexpv1alpha1.PhaseSucceeded, "succeeded; verdict %s%s", verdictOrNone(exp), why)
}

// verdictWhy says, for a Fail verdict, what failed it, from what the analysis recorded: the
// objectives missed, the k6 thresholds crossed, a Regressed comparison. The message is what
// Argo CD's health check and kstatus show, so a red light says why at a glance.
func verdictWhy(exp *perfexpv1alpha1.PerfExperiment) string {
	if exp.Status.Verdict != perfexpv1alpha1.VerdictFail {
		return ""
	}
	var why []string
	if c := meta.FindStatusCondition(exp.Status.Conditions, perfexpv1alpha1.ConditionObjectivesMet); c != nil && c.Status == metav1.ConditionFalse {
		why = append(why, c.Message)
	}
	if c := meta.FindStatusCondition(exp.Status.Conditions, perfexpv1alpha1.ConditionThresholdsCrossed); c != nil && c.Status == metav1.ConditionTrue {
		why = append(why, strings.TrimSuffix(c.Message, "; the verdict is Fail"))
	}
	if cmp := exp.Status.Comparison; cmp != nil && cmp.Change == perfexpv1alpha1.ChangeRegressed {
		why = append(why, "the comparison with the baseline Regressed")
	}
	if c := exp.Status.Confirmation; c != nil && c.Change == perfexpv1alpha1.ChangeRegressed {
		why = append(why, "the confirmation's repeated runs Regressed")
	}
	if len(why) == 0 {
		return ""
	}
	return ": " + strings.Join(why, "; ")
}

func verdictOrNone(exp *perfexpv1alpha1.PerfExperiment) string {
	if exp.Status.Verdict == "" {
		return "none"
	}
	return string(exp.Status.Verdict)
}

// advance turns a step's report into the experiment's next move: fail on a failure or when
// the deadline passed, call next when done, else wait until the step asks to be called again
// or the deadline, whichever comes first.
func (r *PerfExperimentReconciler) advance(ctx context.Context, s *scope, res step.Result, err error,
	deadline time.Time, timeoutReason string, next func()) (ctrl.Result, error) {
	late := !deadline.IsZero() && !s.now.Before(deadline)
	switch {
	case err != nil && late:
		r.fail(s, timeoutReason, "timed out in %s: %v", s.exp.Status.Phase, err)
		return ctrl.Result{}, nil
	case err != nil:
		return ctrl.Result{}, err
	case res.Failure != nil:
		r.fail(s, res.Failure.Reason, "%s", res.Failure.Message)
		return ctrl.Result{}, nil
	case res.Done:
		next()
		return ctrl.Result{}, nil
	case late:
		r.fail(s, timeoutReason, "timed out in %s after %s waiting for %s", s.exp.Status.Phase,
			deadline.Sub(phaseStart(s)).Round(time.Second), orSomething(res.Waiting))
		return ctrl.Result{}, nil
	}
	wait := orDefault(res.RequeueAfter)
	if !deadline.IsZero() {
		if untilDeadline := deadline.Sub(s.now); untilDeadline < wait {
			wait = untilDeadline
		}
	}
	log.FromContext(ctx).V(1).Info("Waiting", "phase", s.exp.Status.Phase, "for", res.Waiting, "after", wait)
	return ctrl.Result{RequeueAfter: wait}, nil
}

func orDefault(d time.Duration) time.Duration {
	if d <= 0 {
		return defaultWait
	}
	return d
}

func orSomething(s string) string {
	if s == "" {
		return "the step to finish"
	}
	return s
}

// checkAbortAndDeadline handles spec.abort and the overall timeout, which apply in every
// phase. It reports whether it decided this reconcile.
func (r *PerfExperimentReconciler) checkAbortAndDeadline(ctx context.Context, s *scope) (bool, error) {
	exp := s.exp
	phase := exp.Status.Phase
	// A confirming experiment aborts its sweep first and ends once the sweep's runs have
	// (phase_confirming.go).
	if exp.Spec.Abort && failure(exp) == nil && phase != perfexpv1alpha1.PhaseConfirming {
		switch {
		case holdsEnvironment(phase):
			r.fail(s, perfexpv1alpha1.ReasonAborted, "aborted by spec.abort")
			return true, nil
		default:
			// Nothing was touched yet (or it is restored already): end now, freeing the queue
			// in case the lock was taken just before the abort.
			if err := r.releaseLocks(ctx, exp); err != nil {
				return true, err
			}
			r.fail(s, perfexpv1alpha1.ReasonAborted, "aborted by spec.abort")
			return true, nil
		}
	}
	if t := r.overallTimeout(exp); exp.Status.StartTime != nil && failure(exp) == nil &&
		holdsEnvironment(phase) && phase != perfexpv1alpha1.PhaseRestoring &&
		!s.now.Before(exp.Status.StartTime.Add(t)) {
		r.fail(s, perfexpv1alpha1.ReasonTimedOut, "the overall timeout of %s passed", t)
		return true, nil
	}
	return false, nil
}

// effectiveTimeouts are the spec's timeouts with defaults filled in; the CRD defaults them only
// when spec.timeouts is present.
type effectiveTimeouts struct {
	Rollout, Setup, Teardown, LoadGrace, Analysis, Overall time.Duration
}

func timeouts(exp *perfexpv1alpha1.PerfExperiment) effectiveTimeouts {
	t := effectiveTimeouts{Rollout: 10 * time.Minute, Setup: 30 * time.Minute, Teardown: 10 * time.Minute, LoadGrace: 5 * time.Minute, Analysis: 30 * time.Minute}
	spec := exp.Spec.Timeouts
	if spec == nil {
		return t
	}
	set := func(dst *time.Duration, d *metav1.Duration) {
		if d != nil && d.Duration > 0 {
			*dst = d.Duration
		}
	}
	set(&t.Rollout, spec.Rollout)
	set(&t.Setup, spec.Setup)
	set(&t.Teardown, spec.Teardown)
	set(&t.LoadGrace, spec.LoadGrace)
	set(&t.Analysis, spec.Analysis)
	set(&t.Overall, spec.Overall)
	return t
}
