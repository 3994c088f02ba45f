package analysis

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/analysis/promtest"
	"github.com/perfexp/perfexp/internal/judge"
	"github.com/perfexp/perfexp/internal/result"
)

// Story: a release makes every successful check-out 10 % slower, and also fails 15 % of them
// at once with a 500 in a fifth of a millisecond. Over all requests the fast failures pull
// the average and the median down, and the comparison would read "faster" (the average -6 %,
// Improved); over the successful requests, what a user waits for, it is Regressed. Comparisons
// judge the successful requests, as objectives do, and the results still show every request.
func TestCraftedComparisonOfSuccessfulLatency(t *testing.T) {
	prom := promtest.Start(t)
	base := time.Now().Add(-45 * time.Minute).Truncate(time.Minute)
	window := 15 * time.Minute
	runs := []struct {
		id     string
		start  time.Time
		slower float64
		failed int // per flush of 20 successes
	}{{"release-1", base, 1, 0}, {"release-2", base.Add(20 * time.Minute), 1.1, 4}}
	var series []promtest.Series
	for _, run := range runs {
		ok := promtest.NewK6Series(promtest.K6Labels(run.id, "checkout", "pay", "0", true))
		bad := promtest.NewK6Series(promtest.K6Labels(run.id, "checkout", "pay", "0", false))
		for i := 1; i <= int(window/(5*time.Second)); i++ {
			at := run.start.Add(time.Duration(i) * 5 * time.Second)
			ok.Flush(at, latencies(20, 0.010*0.5*run.slower, 0.010*1.5*run.slower, i)...)
			if run.failed > 0 {
				bad.Flush(at, latencies(run.failed, 0.00015, 0.00025, i)...)
			}
		}
		series = append(series, ok.Series()...)
		if run.failed > 0 {
			series = append(series, bad.Series()...)
		}
	}
	prom.Write(t, series)
	maxErr := resource.MustParse("20")
	analyze := func(t *testing.T, run int, b *judge.Baseline) *result.Result {
		r, err := Analyze(context.Background(), prom.API(t), Input{Experiment: runs[run].id, TestID: runs[run].id, Start: runs[run].start,
			End: runs[run].start.Add(window), Scenarios: []string{"checkout"}, Baseline: b,
			Analysis: perfexpv1alpha1.Analysis{MaxErrorRatePercent: &maxErr, BetweenRun: quietEnvironment()}})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	first := analyze(t, 0, nil)
	r := analyze(t, 1, &judge.Baseline{Name: runs[0].id, TestID: runs[0].id, Start: runs[0].start, End: runs[0].start.Add(window), Scenarios: []string{"checkout"}, Result: first})
	if r.Validity != perfexpv1alpha1.Valid {
		t.Fatalf("the variant is %s: %v", r.Validity, r.InvalidReasons)
	}
	find := func(metric string) result.MetricComparison {
		for _, m := range r.Comparison.Metrics {
			if m.Metric == metric {
				return m
			}
		}
		t.Fatalf("no %q", metric)
		return result.MetricComparison{}
	}
	for _, metric := range []string{"checkout avg", "checkout p50", "checkout/pay avg"} {
		t.Run(metric+": the successful requests' change, Regressed", func(t *testing.T) {
			m := find(metric)
			t.Logf("%s: %v -> %v ms, %s %+.1f %% [%+.1f, %+.1f]", metric, deref(m.Baseline), deref(m.Value), m.Change, deref(m.Estimate), deref(m.Low), deref(m.High))
			if m.Change != perfexpv1alpha1.ChangeRegressed || m.Estimate == nil || *m.Estimate < 7 || *m.Estimate > 13 || m.DeltaPercent == nil || *m.DeltaPercent < 7 {
				t.Errorf("%s (%s), estimate %v %%, delta %v %%", m.Change, m.Why, deref(m.Estimate), deref(m.DeltaPercent))
			}
		})
	}
	t.Run("the results still show all requests, fast failures included", func(t *testing.T) {
		all, okOnly := r.Scenarios[0].Avg, r.Scenarios[0].Successful
		if all == nil || okOnly == nil || okOnly.Avg == nil || *all >= *first.Scenarios[0].Avg || *okOnly.Avg <= *first.Scenarios[0].Avg {
			t.Errorf("avg over all %v, successful %+v, baseline %v", deref(all), okOnly, deref(first.Scenarios[0].Avg))
		}
	})
	t.Run("the comparison says what its latencies cover", func(t *testing.T) {
		if !slices.Contains(r.Comparison.Notes, judge.SuccessfulLatencyNote) {
			t.Errorf("notes %q", r.Comparison.Notes)
		}
	})
	// A baseline analysed before comparisons judged the successful requests stored every
	// request's latency. Like is compared with like: with failures in it, this run's latency
	// of all requests is read again; without Prometheus (kubectl perfexp compare), the latency
	// rows are Unknown rather than a comparison of two different things.
	old := *r
	oldIv, err := readIntervals(context.Background(), prom.API(t), runs[1].id, []string{"checkout"}, runs[1].start, runs[1].start.Add(window), intervalLength(window),
		map[result.IntervalKey]bool{{Scenario: "checkout", Request: "pay"}: true}, false)
	if err != nil {
		t.Fatal(err)
	}
	old.Intervals, old.Comparison = oldIv, nil
	t.Run("an older baseline with failures: all requests on both sides, said so", func(t *testing.T) {
		again := analyze(t, 1, &judge.Baseline{Name: "release-2-old", TestID: runs[1].id, Start: runs[1].start, End: runs[1].start.Add(window), Scenarios: []string{"checkout"}, Result: &old})
		var m result.MetricComparison
		for _, x := range again.Comparison.Metrics {
			if x.Metric == "checkout avg" {
				m = x
			}
		}
		if m.Change != perfexpv1alpha1.ChangeNoMeaningfulChange || m.Estimate == nil || *m.Estimate != 0 || *m.Value != *again.Scenarios[0].Avg {
			t.Errorf("%s %v %% (%v ms, all requests %v ms)", m.Change, deref(m.Estimate), deref(m.Value), deref(again.Scenarios[0].Avg))
		}
		if !strings.Contains(strings.Join(again.Comparison.Notes, " "), "compared over all requests") {
			t.Errorf("notes %q", again.Comparison.Notes)
		}
	})
	t.Run("an older baseline with failures, no Prometheus: latency Unknown, error rate compared", func(t *testing.T) {
		c := judge.CompareRuns([]*result.Result{&old}, []*result.Result{r}, judge.CompareOptions{})
		for _, m := range c.Metrics {
			switch {
			case m.Metric == "checkout avg" && (m.Change != perfexpv1alpha1.ChangeUnknown || !strings.Contains(m.Why, "not comparable")):
				t.Errorf("%s: %s %q", m.Metric, m.Change, m.Why)
			case m.Metric == "checkout errorrate" && m.Change == perfexpv1alpha1.ChangeUnknown:
				t.Errorf("%s: %s %q", m.Metric, m.Change, m.Why)
			}
		}
	})
	t.Run("the error rate is compared over all requests", func(t *testing.T) {
		if m := find("checkout errorrate"); m.Change != perfexpv1alpha1.ChangeRegressed {
			t.Errorf("%s", m.Change)
		}
	})
}
