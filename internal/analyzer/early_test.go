package analyzer_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/analysis/promtest"
	"github.com/perfexp/perfexp/internal/analyzer"
	"github.com/perfexp/perfexp/internal/load"
	"github.com/perfexp/perfexp/internal/testenv"
)

// Story (issue 14): results right after the load. A real k6 run pushes to a real Prometheus
// every 5 s (the load runner's default) and flushes once more as it stops; its summary is
// kept as the load runner keeps it. The analyzer, called as the Analyzing phase calls it
// (again after each RequeueAfter, on the real clock), must publish results within a few
// seconds of k6's exit, not after the 30 s settle time, with counts equal to k6's own.
func TestPrometheusAnalyzerRightAfterTheLoad(t *testing.T) {
	env := testenv.Start(t)
	prom := promtest.Start(t)
	ctx := t.Context()
	ns := env.Namespace(t, "early")
	app := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok")) }))
	t.Cleanup(app.Close)

	const testID = "early-run"
	start := time.Now().Truncate(time.Second)
	summary := prom.RunK6(t, promtest.K6Run{TestID: testID, Env: map[string]string{"BASE": app.URL},
		OutputEnv: map[string]string{"K6_PROMETHEUS_RW_PUSH_INTERVAL": "5s"},
		Script: `import http from 'k6/http';
export const options = { scenarios: { main: { executor: 'constant-arrival-rate', rate: 50, timeUnit: '1s', duration: '12s', preAllocatedVUs: 5 } } };
export default function () { http.get(__ENV.BASE + '/item', { tags: { name: 'item' } }); }
`})
	loadEnd := time.Now()

	// The runner keeps the warm-up pod's summary beside the scenarios' (the demo's runs have
	// one): its requests are before the measured window and match no scenario.
	sums := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "early-k6-summaries"},
		Data: map[string]string{"main-0.json": string(summary), load.SummaryKey(load.WarmUpName, 0): string(summary)}}
	mustCreate(t, env.Client, sums)
	exp := experiment(ns, "early")
	exp.Spec.Load.Scenarios[0].Name = "main"
	mustCreate(t, env.Client, exp)
	// The recorded end has whole-second precision, like the status field.
	exp.Status = perfexpv1alpha1.PerfExperimentStatus{Phase: perfexpv1alpha1.PhaseAnalyzing, TestID: testID,
		Window: &perfexpv1alpha1.Window{Start: &metav1.Time{Time: start}, End: &metav1.Time{Time: loadEnd.Truncate(time.Second)}},
		Load:   &perfexpv1alpha1.LoadStatus{SummariesRef: &perfexpv1alpha1.LocalObjectReference{Name: sums.Name}}}
	if err := env.Client.Status().Update(ctx, exp); err != nil {
		t.Fatal(err)
	}
	exp = get(t, env.Client, ns, "early")

	// A settle time far beyond the test's minute: results can only come from the early path.
	an := &analyzer.PrometheusAnalyzer{Client: env.Client, PrometheusURL: prom.URL, Settle: 10 * time.Minute}
	attempts := 0
	for {
		attempts++
		res, err := an.Analyze(ctx, exp, nil)
		if err != nil {
			t.Fatal(err)
		}
		if res.Done {
			break
		}
		if res.Failure != nil || time.Since(loadEnd) > time.Minute {
			t.Fatalf("no results: %+v", res)
		}
		time.Sleep(res.RequeueAfter)
	}
	took := time.Since(loadEnd)
	t.Logf("load end -> results: %v (%d attempts)", took.Round(10*time.Millisecond), attempts)
	r := exp.Status.Results
	if r == nil || len(r.Scenarios) != 1 || r.Scenarios[0].Requests == nil {
		t.Fatalf("results %+v", r)
	}
	var want struct {
		Metrics struct {
			Reqs struct {
				Count int64 `json:"count"`
			} `json:"http_reqs"`
		} `json:"metrics"`
	}
	if err := json.Unmarshal(summary, &want); err != nil {
		t.Fatal(err)
	}
	if got := *r.Scenarios[0].Requests; got != want.Metrics.Reqs.Count || got == 0 {
		t.Errorf("%d requests in the results, k6 counted %d", got, want.Metrics.Reqs.Count)
	}
}
