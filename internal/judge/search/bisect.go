package search

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/result"
)

// A performance bisect finds which of a release's changed services made it slower: the
// baseline runs every service at its old image, a step applies the new images of a subset of
// the services on top of it and compares with the baseline. Adaptive group testing then
// narrows the subset:
//
//   - The first step applies every changed image: the regression must show under the bisect's
//     own comparisons before it is looked for.
//   - A set known to reproduce it is split in halves A and B, and both are tested (on top of
//     whatever must stay applied, see below). Only A reproduces: the culprit is in A; only B:
//     in B; both: there are (at least) two culprits, one in each half, and both halves are
//     searched.
//   - Neither half reproduces although together they do: an interaction, the regression needs
//     changes from both halves. Then A is searched with all of B applied (its smallest part that
//     still reproduces with B), and B with that part of A applied (Zeller's delta debugging
//     with interference), and the answer says it was an interaction.
//   - A set of one service that reproduces is a culprit.
//
// The search is a pure function of the steps so far: BisectNext replays the recursion over the
// known outcomes and returns the first set whose outcome it still needs, so the state of a
// bisect is only the list of steps, and a restarted operator that replays it asks for the same
// step. A step with no comparison to go by (no valid run) ends the search with what is
// established so far: guessing a direction there could name the wrong service.

// BisectOutcome is what one step showed.
type BisectOutcome string

// The outcomes of a bisect step.
const (
	// BisectPending: the step has not been decided yet.
	BisectPending BisectOutcome = ""
	// BisectReproduces: the set's new images make the system slower than the baseline
	// (Regressed).
	BisectReproduces BisectOutcome = "Reproduces"
	// BisectClean: they were not shown to (NoMeaningfulChange, Improved, or still
	// Inconclusive when the step's budget was spent).
	BisectClean BisectOutcome = "Clean"
	// BisectUndecided: the step has no comparison to go by (no valid run within its budget).
	BisectUndecided BisectOutcome = "Undecided"
)

// BisectOutcomeOf is a comparison's meaning for a bisect step, at a look that is the step's
// last or not. The question a step asks is one-sided, "does this set make the system slower?",
// and the regression it looks for is already established (the first step), so it asks less
// than a Regressed headline does:
//   - Reproduces: the headline Regressed, or a primary latency row's interval lies wholly above
//     zero (a slowdown, whatever its size);
//   - Clean: every primary latency row's interval lies below the minimum meaningful change
//     (the comparison's MinChangePercent), or the last look still shows neither: a set not
//     shown to slow the system down is searched no further, unless no set is (then the search
//     looks for an interaction);
//   - Pending: another repeat is due;
//   - Undecided: the last look has no interval to go by (no valid run).
//
// The intervals are drawn at the look's error rate (stats.Look.Alpha), so the one-sided false claim
// of a step under continuous looking is at most half the sequential budget's 5 %.
func BisectOutcomeOf(c *result.Comparison, last bool) BisectOutcome {
	if c != nil && c.Change == perfexpv1alpha1.ChangeRegressed {
		return BisectReproduces
	}
	rows, clean := 0, 0
	if c != nil {
		for _, m := range c.Metrics {
			if !m.Primary || m.Low == nil || m.High == nil || m.Kind == perfexpv1alpha1.MetricErrorRate || m.Kind == perfexpv1alpha1.MetricPassRate {
				continue
			}
			rows++
			if *m.Low > 0 {
				return BisectReproduces
			}
			if *m.High < c.MinChangePercent {
				clean++
			}
		}
	}
	switch {
	case rows > 0 && (clean == rows || last):
		return BisectClean
	case !last:
		return BisectPending
	}
	return BisectUndecided
}

// BisectStep is one set of services whose new images were applied, and its outcome.
type BisectStep struct {
	Set     []string
	Outcome BisectOutcome
}

// BisectAnswer is where a bisect stands.
type BisectAnswer struct {
	// Done is true when no further step is needed; Next is the set to test otherwise.
	Done bool
	Next []string
	// Culprits are the services found so far whose new images make the difference.
	Culprits []string
	// Interaction is true when the regression needs several services' changes together (no
	// single one reproduces it).
	Interaction bool
	// Why says how the search ended.
	Why string
}

// errNeed carries the set whose outcome the recursion needs next.
type errNeed struct{ set []string }

func (e errNeed) Error() string { return "need " + strings.Join(e.set, ",") }

// errUndecided ends the recursion at a step that stayed undecided.
type errUndecided struct{ set []string }

func (e errUndecided) Error() string { return "undecided " + strings.Join(e.set, ",") }

// BisectNext decides the next step from the steps so far.
func BisectNext(services []string, steps []BisectStep) BisectAnswer {
	all := slices.Clone(services)
	slices.Sort(all)
	all = slices.Compact(all)
	known := map[string]BisectOutcome{}
	for _, s := range steps {
		if s.Outcome != BisectPending {
			known[setKey(s.Set)] = s.Outcome
		}
	}
	b := &bisector{known: known}
	if len(all) == 0 {
		return BisectAnswer{Done: true, Why: "no changed service to bisect"}
	}
	full, err := b.outcome(all)
	if err != nil {
		return b.answer(err)
	}
	if full != BisectReproduces {
		return BisectAnswer{Done: true, Why: fmt.Sprintf("all %d new images together do not make the system slower than the baseline here (%s): nothing to bisect", len(all), full)}
	}
	culprits, err := b.find(all, nil)
	if err != nil {
		return b.answer(err)
	}
	slices.Sort(culprits)
	ans := BisectAnswer{Done: true, Culprits: culprits, Interaction: b.interaction}
	switch {
	case b.interaction:
		ans.Why = fmt.Sprintf("the regression needs %s together: no single service's new image reproduces it alone", strings.Join(culprits, " + "))
	case len(culprits) == 1:
		ans.Why = fmt.Sprintf("%s's new image alone reproduces the regression", culprits[0])
	default:
		ans.Why = fmt.Sprintf("%s each reproduce a regression on their own", strings.Join(culprits, ", "))
	}
	return ans
}

type bisector struct {
	known       map[string]BisectOutcome
	interaction bool
	// culprits found before the recursion stopped, for a partial answer.
	found []string
}

func (b *bisector) answer(err error) BisectAnswer {
	var need errNeed
	var und errUndecided
	switch {
	case errors.As(err, &need):
		return BisectAnswer{Next: need.set, Culprits: slices.Clone(b.found), Interaction: b.interaction}
	case errors.As(err, &und):
		return BisectAnswer{Done: true, Culprits: slices.Clone(b.found), Interaction: b.interaction,
			Why: fmt.Sprintf("the step applying %s has no comparison to go by; the search stops with what it established", strings.Join(und.set, ", "))}
	}
	return BisectAnswer{Done: true, Why: err.Error()}
}

// outcome is a set's known outcome, or errNeed when it was not tested yet.
func (b *bisector) outcome(set []string) (BisectOutcome, error) {
	o, ok := b.known[setKey(set)]
	switch {
	case !ok:
		return "", errNeed{set: set}
	case o == BisectUndecided:
		return o, errUndecided{set: set}
	}
	return o, nil
}

// find returns the smallest part of s that reproduces the regression with ctx applied, knowing
// that ctx plus s reproduces it and ctx alone does not.
func (b *bisector) find(s, ctx []string) ([]string, error) {
	if len(s) == 1 {
		b.found = append(b.found, s[0])
		return s, nil
	}
	half := len(s) / 2
	a, c := s[:half], s[half:]
	ra, err := b.outcome(union(ctx, a))
	if err != nil {
		return nil, err
	}
	rc, err := b.outcome(union(ctx, c))
	if err != nil {
		return nil, err
	}
	switch {
	case ra == BisectReproduces && rc == BisectReproduces:
		left, err := b.find(a, ctx)
		if err != nil {
			return nil, err
		}
		right, err := b.find(c, ctx)
		if err != nil {
			return nil, err
		}
		return append(left, right...), nil
	case ra == BisectReproduces:
		return b.find(a, ctx)
	case rc == BisectReproduces:
		return b.find(c, ctx)
	}
	// Neither half alone, both together: an interaction.
	b.interaction = true
	left, err := b.find(a, union(ctx, c))
	if err != nil {
		return nil, err
	}
	right, err := b.find(c, union(ctx, left))
	if err != nil {
		return nil, err
	}
	return append(left, right...), nil
}

func union(a, b []string) []string {
	out := append(slices.Clone(a), b...)
	slices.Sort(out)
	return slices.Compact(out)
}

func setKey(s []string) string {
	c := slices.Clone(s)
	slices.Sort(c)
	return strings.Join(slices.Compact(c), "\x00")
}
