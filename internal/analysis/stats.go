package analysis

import "math"

// linearFit is ordinary least squares: y = slope*x + intercept, with the coefficient of
// determination R². Written out because it is four sums; go-moremath offers no line fit.
func linearFit(xs, ys []float64) (slope, intercept, r2 float64) {
	n := float64(len(xs))
	if n < 2 {
		return math.NaN(), math.NaN(), math.NaN()
	}
	var sx, sy float64
	for i := range xs {
		sx += xs[i]
		sy += ys[i]
	}
	mx, my := sx/n, sy/n
	var sxx, sxy, syy float64
	for i := range xs {
		dx, dy := xs[i]-mx, ys[i]-my
		sxx += dx * dx
		sxy += dx * dy
		syy += dy * dy
	}
	if sxx == 0 {
		return math.NaN(), math.NaN(), math.NaN()
	}
	slope = sxy / sxx
	intercept = my - slope*mx
	switch syy {
	case 0:
		r2 = 1 // a flat line fits a flat series perfectly
	default:
		r2 = sxy * sxy / (sxx * syy)
	}
	return slope, intercept, r2
}
