package controllers

import (
	"context"
	"fmt"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/log"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/report"
	"github.com/perfexp/perfexp/internal/sweep"
	"github.com/perfexp/perfexp/internal/text"
)

// nextLook runs when every planned run of a sequential sweep has ended, with the comparisons of
// those runs: it records the arms this look decided (they get no further runs and their
// verdicts are final), and either adds a repeat for the arms still undecided and the baseline
// (true: the next reconcile plans and creates its runs) or records why the sweep stops here, in
// the status and the results' notes (false: the report follows). A fixed sweep never adds one.
func (r *PerfSweepReconciler) nextLook(ctx context.Context, s *sweepScope, result *report.SweepResult, now time.Time) bool {
	sw := s.sweep
	q := sweep.Sequential(sw)
	if q == nil {
		return false
	}
	st := sw.Status.Sequential
	if st == nil {
		st = &perfexpv1alpha1.SweepSequentialStatus{}
		sw.Status.Sequential = st
	}
	planned := sweep.PlannedRepeats(sw)
	budget := sweep.MaxRepeats(sw)
	st.Repeats, st.Auto, st.MaxRepeats = int32(planned), sweep.Auto(sw), int32(budget)
	st.Looks++
	recordDecisions(sw, result)
	undecided := 0
	for _, a := range result.Arms {
		if a.Decision != nil && !a.Decision.Decided {
			undecided++
		}
	}
	switch {
	case sweep.Decided(result):
		st.StopReason = fmt.Sprintf("every arm was decisive after %d repeats", planned)
	case planned >= budget:
		st.StopReason = fmt.Sprintf("the budget of %d repeats is spent; arms still Inconclusive stay so", budget)
	case q.MaxDuration != nil && now.Sub(sw.CreationTimestamp.Time) >= q.MaxDuration.Duration:
		st.StopReason = fmt.Sprintf("the budget of %s is spent after %d repeats; arms still Inconclusive stay so", q.MaxDuration.Duration, planned)
	default:
		st.Repeats = int32(planned + 1)
		st.StopReason = ""
		log.FromContext(ctx).Info("Added a repeat to the sequential sweep for the arms not decisive yet",
			"repeats", planned+1, "budget", budget, "undecided", undecided, "stopped", len(st.Arms))
		return true
	}
	result.Notes = append(result.Notes, "sequential sweep stopped: "+st.StopReason)
	return false
}

// recordDecisions writes the arms a look decided into status.sequential.arms (the plan gives
// them no further runs) and their verdicts into status.arms at once. An arm recorded earlier
// keeps its record: its verdict was frozen at the look that decided it.
func recordDecisions(sw *perfexpv1alpha1.PerfSweep, result *report.SweepResult) {
	st := sw.Status.Sequential
	recorded := map[string]bool{}
	for _, a := range st.Arms {
		recorded[a.Name] = true
	}
	for _, a := range result.Arms {
		d := a.Decision
		if d == nil || !d.Decided || recorded[a.Name] {
			continue
		}
		st.Arms = append(st.Arms, perfexpv1alpha1.SweepSequentialArm{Name: a.Name, Repeats: int32(d.Repeats), Change: d.Change})
		for i := range sw.Status.Arms {
			if sw.Status.Arms[i].Name == a.Name && a.Comparison != nil {
				sw.Status.Arms[i].Change = a.Comparison.Change
				sw.Status.Arms[i].Message = text.Truncate(report.VerdictReason(a.Comparison), 512)
			}
		}
	}
}
