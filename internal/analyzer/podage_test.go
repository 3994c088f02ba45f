package analyzer

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
)

// The settle reported is the time from the rollout's end (or, when nothing rolled, from the
// start of Preparing) to the end of Preparing.
func TestPodAgeOfAnExperiment(t *testing.T) {
	t0 := time.Date(2026, 12, 2, 5, 0, 0, 0, time.UTC)
	at := func(s int) metav1.Time { return metav1.NewTime(t0.Add(time.Duration(s) * time.Second)) }
	exp := &perfexpv1alpha1.PerfExperiment{}
	exp.Spec.FreshPods = &perfexpv1alpha1.FreshPods{Workloads: []perfexpv1alpha1.WorkloadSelector{{Names: []string{"web"}}}}
	exp.Spec.Settle = &metav1.Duration{Duration: 30 * time.Second}
	exp.Status.PhaseHistory = []perfexpv1alpha1.PhaseTransition{
		{Phase: perfexpv1alpha1.PhasePreparing, Time: at(0)},
		{Phase: perfexpv1alpha1.PhaseWarmingUp, Time: at(75)},
	}
	rolled := at(44)
	exp.Status.Environment = &perfexpv1alpha1.EnvironmentStatus{RolledOutAt: &rolled}
	p := podAgeOf(exp)
	if p.FreshPods != 1 || !p.RolledOutAt.Equal(rolled.Time) || p.Settle != 30*time.Second || p.Settled != 31*time.Second {
		t.Fatalf("%+v; want 1 selector, rolled at +44 s, settle 30 s, settled 31 s", p)
	}
	exp.Status.Environment = nil
	if p := podAgeOf(exp); !p.RolledOutAt.IsZero() || p.Settled != 75*time.Second {
		t.Fatalf("nothing rolled: %+v; want the settle counted from Preparing's start (75 s)", p)
	}
}
