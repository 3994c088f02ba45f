package controllers_test

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/controllers"
	"github.com/perfexp/perfexp/internal/step"
	"github.com/perfexp/perfexp/internal/testenv"
)

func TestLifecycle(t *testing.T) {
	env := testenv.Start(t)
	env.Namespace(t, leaseNamespace)
	c := env.Client

	t.Run("a successful run passes through every phase and restores before analysing", func(t *testing.T) {
		ns := env.Namespace(t, "happy")
		lab := newLab()
		startOperator(t, env, lab)
		exp := experiment(ns, "run", "happy", 0)
		exp.Spec.Setup = &perfexpv1alpha1.Setup{Image: "busybox"}
		exp.Spec.Load.WarmUp = &perfexpv1alpha1.WarmUp{VUs: 1, Duration: metav1.Duration{Duration: time.Minute}}
		mustCreate(t, c, exp)
		lab.finishLoad("run")
		got := waitPhase(t, c, ns, "run", perfexpv1alpha1.PhaseSucceeded)

		var phases []perfexpv1alpha1.Phase
		for _, h := range got.Status.PhaseHistory {
			phases = append(phases, h.Phase)
		}
		want := []perfexpv1alpha1.Phase{"Queued", "Preparing", "SettingUp", "WarmingUp", "Running", "Restoring", "Analyzing", "Succeeded"}
		if !equalPhases(phases, want) {
			t.Errorf("phases %v, want %v", phases, want)
		}
		if got.Status.TestID == "" || !strings.HasPrefix(got.Status.TestID, "run-") {
			t.Errorf("testID %q", got.Status.TestID)
		}
		for _, typ := range []string{perfexpv1alpha1.ConditionReady, perfexpv1alpha1.ConditionEnvironmentReady,
			perfexpv1alpha1.ConditionLoadCompleted, perfexpv1alpha1.ConditionEnvironmentRestored, perfexpv1alpha1.ConditionAnalyzed} {
			cond := condition(got, typ)
			if cond == nil || cond.Status != metav1.ConditionTrue || cond.ObservedGeneration != got.Generation {
				t.Errorf("condition %s = %+v, want True at generation %d", typ, cond, got.Generation)
			}
		}
		if got.Status.Verdict != perfexpv1alpha1.VerdictPass || got.Status.CompletionTime == nil {
			t.Errorf("verdict %q completion %v", got.Status.Verdict, got.Status.CompletionTime)
		}
		if lab.restores("run") == 0 {
			t.Error("the environment was not restored")
		}
	})

	t.Run("abort while running stops load, restores and ends as Aborted", func(t *testing.T) {
		ns := env.Namespace(t, "abort-running")
		lab := newLab()
		startOperator(t, env, lab)
		mustCreate(t, c, experiment(ns, "run", "abort-running", 0))
		abort(t, c, waitPhase(t, c, ns, "run", perfexpv1alpha1.PhaseRunning))
		got := waitPhase(t, c, ns, "run", perfexpv1alpha1.PhaseAborted)
		if lab.restores("run") == 0 {
			t.Error("aborting did not restore the environment")
		}
		if cond := condition(got, perfexpv1alpha1.ConditionReady); cond == nil || cond.Reason != perfexpv1alpha1.ReasonAborted {
			t.Errorf("Ready condition %+v, want reason Aborted", cond)
		}
	})

	t.Run("abort while queued ends at once without touching the environment", func(t *testing.T) {
		ns := env.Namespace(t, "abort-queued")
		lab := newLab()
		startOperator(t, env, lab)
		mustCreate(t, c, experiment(ns, "holder", "abort-queued", 0))
		waitPhase(t, c, ns, "holder", perfexpv1alpha1.PhaseRunning)
		mustCreate(t, c, experiment(ns, "waiter", "abort-queued", 0))
		abort(t, c, waitPhase(t, c, ns, "waiter", perfexpv1alpha1.PhaseQueued))
		waitPhase(t, c, ns, "waiter", perfexpv1alpha1.PhaseAborted)
		for _, name := range lab.order() {
			if name == "waiter" {
				t.Error("an experiment aborted in the queue touched the environment")
			}
		}
	})

	t.Run("a failed rollout fails the experiment after restoring", func(t *testing.T) {
		ns := env.Namespace(t, "rollout-failed")
		lab := newLab()
		fail := step.Fail(perfexpv1alpha1.ReasonRolloutFailed, "deployment circulation: pod crash-looping")
		lab.script("run", &fail, nil)
		startOperator(t, env, lab)
		mustCreate(t, c, experiment(ns, "run", "rollout-failed", 0))
		got := waitPhase(t, c, ns, "run", perfexpv1alpha1.PhaseFailed)
		ready := condition(got, perfexpv1alpha1.ConditionReady)
		if ready == nil || ready.Reason != perfexpv1alpha1.ReasonRolloutFailed || !strings.Contains(ready.Message, "crash-looping") {
			t.Errorf("Ready condition %+v, want the rollout failure", ready)
		}
		if cond := condition(got, perfexpv1alpha1.ConditionEnvironmentRestored); cond == nil || cond.Status != metav1.ConditionTrue {
			t.Errorf("EnvironmentRestored %+v, want True", cond)
		}
		if lab.restores("run") == 0 {
			t.Error("the failed experiment's environment was not restored")
		}
	})

	t.Run("a rollout that never finishes times out, then restores", func(t *testing.T) {
		ns := env.Namespace(t, "rollout-timeout")
		lab := newLab()
		wait := step.Wait(100*time.Millisecond, "deployment circulation: 1 of 2 updated replicas available")
		lab.script("run", &wait, nil)
		startOperator(t, env, lab)
		exp := experiment(ns, "run", "rollout-timeout", 0)
		exp.Spec.Timeouts = &perfexpv1alpha1.Timeouts{Rollout: &metav1.Duration{Duration: 2 * time.Second}}
		mustCreate(t, c, exp)
		got := waitPhase(t, c, ns, "run", perfexpv1alpha1.PhaseFailed)
		ready := condition(got, perfexpv1alpha1.ConditionReady)
		if ready == nil || ready.Reason != perfexpv1alpha1.ReasonRolloutTimedOut || !strings.Contains(ready.Message, "1 of 2 updated replicas") {
			t.Errorf("Ready condition %+v, want a rollout timeout naming what it waited for", ready)
		}
		if lab.restores("run") == 0 {
			t.Error("the timed-out experiment's environment was not restored")
		}
	})

	t.Run("thresholds crossed are recorded and the run is still analysed", func(t *testing.T) {
		ns := env.Namespace(t, "thresholds")
		lab := newLab()
		startOperator(t, env, lab)
		lab.crossed["run"] = true
		lab.finishLoad("run")
		mustCreate(t, c, experiment(ns, "run", "thresholds", 0))
		got := waitPhase(t, c, ns, "run", perfexpv1alpha1.PhaseSucceeded)
		if cond := condition(got, perfexpv1alpha1.ConditionThresholdsCrossed); cond == nil || cond.Status != metav1.ConditionTrue {
			t.Errorf("ThresholdsCrossed %+v, want True", cond)
		}
		if cond := condition(got, perfexpv1alpha1.ConditionAnalyzed); cond == nil || cond.Status != metav1.ConditionTrue {
			t.Errorf("Analyzed %+v, want True: crossed thresholds do not skip analysis", cond)
		}
	})

	t.Run("collaborators that are not built fail the experiment with a clear reason", func(t *testing.T) {
		ns := env.Namespace(t, "not-implemented")
		startOperatorWith(t, env, controllers.NotImplementedEnvironment{}, controllers.NotImplementedLoad{}, controllers.NotImplementedAnalyzer{})
		mustCreate(t, c, experiment(ns, "run", "not-implemented", 0))
		got := waitPhase(t, c, ns, "run", perfexpv1alpha1.PhaseFailed)
		ready := condition(got, perfexpv1alpha1.ConditionReady)
		if ready == nil || ready.Reason != perfexpv1alpha1.ReasonNotImplemented || ready.Message != "load runner not implemented" {
			t.Errorf("Ready condition %+v, want NotImplemented: load runner not implemented", ready)
		}
		if got.Status.Verdict != "" {
			t.Errorf("verdict %q on a run that never ran", got.Status.Verdict)
		}
	})
}

// abort sets spec.abort the way `kubectl patch --type merge` does, without a resourceVersion,
// so it never conflicts with the operator's status writes.
func abort(t *testing.T, c client.Client, exp *perfexpv1alpha1.PerfExperiment) {
	t.Helper()
	patch := client.RawPatch(types.MergePatchType, []byte(`{"spec":{"abort":true}}`))
	if err := c.Patch(t.Context(), exp, patch); err != nil {
		t.Fatal(err)
	}
}

func equalPhases(a, b []perfexpv1alpha1.Phase) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
