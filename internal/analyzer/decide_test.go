package analyzer

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/analysis"
	"github.com/perfexp/perfexp/internal/result"
)

// The decisions between the reads and the writes, tested on what was read: no API server, no
// Prometheus.

var t0 = time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)

func ptr[T any](v T) *T { return &v }

// summary is a k6 end-of-test summary as the runner keeps it.
func summary(requests, failed int64) string {
	return fmt.Sprintf(`{"metrics":{"http_reqs":{"count":%d},"http_req_failed":{"passes":%d,"fails":%d}}}`, requests, failed, requests-failed)
}

// measured is a result whose scenarios hold these request counts, none failed.
func measured(counts map[string]int64) *result.Result {
	r := &result.Result{}
	for name, n := range counts {
		r.Scenarios = append(r.Scenarios, result.ScenarioResult{Name: name, RequestStats: result.RequestStats{Requests: ptr(n), Errors: ptr(int64(0))}})
	}
	return r
}

func TestNoWindow(t *testing.T) {
	at := &metav1.Time{Time: t0}
	tests := []struct {
		name   string
		window *perfexpv1alpha1.Window
		fails  bool
	}{
		{name: "no window", fails: true},
		{name: "no start", window: &perfexpv1alpha1.Window{End: at}, fails: true},
		{name: "no end", window: &perfexpv1alpha1.Window{Start: at}, fails: true},
		{name: "start and end", window: &perfexpv1alpha1.Window{Start: at, End: at}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			exp := &perfexpv1alpha1.PerfExperiment{}
			exp.Status.Window = tt.window
			r := noWindow(exp)
			if got := r != nil && r.Failure != nil && r.Failure.Reason == perfexpv1alpha1.ReasonNoWindow; got != tt.fails {
				t.Errorf("noWindow = %+v, want a NoWindow failure: %v", r, tt.fails)
			}
		})
	}
}

func TestBackoff(t *testing.T) {
	tests := []struct {
		name    string
		waiting *metav1.Condition // the Analyzed condition
		want    time.Duration
	}{
		{name: "first attempt", want: 5 * time.Second},
		{name: "waiting a minute: a quarter of it, at least 5 s", waiting: &metav1.Condition{Status: metav1.ConditionFalse, LastTransitionTime: metav1.NewTime(t0.Add(-time.Minute))}, want: 15 * time.Second},
		{name: "waiting 4 minutes", waiting: &metav1.Condition{Status: metav1.ConditionFalse, LastTransitionTime: metav1.NewTime(t0.Add(-4 * time.Minute))}, want: time.Minute},
		{name: "waiting an hour: at most 2 minutes", waiting: &metav1.Condition{Status: metav1.ConditionFalse, LastTransitionTime: metav1.NewTime(t0.Add(-time.Hour))}, want: 2 * time.Minute},
		{name: "an Analyzed condition that is not waiting", waiting: &metav1.Condition{Status: metav1.ConditionTrue, LastTransitionTime: metav1.NewTime(t0.Add(-time.Hour))}, want: 5 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			exp := &perfexpv1alpha1.PerfExperiment{}
			if tt.waiting != nil {
				c := *tt.waiting
				c.Type, c.Reason = perfexpv1alpha1.ConditionAnalyzed, "Waiting"
				exp.Status.Conditions = []metav1.Condition{c}
			}
			if got := backoff(exp, t0); got != tt.want {
				t.Errorf("backoff = %s, want %s", got, tt.want)
			}
		})
	}
}

func TestPrometheusURL(t *testing.T) {
	const def = "http://prometheus.monitoring:9090"
	tests := []struct {
		name    string
		url     string
		allowed []string
		want    string
		refused bool
	}{
		{name: "unset: the operator's", want: def},
		{name: "allowed", url: "http://thanos:9090", allowed: []string{"http://thanos:9090"}, want: "http://thanos:9090"},
		{name: "not allowed", url: "http://169.254.169.254/", refused: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			exp := &perfexpv1alpha1.PerfExperiment{}
			exp.Spec.Analysis = &perfexpv1alpha1.Analysis{PrometheusURL: tt.url}
			got, refused := prometheusURL(exp, def, tt.allowed)
			if tt.refused {
				if refused == nil || refused.Failure == nil || refused.Failure.Reason != perfexpv1alpha1.ReasonPrometheusURLNotAllowed || got != "" {
					t.Errorf("got %q, %+v; want a refusal", got, refused)
				}
				return
			}
			if refused != nil || got != tt.want {
				t.Errorf("got %q, %+v; want %q", got, refused, tt.want)
			}
		})
	}
}

func TestQueryFailed(t *testing.T) {
	other := errors.New("context canceled")
	tests := []struct {
		name       string
		err        error
		wantWait   bool
		wantReason string
		wantMsg    string
		wantErr    bool
	}{
		{name: "Prometheus does not answer: wait", err: fmt.Errorf("reading: %w", &analysis.UnavailableError{Query: "up", Err: errors.New("connection refused")}), wantWait: true},
		{name: "Prometheus refuses a query: fail", err: &analysis.QueryError{Query: "up{", Err: errors.New("parse error")}, wantReason: perfexpv1alpha1.ReasonAnalysisFailed},
		{name: "an answer over a cap: fail, saying which", err: fmt.Errorf("reading: %w", &analysis.QueryError{Query: "sum by (pod) (x)", Err: &analysis.AnswerTooLargeError{What: "series", Limit: 50000}}),
			wantReason: perfexpv1alpha1.ReasonAnalysisFailed, wantMsg: "answered with more than perfexp reads: query \"sum by (pod) (x)\" failed: the answer has more than 50000 series; perfexp reads at most 50000 series of one answer"},
		{name: "credentials refused: fail, not wait", err: fmt.Errorf("reading: %w", &analysis.UnauthorizedError{Query: "up", Err: errors.New("client error: 401")}),
			wantReason: perfexpv1alpha1.ReasonPrometheusUnauthorized, wantMsg: "refused perfexp's credentials"},
		{name: "a backend limit: fail, naming it", err: &analysis.LimitError{Query: "up", Limit: "series per query (Mimir/Cortex -querier.max-fetched-series-per-query)", Err: errors.New("execution: the query exceeded the maximum number of series")},
			wantReason: perfexpv1alpha1.ReasonBackendLimit, wantMsg: "for one of its limits, series per query (Mimir/Cortex -querier.max-fetched-series-per-query)"},
		{name: "anything else: the caller's error", err: other, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := queryFailed(tt.err, "http://prom:9090", 20*time.Second)
			switch {
			case tt.wantErr:
				if !errors.Is(err, other) {
					t.Errorf("err %v, want %v", err, other)
				}
			case tt.wantWait:
				if err != nil || r.RequeueAfter != 20*time.Second || !strings.Contains(r.Waiting, "Prometheus at http://prom:9090 to answer: connection refused") {
					t.Errorf("got %+v, %v", r, err)
				}
			default:
				if err != nil || r.Failure == nil || r.Failure.Reason != tt.wantReason || !strings.Contains(r.Failure.Message, "http://prom:9090") {
					t.Errorf("got %+v, %v", r, err)
				}
				if r.Failure != nil && !strings.Contains(r.Failure.Message, tt.wantMsg) {
					t.Errorf("message %q, want %q", r.Failure.Message, tt.wantMsg)
				}
			}
		})
	}
}

func TestCountsComplete(t *testing.T) {
	sums := func(kv ...string) map[string]analysis.K6Summary {
		out := map[string]analysis.K6Summary{}
		for i := 0; i < len(kv); i += 2 {
			s, err := analysis.ParseK6Summary([]byte(kv[i+1]))
			if err != nil {
				t.Fatal(err)
			}
			out[kv[i]] = s
		}
		return out
	}
	tests := []struct {
		name   string
		result *result.Result
		sums   map[string]analysis.K6Summary
		want   bool
	}{
		{name: "every runner's count is in Prometheus", result: measured(map[string]int64{"browse": 300}),
			sums: sums("browse-0.json", summary(100, 0), "browse-1.json", summary(200, 0)), want: true},
		{name: "one request short: its last push has not landed", result: measured(map[string]int64{"browse": 299}),
			sums: sums("browse-0.json", summary(100, 0), "browse-1.json", summary(200, 0))},
		{name: "a scenario without a summary", result: measured(map[string]int64{"browse": 300, "checkout": 10}),
			sums: sums("browse-0.json", summary(300, 0))},
		{name: "a summary of a scenario with no samples yet", result: measured(map[string]int64{"browse": 300}),
			sums: sums("browse-0.json", summary(300, 0), "checkout-0.json", summary(10, 0))},
		{name: "no samples at all", result: &result.Result{Scenarios: []result.ScenarioResult{{Name: "browse"}}},
			sums: sums("browse-0.json", summary(0, 0))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := countsComplete(tt.result, tt.sums); got != tt.want {
				t.Errorf("countsComplete = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestWaitForMore(t *testing.T) {
	w := waitFor{now: t0, ready: t0.Add(25 * time.Second), noDataUntil: t0.Add(4 * time.Minute), backoff: 10 * time.Second, testID: "run-1", url: "http://prom:9090"}
	early := map[string]analysis.K6Summary{"browse-0.json": {Requests: 300}}
	tests := []struct {
		name      string
		w         waitFor
		result    *result.Result
		early     map[string]analysis.K6Summary
		wantAfter time.Duration // 0: publish now
		wantWhat  string
	}{
		{name: "early, counts equal: publish", w: w, result: measured(map[string]int64{"browse": 300}), early: early},
		{name: "early, counts short: look again in 2 s", w: w, result: measured(map[string]int64{"browse": 290}), early: early,
			wantAfter: 2 * time.Second, wantWhat: "to equal the k6 runners' summaries"},
		{name: "early, counts short, 1 s before the settle time: until then", w: func() waitFor { v := w; v.now = t0.Add(24 * time.Second); return v }(),
			result: measured(map[string]int64{"browse": 290}), early: early, wantAfter: time.Second, wantWhat: "to equal the k6 runners' summaries"},
		// A short run analysed at once: its requests are in, the cAdvisor samples of its last
		// seconds may not be, and a custom query's rate over the window needs two. A workload's
		// CPU falls back to the samples around the window and needs no wait.
		{name: "early, counts equal, a workload without CPU: publish", w: w, early: early,
			result: func() *result.Result {
				r := measured(map[string]int64{"browse": 300})
				r.Workloads = []result.WorkloadResult{{Kind: "StatefulSet", Namespace: "db", Name: "postgres-writer", MemoryAvg: result.Num(1)}}
				return r
			}()},
		{name: "early, counts equal, an empty custom query: look again in 2 s", w: w, early: early,
			result: func() *result.Result {
				r := measured(map[string]int64{"browse": 300})
				r.Queries = []result.QueryResult{{Name: "db-writer-cpu", Note: "the query returned no series"}}
				return r
			}(), wantAfter: 2 * time.Second, wantWhat: `the last cAdvisor samples of the window (custom query "db-writer-cpu" has no series yet`},
		{name: "settled, an empty custom query: publish", w: func() waitFor { v := w; v.now = t0.Add(25 * time.Second); return v }(), early: early,
			result: func() *result.Result {
				r := measured(map[string]int64{"browse": 300})
				r.Queries = []result.QueryResult{{Name: "db-writer-cpu", Note: "the query returned no series"}}
				return r
			}()},
		{name: "settled, no sample yet: wait for the first", w: w, result: &result.Result{Scenarios: []result.ScenarioResult{{Name: "browse"}}},
			wantAfter: 10 * time.Second, wantWhat: "the first k6 samples with testid=run-1 in Prometheus at http://prom:9090"},
		{name: "settled, no sample after the grace: publish (invalid)", w: func() waitFor { v := w; v.now = t0.Add(4 * time.Minute); return v }(),
			result: &result.Result{Scenarios: []result.ScenarioResult{{Name: "browse"}}}},
		{name: "settled with samples: publish", w: w, result: measured(map[string]int64{"browse": 1})},
		// A script without HTTP requests (it sleeps): k6's iteration counter is there, no
		// request ever will be. Before, this waited the whole grace for "the first k6 samples".
		{name: "settled, iterations but no request: publish (invalid)", w: w,
			result: &result.Result{Scenarios: []result.ScenarioResult{{Name: "idle", Iterations: result.Count(20)}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := tt.w.more(tt.result, tt.early)
			if tt.wantAfter == 0 {
				if r != nil {
					t.Errorf("waits: %+v", r)
				}
				return
			}
			if r == nil || r.RequeueAfter != tt.wantAfter || !strings.Contains(r.Waiting, tt.wantWhat) {
				t.Errorf("got %+v, want a wait of %s for %q", r, tt.wantAfter, tt.wantWhat)
			}
		})
	}
}

func TestEarlySummaries(t *testing.T) {
	tests := []struct {
		name     string
		read     summaryData
		wantKeys []string // nil: wait the settle time
	}{
		{name: "none kept", read: summaryData{}},
		{name: "not readable", read: summaryData{kept: true, err: errors.New("forbidden")}},
		{name: "the runners' summaries", read: summaryData{kept: true, data: map[string]string{"browse-0.json": summary(3, 0), "browse-1.json": summary(4, 1)}},
			wantKeys: []string{"browse-0.json", "browse-1.json"}},
		{name: "the warm-up's is left out: its requests are before the window", read: summaryData{kept: true,
			data: map[string]string{"browse-0.json": summary(3, 0), "warm-up-0.json": summary(9, 0)}}, wantKeys: []string{"browse-0.json"}},
		{name: "only the warm-up's", read: summaryData{kept: true, data: map[string]string{"warm-up-0.json": summary(9, 0)}}},
		{name: "one unreadable: no doubt allowed", read: summaryData{kept: true, data: map[string]string{"browse-0.json": summary(3, 0), "browse-1.json": "{"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := earlySummaries(tt.read)
			if (got == nil) != (tt.wantKeys == nil) || len(got) != len(tt.wantKeys) {
				t.Fatalf("got %v, want keys %v", got, tt.wantKeys)
			}
			for _, k := range tt.wantKeys {
				if _, ok := got[k]; !ok {
					t.Errorf("%s missing from %v", k, got)
				}
			}
		})
	}
}

func TestCrossCheckNotes(t *testing.T) {
	result := measured(map[string]int64{"browse": 7})
	tests := []struct {
		name string
		read summaryData
		want []string // substrings, one per note
	}{
		{name: "none kept: nothing to say", read: summaryData{}},
		{name: "not readable", read: summaryData{name: "e-k6-summaries", kept: true, err: errors.New("forbidden")},
			want: []string{"the k6 summaries (ConfigMap e-k6-summaries) could not be read for a cross-check: forbidden"}},
		{name: "equal", read: summaryData{kept: true, data: map[string]string{"browse-0.json": summary(3, 0), "browse-1.json": summary(4, 0)}},
			want: []string{"equal the sum of the 2 k6 runners' own summaries"}},
		{name: "different", read: summaryData{kept: true, data: map[string]string{"browse-0.json": summary(8, 0)}},
			want: []string{"scenario browse: Prometheus holds 7 requests (0 failed), the k6 runners' summaries 8 (0 failed)"}},
		{name: "one unreadable, the other equal", read: summaryData{kept: true, data: map[string]string{"browse-0.json": summary(7, 0), "browse-1.json": "{"}},
			want: []string{"k6 summary browse-1.json", "equal the sum of the 1 k6 runners' own summaries"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := crossCheckNotes(result, tt.read)
			if len(got) != len(tt.want) {
				t.Fatalf("notes %q, want %d", got, len(tt.want))
			}
			for i, w := range tt.want {
				if !strings.Contains(got[i], w) {
					t.Errorf("note %d %q lacks %q", i, got[i], w)
				}
			}
		})
	}
}

// A fromScript run's summaries count each k6 scenario of the script; the results report each k6
// scenario, and the two are compared scenario by scenario.
func TestCrossCheckPerK6Scenario(t *testing.T) {
	perScenario := func(news, contacts int64) string {
		return fmt.Sprintf(`{"metrics":{"http_reqs":{"count":%d},"http_reqs{scenario:news}":{"count":%d},"http_reqs{scenario:contacts}":{"count":%d},`+
			`"http_req_failed{scenario:news}":{"passes":0},"http_req_failed{scenario:contacts}":{"passes":0}}}`, news+contacts, news, contacts)
	}
	read := summaryData{kept: true, data: map[string]string{"docs-0.json": perScenario(3, 2), "docs-1.json": perScenario(2, 2)}}
	notes := crossCheckNotes(measured(map[string]int64{"news": 5, "contacts": 4}), read)
	if len(notes) != 1 || !strings.Contains(notes[0], "equal the sum of the 2 k6 runners' own summaries") {
		t.Errorf("notes %q, want the counts equal over the 2 summaries", notes)
	}
	notes = crossCheckNotes(measured(map[string]int64{"news": 5, "contacts": 3}), read)
	if len(notes) != 1 || !strings.Contains(notes[0], "scenario contacts: Prometheus holds 3 requests (0 failed), the k6 runners' summaries 4 (0 failed)") {
		t.Errorf("notes %q, want contacts named short", notes)
	}
	if sums := earlySummaries(read); !countsComplete(measured(map[string]int64{"news": 5, "contacts": 4}), sums) {
		t.Error("counts equal per k6 scenario are not complete")
	}
}

func TestInputFrom(t *testing.T) {
	base := func() *perfexpv1alpha1.PerfExperiment {
		exp := &perfexpv1alpha1.PerfExperiment{ObjectMeta: metav1.ObjectMeta{Namespace: "perf", Name: "e"}}
		exp.Spec.Load.Scenarios = []perfexpv1alpha1.Scenario{{Name: "browse"}, {Name: "checkout"}}
		exp.Status.TestID = "e-1"
		exp.Status.Window = &perfexpv1alpha1.Window{Start: &metav1.Time{Time: t0}, End: &metav1.Time{Time: t0.Add(time.Hour)}}
		return exp
	}
	t.Run("without a test id there are no samples to read", func(t *testing.T) {
		exp := base()
		exp.Status.TestID = ""
		if _, err := inputFrom(exp, settings{}); !errors.Is(err, errNoTestID) {
			t.Errorf("err %v, want %v", err, errNoTestID)
		}
	})
	t.Run("what the experiment tells", func(t *testing.T) {
		exp := base()
		exp.Spec.TargetNamespace = "library"
		exp.Spec.Variant = &perfexpv1alpha1.Variant{Description: "no CPU limit"}
		exp.Status.Window.WarmUpEnd = &metav1.Time{Time: t0.Add(time.Minute)}
		meta.SetStatusCondition(&exp.Status.Conditions, metav1.Condition{Type: perfexpv1alpha1.ConditionDrifted, Status: metav1.ConditionTrue, Reason: "Drifted", Message: "api was scaled"})
		exp.Status.PhaseHistory = []perfexpv1alpha1.PhaseTransition{{Phase: perfexpv1alpha1.PhaseRunning, Time: metav1.Time{Time: t0}}}
		in, err := inputFrom(exp, settings{cAdvisorMatchers: `job="cadvisor"`, maxListedWorkloads: 7})
		if err != nil {
			t.Fatal(err)
		}
		if in.TargetNamespace != "library" || in.TestID != "e-1" || in.Variant != "no CPU limit" || in.Drifted != "api was scaled" ||
			!in.WarmUpEnd.Equal(t0.Add(time.Minute)) || len(in.Scenarios) != 2 || len(in.Phases) != 1 ||
			in.CAdvisorMatchers != `job="cadvisor"` || in.MaxListedWorkloads != 7 || in.RunnerPods == "" {
			t.Errorf("input %+v", in)
		}
	})
	t.Run("a fromScript scenario is reported as its script's k6 scenarios", func(t *testing.T) {
		exp := base()
		exp.Spec.Load.Scenarios[1].FromScript = true
		exp.Status.Load = &perfexpv1alpha1.LoadStatus{Scenarios: []perfexpv1alpha1.ScenarioStatus{
			{Name: "checkout", K6Scenarios: []string{"news", "contacts"}},
		}}
		in, err := inputFrom(exp, settings{})
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Join(in.Scenarios, ","); got != "browse,news,contacts" {
			t.Errorf("scenarios %s, want browse,news,contacts", got)
		}
	})
}

func TestWorkloadsOfTheRun(t *testing.T) {
	cpu := func(v string) corev1.ResourceList {
		return corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(v)}
	}
	exp := &perfexpv1alpha1.PerfExperiment{ObjectMeta: metav1.ObjectMeta{Namespace: "perf", Name: "e"}}
	exp.Spec.TargetNamespace = "library"
	exp.Spec.Analysis = &perfexpv1alpha1.Analysis{Observe: []perfexpv1alpha1.ObservedWorkloads{
		{WorkloadSelector: perfexpv1alpha1.WorkloadSelector{Names: []string{"api"}}},
		{Namespace: "db", WorkloadSelector: perfexpv1alpha1.WorkloadSelector{Kind: perfexpv1alpha1.WorkloadKindStatefulSet}},
	}}
	env := &perfexpv1alpha1.EnvironmentStatus{Touched: []perfexpv1alpha1.TouchedObject{
		{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "library", Name: "api",
			Containers: []perfexpv1alpha1.ContainerResources{{Name: "app", Requests: cpu("250m"), Limits: cpu("1")}}},
		{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "library", Name: "api"}, // listed twice: once
		{APIVersion: "apps/v1", Kind: "StatefulSet", Namespace: "library", Name: "kafka"},
		{APIVersion: "v1", Kind: "ConfigMap", Namespace: "library", Name: "settings"},
		{APIVersion: "kafka.strimzi.io/v1beta2", Kind: "Kafka", Namespace: "library", Name: "kafka"},
	}}

	touched := touchedWorkloads(env)
	if len(touched) != 2 || touched[0].Name != "api" || touched[1].Name != "kafka" || !touched[0].Touched {
		t.Fatalf("touched %+v, want api and kafka once each", touched)
	}
	if c := touched[0].Containers; len(c) != 1 || *c[0].CPURequest != 0.25 || *c[0].CPULimit != 1 || c[0].MemoryLimit != nil {
		t.Errorf("api's containers %+v, want the snapshot's resources", c)
	}
	if touched[1].Containers != nil {
		t.Errorf("kafka's containers %+v, want none: its spec is to be read", touched[1].Containers)
	}

	queries := workloadQueries(exp)
	want := []workloadQuery{
		{kind: perfexpv1alpha1.WorkloadKindDeployment, ns: "library", selector: perfexpv1alpha1.WorkloadSelector{Names: []string{"api"}}},
		{kind: perfexpv1alpha1.WorkloadKindStatefulSet, ns: "db", selector: perfexpv1alpha1.WorkloadSelector{Kind: perfexpv1alpha1.WorkloadKindStatefulSet}},
		{kind: perfexpv1alpha1.WorkloadKindDeployment, ns: "library", listed: true},
		{kind: perfexpv1alpha1.WorkloadKindStatefulSet, ns: "library", listed: true},
	}
	if len(queries) != len(want) {
		t.Fatalf("queries %+v, want %+v", queries, want)
	}
	for i := range want {
		q, w := queries[i], want[i]
		if q.kind != w.kind || q.ns != w.ns || q.listed != w.listed || len(q.selector.Names) != len(w.selector.Names) {
			t.Errorf("query %d %+v, want %+v", i, q, w)
		}
	}

	wl := func(kind perfexpv1alpha1.WorkloadKind, ns, name string) analysis.Workload {
		return analysis.Workload{Kind: kind, Namespace: ns, Name: name}
	}
	found := [][]analysis.Workload{
		{wl(perfexpv1alpha1.WorkloadKindDeployment, "library", "api")},  // touched already
		{wl(perfexpv1alpha1.WorkloadKindStatefulSet, "db", "postgres")}, // observed
		{wl(perfexpv1alpha1.WorkloadKindDeployment, "library", "api"), // touched already
			wl(perfexpv1alpha1.WorkloadKindDeployment, "library", "cache")}, // listed
		{wl(perfexpv1alpha1.WorkloadKindStatefulSet, "library", "kafka")}, // touched already
	}
	merged := mergeWorkloads(touched, queries, found)
	got := make([]string, len(merged))
	for i, w := range merged {
		got[i] = fmt.Sprintf("%s/%s touched=%v listed=%v", w.Namespace, w.Name, w.Touched, w.Listed)
	}
	wantMerged := []string{"library/api touched=true listed=false", "library/kafka touched=true listed=false",
		"db/postgres touched=false listed=false", "library/cache touched=false listed=true"}
	if strings.Join(got, "; ") != strings.Join(wantMerged, "; ") {
		t.Errorf("workloads\n %s\nwant\n %s", strings.Join(got, "; "), strings.Join(wantMerged, "; "))
	}
}

func TestDescribeBaseline(t *testing.T) {
	window := &perfexpv1alpha1.Window{Start: &metav1.Time{Time: t0}, End: &metav1.Time{Time: t0.Add(time.Hour)}, WarmUpEnd: &metav1.Time{Time: t0.Add(time.Minute)}}
	exp := &perfexpv1alpha1.PerfExperiment{ObjectMeta: metav1.ObjectMeta{Namespace: "perf", Name: "e"}}
	exp.Spec.Baseline = &perfexpv1alpha1.BaselineRef{Name: "release-0"}
	baseline := func(phase perfexpv1alpha1.Phase, w *perfexpv1alpha1.Window) *perfexpv1alpha1.PerfExperiment {
		b := &perfexpv1alpha1.PerfExperiment{ObjectMeta: metav1.ObjectMeta{Namespace: "perf", Name: "release-0"}}
		b.Spec.Load.Scenarios = []perfexpv1alpha1.Scenario{{Name: "browse", Script: perfexpv1alpha1.ScriptSource{Inline: "export default function () {}"}}}
		b.Status.Phase, b.Status.Window, b.Status.TestID = phase, w, "release-0-1"
		return b
	}
	tests := []struct {
		name        string
		b           *perfexpv1alpha1.PerfExperiment
		wantProblem string
	}{
		{name: "not found", wantProblem: "baseline experiment release-0 was not found in namespace perf"},
		{name: "never started", b: baseline("", window), wantProblem: "has not succeeded (phase none)"},
		{name: "failed", b: baseline(perfexpv1alpha1.PhaseFailed, window), wantProblem: "has not succeeded (phase Failed)"},
		{name: "succeeded without a window", b: baseline(perfexpv1alpha1.PhaseSucceeded, nil), wantProblem: "has no recorded window"},
		{name: "succeeded", b: baseline(perfexpv1alpha1.PhaseSucceeded, window)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := describeBaseline(exp, tt.b)
			if got.Name != "release-0" {
				t.Errorf("name %q", got.Name)
			}
			if tt.wantProblem != "" {
				if !strings.Contains(got.Problem, tt.wantProblem) || got.TestID != "" {
					t.Errorf("problem %q, test id %q; want %q", got.Problem, got.TestID, tt.wantProblem)
				}
				return
			}
			if got.Problem != "" || got.TestID != "release-0-1" || !got.Start.Equal(t0) || !got.WarmUpEnd.Equal(t0.Add(time.Minute)) ||
				len(got.Scenarios) != 1 || got.LoadShape == nil {
				t.Errorf("baseline %+v", got)
			}
		})
	}
}

func TestBaselineResult(t *testing.T) {
	status := &perfexpv1alpha1.Results{Scenarios: []perfexpv1alpha1.ScenarioResult{{Name: "from-status"}}}
	tests := []struct {
		name     string
		doc      string
		found    bool
		wantName string
	}{
		{name: "the report's full results", doc: `{"scenarios":[{"name":"from-report"}]}`, found: true, wantName: "from-report"},
		{name: "an unreadable report: the status's top names", doc: "{", found: true, wantName: "from-status"},
		{name: "no report: the status's top names", wantName: "from-status"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := baselineResult(status, tt.doc, tt.found)
			if got == nil || len(got.Scenarios) != 1 || got.Scenarios[0].Name != tt.wantName {
				t.Errorf("result %+v, want scenario %s", got, tt.wantName)
			}
		})
	}
}

func TestRecordResults(t *testing.T) {
	exp := &perfexpv1alpha1.PerfExperiment{ObjectMeta: metav1.ObjectMeta{Namespace: "perf", Name: "e", Generation: 3}}
	missed := strings.Repeat("é", 600) // 1,200 bytes: the message must be cut, not inside a character
	res := measured(map[string]int64{"browse": 10})
	res.Verdict = perfexpv1alpha1.VerdictFail
	res.Objectives = []result.ObjectiveResult{{Name: "p95", Outcome: perfexpv1alpha1.ObjectiveMissed, Message: missed}}
	recordResults(exp, res, "e-report", "https://grafana/d/x")

	s := exp.Status
	if s.Verdict != perfexpv1alpha1.VerdictFail || s.ReportRef == nil || s.ReportRef.Name != "e-report" || s.DashboardURL != "https://grafana/d/x" ||
		s.Results == nil || *s.Results.Scenarios[0].Requests != 10 {
		t.Errorf("status %+v", s)
	}
	c := meta.FindStatusCondition(s.Conditions, perfexpv1alpha1.ConditionObjectivesMet)
	if c == nil || c.Status != metav1.ConditionFalse || c.Reason != perfexpv1alpha1.ReasonObjectivesMissed || c.ObservedGeneration != 3 {
		t.Fatalf("ObjectivesMet %+v", c)
	}
	if len(c.Message) > maxConditionMessage || !utf8.ValidString(c.Message) || !strings.HasSuffix(c.Message, "...") {
		t.Errorf("message of %d bytes, valid UTF-8 %v: %q", len(c.Message), utf8.ValidString(c.Message), c.Message[len(c.Message)-10:])
	}
}

// A comparison whose environments differ beyond the variant sets Confounded=True naming the
// difference; one that matched sets it False, one that could not compare Unknown, and a later
// analysis without a comparison removes it.
func TestRecordResultsSetsConfounded(t *testing.T) {
	exp := &perfexpv1alpha1.PerfExperiment{ObjectMeta: metav1.ObjectMeta{Namespace: "perf", Name: "e", Generation: 2}}
	res := measured(map[string]int64{"browse": 10})
	image := result.Confound{Workload: "Deployment/shop/api", Field: "image/api", Baseline: "shop/api:1.4", Run: "shop/api:1.5"}
	for _, tc := range []struct {
		name   string
		cmp    *result.Comparison
		status metav1.ConditionStatus
		reason string
		in     string
	}{
		{"an undeclared image", &result.Comparison{Baseline: "b", Confounds: []result.Confound{image}}, metav1.ConditionTrue, perfexpv1alpha1.ReasonEnvironmentDiffers,
			"this run and baseline b differ in 1 thing(s) beyond the declared variant, so a change found may come from them as well: Deployment/shop/api image/api: shop/api:1.4 in the baseline, shop/api:1.5 in this run"},
		{"many differences, the message bounded", &result.Comparison{Baseline: "b", Confounds: slices.Repeat([]result.Confound{image}, 40)}, metav1.ConditionTrue,
			perfexpv1alpha1.ReasonEnvironmentDiffers, "differ in 40 thing(s)"},
		{"matched", &result.Comparison{Baseline: "b"}, metav1.ConditionFalse, perfexpv1alpha1.ReasonEnvironmentMatches, "same images"},
		{"not compared", &result.Comparison{Baseline: "b", ConfoundsUnknown: "this run recorded no environment inventory"}, metav1.ConditionUnknown,
			perfexpv1alpha1.ReasonEnvironmentNotCompared, "this run recorded no environment inventory"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res.Comparison = tc.cmp
			recordResults(exp, res, "", "")
			c := meta.FindStatusCondition(exp.Status.Conditions, perfexpv1alpha1.ConditionConfounded)
			if c == nil || c.Status != tc.status || c.Reason != tc.reason || c.ObservedGeneration != 2 || !strings.Contains(c.Message, tc.in) || len(c.Message) > maxConditionMessage {
				t.Fatalf("Confounded %+v, want %s %s with %q", c, tc.status, tc.reason, tc.in)
			}
		})
	}
	res.Comparison = nil
	recordResults(exp, res, "", "")
	if c := meta.FindStatusCondition(exp.Status.Conditions, perfexpv1alpha1.ConditionConfounded); c != nil {
		t.Errorf("Confounded %+v without a comparison", c)
	}
}

// An observe entry with routes reads the routes of every workload it finds, including a
// touched one (whose CPU row comes from the variant's list), each once; entries without routes
// and the target namespace's listed workloads read none.
func TestRouteSourcesComeFromObserveEntriesWithRoutes(t *testing.T) {
	exp := &perfexpv1alpha1.PerfExperiment{ObjectMeta: metav1.ObjectMeta{Namespace: "perf", Name: "e"}}
	exp.Spec.TargetNamespace = "library"
	routes := &perfexpv1alpha1.RouteHistogram{Metric: "demo_http_request_duration_seconds"}
	exp.Spec.Analysis = &perfexpv1alpha1.Analysis{Observe: []perfexpv1alpha1.ObservedWorkloads{
		{WorkloadSelector: perfexpv1alpha1.WorkloadSelector{Names: []string{"circulation", "inventory"}}, Routes: routes},
		{WorkloadSelector: perfexpv1alpha1.WorkloadSelector{Kind: perfexpv1alpha1.WorkloadKindStatefulSet, Names: []string{"postgres"}}},
		{WorkloadSelector: perfexpv1alpha1.WorkloadSelector{Names: []string{"circulation"}}, Namespace: "library", Routes: &perfexpv1alpha1.RouteHistogram{Metric: "other"}},
	}}
	queries := workloadQueries(exp)
	wl := func(name string) analysis.Workload { return analysis.Workload{Name: name} }
	found := [][]analysis.Workload{{wl("circulation"), wl("inventory")}, {wl("postgres")}, {wl("circulation")}, {wl("circulation"), wl("cache")}, nil}
	got := routeSources(queries, found)
	var names []string
	for _, s := range got {
		names = append(names, fmt.Sprintf("%s/%s/%s %s", s.Kind, s.Namespace, s.Name, s.Spec.Metric))
	}
	want := "Deployment/library/circulation demo_http_request_duration_seconds; Deployment/library/inventory demo_http_request_duration_seconds"
	if strings.Join(names, "; ") != want {
		t.Errorf("route sources\n %s\nwant\n %s", strings.Join(names, "; "), want)
	}
}
