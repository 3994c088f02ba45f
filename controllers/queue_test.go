package controllers_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/queue"
	"github.com/perfexp/perfexp/internal/testenv"
)

func TestQueue(t *testing.T) {
	env := testenv.Start(t)
	env.Namespace(t, leaseNamespace)

	t.Run("five experiments on one queue never overlap and run by priority, then age", func(t *testing.T) {
		ctx := t.Context()
		c := env.Client
		ns := env.Namespace(t, "five")
		lab := newLab()
		startOperator(t, env, lab)

		// e0 takes the environment; the others arrive while it runs, one second apart so their
		// creation times (which have one-second resolution) differ.
		if err := c.Create(ctx, experiment(ns, "e0", "five", 0)); err != nil {
			t.Fatal(err)
		}
		waitPhase(t, c, ns, "e0", perfexpv1alpha1.PhaseRunning)
		arrivals := []struct {
			name     string
			priority int32
		}{{"e1", 0}, {"e2", 5}, {"e3", 0}, {"e4", 10}}
		for _, a := range arrivals {
			if err := c.Create(ctx, experiment(ns, a.name, "five", a.priority)); err != nil {
				t.Fatal(err)
			}
			time.Sleep(1100 * time.Millisecond)
		}

		// The order they will run in: priority first (e4, e2), then age (e1 before e3).
		remaining := []string{"e4", "e2", "e1", "e3"}
		running := "e0"
		for len(remaining) > 0 {
			expectPositions(t, c, ns, running, remaining)
			lab.finishLoad(running)
			waitPhase(t, c, ns, running, perfexpv1alpha1.PhaseSucceeded)
			running, remaining = remaining[0], remaining[1:]
			waitPhase(t, c, ns, running, perfexpv1alpha1.PhaseRunning)
		}
		lab.finishLoad(running)
		waitPhase(t, c, ns, running, perfexpv1alpha1.PhaseSucceeded)

		if got, want := lab.order(), []string{"e0", "e4", "e2", "e1", "e3"}; !slices.Equal(got, want) {
			t.Errorf("experiments ran in order %v, want %v", got, want)
		}
		if v := lab.violations(); len(v) > 0 {
			t.Errorf("experiments overlapped: %v", v)
		}
		// A queue nobody holds keeps no Lease (one per queue name ever used would pile up).
		lease := &coordinationv1.Lease{}
		err := c.Get(ctx, client.ObjectKey{Namespace: leaseNamespace, Name: queue.LeaseName("five")}, lease)
		switch {
		case err == nil && lease.Spec.HolderIdentity != nil:
			t.Errorf("the queue is still locked by %s after every experiment ended", *lease.Spec.HolderIdentity)
		case err == nil:
			t.Errorf("the queue's Lease is left behind after every experiment ended")
		case !apierrors.IsNotFound(err):
			t.Fatal(err)
		}
	})

	t.Run("deleting the running experiment restores its environment and frees the queue", func(t *testing.T) {
		ctx := t.Context()
		c := env.Client
		ns := env.Namespace(t, "deleted-holder")
		lab := newLab()
		startOperator(t, env, lab)

		mustCreate(t, c, experiment(ns, "holder", "deleted-holder", 0))
		waitPhase(t, c, ns, "holder", perfexpv1alpha1.PhaseRunning)
		mustCreate(t, c, experiment(ns, "next", "deleted-holder", 0))
		expectPositions(t, c, ns, "holder", []string{"next"})

		if err := c.Delete(ctx, experiment(ns, "holder", "", 0)); err != nil {
			t.Fatal(err)
		}
		eventually(t, 30*time.Second, "holder is gone", func() error {
			if get(t, c, ns, "holder") != nil {
				return fmt.Errorf("still there")
			}
			return nil
		})
		if lab.restores("holder") == 0 {
			t.Error("the deleted experiment's environment was not restored")
		}
		waitPhase(t, c, ns, "next", perfexpv1alpha1.PhaseRunning)
	})

	t.Run("a lock whose holder vanished without restoring is reclaimed", func(t *testing.T) {
		ctx := t.Context()
		c := env.Client
		ns := env.Namespace(t, "vanished")
		lab := newLab()
		op := startOperator(t, env, lab)

		mustCreate(t, c, experiment(ns, "ghost", "vanished", 0))
		waitPhase(t, c, ns, "ghost", perfexpv1alpha1.PhaseRunning)
		op.stop()

		// Someone strips the finalizer and deletes the holder while no operator runs: the
		// Lease still names it.
		ghost := get(t, c, ns, "ghost")
		ghost.Finalizers = nil
		if err := c.Update(ctx, ghost); err != nil {
			t.Fatal(err)
		}
		if err := c.Delete(ctx, ghost); err != nil {
			t.Fatal(err)
		}
		mustCreate(t, c, experiment(ns, "heir", "vanished", 0))
		startOperator(t, env, lab)
		heir := waitPhase(t, c, ns, "heir", perfexpv1alpha1.PhaseRunning)
		lease := &coordinationv1.Lease{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: leaseNamespace, Name: queue.LeaseName("vanished")}, lease); err != nil {
			t.Fatal(err)
		}
		if lease.Spec.HolderIdentity == nil || *lease.Spec.HolderIdentity != string(heir.UID) {
			t.Errorf("lease holder %v, want the heir %s", lease.Spec.HolderIdentity, heir.UID)
		}
	})

	// Waiting experiments read the queue's Lease from the cache. An experiment that took the
	// lock but whose status never said so must still find the lock its own, wherever the queue
	// order has moved it since, or its queue would wait for it forever.
	t.Run("an experiment that took the lock and crashed before saying so runs, even behind a higher priority", func(t *testing.T) {
		c := env.Client
		ns := env.Namespace(t, "took-crashed")
		lab := newLab()

		// No operator runs: taker is Queued and the Lease names it, as after a crash between
		// taking the lock and writing Preparing; then a higher priority arrives.
		taker := queuedHolder(t, c, ns, "taker", "took-crashed")
		mustCreate(t, c, experiment(ns, "urgent", "took-crashed", 10))
		startOperator(t, env, lab)

		waitPhase(t, c, ns, "taker", perfexpv1alpha1.PhaseRunning)
		if u := get(t, c, ns, "urgent"); u.Status.Phase != perfexpv1alpha1.PhaseQueued {
			t.Errorf("urgent is %s while %s holds the lock, want Queued", u.Status.Phase, taker.Name)
		}
		lab.finishLoad("taker")
		waitPhase(t, c, ns, "urgent", perfexpv1alpha1.PhaseRunning)
		if got, want := lab.order(), []string{"taker", "urgent"}; !slices.Equal(got, want) {
			t.Errorf("order %v, want %v", got, want)
		}
		if v := lab.violations(); len(v) > 0 {
			t.Errorf("experiments overlapped: %v", v)
		}
	})

	t.Run("an experiment the Lease names while it waits is woken by the Lease's change", func(t *testing.T) {
		c := env.Client
		ns := env.Namespace(t, "took-running")
		lab := newLab()
		startOperatorOpts(t, env, operatorOptions{workers: 4, baselineGrace: time.Hour}, lab, lab, lab)

		// first waits for a baseline that does not exist yet, so nobody takes the free lock;
		// second waits behind it, at an exact place that looks again only every 30 s.
		first := experiment(ns, "first", "took-running", 10)
		first.Spec.Baseline = &perfexpv1alpha1.BaselineRef{Name: "not-yet"}
		mustCreate(t, c, first)
		mustCreate(t, c, experiment(ns, "second", "took-running", 0))
		eventually(t, 30*time.Second, "second waits at position 2", func() error {
			if e := get(t, c, ns, "second"); e.Status.Phase != perfexpv1alpha1.PhaseQueued || e.Status.QueuePosition != 2 {
				return fmt.Errorf("second is %s at %d", e.Status.Phase, e.Status.QueuePosition)
			}
			return nil
		})
		// The Lease now names second, as when its reconcile took the lock and its status write
		// failed: the Lease's change, not its recheck, must bring it forward.
		writeLease(t, c, "took-running", get(t, c, ns, "second"))
		eventually(t, 10*time.Second, "second runs", func() error {
			if e := get(t, c, ns, "second"); e.Status.Phase != perfexpv1alpha1.PhaseRunning {
				return fmt.Errorf("second is %s (%s)", e.Status.Phase, e.Status.Message)
			}
			return nil
		})
	})

	t.Run("a restarted operator continues where the previous one stopped", func(t *testing.T) {
		c := env.Client
		ns := env.Namespace(t, "restart")
		lab := newLab()
		op := startOperator(t, env, lab)

		mustCreate(t, c, experiment(ns, "first", "restart", 0))
		waitPhase(t, c, ns, "first", perfexpv1alpha1.PhaseRunning)
		mustCreate(t, c, experiment(ns, "second", "restart", 0))
		mustCreate(t, c, experiment(ns, "third", "restart", 0))
		expectPositions(t, c, ns, "first", []string{"second", "third"})

		op.stop()
		lab.finishLoad("first")
		op = startOperator(t, env, lab)
		waitPhase(t, c, ns, "first", perfexpv1alpha1.PhaseSucceeded)
		waitPhase(t, c, ns, "second", perfexpv1alpha1.PhaseRunning)
		expectPositions(t, c, ns, "second", []string{"third"})

		op.stop()
		startOperator(t, env, lab)
		lab.finishLoad("second")
		waitPhase(t, c, ns, "second", perfexpv1alpha1.PhaseSucceeded)
		lab.finishLoad("third")
		waitPhase(t, c, ns, "third", perfexpv1alpha1.PhaseSucceeded)

		if got, want := lab.order(), []string{"first", "second", "third"}; !slices.Equal(got, want) {
			t.Errorf("order %v, want %v", got, want)
		}
		if v := lab.violations(); len(v) > 0 {
			t.Errorf("experiments overlapped: %v", v)
		}
	})

	t.Run("experiments on different queues and environments run side by side", func(t *testing.T) {
		c := env.Client
		ns := env.Namespace(t, "two-queues")
		other := env.Namespace(t, "two-queues-other")
		lab := newLab()
		startOperator(t, env, lab)
		mustCreate(t, c, experiment(ns, "a", "queue-a", 0))
		b := experiment(ns, "b", "queue-b", 0)
		b.Spec.TargetNamespace = other
		mustCreate(t, c, b)
		waitPhase(t, c, ns, "a", perfexpv1alpha1.PhaseRunning)
		waitPhase(t, c, ns, "b", perfexpv1alpha1.PhaseRunning)
	})

	// A queue is a name; the environment is the target namespace. An experiment in a queue
	// named like no namespace ran beside the holder of its target namespace's queue, both
	// patching and loading one environment.
	t.Run("queues aimed at one environment take turns", func(t *testing.T) {
		c := env.Client
		ns := env.Namespace(t, "one-env")
		lab := newLab()
		startOperator(t, env, lab)
		mustCreate(t, c, experiment(ns, "own", "", 0))
		waitPhase(t, c, ns, "own", perfexpv1alpha1.PhaseRunning)
		mustCreate(t, c, experiment(ns, "named", "not-a-namespace", 1000))
		eventually(t, 30*time.Second, "named waits for the environment", func() error {
			got := get(t, c, ns, "named")
			if !strings.Contains(got.Status.Message, "waiting for namespace "+ns+", where "+ns+"/own is running") {
				return fmt.Errorf("phase %s: %q", got.Status.Phase, got.Status.Message)
			}
			return nil
		})
		consistently(t, 2*time.Second, "named stays queued while own runs", func() error {
			if p := get(t, c, ns, "named").Status.Phase; p != perfexpv1alpha1.PhaseQueued {
				return fmt.Errorf("named is %s", p)
			}
			return nil
		})
		lab.finishLoad("own")
		waitPhase(t, c, ns, "named", perfexpv1alpha1.PhaseRunning)
		lab.finishLoad("named")
		waitPhase(t, c, ns, "named", perfexpv1alpha1.PhaseSucceeded)
		if v := lab.violations(); len(v) > 0 {
			t.Errorf("experiments overlapped: %v", v)
		}
	})

	t.Run("an experiment waits for the baseline it names, in the queue and in analysis", func(t *testing.T) {
		c := env.Client
		ns := env.Namespace(t, "baseline-first")
		lab := newLab()
		startOperator(t, env, lab)
		mustCreate(t, c, experiment(ns, "holder", "baseline-first", 0))
		waitPhase(t, c, ns, "holder", perfexpv1alpha1.PhaseRunning)

		// Applied together, the variant outranks its baseline, but must not run first.
		variant := experiment(ns, "variant", "baseline-first", 10)
		variant.Spec.Baseline = &perfexpv1alpha1.BaselineRef{Name: "base"}
		mustCreate(t, c, variant)
		mustCreate(t, c, experiment(ns, "base", "baseline-first", 0))
		expectPositions(t, c, ns, "holder", []string{"base", "variant"})

		lab.setHoldAnalysis("base", true)
		lab.finishLoad("holder")
		waitPhase(t, c, ns, "base", perfexpv1alpha1.PhaseRunning)
		lab.finishLoad("base")
		waitPhase(t, c, ns, "base", perfexpv1alpha1.PhaseAnalyzing)
		waitPhase(t, c, ns, "variant", perfexpv1alpha1.PhaseRunning)
		lab.finishLoad("variant")
		got := waitPhase(t, c, ns, "variant", perfexpv1alpha1.PhaseAnalyzing)
		eventually(t, 10*time.Second, "variant waits for its baseline's analysis", func() error {
			got = get(t, c, ns, "variant")
			if cond := condition(got, perfexpv1alpha1.ConditionAnalyzed); cond == nil || cond.Reason != perfexpv1alpha1.ReasonWaitingForBaseline {
				return fmt.Errorf("Analyzed condition %+v", cond)
			}
			return nil
		})
		lab.setHoldAnalysis("base", false)
		waitPhase(t, c, ns, "variant", perfexpv1alpha1.PhaseSucceeded)
		if seen := lab.baselinePhaseSeen("variant"); seen != string(perfexpv1alpha1.PhaseSucceeded) {
			t.Errorf("the variant was analysed against a baseline in phase %q, want Succeeded", seen)
		}
		if got, want := lab.order(), []string{"holder", "base", "variant"}; !slices.Equal(got, want) {
			t.Errorf("order %v, want %v", got, want)
		}
	})

	t.Run("an experiment does not run before a baseline that waits in another queue", func(t *testing.T) {
		c := env.Client
		ns := env.Namespace(t, "baseline-elsewhere")
		lab := newLab()
		startOperator(t, env, lab)
		mustCreate(t, c, experiment(ns, "holder", "busy", 0))
		waitPhase(t, c, ns, "holder", perfexpv1alpha1.PhaseRunning)
		mustCreate(t, c, experiment(ns, "base", "busy", 0))

		// Its own queue is free, and the queue order alone would let it run at once.
		variant := experiment(ns, "variant", "free", 0)
		variant.Spec.Baseline = &perfexpv1alpha1.BaselineRef{Name: "base"}
		mustCreate(t, c, variant)
		eventually(t, 10*time.Second, "variant waits for its baseline", func() error {
			got := get(t, c, ns, "variant")
			if cond := condition(got, perfexpv1alpha1.ConditionQueued); cond == nil || cond.Reason != perfexpv1alpha1.ReasonWaitingForBaseline {
				return fmt.Errorf("Queued condition %+v", cond)
			}
			return nil
		})
		consistently(t, 3*time.Second, "variant stays queued while its baseline waits", func() error {
			if p := get(t, c, ns, "variant").Status.Phase; p != perfexpv1alpha1.PhaseQueued {
				return fmt.Errorf("variant is %s", p)
			}
			return nil
		})

		lab.finishLoad("holder")
		waitPhase(t, c, ns, "base", perfexpv1alpha1.PhaseRunning)
		// Its queue is free, but base runs on the same environment (the target namespace).
		eventually(t, 10*time.Second, "variant waits for the environment", func() error {
			if got := get(t, c, ns, "variant"); !strings.Contains(got.Status.Message, "waiting for namespace "+ns) {
				return fmt.Errorf("phase %s: %q", got.Status.Phase, got.Status.Message)
			}
			return nil
		})
		lab.finishLoad("base")
		waitPhase(t, c, ns, "variant", perfexpv1alpha1.PhaseRunning)
		lab.finishLoad("variant")
		waitPhase(t, c, ns, "variant", perfexpv1alpha1.PhaseSucceeded)
		if v := lab.violations(); len(v) > 0 {
			t.Errorf("experiments overlapped: %v", v)
		}
		if got, want := lab.order(), []string{"holder", "base", "variant"}; !slices.Equal(got, want) {
			t.Errorf("order %v, want %v", got, want)
		}
	})

	t.Run("an experiment applied before its baseline waits for it, then fails if it never comes", func(t *testing.T) {
		c := env.Client
		ns := env.Namespace(t, "baseline-late")
		lab := newLab()
		startOperatorOpts(t, env, operatorOptions{workers: 4, baselineGrace: 4 * time.Second}, lab, lab, lab)
		variant := experiment(ns, "variant", "late", 10)
		variant.Spec.Baseline = &perfexpv1alpha1.BaselineRef{Name: "base"}
		mustCreate(t, c, variant)
		eventually(t, 10*time.Second, "variant waits for its baseline to be created", func() error {
			if cond := condition(get(t, c, ns, "variant"), perfexpv1alpha1.ConditionQueued); cond == nil || cond.Reason != perfexpv1alpha1.ReasonWaitingForBaseline {
				return fmt.Errorf("Queued condition %+v", cond)
			}
			return nil
		})
		mustCreate(t, c, experiment(ns, "base", "late", 0))
		waitPhase(t, c, ns, "base", perfexpv1alpha1.PhaseRunning)
		lab.finishLoad("base")
		waitPhase(t, c, ns, "variant", perfexpv1alpha1.PhaseRunning)
		lab.finishLoad("variant")
		waitPhase(t, c, ns, "variant", perfexpv1alpha1.PhaseSucceeded)
		if got, want := lab.order(), []string{"base", "variant"}; !slices.Equal(got, want) {
			t.Errorf("order %v, want %v", got, want)
		}

		orphan := experiment(ns, "orphan", "late", 0)
		orphan.Spec.Baseline = &perfexpv1alpha1.BaselineRef{Name: "never"}
		mustCreate(t, c, orphan)
		got := waitPhase(t, c, ns, "orphan", perfexpv1alpha1.PhaseFailed)
		if cond := condition(got, perfexpv1alpha1.ConditionQueued); cond == nil || cond.Reason != perfexpv1alpha1.ReasonBaselineNotFound {
			t.Errorf("Queued condition %+v, want reason BaselineNotFound", cond)
		}
	})

	// A sweep creates its runs one by one in its plan's order, and a randomized plan may put a
	// variant first and its baseline later: the variant, first in line, waits for its sweep to
	// create the baseline even when the operator allows no arrival grace, and runs before it as
	// the plan says. Before, it failed with BaselineNotFound in the moment between the two
	// creations (seen in a CI rehearsal of the randomized sweep story).
	t.Run("a sweep's run first in line waits for the baseline its sweep creates after it", func(t *testing.T) {
		c := env.Client
		ns := env.Namespace(t, "sweep-late")
		lab := newLab()
		startOperatorOpts(t, env, operatorOptions{workers: 4}, lab, lab, lab) // no arrival grace
		variant := experiment(ns, "variant", "sweep-late", 0)
		variant.Spec.Baseline = &perfexpv1alpha1.BaselineRef{Name: "base"}
		variant.Annotations = map[string]string{queue.AnnotationSequence: "1"}
		mustCreate(t, c, variant)
		eventually(t, 10*time.Second, "variant waits for its baseline to be created", func() error {
			if cond := condition(get(t, c, ns, "variant"), perfexpv1alpha1.ConditionQueued); cond == nil || cond.Reason != perfexpv1alpha1.ReasonWaitingForBaseline {
				return fmt.Errorf("Queued condition %+v", cond)
			}
			return nil
		})
		base := experiment(ns, "base", "sweep-late", 0)
		base.Annotations = map[string]string{queue.AnnotationSequence: "2"}
		mustCreate(t, c, base)
		waitPhase(t, c, ns, "variant", perfexpv1alpha1.PhaseRunning)
		lab.finishLoad("variant")
		lab.finishLoad("base")
		waitPhase(t, c, ns, "base", perfexpv1alpha1.PhaseSucceeded)
		if got, want := lab.order(), []string{"variant", "base"}; !slices.Equal(got, want) {
			t.Errorf("order %v, want the plan's %v", got, want)
		}
	})

	// Joining the queue is one status write: the write that says Queued carries the position,
	// its condition and message, as Queued's own reconciles would write them. Written apart, a
	// burst of n applies cost 2n status writes, and everyone watching saw each experiment Queued
	// without a place first.
	t.Run("each experiment of a burst joins its queue in one status write, at its place", func(t *testing.T) {
		const n = 15 // beyond the exact places, so approximate ones are written at once too
		c := env.Client
		ns := env.Namespace(t, "join")
		lab := newLab()
		startOperator(t, env, lab)
		mustCreate(t, c, experiment(ns, "holder", "join", 0))
		waitPhase(t, c, ns, "holder", perfexpv1alpha1.PhaseRunning)

		versions := watchExperiments(t, env, ns)
		names := make([]string, n)
		for i := range names {
			// One client, in name order: each arrival goes behind every earlier one (same or
			// later creation second, later name), so no arrival moves an earlier member and
			// each experiment has exactly one place to show.
			names[i] = fmt.Sprintf("exp-%02d", i)
			mustCreate(t, c, experiment(ns, names[i], "join", 0))
		}
		expectPositions(t, c, ns, "holder", names)
		// Queued's recheck and the wake-ups of members behind the exact places come within
		// positionBatchDelay; a second write of the place would come by then.
		time.Sleep(3 * time.Second)

		seen := versions()
		for i, name := range names {
			want := fmt.Sprintf("position %d in queue join; %s/holder is running", i+1, ns)
			if i+1 > queue.ExactPositions {
				want = fmt.Sprintf("about position %d in queue join", i+1)
			}
			var writes []string
			for _, v := range seen[name][1:] { // [0] is the creation
				writes = append(writes, fmt.Sprintf("%s at %d (%q)", v.Status.Phase, v.Status.QueuePosition, v.Status.Message))
			}
			if len(writes) != 1 {
				t.Errorf("%s: %d writes while it joined and waited, want 1: %v", name, len(writes), writes)
				continue
			}
			got := seen[name][1]
			cond := condition(&got, perfexpv1alpha1.ConditionQueued)
			if got.Status.Phase != perfexpv1alpha1.PhaseQueued || got.Status.QueuePosition != int32(i+1) || got.Status.Message != want ||
				cond == nil || cond.Status != metav1.ConditionTrue || cond.Reason != perfexpv1alpha1.ReasonWaitingForQueue || cond.Message != want {
				t.Errorf("%s joined as %s at %d (%q), Queued condition %+v; want Queued at %d, %q", name,
					got.Status.Phase, got.Status.QueuePosition, got.Status.Message, cond, i+1, want)
			}
		}
		// The transition's event is unchanged: it says what happened, not the place.
		eventually(t, 10*time.Second, "one Queued event per experiment", func() error {
			list := &eventsv1.EventList{}
			if err := c.List(t.Context(), list, client.InNamespace(ns)); err != nil {
				return err
			}
			queued := map[string]string{}
			for _, e := range list.Items {
				if e.Reason == string(perfexpv1alpha1.PhaseQueued) {
					queued[e.Regarding.Name] = e.Note
				}
			}
			for _, name := range names {
				if queued[name] != "waiting in queue join" {
					return fmt.Errorf("%s: Queued event %q", name, queued[name])
				}
			}
			return nil
		})
	})

	t.Run("the queue defaults to the target namespace", func(t *testing.T) {
		c := env.Client
		ns := env.Namespace(t, "default-queue")
		lab := newLab()
		startOperator(t, env, lab)
		a := experiment(ns, "a", "", 0)
		a.Spec.TargetNamespace = "library"
		b := experiment(ns, "b", "", 0)
		b.Spec.TargetNamespace = "library"
		mustCreate(t, c, a)
		waitPhase(t, c, ns, "a", perfexpv1alpha1.PhaseRunning)
		mustCreate(t, c, b)
		got := waitPhase(t, c, ns, "b", perfexpv1alpha1.PhaseQueued)
		if got.Status.Queue != "library" {
			t.Errorf("queue %q, want the target namespace library", got.Status.Queue)
		}
		expectPositions(t, c, ns, "a", []string{"b"})
	})
}

// watchExperiments records every version of every experiment of ns from now on, as a watch
// delivers them; the function it returns gives them by name, oldest first.
func watchExperiments(t *testing.T, env *testenv.Env, ns string) func() map[string][]perfexpv1alpha1.PerfExperiment {
	t.Helper()
	wc, err := client.NewWithWatch(env.Config, client.Options{Scheme: env.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	w, err := wc.Watch(t.Context(), &perfexpv1alpha1.PerfExperimentList{}, client.InNamespace(ns))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Stop)
	var mu sync.Mutex
	seen := map[string][]perfexpv1alpha1.PerfExperiment{}
	go func() {
		for ev := range w.ResultChan() {
			if exp, ok := ev.Object.(*perfexpv1alpha1.PerfExperiment); ok && (ev.Type == watch.Added || ev.Type == watch.Modified) {
				mu.Lock()
				seen[exp.Name] = append(seen[exp.Name], *exp.DeepCopy())
				mu.Unlock()
			}
		}
	}()
	return func() map[string][]perfexpv1alpha1.PerfExperiment {
		mu.Lock()
		defer mu.Unlock()
		out := make(map[string][]perfexpv1alpha1.PerfExperiment, len(seen))
		for k, v := range seen {
			out[k] = slices.Clone(v)
		}
		return out
	}
}

// expectPositions waits until running holds the queue and the waiting experiments have the
// given order as their queue positions (1 = next).
func expectPositions(t *testing.T, c client.Client, ns, running string, waiting []string) {
	t.Helper()
	eventually(t, 30*time.Second, fmt.Sprintf("queue positions %v behind %s", waiting, running), func() error {
		r := get(t, c, ns, running)
		if r == nil || r.Status.Phase != perfexpv1alpha1.PhaseRunning || r.Status.QueuePosition != 0 {
			return fmt.Errorf("%s is not running at position 0", running)
		}
		for i, name := range waiting {
			exp := get(t, c, ns, name)
			if exp == nil {
				return fmt.Errorf("%s is gone", name)
			}
			if exp.Status.Phase != perfexpv1alpha1.PhaseQueued || exp.Status.QueuePosition != int32(i+1) {
				return fmt.Errorf("%s: phase %s position %d, want Queued at %d", name, exp.Status.Phase, exp.Status.QueuePosition, i+1)
			}
			if c := condition(exp, perfexpv1alpha1.ConditionQueued); c == nil || c.Status != metav1.ConditionTrue {
				return fmt.Errorf("%s: Queued condition %v", name, c)
			}
		}
		return nil
	})
}

func mustCreate(t *testing.T, c client.Client, obj client.Object) {
	t.Helper()
	if err := c.Create(t.Context(), obj); err != nil {
		t.Fatal(err)
	}
}

// queuedHolder creates an experiment that is Queued at position 1 while the queue's Lease names
// it as the holder: the state a crash leaves between taking the lock and saying so.
func queuedHolder(t *testing.T, c client.Client, ns, name, queueName string) *perfexpv1alpha1.PerfExperiment {
	t.Helper()
	exp := experiment(ns, name, queueName, 0)
	mustCreate(t, c, exp)
	exp.Status.Phase = perfexpv1alpha1.PhaseQueued
	exp.Status.QueuePosition = 1
	if err := c.Status().Update(t.Context(), exp); err != nil {
		t.Fatal(err)
	}
	writeLease(t, c, queueName, exp)
	return exp
}

// writeLease makes the queue's Lease name exp as its holder, as the operator's Lock does.
func writeLease(t *testing.T, c client.Client, queueName string, exp *perfexpv1alpha1.PerfExperiment) {
	t.Helper()
	l := &queue.Lock{Client: c, Namespace: leaseNamespace, Clock: clock.RealClock{}}
	gone := func(context.Context, queue.Holder) (bool, error) { return false, nil }
	ok, err := l.TryAcquire(t.Context(), queueName, exp.UID, exp.Namespace+"/"+exp.Name, gone)
	if err != nil || !ok {
		t.Fatalf("writing the Lease of %s for %s: %v %v", queueName, exp.Name, ok, err)
	}
}
