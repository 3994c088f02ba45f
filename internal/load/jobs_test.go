package load

import (
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

func TestJobAccount(t *testing.T) {
	now := time.Date(2026, 11, 25, 5, 47, 0, 0, time.UTC)
	done := func(ago time.Duration, completed string, failed *string) *batchv1.Job {
		end := metav1.NewTime(now.Add(-ago))
		j := &batchv1.Job{Status: batchv1.JobStatus{CompletedIndexes: completed, FailedIndexes: failed}}
		if ago >= 0 {
			j.Status.Conditions = []batchv1.JobCondition{{Type: batchv1.JobFailed, Status: corev1.ConditionTrue, LastTransitionTime: end}}
			if failed == nil {
				j.Status.CompletionTime = &end
				j.Status.Conditions[0].Type = batchv1.JobComplete
			}
		}
		return j
	}
	missing := podView{index: 0, phase: podPending}
	running := podView{name: "p-0", index: 0, phase: podRunning, started: now.Add(-time.Minute)}
	tests := []struct {
		name      string
		job       *batchv1.Job
		view      podView
		wantPhase podPhase
	}{
		{"a gone pod the Job counts completed has ended", done(0, "0", nil), missing, podEnded},
		{"a gone pod counted completed by a Job still running has ended", done(-1, "0", nil), missing, podEnded},
		{"a gone pod the Job counts failed is broken", done(0, "", ptr.To("0")), missing, podBroken},
		{"a pod seen running a moment after its Job completed is waited for", done(10*time.Second, "0", nil), running, podRunning},
		{"a pod seen running long after its Job completed has ended", done(40*time.Second, "0", nil), running, podEnded},
		{"a pod the Job does not count is left as seen", done(-1, "1", nil), missing, podPending},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := jobAccount(tt.job, []podView{tt.view}, now)[0]
			if got.phase != tt.wantPhase {
				t.Fatalf("phase %d, want %d (%+v)", got.phase, tt.wantPhase, got)
			}
			if got.phase == podEnded && (got.exitCode != 0 || got.finished.IsZero()) {
				t.Fatalf("an ended pod without exit 0 and an end: %+v", got)
			}
		})
	}
}

func TestIndexSet(t *testing.T) {
	got := indexSet("1,3-5, 7,x,9-")
	for _, i := range []int{1, 3, 4, 5, 7} {
		if !got[i] {
			t.Errorf("index %d missing from %v", i, got)
		}
	}
	if len(got) != 5 {
		t.Errorf("%v, want 1, 3, 4, 5, 7", got)
	}
}
