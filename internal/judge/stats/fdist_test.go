package stats

import (
	"math"
	"testing"
)

// The F distribution's CDF: a known quantile.
func TestFCDF(t *testing.T) {
	// F(5, 10): the 95th percentile is 3.326.
	if c := FCDF(3.326, 5, 10); math.Abs(c-0.95) > 1e-3 {
		t.Errorf("F(5,10) CDF at 3.326: %v", c)
	}
}

// The F distribution's CDF at its edges: no spread at all on one side, and many degrees of
// freedom.
func TestFCDFEdges(t *testing.T) {
	for _, tc := range []struct{ x, d1, d2, want float64 }{
		{math.Inf(1), 2, 8, 1}, {0, 2, 8, 0}, {math.NaN(), 2, 8, 0}, {1, 5000, 5000, 0.5},
	} {
		if got := FCDF(tc.x, tc.d1, tc.d2); math.Abs(got-tc.want) > 0.01 {
			t.Errorf("FCDF(%v, %v, %v) = %v, want %v", tc.x, tc.d1, tc.d2, got, tc.want)
		}
	}
}
