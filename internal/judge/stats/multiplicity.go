package stats

import "sort"

// ascending is the indexes of ps from the smallest p to the largest (ties in their order).
func ascending(ps []float64) []int {
	order := make([]int, len(ps))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return ps[order[a]] < ps[order[b]] })
	return order
}

// Holm returns Holm's step-down adjusted p-values: the i-th smallest p is multiplied by the
// number of hypotheses not yet rejected (m - i), and the adjusted values are made monotone.
// Rejecting where the adjusted p is below alpha keeps the chance of any false claim in the
// family at alpha, whatever the dependence between the tests (the arms of a sweep share
// their baseline, and the metrics of one run are correlated).
func Holm(ps []float64) []float64 {
	m := len(ps)
	order := ascending(ps)
	out := make([]float64, m)
	running := 0.0
	for rank, i := range order {
		adj := min(1, float64(m-rank)*ps[i])
		running = max(running, adj)
		out[i] = running
	}
	return out
}

// BenjaminiHochberg returns the Benjamini-Hochberg adjusted p-values (q-values): the i-th
// smallest p times m/i, made monotone from the largest down. Rejecting where q is below alpha
// keeps the expected share of false claims among the claimed rows at alpha (for independent or
// positively dependent tests, as the rows of one run are).
func BenjaminiHochberg(ps []float64) []float64 {
	m := len(ps)
	order := ascending(ps)
	out := make([]float64, m)
	running := 1.0
	for rank := m - 1; rank >= 0; rank-- {
		i := order[rank]
		running = min(running, ps[i]*float64(m)/float64(rank+1))
		out[i] = running
	}
	return out
}
