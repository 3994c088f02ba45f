package history

import (
	"math"
	"sort"
	"time"

	moremath "github.com/aclements/go-moremath/stats"

	"github.com/perfexp/perfexp/internal/judge/stats"
	"github.com/perfexp/perfexp/internal/result"
)

// The leak detector looks at the floor a garbage-collected heap returns to, not at the
// working set itself: a sawtooth of collections hides a slow leak from a straight-line fit
// (its R² stays low) while growth that levels off (caches warming) fits a line well enough to
// be called a leak. Per pod, after a warm-up:
//
//  1. the run is cut into blocks and each block's lowest working set is kept (the post-GC floor);
//  2. the floor's slope is the Theil-Sen estimate (median of pairwise slopes), which a few
//     odd blocks cannot pull;
//  3. a one-sided Mann-Kendall test says whether the floor rises at all, with its variance
//     widened for autocorrelation as Hamed and Rao (1998) propose, since neighbouring block
//     minima are not independent;
//  4. the last third of the floor must still rise above the third before it, by no less than
//     half what the whole run's slope predicts, and the second half must still trend up on
//     its own (Mann-Kendall again, at 2.5 %), so growth that has levelled off is not a leak.
//
// A pod that rises on all four counts, by a material amount, is a suspected leak. Pods are
// judged one by one, so a scale-out (new pods starting low) is not growth.
const (
	// leakMinWindow: below it, warm-up effects (JIT, caches, garbage-collector sizing) look
	// like growth, so no verdict is given.
	leakMinWindow = 30 * time.Minute
	// leakMinPodSpan is how long a pod must have run after its warm-up to be judged.
	leakMinPodSpan = 15 * time.Minute
	// The warm-up left out of each pod's series: leakWarmUpShare of its span, within bounds.
	leakWarmUpShare = 0.2
	leakMinWarmUp   = 10 * time.Minute
	leakMaxWarmUp   = time.Hour
	// Blocks: about leakBlocks of them, none shorter than leakMinBlock (a block must hold at
	// least one collection to find the floor).
	leakBlocks   = 16
	leakMinBlock = 2 * time.Minute
	// leakMinBlocks is the fewest block minima a test is run on.
	leakMinBlocks = 8
	// leakAlpha is the trend test's level for the workload: at most 1 % of workloads whose
	// floors do not rise are Suspected, with Holm's correction across the pods judged.
	leakAlpha = 0.01
	// A floor rising by less than leakMinGrowthPerHour bytes, or leakMinGrowthShare of its own
	// level, per hour is not worth a verdict.
	leakMinGrowthPerHour = 1 << 20
	leakMinGrowthShare   = 0.01
	// leakTailShare is the last part of the floor checked on its own: the median floor of the
	// last part must exceed that of the part before it by at least leakTailRatio of what the
	// whole run's slope predicts. Medians of several blocks, not a slope over a few, so
	// noise in single blocks does not decide.
	leakTailShare = 1.0 / 3
	leakTailRatio = 0.5
	// leakLateZ: the second half of the floor must still trend up on its own (one-sided 2.5 %).
	leakLateZ = 1.96
	// leakPhiUpperZ: the AR(1) coefficient of the floor's ranks is taken this many standard
	// errors above its estimate (see mannKendallZ).
	leakPhiUpperZ = 0.5
)

// leakPod is one pod's judgement.
type leakPod struct {
	slopePerHour float64
	// z is the Mann-Kendall statistic after the autocorrelation adjustment.
	z float64
	// rises: every check but the trend test's level passed (that level is set across pods).
	rises bool
	// suspect: rises, and the floor is not better told by one step.
	suspect bool
	// shift: the floor is better told by one step than by a line (see levelShift).
	shift bool
	// shiftMaterial: the step is material; shiftP is its p-value (see levelShift).
	shiftMaterial bool
	shiftP        float64
	analysed      bool
	// blocks is the number of block minima tested.
	blocks int
}

// trendP is the one-sided p-value of the pod's trend statistic. Student's t with blocks-2
// degrees of freedom rather than the normal: the variance of z rests on an autocorrelation
// estimated from the same 8-16 minima, and the normal's tail then holds too little (with 8
// pods, Holm asks for p near 0.001, where the normal gave four times as many false alarms as
// the level).
func (p leakPod) trendP() float64 {
	return 1 - moremath.TDist{V: float64(max(p.blocks-2, 1))}.CDF(p.z)
}

// Leak judges the workload from its pods' working sets between a and b: the verdict, the sum
// of the analysed pods' floor slopes (bytes per hour), and the largest trend statistic.
//
// The trend tests of the pods are corrected together (Holm at leakAlpha across the analysed
// pods): a workload of 8 pods would otherwise have eight chances of a false alarm. A pod whose
// floor stepped once and stayed level (LevelShift) is not a leak; the workload reads
// LevelShift when some pod did and none is Suspected.
func Leak(pods map[string]map[int64]float64, a, b time.Time) (growth *float64, z *float64, verdict string) {
	if b.Sub(a) < leakMinWindow {
		return nil, nil, result.LeakWindowTooShort
	}
	names := make([]string, 0, len(pods))
	for n := range pods {
		names = append(names, n)
	}
	sort.Strings(names)
	var sum, zMax float64
	var judged []leakPod
	for _, n := range names {
		p := judgePod(pods[n], a, b)
		if !p.analysed {
			continue
		}
		if len(judged) == 0 || p.z > zMax {
			zMax = p.z
		}
		judged = append(judged, p)
		sum += p.slopePerHour
	}
	if len(judged) == 0 {
		return nil, nil, result.LeakWindowTooShort
	}
	// Holm: the pods in order of their trend p-value, the i-th held to leakAlpha/(m-i); the
	// first that fails stops the walk.
	sort.SliceStable(judged, func(i, j int) bool { return judged[i].z > judged[j].z })
	m := len(judged)
	suspected, shifted := false, false
	for i, p := range judged {
		if !p.rises || p.trendP() > leakAlpha/float64(m-i) {
			break
		}
		if p.shift {
			shifted = true
			continue
		}
		suspected = suspected || p.suspect
	}
	// A step on its own (no trend test fired) is reported when its test passes leakAlpha
	// with Bonferroni's correction across the pods.
	for _, p := range judged {
		shifted = shifted || (p.shift && p.shiftMaterial && p.shiftP <= leakAlpha/float64(m))
	}
	switch {
	case suspected:
		return result.Num(sum), result.Num(zMax), result.LeakSuspected
	case shifted:
		return result.Num(sum), result.Num(zMax), result.LeakLevelShift
	}
	return result.Num(sum), result.Num(zMax), result.LeakNone
}

// judgePod runs the four steps on one pod's working set (bytes by Prometheus timestamp).
func judgePod(mem map[int64]float64, a, b time.Time) leakPod {
	lo, hi := a.UnixMilli(), b.UnixMilli()
	ts := make([]int64, 0, len(mem))
	for t := range mem {
		if t >= lo && t <= hi {
			ts = append(ts, t)
		}
	}
	if len(ts) < 2 {
		return leakPod{}
	}
	sort.Slice(ts, func(i, j int) bool { return ts[i] < ts[j] })
	span := time.Duration(ts[len(ts)-1]-ts[0]) * time.Millisecond
	warm := min(max(time.Duration(float64(span)*leakWarmUpShare), leakMinWarmUp), leakMaxWarmUp)
	if span-warm < leakMinPodSpan {
		return leakPod{}
	}
	from := ts[0] + warm.Milliseconds()
	block := max((span-warm)/leakBlocks, leakMinBlock).Milliseconds()
	// Block minima, each at its own time (hours from the first), so a clean line gives its
	// exact slope.
	var xs, ys []float64
	cur, have := int64(-1), false
	var bx, by float64
	for _, t := range ts {
		if t < from {
			continue
		}
		k := (t - from) / block
		if k != cur {
			if have {
				xs, ys = append(xs, bx), append(ys, by)
			}
			cur, have = k, false
		}
		if v := mem[t]; !have || v < by {
			bx, by, have = float64(t-ts[0])/3.6e6, v, true
		}
	}
	if have {
		xs, ys = append(xs, bx), append(ys, by)
	}
	if len(xs) < leakMinBlocks {
		return leakPod{}
	}
	slope := theilSen(xs, ys)
	z := mannKendallZ(xs, ys, slope)
	out := leakPod{slopePerHour: slope, z: z, analysed: true, blocks: len(xs)}
	tail := max(int(math.Ceil(float64(len(xs))*leakTailShare)), 3)
	n := len(xs)
	last, before := xs[n-tail:], xs[n-2*tail:n-tail]
	rise := stats.Median(ys[n-tail:]) - stats.Median(ys[n-2*tail:n-tail])
	expected := slope * (stats.Median(last) - stats.Median(before))
	floor := stats.Median(ys)
	material := slope >= leakMinGrowthPerHour && floor > 0 && slope >= leakMinGrowthShare*floor
	half := n / 2
	lateZ := mannKendallShapeZ(xs[half:], ys[half:])
	out.rises = material && rise >= leakTailRatio*expected && lateZ >= leakLateZ
	out.shift, out.shiftMaterial, out.shiftP = levelShift(xs, ys, floor)
	out.suspect = out.rises && !out.shift
	return out
}

// levelShift says whether a pod's floor (block minima ys at hours xs) is better told by one
// step than by a line: the two means either side of the best split leave less residual than the
// Theil-Sen line, and neither side trends up on its own (Mann-Kendall at leakLateZ). material
// says the step is at least leakMinGrowthPerHour bytes and leakMinGrowthShare of the floor,
// and p is the step's own p-value by the change point test (the largest t of any split of the
// prewhitened floor, changepoint_signif.go), for a step reported when no trend test fired.
func levelShift(xs, ys []float64, floor float64) (shift, material bool, p float64) {
	n := len(ys)
	const minSide = 3
	if n < 2*minSide {
		return false, false, 1
	}
	_, at := maxT(ys, minSide)
	if at < 0 {
		return false, false, 1
	}
	ml, _ := meanVar(ys[:at])
	mr, _ := meanVar(ys[at:])
	var stepSS, lineSS float64
	slope := theilSen(xs, ys)
	intercept := stats.Median(func() []float64 {
		r := make([]float64, n)
		for i := range ys {
			r[i] = ys[i] - slope*xs[i]
		}
		return r
	}())
	for i, y := range ys {
		m := mr
		if i < at {
			m = ml
		}
		stepSS += (y - m) * (y - m)
		lineSS += (y - intercept - slope*xs[i]) * (y - intercept - slope*xs[i])
	}
	level := func(x, y []float64) bool {
		return len(y) < minSide || mannKendallShapeZ(x, y) < leakLateZ
	}
	shift = mr > ml && stepSS < lineSS && level(xs[:at], ys[:at]) && level(xs[at:], ys[at:])
	if !shift {
		return false, false, 1
	}
	jump := mr - ml
	material = jump >= leakMinGrowthPerHour && floor > 0 && jump >= leakMinGrowthShare*floor
	num, den := ar1Sums(ys, minSide)
	phi := upperPhi(estimatePhi(num, den, n), n)
	return true, material, spanPValue(ys, phi, minSide)
}

// theilSen is the median of the slopes between every pair of points with distinct x.
func theilSen(xs, ys []float64) float64 {
	var slopes []float64
	for i := range xs {
		for j := i + 1; j < len(xs); j++ {
			if dx := xs[j] - xs[i]; dx != 0 {
				slopes = append(slopes, (ys[j]-ys[i])/dx)
			}
		}
	}
	if len(slopes) == 0 {
		return 0
	}
	return stats.Median(slopes)
}

// mannKendallZ is the Mann-Kendall statistic of ys (in the order of xs) with the variance
// adjusted for autocorrelation (Hamed and Rao 1998): the variance is widened by the lag-k
// autocorrelations of the ranks of the series detrended by slope. Hamed and Rao keep only the
// lags whose sample autocorrelation passes a 5 % significance bound; with the 8-16 block minima
// of a soak that bound is |r| > 0.5 to 0.7, so a floor that wanders slowly passed it rarely and
// read as a trend in 4 % of flat soaks against the documented 1 % (TestLeakSimulation). Here
// the lags follow an AR(1) fitted to the detrended ranks instead (rho_k = phi^k), phi
// bias-corrected and taken one standard error up as for change points (changepoint_signif.go).
// The adjustment never narrows the variance, so positively correlated minima cannot make a
// trend look surer than independent ones would.
func mannKendallZ(xs, ys []float64, slope float64) float64 {
	return mannKendall(xs, ys, slope, true)
}

// mannKendallShapeZ is the Mann-Kendall statistic without the autocorrelation adjustment: the
// checks on the shape of the floor (its second half still rising, the sides of a step level)
// ask where it goes, not whether the rise is significant, which the whole run's adjusted
// test decides.
func mannKendallShapeZ(xs, ys []float64) float64 {
	return mannKendall(xs, ys, 0, false)
}

func mannKendall(xs, ys []float64, slope float64, adjust bool) float64 {
	n := len(ys)
	var s float64
	for i := range n {
		for j := i + 1; j < n; j++ {
			switch d := ys[j] - ys[i]; {
			case d > 0:
				s++
			case d < 0:
				s--
			}
		}
	}
	nf := float64(n)
	variance := nf * (nf - 1) * (2*nf + 5) / 18
	// Ties lower the variance.
	counts := map[float64]int{}
	for _, y := range ys {
		counts[y]++
	}
	for _, c := range counts {
		if c > 1 {
			cf := float64(c)
			variance -= cf * (cf - 1) * (2*cf + 5) / 18
		}
	}
	// Autocorrelation of the detrended series' ranks, as an AR(1).
	resid := make([]float64, n)
	for i := range ys {
		resid[i] = ys[i] - slope*xs[i]
	}
	r := ranks(resid)
	mean := (nf + 1) / 2
	var num, den float64
	for i, v := range r {
		den += (v - mean) * (v - mean)
		if i > 0 {
			num += (v - mean) * (r[i-1] - mean)
		}
	}
	factor := 1.0
	if adjust && den > 0 && n >= 3 {
		phi := estimatePhi(num, den, n)
		phi = min(phi+leakPhiUpperZ*math.Sqrt((1-phi*phi)/nf), phiMax)
		var acc float64
		rho := 1.0
		for k := 1; k < n-2; k++ {
			rho *= phi
			kf := float64(k)
			acc += (nf - kf) * (nf - kf - 1) * (nf - kf - 2) * rho
		}
		factor = 1 + 2*acc/(nf*(nf-1)*(nf-2))
	}
	variance *= max(factor, 1)
	if variance <= 0 {
		return 0
	}
	switch {
	case s > 0:
		return (s - 1) / math.Sqrt(variance)
	case s < 0:
		return (s + 1) / math.Sqrt(variance)
	}
	return 0
}

// ranks are 1-based, ties sharing their mean rank.
func ranks(v []float64) []float64 {
	idx := make([]int, len(v))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(i, j int) bool { return v[idx[i]] < v[idx[j]] })
	out := make([]float64, len(v))
	for i := 0; i < len(idx); {
		j := i
		for j+1 < len(idx) && v[idx[j+1]] == v[idx[i]] {
			j++
		}
		r := float64(i+j)/2 + 1
		for k := i; k <= j; k++ {
			out[idx[k]] = r
		}
		i = j + 1
	}
	return out
}
