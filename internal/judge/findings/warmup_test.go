package findings

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/perfexp/perfexp/internal/result"
)

// simulatedIntervals are n intervals of perInterval latencies each, log-normal around 40 ms
// with log-sd sigma, the first interval's scaled by first, in native-histogram buckets of
// schema 3 (eight per doubling), as the analysis stores them.
func simulatedIntervals(rng *rand.Rand, n, perInterval int, sigma, first float64) *result.IntervalData {
	const lowK, highK = -120, 40
	s := result.IntervalSeries{Scenario: result.AllScenarios}
	for k := lowK; k < highK; k++ {
		s.Bounds = append(s.Bounds, [2]float64{math.Pow(2, float64(k-1)/8), math.Pow(2, float64(k)/8)})
	}
	for i := range n {
		counts := make([]float64, highK-lowK)
		for range perInterval {
			v := 0.040 * math.Exp(sigma*rng.NormFloat64())
			if i == 0 {
				v *= first
			}
			k := int(math.Ceil(math.Log2(v) * 8))
			counts[min(max(k, lowK), highK-1)-lowK]++
		}
		s.Requests = append(s.Requests, float64(perInterval))
		s.Failed = append(s.Failed, 0)
		s.Counts = append(s.Counts, counts)
		s.Sums = append(s.Sums, 0)
	}
	return &result.IntervalData{StepSeconds: 15, Series: []result.IntervalSeries{s}}
}

// The cold-start finding is a rule on figures without an interval, so its error rates are
// simulated with known truth: 20 intervals of steady latency (no cold start) must raise it in
// under 1 % of runs, at the fewest requests it accepts and with a heavy tail; a first interval
// twice as slow as the rest must raise it in at least 95 % of runs of 100 requests an interval
// or more (70 % at the fewest, 20).
func TestColdStartRuleBySimulation(t *testing.T) {
	rng := rand.New(rand.NewPCG(32, 3))
	const trials = 2000
	for _, tc := range []struct {
		perInterval  int
		sigma, first float64
		atMost       float64 // the share of runs that may raise it; -1: at least atLeast
		atLeast      float64
	}{
		{ColdStartMinRequests, 0.5, 1, 0.01, 0},
		{ColdStartMinRequests, 1.0, 1, 0.01, 0},
		{500, 0.5, 1, 0.01, 0},
		{500, 1.0, 1, 0.01, 0},
		// 20 requests' p95 is noisy: a true doubling is seen in most runs, not all.
		{ColdStartMinRequests, 0.5, 2, -1, 0.7},
		{100, 0.5, 2, -1, 0.95},
		{500, 1.0, 2, -1, 0.95},
	} {
		t.Run(fmt.Sprintf("%d requests, sigma %.1f, first interval x%g", tc.perInterval, tc.sigma, tc.first), func(t *testing.T) {
			raised := 0
			for range trials {
				r := &result.Result{Intervals: simulatedIntervals(rng, 20, tc.perInterval, tc.sigma, tc.first)}
				if len(coldStart(r)) > 0 {
					raised++
				}
			}
			share := float64(raised) / trials
			t.Logf("raised in %.2f %% of %d runs", 100*share, trials)
			if tc.atMost >= 0 && share > tc.atMost {
				t.Errorf("a steady window raised a cold start in %.2f %% of runs, at most %.0f %% allowed", 100*share, 100*tc.atMost)
			}
			if tc.atMost < 0 && share < tc.atLeast {
				t.Errorf("a first interval %gx slower raised it in %.2f %% of runs only, at least %.0f %% wanted", tc.first, 100*share, 100*tc.atLeast)
			}
		})
	}
}

func TestWarmUpFindings(t *testing.T) {
	run := func(warm, measured float64) string {
		r := &result.Result{WarmUp: &result.RequestStats{P95: f(warm)}, Total: result.RequestStats{P95: f(measured)}}
		fs := warmUp(r)
		if len(fs) != 1 || fs[0].Kind != result.FindingWarmUp || fs[0].Row != "Summary" {
			t.Fatalf("findings %+v", fs)
		}
		return fs[0].Text
	}
	for _, tc := range []struct {
		warm, measured float64
		want           string
	}{
		{400, 40, "The warm-up's p95 was 400.0 ms, 10.0× the measured window's 40.0 ms: the warm-up absorbed a cold start"},
		{50, 40, "The warm-up's p95 (50.0 ms) was within 1.5× of the measured window's (40.0 ms): no cold start showed in it"},
		{20, 40, "The warm-up's p95 was 20.0 ms, 2.0× faster than the measured window's 40.0 ms"},
	} {
		if got := run(tc.warm, tc.measured); !strings.HasPrefix(got, tc.want) {
			t.Errorf("warm-up %g against %g: %q, want %q...", tc.warm, tc.measured, got, tc.want)
		}
	}
	if fs := warmUp(&result.Result{Total: result.RequestStats{P95: f(40)}}); len(fs) != 0 {
		t.Errorf("findings without a warm-up %+v", fs)
	}
}

// A workload whose first-interval CPU stands far above its second half's is named, with the
// figures; a steady one, and one that only doubles a few millicores, are not.
func TestColdStartCPU(t *testing.T) {
	flat := func(first, rest float64) []float64 {
		v := []float64{first}
		for range 19 {
			v = append(v, rest)
		}
		return v
	}
	r := &result.Result{WarmUp: &result.RequestStats{}, Intervals: &result.IntervalData{StepSeconds: 30, Workloads: []result.WorkloadIntervals{
		{Kind: "Deployment", Namespace: "shop", Name: "api", CPU: flat(0.9, 0.3)},
		{Kind: "Deployment", Namespace: "shop", Name: "steady", CPU: flat(0.31, 0.3)},
		{Kind: "Deployment", Namespace: "shop", Name: "idle", CPU: flat(0.004, 0.002)},
	}}}
	fs := coldStart(r)
	want := "CPU in the measured window's first 30s stood far above its second half's mean: shop/api 0.90 cores against 0.30 (3.0×), a cold start (JIT, caches, pools) still under way; a longer warm-up (spec.load.warmUp.duration) keeps it out of the results."
	if len(fs) != 1 || fs[0].Text != want || fs[0].Row != "Services: CPU" {
		t.Errorf("findings %+v, want %q", fs, want)
	}
}
