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
