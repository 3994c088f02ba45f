package history

import (
	"math"
	"testing"
	"time"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/judge"
)

// sdOf is the sample sd of the logs of xs, in percent.
func sdOf(xs []float64) float64 {
	ss, df, _ := judge.SegmentVariance(xs)
	return 100 * math.Sqrt(ss/float64(df))
}

func TestBetweenRunNoise(t *testing.T) {
	// 12 runs an hour apart: the first 6 at 100 ms, the last 6 at 130 ms (a change point at
	// run 7), each with a deterministic spread.
	spread := []float64{1, 1.02, 0.99, 1.01, 0.98, 1.03}
	flat := func(n int, level float64, from int) []float64 {
		out := make([]float64, n)
		for i := range out {
			out[i] = level * spread[(i+from)%len(spread)]
		}
		return out
	}
	build := func(name string, p95s []float64) *perfexpv1alpha1.PerfHistory {
		h := &perfexpv1alpha1.PerfHistory{}
		h.Name = name
		for i, v := range p95s {
			h.Status.Records = append(h.Status.Records, record(i, v))
		}
		return h
	}
	stepped := append(flat(6, 100, 0), flat(6, 130, 0)...)
	now := t0.Add(12 * time.Hour)
	tests := []struct {
		name string
		hs   []*perfexpv1alpha1.PerfHistory
		now  time.Time
		set  judge.HistoryNoiseSettings
		// want is the p95 sd in percent (0: no estimate) and the runs it came from.
		want float64
		runs int
	}{
		{name: "the latest segment only, not the spread across the change", hs: []*perfexpv1alpha1.PerfHistory{build("h", stepped)}, now: now,
			want: sdOf(flat(6, 130, 0)), runs: 6},
		{name: "too few runs in the latest segment", hs: []*perfexpv1alpha1.PerfHistory{build("h", stepped)}, now: now,
			set: judge.HistoryNoiseSettings{MinRuns: 7}},
		{name: "runs older than the maximum age are left out", hs: []*perfexpv1alpha1.PerfHistory{build("h", stepped)}, now: now,
			set: judge.HistoryNoiseSettings{MaxAge: 3 * time.Hour, MinRuns: 3}, want: sdOf(stepped[9:]), runs: 3},
		{name: "all too old", hs: []*perfexpv1alpha1.PerfHistory{build("h", stepped)}, now: now.Add(40 * 24 * time.Hour)},
		{name: "two histories pool their segments", now: now,
			hs:   []*perfexpv1alpha1.PerfHistory{build("base", flat(6, 100, 0)), build("variant", flat(5, 200, 2))},
			want: pooled(flat(6, 100, 0), flat(5, 200, 2)), runs: 10},
		{name: "no history", now: now},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := BetweenRunNoise(tc.hs, tc.now, tc.set)
			b, ok := got.For("checkout/p95")
			if tc.want == 0 {
				if ok {
					t.Fatalf("estimate %+v, want none", b)
				}
				return
			}
			if !ok || math.Abs(b.SDPercent-tc.want) > 1e-9 || b.Runs != tc.runs {
				t.Fatalf("estimate %+v (ok %v), want sd %.4f %% from %d runs", b, ok, tc.want, tc.runs)
			}
			if _, ok := got.For("checkout/errorPercent"); ok {
				t.Error("an error rate (points, not a ratio) has an estimate")
			}
			if _, ok := got.For("checkout/avg"); !ok {
				t.Error("avg has no estimate")
			}
		})
	}
}

// pooled is the pooled sd (percent) of the logs of several segments.
func pooled(segs ...[]float64) float64 {
	var ss float64
	var df int
	for _, s := range segs {
		a, b, _ := judge.SegmentVariance(s)
		ss, df = ss+a, df+b
	}
	return 100 * math.Sqrt(ss/float64(df))
}

// The keys the comparison looks its rows up by are the history's own series keys.
func TestNoiseKeysMatchSeries(t *testing.T) {
	rec := record(0, 100)
	rec.Scenarios[0].Requests = []perfexpv1alpha1.HistoryRequest{{Name: "GET /items", HistoryStats: rec.Scenarios[0].HistoryStats}}
	rec.Services = []perfexpv1alpha1.HistoryService{{Name: "Deployment/shop/api", CPU: "0.5", Memory: "1000"}}
	keys := map[string]bool{}
	for _, s := range SeriesOf([]perfexpv1alpha1.HistoryRecord{rec}) {
		keys[s.Key] = true
	}
	for _, k := range []string{
		judge.NoiseKey("checkout", "", perfexpv1alpha1.MetricP95),
		judge.NoiseKey("checkout", "", perfexpv1alpha1.MetricAvg),
		judge.NoiseKey("checkout", "", perfexpv1alpha1.MetricRate),
		judge.NoiseKey("checkout", "GET /items", perfexpv1alpha1.MetricP95),
		judge.WorkloadNoiseKey("Deployment/shop/api", "CPU"),
		judge.WorkloadNoiseKey("Deployment/shop/api", "Memory"),
	} {
		if !keys[k] {
			t.Errorf("key %q is not a series of the history (%v)", k, keys)
		}
	}
}
