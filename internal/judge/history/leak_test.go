package history

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/perfexp/perfexp/internal/judge/stats"
	"github.com/perfexp/perfexp/internal/result"
)

// memSim simulates one pod's working set as cAdvisor reports it every 15 s: a floor the heap
// returns to after each collection, a sawtooth of allocations between collections (period
// jittered around gcPeriod, rising by gcRise), and noise on the floor that is autocorrelated
// (AR(1), phi 0.8) as real post-GC heaps are.
type memSim struct {
	floor    func(h float64) float64 // bytes at hour h of the pod's life
	gcPeriod time.Duration
	gcRise   float64
	noise    float64 // standard deviation of the floor's noise, bytes
}

func (m memSim) series(r *rand.Rand, start time.Time, from, to time.Duration) map[int64]float64 {
	out := map[int64]float64{}
	var ar float64
	nextGC, lastGC := from, from
	for x := from; x <= to; x += 15 * time.Second {
		for x >= nextGC {
			lastGC = nextGC
			nextGC += time.Duration(float64(m.gcPeriod) * (0.7 + 0.6*r.Float64()))
		}
		ar = 0.8*ar + m.noise*math.Sqrt(1-0.64)*r.NormFloat64()
		phase := float64(x-lastGC) / float64(nextGC-lastGC)
		v := m.floor((x - from).Hours()) + ar + phase*m.gcRise
		out[start.Add(x).UnixMilli()] = v
	}
	return out
}

// Each case is simulated many times with known truth; the verdict must be right in at least
// minRight of the trials, and where a growth rate is known the estimate must be within 20 %
// of it in at least 95 % of the Suspected trials (with a median error under 10 %).
func TestLeakVerdictBySimulation(t *testing.T) {
	start := time.Unix(1_700_000_000, 0)
	flat := func(float64) float64 { return 200 * mib }
	tests := []struct {
		name     string
		window   time.Duration
		pods     func(r *rand.Rand) map[string]map[int64]float64
		want     string
		minRight float64
		rate     float64 // true growth of the floor, bytes per hour; 0 when none
	}{
		{
			// 88 %, not 95 %: the trend test allows for a floor that wanders (its AR(1) is
			// estimated from the block minima and taken half a standard error up, and read
			// against Student's t), which costs a 45-minute soak some power (TestLeakSimulation).
			name: "a 15 MiB/h leak under a garbage-collection sawtooth, 45-minute soak", window: 45 * time.Minute, want: result.LeakSuspected, minRight: 0.88, rate: 15 * mib,
			pods: func(r *rand.Rand) map[string]map[int64]float64 {
				m := memSim{floor: func(h float64) float64 { return 60*mib + 15*mib*h }, gcPeriod: 40 * time.Second, gcRise: 10 * mib, noise: 0.5 * mib}
				return map[string]map[int64]float64{"a": m.series(r, start, 0, 45*time.Minute)}
			},
		},
		{
			name: "a 15 MiB/h leak under a large, slow sawtooth, 2-hour soak", window: 2 * time.Hour, want: result.LeakSuspected, minRight: 0.95, rate: 15 * mib,
			pods: func(r *rand.Rand) map[string]map[int64]float64 {
				m := memSim{floor: func(h float64) float64 { return 200*mib + 15*mib*h }, gcPeriod: 90 * time.Second, gcRise: 60 * mib, noise: 1 * mib}
				return map[string]map[int64]float64{"a": m.series(r, start, 0, 2*time.Hour)}
			},
		},
		{
			name: "a 15 MiB/h leak split over two pods", window: 2 * time.Hour, want: result.LeakSuspected, minRight: 0.95, rate: 15 * mib,
			pods: func(r *rand.Rand) map[string]map[int64]float64 {
				m := memSim{floor: func(h float64) float64 { return 300*mib + 7.5*mib*h }, gcPeriod: 2 * time.Minute, gcRise: 20 * mib, noise: 1 * mib}
				return map[string]map[int64]float64{"a": m.series(r, start, 0, 2*time.Hour), "b": m.series(r, start, 0, 2*time.Hour)}
			},
		},
		{
			name: "growth that levels off (a cache warming for 20 minutes) in a 2-hour soak", window: 2 * time.Hour, want: result.LeakNone, minRight: 0.95,
			pods: func(r *rand.Rand) map[string]map[int64]float64 {
				m := memSim{floor: func(h float64) float64 { return 200*mib + 60*mib*(1-math.Exp(-h*6)) }, gcPeriod: 90 * time.Second, gcRise: 60 * mib, noise: 1 * mib}
				return map[string]map[int64]float64{"a": m.series(r, start, 0, 2*time.Hour)}
			},
		},
		{
			name: "a 14-hour soak whose caches fill for two hours", window: 14 * time.Hour, want: result.LeakNone, minRight: 0.95,
			pods: func(r *rand.Rand) map[string]map[int64]float64 {
				m := memSim{floor: func(h float64) float64 { return 400*mib + 200*mib*(1-math.Exp(-h/0.7)) }, gcPeriod: 5 * time.Minute, gcRise: 100 * mib, noise: 3 * mib}
				return map[string]map[int64]float64{"a": m.series(r, start, 0, 14*time.Hour)}
			},
		},
		{
			name: "scale-out: a second pod starts halfway and warms up", window: time.Hour, want: result.LeakNone, minRight: 0.95,
			pods: func(r *rand.Rand) map[string]map[int64]float64 {
				m := memSim{floor: flat, gcPeriod: 90 * time.Second, gcRise: 60 * mib, noise: 2 * mib}
				late := memSim{floor: func(h float64) float64 { return 120*mib + 80*mib*(1-math.Exp(-h*20)) }, gcPeriod: 90 * time.Second, gcRise: 60 * mib, noise: 2 * mib}
				return map[string]map[int64]float64{"a": m.series(r, start, 0, time.Hour), "b": late.series(r, start, 30*time.Minute, time.Hour)}
			},
		},
		{
			name: "flat and noisy", window: time.Hour, want: result.LeakNone, minRight: 0.95,
			pods: func(r *rand.Rand) map[string]map[int64]float64 {
				m := memSim{floor: flat, gcPeriod: 90 * time.Second, gcRise: 60 * mib, noise: 4 * mib}
				return map[string]map[int64]float64{"a": m.series(r, start, 0, time.Hour)}
			},
		},
		{
			name: "flat with collections slower than the blocks", window: time.Hour, want: result.LeakNone, minRight: 0.95,
			pods: func(r *rand.Rand) map[string]map[int64]float64 {
				m := memSim{floor: flat, gcPeriod: 6 * time.Minute, gcRise: 200 * mib, noise: 2 * mib}
				return map[string]map[int64]float64{"a": m.series(r, start, 0, time.Hour)}
			},
		},
		{
			name: "growth too small to matter: 0.5 % of the floor per hour", window: 2 * time.Hour, want: result.LeakNone, minRight: 0.95,
			pods: func(r *rand.Rand) map[string]map[int64]float64 {
				m := memSim{floor: func(h float64) float64 { return 1000*mib + 5*mib*h }, gcPeriod: 90 * time.Second, gcRise: 60 * mib, noise: 0.2 * mib}
				return map[string]map[int64]float64{"a": m.series(r, start, 0, 2*time.Hour)}
			},
		},
		{
			name: "a 20-minute window is too short", window: 20 * time.Minute, want: result.LeakWindowTooShort, minRight: 1,
			pods: func(r *rand.Rand) map[string]map[int64]float64 {
				m := memSim{floor: func(h float64) float64 { return 200*mib + 600*mib*h }, gcPeriod: 90 * time.Second, gcRise: 60 * mib, noise: 1 * mib}
				return map[string]map[int64]float64{"a": m.series(r, start, 0, 20*time.Minute)}
			},
		},
	}
	const trials = 200
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			right, off := 0, 0
			var errs []float64
			for i := range trials {
				r := rand.New(rand.NewPCG(uint64(i), 11))
				growth, _, v := Leak(tc.pods(r), start, start.Add(tc.window))
				if v == tc.want {
					right++
				}
				if tc.rate > 0 && v == result.LeakSuspected {
					e := math.Abs(*growth-tc.rate) / tc.rate
					errs = append(errs, e)
					if e > 0.2 {
						off++
					}
				}
			}
			if share := float64(right) / trials; share < tc.minRight {
				t.Errorf("%s in %.1f%% of %d trials, want at least %.0f%%", tc.want, 100*share, trials, 100*tc.minRight)
			}
			if tc.rate > 0 && (off > trials/20 || stats.Median(errs) > 0.1) {
				t.Errorf("growth off by more than 20%% of the true %.1f MiB/h in %d trials (median error %.1f%%), want at most 5%% of trials and a median under 10%%",
					tc.rate/mib, off, 100*stats.Median(errs))
			}
			if tc.rate > 0 {
				t.Logf("%s in %d of %d trials; growth off by more than 20%% in %d, median error %.1f%%", tc.want, right, trials, off, 100*stats.Median(errs))
			} else {
				t.Logf("%s in %d of %d trials", tc.want, right, trials)
			}
		})
	}
}

// A clean line gives its exact slope, and the trend test is sure of it.
func TestTheilSenAndMannKendall(t *testing.T) {
	xs := []float64{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}
	line := make([]float64, len(xs))
	for i, x := range xs {
		line[i] = 3*x + 1
	}
	outlier := append([]float64(nil), line...)
	outlier[4] = 1000
	tests := []struct {
		name       string
		ys         []float64
		slope      float64
		zMin, zMax float64
	}{
		{"a line", line, 3, 3, math.Inf(1)},
		{"a line with one wild point keeps its slope", outlier, 3, 2, math.Inf(1)},
		{"flat", []float64{5, 5, 5, 5, 5, 5, 5, 5, 5, 5}, 0, 0, 0},
		{"falling", []float64{9, 8, 7, 6, 5, 4, 3, 2, 1, 0}, -1, math.Inf(-1), -3},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := theilSen(xs, tc.ys)
			z := mannKendallZ(xs, tc.ys, s)
			if math.Abs(s-tc.slope) > 1e-9 || z < tc.zMin || z > tc.zMax {
				t.Errorf("slope %g (want %g), z %g (want %g..%g)", s, tc.slope, z, tc.zMin, tc.zMax)
			}
		})
	}
}
