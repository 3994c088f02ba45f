package judge

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/perfexp/perfexp/internal/result"
)

// oracle answers a bisect's steps from a known truth: the culprits' slowdowns, and optionally
// an interaction (a set of services that slows the system only when all are applied).
type oracle struct {
	culprits    map[string]bool
	interaction []string
}

func (o oracle) outcome(set []string) BisectOutcome {
	for _, s := range set {
		if o.culprits[s] {
			return BisectReproduces
		}
	}
	if len(o.interaction) > 0 && !slices.ContainsFunc(o.interaction, func(s string) bool { return !slices.Contains(set, s) }) {
		return BisectReproduces
	}
	return BisectClean
}

// runBisect plays a bisect to its end against an answer function and returns its answer and
// steps.
func runBisect(services []string, answer func([]string) BisectOutcome) (BisectAnswer, []BisectStep) {
	var steps []BisectStep
	for range 200 {
		a := BisectNext(services, steps)
		if a.Done {
			return a, steps
		}
		steps = append(steps, BisectStep{Set: a.Next, Outcome: answer(a.Next)})
	}
	panic("the bisect did not end")
}

func services(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("svc-%02d", i)
	}
	return out
}

func TestBisectNext(t *testing.T) {
	eight := services(8)
	tests := []struct {
		name        string
		o           oracle
		want        []string
		interaction bool
		maxSteps    int
		why         string
	}{
		{"one culprit", oracle{culprits: map[string]bool{"svc-05": true}}, []string{"svc-05"}, false, 7, "alone reproduces"},
		{"two culprits in different halves", oracle{culprits: map[string]bool{"svc-01": true, "svc-06": true}}, []string{"svc-01", "svc-06"}, false, 13, "each reproduce"},
		{"two culprits in one half", oracle{culprits: map[string]bool{"svc-00": true, "svc-01": true}}, []string{"svc-00", "svc-01"}, false, 11, "each reproduce"},
		{"an interaction across the halves", oracle{interaction: []string{"svc-02", "svc-05"}}, []string{"svc-02", "svc-05"}, true, 15, "together"},
		{"no regression at all", oracle{}, nil, false, 1, "nothing to bisect"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a, steps := runBisect(eight, tc.o.outcome)
			if !slices.Equal(a.Culprits, tc.want) || a.Interaction != tc.interaction {
				t.Fatalf("culprits %v interaction %v, want %v %v (%s)", a.Culprits, a.Interaction, tc.want, tc.interaction, a.Why)
			}
			if len(steps) > tc.maxSteps {
				t.Errorf("%d steps, want at most %d", len(steps), tc.maxSteps)
			}
			if !strings.Contains(a.Why, tc.why) {
				t.Errorf("why %q, want %q", a.Why, tc.why)
			}
		})
	}
}

func TestBisectStopsAtAnUndecidedStep(t *testing.T) {
	o := oracle{culprits: map[string]bool{"svc-05": true}}
	a, _ := runBisect(services(8), func(set []string) BisectOutcome {
		if len(set) == 2 {
			return BisectUndecided
		}
		return o.outcome(set)
	})
	if len(a.Culprits) != 0 || !strings.Contains(a.Why, "no comparison to go by") {
		t.Fatalf("answer %+v, want no culprit named and the undecided step said", a)
	}
}

func TestBisectReplaysTheSameStep(t *testing.T) {
	// The next step depends only on the steps so far, in whatever order they are listed.
	o := oracle{culprits: map[string]bool{"svc-03": true}}
	_, steps := runBisect(services(8), o.outcome)
	shuffled := slices.Clone(steps[:4])
	slices.Reverse(shuffled)
	if a, b := BisectNext(services(8), steps[:4]), BisectNext(services(8), shuffled); !slices.Equal(a.Next, b.Next) {
		t.Fatalf("next %v, and %v with the steps reversed", a.Next, b.Next)
	}
}

// bisectStep runs one simulated step: blocks of a baseline run and a run with the step's images
// (the true ratio), in a random order within each block, looked at after 3 blocks and after
// each one more up to 10, each look at its share of the error rate, until BisectOutcomeOf
// decides. It returns the outcome and the blocks run.
func bisectStep(c simCell, rng *rand.Rand, id string, ratio float64) (BisectOutcome, int) {
	const first, budget = 3, 10
	s := c.sim()
	var base, cur []*result.Result
	blocks := map[string]int{}
	for b := 0; b < budget; b++ {
		block := c.blockSD * rng.NormFloat64()
		for _, a := range rng.Perm(2) {
			r := s.run(rng, fmt.Sprintf("%s-a%d-r%d", id, a, b), math.Pow(ratio, float64(a))*math.Exp(c.level(rng)+block))
			blocks[r.Experiment] = b
			if a == 0 {
				base = append(base, r)
			} else {
				cur = append(cur, r)
			}
		}
		if b+1 < first {
			continue
		}
		look := Look{K: b + 2 - first, Max: budget - first + 1}
		cmp := CompareRuns(base, cur, CompareOptions{Design: &Design{Blocks: blocks, Arms: [][]*result.Result{base, cur}}, Alpha: look.Alpha()})
		if o := BisectOutcomeOf(cmp, b+1 == budget); o != BisectPending {
			return o, b + 1
		}
	}
	return BisectUndecided, budget
}

// TestBisectSimulation is the evidence docs/bisect.md quotes: 30 changed services with 1 or 2
// culprits of +10-20 % each, every step a sequential comparison of the step's runs with
// baseline runs (CompareRuns, paired in blocks, 3 to 10 repeats, each look spending its share
// of the error rate, bisectStep), between-run sd 3 %. The culprits must be named exactly in at least 90 %
// of searches. A step here stops as soon as BisectOutcomeOf decides (bisectStep).
// PERFEXP_BISECT_N sets the searches per row (default 20; the figures in the docs
// are from 200).
func TestBisectSimulation(t *testing.T) {
	if testing.Short() {
		t.Skip("simulates thousands of runs")
	}
	n := 20
	if v := os.Getenv("PERFEXP_BISECT_N"); v != "" {
		if _, err := fmt.Sscan(v, &n); err != nil {
			t.Fatal(err)
		}
	}
	cell := simCell{name: "sd 3 %", sd: 0.03, phi: 0.6}
	svcs := services(30)
	var b strings.Builder
	fmt.Fprintf(&b, "| culprits | named exactly | steps, mean | steps, max | runs, mean | one service at a time |\n| --- | --- | --- | --- | --- | --- |\n")
	for _, k := range []int{1, 2} {
		rng := rand.New(rand.NewPCG(uint64(k), 2026))
		exact, steps, maxSteps, runs := 0, 0, 0, 0
		for i := range n {
			effect := map[string]float64{}
			for _, j := range rng.Perm(len(svcs))[:k] {
				effect[svcs[j]] = math.Log(1.10 + 0.10*rng.Float64())
			}
			var want []string
			for s := range effect {
				want = append(want, s)
			}
			slices.Sort(want)
			step := 0
			a, st := runBisect(svcs, func(set []string) BisectOutcome {
				ratio := 0.0
				for _, s := range set {
					ratio += effect[s]
				}
				o, blocks := bisectStep(cell, rng, fmt.Sprintf("b%d-%d", i, step), math.Exp(ratio))
				step++
				runs += 2 * blocks
				return o
			})
			if slices.Equal(a.Culprits, want) && !a.Interaction {
				exact++
			}
			steps += len(st)
			maxSteps = max(maxSteps, len(st))
		}
		fmt.Fprintf(&b, "| %d | %.1f %% | %.1f | %d | %.1f | %d steps |\n", k, 100*float64(exact)/float64(n), float64(steps)/float64(n), maxSteps, float64(runs)/float64(n), len(svcs))
		if float64(exact) < 0.9*float64(n) {
			t.Errorf("%d culprit(s): named exactly in %d of %d searches, want at least 90 %%", k, exact, n)
		}
	}
	t.Logf("%d searches per row, 30 changed services, culprits +10-20 %% each, between-run sd 3 %%, sequential steps of 3-10 repeats:\n%s", n, b.String())
}
