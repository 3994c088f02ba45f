//go:build e2e

package e2e

import (
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/testr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/analyzer"
	"github.com/perfexp/perfexp/internal/load"
	"github.com/perfexp/perfexp/internal/report"
	"github.com/perfexp/perfexp/internal/result"
	"github.com/perfexp/perfexp/internal/step"
	"github.com/perfexp/perfexp/test/e2e/framework"
)

// schema3Bound is how far a percentile read from k6's native histograms (bucket factor 1.1,
// so schema 3: buckets 2^(1/8) wide) may be from the true order statistic: 2^(1/8) - 1.
var schema3Bound = math.Pow(2, 1.0/8) - 1

// A performance engineer runs the demo's check-out/check-in at a fixed rate over two k6 pods,
// next to item lookups from one pod, after a warm-up, and reads perfexp's results. Every
// request count and error count equals the sum of the k6 pods' own end-of-test summaries
// exactly; the average is within 1% of the request-weighted average of theirs; and every
// percentile is within the native histogram's bucket error (2^(1/8)-1 = 9.05%) of k6's own
// (for two pods: between theirs, widened by that bound, since a percentile of a mixture lies
// between its components').
func TestAnalysisMatchesK6Summaries(t *testing.T) {
	framework.RequireCluster(t)
	ns := demoNamespace(t, "e2e-analysis")
	c, cs := loadClients(t)
	framework.Kubectl(t, "-n", ns, "create", "configmap", "demo-checkinout", "--from-file=script.js="+filepath.Join(framework.RepoRoot(), "scenarios", "demo", "checkinout.js"))

	// k6's summary lists avg, min, med, max, p(90) and p(95) by default; p(99) is asked for.
	stats := []string{"--summary-trend-stats", "avg,min,med,max,p(90),p(95),p(99)"}
	scenarios := []perfexpv1alpha1.Scenario{
		{
			Name: "lookup", Script: perfexpv1alpha1.ScriptSource{Inline: timingScript}, Args: stats,
			VUs: ptr.To[int32](3), Duration: &metav1.Duration{Duration: 30 * time.Second},
			Env: []perfexpv1alpha1.EnvVar{{Name: "BASE_URL", Value: "http://inventory:8080"}},
		},
		{
			Name: "checkinout", Script: perfexpv1alpha1.ScriptSource{ConfigMap: &perfexpv1alpha1.ConfigMapScript{Name: "demo-checkinout", Key: "script.js"}}, Args: stats,
			ArrivalRate: &perfexpv1alpha1.ArrivalRate{Rate: 30, Duration: metav1.Duration{Duration: 30 * time.Second}, PreAllocatedVUs: 10, MaxVUs: ptr.To[int32](20)},
			Parallelism: 2,
			Env:         []perfexpv1alpha1.EnvVar{{Name: "BASE_URL", Value: "http://circulation:8080"}},
		},
	}
	exp := loadExperiment(t, c, ns, "analysis", scenarios)
	exp.Spec.Load.WarmUp = &perfexpv1alpha1.WarmUp{Scenario: "lookup", VUs: 2, Duration: metav1.Duration{Duration: 10 * time.Second}}
	exp.Spec.Analysis = &perfexpv1alpha1.Analysis{Observe: []perfexpv1alpha1.ObservedWorkloads{{WorkloadSelector: perfexpv1alpha1.WorkloadSelector{Names: []string{"circulation", "inventory"}}}}}
	r := load.New(c, load.Options{K6Image: loadK6Image, RemoteWriteURL: loadRemoteWrite, Logs: load.NewPodLogs(cs), PollInterval: time.Second})
	ctx := logr.NewContext(t.Context(), testr.New(t))
	drive(t, "WarmUp", func() (step.Result, error) { return r.WarmUp(ctx, exp) }, 3*time.Minute)
	drive(t, "Run", func() (step.Result, error) { return r.Run(ctx, exp) }, 3*time.Minute)

	an := &analyzer.PrometheusAnalyzer{Client: c, PrometheusURL: framework.PrometheusURL(), Clock: clock.RealClock{}}
	analysed := time.Now()
	drive(t, "Analyze", func() (step.Result, error) { return an.Analyze(ctx, exp, nil) }, 3*time.Minute)
	t.Logf("OVERHEAD load done -> analysed: %s (30 s of it is the settle time)", time.Since(analysed).Round(time.Millisecond))

	cm := &corev1.ConfigMap{}
	if err := c.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: exp.Status.ReportRef.Name}, cm); err != nil {
		t.Fatal(err)
	}
	res, err := report.ParseJSON([]byte(cm.Data[report.KeyJSON]))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("report:\n%s", cm.Data[report.KeyMarkdown])
	summaries, err := load.ReadSummaries(t.Context(), c, exp)
	if err != nil {
		t.Fatal(err)
	}
	if res.Window.WarmUpEnd == nil {
		t.Errorf("no warm-up end in the window: %+v", res.Window)
	}
	for _, sc := range res.Scenarios {
		var reqs, failed, weighted float64
		var pods []load.Summary
		for key, s := range summaries {
			if !strings.HasPrefix(key, sc.Name+"-") {
				continue
			}
			n, _ := s.Metrics["http_reqs"].Value("count")
			f, _ := s.Metrics["http_req_failed"].Value("passes")
			avg, _ := s.Metrics["http_req_duration"].Value("avg")
			reqs, failed, weighted = reqs+n, failed+f, weighted+avg*n
			pods = append(pods, s)
		}
		if len(pods) == 0 {
			t.Fatalf("no summaries for scenario %s (have %v)", sc.Name, keys(summaries))
		}
		t.Run(sc.Name, func(t *testing.T) {
			if sc.RequestStats.Requests == nil || float64(*sc.RequestStats.Requests) != reqs {
				t.Errorf("requests %v, the %d pods' summaries %v", deref(sc.RequestStats.Requests), len(pods), reqs)
			}
			if sc.Errors == nil || float64(*sc.Errors) != failed {
				t.Errorf("errors %v, the summaries %v", deref(sc.Errors), failed)
			}
			if want := weighted / reqs; sc.Avg == nil || math.Abs(*sc.Avg-want) > 0.01*want {
				t.Errorf("avg %v ms, weighted k6 average %.4f ms", deref(sc.Avg), want)
			}
			for _, p := range []struct {
				stat string
				got  *float64
			}{{"med", sc.P50}, {"p(90)", sc.P90}, {"p(95)", sc.P95}, {"p(99)", sc.P99}} {
				lo, hi := math.Inf(1), math.Inf(-1)
				for _, s := range pods {
					v, ok := s.Metrics["http_req_duration"].Value(p.stat)
					if !ok {
						t.Fatalf("the summaries lack %s", p.stat)
					}
					lo, hi = math.Min(lo, v), math.Max(hi, v)
				}
				if p.got == nil || *p.got < lo*(1-schema3Bound) || *p.got > hi*(1+schema3Bound) {
					t.Errorf("%s = %v ms; k6's pods: %.4f..%.4f ms (bound %.2f%%)", p.stat, deref(p.got), lo, hi, 100*schema3Bound)
				}
				t.Logf("%s %s: perfexp %.4f ms, k6 pods %.4f..%.4f ms", sc.Name, p.stat, *p.got, lo, hi)
			}
		})
	}
	if !containsNote(res.Notes, "equal the sum of the") {
		t.Errorf("the analyzer's own cross-check with the summaries is missing or failed: %v", res.Notes)
	}
	// The two observed workloads, and every other Deployment of the namespace listed by
	// default (the demo's Kafka brokers); each with its CPU.
	observed := 0
	for _, w := range res.Workloads {
		if !w.Listed {
			observed++
		}
		if w.CPUAvg == nil {
			t.Errorf("workload %s has no CPU", w.Name)
		}
	}
	if observed != 2 || len(res.Workloads) < 2 {
		t.Errorf("workloads: %d observed (want 2) of %d", observed, len(res.Workloads))
	}
	// The local cluster runs node_exporter on the host (hack/local-cluster), so the node load
	// sees the whole machine; prom3 has no node_exporter and the chart's cAdvisor relabelling
	// drops the root cgroup, so there only the pods are seen, and the report says so.
	switch {
	case res.NodeLoad == nil:
		t.Errorf("no node load; notes %v", res.Notes)
	case framework.PrometheusSetup() == framework.PrometheusDebian && res.NodeLoad.Source != result.SourceNodeExporter:
		t.Errorf("node load read from the %s, want the %s; notes %v", res.NodeLoad.Source, result.SourceNodeExporter, res.Notes)
	default:
		t.Logf("node load: %s (%s)", res.NodeLoad, res.NodeLoad.Source)
	}
	t.Logf("%d Prometheus queries", res.PrometheusQueries)
}

func containsNote(notes []string, s string) bool {
	for _, n := range notes {
		if strings.Contains(n, s) {
			return true
		}
	}
	return false
}

func deref[T any](p *T) string {
	if p == nil {
		return "absent"
	}
	return fmt.Sprint(*p)
}
