package testexp

import (
	"math"
	"math/rand/v2"
	"sort"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/result"
)

// RunResult builds the results.json of a finished run of one scenario, "s", whose latencies
// are log-normal around medianMS (sd 0.3 on the log scale) in 40 intervals of 15 s with 200
// requests each, drawn from seed: the per-interval data a single-run comparison needs. The
// same seed with another median gives the same run shifted, so two runs differ by exactly the
// ratio of their medians plus nothing else.
func RunResult(name string, medianMS float64, seed uint64) *result.Result {
	const intervals, perInterval, step = 40, 200, 15
	rng := rand.New(rand.NewPCG(seed, 1))
	// Buckets 2 % wide from 1 ms, as the comparison reads k6's native histograms.
	bucket := func(sec float64) int { return int(math.Floor(math.Log(sec/0.001) / math.Log(1.02))) }
	bounds := func(i int) [2]float64 {
		return [2]float64{0.001 * math.Pow(1.02, float64(i)), 0.001 * math.Pow(1.02, float64(i+1))}
	}
	counts := make([]map[int]float64, intervals)
	sums := make([]float64, intervals)
	all := make([]float64, 0, intervals*perInterval)
	used := map[int]bool{}
	for i := range counts {
		counts[i] = map[int]float64{}
		for range perInterval {
			sec := medianMS / 1000 * math.Exp(0.3*rng.NormFloat64())
			counts[i][bucket(sec)]++
			used[bucket(sec)] = true
			sums[i] += sec
			all = append(all, sec)
		}
	}
	idx := make([]int, 0, len(used))
	for b := range used {
		idx = append(idx, b)
	}
	sort.Ints(idx)
	s := result.IntervalSeries{Scenario: "s", Requests: make([]float64, intervals), Failed: make([]float64, intervals), Sums: sums}
	for _, b := range idx {
		s.Bounds = append(s.Bounds, bounds(b))
	}
	for i := range counts {
		row := make([]float64, len(idx))
		for j, b := range idx {
			row[j] = counts[i][b]
		}
		s.Counts, s.Requests[i] = append(s.Counts, row), perInterval
	}
	sort.Float64s(all)
	quantile := func(q float64) *float64 { return result.Num(1000 * all[int(q*float64(len(all)-1))]) }
	total := 0.0
	for _, v := range all {
		total += v
	}
	stats := result.RequestStats{Requests: result.Count(int64(len(all))), Errors: result.Count(0), ErrorPercent: result.Num(0),
		Rate: result.Num(float64(len(all)) / (intervals * step)), Avg: result.Num(1000 * total / float64(len(all))),
		P50: quantile(0.5), P90: quantile(0.9), P95: quantile(0.95), P99: quantile(0.99)}
	return &result.Result{Experiment: name, TestID: name, Validity: perfexpv1alpha1.Valid, Total: stats,
		Scenarios: []result.ScenarioResult{{Name: "s", Validity: perfexpv1alpha1.Valid, RequestStats: stats}},
		LoadShape: []result.ScenarioShape{{Name: "s", Executor: "constant-vus", VUs: 1, Duration: "1m0s", Parallelism: 1}},
		Intervals: &result.IntervalData{StepSeconds: step, Series: []result.IntervalSeries{s}}}
}
