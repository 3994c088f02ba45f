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

// NoMeaningfulChange across the arms of a sweep is held as a family: with every arm of the
// sequential default (4 arms, per-arm stopping) at exactly +δ and one arm's sd 1.5x the
// others', "some arm reads NoMeaningfulChange" stays within 5 % (plus two standard errors of
// the simulation); each arm's own equivalence test let it reach 11 % (docs/comparison.md,
// "Sweeps under real noise").
func TestNoMeaningfulChangeAtDeltaFamilyWise(t *testing.T) {
	c := sweepNoiseCells()[3]
	rng := rand.New(rand.NewPCG(35, 3))
	st := stats.Stopping{First: sequentialFirstLook, Max: sequentialBudget}
	delta := 1 + DefaultMinChangePercent/100
	const n = 300
	nmc, claims := 0, 0
	for i := range n {
		o := c.drawSweep(rng, i, []float64{delta, delta, delta, delta}, st.Max).perArm(st, false)
		claims += int(b2f(anyClaim(o.comparisons...)))
		for _, cmp := range o.comparisons {
			if cmp.Change == perfexpv1alpha1.ChangeNoMeaningfulChange {
				nmc++
				break
			}
		}
	}
	t.Logf("%s, every arm at +δ: some arm NoMeaningfulChange in %d of %d sweeps, some arm claimed in %d", c.name, nmc, n, claims)
	if l := simLimit(n); float64(nmc)/n > l || float64(claims)/n > l {
		t.Errorf("NoMeaningfulChange at +δ %.1f %%, claims %.1f %% (limit %.1f %%)", 100*float64(nmc)/n, 100*float64(claims)/n, 100*l)
	}
}
