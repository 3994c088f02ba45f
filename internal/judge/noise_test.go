package judge

import (
	"math"
	"strings"
	"testing"
	"time"

	moremath "github.com/aclements/go-moremath/stats"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/result"
)

// Stories of one run against one run with nothing known about the environment: the default.
func TestSingleRunDefaultNoise(t *testing.T) {
	def := DefaultBetweenRun()
	compareWith := func(cur, base *result.Result, noise *BetweenRun) *result.Comparison {
		return CompareRuns([]*result.Result{base}, []*result.Result{cur}, CompareOptions{BetweenRun: noise})
	}
	within := defaultSim
	within.betweenCV = 0
	base := syntheticRun(1, "base", 1, within)

	t.Run("a 120x slowdown is not run-to-run noise: Regressed", func(t *testing.T) {
		c := compareWith(syntheticRun(2, "starved", 120, within), base, &def)
		if c.Change != perfexpv1alpha1.ChangeRegressed || !strings.Contains(c.Noise, "assumed: no calibration") {
			t.Errorf("headline %s, noise %q", c.Change, c.Noise)
		}
	})
	t.Run("+8 % may be: Inconclusive, saying why and how many runs would decide it", func(t *testing.T) {
		c := compareWith(syntheticRun(3, "slower", 1.08, within), base, &def)
		p95 := p95Row(c)
		if c.Change != perfexpv1alpha1.ChangeInconclusive || p95.Change != perfexpv1alpha1.ChangeInconclusive {
			t.Fatalf("headline %s, p95 %s %s", c.Change, p95.Change, p95.Why)
		}
		for _, want := range []string{"one run per side cannot separate", "between-run sd 10 % (assumed: no calibration for this environment, with Student's t on 3 degrees of freedom)", "a calibration"} {
			if !strings.Contains(p95.Why, want) {
				t.Errorf("p95's reason lacks %q: %s", want, p95.Why)
			}
		}
		if !strings.HasPrefix(c.Notes[0], "one run per side: each interval holds") {
			t.Errorf("notes %q", c.Notes)
		}
	})
	t.Run("the same run against itself is never shown the same by default, only by a calibration", func(t *testing.T) {
		if c := compareWith(base, base, &def); c.Change != perfexpv1alpha1.ChangeInconclusive {
			t.Errorf("default: %s", c.Change)
		}
		cal := &BetweenRun{SDPercent: 1, Runs: 12, Source: "aa"}
		c := compareWith(base, base, cal)
		if c.Change != perfexpv1alpha1.ChangeNoMeaningfulChange || !strings.Contains(c.Noise, "between-run sd 1 % (aa, 12 runs)") {
			t.Errorf("calibrated: %s, noise %q", c.Change, c.Noise)
		}
	})
	t.Run("the widening is what the rule says: q * sqrt((h/z)^2 + 2 sd^2)", func(t *testing.T) {
		e := &effect{logScale: true, point: 0.1, low: 0.1 - 0.05, high: 0.1 + 0.05}
		e.up, e.down, _ = thresholds(perfexpv1alpha1.MetricP95, 5, 0)
		e.addBetweenRun(BetweenRun{SDPercent: 3})
		want := zNormal * math.Sqrt((0.05/zNormal)*(0.05/zNormal)+2*0.03*0.03)
		if math.Abs((e.high-e.point)-want) > 1e-12 || math.Abs((e.point-e.low)-want) > 1e-12 {
			t.Errorf("half-widths %v %v, want %v", e.high-e.point, e.point-e.low, want)
		}
		// Estimated from 5 runs, the same sd widens further (Student's t).
		f := &effect{logScale: true, point: 0.1, low: 0.05, high: 0.15}
		f.addBetweenRun(BetweenRun{SDPercent: 3, Runs: 5})
		if f.high-f.point <= want {
			t.Errorf("with 5 runs: %v, not wider than %v", f.high-f.point, want)
		}
	})
	t.Run("error rates are left to their counts", func(t *testing.T) {
		e := &effect{point: 0.2, low: 0.1, high: 0.3}
		e.addBetweenRun(def)
		if e.low != 0.1 || e.high != 0.3 {
			t.Errorf("points widened: [%v, %v]", e.low, e.high)
		}
	})
}

// A sweep arm that starves a service: the system cannot keep up with the planned arrival rate,
// k6 drops iterations while its runners are idle, and the run is the finding.
func TestSaturatedArmIsCompared(t *testing.T) {
	within := defaultSim
	within.betweenCV = 0
	base := syntheticRun(1, "base", 1, within)
	starved := syntheticRun(2, "starved", 120, within)
	starved.Runners = []result.RunnerUse{{Pod: "k6-0", CPUAvg: 0.05, ThrottledPercent: result.Num(0)}}
	s := &starved.Scenarios[0]
	s.DroppedIterations, s.DroppedPercent, s.Rate = result.Count(720), result.Num(3), result.Num(38.8)
	Validity(starved, DefaultMaxErrorRatePercent)
	if starved.Validity != perfexpv1alpha1.Valid || !s.Saturated {
		t.Fatalf("validity %s, saturated %v: %v", starved.Validity, s.Saturated, starved.InvalidReasons)
	}
	def := DefaultBetweenRun()
	c := CompareRuns([]*result.Result{base}, []*result.Result{starved}, CompareOptions{BetweenRun: &def})
	if c.Change != perfexpv1alpha1.ChangeRegressed {
		t.Errorf("headline %s (%s)", c.Change, c.Message)
	}
	found := false
	for _, n := range c.Notes {
		found = found || strings.Contains(n, "scenario s: this arm could not sustain the planned arrival rate (k6 dropped up to 3.0 %")
	}
	if !found {
		t.Errorf("notes %q", c.Notes)
	}
}

// A single-run comparison's note says what an explicit calibration was taken for: a floor under
// the history (which rows the history overruled, or that the history was set aside for
// measuring less), and that it describes one configuration's runs, so a claim holds its error
// rate only if the other side varies no more.
func TestSingleRunCalibrationNote(t *testing.T) {
	within := defaultSim
	within.betweenCV = 0
	base, cur := syntheticRun(1, "base", 1, within), syntheticRun(2, "cur", 1, within)
	now := time.Date(2026, 12, 1, 8, 0, 0, 0, time.UTC)
	history := func(sd float64) *HistoryNoise {
		return &HistoryNoise{Histories: []string{"runs-0123456789abcdef"}, Now: now,
			Series: map[string]SegmentNoise{NoiseKey("s", "", perfexpv1alpha1.MetricP95): {SS: 7 * sd * sd, DF: 7, Oldest: now.Add(-48 * time.Hour), Newest: now.Add(-time.Hour)}}}
	}
	cal := &BetweenRun{SDPercent: 3, Runs: 10, Source: "spec.analysis.betweenRun"}
	note := func(h *HistoryNoise) string {
		c := CompareRuns([]*result.Result{base}, []*result.Result{cur}, CompareOptions{History: h, BetweenRun: cal})
		for _, n := range c.Notes {
			if strings.HasPrefix(n, "one run per side") {
				return n
			}
		}
		t.Fatalf("no single-run note: %q", c.Notes)
		return ""
	}
	const scope = "the calibration measured the runs of one configuration: a claim is error-controlled only if the other side varies no more between runs than they did"
	for _, tc := range []struct {
		name string
		h    *HistoryNoise
		want string
	}{
		{"the history varies more: it overrules the calibration for its row", history(0.05), "the calibration (sd 3 %) is a floor, not an override: 1 row whose PerfHistory varies more took the history's sd"},
		{"the history varies less: the calibration is kept", history(0.01), "the runs' PerfHistory varies less than the calibration (sd 3 %), which is a floor: the calibration was kept"},
		{"no history", nil, scope},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := note(tc.h)
			if !strings.Contains(n, tc.want) || !strings.Contains(n, scope) {
				t.Errorf("note %q lacks %q", n, tc.want)
			}
		})
	}
	def := DefaultBetweenRun()
	if c := CompareRuns([]*result.Result{base}, []*result.Result{cur}, CompareOptions{BetweenRun: &def}); strings.Contains(strings.Join(c.Notes, " "), "the calibration") {
		t.Errorf("the default is no calibration: %q", c.Notes)
	}
}

// The assumed default is 10 % drawn with Student's t on 3 degrees of freedom (Welch-Satterthwaite
// with the bootstrap's own variance): 1.62 times the normal interval at 10 %, so the one at
// 16.2 %, which holds a bad node pool and heavy tails (TestSingleRunNoiseTable).
func TestDefaultBetweenRunIsStudentT3(t *testing.T) {
	e := &effect{logScale: true, point: 0.1, low: 0.1 - 0.02, high: 0.1 + 0.02}
	e.up, e.down, _ = thresholds(perfexpv1alpha1.MetricP95, 5, 0)
	vw := (0.02 / zNormal) * (0.02 / zNormal)
	e.addBetweenRun(DefaultBetweenRun())
	vb := 2 * 0.1 * 0.1
	df := (vw + vb) * (vw + vb) / (vb * vb / 3)
	want := moremath.InvCDF(moremath.TDist{V: df})(0.975) * math.Sqrt(vw+vb)
	if math.Abs((e.high-e.point)-want) > 1e-9 || math.Abs((e.point-e.low)-want) > 1e-9 {
		t.Errorf("half-widths %v %v, want %v (t on %.2f degrees of freedom)", e.high-e.point, e.point-e.low, want, df)
	}
	if normal := zNormal * math.Sqrt(vw+vb); want < 1.6*normal {
		t.Errorf("half-width %v is not 1.6 times the normal's %v", want, normal)
	}
}
