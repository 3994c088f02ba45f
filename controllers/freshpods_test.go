package controllers_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/testenv"
	"github.com/perfexp/perfexp/internal/variant"
)

// restartedAt is the restart annotation of a Deployment's pod template.
func restartedAt(t *testing.T, c client.Client, ns, name string) string {
	t.Helper()
	d := &appsv1.Deployment{}
	if err := c.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: name}, d); err != nil {
		t.Fatal(err)
	}
	return d.Spec.Template.Annotations[perfexpv1alpha1.AnnotationRestartedAt]
}

// phaseEntered is when the experiment last entered the phase (zero when it did not).
func phaseEntered(exp *perfexpv1alpha1.PerfExperiment, p perfexpv1alpha1.Phase) time.Time {
	var at time.Time
	for _, h := range exp.Status.PhaseHistory {
		if h.Phase == p {
			at = h.Time.Time
		}
	}
	return at
}

// A baseline run's workloads are rolled before its load, as a variant's are, and put back
// exactly after it: standalone with spec.freshPods and spec.settle, and in a sweep by default
// (podAge: Equal), where the baseline run rolls the workload the arm changes.
func TestBaselineRunsOnFreshPods(t *testing.T) {
	env := testenv.Start(t)
	env.Namespace(t, leaseNamespace)
	c := env.Client
	lab := newLab()
	startSweepOperatorWith(t, env, variant.New(c, variant.Options{OperatorNamespaces: []string{leaseNamespace}}), lab)

	t.Run("standalone baseline with freshPods and a settle", func(t *testing.T) {
		ns := env.Namespace(t, "fresh-standalone")
		for _, o := range environmentObjects(ns) {
			mustCreate(t, c, o)
		}
		ctx, stop := context.WithCancel(t.Context())
		defer stop()
		go playRolloutController(ctx, c, []string{ns})
		before := environmentState(t, c, ns)

		exp := experiment(ns, "baseline", ns, 0)
		exp.Spec.FreshPods = &perfexpv1alpha1.FreshPods{Workloads: []perfexpv1alpha1.WorkloadSelector{{Names: []string{"web"}}}}
		exp.Spec.Settle = &metav1.Duration{Duration: 3 * time.Second}
		mustCreate(t, c, exp)
		running := waitPhase(t, c, ns, "baseline", perfexpv1alpha1.PhaseRunning)
		if got := restartedAt(t, c, ns, "web"); got != string(running.UID) {
			t.Fatalf("web's pod template has %s=%q while the baseline's load runs; want its UID %q (rolled before the load)", perfexpv1alpha1.AnnotationRestartedAt, got, running.UID)
		}
		if got := restartedAt(t, c, ns, "api"); got != "" {
			t.Fatalf("api, which freshPods does not name, was rolled: %q", got)
		}
		env := running.Status.Environment
		if env == nil || env.RolledOutAt == nil {
			t.Fatalf("no rolledOutAt in %+v", env)
		}
		// metav1.Time is kept to the second: allow one second of rounding.
		if waited := phaseEntered(running, perfexpv1alpha1.PhaseRunning).Sub(env.RolledOutAt.Time); waited < 2*time.Second {
			t.Fatalf("the load began %s after the rollout finished; want the 3s settle", waited)
		}
		lab.finishLoad("baseline")
		waitPhase(t, c, ns, "baseline", perfexpv1alpha1.PhaseSucceeded)
		if after := environmentState(t, c, ns); after != before {
			t.Fatalf("the environment differs after the run:\nbefore %s\nafter  %s", before, after)
		}
	})

	t.Run("a sweep's baseline run rolls the workload its arm changes", func(t *testing.T) {
		ns := env.Namespace(t, "fresh-sweep")
		for _, o := range environmentObjects(ns) {
			mustCreate(t, c, o)
		}
		ctx, stop := context.WithCancel(t.Context())
		defer stop()
		go playRolloutController(ctx, c, []string{ns})
		before := environmentState(t, c, ns)

		s := &perfexpv1alpha1.PerfSweep{}
		s.Namespace, s.Name = ns, "pool"
		s.Spec.Queue = ns
		s.Spec.Repeats = 1
		s.Spec.Order = perfexpv1alpha1.SweepOrderInterleaved
		s.Spec.Template.Load = experiment(ns, "template", ns, 0).Spec.Load
		s.Spec.Template.Settle = &metav1.Duration{Duration: time.Second}
		s.Spec.Arms = []perfexpv1alpha1.SweepArm{{Name: "pool-50", Variant: &perfexpv1alpha1.Variant{Workloads: []perfexpv1alpha1.WorkloadChange{{
			WorkloadSelector: perfexpv1alpha1.WorkloadSelector{Names: []string{"web"}},
			Env:              &perfexpv1alpha1.EnvChange{Set: []perfexpv1alpha1.EnvVar{{Name: "HTTP_MAXPOOLSIZE", Value: "50"}}},
		}}}}}
		mustCreate(t, c, s)
		base := "pool-" + perfexpv1alpha1.BaselineArm + "-1"
		running := waitPhase(t, c, ns, base, perfexpv1alpha1.PhaseRunning)
		if running.Spec.Variant != nil || running.Spec.FreshPods == nil {
			t.Fatalf("the baseline run has variant %+v and freshPods %+v; want freshPods only", running.Spec.Variant, running.Spec.FreshPods)
		}
		if got := restartedAt(t, c, ns, "web"); got != string(running.UID) {
			t.Fatalf("web's pod template has %s=%q during the baseline's load; want the baseline run's UID %q", perfexpv1alpha1.AnnotationRestartedAt, got, running.UID)
		}
		lab.finishLoad(base)
		waitPhase(t, c, ns, base, perfexpv1alpha1.PhaseSucceeded)
		arm := waitPhase(t, c, ns, "pool-pool-50-1", perfexpv1alpha1.PhaseRunning)
		if got := restartedAt(t, c, ns, "web"); got != string(arm.UID) {
			t.Fatalf("web's restart annotation is %q during the arm's load; want the arm run's UID", got)
		}
		lab.finishLoad("pool-pool-50-1")
		eventually(t, 60*time.Second, "the arm run ends", func() error {
			if p := get(t, c, ns, "pool-pool-50-1").Status.Phase; p != perfexpv1alpha1.PhaseSucceeded && p != perfexpv1alpha1.PhaseFailed {
				return fmt.Errorf("phase %s", p)
			}
			return nil
		})
		if after := environmentState(t, c, ns); after != before {
			t.Fatalf("the environment differs after the sweep's runs:\nbefore %s\nafter  %s", before, after)
		}
	})
}
