package sweep_test

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/sweep"
)

// A run holds the environment from leaving the queue until it is restored; its analysis, which
// runs beside the next run's load, is not counted.
func TestEnvironmentTimeEndsWhenTheEnvironmentIsRestored(t *testing.T) {
	at := func(m int) metav1.Time { return metav1.NewTime(time.Date(2026, 11, 25, 10, m, 0, 0, time.UTC)) }
	start, analyzing, done := at(0), at(7), at(9)
	r := &perfexpv1alpha1.PerfExperiment{}
	r.Status.StartTime, r.Status.CompletionTime = &start, &done
	r.Status.PhaseHistory = []perfexpv1alpha1.PhaseTransition{
		{Phase: perfexpv1alpha1.PhasePreparing, Time: start}, {Phase: perfexpv1alpha1.PhaseAnalyzing, Time: analyzing}, {Phase: perfexpv1alpha1.PhaseSucceeded, Time: done},
	}
	if got := sweep.EnvironmentTime(r); got != 7*time.Minute {
		t.Errorf("EnvironmentTime = %s, want 7m (to Analyzing, not to completion)", got)
	}
	r.Status.PhaseHistory = r.Status.PhaseHistory[:1]
	if got := sweep.EnvironmentTime(r); got != 9*time.Minute {
		t.Errorf("EnvironmentTime of a run ended without analysis = %s, want 9m (to its completion)", got)
	}
	r.Status.StartTime = nil
	if got := sweep.EnvironmentTime(r); got != 0 {
		t.Errorf("EnvironmentTime of a run that never left the queue = %s, want 0", got)
	}
}
