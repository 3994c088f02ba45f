package stats

import (
	"math"
	"math/rand/v2"
	"testing"
)

// The nominal levels of a group-sequential plan hold its error rate exactly: simulated
// standardised sums of i.i.d. normal blocks, looked at after 3, 4, ..., 10 blocks, cross a look's
// boundary for the first time as often as the spending function spends there.
func TestGroupSequentialLevelsMonteCarlo(t *testing.T) {
	const first, last, total, paths = 3, 10, 0.05, 200000
	ls := groupSequentialLevels(first, last, total)
	bounds := make([]float64, len(ls))
	for k, l := range ls {
		bounds[k] = -quantileNorm(l) // upper boundary of Z at look k
	}
	rng := rand.New(rand.NewPCG(1, 2))
	crossed := make([]float64, len(ls))
	for range paths {
		s := 0.0
		for n := 1; n <= last; n++ {
			s += rng.NormFloat64()
			if n < first {
				continue
			}
			if k := n - first; s/math.Sqrt(float64(n)) >= bounds[k] {
				crossed[k]++
				break
			}
		}
	}
	looks := float64(len(ls))
	sum := 0.0
	for k := range crossed {
		want := total * (math.Pow(float64(k+1)/looks, 2) - math.Pow(float64(k)/looks, 2))
		got := crossed[k] / paths
		sum += got
		if se := math.Sqrt(want / paths); math.Abs(got-want) > 4*se+1e-4 {
			t.Errorf("look %d: crossed first in %.4f of paths, spent %.4f", k+1, got, want)
		}
	}
	if math.Abs(sum-total) > 0.002 {
		t.Errorf("crossed at some look in %.4f of paths, want %.3f", sum, total)
	}
	// The looks' correlation is what Bonferroni over looks gave away: the nominal levels sum to
	// more than the error rate they hold.
	levels := 0.0
	for _, l := range ls {
		levels += l
	}
	if levels < 1.5*total {
		t.Errorf("nominal levels sum to %.4f, want well above %.3f", levels, total)
	}
}

// quantileNorm is the standard normal quantile, by bisection on stdNormCDF.
func quantileNorm(p float64) float64 {
	lo, hi := -40.0, 40.0
	for range 200 {
		m := (lo + hi) / 2
		if stdNormCDF(m) < p {
			lo = m
		} else {
			hi = m
		}
	}
	return (lo + hi) / 2
}

// A sequential design's looks are drawn at the exact group-sequential levels of a one-sided 5 %
// per direction: after 10 of at most 10 repeats (first look after 3), the interval is at about
// 93 %, where Bonferroni over looks drew it at 98.8 %. Holm's level for a family of m shrinks
// with m, so Holm's later steps are held to no more than their exact level.
func TestLookLevels(t *testing.T) {
	st := Stopping{First: 3, Max: 10}
	last := st.LookAt(10)
	ls := groupSequentialLevels(3, 10, directionalAlpha)
	if got, want := last.Alpha(), 2*ls[7]; math.Abs(got-want) > 1e-12 {
		t.Fatalf("last look at %.4f, want %.4f", got, want)
	}
	if a := last.Alpha(); a < 0.06 || a > 0.08 {
		t.Errorf("last look's two-sided level %.4f, want about 0.073", a)
	}
	if first := st.LookAt(3).Alpha(); math.Abs(first-2*directionalAlpha/64) > 1e-4 {
		t.Errorf("first look at %.5f, want the spent share %.5f (nothing to correlate with)", first, 2*directionalAlpha/64)
	}
	for b := 3; b <= 10; b++ {
		l := st.LookAt(b)
		for m := 2; m <= 12; m++ {
			if l.AlphaFor(m) > l.AlphaFor(m-1)+1e-12 {
				t.Errorf("look %d: Holm level %.5f for %d exceeds %.5f for %d", l.K, l.AlphaFor(m), m, l.AlphaFor(m-1), m-1)
			}
		}
	}
	// Without the blocks of the first look, the rule spends by Bonferroni over the looks.
	if a, want := (Look{K: 8, Max: 8}).Alpha(), alpha*15/64; math.Abs(a-want) > 1e-12 {
		t.Errorf("Bonferroni look at %.5f, want %.5f", a, want)
	}
}
