package controllers_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/queue"
	"github.com/perfexp/perfexp/internal/step"
	"github.com/perfexp/perfexp/internal/testenv"
)

// finalizerWitness is the lab's environment, which also checks, every time the variant would be
// applied, that the stored experiment already carries the finalizer.
type finalizerWitness struct {
	*lab
	c       client.Client
	mu      sync.Mutex
	without []string // experiments prepared while the stored object had no finalizer
}

func (w *finalizerWitness) Prepare(ctx context.Context, exp *perfexpv1alpha1.PerfExperiment) (step.Result, error) {
	stored := &perfexpv1alpha1.PerfExperiment{}
	if err := w.c.Get(ctx, client.ObjectKeyFromObject(exp), stored); err != nil {
		return step.Result{}, err
	}
	if !controllerutil.ContainsFinalizer(stored, perfexpv1alpha1.Finalizer) {
		w.mu.Lock()
		w.without = append(w.without, exp.Name)
		w.mu.Unlock()
	}
	return w.lab.Prepare(ctx, exp)
}

func (w *finalizerWitness) preparedWithout() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.without)
}

func hasFinalizer(exp *perfexpv1alpha1.PerfExperiment) bool {
	return controllerutil.ContainsFinalizer(exp, perfexpv1alpha1.Finalizer)
}

// deletedAtOnce deletes an experiment and expects it gone without any operator's help.
func deletedAtOnce(t *testing.T, c client.Client, ns, name string) {
	t.Helper()
	if err := c.Delete(t.Context(), &perfexpv1alpha1.PerfExperiment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 5*time.Second, name+" is gone with no operator running", func() error {
		if e := get(t, c, ns, name); e != nil {
			return fmt.Errorf("still there, finalizers %v", e.Finalizers)
		}
		return nil
	})
}

// The finalizer is carried only while the environment may be patched, so deleting a queued or
// finished experiment, its namespace, or uninstalling the operator never waits for the operator.
func TestFinalizerOnlyWhilePatched(t *testing.T) {
	env := testenv.Start(t)
	env.Namespace(t, leaseNamespace)
	c := env.Client

	t.Run("on from taking the lock until restored; queued and finished experiments go without the operator", func(t *testing.T) {
		ns := env.Namespace(t, "fin-life")
		lab := newLab()
		witness := &finalizerWitness{lab: lab, c: c}
		op := startOperatorWith(t, env, witness, lab, lab)

		mustCreate(t, c, experiment(ns, "holder", "fin-life", 0))
		if got := waitPhase(t, c, ns, "holder", perfexpv1alpha1.PhaseRunning); !hasFinalizer(got) {
			t.Errorf("the running holder carries no finalizer: %v", got.Finalizers)
		}
		mustCreate(t, c, experiment(ns, "next", "fin-life", 0))
		mustCreate(t, c, experiment(ns, "queued", "fin-life", 0))
		expectPositions(t, c, ns, "holder", []string{"next", "queued"})
		for _, name := range []string{"next", "queued"} {
			if got := get(t, c, ns, name); hasFinalizer(got) {
				t.Errorf("waiting %s carries the finalizer", name)
			}
		}

		lab.setHoldAnalysis("holder", true)
		lab.finishLoad("holder")
		waitPhase(t, c, ns, "holder", perfexpv1alpha1.PhaseAnalyzing)
		eventually(t, 10*time.Second, "the analysing holder drops its finalizer", func() error {
			if got := get(t, c, ns, "holder"); hasFinalizer(got) {
				return fmt.Errorf("finalizers %v", got.Finalizers)
			}
			return nil
		})
		lab.setHoldAnalysis("holder", false)
		waitPhase(t, c, ns, "holder", perfexpv1alpha1.PhaseSucceeded)
		waitPhase(t, c, ns, "next", perfexpv1alpha1.PhaseRunning)

		op.stop()
		deletedAtOnce(t, c, ns, "queued") // queued
		deletedAtOnce(t, c, ns, "holder") // finished
		if got := get(t, c, ns, "next"); !hasFinalizer(got) {
			t.Errorf("the running next carries no finalizer: %v", got.Finalizers)
		}
		if w := witness.preparedWithout(); len(w) > 0 {
			t.Errorf("the variant was applied to %v while the stored experiment had no finalizer", w)
		}
	})

	t.Run("a crash between taking the lock and adding the finalizer leaves nothing patched or stuck", func(t *testing.T) {
		ns := env.Namespace(t, "fin-crash")
		lab := newLab()
		witness := &finalizerWitness{lab: lab, c: c}

		// The state such a crash leaves: the Lease names the experiment, which has no finalizer
		// and whose status never said it left the queue.
		crashed := experiment(ns, "crashed", "fin-crash", 0)
		mustCreate(t, c, crashed)
		// On another environment, so that it runs beside next.
		resumed := experiment(ns, "resumed", "fin-crash-resume", 0)
		resumed.Spec.TargetNamespace = env.Namespace(t, "fin-crash-resume")
		mustCreate(t, c, resumed)
		for _, e := range []*perfexpv1alpha1.PerfExperiment{crashed, resumed} {
			id := string(e.UID)
			mustCreate(t, c, &coordinationv1.Lease{
				ObjectMeta: metav1.ObjectMeta{Namespace: leaseNamespace, Name: queue.LeaseName(e.Spec.Queue),
					Annotations: map[string]string{queue.AnnotationHolder: e.Namespace + "/" + e.Name}},
				Spec: coordinationv1.LeaseSpec{HolderIdentity: &id},
			})
		}

		// Deleted while no operator runs, it goes at once; the next experiment reclaims the lock.
		deletedAtOnce(t, c, ns, "crashed")
		startOperatorWith(t, env, witness, lab, lab)
		mustCreate(t, c, experiment(ns, "next", "fin-crash", 0))
		waitPhase(t, c, ns, "next", perfexpv1alpha1.PhaseRunning)

		// Left alone, it resumes: finalizer first, then the variant.
		if got := waitPhase(t, c, ns, "resumed", perfexpv1alpha1.PhaseRunning); !hasFinalizer(got) {
			t.Errorf("the resumed experiment runs without the finalizer")
		}
		if got, want := lab.order(), []string{"next", "resumed"}; !sameElements(got, want) {
			t.Errorf("prepared %v, want %v (never the deleted one)", got, want)
		}
		if w := witness.preparedWithout(); len(w) > 0 {
			t.Errorf("the variant was applied to %v while the stored experiment had no finalizer", w)
		}
	})
}

func sameElements(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}
