package analysis

import (
	"context"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/model"
	"k8s.io/apimachinery/pkg/api/resource"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/analysis/promtest"
	"github.com/perfexp/perfexp/internal/judge"
	"github.com/perfexp/perfexp/internal/result"
)

// Dropped iterations are read at the window's edges like the other counters, per scenario; a
// series that appears inside the window counts from zero.
func TestDroppedIterations(t *testing.T) {
	m := func(scenario, inst string) model.Metric {
		return model.Metric{"scenario": model.LabelValue(scenario), "instance_id": model.LabelValue(inst)}
	}
	d := &k6Data{labels: map[string]model.Metric{}, iterLabels: map[string]model.Metric{}, dropLabels: map[string]model.Metric{},
		reqs: []map[string]float64{{}, {}}, hists: []map[string]*result.Histogram{{}, {}}}
	d.iterLabels["a0"], d.iterLabels["a1"], d.iterLabels["b0"] = m("arrival", "0"), m("arrival", "1"), m("steady", "0")
	d.iters = []map[string]float64{{"a0": 100, "a1": 100, "b0": 50}, {"a0": 1100, "a1": 1080, "b0": 1050}}
	d.dropLabels["a0"], d.dropLabels["a1"] = m("arrival", "0"), m("arrival", "1")
	d.dropped = []map[string]float64{{"a0": 2}, {"a0": 12, "a1": 30}}
	_, got, _ := d.k6Window(0, 1, func(string) float64 { return 60 }, []string{"arrival", "steady"})
	tests := []struct {
		scenario string
		dropped  int64
		percent  float64
	}{
		{"arrival", 10 + 30, 100 * 40.0 / (1980 + 40)},
		{"steady", 0, 0},
	}
	for i, tc := range tests {
		t.Run(tc.scenario, func(t *testing.T) {
			s := got[i]
			if s.DroppedIterations == nil || *s.DroppedIterations != tc.dropped || s.DroppedPercent == nil || math.Abs(*s.DroppedPercent-tc.percent) > 1e-9 {
				t.Errorf("dropped %v (%v%%), want %d (%g%%)", deref(s.DroppedIterations), deref(s.DroppedPercent), tc.dropped, tc.percent)
			}
		})
	}
	judged := func(runners ...result.RunnerUse) *result.Result {
		r := &result.Result{Validity: perfexpv1alpha1.Valid, Scenarios: slices.Clone(got), Runners: runners}
		for i := range r.Scenarios {
			r.Scenarios[i].RequestStats = result.RequestStats{Requests: result.Count(100), Errors: result.Count(0), ErrorPercent: result.Num(0), Rate: result.Num(80)}
		}
		judge.Validity(r, judge.DefaultMaxErrorRatePercent)
		return r
	}
	t.Run("2% dropped while a runner was CPU-throttled: the generator fell behind, Invalid", func(t *testing.T) {
		r := judged(result.RunnerUse{Pod: "k6-0", ThrottledPercent: result.Num(35)})
		if r.Scenarios[0].Validity != perfexpv1alpha1.Invalid || !strings.Contains(r.Scenarios[0].InvalidReason, "dropped 40 iterations") ||
			!strings.Contains(r.Scenarios[0].InvalidReason, "load generator") {
			t.Errorf("arrival: %s %q", r.Scenarios[0].Validity, r.Scenarios[0].InvalidReason)
		}
		if r.Scenarios[1].Validity != perfexpv1alpha1.Valid {
			t.Errorf("steady: %s %q", r.Scenarios[1].Validity, r.Scenarios[1].InvalidReason)
		}
	})
	t.Run("2% dropped with runners not CPU-bound: the system saturated, Valid and compared", func(t *testing.T) {
		r := judged(result.RunnerUse{Pod: "k6-0", ThrottledPercent: result.Num(0.5)})
		a := r.Scenarios[0]
		if r.Validity != perfexpv1alpha1.Valid || a.Validity != perfexpv1alpha1.Valid || !a.Saturated || r.Scenarios[1].Saturated {
			t.Fatalf("result %s, arrival %s saturated %v (%q)", r.Validity, a.Validity, a.Saturated, a.InvalidReason)
		}
		if len(r.Notes) != 1 || !strings.Contains(r.Notes[0], "scenario arrival saturated") || !strings.Contains(r.Notes[0], "sustained 80 requests/s") {
			t.Errorf("notes %q", r.Notes)
		}
	})
	t.Run("2% dropped, runners not measured: saturated, and the note says the generator was not ruled out", func(t *testing.T) {
		r := judged()
		if !r.Scenarios[0].Saturated || len(r.Notes) != 1 || !strings.Contains(r.Notes[0], "cannot be ruled out") {
			t.Errorf("saturated %v, notes %q", r.Scenarios[0].Saturated, r.Notes)
		}
	})
}

// Story: one request in 21 fails fast (1 ms) while the others take 200 ms. The tables show all
// requests; objectives on latency judge the successful ones, so the fast failures cannot
// flatter them.
func TestCraftedSuccessOnlyLatencyForObjectives(t *testing.T) {
	prom := promtest.Start(t)
	start := time.Now().Add(-20 * time.Minute).Truncate(time.Minute)
	end := start.Add(5 * time.Minute)
	const testID = "fastfail"
	ok := promtest.NewK6Series(promtest.K6Labels(testID, "main", "get", "0", true))
	failed := promtest.NewK6Series(promtest.K6Labels(testID, "main", "get", "0", false))
	for at := 5 * time.Second; at <= 5*time.Minute; at += 5 * time.Second {
		lat := make([]float64, 20)
		for i := range lat {
			lat[i] = 0.2
		}
		ok.Flush(start.Add(at), lat...)
		failed.Flush(start.Add(at), 0.001)
	}
	prom.Write(t, append(ok.Series(), failed.Series()...))
	max := resource.MustParse("195")
	res, err := Analyze(context.Background(), prom.API(t), Input{Experiment: "f", TestID: testID, Start: start, End: end, Scenarios: []string{"main"},
		Analysis: perfexpv1alpha1.Analysis{Objectives: []perfexpv1alpha1.Objective{{Metric: perfexpv1alpha1.MetricAvg, Scenario: "main", Max: &max}}}})
	if err != nil {
		t.Fatal(err)
	}
	s := res.Scenarios[0]
	if s.Avg == nil || math.Abs(*s.Avg-(20*200+1)/21.0) > 0.01 {
		t.Errorf("all requests' avg %v, want %.3f", deref(s.Avg), (20*200+1)/21.0)
	}
	if s.Successful == nil || s.Successful.Avg == nil || math.Abs(*s.Successful.Avg-200) > 0.01 {
		t.Fatalf("successful requests' latency %+v, want avg 200", s.Successful)
	}
	if o := res.Objectives[0]; o.Outcome != perfexpv1alpha1.ObjectiveMissed || !strings.Contains(o.Message, "successful requests only") {
		t.Errorf("objective %s: %s; want Missed on the successful requests' 200 ms", o.Outcome, o.Message)
	}
}
