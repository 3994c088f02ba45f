package metrics

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
)

// The series the dashboards read: the verdict of ended experiments, the sweep runs' test ids,
// and a queue's counters and histograms written at zero from its first experiment on (so
// increase() over a range counts their first observation).
func TestDashboardSeries(t *testing.T) {
	ended := exp("ended", []perfexpv1alpha1.Phase{perfexpv1alpha1.PhaseSucceeded}, []int{0})
	ended.Status.Verdict = perfexpv1alpha1.VerdictFail
	failedEarly := exp("failed-early", []perfexpv1alpha1.Phase{perfexpv1alpha1.PhaseFailed}, []int{0})
	arm := exp("pool-v1-2", []perfexpv1alpha1.Phase{perfexpv1alpha1.PhaseRunning}, []int{0})
	arm.Labels = map[string]string{perfexpv1alpha1.LabelSweep: "pool", perfexpv1alpha1.LabelArm: "v1", perfexpv1alpha1.LabelRepeat: "2"}
	queued := exp("queued", []perfexpv1alpha1.Phase{perfexpv1alpha1.PhaseQueued}, []int{0})

	r := New()
	for _, e := range []*perfexpv1alpha1.PerfExperiment{ended, failedEarly, arm} {
		r.Record(e, e, "env-a")
	}
	r.Record(queued, queued, "env-b")
	want := `
# HELP perfexp_experiment_verdict 1 for every ended experiment with a verdict, until it is deleted; for dashboards listing recent results.
# TYPE perfexp_experiment_verdict gauge
perfexp_experiment_verdict{name="ended",namespace="team",phase="Succeeded",queue="env-a",testid="team-ended",variant="no CPU limits",verdict="Fail"} 1
# HELP perfexp_sweep_run_info 1 for every experiment of a sweep once it has a test id, until it is deleted; joins a sweep's arms to their k6 samples.
# TYPE perfexp_sweep_run_info gauge
perfexp_sweep_run_info{arm="v1",name="pool-v1-2",namespace="team",repeat="2",sweep="pool",testid="team-pool-v1-2"} 1
# HELP perfexp_restores_total Environment restores finished, by result (restored: EnvironmentRestored True; failed: otherwise).
# TYPE perfexp_restores_total counter
perfexp_restores_total{queue="env-a",result="failed"} 0
perfexp_restores_total{queue="env-a",result="restored"} 0
perfexp_restores_total{queue="env-b",result="failed"} 0
perfexp_restores_total{queue="env-b",result="restored"} 0
`
	if err := testutil.CollectAndCompare(r, strings.NewReader(want), "perfexp_experiment_verdict", "perfexp_sweep_run_info", "perfexp_restores_total"); err != nil {
		t.Error(err)
	}
	if n := testutil.CollectAndCount(r, "perfexp_queue_wait_seconds"); n != 2 {
		t.Errorf("%d queue-wait histograms, want one per queue at zero", n)
	}
}
