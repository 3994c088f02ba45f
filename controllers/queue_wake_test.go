package controllers

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/queue"
)

// Which changes of one experiment wake its queue: the ones that change who waits, in what
// order, or who holds the environment; never a waiting member's own position or message, or a
// burst of n arrivals would reconcile each of the n members n times.
func TestMovesQueue(t *testing.T) {
	base := func() *perfexpv1alpha1.PerfExperiment {
		e := &perfexpv1alpha1.PerfExperiment{ObjectMeta: metav1.ObjectMeta{Namespace: "perf", Name: "e", UID: "u"}}
		e.Spec.Queue = "q"
		e.Status.Queue = "q"
		e.Status.Phase = perfexpv1alpha1.PhaseQueued
		return e
	}
	tests := []struct {
		name   string
		change func(e *perfexpv1alpha1.PerfExperiment)
		want   bool
	}{
		{"a new position", func(e *perfexpv1alpha1.PerfExperiment) { e.Status.QueuePosition = 7 }, false},
		{"a new message", func(e *perfexpv1alpha1.PerfExperiment) { e.Status.Message = "position 3 in queue q" }, false},
		{"Pending and Queued both wait", func(e *perfexpv1alpha1.PerfExperiment) { e.Status.Phase = perfexpv1alpha1.PhasePending }, false},
		{"taking the lock", func(e *perfexpv1alpha1.PerfExperiment) { e.Status.Phase = perfexpv1alpha1.PhasePreparing }, true},
		{"aborted while waiting", func(e *perfexpv1alpha1.PerfExperiment) { e.Spec.Abort = true }, true},
		{"a new priority", func(e *perfexpv1alpha1.PerfExperiment) { e.Spec.Priority = 5 }, true},
		{"a new sequence", func(e *perfexpv1alpha1.PerfExperiment) {
			e.Annotations = map[string]string{queue.AnnotationSequence: "3"}
		}, true},
		{"a new baseline", func(e *perfexpv1alpha1.PerfExperiment) {
			e.Spec.Baseline = &perfexpv1alpha1.BaselineRef{Name: "b"}
		}, true},
		{"deletion requested", func(e *perfexpv1alpha1.PerfExperiment) {
			now := metav1.Now()
			e.DeletionTimestamp = &now
		}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			old, cur := base(), base()
			tt.change(cur)
			if got := movesQueue(old, cur); got != tt.want {
				t.Errorf("movesQueue = %v, want %v", got, tt.want)
			}
		})
	}

	holderPhases := []struct {
		from, to perfexpv1alpha1.Phase
		want     bool
	}{
		{perfexpv1alpha1.PhaseRunning, perfexpv1alpha1.PhaseRestoring, false},
		{perfexpv1alpha1.PhaseRestoring, perfexpv1alpha1.PhaseAnalyzing, true}, // the lock is released
		{perfexpv1alpha1.PhaseRestoring, perfexpv1alpha1.PhaseFailed, true},
		{perfexpv1alpha1.PhaseAnalyzing, perfexpv1alpha1.PhaseSucceeded, true},
	}
	for _, tt := range holderPhases {
		t.Run(string(tt.from)+" to "+string(tt.to), func(t *testing.T) {
			old, cur := base(), base()
			old.Status.Phase, cur.Status.Phase = tt.from, tt.to
			if got := movesQueue(old, cur); got != tt.want {
				t.Errorf("movesQueue = %v, want %v", got, tt.want)
			}
		})
	}
}
