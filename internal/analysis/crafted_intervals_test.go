package analysis

import (
	"context"
	"math"
	"testing"
	"time"

	promv1 "github.com/prometheus/client_golang/api/prometheus/v1"

	"github.com/perfexp/perfexp/internal/analysis/promtest"
	"github.com/perfexp/perfexp/internal/result"
)

// Story: the per-interval latencies that comparisons resample are read as Prometheus' sums per
// scenario, corrected for the series a sum gets wrong. Over 40 minutes: a request name used
// only in the first 4 minutes (its series leaves every instant evaluation 5 minutes later), an
// error status that shows up from minute 20 only, and a runner restarted at minute 25 (its
// counters begin again at zero). Every interval's histogram must equal the sum of each series'
// own increments, read one by one.
func TestCraftedIntervalsEqualPerSeriesIncrements(t *testing.T) {
	prom := promtest.Start(t)
	api := prom.API(t)
	base := time.Now().Add(-50 * time.Minute).Truncate(time.Minute)
	start, end := base, base.Add(40*time.Minute)
	const testID = "intervals"

	var series []promtest.Series
	login := promtest.NewK6Series(promtest.K6Labels(testID, "main", "login", "0", true))
	browse0 := promtest.NewK6Series(promtest.K6Labels(testID, "main", "browse", "0", true))
	browse1 := promtest.NewK6Series(promtest.K6Labels(testID, "main", "browse", "1", true))
	failed := promtest.NewK6Series(promtest.K6Labels(testID, "main", "browse", "0", false))
	other := promtest.NewK6Series(promtest.K6Labels(testID, "other", "search", "0", true))
	restarted := false
	for i := 1; at(start, i).Before(end); i++ {
		t0 := at(start, i)
		if t0.Sub(start) < 4*time.Minute {
			login.Flush(t0, latencies(2, 0.05, 0.4, i)...)
		}
		browse0.Flush(t0, latencies(3, 0.001, 0.2, i)...)
		if t0.Sub(start) >= 25*time.Minute && !restarted {
			browse1.Restart()
			restarted = true
		}
		browse1.Flush(t0, latencies(3, 0.002, 0.3, i+7)...)
		if t0.Sub(start) >= 20*time.Minute {
			failed.Flush(t0, latencies(1, 0.0005, 0.002, i)...)
		}
		other.Flush(t0, latencies(2, 0.01, 0.1, i)...)
	}
	for _, s := range []*promtest.K6Series{login, browse0, browse1, failed, other} {
		series = append(series, s.Series()...)
	}
	prom.Write(t, series)

	step := intervalLength(end.Sub(start))
	g := intervalGrid{start: start, step: step, steps: int(end.Sub(start)/step) + 1}
	// The truth: every series read on its own, its increments summed; the successful requests
	// only (the failed browse series left out) where comparisons judge them.
	for _, mode := range []struct {
		name, truth    string
		successfulOnly bool
	}{
		{"all requests", `k6_http_req_duration_seconds{testid="intervals"}`, false},
		{"successful requests", `k6_http_req_duration_seconds{testid="intervals",expected_response!="false"}`, true},
	} {
		got, err := readIntervals(context.Background(), api, testID, []string{"main", "other"}, start, end, step, map[result.IntervalKey]bool{{Scenario: "main", Request: "login"}: true}, mode.successfulOnly)
		if err != nil {
			t.Fatal(err)
		}
		all, err := rangeMatrix(context.Background(), api, mode.truth, promv1.Range{Start: start, End: end, Step: step})
		if err != nil {
			t.Fatal(err)
		}
		want := sumHistogramIncrements(all, g)
		for _, k := range []result.IntervalKey{{Scenario: result.AllScenarios}, {Scenario: "main"}, {Scenario: "other"}, {Scenario: "main", Request: "login"}} {
			t.Run(mode.name+" "+k.Scenario+"/"+k.Request, func(t *testing.T) {
				if got.SuccessfulOnly != mode.successfulOnly {
					t.Errorf("successfulOnly %v", got.SuccessfulOnly)
				}
				s := got.Find(k)
				if s == nil {
					t.Fatalf("no interval series")
				}
				for i, w := range want[k] {
					h := s.Histogram(i)
					switch {
					case w == nil || w.Count == 0:
						if h != nil && h.Count != 0 {
							t.Errorf("interval %d: %v requests, want none", i, h.Count)
						}
					case h == nil:
						t.Errorf("interval %d: none, want %v requests", i, w.Count)
					default:
						if math.Abs(h.Count-w.Count) > 1e-9 || math.Abs(h.Sum-w.Sum) > 1e-9 {
							t.Errorf("interval %d: count %v sum %v, want %v and %v", i, h.Count, h.Sum, w.Count, w.Sum)
						}
						for _, p := range []float64{0.5, 0.95} {
							a, _ := h.Quantile(p)
							b, _ := w.Quantile(p)
							if a != b {
								t.Errorf("interval %d: p%v %v, want %v", i, p*100, a, b)
							}
						}
					}
				}
			})
		}
	}
	got, err := readIntervals(context.Background(), api, testID, []string{"main", "other"}, start, end, step, map[result.IntervalKey]bool{{Scenario: "main", Request: "login"}: true}, true)
	if err != nil {
		t.Fatal(err)
	}
	t.Run("failed requests are counted whatever the latency holds", func(t *testing.T) {
		s := got.Find(result.IntervalKey{Scenario: "main"})
		var failed float64
		for _, f := range s.Failed {
			failed += f
		}
		if failed == 0 {
			t.Errorf("no failed requests counted")
		}
	})
	t.Run("names not asked for have counts but no histograms", func(t *testing.T) {
		s := got.Find(result.IntervalKey{Scenario: "main", Request: "browse"})
		if s == nil || len(s.Counts) != 0 || s.Requests[0] == 0 {
			t.Errorf("browse: %+v", s)
		}
	})
}

func at(start time.Time, i int) time.Time {
	return start.Add(time.Duration(i)*5*time.Second + 300*time.Millisecond)
}
