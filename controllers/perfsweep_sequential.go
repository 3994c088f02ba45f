package controllers

import (
	"context"
	"fmt"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/log"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/report"
	"github.com/perfexp/perfexp/internal/sweep"
)

// nextLook runs when every planned run of a sequential sweep has ended, with the comparisons of
// those runs: it either adds a repeat (true: the next reconcile plans and creates its runs) or
// records why the sweep stops here, in the status and the results' notes (false: the report
// follows). A fixed sweep never adds one.
func (r *PerfSweepReconciler) nextLook(ctx context.Context, s *sweepScope, result *report.SweepResult, now time.Time) bool {
	sw := s.sweep
	if sw.Spec.Sequential == nil {
		return false
	}
	st := sw.Status.Sequential
	if st == nil {
		st = &perfexpv1alpha1.SweepSequentialStatus{}
		sw.Status.Sequential = st
	}
	planned := sweep.PlannedRepeats(sw)
	st.Repeats = int32(planned)
	st.Looks++
	budget := sweep.MaxRepeats(sw)
	switch {
	case sweep.Decided(result):
		st.StopReason = fmt.Sprintf("every arm was decisive after %d repeats", planned)
	case planned >= budget:
		st.StopReason = fmt.Sprintf("the budget of %d repeats is spent; arms still Inconclusive stay so", budget)
	case sw.Spec.Sequential.MaxDuration != nil && now.Sub(sw.CreationTimestamp.Time) >= sw.Spec.Sequential.MaxDuration.Duration:
		st.StopReason = fmt.Sprintf("the budget of %s is spent after %d repeats; arms still Inconclusive stay so", sw.Spec.Sequential.MaxDuration.Duration, planned)
	default:
		st.Repeats = int32(planned + 1)
		st.StopReason = ""
		log.FromContext(ctx).Info("Added a repeat to the sequential sweep: not every arm is decisive yet", "repeats", planned+1, "budget", budget)
		return true
	}
	result.Notes = append(result.Notes, "sequential sweep stopped: "+st.StopReason)
	return false
}
