package sweep_test

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/resource"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/judge"
	"github.com/perfexp/perfexp/internal/sweep"
	"github.com/perfexp/perfexp/internal/testexp"
)

// TestCompareTakesEachArmsHistoryNoise: a sweep of one run per arm judges each arm with the
// between-run noise learned from its histories, as a single experiment's analysis does, unless
// the template sets betweenRun. An arm 1 % slower reads NoMeaningfulChange under a history sd
// of 0.8 % and Inconclusive under the assumed 10 %.
func TestCompareTakesEachArmsHistoryNoise(t *testing.T) {
	segment := judge.SegmentNoise{SS: 7 * 0.008 * 0.008, DF: 7}
	noise := sweep.Noise{"pool-10": {Series: map[string]judge.SegmentNoise{"s/p95": segment, "s/avg": segment}, Histories: []string{"runs-a", "runs-b"}}}
	sd := resource.MustParse("4")
	tests := []struct {
		name      string
		analysis  *perfexpv1alpha1.Analysis
		noise     sweep.Noise
		learns    bool
		wantNoise string
		want      perfexpv1alpha1.Change
	}{
		{"no history: the assumed default", nil, nil, true, "between-run sd 10 % (assumed", perfexpv1alpha1.ChangeInconclusive},
		{"the arm's history", nil, noise, true, "between-run sd from PerfHistory runs-a, runs-b, latest segment (8 runs", perfexpv1alpha1.ChangeNoMeaningfulChange},
		{"an explicit betweenRun wins over the history", &perfexpv1alpha1.Analysis{BetweenRun: &perfexpv1alpha1.BetweenRunNoise{SDPercent: &sd}}, noise, false,
			"between-run sd 4 % (spec.analysis.betweenRun)", perfexpv1alpha1.ChangeInconclusive},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := newSweep(withArms(envArm("pool-10", "10")))
			s.Spec.Template.Analysis = tc.analysis
			if got := sweep.LearnsNoise(s); got != tc.learns {
				t.Errorf("LearnsNoise = %v, want %v", got, tc.learns)
			}
			p, err := sweep.NewPlan(s)
			if err != nil {
				t.Fatal(err)
			}
			outcomes := map[string]sweep.Outcome{
				"pool-baseline-1": {Phase: perfexpv1alpha1.PhaseSucceeded, Result: testexp.RunResult("pool-baseline-1", 50, 7)},
				"pool-pool-10-1":  {Phase: perfexpv1alpha1.PhaseSucceeded, Result: testexp.RunResult("pool-pool-10-1", 50.5, 7)},
			}
			c := sweep.Compare(s, p, outcomes, tc.noise).Arms[1].Comparison
			if c == nil || !strings.HasPrefix(c.Noise, tc.wantNoise) || c.Change != tc.want {
				t.Fatalf("comparison %s, noise %q; want %s, noise %q...", c.Change, c.Noise, tc.want, tc.wantNoise)
			}
		})
	}
}

// TestOneRunArms: the controller reads histories only for arms compared one run against one.
func TestOneRunArms(t *testing.T) {
	ok := sweep.Outcome{Phase: perfexpv1alpha1.PhaseSucceeded, Result: testexp.RunResult("r", 50, 1)}
	failed := sweep.Outcome{Phase: perfexpv1alpha1.PhaseFailed}
	tests := []struct {
		name     string
		outcomes map[string]sweep.Outcome
		want     bool
	}{
		{"two runs each", map[string]sweep.Outcome{"pool-baseline-1": ok, "pool-baseline-2": ok, "pool-pool-10-1": ok, "pool-pool-10-2": ok}, false},
		{"one run each left after failures", map[string]sweep.Outcome{"pool-baseline-1": ok, "pool-baseline-2": failed, "pool-pool-10-1": failed, "pool-pool-10-2": ok}, true},
		{"one run of the arm against two of the baseline", map[string]sweep.Outcome{"pool-baseline-1": ok, "pool-baseline-2": ok, "pool-pool-10-1": ok, "pool-pool-10-2": failed}, false},
		{"a run without results", map[string]sweep.Outcome{"pool-baseline-1": ok, "pool-baseline-2": failed,
			"pool-pool-10-1": {Phase: perfexpv1alpha1.PhaseSucceeded}, "pool-pool-10-2": failed}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, err := sweep.NewPlan(newSweep(withArms(envArm("pool-10", "10")), withRepeats(2)))
			if err != nil {
				t.Fatal(err)
			}
			got := sweep.OneRunArms(p, tc.outcomes)
			if got["pool-10"] != tc.want || got["baseline"] {
				t.Errorf("OneRunArms = %v, want pool-10 %v", got, tc.want)
			}
		})
	}
}
