package judge

import (
	"math"
	"sort"

	"github.com/aclements/go-moremath/stats"
)

// ChangePointSettings tune detection.
type ChangePointSettings struct {
	// MaxPValue is the largest p-value a change may have. 0 means the default, 0.001: the candidate is the
	// split that looks most like a change, so the test is biased towards finding one, and a
	// strict level keeps pure noise quiet (see TestDetectFlatNoise for the measured rate).
	MaxPValue float64
	// MinMagnitude is the smallest relative change of the mean (0.05 = 5 %), so a real but
	// negligible shift is not reported. 0 means the default, 0.05 (the comparison's default
	// δ); a negative value means no floor.
	MinMagnitude float64
	// MinSegment is the fewest points on each side of a change. 0 means the default, 3: with fewer, one
	// outlier makes a change.
	MinSegment int
}

// candidatePValue is the looser bound a split must pass while segments are divided. A
// segment holding two changes (up, then back down) tests weakly as a whole, so the strict
// bound would stop the search before either is isolated; the merge step then holds every
// point to MaxPValue and MinMagnitude against its neighbours.
const candidatePValue = 0.05

// Defaults for Settings.
const (
	DefaultMaxPValue    = 0.001
	DefaultMinMagnitude = 0.05
	DefaultMinSegment   = 3
)

func (s ChangePointSettings) withDefaults() ChangePointSettings {
	if s.MaxPValue <= 0 || s.MaxPValue >= 1 {
		s.MaxPValue = DefaultMaxPValue
	}
	switch {
	case s.MinMagnitude == 0:
		s.MinMagnitude = DefaultMinMagnitude
	case s.MinMagnitude < 0:
		s.MinMagnitude = 0
	}
	if s.MinSegment < 2 {
		s.MinSegment = DefaultMinSegment
	}
	return s
}

// DefaultChangePointSettings are the documented defaults.
func DefaultChangePointSettings() ChangePointSettings {
	return ChangePointSettings{MaxPValue: DefaultMaxPValue, MinMagnitude: DefaultMinMagnitude, MinSegment: DefaultMinSegment}
}

// ChangePoint is a change found in a series: the mean from Index on differs from the mean before.
type ChangePoint struct {
	// Index is the first point of the new segment.
	Index int
	// Before and After are the means of the segments either side (between neighbouring
	// change points).
	Before, After float64
	// Change is (After-Before)/Before; ±Inf when Before is 0.
	Change float64
	// PValue of the t test between the two segments.
	PValue float64
	// Fixed marks a point the caller gave (a confirmed change).
	Fixed bool
}

// DetectChangePoints finds the change points of xs. fixed are indices where a segment starts regardless
// of the data (confirmed changes); they are returned too, marked Fixed, with their statistics.
func DetectChangePoints(xs []float64, fixed []int, set ChangePointSettings) []ChangePoint {
	set = set.withDefaults()
	n := len(xs)
	if n == 0 {
		return nil
	}
	e := newEnergy(xs)
	isFixed := map[int]bool{}
	cuts := []int{0, n}
	for _, f := range fixed {
		if f > 0 && f < n && !isFixed[f] {
			isFixed[f] = true
			cuts = append(cuts, f)
		}
	}
	sort.Ints(cuts)

	cuts = divide(e, xs, cuts, set)
	cuts = merge(xs, cuts, isFixed, set)
	replace(e, xs, cuts, isFixed, set)

	var out []ChangePoint
	for i := 1; i+1 < len(cuts); i++ {
		p := splitAt(xs[cuts[i-1]:cuts[i]], xs[cuts[i]:cuts[i+1]])
		p.Index, p.Fixed = cuts[i], isFixed[cuts[i]]
		out = append(out, p)
	}
	return out
}

// Significant is true when the point passes the settings' p-value and magnitude.
func (p ChangePoint) Significant(set ChangePointSettings) bool {
	return p.PValue <= set.MaxPValue && math.Abs(p.Change) >= set.MinMagnitude
}

// splitAt compares the two sides of a split with Student's t test.
func splitAt(left, right []float64) ChangePoint {
	ml, vl := meanVar(left)
	mr, vr := meanVar(right)
	p := ChangePoint{Before: ml, After: mr, PValue: studentP(ml, vl, len(left), mr, vr, len(right))}
	switch {
	case ml != 0:
		p.Change = (mr - ml) / math.Abs(ml)
	case mr > 0:
		p.Change = math.Inf(1)
	case mr < 0:
		p.Change = math.Inf(-1)
	}
	return p
}

func meanVar(xs []float64) (mean, variance float64) {
	for _, x := range xs {
		mean += x
	}
	mean /= float64(len(xs))
	if len(xs) < 2 {
		return mean, 0
	}
	for _, x := range xs {
		variance += (x - mean) * (x - mean)
	}
	return mean, variance / float64(len(xs)-1)
}

// studentP is the two-sided p-value of Student's two-sample t test with a pooled variance.
// Pooling gives n1+n2-2 degrees of freedom, which matters for short histories (8 runs: 6
// rather than Welch's 3 to 6). Two sides without any spread are different for certain when
// their means differ, and the same when not.
func studentP(m1, v1 float64, n1 int, m2, v2 float64, n2 int) float64 {
	if n1 < 2 || n2 < 2 {
		return 1
	}
	dof := float64(n1 + n2 - 2)
	pooled := (float64(n1-1)*v1 + float64(n2-1)*v2) / dof
	se := math.Sqrt(pooled * (1/float64(n1) + 1/float64(n2)))
	if se == 0 {
		if m1 == m2 {
			return 1
		}
		return 0
	}
	t := math.Abs(m1-m2) / se
	return 2 * (1 - stats.TDist{V: dof}.CDF(t))
}

// energy holds prefix sums of the pairwise distances |x_i - x_j|, so the energy distance of
// any split of any segment costs O(1) and a segment's best split O(length).
type energy struct {
	n int
	// cum[i][j] is the sum of |x_r - x_c| over r < i, c < j.
	cum [][]float64
}

func newEnergy(xs []float64) *energy {
	n := len(xs)
	cum := make([][]float64, n+1)
	for i := range cum {
		cum[i] = make([]float64, n+1)
	}
	for i := 1; i <= n; i++ {
		for j := 1; j <= n; j++ {
			cum[i][j] = cum[i-1][j] + cum[i][j-1] - cum[i-1][j-1] + math.Abs(xs[i-1]-xs[j-1])
		}
	}
	return &energy{n: n, cum: cum}
}

// block is the sum of distances between rows [r0, r1) and columns [c0, c1).
func (e *energy) block(r0, r1, c0, c1 int) float64 {
	return e.cum[r1][c1] - e.cum[r0][c1] - e.cum[r1][c0] + e.cum[r0][c0]
}

// q is the scaled energy distance of splitting [a, b) at tau.
func (e *energy) q(a, tau, b int) float64 {
	m, n := float64(tau-a), float64(b-tau)
	between := 2 * e.block(a, tau, tau, b) / (m * n)
	// Within sums count every pair twice (the block is symmetric) and the diagonal is 0.
	within := func(lo, hi int, k float64) float64 {
		if k < 2 {
			return 0
		}
		return e.block(lo, hi, lo, hi) / (k * (k - 1))
	}
	return m * n / (m + n) * (between - within(a, tau, m) - within(tau, b, n))
}

// best is the split of [a, b) with the highest energy distance.
func (e *energy) best(a, b, minSeg int) (int, bool) {
	bestTau, bestQ := -1, math.Inf(-1)
	for tau := a + minSeg; tau <= b-minSeg; tau++ {
		if q := e.q(a, tau, b); q > bestQ {
			bestTau, bestQ = tau, q
		}
	}
	return bestTau, bestTau >= 0
}

// divide splits segments until none yields a significant candidate.
func divide(e *energy, xs []float64, cuts []int, set ChangePointSettings) []int {
	for {
		added := false
		for i := 0; i+1 < len(cuts); i++ {
			a, b := cuts[i], cuts[i+1]
			tau, ok := e.best(a, b, set.MinSegment)
			if !ok {
				continue
			}
			if p := splitAt(xs[a:tau], xs[tau:b]); p.PValue <= max(set.MaxPValue, candidatePValue) {
				cuts = append(cuts, tau)
				sort.Ints(cuts)
				added = true
				break
			}
		}
		if !added {
			return cuts
		}
	}
}

// merge re-tests each found point between its neighbours and drops the weakest failure, until
// every point left passes.
func merge(xs []float64, cuts []int, isFixed map[int]bool, set ChangePointSettings) []int {
	for {
		weakest, weakestP := -1, -1.0
		for i := 1; i+1 < len(cuts); i++ {
			if isFixed[cuts[i]] {
				continue
			}
			p := splitAt(xs[cuts[i-1]:cuts[i]], xs[cuts[i]:cuts[i+1]])
			if !p.Significant(set) && p.PValue > weakestP {
				weakest, weakestP = i, p.PValue
			}
		}
		if weakest < 0 {
			return cuts
		}
		cuts = append(cuts[:weakest], cuts[weakest+1:]...)
	}
}

// replace places each point again as the best split between its neighbours only: one found
// in a long segment holding another change may sit a run off.
func replace(e *energy, xs []float64, cuts []int, isFixed map[int]bool, set ChangePointSettings) {
	for range len(cuts) {
		moved := false
		for i := 1; i+1 < len(cuts); i++ {
			if isFixed[cuts[i]] {
				continue
			}
			if tau, ok := e.best(cuts[i-1], cuts[i+1], set.MinSegment); ok && tau != cuts[i] &&
				splitAt(xs[cuts[i-1]:tau], xs[tau:cuts[i+1]]).Significant(set) {
				cuts[i], moved = tau, true
			}
		}
		if !moved {
			return
		}
	}
}
