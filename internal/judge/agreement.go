package judge

import (
	"fmt"
	"math"

	"github.com/perfexp/perfexp/internal/judge/stats"
)

// A calibration (spec.analysis.betweenRun) is a measurement of the run-to-run noise with its
// own degrees of freedom, taken at another time than the runs it is used for; it is not the
// truth. Pooled as if exact, one that under-states the noise (3 % given where the runs vary by
// 5 %) narrowed every interval and overrode the design's own runs that disagreed. So it is a
// floor: where the runs measure more noise than it says, the runs' estimate is used, with its
// own degrees of freedom; where they measure less, it is pooled with them when an F-test of
// the two variances finds them in agreement (the runs gain its degrees of freedom), else it
// is used alone, the larger.
//
// Pooling whenever the F-test agreed was simulated too: with 3 repeats the runs' 2 degrees of
// freedom cannot tell 3 % from 5 %, and a one-arm sequential sweep at exactly δ still read
// Regressed in 8.5 % of sweeps (the floor: 7.0 %, no calibration 6.7 %, over the same 600
// sweeps of noise_real_test.go's model). The floor costs a correct calibration little: 4.6
// repeats to decide a +15 % arm at 3 % noise instead of 4.2.

// agreementLevel is the two-sided level of the F-test that decides whether a calibration larger
// than a design's own estimate of the run-to-run variance agrees with it: a pretest is there
// to catch a disagreement, so it is lenient, 20 %, not 5 %.
const agreementLevel = 0.2

// withCalibration combines a design's run-to-run variance v (over df degrees of freedom, on the
// log scale) with a calibration's: the design's when it is the larger; else pooled by their
// degrees of freedom when an F-test finds them in agreement, or the calibration's alone. With
// no degrees of freedom of its own the design takes the calibration's. It says which, for the
// report.
func withCalibration(v float64, df int, cal BetweenRun) (float64, int, string) {
	dc := cal.Runs - 1
	sd := cal.SDPercent / 100
	c := sd * sd
	if df == 0 {
		return c, dc, fmt.Sprintf("run-to-run sd from the calibration alone (%.2f %%, %d runs): these runs cannot estimate it", cal.SDPercent, cal.Runs)
	}
	mine := 100 * math.Sqrt(v)
	if v > c {
		return v, df, fmt.Sprintf("calibration not used: these runs vary more (run-to-run sd %.2f %% over %d degrees of freedom) than it says (%.2f %% over %d runs); a calibration is a floor, so the runs' own estimate was used",
			mine, df, cal.SDPercent, cal.Runs)
	}
	p := stats.VarianceAgreement(v, df, c, dc)
	if p >= agreementLevel {
		pooled := (float64(dc)*c + float64(df)*v) / float64(dc+df)
		return pooled, df + dc, fmt.Sprintf("calibration pooled with these runs' run-to-run sd (%.2f %% over %d runs; these runs %.2f %% over %d degrees of freedom; an F-test finds them in agreement, p %.2g): %.2f %%",
			cal.SDPercent, cal.Runs, mine, df, p, 100*math.Sqrt(pooled))
	}
	return c, dc, fmt.Sprintf("these runs' run-to-run sd (%.2f %% over %d degrees of freedom) is below the calibration's (%.2f %% over %d runs; F-test p %.2g): the calibration, the larger, was used",
		mine, df, cal.SDPercent, cal.Runs, p)
}
