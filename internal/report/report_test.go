package report

import (
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/result"
)

var update = flag.Bool("update", false, "rewrite the golden files")

func f(v float64) *float64 { return &v }
func n(v int64) *int64     { return &v }

// sample is a result with every section filled, and some data absent.
func sample() *result.Result {
	start := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	warm := start.Add(time.Minute)
	stats := func(reqs, errs int64, p95 float64) result.RequestStats {
		return result.RequestStats{Requests: n(reqs), Errors: n(errs), Rate: f(float64(reqs) / 600), ErrorPercent: f(100 * float64(errs) / float64(reqs)),
			Avg: f(p95 / 3), P50: f(p95 / 4), P75: f(p95 / 2), P90: f(p95 * 0.8), P95: f(p95), P99: f(p95 * 2), Max: f(p95 * 5)}
	}
	r := &result.Result{
		Experiment: "no-cpu-limits", Namespace: "perf", TestID: "no-cpu-limits-1a2b3c4d", Variant: "every service without a CPU limit",
		Window:   result.WindowInfo{Start: start, WarmUpEnd: &warm, End: start.Add(11 * time.Minute), MeasuredStart: warm, MeasuredSeconds: 600},
		Validity: perfexpv1alpha1.Valid, LatencySource: perfexpv1alpha1.LatencyFromNativeHistogram, LatencyErrorBound: f(0.0905),
		Total: stats(48000, 12, 41.5),
		Scenarios: []result.ScenarioResult{{Name: "checkinout", Validity: perfexpv1alpha1.Valid, RequestStats: stats(48000, 12, 41.5), Iterations: n(24000), ActiveSeconds: f(600), DroppedIterations: n(24), DroppedPercent: f(0.0999),
			Requests: []result.RequestResult{{Name: "check-out", RequestStats: stats(24000, 10, 52)}, {Name: "check-in", RequestStats: stats(24000, 2, 30.25)},
				{Name: "a|pipe", RequestStats: result.RequestStats{Requests: n(0)}}}}},
		Workloads: []result.WorkloadResult{
			{Kind: "Deployment", Namespace: "perf", Name: "circulation", Touched: true, Pods: 2, PodsSeen: 3, Sidecars: []string{"istio-proxy"}, CPUAvg: f(0.812), CPUMax: f(1.3), CPULimitNote: "no limit",
				CPURequest: f(1), CPUPercentOfRequest: f(81.2), MemoryAvg: f(300 << 20), MemoryMax: f(310 << 20), MemoryLimit: f(1 << 30), MemoryPercentOfLimit: f(30.3),
				MemoryGrowthPerHour: f(2 << 20), MemoryTrendZ: f(0.1), Leak: result.LeakWindowTooShort, Restarts: n(0), OOMKills: n(0), RestartsSource: "cAdvisor container instances"},
			{Kind: "StatefulSet", Namespace: "perf", Name: "kafka", Pods: 1, CPUAvg: f(0.2), CPUMax: f(0.31), CPULimit: f(2), CPUPercentOfLimit: f(10), CPUThrottledPercent: f(0),
				CPURequestNote: "no request", MemoryLimitNote: "no limit"},
		},
		Queries: []result.QueryResult{
			{Name: "db-connections", Unit: "connections", Description: "open database connections", Query: "sum(pg_stat_activity_count)", Value: f(42)},
			{Name: "cpu-by-pod", Unit: "cores", Query: "sum by (pod) (...)", Series: []result.QuerySeries{{Labels: map[string]string{"pod": "a"}, Value: f(0.5)}, {Labels: map[string]string{"pod": "b"}}}},
			{Name: "broken", Query: "sum(", Error: "parse error"},
		},
		Slices: []result.SliceResult{{Name: "last-5m", Start: start.Add(6 * time.Minute), End: start.Add(11 * time.Minute), Total: stats(24000, 2, 45),
			Scenarios: []result.ScenarioResult{{Name: "checkinout", RequestStats: stats(24000, 2, 45)}}}},
		Comparison: &result.Comparison{Baseline: "demo-baseline", Change: perfexpv1alpha1.ChangeImproved, Method: result.MethodBlockBootstrap, Runs: 1, BaselineRuns: 1,
			MinChangePercent: 5, Multiplicity: "Holm across 1 primary metric", Notes: []string{"one run per side: ..."}, Metrics: []result.MetricComparison{
				{Metric: "checkinout p95", Scenario: "checkinout", Kind: perfexpv1alpha1.MetricP95, Unit: "ms", Primary: true, Baseline: f(60), Value: f(41.5), Delta: f(-18.5), DeltaPercent: f(-30.8333),
					Estimate: f(-30.2), Low: f(-35.1), High: f(-24.9), Scale: result.ScalePercent, PValue: f(0.00012), Samples: 20, BaselineSamples: 20, SampleUnit: "intervals", Change: perfexpv1alpha1.ChangeImproved},
				{Metric: "checkinout errorrate", Scenario: "checkinout", Kind: perfexpv1alpha1.MetricErrorRate, Unit: "%", Primary: true, Baseline: f(0), Value: f(0), Delta: f(0),
					Estimate: f(0), Low: f(0), High: f(0), Scale: result.ScalePoints, Samples: 20, BaselineSamples: 20, SampleUnit: "intervals", Constant: true, Change: perfexpv1alpha1.ChangeNoMeaningfulChange},
				{Metric: "checkinout avg", Scenario: "checkinout", Kind: perfexpv1alpha1.MetricAvg, Unit: "ms", Baseline: f(15), Value: f(14.6), Delta: f(-0.4), DeltaPercent: f(-2.6),
					Estimate: f(-2.6), Low: f(-9.3), High: f(+4.4), Scale: result.ScalePercent, PValue: f(0.41), Samples: 20, BaselineSamples: 20, SampleUnit: "intervals", Change: perfexpv1alpha1.ChangeInconclusive,
					Why: "the 95% interval [-9.3, +4.4]% straddles ±5%"},
				{Metric: "checkinout max", Scenario: "checkinout", Kind: perfexpv1alpha1.MetricMax, Unit: "ms", Baseline: f(200), Value: f(207.5), Delta: f(7.5), DeltaPercent: f(3.75), Change: perfexpv1alpha1.ChangeUnknown,
					Why: "a maximum is one request's latency: it has no interval to decide on"},
				{Metric: "perf/circulation cpu avg", Workload: "Deployment/perf/circulation", Pods: 2, BaselinePods: 1, Kind: result.MetricCPU, Unit: "cores", Baseline: f(0.41), Value: f(0.812),
					Estimate: f(98.0), Low: f(90.2), High: f(106.1), Scale: result.ScalePercent, Samples: 19, BaselineSamples: 19, SampleUnit: "intervals", Change: perfexpv1alpha1.ChangeRegressed},
				{Metric: "perf/circulation memory avg", Workload: "Deployment/perf/circulation", Pods: 2, BaselinePods: 1, Kind: result.MetricMemory, Unit: "MiB", Baseline: f(299), Value: f(300),
					Estimate: f(0.3), Low: f(-1.2), High: f(1.9), Scale: result.ScalePercent, Samples: 19, BaselineSamples: 19, SampleUnit: "intervals", Change: perfexpv1alpha1.ChangeNoMeaningfulChange},
				{Metric: "perf/kafka cpu avg", Workload: "StatefulSet/perf/kafka", Pods: 1, BaselinePods: 1, Kind: result.MetricCPU, Unit: "cores", Baseline: f(0.19), Value: f(0.2),
					Estimate: f(5.3), Low: f(-3.1), High: f(14.4), Scale: result.ScalePercent, Samples: 19, BaselineSamples: 19, SampleUnit: "intervals", Change: perfexpv1alpha1.ChangeInconclusive,
					Why: "the 95% interval [-3.1, +14.4]% straddles ±5%"},
				{Metric: "perf/kafka memory avg", Workload: "StatefulSet/perf/kafka", Pods: 1, BaselinePods: 1, Kind: result.MetricMemory, Unit: "MiB", Change: perfexpv1alpha1.ChangeUnknown,
					Why: "no use measured in one of the runs"},
			}},
		Objectives: []result.ObjectiveResult{{Name: "check-out p95 under 500 ms", Outcome: perfexpv1alpha1.ObjectiveMet, Value: f(52), Unit: "ms", Message: "52 ms is within bounds"}},
		Verdict:    perfexpv1alpha1.VerdictPass, PrometheusQueries: 31,
		Timeline: &result.Timeline{Start: warm, StepSeconds: 30, Series: []result.TimelineSeries{
			{Scenario: "*", P95: []*float64{f(40), f(42), nil, f(41)}, Rate: []*float64{f(80), f(81), f(0), f(79)}, ErrorRate: []*float64{f(0), f(0.1), nil, f(0)}},
			{Scenario: "checkinout", P95: []*float64{f(40), f(42), nil, f(41)}, Rate: []*float64{f(80), f(81), f(0), f(79)}, ErrorRate: []*float64{f(0), f(0.1), nil, f(0)}},
		}},
		Notes:  []string{"1 k6 series were reset mid-run (a restarted runner); they were read sample by sample"},
		Phases: []result.PhaseAt{{Phase: "Queued", Time: start.Add(-3 * time.Minute)}, {Phase: "Running", Time: start}, {Phase: "Analyzing", Time: start.Add(12 * time.Minute)}},
	}
	// 12 failures: the successful requests' latency apart.
	r.Scenarios[0].Successful = &result.Latency{Avg: f(40.1), P50: f(35), P90: f(60), P95: f(70), P99: f(120)}
	return r
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./internal/report -update to create it)", err)
	}
	if string(got) != string(want) {
		t.Errorf("%s differs from the golden file; run with -update after checking the diff:\n%s", name, got)
	}
}

func TestMarkdownGolden(t *testing.T) { golden(t, "report.md.golden", []byte(Markdown(sample()))) }

func TestJSONRoundTrip(t *testing.T) {
	want := sample()
	b, err := JSON(want)
	if err != nil {
		t.Fatal(err)
	}
	got, err := ParseJSON(b)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("round trip changed the result")
	}
}

func TestAbsentIsADash(t *testing.T) {
	tests := []struct {
		name, got, want string
	}{
		{"absent number", num(nil, 2), "-"},
		{"absent count", intOr(nil), "-"},
		{"zero is zero", intOr(n(0)), "0"},
		{"absent bytes", mib(nil), "-"},
		{"positive delta gets a sign", signed(f(1.5), 1), "+1.5"},
		{"pipes are escaped", cell("a|b"), `a\|b`},
		{"unit", withUnit(f(2.5), "ms"), "2.5 ms"},
		{"percent", withUnit(f(2.5), "%"), "2.5%"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if tc.got != tc.want {
				t.Errorf("got %q, want %q", tc.got, tc.want)
			}
		})
	}
	md := Markdown(&result.Result{Experiment: "empty", Scenarios: []result.ScenarioResult{{Name: "s", Validity: "Invalid", InvalidReason: "no k6 samples"}}})
	for _, want := range []string{"| **all** | - | - |", "(invalid: no k6 samples)", "none (no latency data)"} {
		if !strings.Contains(md, want) {
			t.Errorf("report of an empty result lacks %q:\n%s", want, md)
		}
	}
}

// "How these numbers were read" names the latency source the run actually used.
func TestMethodMatchesLatencySource(t *testing.T) {
	tests := []struct {
		source      perfexpv1alpha1.LatencySource
		says, never string
	}{
		{perfexpv1alpha1.LatencyFromNativeHistogram, "native histograms summed over every runner", "trend-stat gauges"},
		{perfexpv1alpha1.LatencyFromTrendStats, "an upper bound, and objectives on them are Met only below a maximum", "native histograms summed"},
		{"", "No latencies were found", "native histograms summed"},
	}
	for _, tc := range tests {
		t.Run(string(tc.source), func(t *testing.T) {
			r := sample()
			r.LatencySource = tc.source
			md := Markdown(r)
			method := md[strings.Index(md, "## How these numbers were read"):]
			if !strings.Contains(method, tc.says) || strings.Contains(method, tc.never) {
				t.Errorf("method section:\n%s\nwant %q and not %q", method, tc.says, tc.never)
			}
		})
	}
}

// The workloads' changes against the baseline are in the Services tables of both documents,
// not among the latency rows of the comparison table or its chart.
func TestWorkloadChangesInServicesTables(t *testing.T) {
	r := sample()
	page, err := HTML(r, HTMLOptions{})
	if err != nil {
		t.Fatal(err)
	}
	md := Markdown(r)
	services := md[strings.Index(md, "## Services: CPU"):]
	comparison := md[strings.Index(md, "## Compared with"):strings.Index(md, "## Services: CPU")]
	tests := []struct {
		name string
		ok   bool
	}{
		{"the CPU table has the change, its interval and verdict", strings.Contains(services, "| +98.0 % [+90.2, +106.1] | Regressed |")},
		{"a scaled workload shows its baseline's pods", strings.Contains(services, "| 2 (3), baseline 1 |")},
		{"the memory table has its own change", strings.Contains(services, "| +0.3 % [-1.2, +1.9] | NoMeaningfulChange |")},
		{"an undecided workload says why, once", strings.Count(services, "no use measured in one of the runs") == 1},
		{"the comparison table leaves them to the Services tables", !strings.Contains(comparison, "cpu avg")},
		{"the HTML page has the column", strings.Contains(page, "Δ vs baseline [95 % interval]")},
		{"the HTML chart of changes leaves them out", !strings.Contains(page[:strings.Index(page, "Δ vs baseline")], "circulation cpu avg")},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if !tc.ok {
				t.Error("not so")
			}
		})
	}
}

// A custom query with no series says why in the report, instead of a bare dash.
func TestEmptyQuerySaysWhy(t *testing.T) {
	queryNote := "the query returned no series at 2026-11-25T10:00:30Z, the end of the window [2026-11-25T10:00:00Z, 2026-11-25T10:00:30Z] ({{.Window}} = 30s)"
	r := &result.Result{Experiment: "short",
		Queries: []result.QueryResult{{Name: "db-writer-cpu", Unit: "cores", Query: "max(rate(x[30s]))", Note: queryNote}},
		Slices:  []result.SliceResult{{Name: "first", Queries: []result.QueryResult{{Name: "db-writer-cpu", Note: queryNote}}}},
	}
	md := Markdown(r)
	for _, want := range []string{
		"| db-writer-cpu | no series (below) | cores |",
		"db-writer-cpu: " + queryNote + ".",
		"- query db-writer-cpu: " + queryNote,
	} {
		if !strings.Contains(md, want) {
			t.Errorf("report lacks %q:\n%s", want, md)
		}
	}
}

// Story: a reader of a CI log sees the answer on the first screen: the verdict, the change
// against the baseline with the primary rows it rests on, the objectives; the detail tables
// follow, and the method comes once, in "How this was decided", after all of them.
func TestMarkdownOpensWithTheAnswer(t *testing.T) {
	md := Markdown(fixture(t, "run.results.json"))
	first := strings.Join(strings.SplitN(md, "\n", 41)[:40], "\n")
	for _, want := range []string{"| Verdict | **Pass** |", "## Compared with baseline demo-baseline", "Change: **Improved**",
		"| ★ checkinout p95 |", "| ★ search errorrate |", "## Objectives"} {
		if !strings.Contains(first, want) {
			t.Errorf("the first 40 lines lack %q:\n%s", want, first)
		}
	}
	order := []string{"## Objectives", "## Response times", "## Other compared metrics", "## Services: CPU", "## How this was decided", "Method: ", "### How these numbers were read"}
	for i := 1; i < len(order); i++ {
		if a, b := strings.Index(md, order[i-1]), strings.Index(md, order[i]); a < 0 || b < a {
			t.Errorf("%q (at %d) should come before %q (at %d)", order[i-1], a, order[i], b)
		}
	}
	if n := strings.Count(md, "Method: "); n != 1 {
		t.Errorf("the method is stated %d times, want once", n)
	}
}
