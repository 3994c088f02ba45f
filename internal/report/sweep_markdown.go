package report

import (
	"fmt"
	"strings"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
)

// sweepDocument is the sweep report's Markdown in its parts, the answer first: the title, what
// was run with the best arm, the table of arms with their verdicts, then the rest (what each
// decision took, capacity, calibration, the runs, and how it was decided). The page shows the
// table before its charts and the rest as its details.
type sweepDocument struct {
	title, intro, table string
	// findings is the Findings section, between the intro and the table of arms.
	findings string
	// sections are the per-arm tables (transactions, services, queries) after the table of arms.
	sections []sweepSection
	rest     string
}

// SweepMarkdown renders the sweep report: the table the reference reports wrote by hand (arm,
// parameter, value, each scenario's avg and p95, the delta against the baseline, the verdict)
// first, then what the decisions took, and once, at the end, how they were made and why an arm
// was not decided.
func SweepMarkdown(r *SweepResult) string {
	d := sweepMarkdown(r)
	var b strings.Builder
	b.WriteString(d.title + d.intro + d.findings + d.table)
	for _, s := range d.sections {
		fmt.Fprintf(&b, "## %s\n\n%s", s.title, s.body)
	}
	b.WriteString(d.rest)
	return b.String()
}

func sweepMarkdown(r *SweepResult) sweepDocument {
	var d sweepDocument
	m := &markdown{notes: sweepNotes(r)}
	qs := sweepQuantities(r)
	sweepQuantityNotes(r, qs, m.notes, sweepQuantityNoteBase)
	m.printf("# Sweep %s/%s\n\n", r.Namespace, r.Sweep)
	d.title = m.take()
	each := fmt.Sprintf("%d run(s) each", r.Repeats)
	if sequentialResult(r) {
		each = fmt.Sprintf("sequential: up to %d run(s) each, an arm stopping once decided", r.Repeats)
	}
	m.printf("%d arms (baseline included), %s, run in blocks (every arm once per repeat). "+
		"A change smaller than %.0f %% does not count.", len(r.Arms), each, r.MinMeaningfulChangePercent)
	if r.BestArm != "" {
		m.printf(" Best arm: **%s**.", r.BestArm)
	} else {
		m.printf(" No arm improved on the baseline.")
	}
	m.printf("\n\n")
	d.intro = m.take()
	m.findings(r.Findings)
	d.findings = m.take()
	m.sweepTable(r)
	d.table = m.take()
	d.sections = m.sweepQuantitySections(r, qs)
	if rows := SweepDecisionRows(r); len(rows) > 0 {
		m.printf("## What each decision took\n\n")
		m.printf("A sequential sweep stops an arm at the look where its verdict is decisive; the baseline runs on while any arm does. " +
			"Runs and environment time count the arm's runs and the baseline's runs of the same repeats (those are shared with the other arms); " +
			"a run's environment time is from leaving the queue to the restored environment (its analysis runs beside the next run).\n\n")
		m.printf("| Arm | Verdict | Decided | Repeats | Look (error rate) | Runs (arm + baseline) | Environment time |\n|---|---|---|---:|---:|---:|---:|\n")
		for _, d := range rows {
			m.printf("| %s | %s | %s | %d | %s | %s | %s |\n", cell(d.Arm), d.Verdict, d.Decided, d.Repeats, d.Look, d.Runs, d.Time)
		}
		m.printf("\n")
	}
	if r.LoadParameter != "" {
		m.printf("## Capacity\n\n| %s | Scenario | Throughput (req/s) | p95 |\n|---:|---|---:|---:|\n", strings.ToLower(string(r.LoadParameter)))
		for _, p := range CapacityPoints(r) {
			m.printf("| %s | %s | %s | %s |\n", num(&p.Load, 0), cell(p.Scenario), num(p.Rate, 1), withUnit(p.P95, "ms"))
		}
		m.printf("\n")
	}
	if c := SweepCalibration(r); c != nil {
		m.printf("## Calibration\n\n%s\n\n", calibrationText(r, c))
	}
	m.printf("## Runs\n\n")
	for _, a := range r.Arms {
		m.printf("- %s: %s (%d of %d succeeded)\n", a.Name, strings.Join(a.Experiments, ", "), a.Succeeded, len(a.Experiments))
	}
	m.printf("\n## %s\n\n", decidedHeading)
	m.printf("Avg and p95 are the geometric means of each arm's runs. With repeats, an arm's change is fitted over the repeats it ran beside the baseline (paired by repeat, an outlying run weighed down), so it can differ from the ratio of these means when one run stood out, or when the arm stopped early and the baseline ran on.\n\n")
	if !m.notes.empty() {
		m.printf("Why an arm reads as it does, for the verdicts marked with a number:\n\n")
		m.notes.write(m)
	}
	if len(r.Notes) > 0 {
		m.printf("### Notes\n\n")
		for _, n := range r.Notes {
			m.printf("- %s\n", n)
		}
		m.printf("\n")
	}
	d.rest = m.take()
	return d
}

// take returns what was written since the last take.
func (m *markdown) take() string {
	s := m.String()
	m.Reset()
	return s
}

// sweepTable is the table of arms, one row per arm and scenario; a verdict names the arm's own
// baseline when that is not the sweep's, and carries the numbers of its reasons' notes.
func (m *markdown) sweepTable(r *SweepResult) {
	m.printf("| Arm | Parameter | Value | Scenario | Runs | Avg (geo. mean) | p95 (geo. mean) | Δ p95 vs baseline [interval, 95 %% unless stated] | Verdict |\n")
	m.printf("|---|---|---|---|---:|---:|---:|---:|---|\n")
	arms := sweepRowArms(r)
	for i, row := range SweepRows(r) {
		verdict := row.Verdict
		if a := arms[i]; a.Comparison != nil && a.Baseline != "" && a.Baseline != perfexpv1alpha1.BaselineArm {
			verdict += " against " + a.Baseline
		}
		m.printf("| %s | %s | %s | %s | %d | %s | %s | %s | %s |\n", cell(row.Arm), cell(row.Parameter), cell(row.Value),
			cell(row.Scenario), row.Runs, row.Avg, row.P95, row.Delta, cell(verdict+m.notes.mark(i)))
	}
	m.printf("\n")
}

// sweepRowArms is the arm of each row of SweepRows.
func sweepRowArms(r *SweepResult) []*SweepArmResult {
	var out []*SweepArmResult
	for i := range r.Arms {
		for range max(1, len(r.Arms[i].Scenarios)) {
			out = append(out, &r.Arms[i])
		}
	}
	return out
}

// sweepNotes numbers the reasons of the sweep table's rows: the arm's comparison message, or
// the reason its scenario's p95 gives, and for an arm of one run per side where its between-run
// noise came from.
func sweepNotes(r *SweepResult) *notes {
	n := &notes{}
	arms := sweepRowArms(r)
	for i, row := range SweepRows(r) {
		c := arms[i].Comparison
		if c == nil {
			continue
		}
		var reasons, whole []string
		if c.Message != "" {
			reasons = append(reasons, c.Message)
		} else {
			for _, mc := range c.Metrics {
				if mc.Scenario == row.Scenario && mc.Request == "" && mc.Kind == perfexpv1alpha1.MetricP95 && mc.Why != "" {
					reasons = append(reasons, mc.Why)
				}
			}
		}
		if c.Noise != "" {
			// Only a comparison of one run per side holds an assumed or learned noise: say which.
			whole = append(whole, "one run per side, with "+c.Noise)
		}
		n.add(i, reasons, whole)
	}
	return n
}
