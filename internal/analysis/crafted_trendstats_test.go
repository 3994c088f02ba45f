package analysis

import (
	"context"
	"testing"
	"time"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/analysis/promtest"
)

// Story: k6 ran without native histograms, writing its trend-stat gauges. perfexp still reports
// latencies, labelled as the fallback: the average weighted exactly by request counts, the
// maximum exact, and a percentile over two runners as the larger of theirs.
func TestCraftedTrendStatsFallback(t *testing.T) {
	prom := promtest.Start(t)
	start := time.Now().Add(-20 * time.Minute).Truncate(time.Second)
	const id = "trend"
	var series []promtest.Series
	type runner struct {
		inst          string
		n             float64
		avg, p95, max float64 // seconds
	}
	for _, rn := range []runner{{"0", 100, 0.010, 0.020, 0.050}, {"1", 300, 0.030, 0.040, 0.045}} {
		labels := promtest.K6Labels(id, "main", "get", rn.inst, true)
		with := func(name string) map[string]string {
			m := map[string]string{"__name__": name}
			for k, v := range labels {
				m[k] = v
			}
			return m
		}
		at := start.Add(time.Minute)
		series = append(series,
			promtest.Series{Labels: with(metricRequests), Floats: []promtest.Float{{T: at, V: rn.n / 2}, {T: at.Add(time.Minute), V: rn.n}}},
			promtest.Series{Labels: with("k6_http_req_duration_avg"), Floats: []promtest.Float{{T: at, V: 1}, {T: at.Add(time.Minute), V: rn.avg}}},
			promtest.Series{Labels: with("k6_http_req_duration_p95"), Floats: []promtest.Float{{T: at, V: 1}, {T: at.Add(time.Minute), V: rn.p95}}},
			promtest.Series{Labels: with("k6_http_req_duration_max"), Floats: []promtest.Float{{T: at, V: 1}, {T: at.Add(time.Minute), V: rn.max}}},
		)
	}
	prom.Write(t, series)
	r, err := Analyze(context.Background(), prom.API(t), Input{Experiment: id, TestID: id, Start: start, End: start.Add(3 * time.Minute), Scenarios: []string{"main"}})
	if err != nil {
		t.Fatal(err)
	}
	s := r.Scenarios[0]
	tests := []struct {
		name string
		ok   bool
		got  any
	}{
		{"labelled as the fallback", r.LatencySource == perfexpv1alpha1.LatencyFromTrendStats && len(r.Notes) > 0, r.LatencySource},
		{"counts stay exact", *s.RequestStats.Requests == 400, *s.RequestStats.Requests},
		{"avg weighted by requests: (100*10 + 300*30)/400 = 25 ms", s.Avg != nil && within(*s.Avg, 25, 1e-9), deref(s.Avg)},
		{"max is the largest: 50 ms", s.Max != nil && within(*s.Max, 50, 1e-9), deref(s.Max)},
		{"p95 over two runners is the larger, a bound: 40 ms", s.P95 != nil && within(*s.P95, 40, 1e-9), deref(s.P95)},
		{"no p99 was written: absent", s.P99 == nil, deref(s.P99)},
		{"request rows too", s.Requests[0].P95 != nil && within(*s.Requests[0].P95, 40, 1e-9), s.Requests},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if !tc.ok {
				t.Errorf("got %v", tc.got)
			}
		})
	}
}
