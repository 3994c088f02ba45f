package judge

import (
	"fmt"
	"math"
	"slices"
	"strings"

	moremath "github.com/aclements/go-moremath/stats"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/judge/stats"
	"github.com/perfexp/perfexp/internal/result"
)

// family returns the primary metrics that take part in the multiplicity control: those with
// a p-value of a meaningful change that could be claimed. A constant (no errors in either
// run) can never be claimed and so spends none of alpha.
func family(cs []*result.Comparison) []*result.MetricComparison {
	var out []*result.MetricComparison
	for _, c := range cs {
		if refused(c) {
			continue
		}
		for i := range c.Metrics {
			mc := &c.Metrics[i]
			if mc.Primary && mc.PBeyond != nil && !mc.Constant {
				out = append(out, mc)
			}
		}
	}
	return out
}

// adjust applies Holm across the primary metrics of the comparisons together, then re-decides
// each comparison's primary rows and headline. One comparison: the family is its primary
// metrics; a sweep: the primary metrics of all its arms.
func adjust(cs []*result.Comparison, a float64) { adjustLevel(cs, func(int) float64 { return a }, 0) }

// adjustLevel is adjust with Holm applied at level(m), m the size of the family: a sequential
// look's level depends on it (stats.Look.AlphaFor). held hypotheses that are not judged here (the
// primary metrics of arms a sequential design decided earlier without a claim) keep their
// share: they count in the family with a p-value of 1.
func adjustLevel(cs []*result.Comparison, level func(m int) float64, held int) {
	fam := family(cs)
	a := level(len(fam) + held)
	ps := make([]float64, len(fam), len(fam)+held)
	for i, mc := range fam {
		ps[i] = *mc.PBeyond
	}
	for range held {
		ps = append(ps, 1)
	}
	adj := stats.Holm(ps)
	desc := fmt.Sprintf("Holm across %d primary %s", len(fam), plural(len(fam), "metric", "metrics"))
	if n := armsCompared(cs); n > 1 {
		desc += fmt.Sprintf(" of %d arms", n)
	}
	if held > 0 {
		desc += fmt.Sprintf(" and the %d of arms decided earlier without a claim", held)
	}
	if len(fam) == 0 {
		desc = "Holm (no primary metric had a change that could be claimed, so nothing to adjust)"
	}
	for i, mc := range fam {
		mc.AdjustedP = result.Num(adj[i])
		mc.Change, mc.Why = mc.Unadjusted, mc.UnadjustedWhy
		mc.ClaimLevel = nil
		claimed := mc.Unadjusted == perfexpv1alpha1.ChangeRegressed || mc.Unadjusted == perfexpv1alpha1.ChangeImproved
		if claimed && adj[i] >= a {
			mc.Change = perfexpv1alpha1.ChangeInconclusive
			// Holm holds this p-value to a * p / adjusted p (a / the hypotheses not yet
			// rejected at its step): the interval would have to lie beyond ±δ at one minus
			// that, not at the level it is shown at.
			level := 1 - a*ps[i]/adj[i]
			mc.ClaimLevel = result.Num(level)
			mc.Why = fmt.Sprintf("the interval shown lies beyond ±δ (%s on its own), but the level that decides is %s's: a claim needs the interval at %.3g %% to lie beyond ±δ (adjusted p %.3g, held to %.3g)",
				mc.Unadjusted, desc, 100*level, adj[i], a)
		}
	}
	eqArms, _ := equivalence(cs, level, 0)
	for _, c := range cs {
		if refused(c) {
			continue
		}
		c.Multiplicity = desc
		c.Change = Headline(c.Metrics)
		c.Notes = slices.DeleteFunc(c.Notes, func(n string) bool { return strings.HasPrefix(n, armsEquivalence) })
		if eqArms > 1 && c.Change == perfexpv1alpha1.ChangeNoMeaningfulChange {
			c.Notes = append(c.Notes, fmt.Sprintf("%s as a family, as a claim of change is: Holm across the %d arms on each arm's equivalence p-value (the largest of its primary metrics'), so the chance that any arm reads NoMeaningfulChange when its change is ±δ or more stays within the error rate",
				armsEquivalence, eqArms))
		}
	}
}

// armsEquivalence opens the note that a NoMeaningfulChange among several arms is held across
// them. Each arm's own equivalence test (its interval inside ±δ) held one arm at the error rate,
// and with every arm at exactly +δ "some arm reads NoMeaningfulChange" reached 5.7-12.3 % of 4-arm
// sequential sweeps (docs/comparison.md, "Sweeps under real noise").
const armsEquivalence = "NoMeaningfulChange is held across the arms"

// equivalence holds NoMeaningfulChange across the arms of cs as a family, with held more arms
// that are not judged here and keep their share (a sequential look's arms decided earlier with
// a claim: their equivalence was never shown). An arm reads NoMeaningfulChange only when every
// primary metric does (an intersection-union test: the arm's equivalence p-value is the largest
// of its metrics'); Holm across the arms' p-values at level(arms) keeps the chance that any arm
// whose change is ±δ or more reads NoMeaningfulChange at the error rate, whatever the
// dependence (the arms share their baseline). A sequential look passes an arm's share on only
// when it is decided NoMeaningfulChange (its hypothesis rejected), as the claims' family does.
// The metrics of an arm Holm does not clear are re-decided Inconclusive. With one arm nothing
// changes: its interval decides. It returns the size of the family and the comparisons whose
// rows it re-decided.
func equivalence(cs []*result.Comparison, level func(m int) float64, held int) (int, []*result.Comparison) {
	var arms []*result.Comparison
	var ps []float64
	for _, c := range cs {
		if refused(c) {
			continue
		}
		p, primary := 0.0, false
		for _, mc := range c.Metrics {
			if !mc.Primary {
				continue
			}
			primary = true
			switch {
			case mc.Constant:
			case mc.PEquivalent != nil:
				p = max(p, *mc.PEquivalent)
			case mc.Change != perfexpv1alpha1.ChangeNoMeaningfulChange:
				// A row without an equivalence p-value decides by its own verdict.
				p = 1
			}
		}
		if primary {
			arms, ps = append(arms, c), append(ps, p)
		}
	}
	m := len(arms) + held
	if m < 2 {
		return m, nil
	}
	for range held {
		ps = append(ps, 1)
	}
	adj, a := stats.Holm(ps), level(m)
	var changed []*result.Comparison
	for i, c := range arms {
		if adj[i] < a {
			continue
		}
		for j := range c.Metrics {
			mc := &c.Metrics[j]
			if !mc.Primary || mc.Constant || mc.PEquivalent == nil || mc.Change != perfexpv1alpha1.ChangeNoMeaningfulChange {
				continue
			}
			if len(changed) == 0 || changed[len(changed)-1] != c {
				changed = append(changed, c)
			}
			mc.Change = perfexpv1alpha1.ChangeInconclusive
			mc.Why = fmt.Sprintf("the interval shown lies inside ±δ (NoMeaningfulChange on its own), but %s: Holm across the %d arms on their equivalence p-values holds this arm's (adjusted p %.3g) to %.3g",
				strings.ToLower(armsEquivalence[:1])+armsEquivalence[1:], m, adj[i], a)
		}
	}
	return m, changed
}

// holdEquivalence redoes equivalence over comparisons already adjusted (adjustLevel) with held
// more arms in the family, and re-decides the headline of those it changed.
func holdEquivalence(cs []*result.Comparison, level func(m int) float64, held int) {
	_, changed := equivalence(cs, level, held)
	for _, c := range changed {
		c.Change = Headline(c.Metrics)
		if c.Change != perfexpv1alpha1.ChangeNoMeaningfulChange {
			c.Notes = slices.DeleteFunc(c.Notes, func(n string) bool { return strings.HasPrefix(n, armsEquivalence) })
		}
	}
}

// pEquivalent is the effect's equivalence p-value (result.MetricComparison.PEquivalent): twice
// the larger of the p-values of "the change is at least +δ" and "at most -δ", from the t
// distribution of a t interval, else from the normal that has the interval as its range at its
// level. Below the interval's error rate exactly when a t interval lies inside ±δ. 1 when no
// NoMeaningfulChange may come of the effect, 0 for a constant.
func (e *effect) pEquivalent() float64 {
	switch {
	case e.few != "" || e.withdrawn != "" || e.zeroBase != "":
		// A rise from 0 is never shown to be within ±δ: its relative change has no value.
		return 1
	case e.constant:
		return 0
	}
	var cdf func(float64) float64
	if e.se > 0 && e.df > 0 && len(e.biases) == 0 {
		t := moremath.TDist{V: e.df}
		cdf = func(x float64) float64 { return t.CDF((x - e.point) / e.se) }
	} else {
		a := alpha
		if e.level > 0 {
			a = 1 - e.level
		}
		se := (e.high - e.low) / (2 * moremath.InvCDF(moremath.NormalDist{Mu: 0, Sigma: 1})(1-a/2))
		if !(se > 0) {
			if e.low >= e.down && e.high <= e.up {
				return 0
			}
			return 1
		}
		n := moremath.NormalDist{Mu: (e.high + e.low) / 2, Sigma: se}
		cdf = n.CDF
	}
	return math.Min(1, 2*math.Max(1-cdf(e.up), cdf(e.down)))
}

// refused is a comparison that was not made (no baseline, a refused one): it has no metrics
// to control.
func refused(c *result.Comparison) bool {
	return c == nil || c.Change == perfexpv1alpha1.ChangeUnknown && c.Message != ""
}

func armsCompared(cs []*result.Comparison) int {
	n := 0
	for _, c := range cs {
		if !refused(c) {
			n++
		}
	}
	return n
}

// Headline decides a comparison from its primary rows (already adjusted): Regressed if one
// regressed (a regression is the finding a team must not miss, even beside an improvement),
// else Improved if one improved, NoMeaningfulChange if every primary metric was shown to stay
// within δ, Inconclusive if any could not tell, Unknown if none could be compared.
func Headline(ms []result.MetricComparison) perfexpv1alpha1.Change {
	var regressed, improved, inconclusive, equivalent bool
	for _, m := range ms {
		if !m.Primary {
			continue
		}
		switch m.Change {
		case perfexpv1alpha1.ChangeRegressed:
			regressed = true
		case perfexpv1alpha1.ChangeImproved:
			improved = true
		case perfexpv1alpha1.ChangeNoMeaningfulChange:
			equivalent = true
		case perfexpv1alpha1.ChangeInconclusive, perfexpv1alpha1.ChangeUnknown:
			inconclusive = true
		}
	}
	switch {
	case regressed:
		return perfexpv1alpha1.ChangeRegressed
	case improved:
		return perfexpv1alpha1.ChangeImproved
	case inconclusive:
		if !equivalent && !anyKnown(ms) {
			return perfexpv1alpha1.ChangeUnknown
		}
		return perfexpv1alpha1.ChangeInconclusive
	case equivalent:
		return perfexpv1alpha1.ChangeNoMeaningfulChange
	}
	return perfexpv1alpha1.ChangeUnknown
}

// anyKnown reports whether any primary metric was compared at all.
func anyKnown(ms []result.MetricComparison) bool {
	for _, m := range ms {
		if m.Primary && m.Change != perfexpv1alpha1.ChangeUnknown && m.Change != "" {
			return true
		}
	}
	return false
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
