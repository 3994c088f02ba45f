// The report's comparison with its baseline: the headline (the change and the primary rows it
// rests on) right after the overview, and the other compared metrics among the detail tables.
// How the rows were decided, and why some were not, is stated once in "How this was decided".

package report

import (
	"fmt"
	"strings"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/result"
)

// decidedHeading names the section that holds the method, the noise sources, the guards and the
// rows' reasons.
const decidedHeading = "How this was decided"

// headline is the change against the baseline and the table of the primary metrics it was
// decided on (every compared metric when none is marked primary, as in older results).
func (m *markdown) headline(c *result.Comparison) {
	if c == nil {
		return
	}
	m.printf("## Compared with baseline %s\n\n", c.Baseline)
	if len(c.Metrics) == 0 {
		m.printf("Change: **%s**", c.Change)
		if c.Message != "" {
			m.printf(": %s", c.Message)
		}
		m.printf(".\n\n")
		return
	}
	head, other := comparisonRows(c)
	m.printf("Change: **%s** (decided on the primary metrics, marked ★).", c.Change)
	if c.Message != "" {
		m.printf(" %s.", strings.TrimSuffix(c.Message, "."))
	}
	if c.Disturbed != "" {
		m.printf(" **Intervals widened** for what the environment did during the runs (%q below).", decidedHeading)
	}
	m.printf("\n\n")
	m.comparisonTable(c, head)
	var refs []string
	if !m.notes.empty() {
		refs = append(refs, fmt.Sprintf("a number beside a verdict refers to its reason under %q", decidedHeading))
	}
	if len(other) > 0 {
		refs = append(refs, fmt.Sprintf("the other %d compared metrics are under \"Other compared metrics\"", len(other)))
	}
	if len(refs) > 0 {
		m.printf("%s.\n\n", capitalize(strings.Join(refs, "; ")))
	}
}

// otherMetrics is the table of the compared metrics the headline does not rest on.
func (m *markdown) otherMetrics(c *result.Comparison) {
	if c == nil {
		return
	}
	_, other := comparisonRows(c)
	if len(other) == 0 {
		return
	}
	m.printf("## Other compared metrics\n\nAgainst baseline %s, by the same rule as the headline's rows; they never change the headline.\n\n", c.Baseline)
	m.comparisonTable(c, other)
}

// comparisonTable writes the rows of c at the indexes rows, each verdict with the numbers of
// its reasons' notes.
func (m *markdown) comparisonTable(c *result.Comparison, rows []int) {
	m.printf("| Metric | Baseline | This run | Change [95 %% interval] | n | Verdict | adjusted p |\n|---|---:|---:|---|---:|---|---:|\n")
	for _, i := range rows {
		mc := c.Metrics[i]
		name := cell(mc.Metric)
		if mc.Primary {
			name = "★ " + name
		}
		m.printf("| %s | %s | %s | %s | %s | %s | %s |\n", name, withUnit(mc.Baseline, mc.Unit), withUnit(mc.Value, mc.Unit),
			changeCell(mc), samples(mc), cell(string(mc.Change)+m.notes.mark(i)), pval(mc.AdjustedP))
	}
	m.printf("\n")
}

// comparisonRows are the indexes of c's metric rows (the workloads' are in the Services
// tables, the routes' in Slowest APIs): the headline's, primary metrics, and the others; every row is the headline's when
// none is primary.
func comparisonRows(c *result.Comparison) (head, other []int) {
	for i, mc := range c.Metrics {
		switch {
		case mc.Workload != "", mc.Route != "" && !mc.Primary:
		case mc.Primary:
			head = append(head, i)
		default:
			other = append(other, i)
		}
	}
	if len(head) == 0 {
		return other, nil
	}
	return head, other
}

// rowNotes numbers the reasons of r's compared rows in the order the report shows them: the
// headline's rows, the other compared metrics, then the Services tables' CPU and memory rows.
func rowNotes(r *result.Result) *notes {
	n := &notes{}
	c := r.Comparison
	if c == nil {
		return n
	}
	add := func(i int) {
		if why := c.Metrics[i].Why; why != "" {
			n.add(i, []string{why}, nil)
		}
	}
	head, other := comparisonRows(c)
	for _, i := range append(head, other...) {
		add(i)
	}
	d := newWorkloadDeltas(c)
	for _, kind := range []perfexpv1alpha1.ObjectiveMetric{result.MetricCPU, result.MetricMemory} {
		for _, wl := range r.Workloads {
			if i, ok := d.index(wl, kind); ok {
				add(i)
			}
		}
	}
	return n
}

// changeCell is the change with its interval: "+12.3 % [+8.1, +16.6]", or points for error
// rates.
func changeCell(mc result.MetricComparison) string {
	if mc.Estimate == nil || mc.Low == nil || mc.High == nil {
		if isShare(mc) && mc.Delta != nil {
			// A pass rate's or a Rate's difference reads in points, as its interval would.
			return signed(mc.Delta, 2) + " pt"
		}
		if mc.DeltaPercent != nil {
			return signed(mc.DeltaPercent, 1) + " %"
		}
		return "-"
	}
	unit := " %"
	decimals := 1
	if mc.Scale == result.ScalePoints {
		unit, decimals = " pt", 2
	}
	return fmt.Sprintf("%s%s [%s, %s]", signed(mc.Estimate, decimals), unit, signed(mc.Low, decimals), signed(mc.High, decimals))
}

func samples(mc result.MetricComparison) string {
	if mc.Samples == 0 && mc.BaselineSamples == 0 {
		return "-"
	}
	unit := ""
	if mc.SampleUnit == "runs" {
		unit = " runs"
	}
	return fmt.Sprintf("%d vs %d%s", mc.Samples, mc.BaselineSamples, unit)
}

// capitalize upper-cases a sentence's first letter.
func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
