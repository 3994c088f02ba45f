package stats

import (
	"math"
	"sync"
)

// gsKey identifies one group-sequential plan: looks after first, first+1, ..., last blocks,
// spending total (one-sided) over them.
type gsKey struct {
	first, last int
	total       float64
}

var (
	gsMu    sync.Mutex
	gsCache = map[gsKey][]float64{}
)

// groupSequentialLevels returns the one-sided nominal level of each look of a group-sequential
// design whose looks are taken after first, first+1, ..., last blocks of independent,
// identically distributed increments, with the one-sided error rate total spent over the looks
// as total*((k/K)^2 - ((k-1)/K)^2) at look k of K. Unlike those spent shares, the nominal
// levels account for the looks' correlation (the statistic at n blocks and at m > n blocks
// correlate as sqrt(n/m)): the chance that the standardised sum crosses the boundary at look k
// without having crossed at an earlier one is exactly the share spent there (numerical
// recursion over the sub-density of the sum that has not crossed yet, as Armitage, McPherson
// and Rowe did in 1969; Jennison and Turnbull describe it).
func groupSequentialLevels(first, last int, total float64) []float64 {
	first = max(1, first)
	last = max(first, last)
	key := gsKey{first, last, total}
	gsMu.Lock()
	defer gsMu.Unlock()
	if ls, ok := gsCache[key]; ok {
		return ls
	}
	ls := computeLevels(first, last, total)
	gsCache[key] = ls
	return ls
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

func stdNormCDF(x float64) float64 { return 0.5 * math.Erfc(-x/math.Sqrt2) }

func stdNormPDF(x float64) float64 { return math.Exp(-x*x/2) / math.Sqrt(2*math.Pi) }

func computeLevels(first, last int, total float64) []float64 {
	looks := last - first + 1
	out := make([]float64, looks)
	// The sum of n unit-variance increments, on a grid of step h from -lo upwards.
	const h = 0.01
	lo := -9 * math.Sqrt(float64(last))
	var grid, dens []float64 // grid points and the sub-density of the sum not crossed yet
	spent := 0.0
	prevN := 0
	for k := 1; k <= looks; k++ {
		n := first + k - 1
		share := total*math.Pow(float64(k)/float64(looks), 2) - spent
		spent += share
		step := float64(n - prevN)
		sd := math.Sqrt(step)
		// crossing(b) is the chance of reaching b or beyond at this look, not having crossed before.
		crossing := func(b float64) float64 {
			if k == 1 {
				return 1 - stdNormCDF(b/sd)
			}
			p := 0.0
			for i, u := range grid {
				p += dens[i] * h * (1 - stdNormCDF((b-u)/sd))
			}
			return p
		}
		// Bisection on the boundary (the crossing chance falls as it rises).
		a, b := 0.0, 12*math.Sqrt(float64(n))
		for range 100 {
			m := (a + b) / 2
			if crossing(m) > share {
				a = m
			} else {
				b = m
			}
		}
		bound := (a + b) / 2
		out[k-1] = 1 - stdNormCDF(bound/math.Sqrt(float64(n)))
		// The sub-density at this look, below the boundary. Both grids start at lo with step h,
		// so the kernel is a function of the index difference, and beyond 9 sd it is nil.
		var g, d []float64
		width := int(9 * sd / h)
		kernel := make([]float64, width+1)
		for j := range kernel {
			kernel[j] = h * stdNormPDF(float64(j)*h/sd) / sd
		}
		for j := 0; lo+(float64(j)+0.5)*h < bound; j++ {
			s := lo + (float64(j)+0.5)*h
			v := 0.0
			if k == 1 {
				v = stdNormPDF(s/sd) / sd
			} else {
				for i := max(0, j-width); i < min(len(grid), j+width+1); i++ {
					v += dens[i] * kernel[abs(j-i)]
				}
			}
			g, d = append(g, s), append(d, v)
		}
		grid, dens, prevN = g, d, n
	}
	return out
}
