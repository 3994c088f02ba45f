package judge

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/analysis/result"
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
