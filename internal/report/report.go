// Package report renders an analysis result as the documents of the report ConfigMap: a
// Markdown performance test report, the full results as JSON, and a Grafana dashboard for the
// run. It is pure: it formats, it never queries.
package report

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/result"
)

// Keys of the report ConfigMap.
const (
	KeyMarkdown  = "report.md"
	KeyJSON      = "results.json"
	KeyDashboard = "dashboard.json"
)

// JSON renders the full results, indented for people and tools alike.
func JSON(r *result.Result) ([]byte, error) {
	return json.MarshalIndent(r, "", "  ")
}

// ParseJSON reads results rendered by JSON, e.g. a baseline's.
func ParseJSON(b []byte) (*result.Result, error) {
	r := &result.Result{}
	if err := json.Unmarshal(b, r); err != nil {
		return nil, fmt.Errorf("reading results: %w", err)
	}
	return r, nil
}

// Markdown renders the report: summary, variant, response times, deltas against the baseline,
// per-service CPU and memory, custom queries, slices and the timeline of phases.
func Markdown(r *result.Result) string {
	m := &markdown{}
	m.overview(r)
	m.summary(r.Total)
	m.objectives(r.Objectives)
	m.thresholds(r.Thresholds)
	m.responseTimes(r.Scenarios)
	m.transactions(r.Scenarios)
	m.checksAndCounters(r.Scenarios)
	m.comparison(r.Comparison)
	m.workloads(r.Workloads, r.Comparison)
	m.runners(r.Runners, r.NodeLoad)
	m.queries(r.Queries)
	m.slices(r.Slices)
	m.timeline(r.Phases)
	m.notes(r.Notes)
	m.method(r.PrometheusQueries, r.LatencySource, r.CountsInexact)
	return m.String()
}

// markdown is the report being written, one section per method, in the report's order.
type markdown struct{ strings.Builder }

func (m *markdown) printf(format string, args ...any) { fmt.Fprintf(&m.Builder, format, args...) }

// overview is the title and the table of what was run, when, and what came of it.
func (m *markdown) overview(r *result.Result) {
	m.printf("# Performance test report: %s\n\n", r.Experiment)
	m.printf("| | |\n|---|---|\n")
	m.printf("| Experiment | %s/%s |\n", cell(r.Namespace), cell(r.Experiment))
	m.printf("| Test ID | `%s` |\n", r.TestID)
	variant := r.Variant
	if variant == "" {
		variant = "none (the environment as it is)"
	}
	m.printf("| Variant | %s |\n", cell(variant))
	m.printf("| Window | %s to %s |\n", ts(r.Window.Start), ts(r.Window.End))
	if r.Window.WarmUpEnd != nil {
		m.printf("| Warm-up | until %s (excluded) |\n", ts(*r.Window.WarmUpEnd))
	}
	m.printf("| Measured | %s |\n", dur(r.Window.MeasuredSeconds))
	m.printf("| Verdict | **%s** |\n", orDash(string(r.Verdict)))
	if len(r.VerdictReasons) > 0 {
		m.printf("| Why | %s |\n", cell(strings.Join(r.VerdictReasons, "; ")))
	}
	validity := string(r.Validity)
	if len(r.InvalidReasons) > 0 {
		validity += ": " + strings.Join(r.InvalidReasons, "; ")
	}
	m.printf("| Validity | %s |\n", cell(validity))
	m.printf("| Latency source | %s |\n", latencySource(r))
	if r.Comparison != nil {
		change := string(r.Comparison.Change)
		if r.Comparison.Message != "" {
			change += ": " + r.Comparison.Message
		}
		m.printf("| Baseline | %s (%s) |\n", cell(r.Comparison.Baseline), cell(change))
	}
	m.printf("\n")
}

func (m *markdown) summary(t result.RequestStats) {
	m.printf("## Summary\n\n")
	m.printf("All scenarios together: %s requests, %s failed (%s%%), %s req/s; response time avg %s ms, p95 %s ms, p99 %s ms.\n\n",
		intOr(t.Requests), intOr(t.Errors), num(t.ErrorPercent, 2), num(t.Rate, 2), num(t.Avg, 3), num(t.P95, 3), num(t.P99, 3))
}

func (m *markdown) objectives(objectives []result.ObjectiveResult) {
	if len(objectives) == 0 {
		return
	}
	m.printf("## Objectives\n\n| Objective | Outcome | Value | Detail |\n|---|---|---:|---|\n")
	for _, o := range objectives {
		m.printf("| %s | %s | %s | %s |\n", cell(o.Name), o.Outcome, withUnit(o.Value, o.Unit), cell(o.Message))
	}
	m.printf("\n")
}

// thresholds lists the script's k6 thresholds: a crossed one fails the verdict, as k6's own
// exit code 99 fails a run.
func (m *markdown) thresholds(thresholds []result.ThresholdResult) {
	if len(thresholds) == 0 {
		return
	}
	m.printf("## k6 thresholds\n\n| Metric | Threshold | Outcome | Crossed in |\n|---|---|---|---|\n")
	for _, t := range thresholds {
		outcome := "passed"
		if t.Crossed {
			outcome = "**crossed**"
		}
		m.printf("| %s | `%s` | %s | %s |\n", cell(t.Metric), t.Expression, outcome, cell(strings.Join(t.Scenarios, ", ")))
	}
	m.printf("\n")
}

// responseTimes has a table per scenario: all its requests, then each request name.
func (m *markdown) responseTimes(scenarios []result.ScenarioResult) {
	m.printf("## Response times\n\nLatencies in milliseconds. Max is an upper bound (the top of the highest histogram bucket).\n\n")
	for _, s := range scenarios {
		m.printf("### Scenario %s", s.Name)
		if s.Validity == "Invalid" {
			m.printf(" (invalid: %s)", s.InvalidReason)
		}
		m.printf("\n\n")
		if s.Iterations != nil && s.DroppedIterations != nil && *s.DroppedIterations > 0 && s.DroppedPercent != nil {
			m.printf("%d iterations; %d dropped by k6 (%.2f%% of those planned: the achieved arrival rate was that much below the planned one).\n\n",
				*s.Iterations, *s.DroppedIterations, *s.DroppedPercent)
		} else if s.Iterations != nil {
			m.printf("%d iterations.\n\n", *s.Iterations)
		}
		if s.ActiveSeconds != nil {
			m.printf("Active for %.0f s of the window; rates are requests over that time.\n\n", *s.ActiveSeconds)
		}
		writeStatsTable(&m.Builder, append([]result.RequestResult{{Name: "**all**", RequestStats: s.RequestStats}}, s.Requests...))
		if l := s.Successful; l != nil {
			m.printf("\nSuccessful requests only (what latency objectives and the comparison with a baseline judge; failed requests are often fast): avg %s, p50 %s, p90 %s, p95 %s, p99 %s ms.\n",
				num(l.Avg, 1), num(l.P50, 1), num(l.P90, 1), num(l.P95, 1), num(l.P99, 1))
		}
		m.printf("\n")
	}
}

// comparison is the table of compared metrics, primary metrics first, and one paragraph that
// says how the verdicts were reached.
func (m *markdown) comparison(c *result.Comparison) {
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
	m.printf("Change: **%s** (decided on the primary metrics, marked ★).", c.Change)
	if c.Message != "" {
		m.printf(" %s.", strings.TrimSuffix(c.Message, "."))
	}
	m.printf("\n\n%s\n\n", method(c))
	if c.NodeLoad != nil || c.BaselineNodeLoad != nil {
		m.printf("Node load outside the experiment: this run %s; baseline %s.", c.NodeLoad, c.BaselineNodeLoad)
		if c.Disturbed != "" {
			m.printf(" **Intervals widened:** %s.", strings.TrimSuffix(c.Disturbed, "."))
		}
		m.printf("\n\n")
	}
	if workloadRows(c) > 0 {
		m.printf("Each workload's CPU and memory are compared by the same rule in the Services tables below; they are secondary: they never decide the headline.\n\n")
	}
	m.printf("| Metric | Baseline | This run | Change [95 %% interval] | n | Verdict | adjusted p |\n|---|---:|---:|---|---:|---|---:|\n")
	var notes footnotes
	for _, mc := range c.Metrics {
		if mc.Workload != "" {
			continue
		}
		name := cell(mc.Metric)
		if mc.Primary {
			name = "★ " + name
		}
		verdict := string(mc.Change)
		if mc.Why != "" {
			verdict += " " + notes.mark(mc.Why)
		}
		m.printf("| %s | %s | %s | %s | %s | %s | %s |\n", name, withUnit(mc.Baseline, mc.Unit), withUnit(mc.Value, mc.Unit),
			changeCell(mc), samples(mc), cell(verdict), pval(mc.AdjustedP))
	}
	m.printf("\n")
	notes.write(m)
}

// method is the paragraph that explains the comparison's method, δ and multiplicity control.
func method(c *result.Comparison) string {
	var b strings.Builder
	switch c.Method {
	case result.MethodRuns:
		fmt.Fprintf(&b, "Method: the run is the unit (%d runs against %d baseline runs): each run gives one value per metric, and the "+
			"change is the ratio of the runs' geometric means with Welch's t interval on the logs; error rates are compared as the "+
			"difference of the runs' mean rates in percentage points.", c.Runs, c.BaselineRuns)
	default:
		b.WriteString("Method: one run per side, a moving-block bootstrap over the runs' per-interval histograms and counts " +
			"(blocks of neighbouring intervals keep their correlation; a resampled p95 is the p95 of the merged histograms), " +
			"widened by the noise between runs of one configuration, which one run per side cannot see: ")
		if c.Noise != "" {
			b.WriteString(c.Noise + ".")
		} else {
			b.WriteString("none was added (analysed by an older perfexp).")
		}
	}
	fmt.Fprintf(&b, " A metric is Regressed or Improved only when its whole 95 %% interval lies beyond ±%g %% (the minimum meaningful change), "+
		"NoMeaningfulChange when it lies inside ±%g %%, otherwise Inconclusive; error rates use ±%g %% of the baseline's rate but at least 0.1 "+
		"percentage points. The adjusted p is that of a change beyond ±δ after the multiplicity control: Holm for the primary metrics, Benjamini-Hochberg across the other rows, whose claims it holds to a 5 %% false discovery rate.", c.MinChangePercent, c.MinChangePercent, c.MinChangePercent)
	if customCompared(c) {
		b.WriteString(" Check pass rates and custom Rates are shares in percent, compared in points like error rates (δ of the rarer side: " +
			"a check's fails); k6 writes them without counts, so one run per side cannot decide them. Custom Gauges are compared as ratios " +
			"across repeated runs. A Rate's or Gauge's direction (is higher better?) is taken from an objective that bounds it.")
	}
	if c.Multiplicity != "" {
		fmt.Fprintf(&b, " The headline is decided on the primary metrics with %s (a primary metric without errors on either side cannot change and is not counted); other metrics never change it.", c.Multiplicity)
	}
	for _, n := range c.Notes {
		if !strings.HasPrefix(n, "one run per side") && n != c.Disturbed {
			fmt.Fprintf(&b, " %s.", strings.TrimSuffix(n, "."))
		}
	}
	return b.String()
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

func (d workloadDeltas) intro(m *markdown) {
	if len(d.rows) == 0 {
		return
	}
	m.printf(" Δ is the change of the average against baseline %s with its 95 %% interval, judged by the rule of the comparison above (±%g %%); a workload the variant scaled is compared on its totals, and its baseline's pods are shown beside its own.",
		d.c.Baseline, d.c.MinChangePercent)
}

func (d workloadDeltas) header() string {
	if len(d.rows) == 0 {
		return ""
	}
	return " | Δ vs baseline [95 % interval] | Verdict"
}

func (d workloadDeltas) rule() string {
	if len(d.rows) == 0 {
		return "|"
	}
	return "|---|---|"
}

// cells are the Δ and verdict cells of a workload's row; a dash for a workload the baseline
// did not have.
func (d workloadDeltas) cells(wl result.WorkloadResult, kind perfexpv1alpha1.ObjectiveMetric) string {
	if len(d.rows) == 0 {
		return ""
	}
	mc, ok := d.find(wl, kind)
	if !ok {
		return " | - | not in the baseline"
	}
	verdict := string(mc.Change)
	if mc.Why != "" {
		verdict += " (†)"
	}
	return fmt.Sprintf(" | %s | %s", changeCell(mc), verdict)
}

// reasons lists, once each, why the workloads marked † were not decided.
func (d workloadDeltas) reasons(m *markdown, kind perfexpv1alpha1.ObjectiveMetric) {
	if d.c == nil {
		return
	}
	var order []string
	names := map[string][]string{}
	for _, mc := range d.c.Metrics {
		if mc.Workload == "" || mc.Kind != kind || mc.Why == "" {
			continue
		}
		if _, seen := names[mc.Why]; !seen {
			order = append(order, mc.Why)
		}
		names[mc.Why] = append(names[mc.Why], mc.Workload)
	}
	for _, why := range order {
		m.printf("\n† %s: %s.\n", strings.Join(names[why], ", "), cell(strings.TrimSuffix(why, ".")))
	}
}

// queries has a table of the custom queries, then one of the series of each query that
// returned several.
func (m *markdown) queries(queries []result.QueryResult) {
	if len(queries) == 0 {
		return
	}
	m.printf("## Custom queries\n\n| Query | Value | Unit | Description |\n|---|---:|---|---|\n")
	for _, q := range queries {
		value := num(q.Value, 6)
		switch {
		case q.Error != "":
			value = "error: " + q.Error
		case q.SeriesDropped > 0 && len(q.Series) > 0:
			value = fmt.Sprintf("%d series (the %d largest below)", len(q.Series)+q.SeriesDropped, len(q.Series))
		case q.SeriesDropped > 0:
			value = fmt.Sprintf("%d series (not listed)", q.SeriesDropped)
		case q.Value == nil && len(q.Series) > 1:
			value = fmt.Sprintf("%d series (below)", len(q.Series))
		case q.Value == nil && len(q.Series) == 0 && q.Note != "":
			value = "no series (below)"
		}
		m.printf("| %s | %s | %s | %s |\n", cell(q.Name), cell(value), cell(q.Unit), cell(q.Description))
	}
	m.printf("\n")
	for _, q := range queries {
		if q.Error == "" && q.Value == nil && len(q.Series) == 0 && q.Note != "" {
			m.printf("%s: %s.\n\n", q.Name, strings.TrimSuffix(q.Note, "."))
		}
	}
	for _, q := range queries {
		if len(q.Series) < 2 && q.SeriesDropped == 0 || len(q.Series) == 0 {
			continue
		}
		m.printf("%s:\n\n| Series | Value |\n|---|---:|\n", q.Name)
		for _, s := range q.Series {
			m.printf("| %s | %s |\n", cell(labels(s.Labels)), num(s.Value, 6))
		}
		if q.SeriesDropped > 0 {
			m.printf("| %d more series, not listed | |\n", q.SeriesDropped)
		}
		m.printf("\n")
	}
}

// slices has, per time slice, its response times, its workloads and its custom queries.
func (m *markdown) slices(slices []result.SliceResult) {
	if len(slices) == 0 {
		return
	}
	m.printf("## Time slices\n\n")
	for _, sl := range slices {
		m.printf("### %s (%s to %s)\n\n", sl.Name, ts(sl.Start), ts(sl.End))
		rows := []result.RequestResult{{Name: "**all**", RequestStats: sl.Total}}
		for _, s := range sl.Scenarios {
			rows = append(rows, result.RequestResult{Name: s.Name, RequestStats: s.RequestStats})
		}
		writeStatsTable(&m.Builder, rows)
		if len(sl.Workloads) > 0 {
			m.printf("| Workload | CPU avg | CPU max | Memory avg | Memory max |\n|---|---:|---:|---:|---:|\n")
			for _, wl := range sl.Workloads {
				m.printf("| %s | %s | %s | %s | %s |\n", workloadName(wl), num(wl.CPUAvg, 3), num(wl.CPUMax, 3), mib(wl.MemoryAvg), mib(wl.MemoryMax))
			}
			m.printf("\n")
		}
		for _, q := range sl.Queries {
			if q.Value == nil && len(q.Series) == 0 && q.Note != "" {
				m.printf("- query %s: %s\n", q.Name, q.Note)
				continue
			}
			m.printf("- query %s: %s %s\n", q.Name, num(q.Value, 6), q.Unit)
		}
		if len(sl.Queries) > 0 {
			m.printf("\n")
		}
	}
}

// timeline has the phases the experiment went through and how long each took.
func (m *markdown) timeline(phases []result.PhaseAt) {
	if len(phases) == 0 {
		return
	}
	m.printf("## Timeline\n\n| Phase | Entered | Took |\n|---|---|---:|\n")
	for i, p := range phases {
		took := "-"
		if i+1 < len(phases) {
			took = phases[i+1].Time.Sub(p.Time).Round(time.Second).String()
		}
		m.printf("| %s | %s | %s |\n", p.Phase, ts(p.Time), took)
	}
	m.printf("\n")
}

func (m *markdown) notes(notes []string) {
	if len(notes) == 0 {
		return
	}
	m.printf("## Notes\n\n")
	for _, n := range notes {
		m.printf("- %s\n", n)
	}
	m.printf("\n")
}

// method says where the numbers came from.
func (m *markdown) method(queries int, source perfexpv1alpha1.LatencySource, inexact bool) {
	m.printf("## How these numbers were read\n\n")
	if inexact {
		// The backend warned (a partial answer, a store that did not answer): the same reading
		// is no longer exact, and the report must not say it is.
		m.printf("Request and error counts are k6's counters read at the edges of the measured window, from answers the metrics backend sent with warnings (see Notes): **not exact**, they may be short. ")
	} else {
		m.printf("Request and error counts are k6's counters read at the edges of the measured window (exact; no `increase()` extrapolation). ")
	}
	switch source {
	case perfexpv1alpha1.LatencyFromTrendStats:
		m.printf("Latencies come from k6's trend-stat gauges (no native histograms were written): each runner's own statistics over its whole run, warm-up included; ")
		m.printf("where several runners or series make up a row its percentiles are the largest of theirs, an upper bound, and objectives on them are Met only below a maximum, else Unknown. ")
	case perfexpv1alpha1.LatencyFromNativeHistogram:
		m.printf("Percentiles come from k6's native histograms summed over every runner, with the histogram at the window's start subtracted; ")
		m.printf("they are never averaged; max is the top of the highest non-empty bucket, an upper bound. ")
	default:
		m.printf("No latencies were found. ")
	}
	m.printf("Workload numbers come from cAdvisor; a container counts at a step only while its newest sample is fresh, ")
	m.printf("so a pod replaced by a rollout is not carried forward by Prometheus' five-minute lookback. %d Prometheus queries.\n", queries)
}

func writeStatsTable(b *strings.Builder, rows []result.RequestResult) {
	b.WriteString("| Request | Requests | Errors | Error % | Rate (req/s) | Avg | p50 | p75 | p90 | p95 | p99 | Max |\n")
	b.WriteString("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, r := range rows {
		s := r.RequestStats
		fmt.Fprintf(b, "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", cell(r.Name), intOr(s.Requests), intOr(s.Errors),
			num(s.ErrorPercent, 2), num(s.Rate, 2), num(s.Avg, 3), num(s.P50, 3), num(s.P75, 3), num(s.P90, 3), num(s.P95, 3), num(s.P99, 3), num(s.Max, 3))
	}
	b.WriteString("\n")
}

func latencySource(r *result.Result) string {
	switch r.LatencySource {
	case "NativeHistogram":
		if r.LatencyErrorBound != nil {
			return fmt.Sprintf("k6 native histograms, merged across runners (percentiles within %.2f%% of the true value)", 100**r.LatencyErrorBound)
		}
		return "k6 native histograms, merged across runners"
	case "TrendStats":
		return "k6 trend-stat gauges (fallback: percentiles of several runners are bounds, not merged values)"
	}
	return "none (no latency data)"
}

// customCompared is true when a comparison has check, custom Rate or Gauge rows.
func customCompared(c *result.Comparison) bool {
	for _, mc := range c.Metrics {
		switch mc.Kind {
		case perfexpv1alpha1.MetricPassRate, perfexpv1alpha1.MetricPercent, perfexpv1alpha1.MetricMin, perfexpv1alpha1.MetricLast:
			return true
		}
		if mc.Kind == perfexpv1alpha1.MetricMax && strings.Contains(mc.Metric, " gauge ") {
			return true
		}
	}
	return false
}
