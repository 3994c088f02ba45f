// Package report renders an analysis result as the documents of the report ConfigMap: a
// Markdown performance test report, the full results as JSON, and a Grafana dashboard for the
// run. It is pure: it formats, it never queries.
package report

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

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

// Markdown renders the report, the answer first: the overview with the verdict, the findings, the change
// against the baseline with the primary metrics it rests on, the objectives and thresholds; then
// the detail tables (summary, response times, iterations and checks, the other compared metrics,
// per-service CPU and memory, the slowest APIs, load generators, the environment, custom queries, slices, the timeline of phases);
// then, once, how it was decided.
func Markdown(r *result.Result) string {
	m := &markdown{notes: rowNotes(r)}
	m.overview(r)
	m.findings(r.Findings)
	m.headline(r.Comparison)
	m.objectives(r.Objectives)
	m.thresholds(r.Thresholds)
	m.summary(r.Total)
	m.responseTimes(r.Scenarios)
	m.transactions(r.Scenarios)
	m.checksAndCounters(r.Scenarios)
	m.otherMetrics(r.Comparison)
	m.workloads(r.Workloads, r.Comparison)
	m.routes(r.Routes, r.Comparison)
	m.runners(r.Runners, r.NodeLoad)
	m.environment(r)
	m.queries(r.Queries)
	m.slices(r.Slices)
	m.timeline(r.Phases)
	m.decided(r)
	return m.String()
}

// markdown is the report being written, one section per method, in the report's order; notes
// are the numbered reasons its tables' verdicts refer to.
type markdown struct {
	strings.Builder
	notes *notes
}

func (m *markdown) printf(format string, args ...any) { fmt.Fprintf(&m.Builder, format, args...) }

// overview is the title and the table of what was run and what came of it, the verdict
// before when and how it ran. The change against the baseline heads the next section.
func (m *markdown) overview(r *result.Result) {
	m.printf("# Performance test report: %s\n\n", r.Experiment)
	m.printf("| | |\n|---|---|\n")
	m.printf("| Experiment | %s/%s |\n", cell(r.Namespace), cell(r.Experiment))
	variant := r.Variant
	if variant == "" {
		variant = "none (the environment as it is)"
	}
	m.printf("| Variant | %s |\n", cell(variant))
	m.printf("| Verdict | **%s** |\n", orDash(string(r.Verdict)))
	if len(r.VerdictReasons) > 0 {
		m.printf("| Why | %s |\n", cell(strings.Join(r.VerdictReasons, "; ")))
	}
	validity := string(r.Validity)
	if len(r.InvalidReasons) > 0 {
		validity += ": " + strings.Join(r.InvalidReasons, "; ")
	}
	m.printf("| Validity | %s |\n", cell(validity))
	m.confoundedRow(r.Comparison)
	m.printf("| Test ID | `%s` |\n", r.TestID)
	m.printf("| Window | %s to %s |\n", ts(r.Window.Start), ts(r.Window.End))
	if r.Window.WarmUpEnd != nil {
		m.printf("| Warm-up | until %s (excluded) |\n", ts(*r.Window.WarmUpEnd))
	}
	m.printf("| Measured | %s |\n", dur(r.Window.MeasuredSeconds))
	m.printf("| Latency source | %s |\n", latencySource(r))
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
