//go:build e2e

package e2e

import (
	"math"
	"os"
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

// groupThresholds make k6 summarise each group on its own (k6 keeps a submetric's statistics
// only when a threshold names it); they cannot fail, so the run is the demo's as it is.
const groupThresholds = `
export const options = {
  thresholds: {
    'group_duration{group:::check-out}': ['max>=0'],
    'group_duration{group:::check-in}': ['max>=0'],
    'checkout_transaction': ['max>=0'],
  },
};
`

// A performance engineer runs the demo's check-out/check-in, written with k6 groups and a
// custom Trend (scenarios/demo/checkinout.js), over two k6 pods, and reads the report's
// Transactions and Custom metrics. Every count equals the sum of the pods' own summaries, every
// average is within 1 % of their count-weighted average, and every percentile lies between the
// pods' own, widened by the native histogram's bucket bound.
func TestAnalysisReportsGroupsAndTrends(t *testing.T) {
	framework.RequireCluster(t)
	ns := demoNamespace(t, "e2e-groups")
	c, cs := loadClients(t)
	script, err := os.ReadFile(filepath.Join(framework.RepoRoot(), "scenarios", "demo", "checkinout.js"))
	if err != nil {
		t.Fatal(err)
	}
	stats := []string{"--summary-trend-stats", "avg,max,p(50),p(75),p(90),p(95),count"}
	exp := loadExperiment(t, c, ns, "groups", []perfexpv1alpha1.Scenario{{
		Name: "checkinout", Script: perfexpv1alpha1.ScriptSource{Inline: string(script) + groupThresholds}, Args: stats,
		ArrivalRate: &perfexpv1alpha1.ArrivalRate{Rate: 30, Duration: metav1.Duration{Duration: 30 * time.Second}, PreAllocatedVUs: 10, MaxVUs: ptr.To[int32](20)},
		Parallelism: 2,
		Env:         []perfexpv1alpha1.EnvVar{{Name: "BASE_URL", Value: "http://circulation:8080"}},
	}})
	r := load.New(c, load.Options{K6Image: loadK6Image, RemoteWriteURL: loadRemoteWrite, Logs: load.NewPodLogs(cs), PollInterval: time.Second})
	ctx := logr.NewContext(t.Context(), testr.New(t))
	drive(t, "Run", func() (step.Result, error) { return r.Run(ctx, exp) }, 3*time.Minute)
	an := &analyzer.PrometheusAnalyzer{Client: c, PrometheusURL: framework.PrometheusURL(), Clock: clock.RealClock{}}
	drive(t, "Analyze", func() (step.Result, error) { return an.Analyze(ctx, exp, nil) }, 3*time.Minute)

	cm := &corev1.ConfigMap{}
	if err := c.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: exp.Status.ReportRef.Name}, cm); err != nil {
		t.Fatal(err)
	}
	md := cm.Data[report.KeyMarkdown]
	t.Logf("report:\n%s", md)
	for _, section := range []string{"## Transactions", "## Custom metrics"} {
		if !strings.Contains(md, section) {
			t.Errorf("the report has no %q section", section)
		}
	}
	res, err := report.ParseJSON([]byte(cm.Data[report.KeyJSON]))
	if err != nil {
		t.Fatal(err)
	}
	summaries, err := load.ReadSummaries(t.Context(), c, exp)
	if err != nil {
		t.Fatal(err)
	}
	var sc *result.ScenarioResult
	for i := range res.Scenarios {
		if res.Scenarios[i].Name == "checkinout" {
			sc = &res.Scenarios[i]
		}
	}
	if sc == nil {
		t.Fatalf("no scenario checkinout in %+v", res.Scenarios)
	}
	type row struct {
		metric string
		count  *int64
		l      result.Latency
	}
	var rows []row
	for _, g := range sc.Groups {
		rows = append(rows, row{"group_duration{group:::" + g.Name + "}", g.Count, g.Latency})
	}
	for _, tr := range sc.Trends {
		if tr.Unit != "ms" {
			t.Errorf("Trend %s: unit %q, want ms", tr.Name, tr.Unit)
		}
		rows = append(rows, row{tr.Name, tr.Count, tr.Latency})
	}
	if len(sc.Groups) != 2 || len(sc.Trends) != 1 {
		t.Fatalf("groups %+v and Trends %+v: want check-out and check-in, and checkout_transaction", sc.Groups, sc.Trends)
	}
	for _, rw := range rows {
		t.Run(rw.metric, func(t *testing.T) {
			var n, weighted float64
			var pods []load.SummaryMetric
			for key, s := range summaries {
				m, ok := s.Metrics[rw.metric]
				if !strings.HasPrefix(key, "checkinout-") || !ok {
					continue
				}
				cnt, _ := m.Value("count")
				avg, _ := m.Value("avg")
				n, weighted = n+cnt, weighted+avg*cnt
				pods = append(pods, m)
			}
			if len(pods) != 2 {
				t.Fatalf("%d pods' summaries have %s (have %v)", len(pods), rw.metric, keys(summaries))
			}
			if rw.count == nil || float64(*rw.count) != n {
				t.Errorf("count %v, the pods' summaries %v", deref(rw.count), n)
			}
			if want := weighted / n; rw.l.Avg == nil || math.Abs(*rw.l.Avg-want) > 0.01*want {
				t.Errorf("avg %v ms, weighted k6 average %.4f ms", deref(rw.l.Avg), want)
			}
			for _, p := range []struct {
				stat string
				got  *float64
			}{{"p(50)", rw.l.P50}, {"p(75)", rw.l.P75}, {"p(90)", rw.l.P90}, {"p(95)", rw.l.P95}} {
				lo, hi := math.Inf(1), math.Inf(-1)
				for _, m := range pods {
					v, ok := m.Value(p.stat)
					if !ok {
						t.Fatalf("the summaries lack %s", p.stat)
					}
					lo, hi = math.Min(lo, v), math.Max(hi, v)
				}
				if p.got == nil || *p.got < lo*(1-schema3Bound) || *p.got > hi*(1+schema3Bound) {
					t.Errorf("%s = %v ms; k6's pods: %.4f..%.4f ms (bound %.2f%%)", p.stat, deref(p.got), lo, hi, 100*schema3Bound)
				}
				t.Logf("%s %s: perfexp %.4f ms, k6 pods %.4f..%.4f ms", rw.metric, p.stat, *p.got, lo, hi)
			}
		})
	}
	// The status keeps the groups and the Trend for kubectl.
	if st := exp.Status.Results; st == nil || len(st.Scenarios) == 0 || len(st.Scenarios[0].Groups) != 2 || len(st.Scenarios[0].Trends) != 1 {
		t.Errorf("status results lack the groups or the Trend: %+v", exp.Status.Results)
	}
}
