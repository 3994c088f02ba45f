package stats

import (
	"math"

	"github.com/aclements/go-moremath/mathx"
)

// FCDF is the F distribution's CDF with d1 and d2 degrees of freedom, by the regularized
// incomplete beta function (go-moremath's mathx; its stats package has no F distribution).
func FCDF(x, d1, d2 float64) float64 {
	switch {
	case math.IsNaN(x) || x <= 0:
		return 0
	case math.IsInf(x, 1):
		return 1
	}
	// Its continued fraction stops converging for very many degrees of freedom, where 1000
	// is as good as more.
	d1, d2 = math.Min(d1, 1000), math.Min(d2, 1000)
	return mathx.BetaInc(d1*x/(d1*x+d2), d1/2, d2/2)
}

// VarianceAgreement is the two-sided p-value of the F-test that two independent variance
// estimates a (over da degrees of freedom) and b (db) estimate the same variance.
func VarianceAgreement(a float64, da int, b float64, db int) float64 {
	if da < 1 || db < 1 || !(a > 0) || !(b > 0) {
		return 1
	}
	c := FCDF(a/b, float64(da), float64(db))
	return math.Min(1, 2*math.Min(c, 1-c))
}
