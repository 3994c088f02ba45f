package analysis

import (
	"context"
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/analysis/promtest"
	"github.com/perfexp/perfexp/internal/judge"
	"github.com/perfexp/perfexp/internal/result"
)

// jitter is a deterministic noise in [-1, 1) for a time since base: a scrape's share of a
// service's use varies from scrape to scrape, and a crafted run must vary too for its interval
// to mean anything. It depends on the time since base only, so every run of the test draws the
// same noise.
func jitter(base, t time.Time, salt float64) float64 {
	_, f := math.Modf(math.Abs(math.Sin(t.Sub(base).Seconds()*12.9898+salt) * 43758.5453))
	return 2*f - 1
}

// Story: "release N uses twice the CPU of N-1" (the reference reports' "Okapi uses 2-3x the CPU
// of the previous release"). The new release's api doubles its CPU and takes half as much
// memory again; the database beside it is unchanged, with scrape-to-scrape noise. Latencies
// are identical, so the headline stays NoMeaningfulChange: CPU and memory are secondary.
func TestCraftedWorkloadComparison(t *testing.T) {
	prom := promtest.Start(t)
	base := time.Now().Add(-50 * time.Minute).Truncate(time.Minute)
	window := 12 * time.Minute
	release1, release2 := base.Add(2*time.Minute), base.Add(22*time.Minute)
	changed := base.Add(18 * time.Minute) // the new release, well before its run
	level := func(t time.Time, before, after float64) float64 {
		if t.Before(changed) {
			return before
		}
		return after
	}
	to := base.Add(40 * time.Minute)
	var series []promtest.Series
	for _, c := range []cadvisor{
		{ns: "shop", pod: "api-7d9f8c6b5-abcde", container: "app", id: "a1", from: base, to: to,
			cpuRate: func(t time.Time) float64 { return level(t, 0.4, 0.8) * (1 + 0.06*jitter(base, t, 1)) },
			mem:     func(t time.Time) float64 { return level(t, 200, 300) * mib * (1 + 0.02*jitter(base, t, 2)) }},
		{ns: "shop", pod: "db-0", container: "postgres", id: "d1", from: base, to: to,
			cpuRate: func(t time.Time) float64 { return 0.25 * (1 + 0.1*jitter(base, t, 3)) },
			mem:     func(t time.Time) float64 { return 1024 * mib * (1 + 0.01*jitter(base, t, 4)) }},
	} {
		series = append(series, c.series()...)
	}
	for _, run := range []struct {
		id    string
		start time.Time
	}{{"release-1", release1}, {"release-2", release2}} {
		ok := promtest.NewK6Series(promtest.K6Labels(run.id, "checkout", "pay", "0", true))
		for i := 1; i <= int(window/(5*time.Second)); i++ {
			ok.Flush(run.start.Add(time.Duration(i)*5*time.Second), latencies(20, 0.005, 0.015, i)...)
		}
		series = append(series, ok.Series()...)
	}
	prom.Write(t, series)

	workloads := []Workload{
		{Kind: perfexpv1alpha1.WorkloadKindDeployment, Namespace: "shop", Name: "api", Touched: true, Containers: []Container{{Name: "app"}}},
		{Kind: perfexpv1alpha1.WorkloadKindStatefulSet, Namespace: "shop", Name: "db", Containers: []Container{{Name: "postgres"}}},
	}
	analyze := func(t *testing.T, id string, start time.Time, b *judge.Baseline) *result.Result {
		r, err := Analyze(context.Background(), prom.API(t), Input{Experiment: id, TestID: id, TargetNamespace: "shop", Start: start, End: start.Add(window),
			Scenarios: []string{"checkout"}, Workloads: workloads, Baseline: b, Analysis: perfexpv1alpha1.Analysis{BetweenRun: quietEnvironment()}})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	first := analyze(t, "release-1", release1, nil)
	// The baseline as a later analysis finds it: its results.json, read back.
	stored, err := json.Marshal(first)
	if err != nil {
		t.Fatal(err)
	}
	var reread result.Result
	if err := json.Unmarshal(stored, &reread); err != nil {
		t.Fatal(err)
	}
	if reread.Intervals == nil || len(reread.Intervals.Workloads) != 2 {
		t.Fatalf("results.json keeps no per-interval CPU and memory: %+v", reread.Intervals)
	}
	asBaseline := func(r *result.Result) *judge.Baseline {
		return &judge.Baseline{Name: "release-1", TestID: "release-1", Start: release1, End: release1.Add(window), Scenarios: []string{"checkout"}, Result: r}
	}
	find := func(t *testing.T, r *result.Result, metric string) result.MetricComparison {
		t.Helper()
		for _, m := range r.Comparison.Metrics {
			if m.Metric == metric {
				return m
			}
		}
		t.Fatalf("no %q among %d compared metrics", metric, len(r.Comparison.Metrics))
		return result.MetricComparison{}
	}

	r := analyze(t, "release-2", release2, asBaseline(&reread))
	claims := map[perfexpv1alpha1.Change]bool{perfexpv1alpha1.ChangeRegressed: true, perfexpv1alpha1.ChangeImproved: true}
	tests := []struct {
		metric   string
		want     func(perfexpv1alpha1.Change) bool
		estimate float64 // percent; NaN: not checked
	}{
		{"shop/api cpu avg", func(c perfexpv1alpha1.Change) bool { return c == perfexpv1alpha1.ChangeRegressed }, 100},
		{"shop/api memory avg", func(c perfexpv1alpha1.Change) bool { return c == perfexpv1alpha1.ChangeRegressed }, 50},
		{"shop/db cpu avg", func(c perfexpv1alpha1.Change) bool { return !claims[c] && c != perfexpv1alpha1.ChangeUnknown }, math.NaN()},
		{"shop/db memory avg", func(c perfexpv1alpha1.Change) bool { return c == perfexpv1alpha1.ChangeNoMeaningfulChange }, math.NaN()},
	}
	for _, tc := range tests {
		t.Run(tc.metric, func(t *testing.T) {
			m := find(t, r, tc.metric)
			t.Logf("%s: %v -> %v %s, %s %+.1f %% [%+.1f, %+.1f], %d vs %d intervals", tc.metric, deref(m.Baseline), deref(m.Value), m.Unit,
				m.Change, deref(m.Estimate), deref(m.Low), deref(m.High), m.Samples, m.BaselineSamples)
			if !tc.want(m.Change) || m.Primary || m.Method != result.MethodBlockBootstrap || m.Samples < 15 || m.BaselineSamples < 15 {
				t.Errorf("%s (%s), primary %v, %s over %d vs %d intervals, [%v, %v]", m.Change, m.Why, m.Primary, m.Method, m.Samples, m.BaselineSamples, deref(m.Low), deref(m.High))
			}
			if !math.IsNaN(tc.estimate) && (m.Estimate == nil || math.Abs(*m.Estimate-tc.estimate) > 3) {
				t.Errorf("estimate %v %%, want %v %%", deref(m.Estimate), tc.estimate)
			}
			if m.Pods != 1 || m.BaselinePods != 1 || !strings.HasPrefix(m.Workload, string(perfexpv1alpha1.WorkloadKindDeployment)+"/shop/api") && !strings.Contains(m.Workload, "/shop/db") {
				t.Errorf("workload %q, pods %d vs %d", m.Workload, m.Pods, m.BaselinePods)
			}
		})
	}
	t.Run("the headline ignores CPU and memory", func(t *testing.T) {
		if r.Comparison.Change != perfexpv1alpha1.ChangeNoMeaningfulChange {
			t.Errorf("headline %s", r.Comparison.Change)
		}
		// The family is the p95 alone (no errors anywhere: the error rate is a constant).
		if r.Comparison.Multiplicity != "Holm across 1 primary metric" {
			t.Errorf("multiplicity %q", r.Comparison.Multiplicity)
		}
	})
	t.Run("the status shows them", func(t *testing.T) {
		_, st := r.Status()
		found := false
		for _, m := range st.Metrics {
			found = found || m.Metric == "shop/api cpu avg" && m.Change == perfexpv1alpha1.ChangeRegressed
		}
		if !found {
			t.Errorf("status comparison lacks shop/api cpu avg: %+v", st.Metrics)
		}
	})
	t.Run("a baseline analysed before per-interval CPU and memory: Unknown with the reason", func(t *testing.T) {
		old := reread
		iv := *old.Intervals
		iv.Workloads = nil
		old.Intervals = &iv
		r := analyze(t, "release-2", release2, asBaseline(&old))
		m := find(t, r, "shop/api cpu avg")
		if m.Change != perfexpv1alpha1.ChangeUnknown || !strings.Contains(m.Why, "older perfexp") || m.Value == nil || m.Baseline == nil {
			t.Errorf("%s: %q (values %v, %v)", m.Change, m.Why, deref(m.Value), deref(m.Baseline))
		}
		if r.Comparison.Change != perfexpv1alpha1.ChangeNoMeaningfulChange {
			t.Errorf("headline %s", r.Comparison.Change)
		}
	})
}
