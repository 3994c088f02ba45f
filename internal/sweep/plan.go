// Package sweep turns a PerfSweep into its plan: the arms (explicit ones and the cross product
// of the matrix), the runs in their interleaved order with deterministic names, and the
// PerfExperiment of each run. It is pure: no client, no clock, so everything a sweep decides is
// testable without a cluster.
package sweep

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	judgestats "github.com/perfexp/perfexp/internal/judge/stats"
)

// MaxArms bounds the arms of one sweep (baseline included), so a matrix cannot explode into
// hundreds of runs by accident.
const MaxArms = 64

// MaxRuns bounds the runs of one sweep.
const MaxRuns = 200

// Arm is one arm of a sweep after expansion: the baseline, an explicit arm or a matrix cell.
type Arm struct {
	// Name is the arm's name; BaselineArm for the baseline.
	Name string
	// Parameter and Value say what the arm changes, for people ("HTTP_MAXPOOLSIZE", "10").
	Parameter, Value string
	// Variant is what the arm changes in the environment; nil runs it as it is.
	Variant *perfexpv1alpha1.Variant
	// Load overrides part of the template's load; nil runs the template's.
	Load *perfexpv1alpha1.LoadOverride
	// LoadValue is the arm's VUs or rate when the sweep is a sweep over load (Plan.LoadParameter).
	LoadValue *float64
	// Baseline names the arm this one is compared with; empty for a baseline.
	Baseline string
	// LoadOnly is set for an arm that changes only the load: its runs are not comparable with
	// the baseline's (the comparison refuses different load shapes), so a sequential sweep
	// waits for no decision of it; the capacity table and curves are its result.
	LoadOnly bool
}

// IsBaseline reports whether the arm is a baseline (the sweep's, or one at another load).
func (a Arm) IsBaseline() bool { return a.Baseline == "" }

// Run is one PerfExperiment of the sweep.
type Run struct {
	// Arm names the arm.
	Arm string
	// Repeat is 1-based.
	Repeat int
	// Name is the PerfExperiment's name.
	Name string
	// Sequence is the run's place in the interleaved order, from 0.
	Sequence int
	// Baseline is the name of the run of the same repeat this one is compared with (its arm's
	// baseline); empty for a baseline run.
	Baseline string
}

// Plan is what a sweep runs.
type Plan struct {
	// Arms: the baseline first, then the baselines at other loads, then the arms compared.
	Arms []Arm
	// Runs in the order they are to run: each repeat is a block in which every arm runs once,
	// in the declared order (B, V1, V2, ...) or shuffled (spec.order).
	Runs []Run
	// LoadParameter is set when every arm other than the baseline changes only the load's VUs
	// (or only its rate): the sweep is a capacity curve and its report charts against load.
	LoadParameter perfexpv1alpha1.LoadParameter
}

// NewPlan expands the sweep's arms and lays out its runs. It refuses, with a message a person
// can act on, a sweep whose arms change nothing, repeat each other, or are too many.
func NewPlan(s *perfexpv1alpha1.PerfSweep) (*Plan, error) {
	arms, err := expandArms(s)
	if err != nil {
		return nil, err
	}
	if err := checkArms(s, arms); err != nil {
		return nil, err
	}
	arms = addLoadBaselines(arms)
	if len(arms) > MaxArms {
		return nil, fmt.Errorf("the sweep has %d arms with its baselines (one per load that arms with a variant run); at most %d are allowed", len(arms), MaxArms)
	}
	repeats, budget := PlannedRepeats(s), MaxRepeats(s)
	if n := len(arms) * budget; n > MaxRuns {
		if Sequential(s) != nil {
			return nil, fmt.Errorf("the sweep would make up to %d runs (%d arms x %d repeats, sequential.maxRepeats); at most %d are allowed", n, len(arms), budget, MaxRuns)
		}
		return nil, fmt.Errorf("the sweep would make %d runs (%d arms x %d repeats); at most %d are allowed", n, len(arms), budget, MaxRuns)
	}
	p := &Plan{Arms: arms}
	p.LoadParameter = loadParameter(s, arms)
	shuffle := blockShuffler(s)
	stopped := StoppedAfter(s)
	for r := 1; r <= repeats; r++ {
		for _, a := range shuffle(runningIn(arms, stopped, r)) {
			run := Run{Arm: a.Name, Repeat: r, Name: RunName(s.Name, a.Name, r), Sequence: len(p.Runs)}
			if !a.IsBaseline() {
				run.Baseline = RunName(s.Name, a.Baseline, r)
			}
			p.Runs = append(p.Runs, run)
		}
	}
	return p, nil
}

// runningIn is the arms that run in repeat r: all of them, but for an arm of a sequential sweep
// that stopped after an earlier repeat (its verdict decisive). Baselines never stop: while any
// arm runs, its baseline's run of the same block is what it is paired with.
func runningIn(arms []Arm, stopped map[string]int, r int) []Arm {
	if len(stopped) == 0 {
		return arms
	}
	out := make([]Arm, 0, len(arms))
	for _, a := range arms {
		if n, ok := stopped[a.Name]; ok && !a.IsBaseline() && n > 0 && r > n {
			continue
		}
		out = append(out, a)
	}
	return out
}

// blockShuffler returns what orders the arms of each repeat (a block): the declared order for
// Interleaved, otherwise a permutation drawn afresh for every block from a generator seeded by
// the sweep's UID (its name when it has none yet), so the order is random between sweeps but the
// same on every reconcile of one sweep. A randomized complete block design: every arm runs once
// per block, and a drift within blocks does not always favour the same arm.
func blockShuffler(s *perfexpv1alpha1.PerfSweep) func([]Arm) []Arm {
	if s.Spec.Order == perfexpv1alpha1.SweepOrderInterleaved {
		return func(arms []Arm) []Arm { return arms }
	}
	id := string(s.UID)
	if id == "" {
		id = s.Namespace + "/" + s.Name
	}
	sum := sha256.Sum256([]byte(id))
	rng := rand.New(rand.NewPCG(binary.LittleEndian.Uint64(sum[:8]), binary.LittleEndian.Uint64(sum[8:16])))
	return func(arms []Arm) []Arm {
		out := append([]Arm(nil), arms...)
		rng.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
		return out
	}
}

// DefaultMaxRepeats is the budget of a sweep that is sequential by default (neither repeats nor
// sequential set), unless that many repeats of its arms would exceed MaxRuns.
const DefaultMaxRepeats = 10

// Sequential is the sweep's sequential budget: spec.sequential, or, for a sweep of arms that
// sets neither repeats nor sequential, the default one (repeats: auto) of DefaultMaxRepeats
// repeats, cut to what MaxRuns allows for its arms (at least DefaultFirstLook: MaxArms arms fit
// 3 times);
// nil for a fixed sweep, a capacity search and a bisect (they repeat their probes and steps by
// their own budgets).
func Sequential(s *perfexpv1alpha1.PerfSweep) *perfexpv1alpha1.SweepSequential {
	switch {
	case s.Spec.Capacity != nil || s.Spec.Bisect != nil:
		return nil
	case s.Spec.Sequential != nil:
		return s.Spec.Sequential
	case s.Spec.Repeats > 0:
		return nil
	}
	budget := DefaultMaxRepeats
	if arms, err := expandArms(s); err == nil {
		if n := len(addLoadBaselines(arms)); n > 0 {
			budget = min(budget, max(DefaultFirstLook, MaxRuns/n))
		}
	}
	return &perfexpv1alpha1.SweepSequential{MaxRepeats: int32(budget)}
}

// Auto reports whether the sweep is sequential by default (neither repeats nor sequential set).
func Auto(s *perfexpv1alpha1.PerfSweep) bool {
	return s.Spec.Sequential == nil && Sequential(s) != nil
}

// DefaultFirstLook is the repeats a sweep that is sequential by default runs before its first
// look: the design docs/comparison.md's simulation table measures ("sequential r3-10").
const DefaultFirstLook = 3

// FirstLook is the repeats a sweep runs before it first looks at its comparisons: spec.repeats,
// for a sequential sweep at least 2 (one repeat has no run-to-run spread to pair on), and
// DefaultFirstLook for one that is sequential by default.
func FirstLook(s *perfexpv1alpha1.PerfSweep) int {
	n := max(1, int(s.Spec.Repeats))
	switch {
	case Auto(s):
		n = DefaultFirstLook
	case Sequential(s) != nil:
		n = max(2, n)
	}
	return n
}

// MaxRepeats is the most repeats the sweep may run: spec.repeats, or a sequential sweep's budget.
func MaxRepeats(s *perfexpv1alpha1.PerfSweep) int {
	if q := Sequential(s); q != nil {
		return max(FirstLook(s), int(q.MaxRepeats))
	}
	return FirstLook(s)
}

// PlannedRepeats is how many repeats the plan holds now: all of them for a fixed sweep; for a
// sequential one, those its looks have added so far. The order of the runs of the first n
// repeats does not depend on how many follow, so a plan that grows keeps its runs.
func PlannedRepeats(s *perfexpv1alpha1.PerfSweep) int {
	n := FirstLook(s)
	if st := s.Status.Sequential; Sequential(s) != nil && st != nil && int(st.Repeats) > n {
		n = int(st.Repeats)
	}
	return min(n, MaxRepeats(s))
}

// Stopping is a sequential sweep's plan of looks; ok is false for a fixed sweep.
func Stopping(s *perfexpv1alpha1.PerfSweep) (judgestats.Stopping, bool) {
	if Sequential(s) == nil {
		return judgestats.Stopping{}, false
	}
	return judgestats.Stopping{First: FirstLook(s), Max: MaxRepeats(s)}, true
}

// Look is the look a sequential sweep's comparison is at, with the repeats planned now; nil
// for a fixed sweep.
func Look(s *perfexpv1alpha1.PerfSweep) *judgestats.Look {
	st, ok := Stopping(s)
	if !ok {
		return nil
	}
	l := st.LookAt(PlannedRepeats(s))
	return &l
}

// StoppedAfter is the repeats after which each arm of a sequential sweep stopped getting runs
// because its verdict was decisive (status.sequential.arms); absent arms run on.
func StoppedAfter(s *perfexpv1alpha1.PerfSweep) map[string]int {
	out := map[string]int{}
	if st := s.Status.Sequential; st != nil && Sequential(s) != nil {
		for _, a := range st.Arms {
			out[a.Name] = int(a.Repeats)
		}
	}
	return out
}

// Arm returns the arm of the given name, or nil.
func (p *Plan) Arm(name string) *Arm {
	for i := range p.Arms {
		if p.Arms[i].Name == name {
			return &p.Arms[i]
		}
	}
	return nil
}

// RunsOf returns the runs of one arm, by repeat.
func (p *Plan) RunsOf(arm string) []Run {
	var out []Run
	for _, r := range p.Runs {
		if r.Arm == arm {
			out = append(out, r)
		}
	}
	return out
}

// RunName is the PerfExperiment name of one run: <sweep>-<arm>-<repeat>. Names become label
// values and prefixes of the run's Jobs and ConfigMaps, so they are kept to 63 characters: a
// longer name is cut and ends in a hash of the full name, so it stays unique and stable.
func RunName(sweep, arm string, repeat int) string {
	return fit(fmt.Sprintf("%s-%s-%d", sweep, arm, repeat))
}

// maxName is the longest name a run, an arm or a label value may have: run names become label
// values and prefixes of the run's Jobs and ConfigMaps.
const maxName = 63

// fit shortens s to at most maxName characters, replacing its tail by 8 hex digits of its hash
// when it is too long. The result ends in a letter or digit, as names and label values must.
func fit(s string) string {
	if len(s) <= maxName {
		return s
	}
	sum := sha256.Sum256([]byte(s))
	head := strings.TrimRight(s[:maxName-9], "-.")
	return head + "-" + hex.EncodeToString(sum[:])[:8]
}

// Sequence and enqueued-at annotations are written by Experiment; see internal/queue.
func orderAnnotations(s *perfexpv1alpha1.PerfSweep, seq int) map[string]string {
	created := s.CreationTimestamp.UTC()
	if created.IsZero() {
		created = time.Unix(0, 0).UTC()
	}
	return map[string]string{
		annotationEnqueuedAt: created.Format(time.RFC3339),
		annotationSequence:   strconv.Itoa(seq),
	}
}

// LabelValue is a name made fit for a label value (at most 63 characters), as the sweep and arm
// labels of the runs carry them.
func LabelValue(name string) string { return fit(name) }
