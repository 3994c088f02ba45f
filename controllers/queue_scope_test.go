package controllers_test

import (
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/testenv"
)

// TestQueueOfAnotherNamespace: every experiment's default queue is named after its target
// namespace, and queue names are cluster-wide, so an author elsewhere could join team B's
// queue with priority 1000 and hold team B's environment. A queue named like a namespace is
// that namespace's: others join it only when its administrator lists them.
func TestQueueOfAnotherNamespace(t *testing.T) {
	env := testenv.Start(t)
	env.Namespace(t, leaseNamespace)
	c := env.Client
	owner := env.Namespace(t, "env-b")
	intruder := env.Namespace(t, "team-x")
	invited := env.Namespace(t, "team-f")
	l := newLab()
	startOperatorOpts(t, env, operatorOptions{workers: 2}, l, l, l)

	t.Run("an experiment targeting its own namespace may not join another namespace's queue", func(t *testing.T) {
		mustCreate(t, c, experiment(intruder, "capture", owner, 1000))
		got := waitPhase(t, c, intruder, "capture", perfexpv1alpha1.PhaseFailed)
		ready := condition(got, perfexpv1alpha1.ConditionReady)
		if ready == nil || ready.Reason != perfexpv1alpha1.ReasonQueueNotAllowed || !strings.Contains(ready.Message, "queue env-b is namespace env-b's own queue") {
			t.Fatalf("Ready %+v; want %s", ready, perfexpv1alpha1.ReasonQueueNotAllowed)
		}
		if slices.Contains(l.order(), "capture") || got.Status.StartTime != nil {
			t.Error("it took the queue's lock")
		}
	})

	t.Run("it may when that namespace lists it in perfexp.dev/queue-members", func(t *testing.T) {
		ns := &corev1.Namespace{}
		if err := c.Get(t.Context(), client.ObjectKey{Name: owner}, ns); err != nil {
			t.Fatal(err)
		}
		ns.Annotations = map[string]string{perfexpv1alpha1.AnnotationQueueMembers: "team-q, " + invited}
		if err := c.Update(t.Context(), ns); err != nil {
			t.Fatal(err)
		}
		l.finishLoad("invited")
		mustCreate(t, c, experiment(invited, "invited", owner, 0))
		waitPhase(t, c, invited, "invited", perfexpv1alpha1.PhaseSucceeded)
	})

	t.Run("a queue named like no namespace is shared by whoever names it", func(t *testing.T) {
		l.finishLoad("shared")
		mustCreate(t, c, experiment(intruder, "shared", "perf-lab", 0))
		waitPhase(t, c, intruder, "shared", perfexpv1alpha1.PhaseSucceeded)
	})
}
