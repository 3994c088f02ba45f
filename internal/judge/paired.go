package judge

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"time"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/judge/stats"
	"github.com/perfexp/perfexp/internal/result"
)

// MethodPaired compares repeated runs within the blocks they ran in (a sweep's repeats).
const MethodPaired = "Paired"

// Design is how the runs of a blocked comparison ran: a sweep is a randomised complete block
// design, each repeat a block in which every arm runs once. Pairing an arm's run with the
// baseline's run of the same block removes what the environment did to both (drift across the
// sweep, a slower hour), which an unpaired comparison counts as noise.
type Design struct {
	// Blocks maps each run (its experiment name) to its block.
	Blocks map[string]int
	// Arms are the runs of every arm of the design, the baseline's included; their residuals
	// after the arm and block effects are removed give a pooled estimate of the run-to-run
	// noise with more degrees of freedom than one arm's few pairs.
	Arms [][]*result.Result
	// FixedOrder says every block ran its arms in the same declared order (a sweep's order:
	// Interleaved): position in the block is then the arm, so a drift within each block, or
	// the carry-over of the run before, is read as the arm's change, and no paired analysis
	// can take it out (position and arm are the same column of the design).
	FixedOrder bool
}

// fixedOrderNote warns that a fixed order confounds drift with the arms. Simulated (4 arms, a
// drift of +3 % per block, docs/comparison.md), 19 % of sequential sweeps claimed a change of
// exactly δ, against at most 5 % in a random order.
const fixedOrderNote = "NOT ERROR-CONTROLLED: every repeat ran its arms in the same order (order: Interleaved), so a drift within each repeat, or what one run leaves to the next, " +
	"is read as a change of the later arms, and pairing cannot take it out; in simulation a drift of +3 % per repeat made 19 % of 4-arm sequential sweeps claim a change of exactly δ (at most 5 % in a random order). Use order: Randomized (the default) for a comparison"

// newest is when the latest Valid run of the design ended its measured window; nil when none
// says.
func (d *Design) newest() *time.Time {
	var t time.Time
	for _, rs := range d.Arms {
		for _, r := range rs {
			if r != nil && r.Validity == perfexpv1alpha1.Valid && r.Window.End.After(t) {
				t = r.Window.End
			}
		}
	}
	if t.IsZero() {
		return nil
	}
	t = t.UTC()
	return &t
}

// byBlock is one arm's value of a row in each block.
func (d *Design) byBlock(rs []*result.Result, w row) map[int]float64 {
	out := map[int]float64{}
	for _, r := range rs {
		b, ok := d.Blocks[r.Experiment]
		if !ok || r.Validity != perfexpv1alpha1.Valid {
			continue
		}
		if v := w.compared(r, true); v != nil && result.Finite(*v) {
			out[b] = *v
		}
	}
	return out
}

// pairs are the blocks both sides have, in order.
func pairs(cur, base map[int]float64) []int {
	var out []int
	for b := range base {
		if _, ok := cur[b]; ok {
			out = append(out, b)
		}
	}
	sort.Ints(out)
	return out
}

// pooledResidual is the run-to-run variance of one run on the decision scale, from the
// two-way table of every arm that has the row in every one of the blocks (arm + block + noise):
// the residual mean square, with (arms-1)(blocks-1) degrees of freedom. 0, 0 with fewer than
// two such arms.
func pooledResidual(table []map[int]float64, blocks []int, transform func(float64) float64) (float64, int) {
	var rows [][]float64
	for _, byB := range table {
		row := make([]float64, 0, len(blocks))
		for _, b := range blocks {
			v, ok := byB[b]
			if !ok {
				break
			}
			row = append(row, transform(v))
		}
		if len(row) == len(blocks) {
			rows = append(rows, row)
		}
	}
	a, n := len(rows), len(blocks)
	if a < 2 || n < 2 {
		return 0, 0
	}
	armMean := make([]float64, a)
	blockMean := make([]float64, n)
	var grand float64
	for i, row := range rows {
		for j, v := range row {
			armMean[i] += v / float64(n)
			blockMean[j] += v / float64(a)
			grand += v / float64(a*n)
		}
	}
	var ss float64
	for i, row := range rows {
		for j, v := range row {
			r := v - armMean[i] - blockMean[j] + grand
			ss += r * r
		}
	}
	df := (a - 1) * (n - 1)
	return ss / float64(df), df
}

// pairedEffect estimates an arm's change from the differences within blocks, of logs (of
// values, for error rates), with a t interval. On the log scale the change is the arm's effect
// minus the baseline's in Huber's M-estimate of the two-way table (arm + block) of every arm
// with the row in each of the pair's blocks (stats.FitHuber): the mean of the paired differences,
// except that a run far off its arm's and block's level (a bad node) counts with a bounded
// weight; error rates keep least squares.
//
// Its variance is the larger of two estimates:
//   - the pooled one, 2 sigma^2 / n with (arms-1)(blocks-1) degrees of freedom: sigma^2 the
//     fit's run-to-run variance (Huber's counterpart of the residual mean square), combined
//     with a calibration's estimate when one was given (withCalibration: the calibration is a
//     floor);
//   - the arm's own, from its and the baseline's paired differences alone
//     (stats.TwoWayHuber.Own, each row clipped at its own scale). When an F-test against the
//     residual of the rest of the design finds the arm noisier (noisierLevel), the interval is
//     the paired t on the arm's own n-1 degrees of freedom, which holds whatever the other
//     arms' noise: the arm is judged by its own noise, not by its quieter neighbours'.
//     Otherwise the larger variance keeps the pooled degrees of freedom.
//
// Below robustMinBlocks blocks Huber's scale rests on too few residuals and can collapse (two
// of a row's three runs on a bad node make the good one the outlier): each variance is then
// the larger of the robust and the least-squares one, the arm's own taken from the unclipped
// differences. Least squares (error rates, and a table Huber's fit cannot take) is the mean of
// the differences, the residual mean square (pooledResidual) and the variance of the
// differences. The second value is why the blocks cannot be paired ("" when they can).
func (d *Design) pairedEffect(cur, base []*result.Result, w row, minChange float64, calibration *BetweenRun) (*effect, string) {
	vc, vb := d.byBlock(cur, w), d.byBlock(base, w)
	blocks := pairs(vc, vb)
	if len(blocks) < 2 {
		return nil, fmt.Sprintf("only %d block(s) hold a valid run of both the arm and the baseline", len(blocks))
	}
	var bm float64
	for _, b := range blocks {
		bm += vb[b] / float64(len(blocks))
	}
	up, down, logScale := thresholds(w.kind, minChange, bm)
	tr := func(v float64) float64 { return v }
	if logScale {
		for _, b := range blocks {
			if vc[b] <= 0 || vb[b] <= 0 {
				return nil, "a run has a zero value: no ratio"
			}
		}
		tr = math.Log
	}
	n := float64(len(blocks))
	e := &effect{logScale: logScale, up: up, down: down, n: len(blocks), baseN: len(blocks)}
	ds := make([]float64, len(blocks))
	for i, b := range blocks {
		ds[i] = tr(vc[b]) - tr(vb[b])
		e.point += ds[i] / n
	}
	own := stats.Variance(ds, e.point) / n
	raw := own
	table := make([]map[int]float64, 0, len(d.Arms))
	// others is the table without the arm: the noise of the rest of the design, which the
	// arm's own is tested against (a noisier arm inflates the pooled estimate it is part of).
	others := make([]map[int]float64, 0, len(d.Arms))
	mine := map[string]bool{}
	for _, r := range cur {
		mine[r.Experiment] = true
	}
	for _, rs := range d.Arms {
		byB := d.byBlock(rs, w)
		table = append(table, byB)
		if !slices.ContainsFunc(rs, func(r *result.Result) bool { return mine[r.Experiment] }) {
			others = append(others, byB)
		}
	}
	pooled, df := pooledResidual(table, blocks, tr)
	rest, restDF := pooledResidual(others, blocks, tr)
	if logScale {
		// Huber's fit of the table (stats.FitHuber): a run far off its arm's and block's level
		// counts with a bounded weight in the change, the pooled noise and the arm's own.
		// Error rates (points) keep least squares: a burst of errors in one run is what an
		// error rate is there to show, and near zero their spread is skewed, where Huber's
		// estimate is not the difference of the means.
		if f, ok := stats.FitHuber(d.robustTable(cur, base, w, blocks, tr), stats.HuberK); ok {
			lsPooled := pooled
			e.point, pooled, own, raw, df = f.Contrast, f.PerRun, f.Own, f.Raw, f.DF
			if len(blocks) < robustMinBlocks {
				pooled, own = math.Max(pooled, lsPooled), math.Max(own, f.Raw)
			}
		}
	}
	if cal := calibration; cal != nil && cal.Runs >= 2 && logScale && !w.transaction() {
		pooled, df, e.noise = withCalibration(pooled, df, *cal)
	}
	v, vdf := 2*pooled/n, float64(df)
	if df == 0 {
		vdf = n - 1
	}
	if own > v {
		if df == 0 || restDF > 0 && 1-stats.FCDF(own/(2*rest/n), n-1, float64(restDF)) < noisierLevel {
			// The arm's own paired differences are noisier than the rest of the design, by
			// an F-test against the residual of the other arms and the baseline: the paired
			// t, on their own n-1 degrees of freedom, and on their unclipped differences when
			// those are the larger (with an arm's own few differences a clipped variance runs
			// small, and the arm's noise is the point).
			own, vdf = math.Max(own, raw), n-1
			e.ownNoise = df > 0
		}
		v = own
	}
	e.tInterval(math.Sqrt(v), vdf)
	return e, ""
}

// pairedNoiseNotes say, for a primary row, how its paired interval's noise was estimated when
// it was not simply pooled over the design's arms: a calibration's part (withCalibration),
// and an arm judged by its own, larger, noise.
func pairedNoiseNotes(label string, e *effect) []string {
	var out []string
	if e.noise != "" {
		out = append(out, label+": "+e.noise)
	}
	if e.ownNoise {
		out = append(out, fmt.Sprintf("%s: this arm's runs vary more than the design's: its interval rests on its own paired differences with the baseline (%d degrees of freedom), not on the noise pooled over the arms", label, e.n-1))
	}
	return out
}

// noisierLevel is the one-sided level of the F-test (the arm's own variance of a paired
// difference against the residual of the rest of the design) that judges an arm by its own
// noise and its own n-1 degrees of freedom; below it the interval keeps the larger variance on
// the pooled degrees of freedom. A pretest must be lenient to catch what it guards against:
// simulated over paired runs (noise_real_test.go), 0.3 keeps the interval of an arm with 2x or
// 3x the others' sd at 93-95 % coverage in 4-arm sweeps of 3, 6 and 10 repeats (0.1: 91.5 % at
// 6 repeats), and costs a sequential sweep at 1.5 % noise 10 % more runs; judging by n-1
// whenever the arm's own estimate came out larger cost 4-arm sweeps of 6 repeats 13 points of
// power at +15 % (97 % to 84 %).
const noisierLevel = 0.3

// robustMinBlocks is the fewest blocks from which Huber's fit alone sets a paired variance:
// below it the variance is the larger of the robust and the least-squares one. An M-estimate
// of scale needs several residuals per parameter; with 3 blocks a row has 3 runs, and two of
// them on a bad node make the third the outlier (a -30 % change with a ±3 % interval).
const robustMinBlocks = 5

// Calibration is the run-to-run sd of a row measured over a design's runs (the residual of every
// arm after the arm and block effects), in percent on the log scale, with its degrees of freedom
// plus one (the runs a single calibration of that many runs would stand for): what an A/A sweep
// reports for spec.analysis.betweenRun.
func (d *Design) calibration(w row) (sdPercent float64, runs int) {
	table := make([]map[int]float64, 0, len(d.Arms))
	blockSet := map[int]bool{}
	for _, rs := range d.Arms {
		byB := d.byBlock(rs, w)
		table = append(table, byB)
		for b := range byB {
			blockSet[b] = true
		}
	}
	blocks := make([]int, 0, len(blockSet))
	for b := range blockSet {
		blocks = append(blocks, b)
	}
	sort.Ints(blocks)
	for _, byB := range table {
		for _, v := range byB {
			if v <= 0 {
				return 0, 0
			}
		}
	}
	v, df := pooledResidual(table, blocks, math.Log)
	if df == 0 {
		return 0, 0
	}
	return 100 * math.Sqrt(v), df + 1
}

// pairedOrNot is a row's paired effect when the options carry a design whose blocks pair the
// runs, with MethodPaired; else nil and MethodRuns, and why it could not pair in *why.
func pairedOrNot(cur, base []*result.Result, w row, o CompareOptions, why *string) (*effect, string) {
	if o.Design == nil {
		return nil, result.MethodRuns
	}
	e, reason := o.Design.pairedEffect(cur, base, w, o.MinChangePercent, o.BetweenRun)
	if e == nil {
		if *why == "" {
			*why = reason
		}
		return nil, result.MethodRuns
	}
	return e, MethodPaired
}

// methodOf is a run-level comparison's method: Paired when any row was paired.
func methodOf(method string, paired int) string {
	if paired > 0 {
		return MethodPaired
	}
	return method
}

// designNotes say how a blocked design's rows were compared, and the run-to-run sd of the
// first scenario's p95 the design measured (what a calibration would give), which it also
// returns.
func designNotes(d *Design, ref *result.Result, paired int, unpaired string) ([]string, *result.Calibration) {
	if d == nil {
		return nil, nil
	}
	var notes []string
	var cal *result.Calibration
	if len(ref.Scenarios) > 0 {
		w := row{scenario: ref.Scenarios[0].Name, kind: perfexpv1alpha1.MetricP95}
		if sd, runs := d.calibration(w); runs > 0 {
			cal = &result.Calibration{Metric: w.label(), SDPercent: sd, Runs: runs, Newest: d.newest()}
			notes = append(notes, fmt.Sprintf("run-to-run sd of %s measured over this design's runs, after the arm and block effects: %.2f %% (to calibrate single-run comparisons in this environment: spec.analysis.betweenRun: {sdPercent: \"%.2f\", runs: %d})",
				w.label(), sd, sd, runs))
		}
	}
	if d.FixedOrder && paired > 0 {
		notes = append(notes, fixedOrderNote)
	}
	switch {
	case paired > 0 && unpaired == "":
		notes = append(notes, pairedNote(d))
	case paired > 0:
		notes = append(notes, pairedNote(d), "some rows were compared unpaired: "+unpaired)
	case unpaired != "":
		notes = append(notes, "the runs were compared unpaired (Welch): "+unpaired)
	}
	return notes, cal
}

// pairedNote says how a paired comparison was made.
func pairedNote(d *Design) string {
	return fmt.Sprintf("runs were paired within their blocks (each repeat of the sweep is a block in which every arm ran once): the change is the mean "+
		"of the differences between the arm's and the baseline's run of each block, so drift across the sweep cancels, fitted robustly for latencies and "+
		"throughput (Huber's M-estimate of the arm and block effects: a run far off its arm's and block's level, such as one on a bad node, counts with a bounded weight); "+
		"the run-to-run noise is pooled "+
		"over the %d arms of the design (or the arm's own, when larger)", len(d.Arms))
}

// robustTable is the two-way table of a row for Huber's fit: the baseline's values in the
// given blocks (row 0), the arm's (row 1), and every other arm of the design that has the row
// in each of them. Rows are told apart by their runs' experiment names.
func (d *Design) robustTable(cur, base []*result.Result, w row, blocks []int, transform func(float64) float64) [][]float64 {
	mine := map[string]bool{}
	for _, r := range slices.Concat(cur, base) {
		mine[r.Experiment] = true
	}
	values := func(rs []*result.Result) []float64 {
		byB := d.byBlock(rs, w)
		out := make([]float64, 0, len(blocks))
		for _, b := range blocks {
			v, ok := byB[b]
			if !ok {
				return nil
			}
			out = append(out, transform(v))
		}
		return out
	}
	table := [][]float64{values(base), values(cur)}
	for _, rs := range d.Arms {
		if slices.ContainsFunc(rs, func(r *result.Result) bool { return mine[r.Experiment] }) {
			continue
		}
		if v := values(rs); v != nil {
			table = append(table, v)
		}
	}
	return table
}
