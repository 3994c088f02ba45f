package controllers_test

import (
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"
	"sigs.k8s.io/controller-runtime/pkg/client"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/testenv"
)

// kstatusOf is what kstatus (sigs.k8s.io/cli-utils, as Flux and kpt use it) says of a live
// object.
func kstatusOf(t *testing.T, obj client.Object) (status.Status, string) {
	t.Helper()
	content, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		t.Fatal(err)
	}
	res, err := status.Compute(&unstructured.Unstructured{Object: content})
	if err != nil {
		t.Fatal(err)
	}
	return res.Status, res.Message
}

// TestEveryGenerationObserved: an experiment that has ended still acknowledges every change of
// its spec, so kstatus and Argo CD never read it as in progress again; a change it will not act
// on (spec.abort after Succeeded) says why in a condition. Before this, the reconciler returned
// early for ended experiments and skipped the unchanged status write, and kstatus read the
// experiment InProgress for ever.
func TestEveryGenerationObserved(t *testing.T) {
	env := testenv.Start(t)
	env.Namespace(t, leaseNamespace)
	c := env.Client
	ns := env.Namespace(t, "generations")

	// Before the operator's first status write there is neither a status.observedGeneration
	// nor a condition: kstatus reads such an object as Current (docs/gitops.md says so).
	mustCreate(t, c, experiment(ns, "run", "generations", 0))
	if got, msg := kstatusOf(t, get(t, c, ns, "run")); got != status.CurrentStatus {
		t.Errorf("before the first status write kstatus says %s (%s); docs/gitops.md says Current", got, msg)
	}

	lab := newLab()
	startOperator(t, env, lab)
	running := waitPhase(t, c, ns, "run", perfexpv1alpha1.PhaseRunning)
	if got, _ := kstatusOf(t, running); got != status.InProgressStatus {
		t.Errorf("a running experiment reads %s, want InProgress", got)
	}
	lab.finishLoad("run")
	done := waitPhase(t, c, ns, "run", perfexpv1alpha1.PhaseSucceeded)
	if got, msg := kstatusOf(t, done); got != status.CurrentStatus {
		t.Fatalf("a Succeeded Pass experiment reads %s (%s), want Current", got, msg)
	}

	doneGeneration := done.Generation
	abort(t, c, done)
	var after *perfexpv1alpha1.PerfExperiment
	eventually(t, 30*time.Second, "the abort's generation is observed", func() error {
		after = get(t, c, ns, "run")
		if after.Generation <= doneGeneration {
			return fmt.Errorf("generation %d did not move", after.Generation)
		}
		if after.Status.ObservedGeneration != after.Generation {
			return fmt.Errorf("observedGeneration %d, generation %d", after.Status.ObservedGeneration, after.Generation)
		}
		return nil
	})
	if got, msg := kstatusOf(t, after); got != status.CurrentStatus {
		t.Errorf("after spec.abort on a Succeeded experiment kstatus says %s (%s), want Current", got, msg)
	}
	if after.Status.Phase != perfexpv1alpha1.PhaseSucceeded || after.Status.Verdict != perfexpv1alpha1.VerdictPass {
		t.Errorf("the results changed: phase %s verdict %s", after.Status.Phase, after.Status.Verdict)
	}
	cond := condition(after, perfexpv1alpha1.ConditionSpecChangeRefused)
	if cond == nil || cond.Status != metav1.ConditionTrue || cond.Reason != perfexpv1alpha1.ReasonExperimentEnded || cond.ObservedGeneration != after.Generation {
		t.Errorf("SpecChangeRefused condition %+v, want True/ExperimentEnded at generation %d", cond, after.Generation)
	}
	if lab.restores("run") != 1 {
		t.Errorf("the environment was restored %d times, want once (before the end)", lab.restores("run"))
	}
}
