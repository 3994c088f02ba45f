package controllers

import (
	"fmt"
	"time"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
)

// DefaultOverallTimeout bounds an experiment that sets no spec.timeouts.overall: from leaving
// the queue to the end of its load, it holds its queue at most this long. Two days hold a 24 h
// soak with its setup and warm-up; longer runs say so in their spec.
const DefaultOverallTimeout = 48 * time.Hour

// DefaultMaxOverallTimeout is the longest spec.timeouts.overall the operator accepts unless
// its --max-overall-timeout says otherwise: eight days, a week-long soak (the longest single
// load shape the API allows) with a day for its rollouts, setup and warm-up.
const DefaultMaxOverallTimeout = 192 * time.Hour

// overallTimeout is how long exp may hold its queue's environment: its spec.timeouts.overall,
// or the operator's default.
func (r *PerfExperimentReconciler) overallTimeout(exp *perfexpv1alpha1.PerfExperiment) time.Duration {
	if t := timeouts(exp).Overall; t > 0 {
		return t
	}
	if r.DefaultOverallTimeout > 0 {
		return r.DefaultOverallTimeout
	}
	return DefaultOverallTimeout
}

func (r *PerfExperimentReconciler) maxOverallTimeout() time.Duration {
	if r.MaxOverallTimeout > 0 {
		return r.MaxOverallTimeout
	}
	return DefaultMaxOverallTimeout
}

// overallTimeoutProblem says why exp cannot run within its overall timeout, or "" when it
// can: the timeout is longer than the operator allows, or the load it plans (warm-up, start
// delays and load shapes) is longer than the timeout, so it would be stopped before its end.
// Checked before the experiment joins its queue, so it never holds the queue to fail later.
func (r *PerfExperimentReconciler) overallTimeoutProblem(exp *perfexpv1alpha1.PerfExperiment) string {
	overall, limit := r.overallTimeout(exp), r.maxOverallTimeout()
	set := timeouts(exp).Overall > 0
	if set && overall > limit {
		return fmt.Sprintf("spec.timeouts.overall is %s, longer than the %s this operator allows (its --max-overall-timeout): one experiment may not hold its queue that long", overall, limit)
	}
	planned := r.Load.PlannedDuration(exp)
	if w := exp.Spec.Load.WarmUp; w != nil {
		planned += w.Duration.Duration
	}
	if planned < overall {
		return ""
	}
	if set {
		return fmt.Sprintf("the load is planned to take %s (warm-up, start delays and load shapes), as long as or longer than spec.timeouts.overall (%s): it would be stopped before its end; raise timeouts.overall (at most %s) or shorten the load", planned, overall, limit)
	}
	return fmt.Sprintf("the load is planned to take %s (warm-up, start delays and load shapes), as long as or longer than the default overall timeout of %s: set spec.timeouts.overall (at most %s) to say how long it may hold its queue", planned, overall, limit)
}
