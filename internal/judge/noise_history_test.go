package judge

import (
	"math"
	"strings"
	"testing"
	"time"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/result"
)

// rowOf is a comparison's row by name.
func rowOf(c *result.Comparison, metric string) *result.MetricComparison {
	for i := range c.Metrics {
		if c.Metrics[i].Metric == metric {
			return &c.Metrics[i]
		}
	}
	return nil
}

// A single-run comparison takes each row's between-run sd from the history when nothing
// explicit is set, the assumed default for rows the history has no estimate of, and an explicit
// value over both.
func TestSingleRunNoiseFromHistory(t *testing.T) {
	assumedBetweenRun = DefaultBetweenRun
	defer func() { assumedBetweenRun = func() BetweenRun { return BetweenRun{} } }()
	within := defaultSim
	within.betweenCV = 0
	base, cur := syntheticRun(1, "base", 1, within), syntheticRun(2, "cur", 1, within)
	now := time.Date(2026, 11, 25, 8, 0, 0, 0, time.UTC)
	hist := &HistoryNoise{Histories: []string{"runs-0123456789abcdef"}, Now: now,
		Series: map[string]SegmentNoise{
			// sd 1 % from 8 runs: 7 degrees of freedom.
			NoiseKey("s", "", perfexpv1alpha1.MetricP95): {SS: 7 * 0.01 * 0.01, DF: 7, Oldest: now.Add(-9 * 24 * time.Hour), Newest: now.Add(-3 * time.Hour)},
		}}
	compare := func(o CompareOptions) *result.Comparison {
		return CompareRuns([]*result.Result{base}, []*result.Result{cur}, o)
	}
	def := compare(CompareOptions{})
	c := compare(CompareOptions{History: hist})
	p95, defP95 := rowOf(c, "s p95"), rowOf(def, "s p95")
	if p95 == nil || defP95 == nil {
		t.Fatalf("no p95 row: %+v", c.Metrics)
	}
	if w, dw := *p95.High-*p95.Low, *defP95.High-*defP95.Low; w >= dw/2 {
		t.Errorf("p95 interval %.1f wide with the history's 1 %%, %.1f with the assumed 10 %%", w, dw)
	}
	for _, want := range []string{"between-run sd from PerfHistory runs-0123456789abcdef, latest segment (8 runs, newest 3 h old, oldest 9 days; Student's t): s/p95 1 %",
		"other rows: between-run sd 10 % (assumed"} {
		if !strings.Contains(c.Noise, want) {
			t.Errorf("noise %q lacks %q", c.Noise, want)
		}
	}
	if !strings.Contains(c.Notes[0], c.Noise) {
		t.Errorf("the single-run note does not say where the noise came from: %q", c.Notes[0])
	}
	// The avg row has no estimate in the history: the default holds it.
	if avg, defAvg := rowOf(c, "s avg"), rowOf(def, "s avg"); *avg.Low != *defAvg.Low || *avg.High != *defAvg.High {
		t.Errorf("avg [%v, %v], want the default's [%v, %v]", *avg.Low, *avg.High, *defAvg.Low, *defAvg.High)
	}
	// An explicit value (or a calibration pasted into the spec) wins.
	explicit := compare(CompareOptions{History: hist, BetweenRun: &BetweenRun{SDPercent: 4, Source: "spec.analysis.betweenRun"}})
	if explicit.Noise != "between-run sd 4 % (spec.analysis.betweenRun)" {
		t.Errorf("explicit: noise %q", explicit.Noise)
	}
}

func TestNoiseSummaryFits(t *testing.T) {
	now := time.Date(2026, 11, 25, 8, 0, 0, 0, time.UTC)
	h := &HistoryNoise{Histories: []string{"runs-0123456789abcdef", "runs-fedcba9876543210"}, Now: now, Series: map[string]SegmentNoise{}}
	used := map[string]BetweenRun{}
	for i := range 40 {
		k := NoiseKey("checkout", "GET /circulation/loans/"+strings.Repeat("x", i), perfexpv1alpha1.MetricP95)
		h.Series[k] = SegmentNoise{SS: 0.01, DF: 9, Oldest: now.Add(-time.Hour), Newest: now}
		used[k] = BetweenRun{SDPercent: 3.3}
	}
	s := h.summary(used, DefaultBetweenRun(), true, noiseMax)
	if len(s) > noiseMax || !strings.Contains(s, "40 rows, 3.3-3.3 %") {
		t.Errorf("summary of %d characters: %s", len(s), s)
	}
}

// A history's sd is of whole runs: the interval's variance is max(vw, 2·sd²), on Student's t
// with the segment's degrees of freedom, not 2·sd² on top of the bootstrap's.
func TestHistoryWideningDecomposes(t *testing.T) {
	tests := []struct {
		name     string
		h, sd    float64 // bootstrap half-width and history sd, log scale
		runs     int
		wantHalf float64
	}{
		{name: "between-run noise dominates: 2 sd² in all", h: 0.02, sd: 0.03, runs: 8, wantHalf: 2.364624251 * math.Sqrt(2*0.03*0.03)},
		{name: "the pair's own noise dominates: the bootstrap's alone", h: 0.10, sd: 0.01, runs: 8, wantHalf: 2.364624251 * 0.10 / zNormal},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := &effect{logScale: true, point: 0, low: -tc.h, high: tc.h}
			e.up, e.down, _ = thresholds(perfexpv1alpha1.MetricP95, 5, 0)
			e.addBetweenRun(BetweenRun{SDPercent: 100 * tc.sd, Runs: tc.runs, WithinIncluded: true})
			if math.Abs(e.high-tc.wantHalf) > 1e-6 || math.Abs(-e.low-tc.wantHalf) > 1e-6 {
				t.Errorf("interval [%v, %v], want ±%v", e.low, e.high, tc.wantHalf)
			}
		})
	}
}
