package result

import (
	"math"
	"testing"
)

func hist(buckets ...[3]float64) *Histogram {
	h := NewHistogram()
	for _, b := range buckets {
		h.buckets[bucketKey{lower: b[0], upper: b[1]}] += b[2]
		h.Count += b[2]
		h.Sum += b[2] * math.Sqrt(b[0]*b[1])
	}
	return h
}

func TestHistogramQuantile(t *testing.T) {
	g := math.Pow(2, 1.0/8)
	tests := []struct {
		name   string
		h      *Histogram
		q      float64
		lo, hi float64 // the estimate must lie in [lo, hi]
		ok     bool
	}{
		{"empty", NewHistogram(), 0.5, 0, 0, false},
		{"one bucket: inside it", hist([3]float64{1, g, 10}), 0.95, 1, g, true},
		{"rank lands in the second bucket", hist([3]float64{1, g, 90}, [3]float64{g, g * g, 10}), 0.95, g, g * g, true},
		{"rank exactly at a bucket's end stays in it", hist([3]float64{1, g, 50}, [3]float64{g, g * g, 50}), 0.5, 1, g, true},
		{"p100 is the top bucket", hist([3]float64{1, g, 50}, [3]float64{4, 4 * g, 1}), 1, 4, 4 * g, true},
		{"zero bucket interpolates linearly", hist([3]float64{-1e-9, 1e-9, 10}), 0.5, -1e-9, 1e-9, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			v, ok := tc.h.Quantile(tc.q)
			if ok != tc.ok {
				t.Fatalf("ok = %v, want %v", ok, tc.ok)
			}
			if ok && (v < tc.lo || v > tc.hi) {
				t.Errorf("q%.2f = %g, want within [%g, %g]", tc.q, v, tc.lo, tc.hi)
			}
		})
	}
}

func TestHistogramSubtractAndMerge(t *testing.T) {
	a := hist([3]float64{1, 2, 5}, [3]float64{2, 4, 5})
	b := hist([3]float64{1, 2, 3})
	d := a.Clone()
	d.Sub(b)
	if d.Count != 7 || d.buckets[bucketKey{lower: 1, upper: 2}] != 2 || !d.Consistent() {
		t.Errorf("a-b = count %g buckets %v", d.Count, d.buckets)
	}
	d.Sub(a)
	if d.Consistent() {
		t.Error("a histogram that went below zero is reported consistent")
	}
	m := NewHistogram()
	m.Add(a)
	m.Add(b)
	if mx, _ := m.MaxBound(); m.Count != 13 || mx != 4 {
		t.Errorf("merge: count %g max %g", m.Count, mx)
	}
}
