package sweep_test

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/sweep"
)

func TestSummarize(t *testing.T) {
	s := newSweep(withArms(envArm("pool-1", "1"), envArm("pool-10", "10")), withRepeats(2))
	p, err := sweep.NewPlan(s)
	if err != nil {
		t.Fatal(err)
	}
	run := func(name string, phase perfexpv1alpha1.Phase) *perfexpv1alpha1.PerfExperiment {
		e := &perfexpv1alpha1.PerfExperiment{ObjectMeta: metav1.ObjectMeta{Name: name}}
		e.Status.Phase = phase
		return e
	}
	runs := map[string]*perfexpv1alpha1.PerfExperiment{}
	for _, e := range []*perfexpv1alpha1.PerfExperiment{
		run("pool-baseline-1", perfexpv1alpha1.PhaseSucceeded),
		run("pool-pool-1-1", perfexpv1alpha1.PhaseFailed),
		run("pool-pool-10-1", perfexpv1alpha1.PhaseSucceeded),
		run("pool-baseline-2", perfexpv1alpha1.PhaseRunning),
		run("pool-pool-1-2", perfexpv1alpha1.PhaseQueued),
		// pool-pool-10-2 not created yet
	} {
		runs[e.Name] = e
	}
	got := sweep.Summarize(p, runs)
	if got.Total != 6 || got.Created != 5 || got.Done != 3 || got.Failed != 1 || got.AllEnded() {
		t.Errorf("total %d created %d done %d failed %d all ended %v, want 6 5 3 1 false", got.Total, got.Created, got.Done, got.Failed, got.AllEnded())
	}
	if got.CurrentArm != "baseline" || got.CurrentExperiment != "pool-baseline-2" {
		t.Errorf("current %s/%s, want the running baseline run", got.CurrentArm, got.CurrentExperiment)
	}
	want := map[string][3]int32{"baseline": {2, 1, 0}, "pool-1": {2, 0, 1}, "pool-10": {2, 1, 0}}
	for _, a := range got.Arms {
		if w := want[a.Name]; [3]int32{a.Runs, a.Succeeded, a.Failed} != w {
			t.Errorf("arm %s runs/succeeded/failed %d/%d/%d, want %v", a.Name, a.Runs, a.Succeeded, a.Failed, w)
		}
	}

	runs["pool-baseline-2"].Status.Phase = perfexpv1alpha1.PhaseSucceeded
	runs["pool-pool-1-2"].Status.Phase = perfexpv1alpha1.PhaseAborted
	runs["pool-pool-10-2"] = run("pool-pool-10-2", perfexpv1alpha1.PhaseSucceeded)
	if got := sweep.Summarize(p, runs); !got.AllEnded() || got.Failed != 2 || got.CurrentArm != "" {
		t.Errorf("after every run ended: %+v", got)
	}
}
