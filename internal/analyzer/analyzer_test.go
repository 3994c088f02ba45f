package analyzer_test

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/analysis/promtest"
	"github.com/perfexp/perfexp/internal/analyzer"
	"github.com/perfexp/perfexp/internal/history"
	"github.com/perfexp/perfexp/internal/judge"
	"github.com/perfexp/perfexp/internal/load"
	"github.com/perfexp/perfexp/internal/report"
	"github.com/perfexp/perfexp/internal/step"
	"github.com/perfexp/perfexp/internal/testenv"
)

// The analyzer against a real API server and a real Prometheus holding a crafted run: two k6
// runners, a touched Deployment and an observed StatefulSet. The reconciler is not running;
// Analyze is called as the Analyzing phase calls it, and what it writes is checked.
func TestPrometheusAnalyzer(t *testing.T) {
	env := testenv.Start(t)
	prom := promtest.Start(t)
	ctx := t.Context()
	ns := env.Namespace(t, "analysis")

	end := time.Now().Add(-10 * time.Minute).Truncate(time.Second)
	start := end.Add(-5 * time.Minute)
	const testID = "story-run"
	var series []promtest.Series
	perInstance := map[string][2]int64{}
	for _, inst := range []string{"0", "1"} {
		out := promtest.NewK6Series(promtest.K6Labels(testID, "checkinout", "check-out", inst, true))
		in := promtest.NewK6Series(promtest.K6Labels(testID, "checkinout", "check-in", inst, true))
		for i := 1; i <= 59; i++ {
			at := start.Add(time.Duration(i)*5*time.Second + 100*time.Millisecond)
			out.Flush(at, 0.020, 0.025, 0.030)
			in.Flush(at, 0.010, 0.012)
		}
		series = append(series, out.Series()...)
		series = append(series, in.Series()...)
		perInstance[inst] = [2]int64{59 * 5, 0}
	}
	cpu := func(pod, container string, cores float64) promtest.Series {
		s := promtest.Series{Labels: map[string]string{"__name__": "container_cpu_usage_seconds_total", "job": "kubelet", "metrics_path": "/metrics/cadvisor",
			"namespace": ns, "pod": pod, "container": container}}
		for at := start.Add(-time.Minute); !at.After(end.Add(time.Minute)); at = at.Add(15 * time.Second) {
			s.Floats = append(s.Floats, promtest.Float{T: at, V: cores * at.Sub(start).Seconds()})
		}
		return s
	}
	series = append(series, cpu("api-5d4c3b2a1-abcde", "app", 0.5), cpu("db-0", "postgres", 0.3), cpu("cache-7b6a5c4d3-fghij", "redis", 0.2))
	prom.Write(t, series)

	one := int32(1)
	db := &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "db", Labels: map[string]string{"app": "db"}},
		Spec: appsv1.StatefulSetSpec{Replicas: &one, ServiceName: "db", Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "db"}},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "db"}},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "postgres", Image: "postgres",
					Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m")}}}}}}}}
	mustCreate(t, env.Client, db)
	// Neither touched nor observed: reported because it runs in the target namespace. idle
	// has no pods, so it is left out.
	for _, name := range []string{"cache", "idle"} {
		mustCreate(t, env.Client, &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
			Spec: appsv1.DeploymentSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": name}},
				Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": name}},
					Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "redis", Image: "redis",
						Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}}}}}}}})
	}

	summaries := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "story-k6-summaries"}, Data: map[string]string{}}
	for inst, c := range perInstance {
		summaries.Data["checkinout-"+inst+".json"] = fmt.Sprintf(`{"metrics":{"http_reqs":{"count":%d,"rate":1},"http_req_failed":{"passes":%d,"fails":%d,"value":0,"thresholds":{"rate<0.01":false}}}}`, c[0], c[1], c[0]-c[1])
	}
	mustCreate(t, env.Client, summaries)

	newExperiment := func(name, id string) *perfexpv1alpha1.PerfExperiment {
		exp := experiment(ns, name)
		max := resource.MustParse("500")
		onePercent := resource.MustParse("1")
		exp.Spec.Baseline = &perfexpv1alpha1.BaselineRef{Name: "release-0"}
		exp.Spec.Variant = &perfexpv1alpha1.Variant{Description: "api without a CPU limit", Workloads: []perfexpv1alpha1.WorkloadChange{{
			WorkloadSelector: perfexpv1alpha1.WorkloadSelector{Names: []string{"api"}},
			Resources:        &perfexpv1alpha1.ResourcesChange{RemoveLimits: []corev1.ResourceName{corev1.ResourceCPU}}}}}
		exp.Spec.Analysis = &perfexpv1alpha1.Analysis{
			Observe: []perfexpv1alpha1.ObservedWorkloads{{WorkloadSelector: perfexpv1alpha1.WorkloadSelector{Kind: perfexpv1alpha1.WorkloadKindStatefulSet,
				Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "db"}}}}},
			Objectives: []perfexpv1alpha1.Objective{
				{Name: "check-out p95 under 500 ms", Metric: perfexpv1alpha1.MetricP95, Scenario: "checkinout", Request: "check-out", Max: &max},
				{Metric: perfexpv1alpha1.MetricErrorRate, Max: &onePercent},
			},
		}
		mustCreate(t, env.Client, exp)
		exp.Status = perfexpv1alpha1.PerfExperimentStatus{
			Phase:  perfexpv1alpha1.PhaseAnalyzing,
			TestID: id,
			Window: &perfexpv1alpha1.Window{Start: &metav1.Time{Time: start}, End: &metav1.Time{Time: end}},
			PhaseHistory: []perfexpv1alpha1.PhaseTransition{{Phase: perfexpv1alpha1.PhaseRunning, Time: metav1.Time{Time: start}},
				{Phase: perfexpv1alpha1.PhaseAnalyzing, Time: metav1.Time{Time: end.Add(time.Minute)}}},
			Environment: &perfexpv1alpha1.EnvironmentStatus{Touched: []perfexpv1alpha1.TouchedObject{{APIVersion: "apps/v1", Kind: "Deployment", Namespace: ns, Name: "api",
				Containers: []perfexpv1alpha1.ContainerResources{{Name: "app", Requests: map[corev1.ResourceName]resource.Quantity{corev1.ResourceCPU: resource.MustParse("250m")}}}}}},
			Load: &perfexpv1alpha1.LoadStatus{SummariesRef: &perfexpv1alpha1.LocalObjectReference{Name: summaries.Name}},
		}
		if err := env.Client.Status().Update(ctx, exp); err != nil {
			t.Fatal(err)
		}
		return get(t, env.Client, ns, name)
	}
	clock := clocktesting.NewFakePassiveClock(end.Add(5 * time.Second))
	an := &analyzer.PrometheusAnalyzer{Client: env.Client, PrometheusURL: prom.URL, Clock: clock}
	analyze := func(t *testing.T, exp *perfexpv1alpha1.PerfExperiment) step.Result {
		t.Helper()
		res, err := an.Analyze(ctx, exp, nil)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	exp := newExperiment("story", testID)

	t.Run("right after the run, with no runner summaries to compare with, it waits the settle time and says so", func(t *testing.T) {
		blind := exp.DeepCopy()
		blind.Status.Load = nil
		res := analyze(t, blind)
		if res.Done || !strings.Contains(res.Waiting, "last samples") || res.RequeueAfter != 25*time.Second {
			t.Errorf("got %+v", res)
		}
	})
	// One request more than Prometheus holds: its last push has not landed.
	short := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "short-k6-summaries"}, Data: map[string]string{}}
	for k, v := range summaries.Data {
		short.Data[k] = v
	}
	short.Data["checkinout-1.json"] = fmt.Sprintf(`{"metrics":{"http_reqs":{"count":%d},"http_req_failed":{"passes":0,"fails":%d}}}`, 59*5+1, 59*5+1)
	mustCreate(t, env.Client, short)
	t.Run("right after the run, while Prometheus holds fewer requests than the runners counted, it looks again in 2 s", func(t *testing.T) {
		behind := exp.DeepCopy()
		behind.Status.Load = &perfexpv1alpha1.LoadStatus{SummariesRef: &perfexpv1alpha1.LocalObjectReference{Name: short.Name}}
		res := analyze(t, behind)
		if res.Done || !strings.Contains(res.Waiting, "to equal the k6 runners' summaries") || res.RequeueAfter != 2*time.Second || behind.Status.Results != nil {
			t.Errorf("got %+v", res)
		}
	})
	t.Run("right after the run, once Prometheus's counts equal the runners' summaries, it analyses at once", func(t *testing.T) {
		ready := exp.DeepCopy()
		res := analyze(t, ready)
		if !res.Done || ready.Status.Results == nil || *ready.Status.Results.Scenarios[0].Requests != 2*59*5 {
			t.Errorf("got %+v, results %+v", res, ready.Status.Results)
		}
	})

	clock.SetTime(end.Add(time.Minute))
	t.Run("while Prometheus does not answer it waits, naming it", func(t *testing.T) {
		down := &analyzer.PrometheusAnalyzer{Client: env.Client, PrometheusURL: "http://127.0.0.1:1", Clock: clock}
		res, err := down.Analyze(ctx, exp.DeepCopy(), nil)
		if err != nil || res.Done || res.Failure != nil || !strings.Contains(res.Waiting, "Prometheus at http://127.0.0.1:1 to answer") || res.RequeueAfter < 5*time.Second {
			t.Errorf("got %+v, %v", res, err)
		}
	})

	t.Run("it reads the results, writes the status and publishes the report", func(t *testing.T) {
		if res := analyze(t, exp); !res.Done {
			t.Fatalf("not done: %+v", res)
		}
		r := exp.Status.Results
		if r == nil || len(r.Scenarios) != 1 || *r.Scenarios[0].Requests != 2*59*5 || *r.Scenarios[0].Errors != 0 {
			t.Fatalf("results %+v", r)
		}
		if names := []string{r.Scenarios[0].TopRequests[0].Name, r.Scenarios[0].TopRequests[1].Name}; names[0] != "check-out" || names[1] != "check-in" {
			t.Errorf("top requests %v", names)
		}
		if r.LatencySource != perfexpv1alpha1.LatencyFromNativeHistogram || r.P95 == "" {
			t.Errorf("latency source %s, p95 %q", r.LatencySource, r.P95)
		}
		workloads := map[string]perfexpv1alpha1.WorkloadResult{}
		for _, w := range r.Workloads {
			workloads[w.Name] = w
		}
		if w := workloads["api"]; w.CPUAvg != "0.5" || w.CPUPercentOfRequest != "200" || w.CPUPercentOfLimit != "no limit" {
			t.Errorf("touched api: %+v", w)
		}
		if w := workloads["db"]; w.Kind != "StatefulSet" || w.CPUAvg != "0.3" || w.CPUPercentOfRequest != "60" || w.CPUPercentOfLimit != "no limit" {
			t.Errorf("observed db: %+v", w)
		}
		if w, ok := workloads["cache"]; !ok || w.CPUAvg != "0.2" || w.CPUPercentOfLimit != "20" || w.Pods == nil || *w.Pods != 1 {
			t.Errorf("listed cache: %+v", w)
		}
		if _, ok := workloads["idle"]; ok {
			t.Errorf("idle, with no pods, is listed")
		}
		if c := exp.Status.Comparison; c == nil || !strings.Contains(c.Message, "release-0 was not found") {
			t.Errorf("comparison %+v", c)
		}
		if exp.Status.Verdict != perfexpv1alpha1.VerdictPass {
			t.Errorf("verdict %s, objectives %+v", exp.Status.Verdict, r.Objectives)
		}
		c := condition(exp, perfexpv1alpha1.ConditionObjectivesMet)
		if c == nil || c.Status != metav1.ConditionTrue || c.Reason != perfexpv1alpha1.ReasonObjectivesMet || c.ObservedGeneration != exp.Generation {
			t.Errorf("ObjectivesMet %+v", c)
		}
		if exp.Status.ReportRef == nil || exp.Status.ReportRef.Name != "story-report" {
			t.Fatalf("report ref %+v", exp.Status.ReportRef)
		}
		cm := &corev1.ConfigMap{}
		if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "story-report"}, cm); err != nil {
			t.Fatal(err)
		}
		if owner := metav1.GetControllerOf(cm); owner == nil || owner.UID != exp.UID {
			t.Errorf("report owner %+v", owner)
		}
		for _, k := range []string{report.KeyMarkdown, report.KeyJSON, report.KeyDashboard, report.KeyHTML} {
			if cm.Data[k] == "" {
				t.Errorf("report lacks %s", k)
			}
		}
		if !strings.Contains(cm.Data[report.KeyMarkdown], "equal the sum of the 2 k6 runners' own summaries") {
			t.Errorf("report.md lacks the summary cross-check:\n%s", cm.Data[report.KeyMarkdown])
		}
		full, err := report.ParseJSON([]byte(cm.Data[report.KeyJSON]))
		if err != nil || *full.Total.Requests != 2*59*5 {
			t.Errorf("results.json: %v", err)
		}
		// The status must fit the API server: write it as the reconciler would.
		if err := env.Client.Status().Update(ctx, exp); err != nil {
			t.Errorf("writing the status: %v", err)
		}
	})

	t.Run("a later run compares itself with this one as its baseline", func(t *testing.T) {
		base := get(t, env.Client, ns, "story")
		base.Status.Phase = perfexpv1alpha1.PhaseSucceeded
		later := newExperiment("story-again", testID)
		later.Spec.Baseline.Name = "story"
		// A calibrated environment: one run against one run can then show "no change".
		sd := resource.MustParse("0.5")
		later.Spec.Analysis.BetweenRun = &perfexpv1alpha1.BetweenRunNoise{SDPercent: &sd, Runs: 20, Source: "calibration"}
		res, err := an.Analyze(ctx, later, base)
		if err != nil || !res.Done {
			t.Fatalf("%+v %v", res, err)
		}
		c := later.Status.Comparison
		if c == nil || c.Message != "" || len(c.Metrics) == 0 || c.Change != perfexpv1alpha1.ChangeNoMeaningfulChange {
			t.Fatalf("comparison %+v", c)
		}
		if !strings.Contains(c.Noise, "between-run sd 0.5 % (spec.analysis.betweenRun: calibration, 20 runs)") {
			t.Errorf("status.comparison.noise %q", c.Noise)
		}
		for _, m := range c.Metrics {
			if m.Metric == "checkinout p95" && (m.Delta != "0" || m.DeltaPercent != "0") {
				t.Errorf("p95 of the same data differs: %+v", m)
			}
		}
		// The page overlays the baseline's series: the analyzer handed it the baseline's result.
		cm := &corev1.ConfigMap{}
		if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: later.Status.ReportRef.Name}, cm); err != nil {
			t.Fatal(err)
		}
		if page := cm.Data[report.KeyHTML]; !strings.Contains(page, `class="baseline-p95"`) || !strings.Contains(page, "Grey: baseline story") {
			t.Error("report.html does not overlay the baseline's latency over time")
		}
	})

	t.Run("a later run without betweenRun takes its between-run noise from the baseline's PerfHistory", func(t *testing.T) {
		base := get(t, env.Client, ns, "story")
		base.Status.Phase = perfexpv1alpha1.PhaseSucceeded
		scripts, err := load.ScenarioScripts(ctx, env.Client, base)
		if err != nil {
			t.Fatal(err)
		}
		name, fingerprint := history.Key(base, scripts)
		h := &perfexpv1alpha1.PerfHistory{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
		mustCreate(t, env.Client, h)
		h.Status.Fingerprint = fingerprint
		// Four runs six weeks ago at twice the level (too old, and before a change point), then
		// eight runs of the last eight hours: the latest segment.
		p95s := []float64{60, 61, 59, 60, 30.0, 30.3, 29.7, 30.15, 29.85, 30.3, 29.7, 30.0}
		for i, v := range p95s {
			at := end.Add(-time.Duration(len(p95s)-i) * time.Hour)
			if i < 4 {
				at = end.Add(-42 * 24 * time.Hour).Add(time.Duration(i) * time.Hour)
			}
			h.Status.Records = append(h.Status.Records, perfexpv1alpha1.HistoryRecord{Experiment: fmt.Sprint("run-", i), UID: types.UID(fmt.Sprint("uid-", i)),
				Time: metav1.NewTime(at), Validity: perfexpv1alpha1.Valid, Scenarios: []perfexpv1alpha1.HistoryScenario{{Name: "checkinout",
					HistoryStats: perfexpv1alpha1.HistoryStats{P95: fmt.Sprint(v), Avg: fmt.Sprint(v / 2)}}}})
		}
		if err := env.Client.Status().Update(ctx, h); err != nil {
			t.Fatal(err)
		}
		ss, df, _ := judge.SegmentVariance(p95s[4:])
		want := fmt.Sprintf("checkinout/p95 %.3g %%", 100*math.Sqrt(ss/float64(df)))

		later := newExperiment("story-from-history", testID)
		later.Spec.Baseline.Name = "story"
		res, err := an.Analyze(ctx, later, base)
		if err != nil || !res.Done {
			t.Fatalf("%+v %v", res, err)
		}
		c := later.Status.Comparison
		if c == nil || c.Message != "" || len(c.Metrics) == 0 {
			t.Fatalf("comparison %+v", c)
		}
		for _, part := range []string{"between-run sd from PerfHistory " + name + ", latest segment (8 runs, newest 1 h old", want, "other rows: between-run sd 10 %"} {
			if !strings.Contains(c.Noise, part) {
				t.Errorf("status.comparison.noise %q lacks %q", c.Noise, part)
			}
		}
		// With sd under 1 %, one run against identical data shows no meaningful change; under the
		// assumed 10 % it could not.
		for _, m := range c.Metrics {
			if m.Metric == "checkinout p95" && m.Change != perfexpv1alpha1.ChangeNoMeaningfulChange {
				t.Errorf("p95 row %+v, want NoMeaningfulChange under the history's sd", m)
			}
		}
		// An explicit value wins over the history.
		explicit := newExperiment("story-explicit", testID)
		explicit.Spec.Baseline.Name = "story"
		sd := resource.MustParse("4")
		explicit.Spec.Analysis.BetweenRun = &perfexpv1alpha1.BetweenRunNoise{SDPercent: &sd}
		if _, err := an.Analyze(ctx, explicit, base); err != nil {
			t.Fatal(err)
		}
		if c := explicit.Status.Comparison; c == nil || c.Noise != "between-run sd 4 % (spec.analysis.betweenRun)" {
			t.Errorf("explicit betweenRun: noise %+v", c)
		}
		// A calibration is a floor, not an override: one below the history's spread leaves the
		// rows the history knows to the history.
		under := newExperiment("story-under", testID)
		under.Spec.Baseline.Name = "story"
		tiny := resource.MustParse("0.1")
		under.Spec.Analysis.BetweenRun = &perfexpv1alpha1.BetweenRunNoise{SDPercent: &tiny, Runs: 10}
		if _, err := an.Analyze(ctx, under, base); err != nil {
			t.Fatal(err)
		}
		if c := under.Status.Comparison; c == nil || !strings.Contains(c.Noise, want) || !strings.Contains(c.Noise, "other rows: between-run sd 0.1 % (spec.analysis.betweenRun, 10 runs)") {
			t.Errorf("a calibration under the history: %+v", c)
		}
	})

	t.Run("a crossed k6 threshold fails the verdict and is named in the condition and the report", func(t *testing.T) {
		crossed := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "crossed-k6-summaries"}, Data: map[string]string{}}
		for inst, c := range perInstance {
			crossed.Data["checkinout-"+inst+".json"] = fmt.Sprintf(`{"metrics":{"http_reqs":{"count":%d,"rate":1},"http_req_failed":{"passes":%d,"fails":%d,"value":0,"thresholds":{"rate<0.01":false}},`+
				`"http_req_duration":{"p(95)":30,"thresholds":{"p(95)<10":%t}}}}`, c[0], c[1], c[0]-c[1], inst == "1")
		}
		mustCreate(t, env.Client, crossed)
		exp := newExperiment("crossed", testID)
		exp.Status.Load = &perfexpv1alpha1.LoadStatus{ThresholdsCrossed: true, SummariesRef: &perfexpv1alpha1.LocalObjectReference{Name: crossed.Name}}
		if res := analyze(t, exp); !res.Done {
			t.Fatalf("not done: %+v", res)
		}
		if exp.Status.Verdict != perfexpv1alpha1.VerdictFail {
			t.Errorf("verdict %s, want Fail: every objective was met but a threshold was crossed", exp.Status.Verdict)
		}
		c := condition(exp, perfexpv1alpha1.ConditionThresholdsCrossed)
		if c == nil || c.Status != metav1.ConditionTrue || !strings.Contains(c.Message, "http_req_duration p(95)<10") || strings.Contains(c.Message, "rate<0.01") {
			t.Errorf("ThresholdsCrossed %+v", c)
		}
		cm := &corev1.ConfigMap{}
		if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: exp.Status.ReportRef.Name}, cm); err != nil {
			t.Fatal(err)
		}
		md := cm.Data[report.KeyMarkdown]
		if !strings.Contains(md, "| http_req_duration | `p(95)<10` | **crossed** | checkinout |") ||
			!strings.Contains(md, "| Why | k6 threshold crossed: http_req_duration p(95)<10 (scenario checkinout) |") {
			t.Errorf("report.md does not name the crossed threshold:\n%s", md)
		}
		full, err := report.ParseJSON([]byte(cm.Data[report.KeyJSON]))
		if err != nil || len(full.Thresholds) != 2 || full.Verdict != perfexpv1alpha1.VerdictFail {
			t.Errorf("results.json thresholds %+v verdict %s (%v)", full.Thresholds, full.Verdict, err)
		}
	})

	t.Run("without any k6 sample it waits, then reports the results invalid", func(t *testing.T) {
		empty := newExperiment("no-samples", "never-written")
		res := analyze(t, empty)
		if res.Done || !strings.Contains(res.Waiting, "first k6 samples with testid=never-written") {
			t.Fatalf("got %+v", res)
		}
		clock.SetTime(end.Add(6 * time.Minute))
		if res := analyze(t, empty); !res.Done {
			t.Fatalf("got %+v", res)
		}
		if empty.Status.Verdict != perfexpv1alpha1.VerdictInvalid || empty.Status.Results.Validity != perfexpv1alpha1.Invalid {
			t.Errorf("verdict %s validity %s", empty.Status.Verdict, empty.Status.Results.Validity)
		}
		if c := condition(empty, perfexpv1alpha1.ConditionObjectivesMet); c == nil || c.Status != metav1.ConditionUnknown || c.Reason != perfexpv1alpha1.ReasonResultsInvalid {
			t.Errorf("ObjectivesMet %+v", c)
		}
	})

	t.Run("without a recorded window it fails: there is nothing to analyse", func(t *testing.T) {
		res, err := an.Analyze(context.Background(), experiment(ns, "never-ran"), nil)
		if err != nil || res.Failure == nil || res.Failure.Reason != perfexpv1alpha1.ReasonNoWindow {
			t.Errorf("got %+v %v", res, err)
		}
	})
}

// Every PerfExperiment in docs/analysis.md and docs/comparison.md is accepted by the API
// server as written.
func TestAnalysisDocsExamples(t *testing.T) {
	env := testenv.Start(t)
	env.Namespace(t, "perfexp-demo")
	var data []byte
	for _, page := range []string{"analysis.md", "comparison.md"} {
		b, err := os.ReadFile(filepath.Join(testenv.Root(), "docs", page))
		if err != nil {
			t.Fatal(err)
		}
		data = append(data, b...)
	}
	blocks := regexp.MustCompile("(?s)```yaml\n(.*?)```").FindAllStringSubmatch(string(data), -1)
	n := 0
	for _, b := range blocks {
		if !strings.Contains(b[1], "kind: PerfExperiment") {
			continue
		}
		exp := &perfexpv1alpha1.PerfExperiment{}
		if err := yaml.UnmarshalStrict([]byte(b[1]), exp); err != nil {
			t.Errorf("example does not parse: %v\n%s", err, b[1])
			continue
		}
		n++
		t.Run(exp.Name, func(t *testing.T) {
			if err := env.Client.Create(t.Context(), exp, client.DryRunAll); err != nil {
				t.Errorf("the API server refuses the example: %v", err)
			}
		})
	}
	if n < 3 {
		t.Errorf("found %d examples in docs/analysis.md and docs/comparison.md", n)
	}
}
