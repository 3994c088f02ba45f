package dashboards

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/analysis"
)

// k6 series as k6's experimental-prometheus-rw output writes them with
// K6_PROMETHEUS_RW_TREND_AS_NATIVE_HISTOGRAM=true (the names internal/analysis reads).
const (
	k6Requests = "k6_http_reqs_total"
	k6Duration = "k6_http_req_duration_seconds"
	// k6Failed selects the requests k6 did not expect (http_req_failed), as the report counts errors.
	k6Failed = `expected_response="false"`
)

// Margins around the run on the dashboard's time range: the phases before the load
// (Preparing, SettingUp) and after it (Restoring, Analyzing) are annotated there. Both exceed
// analysis.DefaultEndGrace, so the last samples the report reads are inside the range.
const (
	marginBefore = 2 * time.Minute
	marginAfter  = 2 * time.Minute
)

// Run locates one run's samples: its test id and its recorded window.
type Run struct {
	TestID string
	// Start and End are the recorded window; MeasuredStart is where results begin (the warm-up's
	// end, or Start).
	Start, MeasuredStart, End time.Time
}

// Workload is a service whose CPU and memory the dashboard shows.
type Workload struct {
	Namespace, Name string
	Kind            perfexpv1alpha1.WorkloadKind
}

// ExperimentInput is what an experiment's dashboard is made of.
type ExperimentInput struct {
	Namespace, Name string
	Run             Run
	// Baseline is the run compared with; nil leaves the baseline variable empty (its curves
	// then show nothing until someone types a test id).
	Baseline  *Run
	Workloads []Workload
	// CAdvisorMatchers and CAdvisorMaxAge select cAdvisor's series and drop stale ones, as the
	// analysis does; empty and zero mean analysis.DefaultCAdvisorMatchers and
	// analysis.DefaultCAdvisorMaxAge.
	CAdvisorMatchers string
	CAdvisorMaxAge   time.Duration
}

// UID is the dashboard uid of a run: perfexp-<testid>, shortened to Grafana's 40 characters
// while keeping the test id's UID suffix, which is what makes it unique.
func UID(testID string) string {
	uid := "perfexp-" + testID
	if len(uid) <= UIDMaxLength {
		return uid
	}
	suffix := testID
	if i := strings.LastIndex(testID, "-"); i >= 0 {
		suffix = testID[i+1:]
	}
	if len(suffix) > 16 {
		suffix = suffix[len(suffix)-16:]
	}
	head := strings.TrimRight(testID[:UIDMaxLength-len("perfexp-")-len(suffix)-1], "-.")
	return "perfexp-" + head + "-" + suffix
}

// selectors renders a query for the run (testid=$testid) and for the baseline shifted onto the
// run's time (testid=$baseline, offset $baseline_offset): %[1]s is the test-id matcher, %[2]s the
// offset modifier to put after every selector.
type selectors struct{ run, baseline [2]string }

var overlay = selectors{
	run:      [2]string{`testid="$testid"`, ""},
	baseline: [2]string{`testid="$baseline"`, " offset ${baseline_offset}s"},
}

func (s selectors) both(format, legend string) []*Target {
	return []*Target{
		rangeQ(fmt.Sprintf(format, s.run[0], s.run[1]), legend+"run"),
		rangeQ(fmt.Sprintf(format, s.baseline[0], s.baseline[1]), legend+"baseline"),
	}
}

// wholeRun is how a query reads the measured window from one instant at the end of the
// dashboard's range. k6 writes cumulative series that start at zero with the run (the test id
// is new), so without a warm-up the last sample is the whole run: the same histogram the
// report's percentiles come from. Counters are read with last_over_time; native histograms
// with a plain selector (Prometheus 2 has no last_over_time for them), which finds the last
// sample within the 5-minute lookback: the range ends 2 minutes after the window, and k6 writes
// no staleness markers unless told to (K6_PROMETHEUS_RW_STALE_MARKERS). With a warm-up the
// counters' values at its end are subtracted; native histograms cannot be subtracted in
// PromQL before Prometheus 2.50, so increase() over the measured window stands in for them: it
// starts at the first sample after the warm-up, one push interval (k6's default 5 s) later than
// the report does.
type wholeRun struct {
	warmUp bool
	// measured is the range from the warm-up's end to the dashboard's end, at; warmUpEnd is
	// the warm-up's end (Unix seconds).
	measured      string
	at, warmUpEnd int64
}

// counterSum is the sum of sel's counters over the measured window.
func (w wholeRun) counterSum(sel, off string) string {
	last := fmt.Sprintf("sum(last_over_time(%s[$__range]%s))", sel, off)
	if !w.warmUp {
		return last
	}
	// The value at the warm-up's end is the last sample up to it; series first written after
	// the warm-up count from zero.
	return fmt.Sprintf("(%s - (sum(last_over_time(%s[$__range] @ %d%s)) or vector(0)))", last, sel, w.warmUpEnd, off)
}

func (w wholeRun) histogram(sel, off string) string {
	if !w.warmUp {
		return sel + off
	}
	return fmt.Sprintf("increase(%s[%s] @ %d%s)", sel, w.measured, w.at, off)
}

// Experiment builds the dashboard of one run.
func Experiment(in ExperimentInput) *Dashboard {
	r := in.Run
	from, to := r.Start.Add(-marginBefore).UTC(), r.End.Add(marginAfter).UTC()
	wr := wholeRun{warmUp: r.MeasuredStart.After(r.Start)}
	if wr.warmUp {
		wr.measured = strconv.FormatInt(int64(to.Sub(r.MeasuredStart).Seconds()), 10) + "s"
		wr.at, wr.warmUpEnd = to.Unix(), r.MeasuredStart.Unix()
	}
	baselineID, offset := "", "0"
	if b := in.Baseline; b != nil {
		baselineID = b.TestID
		offset = strconv.FormatInt(int64(r.MeasuredStart.Sub(b.MeasuredStart).Round(time.Second).Seconds()), 10)
	}

	var l layout
	reqSel := func(tid string, extra ...string) string {
		return fmt.Sprintf("%s{%s}", k6Requests, strings.Join(append([]string{tid}, extra...), ","))
	}
	histSel := func(tid string) string { return fmt.Sprintf("%s{%s}", k6Duration, tid) }
	p95Run := func(s [2]string) string {
		return fmt.Sprintf("histogram_quantile(0.95, sum(%s)) or %s", wr.histogram(histSel(s[0]), s[1]), trendStatRun("p95", s[0], s[1]))
	}
	errRun := func(s [2]string) string {
		return fmt.Sprintf("100 * (%s or vector(0)) / %s",
			wr.counterSum(reqSel(s[0], k6Failed), s[1]), wr.counterSum(reqSel(s[0]), s[1]))
	}

	// Over the run: one number each, from the same histograms and counters as the report.
	p95 := l.add(6, 4, stat("p95 over the run", "s",
		"The 95th percentile of every request of the measured window, from the run's merged native histograms: the same histogram the report's p95 is read from (the two agree within one histogram bucket, 9% for k6's schema 3). "+trendStatNote,
		instantQ(p95Run(overlay.run), "run"), instantQ(p95Run(overlay.baseline), "baseline")))
	p95.FieldConfig.Defaults.NoValue = "no latency series"
	l.add(6, 4, stat("Requests over the run", "short",
		"Requests k6 made in the measured window: the report's request count.",
		instantQ(wr.counterSum(reqSel(overlay.run[0]), ""), "run")))
	l.add(6, 4, stat("Error rate over the run", "percent",
		"Requests k6 did not expect (http_req_failed) in % of all requests. A run without errors reads 0.",
		instantQ(errRun(overlay.run), "run"), instantQ(errRun(overlay.baseline), "baseline")))
	l.add(6, 4, stat("Baseline shift", "s",
		"How far the baseline's curves are moved forward in time to overlay the run ($baseline_offset): the time between the two runs' measured starts.",
		instantQ("vector(${baseline_offset})", "seconds")))

	// Over time, the baseline overlaid.
	l.add(12, 8, timeseries("p95 latency: run and baseline", "s",
		"The 95th percentile over each rate interval, merged over every k6 runner and scenario. "+trendStatNote,
		overlay.both(`histogram_quantile(0.95, sum(rate(`+k6Duration+`{%[1]s}[$__rate_interval]%[2]s))) or max(`+trendStatPrefix+`p95{%[1]s}%[2]s)`, "p95 ")...))
	l.add(12, 8, timeseries("Requests per second: run and baseline", "reqps", "",
		overlay.both(`sum(rate(`+k6Requests+`{%s}[$__rate_interval]%s))`, "")...))
	l.add(12, 8, timeseries("Error rate: run and baseline", "percent",
		"Requests k6 did not expect, in % of all requests over each rate interval; 0 while requests all succeed.",
		overlay.both(`100 * (sum(rate(`+k6Requests+`{%[1]s,`+k6Failed+`}[$__rate_interval]%[2]s)) or 0 * sum(rate(`+k6Requests+`{%[1]s}[$__rate_interval]%[2]s))) / sum(rate(`+k6Requests+`{%[1]s}[$__rate_interval]%[2]s))`, "")...))
	qs := []struct{ q, stat string }{{"0.5", "p50"}, {"0.9", "p90"}, {"0.95", "p95"}, {"0.99", "p99"}}
	pcts := make([]*Target, 0, len(qs))
	for _, pq := range qs {
		q, stat := pq.q, pq.stat
		pcts = append(pcts, rangeQ(fmt.Sprintf(`histogram_quantile(%s, sum by (scenario) (rate(%s{testid="$testid"}[$__rate_interval]))) or max by (scenario) (%s%s{testid="$testid"})`,
			q, k6Duration, trendStatPrefix, stat), "{{scenario}} "+stat))
	}
	l.add(12, 8, timeseries("Latency percentiles by scenario", "s", trendStatNote, pcts...))
	l.add(24, 8, timeseries("p95 by request name", "s", trendStatNote,
		rangeQ(fmt.Sprintf(`histogram_quantile(0.95, sum by (scenario, name) (rate(%s{testid="$testid"}[$__rate_interval]))) or max by (scenario, name) (%sp95{testid="$testid"})`, k6Duration, trendStatPrefix), "{{scenario}} {{name}}")))
	addK6Panels(&l)

	if len(in.Workloads) > 0 {
		cpu, mem := workloadTargets(in)
		l.add(12, 8, timeseries("CPU per service: run and baseline", "none",
			"Cores used by every container of the service's pods (sidecars included), counted only while their cAdvisor samples are fresh, as the report counts them.", cpu...))
		l.add(12, 8, timeseries("Memory working set per service: run and baseline", "bytes", "", mem...))
	}

	return &Dashboard{
		UID:           UID(r.TestID),
		Title:         fmt.Sprintf("perfexp %s/%s", in.Namespace, in.Name),
		Description:   fmt.Sprintf("Experiment %s/%s, test id %s. Written by perfexp; edits are overwritten.", in.Namespace, in.Name, r.TestID),
		Tags:          []string{tagPerfexp, "perfexp-experiment"},
		SchemaVersion: 39,
		Editable:      true,
		Time:          TimeRange{From: from.Format(time.RFC3339), To: to.Format(time.RFC3339)},
		Templating: Templating{List: []*Variable{
			datasourceVariable(),
			constant("testid", r.TestID),
			textbox("baseline", "Baseline test id", baselineID, "The test id of the run to overlay (status.testID of the baseline experiment)."),
			textbox("baseline_offset", "Baseline shift (s)", offset, "Seconds between the baseline's measured start and this run's: its curves are moved forward by this much."),
		}},
		Annotations: Annotations{List: []*Annotation{phaseAnnotation(`perfexp_experiment_info{testid="$testid"}`)}},
		Panels:      l.panels,
	}
}

// phaseAnnotation marks the phases of perfexp's experiments from perfexp_experiment_info: one
// series per phase, so each phase is one region. A 10 s step finds every phase that lasted
// longer than a step and was scraped.
func phaseAnnotation(expr string) *Annotation {
	return &Annotation{Name: "Phases", Datasource: promDS(), Enable: true, IconColor: "rgba(255, 152, 48, 1)",
		Expr: expr, Step: "10s", TitleFormat: "{{phase}}", TextFormat: "{{namespace}}/{{name}} {{variant}} ({{testid}})", TagKeys: "phase"}
}

// workloadTargets are the CPU and memory queries of every workload, for the run and the
// baseline, with the analysis's cAdvisor matchers and freshness rule.
func workloadTargets(in ExperimentInput) (cpu, mem []*Target) {
	matchers := in.CAdvisorMatchers
	if matchers == "" {
		matchers = analysis.DefaultCAdvisorMatchers
	}
	maxAge := in.CAdvisorMaxAge
	if maxAge <= 0 {
		maxAge = analysis.DefaultCAdvisorMaxAge
	}
	age := strconv.FormatFloat(maxAge.Seconds(), 'f', -1, 64)
	for _, w := range in.Workloads {
		sel := fmt.Sprintf(`{%s,container!="",container!="POD",namespace=%s,pod=~%s}`, matchers,
			strconv.Quote(w.Namespace), strconv.Quote(analysis.PodPattern(w.Kind, w.Name)))
		legend := w.Namespace + "/" + w.Name
		runs := []struct{ off, shift, who string }{{"", "", "run"}}
		if in.Baseline != nil {
			// Without a baseline these would repeat the run's curves (offset 0) under its name.
			runs = append(runs, struct{ off, shift, who string }{" offset ${baseline_offset}s", " - ${baseline_offset}", "baseline"})
		}
		for _, s := range runs {
			// A series counts only while its newest sample is fresh: cAdvisor stamps its own
			// times, so a gone container would otherwise linger for the 5-minute lookback.
			fresh := func(metric string) string {
				return fmt.Sprintf("(timestamp(%s%s%s) > time()%s - %s)", metric, sel, s.off, s.shift, age)
			}
			cpu = append(cpu, rangeQ(fmt.Sprintf("sum(rate(container_cpu_usage_seconds_total%s[$__rate_interval]%s) and %s)",
				sel, s.off, fresh("container_cpu_usage_seconds_total")), legend+" "+s.who))
			mem = append(mem, rangeQ(fmt.Sprintf("sum(container_memory_working_set_bytes%s%s and %s)",
				sel, s.off, fresh("container_memory_working_set_bytes")), legend+" "+s.who))
		}
	}
	return cpu, mem
}
