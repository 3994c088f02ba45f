package judge

import (
	"fmt"
	"slices"
	"strings"

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
	arms := armsCompared(cs)
	for _, c := range cs {
		if refused(c) {
			continue
		}
		c.Multiplicity = desc
		c.Change = Headline(c.Metrics)
		c.Notes = slices.DeleteFunc(c.Notes, func(n string) bool { return strings.HasPrefix(n, perArmEquivalence) })
		if arms > 1 && c.Change == perfexpv1alpha1.ChangeNoMeaningfulChange {
			c.Notes = append(c.Notes, fmt.Sprintf("%s: each arm's own equivalence test (its interval inside ±δ), not held across the %d arms as a claim of change is", perArmEquivalence, arms))
		}
	}
}

// perArmEquivalence opens the note that a NoMeaningfulChange among several arms is per arm:
// Holm controls the claims of change across the arms, not the equivalences, so with every arm
// at exactly ±δ "some arm reads NoMeaningfulChange" is more likely than one arm's 5 % (the
// simulation table's "no change at +δ (any arm)" column: up to 10 % of 4-arm sweeps with one
// arm noisier than the others, before the arm's own noise was used).
const perArmEquivalence = "NoMeaningfulChange is per arm"

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
