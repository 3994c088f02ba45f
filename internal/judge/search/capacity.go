package search

import (
	"fmt"
	"math"
	"slices"
	"strings"

	moremath "github.com/aclements/go-moremath/stats"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/judge"
	"github.com/perfexp/perfexp/internal/judge/stats"
	"github.com/perfexp/perfexp/internal/result"
)

// A capacity search finds the highest load at which a system still meets its objectives. It is
// a sequence of probes: each probe is one load level, run once or a few times until its
// objectives are decided, and the next load follows from the outcomes so far.
//
//   - Bracket: the first probe runs at the lowest load; while probes hold, the load doubles
//     (capped at the highest load).
//   - Bisect: once a probe did not hold, the next probe runs at the geometric midpoint of the
//     highest load that held below it and the lowest load that did not, until their ratio is
//     within the resolution, the loads are adjacent integers, or the probe budget is spent.
//
// A probe is decided on the interval of each objective's value over its runs (log scale for
// latencies, throughput and positive custom values; points for error and pass rates): Held when
// every objective's interval lies within its bound, Broke when one lies wholly beyond. Otherwise
// the probe runs again, up to its repeat budget; each look spends a share of the error rate
// (stats.Look.Alpha), as a sequential sweep's do, so looking after every run does not inflate false
// claims. A probe still undecided when its budget is spent counts as not held: the search
// never reports a capacity it did not show, and says the probe was Undecided.
//
// The noise of a run's value is the larger of the spread of the probe's runs and an assumed
// floor (CapacityNoiseFloorPercent on the log scale; for points, a tenth of the bound), taken
// as known (normal quantiles). With one run there is no spread at all, so the floor alone
// decides; with few runs the floor keeps a lucky small spread from claiming too much.
// docs/capacity.md's simulation measures how often a search reports a capacity above the true
// one, including with noise larger than the floor and heavy tails.

// CapacityNoiseFloorPercent is the run-to-run standard deviation (log scale, percent) a probe
// assumes at least.
const CapacityNoiseFloorPercent = 5.0

// pointsFloorShare is the noise floor of a value on the points scale, as a share of its bound.
const pointsFloorShare = 0.1

// ProbeOutcome is what a probe showed about the objectives at its load.
type ProbeOutcome string

// The outcomes of a probe.
const (
	// ProbePending: the probe has runs to come.
	ProbePending ProbeOutcome = ""
	// ProbeHeld: every objective's interval lies within its bound.
	ProbeHeld ProbeOutcome = "Held"
	// ProbeBroke: at least one objective's interval lies wholly beyond its bound.
	ProbeBroke ProbeOutcome = "Broke"
	// ProbeUndecided: the repeat budget was spent with an objective still straddling its bound
	// (or without a usable run); the search counts it as not held.
	ProbeUndecided ProbeOutcome = "Undecided"
)

// Holds reports whether the search may count the probe's load as held.
func (o ProbeOutcome) Holds() bool { return o == ProbeHeld }

// CapacitySearch is what a search may do.
type CapacitySearch struct {
	// Min and Max bound the load; the first probe runs at Min.
	Min, Max int64
	// ResolutionPercent: the search stops once the lowest load that did not hold is within this
	// much of the highest that did.
	ResolutionPercent float64
	// MaxProbes is the most load levels the search may probe.
	MaxProbes int
	// MaxRepeats is the most runs of one probe.
	MaxRepeats int
}

// Probe is one load level probed, with its final outcome (ProbePending while it runs).
type Probe struct {
	Load    int64
	Outcome ProbeOutcome
}

// Step is the search's next move.
type Step struct {
	// Done is true when the search has its answer; Why says why it stopped.
	Done bool
	Why  string
	// Next is the load of the next probe when not Done.
	Next int64
}

// Bracket is the answer of a search so far: the highest load that held below the lowest that
// did not (nil when none did), and that lowest load (nil when every probe held).
type Bracket struct {
	Held, Broke *Probe
	// Inverted names held probes above Broke: the system held at a higher load after failing at
	// a lower one (noise, or a warm-up effect). The capacity is still read below Broke.
	Inverted []int64
}

// Bracket reads the bracket from the probes decided so far.
func (c CapacitySearch) Bracket(probes []Probe) Bracket {
	var b Bracket
	for i := range probes {
		p := &probes[i]
		if p.Outcome != ProbePending && !p.Outcome.Holds() && (b.Broke == nil || p.Load < b.Broke.Load) {
			b.Broke = p
		}
	}
	for i := range probes {
		p := &probes[i]
		if !p.Outcome.Holds() {
			continue
		}
		if b.Broke != nil && p.Load >= b.Broke.Load {
			b.Inverted = append(b.Inverted, p.Load)
			continue
		}
		if b.Held == nil || p.Load > b.Held.Load {
			b.Held = p
		}
	}
	slices.Sort(b.Inverted)
	return b
}

// Next decides the search's next move from the probes so far, every one of them decided.
func (c CapacitySearch) Next(probes []Probe) Step {
	if len(probes) == 0 {
		return Step{Next: c.Min}
	}
	b := c.Bracket(probes)
	var next int64
	switch {
	case b.Broke == nil && b.Held.Load >= c.Max:
		return Step{Done: true, Why: fmt.Sprintf("the objectives held at the highest load of the range (%d): the capacity is at least that", c.Max)}
	case b.Broke == nil:
		next = min(2*b.Held.Load, c.Max)
	case b.Held == nil && b.Broke.Load <= c.Min:
		return Step{Done: true, Why: fmt.Sprintf("the objectives did not hold at the lowest load of the range (%d): the capacity is below it", c.Min)}
	case b.Held == nil:
		next = c.Min
	default:
		h, f := float64(b.Held.Load), float64(b.Broke.Load)
		if f <= h*(1+c.ResolutionPercent/200) {
			return Step{Done: true, Why: fmt.Sprintf("the load that held (%d) and the one that did not (%d) are within half the resolution of %g %%", b.Held.Load, b.Broke.Load, c.ResolutionPercent)}
		}
		next = int64(math.Round(math.Sqrt(h * f)))
		if next <= b.Held.Load || next >= b.Broke.Load {
			return Step{Done: true, Why: fmt.Sprintf("no whole load lies between the load that held (%d) and the one that did not (%d)", b.Held.Load, b.Broke.Load)}
		}
	}
	if len(probes) >= c.MaxProbes {
		return Step{Done: true, Why: fmt.Sprintf("the budget of %d probes is spent", c.MaxProbes)}
	}
	if slices.ContainsFunc(probes, func(p Probe) bool { return p.Load == next }) {
		// Only after an inverted outcome can the rule land on a load already probed: its
		// outcome stands, so the bracket cannot narrow further.
		return Step{Done: true, Why: fmt.Sprintf("the next load (%d) was probed already; the outcomes are not monotonic in load", next)}
	}
	return Step{Next: next}
}

// ObjectiveInterval is one objective judged over a probe's runs.
type ObjectiveInterval struct {
	// Name of the objective and the unit of its values.
	Name string `json:"name"`
	Unit string `json:"unit,omitempty"`
	// Bound is the limit: a maximum (Upper) or a minimum.
	Bound float64 `json:"bound"`
	Upper bool    `json:"upper"`
	// Value is the centre of the runs' values (geometric mean on the log scale), Low and High
	// the interval; absent without data.
	Value *float64 `json:"value,omitempty"`
	Low   *float64 `json:"low,omitempty"`
	High  *float64 `json:"high,omitempty"`
	// Runs is how many runs had a value.
	Runs int `json:"runs"`
	// Outcome: Met (interval within the bound), Missed (wholly beyond) or Unknown.
	Outcome perfexpv1alpha1.ObjectiveOutcome `json:"outcome"`
	// Margin is how far beyond its bound the value lies, relative to the bound (positive when
	// beyond): what ranks the objectives when several break.
	Margin float64 `json:"margin"`
}

// ProbeJudgement is a probe's objectives judged over its runs.
type ProbeJudgement struct {
	// Outcome is Held or Broke when decided, Pending when another run is due, Undecided when
	// none may follow.
	Outcome ProbeOutcome
	// Objectives, in the spec's order.
	Objectives []ObjectiveInterval
	// Usable is how many runs had valid results.
	Usable int
	// Limiting names the objective furthest beyond its bound (or nearest to it when none
	// broke).
	Limiting string
	// Why explains the outcome in one line.
	Why string
}

// CapacityObjectives checks that objectives can decide a capacity search: at least one, each
// with an absolute bound (max or min) and none relative to a baseline (a search has none).
func CapacityObjectives(specs []perfexpv1alpha1.Objective) error {
	if len(specs) == 0 {
		return fmt.Errorf("a capacity search needs objectives (template.analysis.objectives): they decide whether a load held")
	}
	for _, o := range specs {
		if o.MaxIncreasePercent != nil || o.MaxDecreasePercent != nil {
			return fmt.Errorf("objective %q is relative to a baseline; a capacity search has none: give it max or min", judge.ObjectiveName(o))
		}
		if o.Max == nil && o.Min == nil {
			return fmt.Errorf("objective %q has no max or min bound", judge.ObjectiveName(o))
		}
		if o.Max != nil && o.Min != nil {
			return fmt.Errorf("objective %q has both max and min; a capacity search needs one bound per objective (split it in two)", judge.ObjectiveName(o))
		}
	}
	return nil
}

// DecideProbe decides a probe from its runs' results (nil for a run that left none) at the given
// look (run k of at most MaxRepeats): Pending asks for another run.
func DecideProbe(specs []perfexpv1alpha1.Objective, runs []*result.Result, look stats.Look) ProbeJudgement {
	var usable []*result.Result
	for _, r := range runs {
		if r != nil && r.Validity != perfexpv1alpha1.Invalid {
			usable = append(usable, r)
		}
	}
	j := ProbeJudgement{Usable: len(usable)}
	last := look.K >= look.Max
	if len(usable) == 0 {
		j.Outcome, j.Why = ProbePending, "no run with valid results yet"
		if last {
			j.Outcome, j.Why = ProbeUndecided, fmt.Sprintf("none of its %d run(s) left valid results", len(runs))
		}
		return j
	}
	a := look.Alpha()
	var missed, unknown []string
	worst := math.Inf(-1)
	for _, o := range specs {
		oi := judgeObjective(o, usable, a)
		j.Objectives = append(j.Objectives, oi)
		switch oi.Outcome {
		case perfexpv1alpha1.ObjectiveMissed:
			missed = append(missed, oi.Name)
		case perfexpv1alpha1.ObjectiveUnknown:
			unknown = append(unknown, oi.Name)
		}
		if oi.Value != nil && oi.Margin > worst {
			worst, j.Limiting = oi.Margin, oi.Name
		}
	}
	level := fmt.Sprintf("%d run(s), intervals at %.3g %%", len(usable), 100*(1-a))
	switch {
	case len(missed) > 0:
		j.Outcome, j.Why = ProbeBroke, fmt.Sprintf("%s beyond its bound (%s)", strings.Join(missed, ", "), level)
		j.Limiting = mostMissed(j.Objectives)
	case len(unknown) == 0:
		j.Outcome, j.Why = ProbeHeld, fmt.Sprintf("every objective within its bound (%s)", level)
	case last:
		j.Outcome, j.Why = ProbeUndecided, fmt.Sprintf("%s still straddles its bound after %s; counted as not held", strings.Join(unknown, ", "), level)
	default:
		j.Outcome, j.Why = ProbePending, fmt.Sprintf("%s straddles its bound (%s): another run", strings.Join(unknown, ", "), level)
	}
	return j
}

// mostMissed is the missed objective furthest beyond its bound.
func mostMissed(objs []ObjectiveInterval) string {
	name, worst := "", math.Inf(-1)
	for _, o := range objs {
		if o.Outcome == perfexpv1alpha1.ObjectiveMissed && o.Margin > worst {
			name, worst = o.Name, o.Margin
		}
	}
	return name
}

// judgeObjective is one objective's interval over the runs, drawn at error rate a, against
// its bound.
func judgeObjective(o perfexpv1alpha1.Objective, runs []*result.Result, a float64) ObjectiveInterval {
	oi := ObjectiveInterval{Name: judge.ObjectiveName(o), Upper: o.Max != nil, Outcome: perfexpv1alpha1.ObjectiveUnknown}
	if o.Max != nil {
		oi.Bound = o.Max.AsApproximateFloat64()
	} else if o.Min != nil {
		oi.Bound = o.Min.AsApproximateFloat64()
	}
	var vs []float64
	for _, r := range runs {
		got := judge.Objectives(r, []perfexpv1alpha1.Objective{o})
		if len(got) == 1 && got[0].Value != nil && result.Finite(*got[0].Value) {
			vs = append(vs, *got[0].Value)
			oi.Name, oi.Unit = got[0].Name, got[0].Unit
		}
	}
	oi.Runs = len(vs)
	if len(vs) == 0 {
		return oi
	}
	logScale := oi.Bound > 0 && o.Metric != perfexpv1alpha1.MetricErrorRate && o.Metric != perfexpv1alpha1.MetricPassRate &&
		!slices.ContainsFunc(vs, func(v float64) bool { return v <= 0 })
	centre, low, high := probeInterval(vs, oi.Bound, logScale, a)
	oi.Value, oi.Low, oi.High = &centre, &low, &high
	scale := math.Abs(oi.Bound)
	if scale == 0 {
		scale = 1
	}
	if oi.Upper {
		oi.Margin = (centre - oi.Bound) / scale
		switch {
		case low > oi.Bound:
			oi.Outcome = perfexpv1alpha1.ObjectiveMissed
		case high <= oi.Bound:
			oi.Outcome = perfexpv1alpha1.ObjectiveMet
		}
	} else {
		oi.Margin = (oi.Bound - centre) / scale
		switch {
		case high < oi.Bound:
			oi.Outcome = perfexpv1alpha1.ObjectiveMissed
		case low >= oi.Bound:
			oi.Outcome = perfexpv1alpha1.ObjectiveMet
		}
	}
	return oi
}

// probeInterval is the centre of values and its two-sided interval at error rate a, with the
// noise of one run the larger of their spread and the floor.
func probeInterval(vs []float64, bound float64, logScale bool, a float64) (centre, low, high float64) {
	xs := vs
	floor := pointsFloorShare * math.Abs(bound)
	if bound == 0 {
		floor = pointsFloorShare
	}
	if logScale {
		xs = stats.Logs(vs)
		floor = CapacityNoiseFloorPercent / 100
	}
	n := float64(len(xs))
	m := 0.0
	for _, x := range xs {
		m += x
	}
	m /= n
	sd := floor
	if len(xs) >= 2 {
		sd = math.Max(sd, math.Sqrt(stats.Variance(xs, m)))
	}
	half := moremath.StdNormal.InvCDF(1-a/2) * sd / math.Sqrt(n)
	if logScale {
		return math.Exp(m), math.Exp(m - half), math.Exp(m + half)
	}
	return m, m - half, m + half
}
