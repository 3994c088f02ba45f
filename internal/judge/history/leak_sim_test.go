package history

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/perfexp/perfexp/internal/result"
)

// wanderSim is one pod's working set with a floor that wanders slowly: on top of memSim's
// sawtooth and fast noise, an AR(1) with a correlation time of tau (sampled every 15 s) and
// standard deviation sd moves the floor, as a heap whose live set drifts with the load does.
type wanderSim struct {
	memSim
	tau time.Duration
	sd  float64
}

func (w wanderSim) series(r *rand.Rand, start time.Time, from, to time.Duration) map[int64]float64 {
	phi := math.Exp(-float64(15*time.Second) / float64(w.tau))
	u := r.NormFloat64()
	base := w.floor
	var offsets []float64
	for x := from; x <= to; x += 15 * time.Second {
		offsets = append(offsets, w.sd*u)
		u = phi*u + math.Sqrt(1-phi*phi)*r.NormFloat64()
	}
	m := w.memSim
	m.floor = func(h float64) float64 {
		i := min(int(h*3600/15+0.5), len(offsets)-1)
		return base(h) + offsets[i]
	}
	return m.series(r, start, from, to)
}

// leakCase is one cell of the leak simulation.
type leakCase struct {
	name   string
	window time.Duration
	pods   int
	// floor of each pod at hour h.
	floor func(h float64) float64
	// wander: correlation time and sd of the slow AR(1) on the floor (none when tau is 0).
	tau time.Duration
	sd  float64
	// want is the right verdict.
	want string
	// minShift: the share of LevelShift the short form asks of a step is at least 90 % unless
	// this says less (a wandering floor hides some steps: they read None, never Suspected).
	minShift float64
	// minPower is the share of Suspected the short form asks of a leak (0: only measured).
	minPower float64
}

func (c leakCase) sample(r *rand.Rand, start time.Time) map[string]map[int64]float64 {
	out := map[string]map[int64]float64{}
	for p := range c.pods {
		m := memSim{floor: c.floor, gcPeriod: 90 * time.Second, gcRise: 60 * mib, noise: 1 * mib}
		name := fmt.Sprintf("pod-%d", p)
		if c.tau > 0 {
			out[name] = wanderSim{memSim: m, tau: c.tau, sd: c.sd}.series(r, start, 0, c.window)
		} else {
			out[name] = m.series(r, start, 0, c.window)
		}
	}
	return out
}

var leakCases = []leakCase{
	{name: "flat floor, 1 pod, 1 h", window: time.Hour, pods: 1, floor: func(float64) float64 { return 200 * mib }, want: result.LeakNone},
	{name: "floor wandering (AR(1), 10 min, sd 3 MiB), 1 pod, 1 h", window: time.Hour, pods: 1, tau: 10 * time.Minute, sd: 3 * mib,
		floor: func(float64) float64 { return 200 * mib }, want: result.LeakNone},
	{name: "floor wandering (AR(1), 20 min, sd 5 MiB), 1 pod, 2 h", window: 2 * time.Hour, pods: 1, tau: 20 * time.Minute, sd: 5 * mib,
		floor: func(float64) float64 { return 200 * mib }, want: result.LeakNone},
	{name: "floor wandering (AR(1), 10 min, sd 3 MiB), 8 pods, 1 h", window: time.Hour, pods: 8, tau: 10 * time.Minute, sd: 3 * mib,
		floor: func(float64) float64 { return 200 * mib }, want: result.LeakNone},
	{name: "one-off 30 MiB step at 70 % of a 1 h run (a cache filled once)", window: time.Hour, pods: 1,
		floor: func(h float64) float64 {
			if h >= 0.7 {
				return 230 * mib
			}
			return 200 * mib
		}, want: result.LeakLevelShift, minShift: 0.9},
	{name: "one-off 30 MiB step at 50 % of a 2 h run, wandering floor", window: 2 * time.Hour, pods: 1, tau: 10 * time.Minute, sd: 3 * mib,
		floor: func(h float64) float64 {
			if h >= 1 {
				return 230 * mib
			}
			return 200 * mib
		}, want: result.LeakLevelShift},
	{name: "a 15 MiB/h leak, 1 pod, 1 h", window: time.Hour, pods: 1, floor: func(h float64) float64 { return 200*mib + 15*mib*h }, want: result.LeakSuspected},
	{name: "a 30 MiB/h leak, 1 pod, 1 h", window: time.Hour, pods: 1, floor: func(h float64) float64 { return 200*mib + 30*mib*h }, want: result.LeakSuspected, minPower: 0.9},
	{name: "a 15 MiB/h leak, 1 pod, 2 h", window: 2 * time.Hour, pods: 1, floor: func(h float64) float64 { return 200*mib + 15*mib*h }, want: result.LeakSuspected, minPower: 0.9},
	{name: "a 15 MiB/h leak, wandering floor, 1 pod, 2 h", window: 2 * time.Hour, pods: 1, tau: 10 * time.Minute, sd: 3 * mib,
		floor: func(h float64) float64 { return 200*mib + 15*mib*h }, want: result.LeakSuspected},
	{name: "a 15 MiB/h leak in each of 8 pods, wandering floor, 1 h", window: time.Hour, pods: 8, tau: 10 * time.Minute, sd: 3 * mib,
		floor: func(h float64) float64 { return 200*mib + 15*mib*h }, want: result.LeakSuspected},
}

// TestLeakSimulation measures the leak verdict's false alarms and power by simulation with known
// truth. The short form runs 200 trials per case and checks that a flat or wandering floor is
// Suspected in at most 1 % of runs (plus two standard errors of the simulation; for 8 pods: of
// the workload, the correction across pods included), that a one-off step is not Suspected
// either and reads LevelShift in at least 90 % on a floor that does not wander, and that a real slope (30 MiB/h over 1 h, 15 MiB/h over
// 2 h, on a floor that does not wander) is Suspected in at least 90 %. PERFEXP_LEAK_TABLE=<file> writes the table of docs/analysis.md (make sim-table) with
// PERFEXP_LEAK_N trials per case (default 1000).
func TestLeakSimulation(t *testing.T) {
	if testing.Short() {
		t.Skip("simulation")
	}
	out := os.Getenv("PERFEXP_LEAK_TABLE")
	n := 200
	if out != "" {
		n = 1000
		if v, err := strconv.Atoi(os.Getenv("PERFEXP_LEAK_N")); err == nil && v > 0 {
			n = v
		}
	}
	start := time.Unix(1_700_000_000, 0)
	limit := 0.01 + 2*math.Sqrt(0.01*0.99/float64(n))
	var b strings.Builder
	fmt.Fprintf(&b, "| case | Suspected | LevelShift | None |\n|---|---:|---:|---:|\n")
	for ci, c := range leakCases {
		counts := map[string]int{}
		for i := range n {
			r := rand.New(rand.NewPCG(uint64(i), uint64(1000+ci)))
			_, _, v := Leak(c.sample(r, start), start, start.Add(c.window))
			counts[v]++
		}
		share := func(v string) float64 { return float64(counts[v]) / float64(n) }
		fmt.Fprintf(&b, "| %s | %.1f %% | %.1f %% | %.1f %% |\n", c.name, 100*share(result.LeakSuspected), 100*share(result.LeakLevelShift), 100*share(result.LeakNone))
		switch c.want {
		case result.LeakNone:
			if share(result.LeakSuspected) > limit {
				t.Errorf("%s: Suspected in %.1f %%, want <= %.1f %%", c.name, 100*share(result.LeakSuspected), 100*limit)
			}
		case result.LeakLevelShift:
			if share(result.LeakSuspected) > limit || share(result.LeakLevelShift) < c.minShift {
				t.Errorf("%s: Suspected %.1f %%, LevelShift %.1f %%; want <= %.1f %% and >= 90 %%", c.name,
					100*share(result.LeakSuspected), 100*share(result.LeakLevelShift), 100*limit)
			}
		case result.LeakSuspected:
			if share(result.LeakSuspected) < c.minPower {
				t.Errorf("%s: Suspected in %.1f %%, want >= %.0f %%", c.name, 100*share(result.LeakSuspected), 100*c.minPower)
			}
		}
	}
	t.Log("\n" + b.String())
	if out != "" {
		if err := os.WriteFile(out, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
