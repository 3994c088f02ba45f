package main

import (
	"fmt"
	"math"
	"slices"
	"strings"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/confirm"
	judgesearch "github.com/perfexp/perfexp/internal/judge/search"
	"github.com/perfexp/perfexp/internal/sweep"
)

// objectPlan is what one PerfExperiment or PerfSweep will run and cost.
type objectPlan struct {
	Kind      string `json:"kind"`
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	// Source is the file (or kustomization) the object came from.
	Source string `json:"source,omitempty"`
	// Form is experiment, fixed sweep, sequential sweep, capacity search or bisect.
	Form string `json:"form"`
	// Design says in a line how the runs are laid out.
	Design string `json:"design"`
	// Queue is the environment lock its runs wait for, at Priority.
	Queue    string `json:"queue"`
	Priority int32  `json:"priority"`
	// Arms are the rows of runs: an arm, a probe, a bisect step's pair, a confirmation.
	Arms []armPlan `json:"arms"`
	// Runs, Measured (the load in the measured windows, warm-up excluded) and Environment (the
	// estimated time the runs hold their environment, summed) from the fewest runs it may make
	// (a sequential sweep decided at its first look) to the most (its whole budget).
	Runs        intRange      `json:"runs"`
	Measured    durationRange `json:"measured"`
	Environment durationRange `json:"environment"`
	// EnvironmentBound is the longest the most runs may hold the environment before the operator
	// fails them, by their timeouts.
	EnvironmentBound planDuration `json:"environmentBound"`
	// Deadline is a sweep's spec.deadline, counted from its creation.
	Deadline *planDuration `json:"deadline,omitempty"`
	Notes    []string      `json:"notes,omitempty"`
}

// armPlan is one row of runs with the same cost.
type armPlan struct {
	Name      string   `json:"name"`
	Parameter string   `json:"parameter,omitempty"`
	Value     string   `json:"value,omitempty"`
	Runs      intRange `json:"runs"`
	runCost
}

type intRange struct {
	Min int `json:"min"`
	Max int `json:"max"`
}

type durationRange struct {
	Min planDuration `json:"min"`
	Max planDuration `json:"max"`
}

// total sums the arms into the plan's totals.
func (p *objectPlan) total() {
	p.Runs, p.Measured, p.Environment, p.EnvironmentBound = intRange{}, durationRange{}, durationRange{}, 0
	for _, a := range p.Arms {
		p.Runs.Min += a.Runs.Min
		p.Runs.Max += a.Runs.Max
		p.Measured.Min += planDuration(a.Runs.Min) * a.Load
		p.Measured.Max += planDuration(a.Runs.Max) * a.Load
		p.Environment.Min += planDuration(a.Runs.Min) * a.Environment
		p.Environment.Max += planDuration(a.Runs.Max) * a.Environment
		p.EnvironmentBound += planDuration(a.Runs.Max) * a.Bound
		if !a.LoadKnown {
			p.note(fmt.Sprintf("%s: a fromScript scenario without scriptDuration: its load counts as nothing here, only its overall timeout bounds it", a.Name))
		}
	}
}

func (p *objectPlan) note(n string) {
	if !slices.Contains(p.Notes, n) {
		p.Notes = append(p.Notes, n)
	}
}

// planExperiment plans one PerfExperiment: one run, and the confirmation it may start.
func planExperiment(exp *perfexpv1alpha1.PerfExperiment, a allowances) (*objectPlan, error) {
	c, err := costOf(exp, a)
	if err != nil {
		return nil, err
	}
	p := &objectPlan{Kind: planKindExperiment, Namespace: exp.Namespace, Name: exp.Name, Form: "experiment", Design: "one run",
		Queue: exp.QueueName(), Priority: exp.Spec.Priority,
		Arms: []armPlan{{Name: exp.Name, Runs: intRange{1, 1}, runCost: c}}}
	if v := exp.Spec.Variant; patches(v) {
		p.Arms[0].Parameter, p.Arms[0].Value = "variant", v.Description
		if v.Description == "" {
			p.Arms[0].Value = "spec.variant"
		}
	}
	if confirm.Wanted(exp) {
		// The baseline experiment's variant is not in the manifest: its runs are costed
		// without one.
		placeholder := &perfexpv1alpha1.PerfExperiment{Spec: perfexpv1alpha1.PerfExperimentSpec{TargetNamespace: exp.TargetNamespace()}}
		placeholder.Namespace = exp.Namespace
		sw, _, err := confirm.Sweep(exp, placeholder)
		if err != nil {
			return nil, fmt.Errorf("analysis.confirm: %w", err)
		}
		sp, err := planSweep(sw, a)
		if err != nil {
			return nil, fmt.Errorf("analysis.confirm: %w", err)
		}
		for _, arm := range sp.Arms {
			arm.Name, arm.Runs.Min = "confirm: "+arm.Name, 0
			if arm.Name == "confirm: "+perfexpv1alpha1.BaselineArm {
				arm.Parameter, arm.Value = "variant", "the baseline experiment's (costed as none)"
			}
			p.Arms = append(p.Arms, arm)
		}
		p.Design = fmt.Sprintf("one run; if its comparison is not decisive, a confirmation of %s", sp.Design)
		p.note("the confirmation runs only when the single run's comparison is Inconclusive or Unknown (analysis.confirm, docs/comparison.md); the minimum counts none")
	}
	p.total()
	return p, nil
}

// planSweep plans a PerfSweep of any form.
func planSweep(s *perfexpv1alpha1.PerfSweep, a allowances) (*objectPlan, error) {
	var p *objectPlan
	var err error
	switch {
	case s.Spec.Capacity != nil:
		p, err = planCapacity(s, a)
	case s.Spec.Bisect != nil:
		p, err = planBisect(s, a)
	default:
		p, err = planArms(s, a)
	}
	if err != nil {
		return nil, err
	}
	p.Kind, p.Namespace, p.Name, p.Priority = planKindSweep, s.Namespace, s.Name, s.Spec.Priority
	if s.Spec.Deadline != nil {
		d := planDuration(s.Spec.Deadline.Duration)
		p.Deadline = &d
	}
	p.total()
	if p.Deadline != nil && p.Environment.Max > *p.Deadline {
		p.note(fmt.Sprintf("its most runs would hold the environment %s, longer than its deadline of %s: the deadline aborts it first (queue waits count too)", p.Environment.Max, *p.Deadline))
	}
	return p, nil
}

// armRow costs the run of one arm of a plan.
func armRow(s *perfexpv1alpha1.PerfSweep, plan *sweep.Plan, arm sweep.Arm, runs intRange, a allowances) (armPlan, string, error) {
	row := armPlan{Name: arm.Name, Parameter: arm.Parameter, Value: arm.Value, Runs: runs}
	rs := plan.RunsOf(arm.Name)
	if len(rs) == 0 {
		return row, "", fmt.Errorf("arm %s has no run in the plan", arm.Name)
	}
	exp, err := plan.Experiment(s, rs[0])
	if err != nil {
		return row, "", err
	}
	row.runCost, err = costOf(exp, a)
	if err != nil {
		return row, "", fmt.Errorf("arm %s: %w", arm.Name, err)
	}
	return row, exp.QueueName(), nil
}

// planArms plans a sweep of arms and matrix: fixed, or sequential (from its first look to its
// budget).
func planArms(s *perfexpv1alpha1.PerfSweep, a allowances) (*objectPlan, error) {
	plan, err := sweep.NewPlan(s)
	if err != nil {
		return nil, err
	}
	first, most := sweep.FirstLook(s), sweep.MaxRepeats(s)
	p := &objectPlan{Form: "fixed sweep", Design: fmt.Sprintf("%d arms x %s, %s", len(plan.Arms), plural(first, "repeat"), order(s))}
	if q := sweep.Sequential(s); q != nil {
		p.Form = "sequential sweep"
		p.Design = fmt.Sprintf("%d arms x %s at the first look, then one repeat a look up to %d, %s", len(plan.Arms), plural(first, "repeat"), most, order(s))
		if sweep.Auto(s) {
			p.note(fmt.Sprintf("repeats is not set: the sweep is sequential by default (repeats: auto, at most %d repeats); set repeats to run exactly that many", most))
		}
		p.note("an arm whose verdict is decisive stops getting runs; the baselines run while any arm does")
		if q.MaxDuration != nil {
			p.note(fmt.Sprintf("sequential.maxDuration %s: no repeat is added after it", planDuration(q.MaxDuration.Duration)))
		}
	}
	for _, arm := range plan.Arms {
		row, queue, err := armRow(s, plan, arm, intRange{first, most}, a)
		if err != nil {
			return nil, err
		}
		p.Queue = queue
		p.Arms = append(p.Arms, row)
	}
	return p, nil
}

func order(s *perfexpv1alpha1.PerfSweep) string {
	if s.Spec.Order == perfexpv1alpha1.SweepOrderInterleaved {
		return "in the declared order"
	}
	return "shuffled in each repeat"
}

// planCapacity plans a capacity search: from one run (the lowest load already breaks) to the
// most probes the search can take over its range, each run up to maxRepeats times.
func planCapacity(s *perfexpv1alpha1.PerfSweep, a allowances) (*objectPlan, error) {
	if _, err := sweep.NewCapacityPlan(s); err != nil {
		return nil, err
	}
	search := sweep.Search(s)
	probes := mostProbes(search)
	// A plan with one probe, to cost a run: the probes differ only in VUs or rate.
	c := s.DeepCopy()
	c.Status.Capacity = &perfexpv1alpha1.SweepCapacityStatus{Probes: []perfexpv1alpha1.CapacityProbeStatus{{Load: int32(search.Min), Runs: 1}}}
	plan, err := sweep.NewCapacityPlan(c)
	if err != nil {
		return nil, err
	}
	row, queue, err := armRow(c, plan, plan.Arms[0], intRange{1, probes * search.MaxRepeats}, a)
	if err != nil {
		return nil, err
	}
	row.Name, row.Value = "probes", fmt.Sprintf("%d-%d", search.Min, search.Max)
	p := &objectPlan{Form: "capacity search", Queue: queue, Arms: []armPlan{row},
		Design: fmt.Sprintf("%s from %d to %d at %g %% resolution: at most %d probes (budget %d) x up to %d runs each",
			s.Spec.Capacity.Parameter, search.Min, search.Max, search.ResolutionPercent, probes, search.MaxProbes, search.MaxRepeats)}
	p.note(fmt.Sprintf("the most probes is the longest path the search takes over its range, whatever load the objectives break at (capacity.maxProbes %d caps it); a probe decided on its first run takes one run", search.MaxProbes))
	return p, nil
}

// mostProbes is the most probes the search takes, over every load the objectives could break
// at: the search is simulated with the outcomes that threshold gives.
func mostProbes(c judgesearch.CapacitySearch) int {
	walk := func(breaksAbove int64) int {
		var ps []judgesearch.Probe
		for len(ps) <= c.MaxProbes {
			st := c.Next(ps)
			if st.Done {
				break
			}
			o := judgesearch.ProbeHeld
			if st.Next > breaksAbove {
				o = judgesearch.ProbeBroke
			}
			ps = append(ps, judgesearch.Probe{Load: st.Next, Outcome: o})
		}
		return len(ps)
	}
	most := max(walk(c.Min-1), walk(c.Max))
	// The path changes only where a threshold crosses a probed load: a fine geometric grid
	// over the range meets every path the rounding allows in practice.
	const points = 2000
	lo, hi := math.Log(float64(max(c.Min, 1))), math.Log(float64(max(c.Max, 1)))
	for i := 0; i <= points; i++ {
		t := int64(math.Round(math.Exp(lo + (hi-lo)*float64(i)/points)))
		most = max(most, walk(t), walk(t-1))
	}
	return most
}

// planBisect plans a bisect: from its first step deciding nothing reproduces (3 repeats of the
// old release and of every new image) to its budget of steps and repeats.
func planBisect(s *perfexpv1alpha1.PerfSweep, a allowances) (*objectPlan, error) {
	repeats, steps := sweep.BisectBudget(s)
	all := make([]int32, len(s.Spec.Bisect.Services))
	names := make([]string, len(s.Spec.Bisect.Services))
	for i, svc := range s.Spec.Bisect.Services {
		all[i], names[i] = int32(i), svc.Name
	}
	c := s.DeepCopy()
	c.Status.Bisect = &perfexpv1alpha1.SweepBisectStatus{Steps: []perfexpv1alpha1.BisectStepStatus{{Services: all, Repeats: 1}}}
	plan := sweep.NewBisectPlan(c)
	const firstLook = 3
	p := &objectPlan{Form: "bisect", Design: fmt.Sprintf("%d services: up to %d steps x %d repeats of a step and the old release, %d repeats at a step's first look",
		len(names), steps, repeats, firstLook)}
	for _, arm := range plan.Arms {
		row, queue, err := armRow(c, plan, arm, intRange{firstLook, steps * repeats}, a)
		if err != nil {
			return nil, err
		}
		row.Name, row.Value = strings.Replace(arm.Name, "step-1", "step-k", 1), ""
		if arm.IsBaseline() {
			row.Parameter, row.Value = "images", "old release"
		} else {
			row.Parameter, row.Value = "new images", "of the step's services"
		}
		p.Queue = queue
		p.Arms = append(p.Arms, row)
	}
	one := oneCulpritSteps(names, steps)
	p.note(fmt.Sprintf("with one culprit among %d services the bisect takes at most %d steps (%s runs); the maximum is its whole budget (bisect.maxSteps x maxRepeats x 2)",
		len(names), one, intRange{2 * firstLook * one, 2 * repeats * one}))
	return p, nil
}

// oneCulpritSteps is the most steps the bisect takes when one service's new image is the
// culprit, over every service, by the bisect's own rule.
func oneCulpritSteps(names []string, budget int) int {
	most := 0
	for _, culprit := range names {
		var steps []judgesearch.BisectStep
		for len(steps) < budget {
			ans := judgesearch.BisectNext(names, steps)
			if ans.Done {
				break
			}
			o := judgesearch.BisectClean
			if slices.Contains(ans.Next, culprit) {
				o = judgesearch.BisectReproduces
			}
			steps = append(steps, judgesearch.BisectStep{Set: ans.Next, Outcome: o})
		}
		most = max(most, len(steps))
	}
	return most
}
