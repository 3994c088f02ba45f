package analysis

import (
	"context"
	"slices"
	"testing"
	"time"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/analysis/promtest"
	"github.com/perfexp/perfexp/internal/judge"
	"github.com/perfexp/perfexp/internal/result"
)

func comparedRow(c *result.Comparison, label string) *result.MetricComparison {
	for i := range c.Metrics {
		if c.Metrics[i].Metric == label {
			return &c.Metrics[i]
		}
	}
	return nil
}

func labels(c *result.Comparison) []string {
	var out []string
	for _, mc := range c.Metrics {
		out = append(out, mc.Metric)
	}
	return out
}

// Story: one run per side, crafted into a real Prometheus: the arm's check-out transaction
// takes 30 % longer than the baseline's in every flush, its requests and its custom Trend
// are the same. The group is Regressed on the block bootstrap over per-interval histograms
// read like requests', the Trend is not Regressed or Improved, and neither is primary. The
// baseline's stored intervals keep its groups and Trends for later comparisons.
func TestGroupAndTrendSingleRunComparison(t *testing.T) {
	start := time.Now().Add(-45 * time.Minute).Truncate(time.Second)
	prom := promtest.Start(t)
	api := prom.API(t)
	run := func(id string, from time.Time, slower float64) Input {
		req := promtest.NewK6Series(promtest.K6Labels(id, "desk", "get", "0", true))
		out := newCraftedTrend(metricGroupDuration, id, "desk", "::check-out", "0")
		tx := newCraftedTrend("k6_checkout_transaction_seconds", id, "desk", "::check-out", "0")
		for k := 1; k <= 60; k++ {
			at := from.Add(time.Duration(k) * 5 * time.Second)
			req.Flush(at, latencies(20, 0.01, 0.05, k)...)
			vs := latencies(12, 0.1, 0.4, k)
			for i := range vs {
				vs[i] *= slower
			}
			out.flush(at, vs...)
			tx.flush(at, latencies(12, 0.05, 0.15, k+11)...)
		}
		prom.Write(t, append(req.Series(), out.series(), tx.series()))
		return Input{Experiment: id, TestID: id, Start: from, End: from.Add(301 * time.Second), Scenarios: []string{"desk"},
			Analysis: perfexpv1alpha1.Analysis{BetweenRun: quietEnvironment()}}
	}
	bin := run("tx-base", start, 1)
	ain := run("tx-arm", start.Add(10*time.Minute), 1.3)
	b, err := Analyze(context.Background(), api, bin)
	if err != nil {
		t.Fatal(err)
	}
	if b.Validity != perfexpv1alpha1.Valid {
		t.Fatalf("baseline %s: %v", b.Validity, b.InvalidReasons)
	}
	for _, k := range []result.IntervalKey{{Scenario: "desk", Group: "check-out"}, {Scenario: "desk", Trend: "checkout_transaction"}} {
		if b.Intervals.Find(k) == nil {
			t.Errorf("the baseline's stored intervals lack %+v", k)
		}
	}
	ain.Baseline = &judge.Baseline{Name: "tx-base", TestID: "tx-base", Scenarios: []string{"desk"}, Result: b}
	r, err := Analyze(context.Background(), api, ain)
	if err != nil {
		t.Fatal(err)
	}
	c := r.Comparison
	if c == nil || c.Message != "" {
		t.Fatalf("no comparison: %+v", c)
	}
	tests := []struct {
		label string
		want  []perfexpv1alpha1.Change
	}{
		{"desk group check-out p95", []perfexpv1alpha1.Change{perfexpv1alpha1.ChangeRegressed}},
		{"desk group check-out avg", []perfexpv1alpha1.Change{perfexpv1alpha1.ChangeRegressed}},
		{"desk trend checkout_transaction p95", []perfexpv1alpha1.Change{perfexpv1alpha1.ChangeNoMeaningfulChange, perfexpv1alpha1.ChangeInconclusive}},
		{"desk trend checkout_transaction avg", []perfexpv1alpha1.Change{perfexpv1alpha1.ChangeNoMeaningfulChange, perfexpv1alpha1.ChangeInconclusive}},
	}
	for _, tc := range tests {
		mc := comparedRow(c, tc.label)
		if mc == nil {
			t.Errorf("%s: not compared; rows: %v", tc.label, labels(c))
			continue
		}
		if !slices.Contains(tc.want, mc.Change) || mc.Primary || mc.Method != result.MethodBlockBootstrap {
			t.Errorf("%s: %s (primary %v, method %s): %s; want one of %v", tc.label, mc.Change, mc.Primary, mc.Method, mc.Why, tc.want)
		}
		t.Logf("%s: %s [%v, %v]%% %s", tc.label, mc.Change, deref(mc.Low), deref(mc.High), mc.Why)
	}
	if c.Change == perfexpv1alpha1.ChangeRegressed {
		t.Errorf("headline %s: the requests did not change", c.Change)
	}
}
