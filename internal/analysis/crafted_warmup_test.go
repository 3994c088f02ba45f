package analysis

import (
	"context"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/perfexp/perfexp/internal/analysis/promtest"
	"github.com/perfexp/perfexp/internal/result"
)

// The warm-up's latency beside the measured window's, read from a real Prometheus. Run
// "warmed" has a slow warm-up (its own k6 pod, scenario "warm-up": 200-400 ms, two fast
// failures a flush) and a steady measured window (20-40 ms): the warm-up is read at its end
// in one query more, its p95 and counts are the truth's, and the findings say it absorbed a
// cold start. Run "cold" has no warm-up and its first 30 s interval is five times slower than
// the rest: the findings say the cold start had not ended and that a warm-up keeps it out.
func TestCraftedWarmUpAgainstTheMeasuredWindow(t *testing.T) {
	prom := promtest.Start(t)
	base := time.Now().Add(-40 * time.Minute).Truncate(time.Minute)
	flush := 5 * time.Second
	var series []promtest.Series
	add := func(s *promtest.K6Series, from, to time.Time, n int, lo, hi float64) {
		i := 0
		for at := from.Add(flush); !at.After(to); at = at.Add(flush) {
			i++
			s.Flush(at, latencies(n, lo, hi, i)...)
		}
	}
	// warmed: the warm-up 2 minutes, then 10 minutes measured.
	wStart, wEnd, wStop := base, base.Add(2*time.Minute), base.Add(12*time.Minute)
	warm := promtest.NewK6Series(promtest.K6Labels("warmed", "warm-up", "get", "w", true))
	warmFailed := promtest.NewK6Series(promtest.K6Labels("warmed", "warm-up", "get", "w", false))
	add(warm, wStart, wEnd, 10, 0.2, 0.4)
	add(warmFailed, wStart, wEnd, 2, 0.001, 0.002)
	main := promtest.NewK6Series(promtest.K6Labels("warmed", "main", "get", "0", true))
	add(main, wEnd, wStop, 20, 0.02, 0.04)
	// cold: no warm-up, the first 30 s slow.
	cStart, cSlow, cStop := base.Add(20*time.Minute), base.Add(20*time.Minute+30*time.Second), base.Add(30*time.Minute)
	cold := promtest.NewK6Series(promtest.K6Labels("cold", "main", "get", "0", true))
	add(cold, cStart, cSlow, 20, 0.1, 0.2)
	add(cold, cSlow, cStop, 20, 0.02, 0.04)
	for _, s := range []*promtest.K6Series{warm, warmFailed, main, cold} {
		series = append(series, s.Series()...)
	}
	prom.Write(t, series)

	analyze := func(t *testing.T, in Input) *result.Result {
		t.Helper()
		r, err := Analyze(context.Background(), prom.API(t), in)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	t.Run("a slow warm-up is read and said to have absorbed the cold start", func(t *testing.T) {
		in := Input{Experiment: "warmed", TestID: "warmed", Start: wStart, WarmUpEnd: wEnd, End: wStop, Scenarios: []string{"main"}}
		r := analyze(t, in)
		if r.WarmUp == nil || r.WarmUp.P95 == nil || r.WarmUp.Requests == nil || r.WarmUp.Errors == nil {
			t.Fatalf("warm-up %+v", r.WarmUp)
		}
		ok := truth([]*promtest.K6Series{warm}, wStart, wEnd)
		all := truth([]*promtest.K6Series{warm, warmFailed}, wStart, wEnd)
		if got, want := *r.WarmUp.Requests, int64(len(all)); got != want {
			t.Errorf("warm-up requests %d, want %d", got, want)
		}
		if got, want := *r.WarmUp.Errors, int64(len(all)-len(ok)); got != want {
			t.Errorf("warm-up errors %d, want %d", got, want)
		}
		// p95 over every request, as the measured window's Total is.
		if want := 1000 * orderStatistic(all, 0.95); math.Abs(*r.WarmUp.P95-want)/want > 0.05 {
			t.Errorf("warm-up p95 %.1f ms, want about %.1f", *r.WarmUp.P95, want)
		}
		if r.Total.Requests == nil || *r.Total.Requests != int64(len(truth([]*promtest.K6Series{main}, wEnd, wStop))) {
			t.Errorf("the measured window holds the warm-up's requests: %v", deref(r.Total.Requests))
		}
		var texts []string
		for _, f := range r.Findings {
			if f.Kind == result.FindingWarmUp {
				texts = append(texts, f.Text)
			}
		}
		t.Logf("warm-up findings %q", texts)
		if len(texts) != 1 || !strings.HasPrefix(texts[0], "The warm-up's p95 was ") || !strings.Contains(texts[0], "absorbed a cold start") {
			t.Errorf("warm-up findings %q, want the warm-up's absorbed cold start only", texts)
		}
		without := in
		without.WarmUpEnd = time.Time{}
		without.Start = wEnd
		if r2 := analyze(t, without); r2.WarmUp != nil || r.PrometheusQueries != r2.PrometheusQueries+1 {
			t.Errorf("without a warm-up: warm-up %+v, %d queries against %d with one", r2.WarmUp, r2.PrometheusQueries, r.PrometheusQueries)
		}
	})
	t.Run("a cold start the measured window still holds is named", func(t *testing.T) {
		r := analyze(t, Input{Experiment: "cold", TestID: "cold", Start: cStart, End: cStop, Scenarios: []string{"main"}})
		var texts []string
		for _, f := range r.Findings {
			if f.Kind == result.FindingWarmUp {
				texts = append(texts, f.Text)
			}
		}
		t.Logf("warm-up findings %q", texts)
		if r.WarmUp != nil || len(texts) != 1 || !strings.HasPrefix(texts[0], "A cold start had not ended when the measured window began: its first 30s had p95 ") ||
			!strings.HasSuffix(texts[0], "a warm-up (spec.load.warmUp) keeps it out of the results.") {
			t.Errorf("warm-up %+v, findings %q", r.WarmUp, texts)
		}
	})
}
