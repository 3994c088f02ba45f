package controllers_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/testenv"
)

// An experiment keeps the queue it joined (status.queue): an edit of its spec.queue while it
// waits is refused at apply (the spec is frozen from Queued on), and the lock it takes is the
// lock its queue mates see, and the one it releases.
func TestQueueFrozenInStatus(t *testing.T) {
	env := testenv.Start(t)
	env.Namespace(t, leaseNamespace)
	c := env.Client
	ns := env.Namespace(t, "frozen")
	lab := newLab()
	startOperator(t, env, lab)

	mustCreate(t, c, experiment(ns, "holder", "frozen", 0))
	waitPhase(t, c, ns, "holder", perfexpv1alpha1.PhaseRunning)
	mustCreate(t, c, experiment(ns, "waiter", "frozen", 0))
	expectPositions(t, c, ns, "holder", []string{"waiter"})

	// The spec is frozen from Queued on: the edit is refused at apply.
	waiter := get(t, c, ns, "waiter")
	patch := client.MergeFrom(waiter.DeepCopy())
	waiter.Spec.Queue = "elsewhere"
	if err := c.Patch(t.Context(), waiter, patch); err == nil || !strings.Contains(err.Error(), "the spec cannot change once the experiment has joined its queue (it is Queued)") {
		t.Fatalf("editing spec.queue of a queued experiment: %v, want refused", err)
	}
	// Give the operator time to act on the edit; the waiter must keep waiting behind holder.
	time.Sleep(3 * time.Second)
	expectPositions(t, c, ns, "holder", []string{"waiter"})
	if got := get(t, c, ns, "waiter"); got.Status.Queue != "frozen" {
		t.Errorf("status.queue %q after editing spec.queue, want the queue it joined, frozen", got.Status.Queue)
	}

	lab.finishLoad("holder")
	waitPhase(t, c, ns, "waiter", perfexpv1alpha1.PhaseRunning)
	lab.finishLoad("waiter")
	waitPhase(t, c, ns, "waiter", perfexpv1alpha1.PhaseSucceeded)
	if got, want := lab.order(), []string{"holder", "waiter"}; !slices.Equal(got, want) {
		t.Errorf("order %v, want %v", got, want)
	}
	if v := lab.violations(); len(v) > 0 {
		t.Errorf("experiments overlapped: %v", v)
	}
}
