package dashboards_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"testing"
	"time"

	promv1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/analysis"
	"github.com/perfexp/perfexp/internal/analysis/promtest"
	"github.com/perfexp/perfexp/internal/dashboards"
	"github.com/perfexp/perfexp/internal/metrics"
)

// The load of every run: 5 VUs for 8 s, one request per iteration, checked; /fail answers 500,
// so a run that calls it has errors and one that does not has none.
const script = `
import http from 'k6/http';
import { check } from 'k6';
export const options = { vus: 5, duration: '8s' };
export default function () {
  const res = http.get(__ENV.BASE + '/ok?slow=' + __ENV.SLOW, { tags: { name: 'get-ok' } });
  check(res, { 'status 200': (r) => r.status === 200 });
  if (__ENV.FAIL === 'yes' && __ITER % 10 === 0) {
    http.get(__ENV.BASE + '/fail?slow=' + __ENV.SLOW, { tags: { name: 'get-fail' } });
  }
}
`

// service answers after 0.5 to 0.5+spread ms, spread from the query (the variant is slower).
func service(t *testing.T) *httptest.Server {
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		spread := 2000
		if r.URL.Query().Get("slow") == "yes" {
			spread = 6000
		}
		time.Sleep(time.Duration(500+rand.IntN(spread)) * time.Microsecond)
		if strings.HasPrefix(r.URL.Path, "/fail") {
			w.WriteHeader(http.StatusInternalServerError)
		}
	}))
	t.Cleanup(s.Close)
	return s
}

// k6Run runs the script and returns its window with the whole-second precision a status keeps.
func k6Run(t *testing.T, prom *promtest.Server, base, testID string, slow, fail bool, outputEnv ...map[string]string) dashboards.Run {
	t.Helper()
	start := time.Now().Truncate(time.Second)
	yes := map[bool]string{true: "yes", false: "no"}
	run := promtest.K6Run{Script: script, TestID: testID,
		Env: map[string]string{"BASE": base, "FAIL": yes[fail], "SLOW": yes[slow]}}
	if len(outputEnv) > 0 {
		run.OutputEnv = outputEnv[0]
	}
	prom.RunK6(t, run)
	end := time.Now().Add(time.Second).Truncate(time.Second)
	return dashboards.Run{TestID: testID, Start: start, MeasuredStart: start, End: end}
}

const (
	ns         = "shop"
	queueName  = "shop"
	sweepName  = "pool"
	podName    = "checkout-7d9f8b6c5d-x2x4z"
	baselineID = "pool-baseline-1-0a1b2c3d"
	variantID  = "pool-v1-1-4e5f6a7b"
)

// Story: a performance engineer opens the dashboard perfexp delivered for a run compared with
// its baseline. Every panel and the phase annotations show data from the real k6 runs, the
// run's error rate reads 0 (not "No data"), and the dashboard's p95 over the run is the
// report's p95 within the native histogram's bucket bound. The overview and sweep dashboards
// show the same runs from perfexp's own metrics.
func TestDashboardsOnRealK6Runs(t *testing.T) {
	if testing.Short() {
		t.Skip("runs k6 twice")
	}
	prom := promtest.Start(t)
	srv := service(t)
	baseline := k6Run(t, prom, srv.URL, baselineID, false, true)
	// The variant's service is slower: a different p95, so agreeing by accident is unlikely.
	variant := k6Run(t, prom, srv.URL, variantID, true, false)

	api := prom.API(t)
	report, err := analysis.Analyze(context.Background(), api, analysis.Input{Experiment: "pool-v1-1", Namespace: ns,
		TestID: variantID, Start: variant.Start, End: variant.End, Scenarios: []string{"default"}})
	if err != nil {
		t.Fatal(err)
	}
	if report.Total.P95 == nil || report.LatencyErrorBound == nil || report.Total.Requests == nil {
		t.Fatalf("the report has no p95: %+v", report.Total)
	}

	// The operator's last transition (Succeeded, 20 s after the window) must be in the past to
	// be written: Prometheus stores what happened, not what will.
	// Scrapes are every 5 s: one more than that after it.
	time.Sleep(time.Until(variant.End.Add(26 * time.Second)))
	now := time.Now()
	writeCAdvisor(t, prom, baseline.Start.Add(-4*time.Minute), now)
	writeOperatorMetrics(t, prom, baseline, variant, now)

	in := dashboards.ExperimentInput{Namespace: ns, Name: "pool-v1-1", Run: variant, Baseline: &baseline,
		Workloads: []dashboards.Workload{{Namespace: ns, Name: "checkout", Kind: perfexpv1alpha1.WorkloadKindDeployment}}}
	d := dashboards.Experiment(in)
	if err := dashboards.Validate(d); err != nil {
		t.Fatal(err)
	}
	g := grafanaFor(t, d, api)
	answers := g.executeAll(t, d)

	dashP95 := answers["p95 over the run/A"].only(t) * 1000
	bound := *report.LatencyErrorBound
	if rel := dashP95 / *report.Total.P95; math.Abs(rel-1) > bound {
		t.Errorf("dashboard p95 %.4f ms, report %.4f ms: %+.2f%%, beyond the bucket bound %.2f%%", dashP95, *report.Total.P95, 100*(rel-1), 100*bound)
	}
	t.Logf("p95 over the run: dashboard %.4f ms, report %.4f ms (%+.2f%%, bound ±%.2f%%)", dashP95, *report.Total.P95, 100*(dashP95 / *report.Total.P95 - 1), 100*bound)
	if got := answers["Requests over the run/A"].only(t); got != float64(*report.Total.Requests) {
		t.Errorf("dashboard requests %v, report %d", got, *report.Total.Requests)
	}
	if got := answers["Error rate over the run/A"].only(t); got != 0 || *report.Total.Errors != 0 {
		t.Errorf("error rate of a run without errors: dashboard %v, report %d errors", got, *report.Total.Errors)
	}
	if got := answers["Error rate over the run/B"].only(t); !(got > 5 && got < 15) {
		t.Errorf("baseline error rate %v%%, want about 10%% (every tenth iteration fails)", got)
	}
	for _, s := range answers["Error rate: run and baseline/A"].series {
		for _, v := range s.values {
			if v != 0 {
				t.Errorf("the run's error-rate curve has %v, want 0 at every step", v)
			}
		}
	}
	t.Logf("requests %v (report %d), error rate run %v%% baseline %.2f%%", answers["Requests over the run/A"].only(t), *report.Total.Requests,
		answers["Error rate over the run/A"].only(t), answers["Error rate over the run/B"].only(t))
	phases := map[string]bool{}
	for _, s := range answers["annotation/Phases"].series {
		phases[string(s.labels["phase"])] = true
	}
	for _, p := range []string{"Preparing", "Running", "Restoring", "Analyzing"} {
		if !phases[p] {
			t.Errorf("phase annotations lack %s: %v", p, phases)
		}
	}

	// A warm-up: the first 3 s are excluded. Counters are exact; the histogram is read with
	// increase(), which starts at k6's first push after the warm-up's end: one push interval
	// (1 s here) later than the report. It therefore agrees with the report whose warm-up ends
	// one push interval later, within the bucket bound.
	warm := variant
	warm.MeasuredStart = variant.Start.Add(3 * time.Second)
	wd := dashboards.Experiment(dashboards.ExperimentInput{Namespace: ns, Name: "pool-v1-1", Run: warm})
	wg := grafanaFor(t, wd, api)
	wp95 := wg.instant(t, wd.Panels[0].Targets[0].Expr).only(t) * 1000
	wreq := wg.instant(t, wd.Panels[1].Targets[0].Expr).only(t)
	for _, c := range []struct {
		warmUpEnd time.Time
		check     string
	}{{warm.MeasuredStart, "requests"}, {warm.MeasuredStart.Add(time.Second), "p95"}} {
		wr, err := analysis.Analyze(context.Background(), api, analysis.Input{Experiment: "pool-v1-1", Namespace: ns,
			TestID: variantID, Start: warm.Start, WarmUpEnd: c.warmUpEnd, End: warm.End, Scenarios: []string{"default"}})
		if err != nil {
			t.Fatal(err)
		}
		switch c.check {
		case "requests":
			if wreq != float64(*wr.Total.Requests) {
				t.Errorf("with a warm-up: dashboard requests %v, report %d", wreq, *wr.Total.Requests)
			}
			t.Logf("with a 3 s warm-up: requests dashboard %v, report %d (whole run %d); report p95 %.4f ms", wreq, *wr.Total.Requests, *report.Total.Requests, *wr.Total.P95)
		case "p95":
			if rel := wp95 / *wr.Total.P95; math.Abs(rel-1) > bound {
				t.Errorf("with a warm-up: dashboard p95 %.4f ms, report from one push later %.4f ms: beyond the bucket bound", wp95, *wr.Total.P95)
			}
			t.Logf("with a 3 s warm-up: p95 dashboard %.4f ms, report from one push interval later %.4f ms (%+.2f%%)", wp95, *wr.Total.P95, 100*(wp95 / *wr.Total.P95 - 1))
		}
	}

	// The overview and sweep dashboards, over the last minutes.
	for _, sd := range []*dashboards.Dashboard{dashboards.Overview(), dashboards.Sweep()} {
		if err := dashboards.Validate(sd); err != nil {
			t.Fatal(err)
		}
		sg := &grafana{api: api, from: baseline.Start.Add(-5 * time.Minute), to: now, vars: map[string][]string{"datasource": {"prometheus"}}}
		for _, v := range sd.Templating.List {
			if v.Type != "query" {
				continue
			}
			vals := sg.labelValues(t, v.Query.(string))
			if len(vals) == 0 {
				t.Fatalf("%s: variable %s has no values", sd.UID, v.Name)
			}
			sg.vars[v.Name] = vals
		}
		if got := sg.vars["testid"]; sd.UID == "perfexp-sweep" && strings.Join(got, ",") != baselineID+","+variantID {
			t.Errorf("the sweep's runs are %v", got)
		}
		sa := sg.executeAll(t, sd)
		if sd.UID == "perfexp-sweep" {
			arms := map[string]float64{}
			for _, s := range sa["p95 of every run, by arm/A"].series {
				arms[string(s.labels["arm"])] = s.values[0]
			}
			if len(arms) != 2 || math.Abs(arms["v1"]*1000 / *report.Total.P95 - 1) > bound {
				t.Errorf("sweep p95 by arm %v, the v1 run's report says %.4f ms", arms, *report.Total.P95)
			}
		}
		if sd.UID == "perfexp-overview" {
			verdicts := sa["Verdicts/A"].series
			if len(verdicts) != 2 {
				t.Errorf("verdicts table has %d rows, want 2: %+v", len(verdicts), verdicts)
			}
		}
	}
}

func grafanaFor(t *testing.T, d *dashboards.Dashboard, api any) *grafana {
	t.Helper()
	from, err1 := time.Parse(time.RFC3339, d.Time.From)
	to, err2 := time.Parse(time.RFC3339, d.Time.To)
	if err1 != nil || err2 != nil {
		t.Fatalf("time range %+v: %v %v", d.Time, err1, err2)
	}
	g := &grafana{from: from, to: to, vars: map[string][]string{}}
	g.api = api.(promv1.API)
	for _, v := range d.Templating.List {
		if v.Current != nil {
			g.vars[v.Name] = []string{fmt.Sprint(v.Current.Value)}
		}
	}
	g.vars["datasource"] = []string{"prometheus"}
	return g
}

// writeCAdvisor writes one container of the checkout Deployment as kube-prometheus-stack
// scrapes cAdvisor: half a core and 200 MiB, a sample every 15 s.
func writeCAdvisor(t *testing.T, prom *promtest.Server, from, to time.Time) {
	t.Helper()
	labels := func(name string) map[string]string {
		return map[string]string{"__name__": name, "job": "kubelet", "metrics_path": "/metrics/cadvisor",
			"namespace": ns, "pod": podName, "container": "app"}
	}
	cpu := promtest.Series{Labels: labels("container_cpu_usage_seconds_total")}
	mem := promtest.Series{Labels: labels("container_memory_working_set_bytes")}
	for ts := from; !ts.After(to); ts = ts.Add(15 * time.Second) {
		cpu.Floats = append(cpu.Floats, promtest.Float{T: ts, V: 0.5 * ts.Sub(from).Seconds()})
		mem.Floats = append(mem.Floats, promtest.Float{T: ts, V: 200 << 20})
	}
	prom.Write(t, []promtest.Series{cpu, mem})
}

// event is a reconcile's status write at a time.
type event struct {
	at            time.Time
	before, after *perfexpv1alpha1.PerfExperiment
}

// writeOperatorMetrics plays both runs' phase transitions through perfexp's real metrics
// recorder and writes what a scrape every 5 s would have read.
func writeOperatorMetrics(t *testing.T, prom *promtest.Server, baseline, variant dashboards.Run, now time.Time) {
	t.Helper()
	var events []event
	for _, r := range []struct {
		run       dashboards.Run
		name, arm string
		verdict   perfexpv1alpha1.Verdict
	}{{baseline, "pool-baseline-1", "baseline", perfexpv1alpha1.VerdictPass}, {variant, "pool-v1-1", "v1", perfexpv1alpha1.VerdictFail}} {
		e := &perfexpv1alpha1.PerfExperiment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: r.name, Labels: map[string]string{
			perfexpv1alpha1.LabelSweep: sweepName, perfexpv1alpha1.LabelArm: r.arm, perfexpv1alpha1.LabelRepeat: "1"}}}
		e.Spec.Variant = &perfexpv1alpha1.Variant{Description: r.arm}
		prev := &perfexpv1alpha1.PerfExperiment{ObjectMeta: e.ObjectMeta}
		for _, s := range []struct {
			phase perfexpv1alpha1.Phase
			at    time.Time
		}{
			{perfexpv1alpha1.PhasePending, r.run.Start.Add(-40 * time.Second)},
			{perfexpv1alpha1.PhaseQueued, r.run.Start.Add(-39 * time.Second)},
			{perfexpv1alpha1.PhasePreparing, r.run.Start.Add(-20 * time.Second)},
			{perfexpv1alpha1.PhaseRunning, r.run.Start},
			{perfexpv1alpha1.PhaseRestoring, r.run.End},
			{perfexpv1alpha1.PhaseAnalyzing, r.run.End.Add(10 * time.Second)},
			{perfexpv1alpha1.PhaseSucceeded, r.run.End.Add(20 * time.Second)},
		} {
			next := prev.DeepCopy()
			next.Status.TestID = r.run.TestID
			next.Status.Phase = s.phase
			next.Status.PhaseHistory = append(next.Status.PhaseHistory, perfexpv1alpha1.PhaseTransition{Phase: s.phase, Time: metav1.NewTime(s.at)})
			if s.phase == perfexpv1alpha1.PhaseAnalyzing {
				next.Status.Conditions = []metav1.Condition{{Type: perfexpv1alpha1.ConditionEnvironmentRestored, Status: metav1.ConditionTrue}}
			}
			if s.phase == perfexpv1alpha1.PhaseSucceeded {
				next.Status.Verdict = r.verdict
			}
			events = append(events, event{at: s.at, before: prev, after: next})
			prev = next
		}
	}
	sort.SliceStable(events, func(i, j int) bool { return events[i].at.Before(events[j].at) })
	if last := events[len(events)-1].at; !now.After(last) {
		t.Fatalf("the runs' last transition %s is not before now %s", last, now)
	}

	rec := metrics.New()
	reg := prometheus.NewRegistry()
	reg.MustRegister(rec)
	series := map[string]*promtest.Series{}
	var order []string
	seen := map[string]bool{}
	add := func(labels map[string]string, ts time.Time, v float64) {
		keys := make([]string, 0, len(labels))
		for k, v := range labels {
			keys = append(keys, k+"="+v)
		}
		sort.Strings(keys)
		key := strings.Join(keys, ",")
		s := series[key]
		if s == nil {
			s = &promtest.Series{Labels: labels}
			series[key] = s
			order = append(order, key)
		}
		s.Floats = append(s.Floats, promtest.Float{T: ts, V: v})
		seen[key] = true
	}
	next := 0
	for ts := events[0].at.Add(-10 * time.Second); !ts.After(now); ts = ts.Add(5 * time.Second) {
		for ; next < len(events) && !events[next].at.After(ts); next++ {
			rec.Record(events[next].before, events[next].after, queueName)
		}
		before := seen
		seen = map[string]bool{}
		mfs, err := reg.Gather()
		if err != nil {
			t.Fatal(err)
		}
		for _, mf := range mfs {
			for _, m := range mf.GetMetric() {
				base := map[string]string{"job": "perfexp-manager"}
				for _, lp := range m.GetLabel() {
					base[lp.GetName()] = lp.GetValue()
				}
				with := func(name string, extra ...string) map[string]string {
					l := map[string]string{"__name__": name}
					for k, v := range base {
						l[k] = v
					}
					for i := 0; i+1 < len(extra); i += 2 {
						l[extra[i]] = extra[i+1]
					}
					return l
				}
				switch mf.GetType() {
				case dto.MetricType_GAUGE:
					add(with(mf.GetName()), ts, m.GetGauge().GetValue())
				case dto.MetricType_COUNTER:
					add(with(mf.GetName()), ts, m.GetCounter().GetValue())
				case dto.MetricType_HISTOGRAM:
					h := m.GetHistogram()
					for _, b := range h.GetBucket() {
						add(with(mf.GetName()+"_bucket", "le", fmt.Sprint(b.GetUpperBound())), ts, float64(b.GetCumulativeCount()))
					}
					add(with(mf.GetName()+"_bucket", "le", "+Inf"), ts, float64(h.GetSampleCount()))
					add(with(mf.GetName()+"_sum"), ts, h.GetSampleSum())
					add(with(mf.GetName()+"_count"), ts, float64(h.GetSampleCount()))
				}
			}
		}
		// A series the scrape no longer finds gets a staleness marker, as Prometheus writes.
		for key := range before {
			if !seen[key] {
				series[key].Floats = append(series[key].Floats, promtest.Float{T: ts, V: promtest.StaleNaN})
			}
		}
	}
	out := make([]promtest.Series, 0, len(order))
	for _, k := range order {
		out = append(out, *series[k])
	}
	prom.Write(t, out)
}
