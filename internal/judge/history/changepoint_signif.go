package history

import (
	"math"
	"math/rand/v2"
	"sort"
	"sync"

	moremath "github.com/aclements/go-moremath/stats"
)

// The significance of a change point. The split a search reports is the one that looks most
// like a change, so a t test taken at that split is not a valid p-value: with it, 13.5 % of
// flat 100-run series with AR(1) 0.5 drift showed a change point at the old default level of
// 0.001 (TestChangePointSimulation on the old code). The test here asks instead whether the
// span holds a change anywhere: its statistic is the largest two-sample t of all the splits
// the search may choose (at least MinSegment points a side), and its null distribution is that
// of the same maximum in a series without change.
//
// Runs of a history are not independent: nightly drift makes neighbours alike, and under
// AR(1) noise a plain permutation test of a flat series finds changes too often (its
// permutations break the autocorrelation the real series keeps). Two remedies were weighed: a
// block permutation, which keeps short-range dependence inside blocks but needs many blocks (a
// history of 8-20 runs has 2-5) and so cannot give a short history a small p-value; and
// prewhitening, which estimates the AR(1) coefficient phi and tests the innovations
// x_t - phi x_{t-1}, which are independent when the model holds. perfexp prewhitens: it works
// for 8 runs as for 200. A step in x stays a step in the innovations (of height (1-phi) times
// the step after its first run), so the same maximum-t statistic finds it.
//
// phi must not be underestimated (left-over autocorrelation reads as change) nor much
// overestimated (whitening then eats the step). The search starts from the lower of two
// estimates: the lag-1 autocorrelation of the residuals around the best split's two means
// (ar1Sums; around one mean a real step would read as autocorrelation), which a second change
// inflates, and the ratio of the spreads of differences at lags 2 and 1 (robustPhi), which no
// change pulls but which is noisier. Each is corrected for its small-sample bias towards zero
// and taken one standard error up (upperPhi); once changes are found, phi is estimated again
// around them and the search repeated. All within [0, phiMax].
//
// The null distribution of the maximum t of independent normal innovations does not depend on
// their mean or spread, only on the span's length and MinSegment: it is simulated once per
// length (maxTNullDraws series, seeded by the length, so results are deterministic) and kept.
// Beyond the simulation's resolution (no simulated maximum as large) the p-value is the
// Bonferroni bound over the splits, which is close to exact that far in the tail.

// maxTNullDraws is the number of simulated flat series per span length; maxTNullCoarse the
// number a first, cheaper look uses. A span whose p-value by the coarse null is above
// maxTNullCoarseP keeps it (most spans a search tests hold no change); the others are looked
// up in the full null. Either p-value is a valid Monte Carlo p-value, and a p below
// maxTNullCoarseP always comes from the full null, so the rule keeps the level.
const (
	maxTNullDraws   = 3999
	maxTNullCoarse  = 199
	maxTNullCoarseP = 0.2
)

// phiMax bounds the estimated AR(1) coefficient: nearer 1 a series is a random walk, whose
// innovations are its differences.
const phiMax = 0.95

var (
	maxTNullMu sync.Mutex
	maxTNulls  = map[[3]int][]float64{}
)

// maxTNull is the sorted simulated null distribution of maxT for n independent standard normal
// values with at least minSeg a side, from draws simulated series.
func maxTNull(n, minSeg, draws int) []float64 {
	key := [3]int{n, minSeg, draws}
	maxTNullMu.Lock()
	defer maxTNullMu.Unlock()
	if v, ok := maxTNulls[key]; ok {
		return v
	}
	rng := rand.New(rand.NewPCG(uint64(n), uint64(minSeg)))
	xs := make([]float64, n)
	out := make([]float64, draws)
	for i := range out {
		for j := range xs {
			xs[j] = rng.NormFloat64()
		}
		out[i], _ = maxT(xs, minSeg)
	}
	sort.Float64s(out)
	maxTNulls[key] = out
	return out
}

// maxT is the largest |t| of Student's pooled two-sample t test over the splits of xs with at
// least minSeg points a side, and the split where it is reached (-1 when none).
func maxT(xs []float64, minSeg int) (float64, int) {
	n := len(xs)
	var sum, sumSq float64
	for _, x := range xs {
		sum += x
	}
	mean := sum / float64(n)
	for _, x := range xs {
		sumSq += (x - mean) * (x - mean)
	}
	best, at := 0.0, -1
	var left float64 // sum of centred values before k
	for k := 1; k < n; k++ {
		left += xs[k-1] - mean
		if k < minSeg || n-k < minSeg {
			continue
		}
		m1, m2 := float64(k), float64(n-k)
		// Between-group sum of squares of the split; the rest is within.
		between := left * left * float64(n) / (m1 * m2)
		within := sumSq - between
		t := math.Inf(1)
		if within > 1e-12*sumSq {
			t = math.Sqrt(between / (within / float64(n-2)))
		} else if between == 0 {
			t = 0
		}
		if t > best || at < 0 {
			best, at = t, k
		}
	}
	return best, at
}

// phiBiasScale scales the small-sample bias correction of the AR(1) estimate. Residuals
// around one fitted mean put the lag-1 autocorrelation about (1+3 phi)/n low (Kendall 1954);
// around two means at the split that fits best it is about three times that in simulation,
// because the chosen split absorbs part of the drift; 5 was chosen with
// TestChangePointSimulation (flat series at AR(1) 0.5 and 0.9 stay under the level, a step's
// power unchanged).
const phiBiasScale = 5

// ar1Sums adds the lag-1 cross products and squares of the residuals of xs around the means
// either side of its best split.
func ar1Sums(xs []float64, minSeg int) (num, den float64) {
	if len(xs) < 2 {
		return 0, 0
	}
	at := 0
	if len(xs) >= 2*minSeg {
		_, at = maxT(xs, minSeg)
	}
	if at <= 0 {
		at = len(xs) // no split: residuals around one mean
	}
	resid := make([]float64, len(xs))
	ml, _ := meanVar(xs[:at])
	for i := range at {
		resid[i] = xs[i] - ml
	}
	if at < len(xs) {
		mr, _ := meanVar(xs[at:])
		for i := at; i < len(xs); i++ {
			resid[i] = xs[i] - mr
		}
	}
	for i, r := range resid {
		den += r * r
		if i > 0 {
			num += r * resid[i-1]
		}
	}
	return num, den
}

// estimatePhi is the bias-corrected AR(1) coefficient from the sums of ar1Sums over n points,
// within [0, phiMax]: phi solves phi = r + c(1+3 phi)/n for the raw estimate r.
func estimatePhi(num, den float64, n int) float64 {
	if den <= 0 || n < 2 {
		return 0
	}
	r := num / den
	// Below 50 points the correction is capped: for short series it would grow larger than the
	// estimate can bear.
	c := min(phiBiasScale/float64(n), 0.1)
	phi := (r + c) / max(1-3*c, 0.25)
	return min(max(phi, 0), phiMax)
}

// robustPhi estimates the AR(1) coefficient from the spread of differences at lags 1 and 2,
// which for AR(1) noise are in the ratio Var(x_t - x_{t-2}) / Var(x_t - x_{t-1}) = 1 + phi. A
// change of level moves one difference at lag 1 and two at lag 2, so robust spreads (the
// median absolute deviation) are not pulled by a few changes, however many the series holds:
// residuals around fitted means would need the changes found first, and around the wrong
// means they make the noise look more autocorrelated than it is. Differences do not cross
// the given cuts (confirmed changes).
func robustPhi(xs []float64, cuts []int) float64 {
	var d1, d2 []float64
	for i := 0; i+1 < len(cuts); i++ {
		seg := xs[cuts[i]:cuts[i+1]]
		for j := 1; j < len(seg); j++ {
			d1 = append(d1, seg[j]-seg[j-1])
			if j >= 2 {
				d2 = append(d2, seg[j]-seg[j-2])
			}
		}
	}
	if len(d2) < 3 {
		return 0
	}
	// A change moves one difference at lag 1 and two at lag 2: twice as many are left out at
	// lag 2.
	t1 := max(1, int(math.Ceil(trimShare*float64(len(d1)))))
	s1, s2 := trimmedMeanSquare(d1, t1), trimmedMeanSquare(d2, 2*t1)
	if s1 == 0 {
		return 0
	}
	return min(max(s2/s1-1, 0), phiMax)
}

// trimShare is the share of the largest differences left out of their spread.
const trimShare = 0.1

// trimmedMeanSquare is the mean square of v without its drop largest by size, divided by what
// that trimming leaves of a normal variance, so that both lags estimate their variance.
func trimmedMeanSquare(v []float64, drop int) float64 {
	sq := make([]float64, len(v))
	for i, x := range v {
		sq[i] = x * x
	}
	sort.Float64s(sq)
	keep := len(sq) - drop
	if keep < 2 {
		return 0
	}
	var sum float64
	for _, x := range sq[:keep] {
		sum += x
	}
	// For a standard normal X and q its two-sided quantile leaving out the share f,
	// E[X² | |X| < q] = 1 - 2 q φ(q) / (1-f).
	f := float64(drop) / float64(len(sq))
	q := moremath.StdNormal.InvCDF(1 - f/2)
	return sum / float64(keep) / (1 - 2*q*moremath.StdNormal.PDF(q)/(1-f))
}

// phiUpperZ is how many standard errors are added to the estimate of phi. An estimate that
// falls short of the true phi leaves autocorrelation in the innovations and makes the test
// find changes in drift; one that overshoots only costs some power. So the test uses an upper
// confidence bound rather than the estimate: at 100 runs and phi 0.5 the estimate alone
// gave 5.8 % false change points (no magnitude floor), the bound one standard error up
// keeps it under 5 %.
const phiUpperZ = 1

// upperPhi is phi plus phiUpperZ of its standard error sqrt((1-phi²)/n), within [0, phiMax].
func upperPhi(phi float64, n int) float64 {
	if n < 2 {
		return phi
	}
	return min(phi+phiUpperZ*math.Sqrt((1-phi*phi)/float64(n)), phiMax)
}

// whiten returns the AR(1) innovations of xs under coefficient phi.
func whiten(xs []float64, phi float64) []float64 {
	n := len(xs)
	mean, _ := meanVar(xs)
	out := make([]float64, n)
	out[0] = math.Sqrt(1-phi*phi) * (xs[0] - mean)
	for i := 1; i < n; i++ {
		out[i] = (xs[i] - mean) - phi*(xs[i-1]-mean)
	}
	return out
}

// spanPValue is the p-value of "no change in xs": the maximum t of its values prewhitened with
// phi against maxTNull.
func spanPValue(xs []float64, phi float64, minSeg int) float64 {
	n := len(xs)
	if n < 2*minSeg || n < 3 {
		return 1
	}
	e := whiten(xs, phi)
	obs, _ := maxT(e, minSeg)
	if math.IsInf(obs, 1) {
		return 0
	}
	exceed := func(null []float64) (int, float64) {
		g := len(null) - sort.SearchFloat64s(null, obs)
		return g, float64(g+1) / float64(len(null)+1)
	}
	if _, p := exceed(maxTNull(n, minSeg, maxTNullCoarse)); p > maxTNullCoarseP {
		return p
	}
	g, p := exceed(maxTNull(n, minSeg, maxTNullDraws))
	if g == 0 {
		p = min(p, bonferroniMaxT(e, minSeg))
	}
	return p
}

// bonferroniMaxT bounds the p-value of the maximum t by the sum of the splits' two-sided p.
func bonferroniMaxT(xs []float64, minSeg int) float64 {
	n := len(xs)
	dist := moremath.TDist{V: float64(n - 2)}
	var sum float64
	for k := minSeg; k <= n-minSeg; k++ {
		ml, vl := meanVar(xs[:k])
		mr, vr := meanVar(xs[k:])
		pooled := (float64(k-1)*vl + float64(n-k-1)*vr) / float64(n-2)
		se := math.Sqrt(pooled * (1/float64(k) + 1/float64(n-k)))
		if se == 0 {
			continue
		}
		sum += 2 * (1 - dist.CDF(math.Abs(ml-mr)/se))
	}
	return min(1, sum)
}
