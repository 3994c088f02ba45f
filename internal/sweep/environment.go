package sweep

import (
	"time"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
)

// EnvironmentTime is how long one run held the environment: from leaving the queue
// (status.startTime) to entering Analyzing, when the environment was restored and the queue's
// lock released; a run that ended without analysis counts to its completion. A run still
// holding it counts nothing yet. The analysis runs beside the next run's load, so it is not
// environment time: a sweep's decisions and a confirmation count the same way.
func EnvironmentTime(r *perfexpv1alpha1.PerfExperiment) time.Duration {
	if r.Status.StartTime == nil {
		return 0
	}
	start := r.Status.StartTime.Time
	var end time.Time
	for _, t := range r.Status.PhaseHistory {
		if t.Phase == perfexpv1alpha1.PhaseAnalyzing && !t.Time.Before(r.Status.StartTime) {
			end = t.Time.Time
			break
		}
	}
	if end.IsZero() && r.Status.CompletionTime != nil {
		end = r.Status.CompletionTime.Time
	}
	if !end.After(start) {
		return 0
	}
	return end.Sub(start)
}
