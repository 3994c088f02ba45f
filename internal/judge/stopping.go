package judge

import (
	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/judge/stats"
	"github.com/perfexp/perfexp/internal/result"
)

// A sequential sweep looks at its arms after every block; stats.Look holds what each look
// spends of the error rate, and these decide which arms a look settles.

// Decisive reports whether a comparison's headline settles the question: Regressed, Improved or
// NoMeaningfulChange. Inconclusive and Unknown ask for more runs.
func Decisive(c *result.Comparison) bool {
	if c == nil {
		return false
	}
	switch c.Change {
	case perfexpv1alpha1.ChangeRegressed, perfexpv1alpha1.ChangeImproved, perfexpv1alpha1.ChangeNoMeaningfulChange:
		return true
	}
	return false
}

// ArmDecision is one arm's course through a sequential design with per-arm stopping.
type ArmDecision struct {
	// Comparison is the arm's comparison at the look that decided it, or, for an arm not decided
	// yet, at the last look taken.
	Comparison *result.Comparison
	// Blocks is how many blocks that comparison rests on: the arm runs in the first Blocks blocks
	// and no later one once Decided.
	Blocks int
	// Decided is true when the arm's headline was decisive at that look (or its stop was recorded
	// earlier): it gets no further runs and its verdict is final.
	Decided bool
}

// DecideArms replays the looks of a sequential design with per-arm stopping over the blocks run
// so far (blocks >= s.First), and returns each arm's decision. At each look, the arms not decided
// at an earlier look are judged on the blocks run so far by judge (each comparison drawn at the
// look's error rate), with Holm across them at that rate; every arm whose headline is decisive
// is decided there and its comparison frozen: later looks neither judge it nor need its runs, so
// its verdict cannot be flipped by blocks that came after it (or judged on fewer).
//
// stopped, when given, holds for each arm the blocks after which its stop was recorded (0: not
// stopped): such an arm is decided at that look whatever the replay finds, so the replay always
// agrees with the runs that were actually planned. judge(look, blocks, arms) returns the
// comparisons of the given arms (indexes) on the first blocks blocks, each drawn at look.Alpha()
// and with the multiplicity control across them at that rate (AdjustArmsAt).
//
// Why the error rate holds: each primary metric of each arm holds a share of directionalAlpha
// (Holm: 1/m of the hypotheses not yet rejected), and is tested at each look at the exact
// group-sequential level of its share (stats.Look.AlphaFor), so its chance of ever crossing is at most
// its share. A hypothesis's share passes to the others only when it is rejected (a claim: the
// graphical approach to group-sequential multiple testing, Maurer and Bretz 2013): an arm
// decided without a claim (NoMeaningfulChange) keeps its metrics in the family of later looks
// (stats.Look.Held), with a p-value of 1. NoMeaningfulChange is held across the arms the same
// way (equivalence): an arm decided NoMeaningfulChange passes its share on, an arm decided with
// a claim keeps it; judge must adjust its comparisons with AdjustArmsLook, and DecideArms holds
// those arms in the equivalence family after it.
func DecideArms(s stats.Stopping, blocks int, stopped []int, arms int,
	judge func(look stats.Look, blocks int, arms []int) []*result.Comparison) []ArmDecision {
	out := make([]ArmDecision, arms)
	first := max(1, s.First)
	for n := first; n <= blocks; n++ {
		var active []int
		for a := range out {
			if !out[a].Decided {
				active = append(active, a)
			}
		}
		if len(active) == 0 {
			break
		}
		look := s.LookAt(n)
		eqHeld := 0
		for a := range out {
			if out[a].Decided {
				look.Held += unclaimed(out[a].Comparison)
				if c := out[a].Comparison; c == nil || c.Change != perfexpv1alpha1.ChangeNoMeaningfulChange {
					eqHeld++
				}
			}
		}
		cs := judge(look, n, active)
		if eqHeld > 0 {
			// The arms decided earlier with a claim keep their share of the equivalence
			// family (equivalence), which the look's own adjustment cannot know of.
			holdEquivalence(cs, look.AlphaFor, eqHeld)
		}
		for i, a := range active {
			out[a] = ArmDecision{Comparison: cs[i], Blocks: n}
			recorded := a < len(stopped) && stopped[a] > 0
			if (recorded && stopped[a] <= n) || (!recorded && Decisive(cs[i])) {
				out[a].Decided = true
			}
		}
	}
	return out
}

// unclaimed counts a decided comparison's primary metrics in the multiplicity family that were
// not claimed (Regressed or Improved): they keep their share at later looks.
func unclaimed(c *result.Comparison) int {
	n := 0
	for _, mc := range family([]*result.Comparison{c}) {
		if mc.Change != perfexpv1alpha1.ChangeRegressed && mc.Change != perfexpv1alpha1.ChangeImproved {
			n++
		}
	}
	return n
}
