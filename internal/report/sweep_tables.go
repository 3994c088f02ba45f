// The sweep report's per-arm tables: one table per quantity (a transaction, a workload, a custom
// query) with a row per arm, the baseline's first, so that twelve arms of ten services read down
// a page instead of across it. Each arm's cell holds its value and the change its comparison
// with the baseline gives, with the interval and verdict where the comparison decided it; the
// values are the arms' means (sweep_stats.go), the changes and verdicts the comparison's rows.

package report

import (
	"fmt"
	"math"
	"slices"
	"strings"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/result"
)

// DefaultSweepStatistics are the columns of the Transactions tables when spec.report does not
// choose them: the statistics the reference reports lead with.
var DefaultSweepStatistics = []perfexpv1alpha1.ObjectiveMetric{perfexpv1alpha1.MetricAvg, perfexpv1alpha1.MetricP50, perfexpv1alpha1.MetricP75,
	perfexpv1alpha1.MetricP95, perfexpv1alpha1.MetricP99, perfexpv1alpha1.MetricErrorRate, perfexpv1alpha1.MetricRate}

// maxQuerySeries is how many series of one query get a column; the rest are counted below it.
const maxQuerySeries = 6

// How a column shows an arm's value.
const (
	// showValue is the value alone: a quantity no comparison judges (pods, % of request).
	showValue = iota
	// showChange is the value, its change and the verdict's mark.
	showChange
	// showInterval is the value, then a column of its own with the change, its 95 % interval
	// and the verdict.
	showInterval
)

// sweepColumn is one statistic of a quantity.
type sweepColumn struct {
	label string
	show  int
	// whole: the value is a count (pods), written without decimals.
	whole bool
	// text, when set, writes the cell of a showValue column (two shares in one cell).
	text func(a *SweepArmResult) string
	// points: the change is a difference in percentage points (error rates), not a ratio.
	points bool
	value  func(a *SweepArmResult) *float64
	// metric finds the comparison's row of this statistic; nil for a statistic no row judges.
	metric func(mc result.MetricComparison) bool
}

// sweepQuantity is one table: a quantity of the given section, its columns, and a line saying
// what was left out of it.
type sweepQuantity struct {
	section perfexpv1alpha1.SweepReportSection
	// ref names a workload's table (its comparison's Workload), for trimming.
	ref     string
	title   string
	columns []sweepColumn
	// moved is the largest decided change of any arm (a Regressed or Improved row), for the
	// order of the Services tables.
	moved, spread float64
	footer        string
}

// sweepCell is one arm's value of a column and what its comparison says of it.
type sweepCell struct {
	value, baseline *float64
	// row is the comparison's row (nil when the arm has no comparison or no row for it), index
	// its position among the comparison's metrics.
	row   *result.MetricComparison
	index int
}

// cellOf is an arm's cell of a column; base is the arm's baseline arm (nil for a baseline).
func cellOf(col sweepColumn, a, base *SweepArmResult) sweepCell {
	c := sweepCell{value: col.value(a), index: -1}
	if base != nil {
		c.baseline = col.value(base)
	}
	if a.Comparison != nil && col.metric != nil {
		for i, mc := range a.Comparison.Metrics {
			if col.metric(mc) {
				c.row, c.index = &a.Comparison.Metrics[i], i
				break
			}
		}
	}
	return c
}

// sections are the sections the sweep's report shows, in the report's order.
func (r *SweepResult) sections() []perfexpv1alpha1.SweepReportSection {
	all := []perfexpv1alpha1.SweepReportSection{perfexpv1alpha1.SweepSectionTransactions, perfexpv1alpha1.SweepSectionServices,
		perfexpv1alpha1.SweepSectionRoutes, perfexpv1alpha1.SweepSectionQueries}
	if r.Report == nil || len(r.Report.Sections) == 0 {
		return all
	}
	return slices.DeleteFunc(all, func(s perfexpv1alpha1.SweepReportSection) bool { return !slices.Contains(r.Report.Sections, s) })
}

// statistics are the Transactions tables' statistics and the one whose change gets its interval.
func (r *SweepResult) statistics() (stats []perfexpv1alpha1.ObjectiveMetric, key perfexpv1alpha1.ObjectiveMetric) {
	stats = DefaultSweepStatistics
	if r.Report != nil && len(r.Report.Statistics) > 0 {
		stats = r.Report.Statistics
	}
	key = stats[0]
	if slices.Contains(stats, perfexpv1alpha1.MetricP95) {
		key = perfexpv1alpha1.MetricP95
	}
	return stats, key
}

// baselineOf is the arm an arm was compared with; nil for a baseline. A compared arm that does
// not name its baseline (results of an older sweep) was compared with the sweep's, the first.
func baselineOf(r *SweepResult, a *SweepArmResult) *SweepArmResult {
	if a.Comparison == nil {
		return nil
	}
	if a.Baseline == "" && len(r.Arms) > 0 {
		return &r.Arms[0]
	}
	for i := range r.Arms {
		if r.Arms[i].Name == a.Baseline {
			return &r.Arms[i]
		}
	}
	return nil
}

// sweepQuantities are the per-arm tables of the sections the sweep shows.
func sweepQuantities(r *SweepResult) []sweepQuantity {
	var out []sweepQuantity
	for _, s := range r.sections() {
		switch s {
		case perfexpv1alpha1.SweepSectionTransactions:
			out = append(out, transactionQuantities(r)...)
		case perfexpv1alpha1.SweepSectionServices:
			out = append(out, workloadQuantities(r)...)
		case perfexpv1alpha1.SweepSectionRoutes:
			out = append(out, routeQuantities(r)...)
		case perfexpv1alpha1.SweepSectionQueries:
			out = append(out, queryQuantities(r)...)
		}
	}
	for i := range out {
		out[i].columns = measured(r, out[i].columns)
		out[i].moved, out[i].spread = movement(r, out[i])
	}
	return slices.DeleteFunc(out, func(q sweepQuantity) bool { return len(q.columns) == 0 })
}

// measured are the columns some arm has a value for: an older sweep's results hold a
// scenario's avg, p95, error % and rate only, a workload without limits has no % of limit.
func measured(r *SweepResult, cols []sweepColumn) []sweepColumn {
	return slices.DeleteFunc(cols, func(col sweepColumn) bool {
		for i := range r.Arms {
			if col.value(&r.Arms[i]) != nil {
				return false
			}
		}
		return true
	})
}

// movement is the largest decided change of a quantity's rows (Regressed or Improved), and the
// largest change of any of them, both as magnitudes of their estimates.
func movement(r *SweepResult, q sweepQuantity) (moved, spread float64) {
	for i := range r.Arms {
		a := &r.Arms[i]
		for _, col := range q.columns {
			c := cellOf(col, a, baselineOf(r, a))
			if c.row == nil || c.row.Estimate == nil {
				continue
			}
			e := math.Abs(*c.row.Estimate)
			spread = math.Max(spread, e)
			if decided(c.row.Change) {
				moved = math.Max(moved, e)
			}
		}
	}
	return moved, spread
}

func decided(c perfexpv1alpha1.Change) bool {
	return c == perfexpv1alpha1.ChangeRegressed || c == perfexpv1alpha1.ChangeImproved
}

func orZero(v *float64) float64 {
	if v == nil {
		return 0
	}
	return *v
}

// seriesLabel is a series' column header: its label values, which tell the series of one query
// apart ({broker="1"} reads "1").
func seriesLabel(l string) string {
	l = strings.Trim(l, "{}")
	var vals []string
	for _, kv := range strings.Split(l, ", ") {
		if _, v, ok := strings.Cut(kv, "="); ok {
			vals = append(vals, strings.Trim(v, `"`))
		}
	}
	if len(vals) == 0 {
		return "value"
	}
	return strings.Join(vals, " ")
}

// compact writes a value with three significant digits or as a whole number: table cells stay
// narrow and the precision is the runs' own.
func compact(v *float64) string {
	if v == nil || !result.Finite(*v) {
		return "-"
	}
	a := math.Abs(*v)
	switch {
	case a >= 100 || a == 0:
		return fmt.Sprintf("%.0f", *v)
	case a >= 10:
		return fmt.Sprintf("%.1f", *v)
	case a >= 1:
		return fmt.Sprintf("%.2f", *v)
	}
	return fmt.Sprintf("%.3g", *v)
}

// verdictMark is the mark a short change carries: better, worse, no meaningful change,
// undecided; none for a row no comparison judged or could judge.
func verdictMark(c perfexpv1alpha1.Change) string {
	switch c {
	case perfexpv1alpha1.ChangeImproved:
		return " ✓"
	case perfexpv1alpha1.ChangeRegressed:
		return " ✗"
	case perfexpv1alpha1.ChangeNoMeaningfulChange:
		return " ="
	case perfexpv1alpha1.ChangeInconclusive:
		return " ?"
	}
	return ""
}

// change is a cell's change without its interval: the comparison's estimate, else the plain
// difference of the arm's and the baseline's means (relative, or in points for error rates).
func (c sweepCell) change(points bool) string {
	if c.row != nil {
		if c.row.Estimate != nil {
			if c.row.Scale == result.ScalePoints {
				return signed(c.row.Estimate, 2) + " pt"
			}
			return signed(c.row.Estimate, 1) + " %"
		}
		if c.row.DeltaPercent != nil && !points {
			return signed(c.row.DeltaPercent, 1) + " %"
		}
	}
	if c.value == nil || c.baseline == nil {
		return ""
	}
	if points {
		d := *c.value - *c.baseline
		return signed(&d, 2) + " pt"
	}
	if *c.baseline == 0 {
		return ""
	}
	d := 100 * (*c.value - *c.baseline) / *c.baseline
	return signed(&d, 1) + " %"
}

// short is a showChange cell: "412 +3.1 % ✓".
func (c sweepCell) short(points bool) string {
	s := compact(c.value)
	if ch := c.change(points); ch != "" {
		s += " " + ch
	}
	if c.row != nil {
		s += verdictMark(c.row.Change)
	}
	return s
}

// verdict is the verdict a cell's change reads with: the comparison's, else why there is none.
func (c sweepCell) verdict() string {
	switch {
	case c.row != nil && c.row.Change == "":
		return string(perfexpv1alpha1.ChangeUnknown) // results of an older perfexp
	case c.row != nil:
		return string(c.row.Change)
	case c.value == nil || c.baseline == nil:
		return "-"
	}
	return "not compared"
}

// interval is a showInterval cell's change column: "+12.3 % [+8.1, +16.6] Regressed".
func (c sweepCell) interval(points bool) string {
	if c.row != nil && c.row.Estimate != nil && c.row.Low != nil && c.row.High != nil {
		return changeCell(*c.row) + " " + c.verdict()
	}
	ch := c.change(points)
	if ch == "" {
		return c.verdict()
	}
	return ch + " " + c.verdict()
}

// sweepQuantityNotes adds the reasons of the per-arm tables' verdicts (their interval columns)
// to the sweep's notes, after the table of arms' own; ids start at base so they never meet the
// table of arms' row numbers.
func sweepQuantityNotes(r *SweepResult, qs []sweepQuantity, n *notes, base int) {
	id := base
	eachIntervalCell(r, qs, func(_ sweepQuantity, _ int, c sweepCell) {
		if c.row != nil && c.row.Why != "" {
			n.add(id, []string{c.row.Why}, nil)
		}
		id++
	})
}

// eachIntervalCell calls f for every compared arm's interval cell, in the order the tables show
// them.
func eachIntervalCell(r *SweepResult, qs []sweepQuantity, f func(q sweepQuantity, arm int, c sweepCell)) {
	for _, q := range qs {
		for i := range r.Arms {
			a := &r.Arms[i]
			if a.Comparison == nil {
				continue
			}
			for _, col := range q.columns {
				if col.show == showInterval {
					f(q, i, cellOf(col, a, baselineOf(r, a)))
				}
			}
		}
	}
}

// sweepQuantityNoteBase is where the per-arm tables' note ids begin: past any table of arms.
const sweepQuantityNoteBase = 1 << 20

// sectionTitle is a section's heading.
func sectionTitle(s perfexpv1alpha1.SweepReportSection) string {
	switch s {
	case perfexpv1alpha1.SweepSectionServices:
		return "Services: CPU and memory"
	case perfexpv1alpha1.SweepSectionQueries:
		return "Queries"
	case perfexpv1alpha1.SweepSectionRoutes:
		return "Slowest APIs"
	}
	return "Transactions"
}

// sectionIntro says what a section's tables hold.
func sectionIntro(r *SweepResult, s perfexpv1alpha1.SweepReportSection, tables int) string {
	switch s {
	case perfexpv1alpha1.SweepSectionServices:
		return fmt.Sprintf("One table per observed workload (%d), those whose CPU or memory moved the most first; a row per arm. "+
			"CPU is cores summed over the workload's pods, memory its working set, each the mean over the arm's runs; "+
			"%% of request / limit (the busiest pod's) and throttled are as in the run reports. The Δ columns are the change against the baseline with its 95 %% interval and verdict, "+
			"judged by the rule of the table of arms (±%g %%); they are secondary rows (Benjamini-Hochberg across them in each arm's comparison) and never decide an arm.",
			tables, r.MinMeaningfulChangePercent)
	case perfexpv1alpha1.SweepSectionRoutes:
		return routeSectionIntro(r, tables)
	case perfexpv1alpha1.SweepSectionQueries:
		return "One table per custom query, a row per arm: the mean of its value over the arm's runs (a column per series for a query that returned several, " +
			"the largest in the baseline first). A query has one value per run; its change reads `not compared` where the comparison has no row for it, " +
			"and a single run per side cannot decide it (`Unknown`)."
	}
	return fmt.Sprintf("One table per transaction (each scenario, its most frequent requests, k6 groups, Trends, iteration durations and Counters), a row per arm: "+
		"the mean over the arm's runs (geometric for times and rates, arithmetic for error %%). A cell reads its value, its change against the baseline and a mark: "+
		"✓ Improved, ✗ Regressed, = no meaningful change, ? Inconclusive; a change without a mark was not compared (no p75 is, nor the p50 and p99 of a request, group or Trend). "+
		"The Δ column gives the change with its 95 %% interval and the verdict (±%g %%); every row but a primary metric's (★ in the table of arms) is secondary, "+
		"under Benjamini-Hochberg in its arm's comparison.", r.MinMeaningfulChangePercent)
}

// sweepSection is one section of per-arm tables: its heading and its Markdown body.
type sweepSection struct {
	id, title, body string
}

// sweepQuantitySections writes the per-arm tables, section by section, each verdict of an
// interval column with the numbers of its reasons' notes (sweepQuantityNotes added them).
func (m *markdown) sweepQuantitySections(r *SweepResult, qs []sweepQuantity) []sweepSection {
	var out []sweepSection
	id := sweepQuantityNoteBase
	for _, s := range r.sections() {
		var mine []sweepQuantity
		for _, q := range qs {
			if q.section == s {
				mine = append(mine, q)
			}
		}
		if len(mine) == 0 {
			continue
		}
		m.printf("%s\n\n", sectionIntro(r, s, len(mine)))
		for _, q := range mine {
			m.quantityTable(r, q, &id)
		}
		out = append(out, sweepSection{id: "arm-" + strings.ToLower(string(s)), title: sectionTitle(s), body: m.take()})
	}
	return out
}

// quantityTable writes one quantity's table, a row per arm, the baseline's first; id is the
// next interval cell's note id.
func (m *markdown) quantityTable(r *SweepResult, q sweepQuantity, id *int) {
	m.printf("### %s\n\n", cell(q.title))
	header, rule := []string{"Arm"}, []string{"---"}
	for _, col := range q.columns {
		header, rule = append(header, cell(col.label)), append(rule, "---:")
		if col.show == showInterval {
			header, rule = append(header, "Δ "+cell(strings.SplitN(col.label, " (", 2)[0])+" [95 %]"), append(rule, "---")
		}
	}
	m.printf("| %s |\n|%s|\n", strings.Join(header, " | "), strings.Join(rule, "|"))
	for i := range r.Arms {
		a := &r.Arms[i]
		base := baselineOf(r, a)
		name := a.Name
		if a.Comparison == nil && a.Name != perfexpv1alpha1.BaselineArm {
			name += " (baseline)"
		} else if base != nil && base != &r.Arms[0] {
			name += " vs " + base.Name
		}
		cells := []string{cell(name)}
		for _, col := range q.columns {
			c := cellOf(col, a, base)
			switch {
			case a.Comparison == nil && col.show == showInterval:
				cells = append(cells, compact(c.value), "")
			case col.whole:
				cells = append(cells, num(c.value, 0))
			case col.text != nil:
				cells = append(cells, cell(col.text(a)))
			case a.Comparison == nil || col.show == showValue:
				cells = append(cells, compact(c.value))
			case col.show == showChange:
				cells = append(cells, c.short(col.points))
			default:
				cells = append(cells, compact(c.value), cell(c.interval(col.points)+m.notes.mark(*id)))
				*id++
			}
		}
		m.printf("| %s |\n", strings.Join(cells, " | "))
	}
	m.printf("\n")
	if q.footer != "" {
		m.printf("%s\n\n", q.footer)
	}
}

// SweepQuantityRow is one statistic of one quantity in one compared arm, as the per-arm tables
// show it: for kubectl perfexp compare, which prints them a line each.
type SweepQuantityRow struct {
	Section, Quantity, Statistic, Arm string
	Baseline, Value                   string
	// Change is the change with its 95 % interval where the comparison has one.
	Change, Verdict, AdjustedP string
	// Decided is true for a Regressed or Improved row.
	Decided bool
}

// SweepQuantityRows lists the per-arm tables' compared cells, table by table.
func SweepQuantityRows(r *SweepResult) []SweepQuantityRow {
	var rows []SweepQuantityRow
	for _, q := range sweepQuantities(r) {
		for i := range r.Arms {
			a := &r.Arms[i]
			if a.Comparison == nil {
				continue
			}
			for _, col := range q.columns {
				if col.show == showValue {
					continue
				}
				c := cellOf(col, a, baselineOf(r, a))
				row := SweepQuantityRow{Section: string(q.section), Quantity: q.title, Statistic: col.label, Arm: a.Name,
					Baseline: compact(c.baseline), Value: compact(c.value), Change: orDash(c.change(col.points)), Verdict: c.verdict(), AdjustedP: "-"}
				if c.row != nil {
					if c.row.Estimate != nil && c.row.Low != nil && c.row.High != nil {
						row.Change = changeCell(*c.row)
					}
					row.AdjustedP, row.Decided = pval(c.row.AdjustedP), decided(c.row.Change)
				}
				rows = append(rows, row)
			}
		}
	}
	return rows
}
