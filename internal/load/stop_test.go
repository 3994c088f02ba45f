package load_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/testenv"
)

// A k6 pod on a node that went NotReady stays Terminating until the node comes back. Stopping
// the load waits for it a while, then stops waiting, so restoring the environment and
// releasing the queue never hang on it.
func TestStopDoesNotWaitForeverForAPodStuckTerminating(t *testing.T) {
	env := testenv.Start(t, filepath.Join("testdata", "crds"))
	f := newFixture(t, env, "stuck")
	exp := f.experiment("stuck", []perfexpv1alpha1.Scenario{vusScenario("checkout", 1, time.Hour)})
	mustStep(t)(f.r.Run(t.Context(), exp))
	pod := f.runPod(f.job(exp, "checkout"), 0, second(time.Now()))
	// The finalizer plays the kubelet that never confirms the pod's end.
	pod.Finalizers = []string{"perfexp.dev/test-node-gone"}
	if err := f.c.Update(t.Context(), pod); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		// t.Context is done by now; the API server stops with the test anyway.
		p := &corev1.Pod{}
		if err := f.c.Get(context.Background(), client.ObjectKeyFromObject(pod), p); err == nil {
			p.Finalizers = nil
			_ = f.c.Update(context.Background(), p)
		}
	})

	tests := []struct {
		name     string
		advance  time.Duration
		wantDone bool
	}{
		{"right after the delete the pod is waited for", 0, false},
		{"a minute later it still is", time.Minute, false},
		{"past its deletion by more than the bound it is not", 3 * time.Minute, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f.clock.Step(tt.advance)
			res := mustStep(t)(f.r.Stop(t.Context(), exp))
			if res.Done != tt.wantDone {
				t.Fatalf("Stop() = %+v, want done %v", res, tt.wantDone)
			}
			p := &corev1.Pod{}
			if !f.get(pod.Name, p) || p.DeletionTimestamp == nil {
				t.Fatalf("the pod should be deleted and stuck terminating: %+v", client.ObjectKeyFromObject(p))
			}
		})
	}
}
