package controllers_test

import (
	"fmt"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"
	"sigs.k8s.io/controller-runtime/pkg/client"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/testenv"
)

// Story: a sweep with failOnRegression whose arm is clearly slower ends with verdict Fail, and
// kstatus (the real library, as Flux reads it) says Failed; a spec.abort set after it
// Succeeded changes nothing but is acknowledged and said to be refused. Both fail on the old
// code: no verdict, kstatus Current; the abort turned the Succeeded sweep into Aborted.
func TestSweepGate(t *testing.T) {
	env := testenv.Start(t)
	env.Namespace(t, leaseNamespace)
	c := env.Client
	ns := env.Namespace(t, "sweep-gate")
	lab := newLab()
	startSweepOperator(t, env, lab)

	// The arm's runs take twice the baseline's p95 in every repeat.
	for i, p95 := range []float64{100, 102, 101} {
		mustCreate(t, c, runReport(t, ns, fmt.Sprintf("gate-baseline-%d", i+1), p95))
		mustCreate(t, c, runReport(t, ns, fmt.Sprintf("gate-pool-50-%d", i+1), 2*p95))
	}
	sw := newTestSweep(ns, "gate", 3, "50")
	yes := true
	sw.Spec.Template.Analysis = &perfexpv1alpha1.Analysis{FailOnRegression: &yes}
	mustCreate(t, c, sw)
	eventually(t, 30*time.Second, "6 runs exist", func() error {
		if n := len(runsOf(t, c, ns)); n != 6 {
			return fmt.Errorf("%d runs", n)
		}
		return nil
	})
	for name := range runsOf(t, c, ns) {
		lab.finishLoad(name)
	}
	done := waitSweepPhase(t, c, ns, "gate", perfexpv1alpha1.SweepSucceeded)
	if len(done.Status.Arms) != 2 || done.Status.Arms[1].Change != perfexpv1alpha1.ChangeRegressed {
		t.Fatalf("arms %+v, want pool-50 Regressed", done.Status.Arms)
	}
	if done.Status.Verdict != perfexpv1alpha1.VerdictFail {
		t.Errorf("verdict %q, want Fail: an arm Regressed under failOnRegression", done.Status.Verdict)
	}
	if got, msg := kstatusOf(t, done); got != status.FailedStatus {
		t.Errorf("kstatus %s (%s), want Failed", got, msg)
	}

	generation := done.Generation
	// A merge patch without a resourceVersion, as kubectl patch sends: it never conflicts with
	// the operator's status writes.
	s := getSweep(t, c, ns, "gate")
	if err := c.Patch(t.Context(), s, client.RawPatch(types.MergePatchType, []byte(`{"spec":{"abort":true}}`))); err != nil {
		t.Fatal(err)
	}
	var after *perfexpv1alpha1.PerfSweep
	eventually(t, 30*time.Second, "the abort's generation is observed", func() error {
		after = getSweep(t, c, ns, "gate")
		if after.Generation <= generation || after.Status.ObservedGeneration != after.Generation {
			return fmt.Errorf("observedGeneration %d, generation %d", after.Status.ObservedGeneration, after.Generation)
		}
		return nil
	})
	if after.Status.Phase != perfexpv1alpha1.SweepSucceeded || after.Status.Verdict != perfexpv1alpha1.VerdictFail {
		t.Errorf("phase %s verdict %s after the abort, want Succeeded and Fail as before", after.Status.Phase, after.Status.Verdict)
	}
	cond := meta.FindStatusCondition(after.Status.Conditions, perfexpv1alpha1.ConditionSpecChangeRefused)
	if cond == nil || cond.Status != metav1.ConditionTrue || cond.Reason != perfexpv1alpha1.ReasonExperimentEnded {
		t.Errorf("SpecChangeRefused %+v", cond)
	}
}
