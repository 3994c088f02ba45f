package report

import (
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/result"
)

// svgElement is one element of a chart, as encoding/xml reads it.
type svgElement struct {
	name  string
	attrs map[string]string
}

// charts parses every inline SVG of a page as XML (strictly: an unclosed tag or a bad entity
// fails the test) and returns each chart's elements, keyed by its aria-label.
func charts(t *testing.T, page string) map[string][]svgElement {
	t.Helper()
	out := map[string][]svgElement{}
	rest := page
	for {
		i := strings.Index(rest, "<svg")
		if i < 0 {
			return out
		}
		j := strings.Index(rest[i:], "</svg>")
		if j < 0 {
			t.Fatalf("an <svg> is never closed: %.200s", rest[i:])
		}
		frag := rest[i : i+j+len("</svg>")]
		rest = rest[i+j:]
		dec := xml.NewDecoder(strings.NewReader(frag))
		dec.Strict = true
		var els []svgElement
		label := ""
		for {
			tok, err := dec.Token()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatalf("an SVG is not well-formed XML: %v\n%.300s", err, frag)
			}
			if se, ok := tok.(xml.StartElement); ok {
				e := svgElement{name: se.Name.Local, attrs: map[string]string{}}
				for _, a := range se.Attr {
					e.attrs[a.Name.Local] = a.Value
				}
				if e.name == "svg" {
					label = e.attrs["aria-label"]
				}
				els = append(els, e)
			}
		}
		if _, dup := out[label]; dup {
			label += " (2)"
		}
		out[label] = els
	}
}

// marks counts the points drawn with a class: a polyline's points, a circle, a rect, a group.
func marks(els []svgElement, class string) int {
	n := 0
	for _, e := range els {
		if e.attrs["class"] != class {
			continue
		}
		if e.name == "polyline" {
			n += len(strings.Fields(e.attrs["points"]))
		} else {
			n++
		}
	}
	return n
}

var externalRef = regexp.MustCompile(`(?i)(src|href|xlink:href)\s*=\s*["']?\s*(https?:)?//`)

// selfContained fails when the page could fetch anything or run anything.
func selfContained(t *testing.T, page string) {
	t.Helper()
	if m := externalRef.FindString(page); m != "" {
		t.Errorf("the page refers to an external resource: %q", m)
	}
	for _, bad := range []string{"<script", "url(", "@import", "<link", "<iframe", "<img"} {
		if strings.Contains(strings.ToLower(page), bad) {
			t.Errorf("the page contains %q", bad)
		}
	}
}

func fixture(t *testing.T, name string) *result.Result {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	r, err := ParseJSON(b)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func nonNil(vs []*float64) int {
	n := 0
	for _, v := range vs {
		if v != nil {
			n++
		}
	}
	return n
}

// A reader sees who, what and the verdict before any chart.
func TestHTMLHeaderBeforeCharts(t *testing.T) {
	page, err := HTML(sample(), HTMLOptions{})
	if err != nil {
		t.Fatal(err)
	}
	head, svg := strings.Index(page, `id="headline"`), strings.Index(page, "<svg")
	if head < 0 || svg < 0 || head > svg {
		t.Fatalf("headline at %d, first chart at %d: the verdict must come first", head, svg)
	}
	header := page[:strings.Index(page, "</header>")]
	for _, want := range []string{"no-cpu-limits", "every service without a CPU limit", "Improved", changeColor("Improved"),
		"demo-baseline", "Pass", "Valid", "✓ Met", "check-out p95 under 500 ms", "objectives: 1 met of 1", "2026-03-01 10:00:00Z", "10m0s", "41.5"} {
		if !strings.Contains(header, want) {
			t.Errorf("the header lacks %q", want)
		}
	}
	// The Markdown overview is the header now; the tables below it stay.
	if strings.Contains(page, "<h1>Performance test report") || !strings.Contains(page, "<td>check-out</td>") {
		t.Error("the details should start after the Markdown overview and keep the tables")
	}
	selfContained(t, page)
}

// The two runs of the demo's question, as the real analysis computed them from a real
// Prometheus (testdata, see fixtures_gen_test.go): every chart with the number of marks its
// data has.
func TestHTMLChartsOfARunWithItsBaseline(t *testing.T) {
	r, base := fixture(t, "run.results.json"), fixture(t, "baseline.results.json")
	page, err := HTML(r, HTMLOptions{Baseline: base})
	if err != nil {
		t.Fatal(err)
	}
	selfContained(t, page)
	cs := charts(t, page)
	series := func(x *result.Result, scenario ...string) result.TimelineSeries {
		name := "*"
		if len(scenario) > 0 {
			name = scenario[0]
		}
		for _, s := range x.Timeline.Series {
			if s.Scenario == name {
				return s
			}
		}
		t.Fatal("no all-scenarios timeline in the fixture")
		return result.TimelineSeries{}
	}
	withRequests := func(x *result.Result) int {
		n := 0
		for _, row := range allScenariosIntervals(x).Counts {
			c := 0.0
			for _, v := range row {
				c += v
			}
			if c > 0 {
				n++
			}
		}
		return n
	}
	charted, uncharted := 0, 0
	for _, m := range r.Comparison.Metrics {
		switch {
		case m.Workload != "": // in the Services tables, not the chart
		case m.Estimate != nil && m.Low != nil && m.High != nil:
			charted++
		default:
			uncharted++
		}
	}
	cpuBars, memBars := 0, 0
	for _, w := range r.Workloads {
		if w.CPUAvg != nil {
			cpuBars++
		}
		if w.MemoryAvg != nil {
			memBars++
		}
	}
	tests := []struct {
		chart, class string
		want         int
	}{
		{"latency over time", "run-p95", nonNil(series(r).P95)},
		{"latency over time", "baseline-p95", nonNil(series(base).P95)},
		{"latency over time", "run-avg", withRequests(r)},
		{"latency over time", "baseline-avg", withRequests(base)},
		{"throughput over time", "run-rate", nonNil(series(r).Rate)},
		{"throughput over time", "baseline-rate", nonNil(series(base).Rate)},
		{"latency distribution", "run-mark", 5},
		{"latency distribution", "baseline-mark", 5},
		{"latency distribution", "run-curve", 61},
		{"latency distribution", "baseline-curve", 61},
		{"CPU per service", "run-avg", cpuBars},
		{"CPU per service", "baseline-avg", len(base.Workloads)},
		{"memory per service", "run-avg", memBars},
	}
	// Several scenarios: each one's p95 over time beside the others, the baseline's overlaid.
	for _, sc := range r.Scenarios {
		tests = append(tests,
			struct {
				chart, class string
				want         int
			}{"p95 over time: " + sc.Name, "run-p95", nonNil(series(r, sc.Name).P95)},
			struct {
				chart, class string
				want         int
			}{"p95 over time: " + sc.Name, "baseline-p95", nonNil(series(base, sc.Name).P95)})
	}
	if len(r.Scenarios) < 2 {
		t.Fatal("the fixture should have several scenarios")
	}
	for _, tc := range tests {
		t.Run(tc.chart+" "+tc.class, func(t *testing.T) {
			els, ok := cs[tc.chart]
			if !ok {
				t.Fatalf("no chart %q among %d", tc.chart, len(cs))
			}
			if got := marks(els, tc.class); got != tc.want || tc.want == 0 {
				t.Errorf("%d marks of %s, want %d (and more than none)", got, tc.class, tc.want)
			}
		})
	}
	forest := 0
	for label, els := range cs {
		if strings.Contains(label, "95% interval") {
			forest += marks(els, "forest-row")
		}
	}
	if forest != charted || charted == 0 {
		t.Errorf("%d rows in the forest plots, want one per metric with an interval (%d)", forest, charted)
	}
	// The services' limits: circulation's CPU limit only in the baseline (the variant removed it).
	if got := marks(cs["CPU per service"], "run-limit"); got != 1 { // catalogue
		t.Errorf("%d CPU limits drawn for this run, want 1 (catalogue)", got)
	}
	if got := marks(cs["CPU per service"], "baseline-limit"); got != 2 { // catalogue and circulation
		t.Errorf("%d CPU limits drawn for the baseline, want 2", got)
	}
	if uncharted > 0 && !strings.Contains(page, "Not charted, no interval") {
		t.Error("metrics without an interval are not listed")
	}
	// The order of the page: header, then the charts in the brief's order, then the details.
	order := []string{`id="headline"`, `id="latency"`, `id="distribution"`, `id="comparison"`, `id="throughput"`, `id="services"`, `id="details"`}
	last := -1
	for _, id := range order {
		i := strings.Index(page, id)
		if i <= last {
			t.Errorf("%s at %d, not after %d", id, i, last)
		}
		last = i
	}
}

// The percentile curve is read from the per-interval histograms; it must pass through the
// percentiles the tables state, which the analysis read from the window's histogram.
func TestDistributionCurveAgreesWithTheTables(t *testing.T) {
	for _, name := range []string{"run.results.json", "baseline.results.json"} {
		r := fixture(t, name)
		bs := mergedBuckets(r)
		for _, m := range percentileMarks {
			stated, _ := curveStats(r)
			want := m.get(stated)
			got := bucketQuantile(bs, m.q)
			if want == nil || math.Abs(got-*want) > 1e-6*(*want) {
				t.Errorf("%s %s: curve %v ms, table %v ms", name, m.label, got, deref(want))
			}
		}
	}
}

// Missing data is said, never drawn as zero, and never panics.
func TestHTMLWithMissingData(t *testing.T) {
	noTimeline := sample()
	noTimeline.Timeline, noTimeline.Intervals = nil, nil
	noBaseline := sample()
	noBaseline.Comparison = nil
	unknown := sample()
	unknown.Comparison = &result.Comparison{Baseline: "demo-baseline", Change: perfexpv1alpha1.ChangeUnknown,
		Message: "baseline experiment demo-baseline has not succeeded (phase Failed)"}
	statusOnly := sample() // a baseline whose report is gone: its status summary has no series
	statusOnly.Experiment, statusOnly.Timeline, statusOnly.Intervals = "demo-baseline", nil, nil
	invalid := sample()
	invalid.Validity, invalid.InvalidReasons, invalid.Verdict = perfexpv1alpha1.Invalid, []string{"scenario checkinout: 12% of requests failed"}, perfexpv1alpha1.VerdictInvalid

	tests := []struct {
		name     string
		r        *result.Result
		opts     HTMLOptions
		says     []string
		charts   int
		headline string
	}{
		{"no baseline", noBaseline, HTMLOptions{}, []string{"No baseline", "No baseline to overlay.", "This run was not compared with a baseline"}, 6, "No baseline"},
		{"no timeline", noTimeline, HTMLOptions{}, []string{"No latency over time: the result carries no per-interval timeline",
			"No throughput over time", "This run keeps no per-interval histograms: its curve joins its stated percentiles."}, 5, "Improved"},
		{"unknown comparison", unknown, HTMLOptions{}, []string{"No comparison with baseline demo-baseline (Unknown): baseline experiment demo-baseline has not succeeded (phase Failed)."}, 6, "Unknown"},
		{"baseline without series", sample(), HTMLOptions{Baseline: statusOnly}, []string{"The baseline demo-baseline is not overlaid: its result carries no per-interval data."}, 8, "Improved"},
		{"invalid run", invalid, HTMLOptions{}, []string{"scenario checkinout: 12% of requests failed"}, 8, "Improved"},
		{"nothing at all", &result.Result{}, HTMLOptions{}, []string{"No latency over time", "No latency distribution: the result states no percentiles",
			"No services were measured", "This run was not compared"}, 0, "No baseline"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			page, err := HTML(tc.r, tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			for _, want := range tc.says {
				if !strings.Contains(page, want) {
					t.Errorf("the page does not say %q", want)
				}
			}
			if got := len(charts(t, page)); got != tc.charts {
				t.Errorf("%d charts, want %d", got, tc.charts)
			}
			head := page[strings.Index(page, `id="headline"`):]
			if !strings.Contains(head[:strings.Index(head, "</div>")], tc.headline) {
				t.Errorf("headline %.200q lacks %q", head, tc.headline)
			}
			selfContained(t, page)
		})
	}
}

func TestHTMLEscapes(t *testing.T) {
	r := sample()
	r.Experiment = "<script>alert(1)</script>"
	r.Scenarios[0].Requests[0].Name = `"><svg onload=x>`
	r.Comparison.Metrics[0].Metric = `a<b & "c"`
	page, err := HTML(r, HTMLOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(page, "<script>") || strings.Contains(page, "<svg onload") || !strings.Contains(page, "&lt;script&gt;") {
		t.Error("text from the result reached the page unescaped")
	}
	charts(t, page) // every SVG still parses
}

func TestNiceTicks(t *testing.T) {
	tests := []struct {
		lo, hi float64
		n      int
		want   []float64
	}{
		{0, 100, 5, []float64{0, 20, 40, 60, 80, 100}},
		{0, 47, 5, []float64{0, 10, 20, 30, 40}},
		{0, 1, 4, []float64{0, 0.25, 0.5, 0.75, 1}},
		{-12, 31, 8, []float64{-10, 0, 10, 20, 30}},
		{-12, 31, 10, []float64{-10, -5, 0, 5, 10, 15, 20, 25, 30}},
	}
	for _, tc := range tests {
		got := niceTicks(tc.lo, tc.hi, tc.n)
		if len(got) != len(tc.want) {
			t.Errorf("niceTicks(%v, %v, %d) = %v, want %v", tc.lo, tc.hi, tc.n, got, tc.want)
			continue
		}
		for i := range got {
			if math.Abs(got[i]-tc.want[i]) > 1e-9 {
				t.Errorf("niceTicks(%v, %v, %d) = %v, want %v", tc.lo, tc.hi, tc.n, got, tc.want)
				break
			}
		}
	}
	if got := niceMax(47, 5); got != 50 {
		t.Errorf("niceMax(47) = %v, want 50", got)
	}
}

// A run with dozens of services and metrics keeps its charts readable: the busiest services
// (changed ones first) and the first metrics are drawn, and the page says how many are left to
// the tables.
func TestHTMLCapsLongLists(t *testing.T) {
	r := sample()
	r.Workloads = nil
	for i := range 40 {
		w := result.WorkloadResult{Kind: "Deployment", Namespace: "perf", Name: fmt.Sprintf("svc-%02d", i), CPUAvg: f(float64(i) / 10), MemoryAvg: f(float64(i+1) * (1 << 20))}
		w.Touched = i == 0 // the least busy, but changed: always drawn
		r.Workloads = append(r.Workloads, w)
	}
	metric := r.Comparison.Metrics[2] // avg, with an interval
	for i := range 40 {
		m := metric
		m.Metric = fmt.Sprintf("checkinout/r%02d avg", i)
		r.Comparison.Metrics = append(r.Comparison.Metrics, m)
	}
	page, err := HTML(r, HTMLOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cs := charts(t, page)
	if got := marks(cs["CPU per service"], "run-avg"); got != maxServiceRows {
		t.Errorf("%d services drawn, want %d", got, maxServiceRows)
	}
	if !strings.Contains(cs["CPU per service"][0].attrs["aria-label"], "CPU") || !strings.Contains(page, ">svc-00 (changed)<") || strings.Contains(page, ">deployment svc-01<") {
		t.Error("the changed service must be drawn and the least busy ones left to the tables")
	}
	if !strings.Contains(page, "The 30 busiest of 40 services are drawn") {
		t.Error("the page does not say services were left out")
	}
	if got := marks(cs["relative change of each metric with its 95% interval"], "forest-row"); got != maxForestRows {
		t.Errorf("%d metrics drawn, want %d", got, maxForestRows)
	}
	if !strings.Contains(page, "10 more metrics are in the table below.") {
		t.Error("the page does not say metrics were left out")
	}
}
