package analysis

import (
	"context"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/analysis/promtest"
	"github.com/perfexp/perfexp/internal/judge"
	"github.com/perfexp/perfexp/internal/result"
)

// Story: "is release N slower than release N-1?" The baseline answered in about 10 ms, the
// new release in about 13 ms; perfexp reports the change with its interval, which lies wholly
// above +5 %, so the p95 and the headline are Regressed and the objective "p95 at most +10%
// vs baseline" is missed. A third run that repeats the baseline shows no meaningful change.
func TestCraftedBaselineComparison(t *testing.T) {
	prom := promtest.Start(t)
	base := time.Now().Add(-55 * time.Minute).Truncate(time.Minute)
	runs := []struct {
		id    string
		start time.Time
		lat   float64
	}{{"release-1", base, 0.010}, {"release-2", base.Add(17 * time.Minute), 0.013}, {"release-1-again", base.Add(34 * time.Minute), 0.010}}
	var series []promtest.Series
	for ri, run := range runs {
		ok := promtest.NewK6Series(promtest.K6Labels(run.id, "checkout", "pay", "0", true))
		for i := 1; i <= 180; i++ { // 15 minutes, a flush every 5 s
			ok.Flush(run.start.Add(time.Duration(i)*5*time.Second), latencies(20, run.lat*0.5, run.lat*1.5, i*(ri+1))...)
		}
		series = append(series, ok.Series()...)
	}
	prom.Write(t, series)

	analyze := func(t *testing.T, run int, b *judge.Baseline, objectives ...perfexpv1alpha1.Objective) *result.Result {
		r, err := Analyze(context.Background(), prom.API(t), Input{Experiment: runs[run].id, TestID: runs[run].id, Start: runs[run].start,
			End: runs[run].start.Add(15 * time.Minute), Scenarios: []string{"checkout"}, Baseline: b,
			Analysis: perfexpv1alpha1.Analysis{Objectives: objectives, BetweenRun: quietEnvironment()}})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	baseline := analyze(t, 0, nil)
	asBaseline := &judge.Baseline{Name: runs[0].id, TestID: runs[0].id, Start: runs[0].start, End: runs[0].start.Add(15 * time.Minute), Scenarios: []string{"checkout"}, Result: baseline}
	inc := int32(10)
	max := resource.MustParse("20")
	objs := []perfexpv1alpha1.Objective{
		{Metric: perfexpv1alpha1.MetricP95, Scenario: "checkout", MaxIncreasePercent: &inc},
		{Metric: perfexpv1alpha1.MetricP95, Scenario: "checkout", Max: &max},
	}

	find := func(r *result.Result, metric string) result.MetricComparison {
		for _, m := range r.Comparison.Metrics {
			if m.Metric == metric {
				return m
			}
		}
		t.Fatalf("no %q in %+v", metric, r.Comparison.Metrics)
		return result.MetricComparison{}
	}
	t.Run("slower release: regressed, objective missed, verdict Fail", func(t *testing.T) {
		r := analyze(t, 1, asBaseline, objs...)
		p95 := find(r, "checkout p95")
		if p95.Change != perfexpv1alpha1.ChangeRegressed || p95.DeltaPercent == nil || *p95.DeltaPercent < 20 || p95.Low == nil || *p95.Low <= 10 || !p95.Primary {
			t.Errorf("checkout p95: %+v (delta %v%%, interval [%v, %v])", p95, deref(p95.DeltaPercent), deref(p95.Low), deref(p95.High))
		}
		if p95.Samples < 10 || p95.BaselineSamples < 10 {
			t.Errorf("only %d/%d per-interval samples", p95.Samples, p95.BaselineSamples)
		}
		if pay := find(r, "checkout/pay p95"); pay.Change != perfexpv1alpha1.ChangeRegressed {
			t.Errorf("request-level p95: %+v", pay)
		}
		if r.Comparison.Change != perfexpv1alpha1.ChangeRegressed {
			t.Errorf("overall change %s", r.Comparison.Change)
		}
		if r.Objectives[0].Outcome != perfexpv1alpha1.ObjectiveMissed || r.Objectives[1].Outcome != perfexpv1alpha1.ObjectiveMet {
			t.Errorf("objectives: %+v", r.Objectives)
		}
		if r.Verdict != perfexpv1alpha1.VerdictFail {
			t.Errorf("verdict %s", r.Verdict)
		}
	})
	t.Run("the same release again: no meaningful change, verdict Pass", func(t *testing.T) {
		r := analyze(t, 2, asBaseline, objs...)
		if p95 := find(r, "checkout p95"); p95.Change != perfexpv1alpha1.ChangeNoMeaningfulChange {
			t.Errorf("checkout p95: %s [%v, %v] %s", p95.Change, deref(p95.Low), deref(p95.High), p95.Why)
		}
		if r.Comparison.Change != perfexpv1alpha1.ChangeNoMeaningfulChange {
			t.Errorf("headline %s", r.Comparison.Change)
		}
		if rate := find(r, "checkout rate"); rate.Change == perfexpv1alpha1.ChangeUnknown || rate.Delta == nil || *rate.Delta != 0 {
			t.Errorf("checkout rate: %+v", rate)
		}
		if r.Verdict != perfexpv1alpha1.VerdictPass {
			t.Errorf("verdict %s: %+v", r.Verdict, r.Objectives)
		}
	})
	t.Run("a baseline that ran other scenarios is refused with a reason", func(t *testing.T) {
		other := *asBaseline
		other.Scenarios = []string{"browse"}
		r := analyze(t, 1, &other, objs...)
		if r.Comparison.Message == "" || len(r.Comparison.Metrics) != 0 || r.Objectives[0].Outcome != perfexpv1alpha1.ObjectiveUnknown {
			t.Errorf("comparison %+v, objective %+v", r.Comparison, r.Objectives[0])
		}
	})
}
