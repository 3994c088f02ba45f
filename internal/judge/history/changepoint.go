package history

import (
	"math"
	"slices"
	"sort"

	"github.com/perfexp/perfexp/internal/judge/stats"
)

// ChangePointSettings tune detection.
type ChangePointSettings struct {
	// MaxPValue is the significance level. For one series it is the chance of reporting a change
	// point in a flat series; across the series of a history (DetectHistoryChangePoints) it is
	// the false discovery rate of the series said to change (Benjamini-Hochberg over series).
	// 0 means the default, 0.05. The p-value is selection-valid: it is the chance that the
	// largest split statistic of the segment, not the one at a chosen split, reaches the
	// observed value in a series without change (see maxTNull).
	MaxPValue float64
	// MinMagnitude is the smallest relative change of the mean (0.05 = 5 %), so a real but
	// negligible shift is not reported. 0 means the default, 0.05 (the comparison's default
	// δ); a negative value means no floor.
	MinMagnitude float64
	// MinSegment is the fewest points on each side of a change. 0 means the default, 3: with fewer, one
	// outlier makes a change.
	MinSegment int
}

// candidatePValue is the looser bound a span must pass to be split while spans are divided. A
// span holding two changes (up, then back down) tests weakly as a whole (its best single split
// leaves half of it at the wrong level), so the strict bound would stop the search before
// either is isolated; the merge step then holds every point to the series' level and
// MinMagnitude against its neighbours, which is what decides.
const candidatePValue = 0.2

// Defaults for Settings.
const (
	DefaultMaxPValue    = 0.05
	DefaultMinMagnitude = 0.05
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
		s.MinSegment = stats.DefaultMinSegment
	}
	return s
}

// DefaultChangePointSettings are the documented defaults.
func DefaultChangePointSettings() ChangePointSettings {
	return ChangePointSettings{MaxPValue: DefaultMaxPValue, MinMagnitude: DefaultMinMagnitude, MinSegment: stats.DefaultMinSegment}
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
	// PValue is the selection-valid p-value of "no change" in the span between the
	// neighbouring change points: the largest split statistic of the span after removing its
	// AR(1) autocorrelation, against its distribution in series without change.
	PValue float64
	// Level is the significance level the series was tested at: MaxPValue for one series, the
	// Benjamini-Hochberg level of the series' selection (MaxPValue × selected / tested) in a
	// history.
	Level float64
	// Fixed marks a point the caller gave (a confirmed change).
	Fixed bool
}

// DetectChangePoints finds the change points of xs at the level set.MaxPValue. fixed are
// indices where a segment starts regardless of the data (confirmed changes); they are returned
// too, marked Fixed, with their statistics.
func DetectChangePoints(xs []float64, fixed []int, set ChangePointSettings) []ChangePoint {
	return DetectHistoryChangePoints([][]float64{xs}, [][]int{fixed}, set)[0]
}

// DetectHistoryChangePoints finds the change points of several series of one history (every
// metric of every scenario, request name, service and query) with a correction across them,
// in two stages (Benjamini and Bogomolov 2014, selective inference on families):
//
//  1. each series gets one p-value of "no change anywhere" (its global test, below); the
//     Benjamini-Hochberg procedure at MaxPValue over the series that can change selects
//     the series said to change. BH rather than Holm: a history has tens to hundreds of
//     series, most of them strongly and positively dependent (p95, avg and p99 of one scenario
//     move together), where BH keeps the false discovery rate and, when nothing changes at
//     all, the chance of any false change point at MaxPValue, without Holm's loss of power;
//  2. inside each selected series, change points are found and kept at the level
//     MaxPValue × R / m (R selected of m tested series), which keeps the average false
//     discovery rate over the selected series at MaxPValue.
//
// A series that cannot change (constant, or too short to split) is not counted in m.
func DetectHistoryChangePoints(series [][]float64, fixed [][]int, set ChangePointSettings) [][]ChangePoint {
	set = set.withDefaults()
	out := make([][]ChangePoint, len(series))
	detectors := make([]*detector, len(series))
	var tested []int
	var ps []float64
	for i, xs := range series {
		var f []int
		if i < len(fixed) {
			f = fixed[i]
		}
		d := newDetector(xs, f, set)
		detectors[i] = d
		if p, ok := d.global(set.MaxPValue); ok {
			tested = append(tested, i)
			ps = append(ps, p)
		}
	}
	selected := map[int]bool{}
	if len(ps) > 0 {
		for j, q := range stats.BenjaminiHochberg(ps) {
			if q <= set.MaxPValue {
				selected[tested[j]] = true
			}
		}
	}
	level := set.MaxPValue * float64(max(len(selected), 1)) / float64(max(len(ps), 1))
	for i, d := range detectors {
		if d == nil || len(series[i]) == 0 {
			continue
		}
		out[i] = d.detect(selected[i], level)
	}
	return out
}

// detector finds the change points of one series.
type detector struct {
	xs      []float64
	set     ChangePointSettings
	e       *energy
	isFixed map[int]bool
	cuts    []int
	// phi is the series' AR(1) coefficient (see changepoint_signif.go), estimated from the
	// whole series (a span's few runs would estimate it poorly); phi0 is the first estimate,
	// where every search starts.
	phi, phi0 float64
	// pCache holds the p-value of each span [a, b) tested.
	pCache map[[2]int]float64
}

func newDetector(xs []float64, fixed []int, set ChangePointSettings) *detector {
	n := len(xs)
	d := &detector{xs: xs, set: set, isFixed: map[int]bool{}, cuts: []int{0, n}, pCache: map[[2]int]float64{}}
	if n == 0 {
		return d
	}
	d.e = newEnergy(xs)
	for _, f := range fixed {
		if f > 0 && f < n && !d.isFixed[f] {
			d.isFixed[f] = true
			d.cuts = append(d.cuts, f)
		}
	}
	sort.Ints(d.cuts)
	d.phi = upperPhi(min(d.phiAround(d.cuts, true), robustPhi(xs, d.cuts)), n)
	d.phi0 = d.phi
	return d
}

// global is the series' p-value of "some change": the search is run at level, and the
// smallest p-value of the points it finds, times their number (Bonferroni within the series),
// is the series' p; 1 when it finds none, as a series that reports nothing at level cannot be
// selected at a stricter one. A single test of the whole series would not do: a change up and
// back down a few runs later hardly moves the best single split of the whole. ok is false when
// no span can change (too short to split, or constant).
func (d *detector) global(level float64) (float64, bool) {
	spans := 0
	for i := 0; i+1 < len(d.cuts); i++ {
		if d.testable(d.cuts[i], d.cuts[i+1]) {
			spans++
		}
	}
	if spans == 0 {
		return 1, false
	}
	found := d.detect(true, level)
	best, k := 1.0, 0
	for _, p := range found {
		if p.Fixed || !p.significant(d.set) {
			continue
		}
		best, k = min(best, p.PValue), k+1
	}
	if k == 0 {
		return 1, true
	}
	return min(1, best*float64(k)), true
}

// testable is whether [a, b) can hold a change: long enough for a split, and not constant.
func (d *detector) testable(a, b int) bool {
	if b-a < 2*d.set.MinSegment {
		return false
	}
	for _, x := range d.xs[a+1 : b] {
		if x != d.xs[a] {
			return true
		}
	}
	return false
}

// p is the cached selection-valid p-value of span [a, b).
func (d *detector) p(a, b int) float64 {
	k := [2]int{a, b}
	if v, ok := d.pCache[k]; ok {
		return v
	}
	v := spanPValue(d.xs[a:b], d.phi, d.set.MinSegment)
	d.pCache[k] = v
	return v
}

// phiAround estimates the AR(1) coefficient from the residuals around the means of the spans
// between cuts; split also splits each span at its best split first (used before any change is
// found, so that one real change does not read as autocorrelation).
func (d *detector) phiAround(cuts []int, split bool) float64 {
	var num, den float64
	means := 0
	for i := 0; i+1 < len(cuts); i++ {
		seg := d.xs[cuts[i]:cuts[i+1]]
		minSeg := len(seg) + 1
		if split {
			minSeg = d.set.MinSegment
		}
		nu, de := ar1Sums(seg, minSeg)
		num, den = num+nu, den+de
		means++
	}
	return estimatePhi(num, den, len(d.xs)-(means-1))
}

// search divides, merges and places again at level.
func (d *detector) search(level float64) []int {
	cuts := d.divide(slices.Clone(d.cuts), level)
	cuts = d.merge(cuts, level)
	d.replace(cuts)
	return cuts
}

// detect runs the search when the series was selected, at level, and reports every cut. The
// first search uses the lower of two AR(1) estimates (one that a second change would inflate,
// one robust to changes but noisier); then phi is estimated again around the changes found
// (around the best split when none is) and the search repeated until the changes stay put.
func (d *detector) detect(selected bool, level float64) []ChangePoint {
	if d.phi != d.phi0 {
		d.phi, d.pCache = d.phi0, map[[2]int]float64{}
	}
	cuts := d.cuts
	if selected {
		cuts = d.search(level)
		for range 3 {
			var phi float64
			if len(cuts) == len(d.cuts) {
				phi = d.phiAround(cuts, true)
			} else {
				phi = d.phiAround(cuts, false)
			}
			if phi = upperPhi(phi, len(d.xs)); phi == d.phi {
				break
			}
			d.phi, d.pCache = phi, map[[2]int]float64{}
			again := d.search(level)
			if slices.Equal(again, cuts) {
				break
			}
			cuts = again
		}
	}
	var out []ChangePoint
	for i := 1; i+1 < len(cuts); i++ {
		a, tau, b := cuts[i-1], cuts[i], cuts[i+1]
		p := means(d.xs[a:tau], d.xs[tau:b])
		p.PValue = 1
		if d.testable(a, b) {
			p.PValue = d.p(a, b)
		}
		p.Index, p.Fixed, p.Level = tau, d.isFixed[tau], level
		switch {
		case p.Fixed:
			// A confirmed change is not a discovery: whether the series changes there is one
			// question about one place, asked at MaxPValue.
			p.Level = d.set.MaxPValue
		case !selected:
			p.Level = 0
		}
		out = append(out, p)
	}
	return out
}

// Significant is true when the point passes its level and the settings' magnitude.
func (p ChangePoint) Significant(set ChangePointSettings) bool {
	return p.significant(set.withDefaults())
}

// significant is Significant with settings that already hold their defaults.
func (p ChangePoint) significant(set ChangePointSettings) bool {
	return p.Level > 0 && p.PValue <= p.Level && math.Abs(p.Change) >= set.MinMagnitude
}

// means compares the two sides of a split: their means and the relative change.
func means(left, right []float64) ChangePoint {
	ml, _ := meanVar(left)
	mr, _ := meanVar(right)
	p := ChangePoint{Before: ml, After: mr}
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

// divide splits spans until none yields a significant candidate.
func (d *detector) divide(cuts []int, level float64) []int {
	for {
		added := false
		for i := 0; i+1 < len(cuts); i++ {
			a, b := cuts[i], cuts[i+1]
			if !d.testable(a, b) {
				continue
			}
			tau, ok := d.e.best(a, b, d.set.MinSegment)
			if ok && d.p(a, b) <= max(level, candidatePValue) {
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

// passes is whether the point at cuts[i] holds between its neighbours: the span they bound
// tests at level and the means either side differ by the magnitude floor.
func (d *detector) passes(cuts []int, i int, level float64) (bool, float64) {
	a, tau, b := cuts[i-1], cuts[i], cuts[i+1]
	p := 1.0
	if d.testable(a, b) {
		p = d.p(a, b)
	}
	return p <= level && math.Abs(means(d.xs[a:tau], d.xs[tau:b]).Change) >= d.set.MinMagnitude, p
}

// merge re-tests each found point between its neighbours and drops the weakest failure, until
// every point left passes.
func (d *detector) merge(cuts []int, level float64) []int {
	for {
		weakest, weakestP := -1, -1.0
		found := 0
		for _, c := range cuts[1 : len(cuts)-1] {
			if !d.isFixed[c] {
				found++
			}
		}
		for i := 1; i+1 < len(cuts); i++ {
			if d.isFixed[cuts[i]] {
				continue
			}
			// Bonferroni within the series: each of the points found is held to level/found,
			// so that a real change does not bring extra, false ones along with it.
			if ok, p := d.passes(cuts, i, level/float64(found)); !ok && p > weakestP {
				weakest, weakestP = i, p
			}
		}
		if weakest < 0 {
			return cuts
		}
		cuts = append(cuts[:weakest], cuts[weakest+1:]...)
	}
}

// replace places each point again as the best split between its neighbours only: one found
// in a long segment holding another change may sit a run off. The span's test does not
// depend on where the point sits, so only the magnitude is checked again.
func (d *detector) replace(cuts []int) {
	for range len(cuts) {
		moved := false
		for i := 1; i+1 < len(cuts); i++ {
			if d.isFixed[cuts[i]] {
				continue
			}
			a, b := cuts[i-1], cuts[i+1]
			if tau, ok := d.e.best(a, b, d.set.MinSegment); ok && tau != cuts[i] &&
				math.Abs(means(d.xs[a:tau], d.xs[tau:b]).Change) >= d.set.MinMagnitude {
				cuts[i], moved = tau, true
			}
		}
		if !moved {
			return
		}
	}
}
