package judge

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/judge/stats"
	"github.com/perfexp/perfexp/internal/result"
)

// A sweep whose environment drifts strongly between repeats: pairing within blocks removes the
// blocks' shift that an unpaired comparison counts as noise.
func TestPairedWithinBlocks(t *testing.T) {
	cell := simCell{sd: 0.01, phi: 0.6, blockSD: 0.15}
	rng := rand.New(rand.NewPCG(42, 1))
	paired, unpaired := 0, 0
	const sweeps = 40
	for i := range sweeps {
		cs := cell.sweep(rng, i, []float64{1.25, 1, 1, 1}, 4, nil)
		if cs[0].Method != MethodPaired || !strings.Contains(strings.Join(cs[0].Notes, " "), "paired within their blocks") {
			t.Fatalf("method %s, notes %q", cs[0].Method, cs[0].Notes)
		}
		if c := cs[0].Calibration; c == nil || c.Runs < 2 || c.SDPercent <= 0 || !strings.Contains(strings.Join(cs[0].Notes, " "), fmt.Sprintf("sdPercent: \"%.2f\", runs: %d", c.SDPercent, c.Runs)) {
			t.Fatalf("a blocked design's comparison should carry the calibration its note gives: %+v, notes %q", c, cs[0].Notes)
		}
		if cs[0].Change == perfexpv1alpha1.ChangeRegressed {
			paired++
		}
	}
	// The same kind of sweep compared without its blocks (Welch across the runs).
	for i := range sweeps {
		base, cur := cell.sweepRuns(rand.New(rand.NewPCG(uint64(i), 9)), 1.25, 4)
		if CompareRuns(base, cur, CompareOptions{}).Change == perfexpv1alpha1.ChangeRegressed {
			unpaired++
		}
	}
	t.Logf("+25 %% beside a 15 %% block effect, 4 repeats: Regressed in %d/%d sweeps paired, %d/%d unpaired", paired, sweeps, unpaired, sweeps)
	if paired < sweeps*8/10 || unpaired >= paired {
		t.Errorf("paired %d, unpaired %d of %d", paired, unpaired, sweeps)
	}
}

// sweepRuns are a baseline's and an arm's runs of repeats blocks, each block shifting both.
func (c simCell) sweepRuns(rng *rand.Rand, ratio float64, repeats int) (base, cur []*result.Result) {
	s := c.sim()
	for b := range repeats {
		block := c.blockSD * rng.NormFloat64()
		base = append(base, s.run(rng, "b"+string(rune('0'+b)), math.Exp(c.level(rng)+block)))
		cur = append(cur, s.run(rng, "c"+string(rune('0'+b)), ratio*math.Exp(c.level(rng)+block)))
	}
	return base, cur
}

// The pooled residual of a two-way table is the textbook one: a table with no interaction has
// none, and one cell moved by x leaves x^2 (a-1)(n-1)/(a n) over (a-1)(n-1) degrees of freedom.
func TestPooledResidual(t *testing.T) {
	blocks := []int{0, 1, 2}
	table := []map[int]float64{{0: 1, 1: 2, 2: 3}, {0: 2, 1: 3, 2: 4}}
	if v, df := pooledResidual(table, blocks, func(x float64) float64 { return x }); v != 0 || df != 2 {
		t.Errorf("additive table: %v over %d", v, df)
	}
	table[1][2] = 5
	v, df := pooledResidual(table, blocks, func(x float64) float64 { return x })
	if want := 1.0 * 2 / 6 / 2; math.Abs(v-want) > 1e-12 || df != 2 {
		t.Errorf("one cell moved by 1: %v over %d, want %v", v, df, want)
	}
}

// blockedSweep builds a sweep of arms (ratio of each to the baseline, arm 0 the baseline) in
// len(noise[0]) blocks: run (a, b) has the p95 100 ms x ratio x exp(noise[a][b]), and the run
// given by outlier (arm, block) is slower by the factor slow (a bad node).
func blockedSweep(ratios []float64, noise [][]float64, outlier [2]int, slow float64) ([][]*result.Result, *Design) {
	d := &Design{Blocks: map[string]int{}}
	runs := make([][]*result.Result, len(ratios))
	for a, ratio := range ratios {
		for b, e := range noise[a] {
			p95 := 100 * ratio * math.Exp(e)
			if a == outlier[0] && b == outlier[1] {
				p95 *= slow
			}
			name := fmt.Sprintf("a%d-r%d", a, b)
			errPct := 0.0
			r := &result.Result{Experiment: name, TestID: name, Validity: perfexpv1alpha1.Valid,
				Scenarios: []result.ScenarioResult{{Name: "s", Validity: perfexpv1alpha1.Valid, RequestStats: result.RequestStats{P95: ptr(p95), ErrorPercent: &errPct}}},
				Total:     result.RequestStats{P95: ptr(p95), ErrorPercent: &errPct}}
			d.Blocks[name] = b
			runs[a] = append(runs[a], r)
		}
	}
	d.Arms = runs
	return runs, d
}

// blockNoise is a fixed run-to-run noise of about 2 % (log scale) for 5 arms in 6 blocks.
var blockNoise = [][]float64{
	{0.010, -0.020, 0.015, -0.005, 0.025, -0.015},
	{-0.015, 0.020, -0.010, 0.025, -0.020, 0.005},
	{0.020, -0.010, -0.025, 0.010, 0.005, -0.015},
	{-0.005, 0.015, 0.020, -0.020, -0.010, 0.010},
	{0.000, -0.005, 0.010, -0.015, 0.020, -0.020},
}

// One run of the baseline on a bad node (+25 %) in a sweep whose first arm is 15 % slower: by
// the mean of the differences and the residual mean square it inflates the noise of every arm
// and takes a sixth of its excess off the change, and the arm reads Inconclusive; Huber's fit
// gives the run a bounded weight and the arm reads Regressed. The other arms, unchanged, are
// not claimed either way.
func TestPairedRobustToOneBadRun(t *testing.T) {
	runs, d := blockedSweep([]float64{1, 1.15, 1, 1, 1}, blockNoise, [2]int{0, 2}, 1.25)
	var cs []*result.Comparison
	for a := 1; a < len(runs); a++ {
		cs = append(cs, CompareRuns(runs[0], runs[a], CompareOptions{Design: d}))
	}
	AdjustArms(cs)
	for i, c := range cs {
		m := p95Row(c)
		t.Logf("arm %d: %s, p95 %+.1f %% [%+.1f, %+.1f]", i+1, c.Change, *m.Estimate, *m.Low, *m.High)
	}
	if cs[0].Change != perfexpv1alpha1.ChangeRegressed {
		t.Errorf("the +15 %% arm beside one bad baseline run: %s, want Regressed", cs[0].Change)
	}
	for _, c := range cs[1:] {
		if claimed(c) {
			t.Errorf("an unchanged arm was claimed: %s", c.Change)
		}
	}
}

// An A/A sweep with one arm's run on a bad node (+25 %): no arm may be claimed, the one with
// the slow run included.
func TestPairedRobustAAWithBadRun(t *testing.T) {
	for _, outlier := range [][2]int{{1, 2}, {0, 4}, {3, 0}} {
		runs, d := blockedSweep([]float64{1, 1, 1, 1, 1}, blockNoise, outlier, 1.25)
		var cs []*result.Comparison
		for a := 1; a < len(runs); a++ {
			cs = append(cs, CompareRuns(runs[0], runs[a], CompareOptions{Design: d}))
		}
		AdjustArms(cs)
		for i, c := range cs {
			if claimed(c) {
				m := p95Row(c)
				t.Errorf("bad run %v: arm %d claimed %s, p95 %+.1f %% [%+.1f, %+.1f]", outlier, i+1, c.Change, *m.Estimate, *m.Low, *m.High)
			}
		}
	}
}

// Error rates keep least squares: a burst of errors in one run of an arm is what the error
// rate is there to show, so it is not clipped into "no change".
func TestPairedErrorBurstNotClipped(t *testing.T) {
	runs, d := blockedSweep([]float64{1, 1, 1, 1, 1}, blockNoise, [2]int{-1, -1}, 1)
	for a, rs := range runs {
		for b, r := range rs {
			e := 0.2 + blockNoise[(a+1)%len(blockNoise)][b]
			if a == 1 && b == 3 {
				e = 3
			}
			r.Total.ErrorPercent, r.Scenarios[0].ErrorPercent = ptr(e), ptr(e)
		}
	}
	c := CompareRuns(runs[0], runs[1], CompareOptions{Design: d})
	for _, m := range c.Metrics {
		if m.Kind == perfexpv1alpha1.MetricErrorRate && m.Change == perfexpv1alpha1.ChangeNoMeaningfulChange {
			t.Errorf("%s: an arm with a burst of errors in one run read %s, %+.2f points [%+.2f, %+.2f]", m.Metric, m.Change, *m.Estimate, *m.Low, *m.High)
		}
	}
}

// With psi the identity (k infinite) Huber's fit is least squares: the mean of the paired
// differences, the residual mean square, the variance of the differences.
func TestHuberIsLeastSquaresWithoutClipping(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	for range 50 {
		a, n := 2+rng.IntN(4), 2+rng.IntN(8)
		y := make([][]float64, a)
		table := make([]map[int]float64, a)
		for i := range y {
			table[i] = map[int]float64{}
			for j := range n {
				y[i] = append(y[i], rng.NormFloat64())
				table[i][j] = y[i][j]
			}
		}
		blocks := make([]int, n)
		ds := make([]float64, n)
		var mean float64
		for j := range n {
			blocks[j] = j
			ds[j] = y[1][j] - y[0][j]
			mean += ds[j] / float64(n)
		}
		f, ok := stats.FitHuber(y, math.Inf(1))
		pooled, df := pooledResidual(table, blocks, func(x float64) float64 { return x })
		own := stats.Variance(ds, mean) / float64(n)
		if !ok || df != f.DF || math.Abs(f.Contrast-mean) > 1e-9 || math.Abs(f.PerRun-pooled) > 1e-9 || math.Abs(f.Own-own) > 1e-9 {
			t.Fatalf("%dx%d: fit %+v (ok %v), least squares: change %v, pooled %v over %d, own %v", a, n, f, ok, mean, pooled, df, own)
		}
	}
}

// A calibration ages with the environment: the design's calibration says when its latest Valid
// run ended, so the report can date the betweenRun it suggests.
func TestDesignCalibrationSaysWhenItsRunsEnded(t *testing.T) {
	at := func(h int) time.Time { return time.Date(2026, 11, 29, h, 0, 0, 0, time.UTC) }
	run := func(name string, end time.Time, v perfexpv1alpha1.Validity) *result.Result {
		return &result.Result{Experiment: name, Validity: v, Window: result.WindowInfo{End: end}}
	}
	d := &Design{Arms: [][]*result.Result{
		{run("base-1", at(1), perfexpv1alpha1.Valid), run("base-2", at(3), perfexpv1alpha1.Valid)},
		{run("a-1", at(2), perfexpv1alpha1.Valid), run("a-2", at(4), perfexpv1alpha1.Invalid)},
	}}
	if got := d.newest(); got == nil || !got.Equal(at(3)) {
		t.Errorf("newest %v, want the latest Valid run's end %v (the Invalid run at %v is not in the calibration)", got, at(3), at(4))
	}
	if got := (&Design{Arms: [][]*result.Result{{run("x", time.Time{}, perfexpv1alpha1.Valid)}}}).newest(); got != nil {
		t.Errorf("runs without a window end: newest %v, want none", got)
	}
}
