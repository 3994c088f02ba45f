package judge

import (
	"fmt"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/analysis/result"
)

// A sequential sweep adds one block (a repeat of every arm) at a time and looks at its
// comparisons after each, stopping when every arm is decisive. Looking after every block and
// stopping at the first decisive answer inflates false claims unless each look is held to less
// than the whole error rate: here look k of at most K spends
//
//	alpha_k = alpha * ((k/K)^2 - ((k-1)/K)^2)
//
// (a Lan-DeMets spending function of the power family, rho 2, between Pocock's and
// O'Brien-Fleming's shapes: little is spent on the first, noisiest looks), and each look's
// intervals and multiplicity control are drawn at alpha_k. The chance that any look's
// intervals miss the truth is then at most the sum of the alpha_k, alpha, whatever the looks'
// dependence (Bonferroni over looks). This is conservative against an exact group-sequential
// boundary, which would use the looks' correlation, but needs no numerical integration and
// holds for the t intervals of few runs; docs/comparison.md's simulation table measures it
// under continuous monitoring.

// Look is one look of a sequential design.
type Look struct {
	// K is this look, from 1; Max the most looks the budget allows.
	K, Max int
}

// Alpha is the error rate this look spends.
func (l Look) Alpha() float64 {
	if l.Max <= 1 || l.K < 1 {
		return alpha
	}
	k := min(l.K, l.Max)
	t, s := float64(k)/float64(l.Max), float64(k-1)/float64(l.Max)
	return alpha * (t*t - s*s)
}

func (l Look) String() string {
	return fmt.Sprintf("look %d of at most %d, at an error rate of %.3g (of %.2g spent over the looks)", l.K, l.Max, l.Alpha(), alpha)
}

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

// Stopping is a sequential design's plan of looks: the blocks run before the first look, and the
// most blocks the budget allows. Look k (from 1) is taken after First+k-1 blocks.
type Stopping struct {
	First, Max int
}

// LookAt is the look taken after the given number of blocks.
func (s Stopping) LookAt(blocks int) Look {
	return Look{K: blocks - s.First + 1, Max: s.Max - s.First + 1}
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
// Why the error rate holds: a wrong claim of an arm is made at the look that decided it, where
// it was one of the family that look's Holm control held at alpha_k; the chance that any look
// makes one is at most the sum of the alpha_k, alpha. Arms that stopped leave the families of
// later looks, which only makes those families smaller.
func DecideArms(s Stopping, blocks int, stopped []int, arms int,
	judge func(look Look, blocks int, arms []int) []*result.Comparison) []ArmDecision {
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
		cs := judge(s.LookAt(n), n, active)
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
