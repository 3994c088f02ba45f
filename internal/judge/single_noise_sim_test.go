package judge

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/result"
)

// The single-run noise table (docs/comparison.md, between <!-- singlenoise:begin --> and
// <!-- singlenoise:end -->): one run per side under the noise of issue 35, with a known truth,
// judged by CompareRuns as a user's comparison is. The cells reuse the simulation table's noise
// model (simCell); the designs are one run per side
//   - "1v1 default": nothing known about the environment (the assumed default);
//   - "1v1 calibrated": a calibration of 10 A/A runs of the baseline's configuration (its sample
//     sd of log p95, or the cell's calSD whatever the truth: an under-stated calibration);
//   - "1v1 calibrated, history": the same calibration beside the PerfHistory of the baseline's
//     configuration (its latest segment: 8 earlier runs), as the operator reads it;
//   - "1v1 bootstrap alone": next to nothing added, the block bootstrap's own interval.
//
// Claims count Regressed or Improved headlines at a true change of 0 and of exactly δ (an error
// at both); power is Regressed at +15 %; coverage is the p95 interval holding 0 at 0.

type singleNoiseCell struct {
	cell    simCell
	designs []string
}

var singleNoiseCells = []singleNoiseCell{
	{simCell{name: "sd 3 %", sd: 0.03, phi: 0.6}, []string{"1v1 default", "1v1 calibrated"}},
	{simCell{name: "sd 10 %", sd: 0.10, phi: 0.6}, []string{"1v1 default"}},
	{simCell{name: "sd 14 %", sd: 0.14, phi: 0.6}, []string{"1v1 default"}},
	{simCell{name: "sd 5 %, t3 tails", sd: 0.05, heavy: true, phi: 0.6}, []string{"1v1 default"}},
	{simCell{name: "sd 10 %, t3 tails", sd: 0.10, heavy: true, phi: 0.6}, []string{"1v1 default"}},
	{simCell{name: "sd 3 %, 10 % bad node +40 %", sd: 0.03, phi: 0.6, badShare: 0.10, badSlowdown: math.Log(1.40)}, []string{"1v1 default"}},
	{simCell{name: "sd 3 %, 20 % bad node +40 %", sd: 0.03, phi: 0.6, badShare: 0.20, badSlowdown: math.Log(1.40)}, []string{"1v1 default", "1v1 calibrated"}},
	{simCell{name: "sd 3 %, 30 % bad node +40 %", sd: 0.03, phi: 0.6, badShare: 0.30, badSlowdown: math.Log(1.40)}, []string{"1v1 default"}},
	{simCell{name: "sd 3 %, 50 % bad node +40 %", sd: 0.03, phi: 0.6, badShare: 0.50, badSlowdown: math.Log(1.40)}, []string{"1v1 default"}},
	{simCell{name: "sd 5 %, calibration says 3 %", sd: 0.05, phi: 0.6, calSD: 0.03}, []string{"1v1 calibrated", "1v1 calibrated, history"}},
	{simCell{name: "sd 5 %, calibration says 3 %, AR(1) 0.95", sd: 0.05, phi: 0.95, calSD: 0.03}, []string{"1v1 calibrated", "1v1 calibrated, history"}},
	{simCell{name: "sd 0, AR(1) 0.95", phi: 0.95}, []string{"1v1 default", "1v1 calibrated", "1v1 bootstrap alone"}},
	{simCell{name: "sd 0, AR(1) 0.6", phi: 0.6}, []string{"1v1 bootstrap alone"}},
	{simCell{name: "sd 3 %, variant's sd 3x", sd: 0.03, phi: 0.6, armSD: 3}, []string{"1v1 default", "1v1 calibrated"}},
	{simCell{name: "sd 16 %", sd: 0.16, phi: 0.6}, []string{"1v1 default"}},
}

// historyOf is the PerfHistory noise of the baseline's configuration: its p95, p50, p99 and mean
// over n earlier whole runs (their within-run noise included), as history.BetweenRunNoise
// estimates it.
func (c simCell) historyOf(rng *rand.Rand, i, n int) *HistoryNoise {
	s := c.sim()
	vals := map[string][]float64{}
	for j := range n {
		r := s.run(rng, fmt.Sprintf("h%d-%d", i, j), math.Exp(c.level(rng)))
		vals["s/p95"] = append(vals["s/p95"], *r.Total.P95)
		vals["s/p50"] = append(vals["s/p50"], *r.Total.P50)
		vals["s/p99"] = append(vals["s/p99"], *r.Total.P99)
		vals["s/avg"] = append(vals["s/avg"], *r.Total.Avg)
	}
	h := &HistoryNoise{Series: map[string]SegmentNoise{}, Histories: []string{"base"}}
	for k, v := range vals {
		ss, df, _ := SegmentVariance(v)
		h.Series[k] = SegmentNoise{SS: ss, DF: df}
	}
	return h
}

// simulateSingle fills one row for one design and cell.
func simulateSingle(c simCell, design string, n int, seed uint64) simRow {
	rng := rand.New(rand.NewPCG(seed, 0x51e6))
	delta := 1 + DefaultMinChangePercent/100
	row := simRow{n: n}
	def := DefaultBetweenRun()
	for i := range n {
		o := CompareOptions{BetweenRun: &def}
		switch design {
		case "1v1 calibrated":
			o.BetweenRun = c.calibrate(rng)
		case "1v1 calibrated, history":
			o.BetweenRun = c.calibrate(rng)
			o.History = c.historyOf(rng, i, 8)
		case "1v1 bootstrap alone":
			o.BetweenRun = &BetweenRun{SDPercent: 1e-9, Source: "none"}
		}
		one := func(ratio float64) *result.Comparison {
			s := c.sim()
			base := s.run(rng, fmt.Sprint("b", i), math.Exp(c.level(rng)))
			cur := s.run(rng, fmt.Sprint("c", i), ratio*math.Exp(c.armLevel(rng, 1)))
			return CompareRuns([]*result.Result{base}, []*result.Result{cur}, o)
		}
		aa := one(1)
		row.claim0 += b2f(claimed(aa))
		row.coverage += b2f(coversZero(aa))
		ad := one(delta)
		row.claimDelta += b2f(claimed(ad))
		row.sameDelta += b2f(ad.Change == perfexpv1alpha1.ChangeNoMeaningfulChange)
		row.power += b2f(one(1.15).Change == perfexpv1alpha1.ChangeRegressed)
	}
	f := float64(n)
	row.claim0, row.claimDelta, row.power, row.coverage, row.sameDelta = row.claim0/f, row.claimDelta/f, row.power/f, row.coverage/f, row.sameDelta/f
	return row
}

// singleNoiseBeyond are the rows known to miss the limits, and why (docs/comparison.md says
// so): the table reports them and does not fail on them.
var singleNoiseBeyond = map[string]string{
	"sd 3 %, variant's sd 3x|1v1 calibrated":                  "a calibration of the baseline's runs cannot see a variant that varies more between runs; one run per side measures nothing of it",
	"sd 5 %, calibration says 3 %|1v1 calibrated":             "with no history nothing in two runs can tell an under-stated calibration",
	"sd 5 %, calibration says 3 %, AR(1) 0.95|1v1 calibrated": "with no history nothing in two runs can tell an under-stated calibration",
	"sd 0, AR(1) 0.6|1v1 bootstrap alone":                     "the bootstrap's own interval, which no comparison uses alone: every single-run comparison adds between-run noise",
	"sd 0, AR(1) 0.95|1v1 bootstrap alone":                    "20 intervals cannot show a wander that slow; the between-run noise every comparison adds holds it",
}

// TestSingleRunNoiseTable checks the single-run rows: with PERFEXP_SINGLENOISE_TABLE=<file> it
// writes the whole table (PERFEXP_SIM_N comparisons per row, default 400); without, a short
// form runs the cells of the assumed default under a bad node pool and heavy tails with 100
// comparisons each. PERFEXP_SINGLENOISE_CELLS (names separated by ";") runs only those cells.
func TestSingleRunNoiseTable(t *testing.T) {
	out := os.Getenv("PERFEXP_SINGLENOISE_TABLE")
	n := 100
	cells := []singleNoiseCell{singleNoiseCells[4], singleNoiseCells[6], singleNoiseCells[7]}
	for i := range cells {
		cells[i].designs = []string{"1v1 default"}
	}
	if out != "" {
		n, cells = 400, singleNoiseCells
		if v, err := strconv.Atoi(os.Getenv("PERFEXP_SIM_N")); err == nil && v > 0 {
			n = v
		}
	} else if testing.Short() {
		t.Skip("simulation")
	}
	if v := os.Getenv("PERFEXP_SINGLENOISE_CELLS"); v != "" {
		// Only these cells (their names, separated by ";"), seeded as in the whole table.
		cells = slices.DeleteFunc(slices.Clone(singleNoiseCells), func(c singleNoiseCell) bool { return !slices.Contains(strings.Split(v, ";"), c.cell.name) })
	}
	var b strings.Builder
	fmt.Fprintf(&b, "| cell | design | claims at 0 | claims at +δ | \"no change\" at +δ | power at +15 %% | p95 interval holds 0 |\n|---|---|---:|---:|---:|---:|---:|\n")
	for _, sc := range cells {
		ci := 0
		for j, x := range singleNoiseCells {
			if x.cell.name == sc.cell.name {
				ci = j
			}
		}
		for _, d := range sc.designs {
			di := map[string]int{"1v1 default": 1, "1v1 calibrated": 2, "1v1 calibrated, history": 3, "1v1 bootstrap alone": 4}[d]
			r := simulateSingle(sc.cell, d, n, uint64(100*ci+di))
			fmt.Fprintf(&b, "| %s | %s | %.1f %% | %.1f %% | %.1f %% | %.0f %% | %.1f %% |\n", sc.cell.name, d, 100*r.claim0, 100*r.claimDelta, 100*r.sameDelta, 100*r.power, 100*r.coverage)
			limit := 0.05 + 2*math.Sqrt(0.05*0.95/float64(n))
			cover := 0.93 - 2*math.Sqrt(0.07*0.93/float64(n))
			if why, known := singleNoiseBeyond[sc.cell.name+"|"+d]; known {
				t.Logf("%s, %s: beyond the limits as known: %s", sc.cell.name, d, why)
			} else if r.claim0 > limit || r.claimDelta+r.sameDelta > limit || r.coverage < cover {
				t.Errorf("%s, %s: claims at 0 %.1f %%, at +δ %.1f %% (no change %.1f %%; limit %.1f %%), coverage %.1f %% (limit %.1f %%)",
					sc.cell.name, d, 100*r.claim0, 100*r.claimDelta, 100*r.sameDelta, 100*limit, 100*r.coverage, 100*cover)
			}
		}
	}
	t.Log("\n" + b.String())
	if out != "" {
		if err := os.WriteFile(out, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
