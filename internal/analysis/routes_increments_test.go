package analysis

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/prometheus/common/model"

	"github.com/perfexp/perfexp/internal/result"
)

// The route fold's increments straight from the answer's buckets equal those of the k6 path
// (histogramIncrements: a histogram per boundary, a copy per interval) on random cumulative
// series with gaps (a boundary without a sample) and resets (a restarted pod), summed over
// several pods.
func TestNativeIncrementsMatchTheHistogramPath(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	start := time.Unix(1_700_000_000, 0)
	g := intervalGrid{start: start, step: 30 * time.Second, steps: 21}
	n := g.steps - 1
	bounds := [][2]float64{{0.001, 0.002}, {0.002, 0.004}, {0.004, 0.008}, {0.008, 0.016}}
	for trial := range 200 {
		var streams []*model.SampleStream
		for range 1 + rng.IntN(4) {
			ss := &model.SampleStream{}
			counts := make([]float64, len(bounds))
			sum := 0.0
			for i := range g.steps {
				if rng.IntN(10) == 0 { // a reset: the pod started again
					counts, sum = make([]float64, len(bounds)), 0
				}
				for j := range counts {
					add := float64(rng.IntN(5))
					counts[j] += add
					sum += add * bounds[j][1]
				}
				if rng.IntN(6) == 0 { // no sample at this boundary
					continue
				}
				h := &model.SampleHistogram{Sum: model.FloatString(sum)}
				for j, c := range counts {
					h.Count += model.FloatString(c)
					if c > 0 {
						h.Buckets = append(h.Buckets, &model.HistogramBucket{Boundaries: 0, Lower: model.FloatString(bounds[j][0]), Upper: model.FloatString(bounds[j][1]), Count: model.FloatString(c)})
					}
				}
				ss.Histograms = append(ss.Histograms, model.SampleHistogramPair{Timestamp: model.TimeFromUnixNano(start.Add(time.Duration(i) * g.step).UnixNano()), Histogram: h})
			}
			streams = append(streams, ss)
		}
		var got []*result.Histogram
		want := make([]*result.Histogram, n)
		for _, ss := range streams {
			got = addNativeIncrements(got, ss, g, n)
			for i, h := range histogramIncrements(ss, g) {
				if h != nil {
					if want[i] == nil {
						want[i] = result.NewHistogram()
					}
					want[i].Add(h)
				}
			}
		}
		a := newIntervalSeries(result.IntervalKey{}, n, nil, got)
		b := newIntervalSeries(result.IntervalKey{}, n, nil, want)
		if len(a.Bounds) != len(b.Bounds) || len(a.Counts) != len(b.Counts) {
			t.Fatalf("trial %d: bounds %v and %v", trial, a.Bounds, b.Bounds)
		}
		for i := range b.Counts {
			if (got[i] == nil) != (want[i] == nil) || (got[i] != nil && (got[i].Count != want[i].Count || !nearly(got[i].Sum, want[i].Sum))) {
				t.Fatalf("trial %d interval %d: %+v, want %+v", trial, i, got[i], want[i])
			}
			for j := range b.Counts[i] {
				if a.Counts[i][j] != b.Counts[i][j] {
					t.Fatalf("trial %d interval %d bucket %v: %v, want %v", trial, i, b.Bounds[j], a.Counts[i][j], b.Counts[i][j])
				}
			}
		}
	}
}

func nearly(a, b float64) bool { return a-b < 1e-9 && b-a < 1e-9 }

// BenchmarkRouteFold folds one route query's answer as BenchmarkAnalyze's big run gets it, with
// no Prometheus: 50 workloads of two pods, four routes each, native histograms of 38 buckets at
// 21 boundaries. Prometheus' own time for the query is not in it.
func BenchmarkRouteFold(b *testing.B) {
	start := time.Unix(1_700_000_000, 0)
	g := intervalGrid{start: start, step: 3 * time.Minute, steps: 21}
	grp := &routeGroup{ns: "bench"}
	var m model.Matrix
	for w := range 50 {
		grp.sources = append(grp.sources, RouteSource{Kind: "Deployment", Namespace: "bench", Name: fmt.Sprintf("svc-%02d", w)})
		for p := range 2 {
			for r := range 4 {
				ss := &model.SampleStream{Metric: model.Metric{"pod": model.LabelValue(fmt.Sprintf("svc-%02d-7d9f8c6b5-pod%02d", w, p)),
					"route": model.LabelValue(fmt.Sprintf("route-%d", r)), "code": "200"}}
				for i := range g.steps {
					h := &model.SampleHistogram{Count: model.FloatString(38 * (i + 1)), Sum: model.FloatString(i)}
					for j := range 38 {
						lo := 0.002 * math.Pow(2, float64(j)/8)
						h.Buckets = append(h.Buckets, &model.HistogramBucket{Lower: model.FloatString(lo), Upper: model.FloatString(lo * math.Pow(2, 1.0/8)), Count: model.FloatString(i + 1)})
					}
					ss.Histograms = append(ss.Histograms, model.SampleHistogramPair{Timestamp: model.TimeFromUnixNano(start.Add(time.Duration(i) * g.step).UnixNano()), Histogram: h})
				}
				m = append(m, ss)
			}
		}
	}
	for b.Loop() {
		d := &routeData{}
		d.fold(grp, m, g)
		if len(d.results) != 200 {
			b.Fatalf("%d routes", len(d.results))
		}
	}
}
