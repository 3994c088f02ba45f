package judge_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/perfexp/perfexp/internal/judge"
	"github.com/perfexp/perfexp/internal/judge/search"
	"github.com/perfexp/perfexp/internal/judge/stats"
	"github.com/perfexp/perfexp/internal/result"
)

// The bisect's simulation plays search's decisions over comparisons drawn from this package's
// simulated runs (export_test.go), so it lives beside that simulation rather than beside
// search's own tests: search imports judge, and a test of package judge cannot import search.

// runBisect plays a bisect to its end against an answer function and returns its answer and
// steps (as search's own tests do; those helpers are not importable from here).
func runBisect(services []string, answer func([]string) search.BisectOutcome) (search.BisectAnswer, []search.BisectStep) {
	var steps []search.BisectStep
	for range 200 {
		a := search.BisectNext(services, steps)
		if a.Done {
			return a, steps
		}
		steps = append(steps, search.BisectStep{Set: a.Next, Outcome: answer(a.Next)})
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

// bisectStep runs one simulated step: blocks of a baseline run and a run with the step's images
// (the true ratio), in a random order within each block, looked at after 3 blocks and after
// each one more up to 10, each look at its share of the error rate, until BisectOutcomeOf
// decides. It returns the outcome and the blocks run.
func bisectStep(c judge.SimCell, rng *rand.Rand, id string, ratio float64) (search.BisectOutcome, int) {
	const first, budget = 3, 10
	s := c.Sim()
	var base, cur []*result.Result
	blocks := map[string]int{}
	for b := 0; b < budget; b++ {
		block := c.BlockSD() * rng.NormFloat64()
		for _, a := range rng.Perm(2) {
			r := s.Run(rng, fmt.Sprintf("%s-a%d-r%d", id, a, b), math.Pow(ratio, float64(a))*math.Exp(c.Level(rng)+block))
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
		look := stats.Look{K: b + 2 - first, Max: budget - first + 1}
		cmp := judge.CompareRuns(base, cur, judge.CompareOptions{Design: &judge.Design{Blocks: blocks, Arms: [][]*result.Result{base, cur}}, Alpha: look.Alpha()})
		if o := search.BisectOutcomeOf(cmp, b+1 == budget); o != search.BisectPending {
			return o, b + 1
		}
	}
	return search.BisectUndecided, budget
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
	cell := judge.NewSimCell("sd 3 %", 0.03, 0.6)
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
			a, st := runBisect(svcs, func(set []string) search.BisectOutcome {
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
