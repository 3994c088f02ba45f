package stats

import (
	"math"
	"sort"
)

// Logs is the natural log of every value, or nil if one is not positive (no ratio).
func Logs(vs []float64) []float64 {
	out := make([]float64, len(vs))
	for i, v := range vs {
		if v <= 0 {
			return nil
		}
		out[i] = math.Log(v)
	}
	return out
}

// Variance is the sample variance of vs around m (n - 1 in the denominator); 0 below two values.
func Variance(vs []float64, m float64) float64 {
	if len(vs) < 2 {
		return 0
	}
	var s float64
	for _, v := range vs {
		s += (v - m) * (v - m)
	}
	return s / float64(len(vs)-1)
}

// Median is the median of v, leaving v as it is.
func Median(v []float64) float64 {
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}
