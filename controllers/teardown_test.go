package controllers_test

import (
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/step"
	"github.com/perfexp/perfexp/internal/testenv"
)

// spec.teardown runs on every path once the load may have begun, after the workloads are
// restored and before the queue is released; a failing or hanging teardown is reported and
// never keeps the environment from being restored or the queue locked.
func TestTeardown(t *testing.T) {
	env := testenv.Start(t)
	env.Namespace(t, leaseNamespace)
	c := env.Client

	withTeardown := func(exp *perfexpv1alpha1.PerfExperiment) *perfexpv1alpha1.PerfExperiment {
		exp.Spec.Teardown = &perfexpv1alpha1.Setup{Image: "perfexp/datagen:1", Args: []string{"--reset"}}
		return exp
	}
	tornDown := func(t *testing.T, ns, name, reason string) *perfexpv1alpha1.PerfExperiment {
		t.Helper()
		var got *perfexpv1alpha1.PerfExperiment
		eventually(t, 30*time.Second, name+" reports its teardown", func() error {
			got = get(t, c, ns, name)
			if cond := condition(got, perfexpv1alpha1.ConditionTornDown); cond == nil || cond.Reason != reason {
				return fmt.Errorf("TornDown condition %+v, want reason %s", cond, reason)
			}
			return nil
		})
		return got
	}

	t.Run("after success: the workloads first, then the teardown, then the next experiment", func(t *testing.T) {
		ns := env.Namespace(t, "teardown-success")
		lab := newLab()
		startOperator(t, env, lab)
		lab.scriptTeardown("a", step.Wait(100*time.Millisecond, "the teardown Job"))
		mustCreate(t, c, withTeardown(experiment(ns, "a", "td-10", 0)))
		mustCreate(t, c, experiment(ns, "b", "td-10", 0))
		waitPhase(t, c, ns, "a", perfexpv1alpha1.PhaseRunning)
		lab.finishLoad("a")
		tornDown(t, ns, "a", perfexpv1alpha1.ReasonTearingDown)
		consistently(t, 2*time.Second, "b waits while a's teardown runs", func() error {
			if p := get(t, c, ns, "b").Status.Phase; p != perfexpv1alpha1.PhaseQueued {
				return fmt.Errorf("b is %s", p)
			}
			return nil
		})
		lab.scriptTeardown("a", step.Done())
		got := tornDown(t, ns, "a", perfexpv1alpha1.ReasonTornDown)
		if cond := condition(got, perfexpv1alpha1.ConditionTornDown); cond.Status != metav1.ConditionTrue {
			t.Errorf("TornDown %+v, want True", cond)
		}
		calls, _ := lab.teardownCalls("a")
		if len(calls) == 0 || calls[0] < 1 {
			t.Errorf("teardown calls saw %v restores, want the restore before the first teardown call", calls)
		}
		waitPhase(t, c, ns, "a", perfexpv1alpha1.PhaseSucceeded)
		waitPhase(t, c, ns, "b", perfexpv1alpha1.PhaseRunning)
		lab.finishLoad("b")
		waitPhase(t, c, ns, "b", perfexpv1alpha1.PhaseSucceeded)
		if cond := condition(get(t, c, ns, "b"), perfexpv1alpha1.ConditionTornDown); cond != nil {
			t.Errorf("b has no teardown but reads %+v", cond)
		}
	})

	t.Run("a failing teardown is reported and the experiment still ends as its results say", func(t *testing.T) {
		ns := env.Namespace(t, "teardown-fails")
		lab := newLab()
		startOperator(t, env, lab)
		lab.scriptTeardown("a", step.Fail(perfexpv1alpha1.ReasonTeardownFailed, "teardown Job a-teardown failed: exit 1"))
		mustCreate(t, c, withTeardown(experiment(ns, "a", "td-11", 0)))
		waitPhase(t, c, ns, "a", perfexpv1alpha1.PhaseRunning)
		lab.finishLoad("a")
		got := waitPhase(t, c, ns, "a", perfexpv1alpha1.PhaseSucceeded)
		if cond := condition(got, perfexpv1alpha1.ConditionTornDown); cond == nil || cond.Reason != perfexpv1alpha1.ReasonTeardownFailed || cond.Message != "teardown Job a-teardown failed: exit 1" {
			t.Errorf("TornDown %+v", cond)
		}
		if calls, _ := lab.teardownCalls("a"); len(calls) != 1 {
			t.Errorf("the teardown ran %d times, want once", len(calls))
		}
	})

	t.Run("a hanging teardown is stopped after timeouts.teardown and the queue released", func(t *testing.T) {
		ns := env.Namespace(t, "teardown-hangs")
		lab := newLab()
		startOperator(t, env, lab)
		lab.scriptTeardown("slow", step.Wait(100*time.Millisecond, "the teardown Job"))
		exp := withTeardown(experiment(ns, "slow", "td-12", 0))
		exp.Spec.Timeouts = &perfexpv1alpha1.Timeouts{Teardown: &metav1.Duration{Duration: 2 * time.Second}}
		mustCreate(t, c, exp)
		waitPhase(t, c, ns, "slow", perfexpv1alpha1.PhaseRunning)
		mustCreate(t, c, experiment(ns, "b", "td-12", 0))
		lab.finishLoad("slow")
		tornDown(t, ns, "slow", perfexpv1alpha1.ReasonTeardownTimedOut)
		if _, stopped := lab.teardownCalls("slow"); !stopped {
			t.Error("the teardown Job was not stopped")
		}
		waitPhase(t, c, ns, "b", perfexpv1alpha1.PhaseRunning)
	})

	t.Run("abort and deletion during the load run the teardown too", func(t *testing.T) {
		ns := env.Namespace(t, "teardown-paths")
		lab := newLab()
		startOperator(t, env, lab)
		mustCreate(t, c, withTeardown(experiment(ns, "aborted", "td-1", 0)))
		waitPhase(t, c, ns, "aborted", perfexpv1alpha1.PhaseRunning)
		// Another queue, the same environment: it runs once aborted has given it back.
		mustCreate(t, c, withTeardown(experiment(ns, "deleted", "td-2", 0)))

		abort(t, c, get(t, c, ns, "aborted"))
		got := waitPhase(t, c, ns, "aborted", perfexpv1alpha1.PhaseAborted)
		if cond := condition(got, perfexpv1alpha1.ConditionTornDown); cond == nil || cond.Reason != perfexpv1alpha1.ReasonTornDown {
			t.Errorf("aborted: TornDown %+v", cond)
		}
		waitPhase(t, c, ns, "deleted", perfexpv1alpha1.PhaseRunning)

		if err := c.Delete(t.Context(), get(t, c, ns, "deleted")); err != nil {
			t.Fatal(err)
		}
		eventually(t, 30*time.Second, "the deleted experiment is gone", func() error {
			if get(t, c, ns, "deleted") != nil {
				return fmt.Errorf("still there")
			}
			return nil
		})
		if calls, _ := lab.teardownCalls("deleted"); len(calls) != 1 || calls[0] < 1 {
			t.Errorf("deleted: teardown calls %v, want one after the restore", calls)
		}
	})

	t.Run("an experiment that fails before its load runs no teardown", func(t *testing.T) {
		ns := env.Namespace(t, "teardown-none")
		lab := newLab()
		startOperator(t, env, lab)
		fail := step.Fail(perfexpv1alpha1.ReasonWorkloadNotFound, "no Deployment web")
		lab.script("a", &fail, nil)
		mustCreate(t, c, withTeardown(experiment(ns, "a", "td-14", 0)))
		got := waitPhase(t, c, ns, "a", perfexpv1alpha1.PhaseFailed)
		if cond := condition(got, perfexpv1alpha1.ConditionTornDown); cond != nil {
			t.Errorf("TornDown %+v, want none", cond)
		}
		if calls, _ := lab.teardownCalls("a"); len(calls) != 0 {
			t.Errorf("the teardown ran %d times", len(calls))
		}
	})
}
