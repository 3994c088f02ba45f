package stats

import (
	"fmt"
)

// A sequential sweep adds one block (a repeat of every arm) at a time and looks at its
// comparisons after each, stopping when every arm is decisive. Looking after every block and
// stopping at the first decisive answer inflates false claims unless each look is held to less
// than the whole error rate. A sequential design is a group-sequential test (Jennison and
// Turnbull, "Group Sequential Methods with Applications to Clinical Trials"):
//
//   - a claim "beyond +δ" (and, separately, one "beyond -δ") is held to directionalAlpha, 5 %,
//     over all looks: each is a one-sided test of "the change is at most δ" (at least -δ), so
//     at a true change of exactly δ at most 5 % of designs claim it, and at a true change of 0
//     far fewer (both sides must clear δ). A two-sided interval at 1 - 2p bounds both
//     directions at p each, so the interval shown at a look is at 1 - 2p_k;
//   - look k of K spends directionalAlpha * ((k/K)^2 - ((k-1)/K)^2) (a Lan-DeMets spending
//     function of the power family, rho 2, between Pocock's and O'Brien-Fleming's shapes: little
//     is spent on the first, noisiest looks), and its nominal level p_k is the exact one for
//     that spending: the chance that the standardised sum of the blocks first crosses the
//     boundary at look k is the share spent there, with the looks' correlation accounted for
//     (groupSequentialLevels). Summing the spent shares (Bonferroni over looks, this design's
//     earlier rule) ignores that correlation and held a 4-arm sweep at 5 % noise to 56 % power
//     for +15 %, with at most 1 % of claims at δ;
//   - the runs' noise is estimated, so each look's interval is Student's t with the design's
//     degrees of freedom at the nominal level p_k (the significance-level approach to unknown
//     variance, an approximation for few runs); docs/comparison.md's simulation tables measure
//     the error rates under continuous monitoring, heavy tails and drift included.

// Look is one look of a sequential design.
type Look struct {
	// K is this look, from 1; Max the most looks the budget allows.
	K, Max int
	// First is the blocks run before the first look (look k is taken after First+k-1): with
	// it (Stopping.LookAt: sequential sweeps and confirmations), the look's level is the exact
	// group-sequential one (AlphaFor); 0 (bisect steps and capacity probes, whose simulations
	// measure that rule) spends by Bonferroni over the looks (Spent), a two-sided 5 % in all.
	First int
	// Held counts the primary metrics of arms decided at earlier looks without a claim (set by
	// judge.DecideArms): a hypothesis's share of the error rate passes to the others only when it is
	// rejected (claimed), so these stay in the Holm family of later looks (judge.AdjustArmsLook).
	Held int
	// Directional, when set, replaces directionalAlpha (the simulations' decomposition of
	// what each part of the rule is worth).
	Directional float64
}

// directionalAlpha is the error rate of a sequential design's claims in each direction: a claim
// "beyond +δ" and one "beyond -δ" are each held to it over all looks.
const directionalAlpha = alpha

// Spent is the share of the error rate this look spends: alpha * ((k/K)^2 - ((k-1)/K)^2).
func (l Look) Spent() float64 {
	if l.Max <= 1 || l.K < 1 {
		return alpha
	}
	k := min(l.K, l.Max)
	t, s := float64(k)/float64(l.Max), float64(k-1)/float64(l.Max)
	return alpha * (t*t - s*s)
}

// Alpha is the error rate of this look's intervals: a two-sided interval at 1 - Alpha is the
// one a single comparison's verdict is drawn from at this look (AlphaFor(1)).
func (l Look) Alpha() float64 { return l.AlphaFor(1) }

// AlphaFor is the level at which Holm across a family of m hypotheses is applied at this look.
// Holm's step with j hypotheses left compares a p-value with AlphaFor(m)/j, which must not
// exceed the exact two-sided level of one hypothesis holding a 1/j share of directionalAlpha
// over the looks (2 * p_k(directionalAlpha/j), groupSequentialLevels; that level is not
// proportional to the share, so scaling the level of the whole rate would be too lenient).
// AlphaFor(m) is the smallest j * 2 * p_k(directionalAlpha/j) over j = 1..m: exact at the step
// that sets it, and within the exact level at every other.
func (l Look) AlphaFor(m int) float64 {
	if l.First < 1 {
		return l.Spent()
	}
	if l.Max <= 1 || l.K < 1 {
		return alpha
	}
	total := directionalAlpha
	if l.Directional > 0 {
		total = l.Directional
	}
	level := 1.0
	for j := 1; j <= max(1, m); j++ {
		ls := groupSequentialLevels(l.First, l.First+l.Max-1, total/float64(j))
		level = min(level, float64(j)*2*ls[min(l.K, l.Max)-1])
	}
	return level
}

// String names the look and the error rate its intervals are drawn at.
func (l Look) String() string {
	if l.First < 1 {
		return fmt.Sprintf("look %d of at most %d, at an error rate of %.3g (of %.2g spent over the looks)", l.K, l.Max, l.Alpha(), alpha)
	}
	return fmt.Sprintf("look %d of at most %d, its intervals at %.3g %% (the exact group-sequential level of that look: a claim beyond +δ, or beyond -δ, is held to %.2g over all looks)",
		l.K, l.Max, 100*(1-l.Alpha()), directionalAlpha)
}

// Stopping is a sequential design's plan of looks: the blocks run before the first look, and the
// most blocks the budget allows. Look k (from 1) is taken after First+k-1 blocks.
type Stopping struct {
	First, Max int
}

// LookAt is the look taken after the given number of blocks.
func (s Stopping) LookAt(blocks int) Look {
	return Look{K: blocks - s.First + 1, Max: s.Max - s.First + 1, First: max(1, s.First)}
}
