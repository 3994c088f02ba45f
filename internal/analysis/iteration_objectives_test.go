package analysis

import (
	"context"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/analysis/promtest"
)

// Story: a scenario's iteration duration and a check's pass rate are objectives: crafted into
// a real Prometheus, iterations of 1-2 s (p95 near 1.95 s) meet "p95 <= 2500ms" and miss
// "avg <= 1200ms"; two runners whose "status is 200" check passes 99.5 % and 97 % report the
// lower, so "min 99" is missed and "min 95" met; a Counter of 960 (exact) meets "min 900" and
// misses "max 950"; names the run never wrote are Unknown with
// the ones it did.
func TestIterationAndCheckObjectives(t *testing.T) {
	base := time.Now().Add(-50 * time.Minute).Truncate(time.Second)
	at := func(d time.Duration) time.Time { return base.Add(d) }
	const id = "iteration-objectives"
	var series []promtest.Series
	for _, inst := range []string{"0", "1"} {
		dur := newCraftedTrend(metricIterationDuration, id, "desk", "", inst)
		delete(dur.labels, "group")
		var iters, okRate, bodyRate, baskets []promtest.Float
		pass := map[string]float64{"0": 0.995, "1": 0.97}[inst]
		n := 0
		for k := 1; k <= 24; k++ {
			t := at(time.Duration(k) * 5 * time.Second)
			vs := latencies(10, 1, 2, k+len(inst))
			dur.flush(t, vs...)
			n += len(vs)
			iters = append(iters, promtest.Float{T: t, V: float64(n)})
			okRate = append(okRate, promtest.Float{T: t, V: pass})
			bodyRate = append(bodyRate, promtest.Float{T: t, V: 1})
			// Two baskets per iteration of 240 per runner: 480 per runner in the window, 960 in all.
			baskets = append(baskets, promtest.Float{T: t, V: float64(2 * n)})
		}
		lbl := func(name string, extra ...string) map[string]string {
			m := map[string]string{"__name__": name, "testid": id, "scenario": "desk", "instance_id": inst}
			for i := 0; i+1 < len(extra); i += 2 {
				m[extra[i]] = extra[i+1]
			}
			return m
		}
		series = append(series, dur.series(),
			promtest.Series{Labels: lbl("k6_iterations_total"), Floats: iters},
			promtest.Series{Labels: lbl("k6_checks_rate", "check", "status is 200"), Floats: okRate},
			promtest.Series{Labels: lbl("k6_checks_rate", "check", "body has id"), Floats: bodyRate},
			promtest.Series{Labels: lbl("k6_baskets_total"), Floats: baskets})
	}
	prom := promtest.Start(t)
	prom.Write(t, series)

	q := func(s string) *resource.Quantity { v := resource.MustParse(s); return &v }
	objectives := []perfexpv1alpha1.Objective{
		{Metric: perfexpv1alpha1.MetricP95, Scenario: "desk", Iteration: true, Max: q("2500")},
		{Metric: perfexpv1alpha1.MetricAvg, Scenario: "desk", Iteration: true, Max: q("1200")},
		{Metric: perfexpv1alpha1.MetricP95, Scenario: "lobby", Iteration: true, Max: q("2500")},
		{Metric: perfexpv1alpha1.MetricPassRate, Scenario: "desk", Check: "status is 200", Min: q("99")},
		{Metric: perfexpv1alpha1.MetricPassRate, Scenario: "desk", Check: "status is 200", Min: q("95")},
		{Metric: perfexpv1alpha1.MetricPassRate, Scenario: "desk", Check: "body has id", Min: q("100")},
		{Metric: perfexpv1alpha1.MetricPassRate, Scenario: "desk", Check: "status is 201", Min: q("99")},
		{Metric: perfexpv1alpha1.MetricCount, Scenario: "desk", Counter: "baskets", Min: q("900")},
		{Metric: perfexpv1alpha1.MetricCount, Scenario: "desk", Counter: "baskets", Max: q("950")},
		{Metric: perfexpv1alpha1.MetricCount, Scenario: "desk", Counter: "refunds", Max: q("950")},
	}
	in := Input{Experiment: id, TestID: id, Start: at(0), End: at(125 * time.Second), Scenarios: []string{"desk"},
		Analysis: perfexpv1alpha1.Analysis{Objectives: objectives}}
	r, err := Analyze(context.Background(), prom.API(t), in)
	if err != nil {
		t.Fatal(err)
	}
	if l := r.Scenarios[0].IterationDuration; l == nil || l.P95 == nil || *l.P95 < 1800 || *l.P95 > 2100 || l.Avg == nil || *l.Avg < 1300 || *l.Avg > 1700 {
		t.Fatalf("the test needs an iteration p95 near 1950 ms and avg near 1500 ms, got %+v", l)
	}
	tests := []struct {
		outcome perfexpv1alpha1.ObjectiveOutcome
		unit    string
		name    string
		message string
	}{
		{perfexpv1alpha1.ObjectiveMet, "ms", "desk iteration P95 <= 2500 ms", "within bounds"},
		{perfexpv1alpha1.ObjectiveMissed, "ms", "desk iteration Avg <= 1200 ms", "above the maximum 1200"},
		{perfexpv1alpha1.ObjectiveUnknown, "ms", "lobby iteration P95 <= 2500 ms", `no scenario "lobby"`},
		{perfexpv1alpha1.ObjectiveMissed, "%", `desk check "status is 200" PassRate >= 99%`, "97 is below the minimum 99 (the lowest k6 runner's pass rate"},
		{perfexpv1alpha1.ObjectiveMet, "%", `desk check "status is 200" PassRate >= 95%`, "97% is within bounds (the lowest k6 runner's pass rate"},
		{perfexpv1alpha1.ObjectiveMet, "%", `desk check "body has id" PassRate >= 100%`, "100% is within bounds"},
		{perfexpv1alpha1.ObjectiveUnknown, "%", `desk check "status is 201" PassRate >= 99%`, `no check "status is 201" in the window (checks: "body has id", "status is 200")`},
		{perfexpv1alpha1.ObjectiveMet, "", "desk counter baskets Count >= 900", "960 is within bounds"},
		{perfexpv1alpha1.ObjectiveMissed, "", "desk counter baskets Count <= 950", "960 is above the maximum 950"},
		{perfexpv1alpha1.ObjectiveUnknown, "", "desk counter refunds Count <= 950", `no custom Counter "refunds" in the window (Counters: baskets)`},
	}
	if len(r.Objectives) != len(tests) {
		t.Fatalf("%d objectives judged, want %d", len(r.Objectives), len(tests))
	}
	for i, tc := range tests {
		o := r.Objectives[i]
		if o.Outcome != tc.outcome || o.Unit != tc.unit || o.Name != tc.name || !strings.Contains(o.Message, tc.message) {
			t.Errorf("objective %d: %s %q unit %q: %s; want %s %q unit %q with %q", i, o.Outcome, o.Name, o.Unit, o.Message, tc.outcome, tc.name, tc.unit, tc.message)
		}
	}
	// The crafted run has no requests, so its results are invalid and the verdict says so;
	// only a Pass would be wrong.
	if r.Verdict == perfexpv1alpha1.VerdictPass {
		t.Errorf("verdict %s with missed objectives", r.Verdict)
	}
}
