package stats

import (
	"math"
	"testing"
)

func TestHolm(t *testing.T) {
	tests := []struct {
		name string
		ps   []float64
		want []float64
	}{
		{"one test is not adjusted", []float64{0.03}, []float64{0.03}},
		{"step-down multipliers 4, 3, 2, 1 with monotonicity", []float64{0.01, 0.04, 0.03, 0.005}, []float64{0.03, 0.06, 0.06, 0.02}},
		{"capped at 1", []float64{0.6, 0.7}, []float64{1, 1}},
		{"none", nil, []float64{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := Holm(tc.ps)
			if len(got) != len(tc.want) {
				t.Fatalf("Holm(%v) = %v, want %v", tc.ps, got, tc.want)
			}
			for i := range got {
				if math.Abs(got[i]-tc.want[i]) > 1e-12 {
					t.Errorf("Holm(%v) = %v, want %v", tc.ps, got, tc.want)
				}
			}
		})
	}
}

func TestBenjaminiHochberg(t *testing.T) {
	// Sorted: 0.01, 0.03, 0.04, 0.2 -> 0.04, 0.06, 0.0533, 0.2 -> monotone from the largest down.
	got := BenjaminiHochberg([]float64{0.01, 0.04, 0.03, 0.2})
	want := []float64{0.04, 0.16 / 3, 0.16 / 3, 0.2}
	for i := range want {
		if math.Abs(got[i]-want[i]) > 1e-12 {
			t.Fatalf("q %v, want %v", got, want)
		}
	}
}
