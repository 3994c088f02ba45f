package judge

import (
	"math"
	"sort"
	"time"

	"github.com/perfexp/perfexp/internal/analysis/result"
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
	// leakZ is the one-sided critical value of the trend test: 1 % false alarms on a flat floor
	// before the other checks, which only lower it further.
	leakZ = 2.326
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
)

// leakPod is one pod's judgement.
type leakPod struct {
	slopePerHour float64
	// z is the Mann-Kendall statistic after the autocorrelation adjustment.
	z        float64
	suspect  bool
	analysed bool
}

// Leak judges the workload from its pods' working sets between a and b: the verdict, the sum
// of the analysed pods' floor slopes (bytes per hour), and the largest trend statistic.
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
	analysed, suspected := 0, false
	for _, n := range names {
		p := judgePod(pods[n], a, b)
		if !p.analysed {
			continue
		}
		if analysed == 0 || p.z > zMax {
			zMax = p.z
		}
		analysed++
		sum += p.slopePerHour
		suspected = suspected || p.suspect
	}
	if analysed == 0 {
		return nil, nil, result.LeakWindowTooShort
	}
	if suspected {
		return result.Num(sum), result.Num(zMax), result.LeakSuspected
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
	out := leakPod{slopePerHour: slope, z: z, analysed: true}
	tail := max(int(math.Ceil(float64(len(xs))*leakTailShare)), 3)
	n := len(xs)
	last, before := xs[n-tail:], xs[n-2*tail:n-tail]
	rise := median(ys[n-tail:]) - median(ys[n-2*tail:n-tail])
	expected := slope * (median(last) - median(before))
	floor := median(ys)
	material := slope >= leakMinGrowthPerHour && floor > 0 && slope >= leakMinGrowthShare*floor
	half := n / 2
	lateZ := mannKendallZ(xs[half:], ys[half:], theilSen(xs[half:], ys[half:]))
	out.suspect = z >= leakZ && material && rise >= leakTailRatio*expected && lateZ >= leakLateZ
	return out
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
	return median(slopes)
}

func median(v []float64) float64 {
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// mannKendallZ is the Mann-Kendall statistic of ys (in the order of xs) with the variance
// adjusted for autocorrelation (Hamed and Rao 1998): the ranks of the series detrended by
// slope give lag-k autocorrelations; those beyond the 5 % significance bound widen the
// variance. The adjustment never narrows it, so positively correlated minima cannot make a
// trend look surer than independent ones would.
func mannKendallZ(xs, ys []float64, slope float64) float64 {
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
	// Autocorrelation of the detrended series' ranks.
	resid := make([]float64, n)
	for i := range ys {
		resid[i] = ys[i] - slope*xs[i]
	}
	r := ranks(resid)
	mean := (nf + 1) / 2
	var den float64
	for _, v := range r {
		den += (v - mean) * (v - mean)
	}
	factor := 1.0
	if den > 0 {
		bound := 1.96 / math.Sqrt(nf)
		var acc float64
		for k := 1; k < n-2; k++ {
			var num float64
			for i := 0; i+k < n; i++ {
				num += (r[i] - mean) * (r[i+k] - mean)
			}
			rho := num / den
			if math.Abs(rho) <= bound {
				continue
			}
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
