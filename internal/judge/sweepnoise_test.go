package judge

import (
	"fmt"
	"math/rand/v2"
	"testing"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/judge/stats"
	"github.com/perfexp/perfexp/internal/result"
)

// An arm left with one valid run per side inside a sequential look is judged at the look's
// level, not at 95 %: simulated at a true change of +9.2 % (its other runs failed), the first
// look's 99.8 % claims far less often than 95 % would, and its interval is drawn there.
func TestOneValidRunPerSideAtTheLooksLevel(t *testing.T) {
	rng := rand.New(rand.NewPCG(35, 4))
	look := stats.Stopping{First: sequentialFirstLook, Max: sequentialBudget}.LookAt(sequentialFirstLook)
	cal := &BetweenRun{SDPercent: 1, Runs: 30, Source: "test"}
	const n = 300
	claims95, claimsLook, wider := 0, 0, 0
	for i := range n {
		s := defaultSim
		s.betweenCV = 0.01
		var base, cur []*result.Result
		for r := range 3 {
			b := s.run(rng, fmt.Sprintf("b%d-%d", i, r), 1)
			c := s.run(rng, fmt.Sprintf("c%d-%d", i, r), 1.05*1.04)
			if r > 0 {
				b.Validity, c.Validity = perfexpv1alpha1.Invalid, perfexpv1alpha1.Invalid
			}
			base, cur = append(base, b), append(cur, c)
		}
		at95 := CompareRuns(base, cur, CompareOptions{BetweenRun: cal})
		atLook := CompareRuns(base, cur, CompareOptions{BetweenRun: cal, Look: &look})
		claims95 += int(b2f(claimed(at95)))
		claimsLook += int(b2f(claimed(atLook)))
		m95, ml := p95Row(at95), p95Row(atLook)
		if m95 != nil && ml != nil && m95.Low != nil && ml.Low != nil && *ml.High-*ml.Low > 1.3*(*m95.High-*m95.Low) {
			wider++
		}
	}
	t.Logf("one valid run per side, +9.2 %%: claimed in %d of %d at 95 %%, %d at the first look's %.1f %%; interval wider at the look in %d", claims95, n, claimsLook, 100*(1-look.Alpha()), wider)
	if wider < n*9/10 {
		t.Errorf("the look's interval is wider than the 95 %% one in %d of %d comparisons", wider, n)
	}
	if float64(claimsLook) > 0.5*float64(claims95) || claims95 == 0 {
		t.Errorf("claims at the look's level %d, at 95 %% %d: the look's level is not applied", claimsLook, claims95)
	}
}

// NoMeaningfulChange across the arms of a sweep is held as a family: with every arm at exactly
// +δ, "some arm reads NoMeaningfulChange" stays within 5 % (plus the simulation's error) in
// 4-arm fixed sweeps of 6 repeats and in the sequential default with per-arm stopping, where
// each arm's own test let it reach 8-15 %.
func TestNoMeaningfulChangeAtDeltaFamilyWise(t *testing.T) {
	if testing.Short() {
		t.Skip("simulation")
	}
	for _, tc := range []struct {
		cell   simCell
		design string
		n      int
	}{
		{simCells[3], "fixed r6", 150},
		{simCells[8], "sequential, per-arm stopping", 150},
	} {
		r := simulateSweepNoise(tc.cell, tc.design, tc.n, 35)
		t.Logf("%s, %s: NoMeaningfulChange at +δ (any arm) %.1f %%, claims %.1f %%, power at +15 %% %.0f %%", tc.cell.name, tc.design, 100*r.nmcDelta, 100*r.claimDelta, 100*r.power)
		if l := simLimit(tc.n); r.nmcDelta > l || r.claimDelta > l {
			t.Errorf("%s, %s: NoMeaningfulChange at +δ %.1f %%, claims %.1f %% (limit %.1f %%)", tc.cell.name, tc.design, 100*r.nmcDelta, 100*r.claimDelta, 100*l)
		}
	}
}
