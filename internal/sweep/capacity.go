package sweep

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	judgesearch "github.com/perfexp/perfexp/internal/judge/search"
	judgestats "github.com/perfexp/perfexp/internal/judge/stats"
	"github.com/perfexp/perfexp/internal/report"
	"github.com/perfexp/perfexp/internal/result"
	"github.com/perfexp/perfexp/internal/text"
)

// A capacity search is a sweep whose arms are not declared but chosen one after another: each
// probe (one load level) is an arm named after its load (vus-40, rate-120), with as many runs
// as its looks have asked for so far. The probes live in the sweep's status, so the plan is
// rebuilt from it on every reconcile, and a restarted operator finds the same runs by name.

// Search is the search a sweep's spec.capacity declares.
func Search(s *perfexpv1alpha1.PerfSweep) judgesearch.CapacitySearch {
	c := s.Spec.Capacity
	res, probes, repeats := c.ResolutionPercent, c.MaxProbes, c.MaxRepeats
	if res == 0 {
		res = 10
	}
	if probes == 0 {
		probes = 12
	}
	if repeats == 0 {
		repeats = 3
	}
	return judgesearch.CapacitySearch{Min: int64(c.Min), Max: int64(c.Max), ResolutionPercent: float64(res), MaxProbes: int(probes), MaxRepeats: int(repeats)}
}

// ProbeArm is the arm name of the probe at a load: vus-40, rate-120.
func ProbeArm(param perfexpv1alpha1.LoadParameter, load int32) string {
	return fmt.Sprintf("%s-%d", strings.ToLower(string(param)), load)
}

// NewCapacityPlan is a capacity search's plan: one arm per probe in its status, each with the
// runs its looks asked for. It refuses a search its objectives cannot decide, or whose load
// parameter applies to no scenario of the template.
func NewCapacityPlan(s *perfexpv1alpha1.PerfSweep) (*Plan, error) {
	c := s.Spec.Capacity
	var objectives []perfexpv1alpha1.Objective
	if a := s.Spec.Template.Analysis; a != nil {
		objectives = a.Objectives
	}
	if err := judgesearch.CapacityObjectives(objectives); err != nil {
		return nil, err
	}
	applied, err := applyLoad(s.Spec.Template.Load.DeepCopy(), probeLoad(c.Parameter, c.Min))
	if err != nil {
		return nil, err
	}
	if !applied {
		shape := "vus and duration"
		if c.Parameter == perfexpv1alpha1.LoadRate {
			shape = "an arrivalRate"
		}
		return nil, fmt.Errorf("capacity.parameter %s applies to no scenario of the template: none runs with %s", c.Parameter, shape)
	}
	p := &Plan{LoadParameter: c.Parameter}
	if s.Status.Capacity == nil {
		return p, nil
	}
	for _, pr := range s.Status.Capacity.Probes {
		lv := float64(pr.Load)
		arm := Arm{Name: ProbeArm(c.Parameter, pr.Load), Parameter: string(c.Parameter), Value: strconv.Itoa(int(pr.Load)),
			Variant: c.Variant.DeepCopy(), Load: probeLoad(c.Parameter, pr.Load), LoadValue: &lv}
		p.Arms = append(p.Arms, arm)
		for r := 1; r <= int(pr.Runs); r++ {
			p.Runs = append(p.Runs, Run{Arm: arm.Name, Repeat: r, Name: RunName(s.Name, arm.Name, r), Sequence: len(p.Runs)})
		}
	}
	return p, nil
}

func probeLoad(param perfexpv1alpha1.LoadParameter, load int32) *perfexpv1alpha1.LoadOverride {
	v := load
	if param == perfexpv1alpha1.LoadRate {
		return &perfexpv1alpha1.LoadOverride{Rate: &v}
	}
	return &perfexpv1alpha1.LoadOverride{VUs: &v}
}

// CapacityStep is what a search does once every planned run has ended.
type CapacityStep struct {
	// Done is true when the search has its answer (the status holds it).
	Done bool
	// Log says what was decided, for the operator's log.
	Log string
}

// AdvanceCapacity judges the running probe from its ended runs and moves the search on in the
// sweep's status: another run of the probe, a new probe, or the answer. Every planned run must
// have ended.
func AdvanceCapacity(s *perfexpv1alpha1.PerfSweep, p *Plan, outcomes map[string]Outcome) CapacityStep {
	search := Search(s)
	if s.Status.Capacity == nil {
		s.Status.Capacity = &perfexpv1alpha1.SweepCapacityStatus{}
	}
	st := s.Status.Capacity
	if n := len(st.Probes); n > 0 && st.Probes[n-1].Outcome == "" {
		pr := &st.Probes[n-1]
		j := judgesearch.DecideProbe(s.Spec.Template.Analysis.Objectives, probeResults(p, ProbeArm(s.Spec.Capacity.Parameter, pr.Load), outcomes),
			judgestats.Look{K: int(pr.Runs), Max: search.MaxRepeats})
		if j.Outcome == judgesearch.ProbePending {
			pr.Runs++
			pr.Message = text.Truncate(j.Why, 512)
			return CapacityStep{Log: fmt.Sprintf("probe at %d: %s", pr.Load, j.Why)}
		}
		pr.Outcome, pr.Message = perfexpv1alpha1.CapacityProbeOutcome(j.Outcome), text.Truncate(j.Why, 512)
	}
	probes := judgeProbes(st.Probes)
	step := search.Next(probes)
	if !step.Done {
		st.Probes = append(st.Probes, perfexpv1alpha1.CapacityProbeStatus{Load: int32(step.Next), Runs: 1})
		return CapacityStep{Log: fmt.Sprintf("next probe at %d", step.Next)}
	}
	b := search.Bracket(probes)
	st.LastHeld, st.FirstBroken = nil, nil
	if b.Held != nil {
		v := int32(b.Held.Load)
		st.LastHeld = &v
	}
	if b.Broke != nil {
		v := int32(b.Broke.Load)
		st.FirstBroken = &v
	}
	st.Summary = capacitySummary(capacityUnit(s), st.LastHeld, st.FirstBroken)
	st.StopReason = text.Truncate(step.Why, 512)
	return CapacityStep{Done: true, Log: step.Why}
}

func judgeProbes(ps []perfexpv1alpha1.CapacityProbeStatus) []judgesearch.Probe {
	out := make([]judgesearch.Probe, 0, len(ps))
	for _, p := range ps {
		out = append(out, judgesearch.Probe{Load: int64(p.Load), Outcome: judgesearch.ProbeOutcome(p.Outcome)})
	}
	return out
}

// probeResults are the results of a probe's runs by repeat; nil for a run that did not succeed
// or left no results.
func probeResults(p *Plan, arm string, outcomes map[string]Outcome) []*result.Result {
	var out []*result.Result
	for _, r := range p.RunsOf(arm) {
		o := outcomes[r.Name]
		if o.Phase == perfexpv1alpha1.PhaseSucceeded {
			out = append(out, o.Result)
		} else {
			out = append(out, nil)
		}
	}
	return out
}

// capacityUnit names the searched load's unit: VUs, or the arrival rate's iterations per its
// timeUnit ("iterations/s" for the default 1s, "iterations/2m"), "iterations/timeUnit" when the
// searched scenarios' timeUnits differ.
func capacityUnit(s *perfexpv1alpha1.PerfSweep) string {
	if s.Spec.Capacity.Parameter != perfexpv1alpha1.LoadRate {
		return string(s.Spec.Capacity.Parameter)
	}
	unit := ""
	for _, sc := range s.Spec.Template.Load.Scenarios {
		if sc.ArrivalRate == nil {
			continue
		}
		per := time.Second
		if sc.ArrivalRate.TimeUnit != nil {
			per = sc.ArrivalRate.TimeUnit.Duration
		}
		name := per.String()
		if strings.HasSuffix(name, "m0s") {
			name = strings.TrimSuffix(name, "0s")
		}
		if strings.HasSuffix(name, "h0m") {
			name = strings.TrimSuffix(name, "0m")
		}
		switch per {
		case time.Second:
			name = "s"
		case time.Minute:
			name = "min"
		case time.Hour:
			name = "h"
		}
		switch {
		case unit == "":
			unit = name
		case unit != name:
			return "iterations/timeUnit"
		}
	}
	if unit == "" {
		return "iterations/timeUnit"
	}
	return "iterations/" + unit
}

// capacitySummary is the answer in a few words: "48-50 VUs", ">= 200 VUs", "< 5 VUs".
func capacitySummary(unit string, held, broke *int32) string {
	switch {
	case held != nil && broke != nil:
		return fmt.Sprintf("%d-%d %s", *held, *broke, unit)
	case held != nil:
		return fmt.Sprintf(">= %d %s", *held, unit)
	case broke != nil:
		return fmt.Sprintf("< %d %s", *broke, unit)
	}
	return ""
}

// CapacityReport builds a finished search's results: every probe's objectives and statistics,
// the answer, and the limiting factor at the first load that broke.
func CapacityReport(s *perfexpv1alpha1.PerfSweep, p *Plan, outcomes map[string]Outcome) *report.CapacityResult {
	search := Search(s)
	st := s.Status.Capacity
	out := &report.CapacityResult{Sweep: s.Name, Namespace: s.Namespace, Parameter: s.Spec.Capacity.Parameter,
		Min: search.Min, Max: search.Max, ResolutionPercent: search.ResolutionPercent, MaxProbes: search.MaxProbes, MaxRepeats: search.MaxRepeats}
	if st == nil {
		return out
	}
	out.Summary, out.StopReason, out.LastHeld, out.FirstBroken = st.Summary, st.StopReason, st.LastHeld, st.FirstBroken
	if s.Spec.Capacity.Variant != nil {
		param, value := describe(s.Spec.Capacity.Variant, nil)
		out.Variant = param + " = " + value
	}
	var brokeResults, heldResults []*result.Result
	for _, pr := range st.Probes {
		arm := ProbeArm(s.Spec.Capacity.Parameter, pr.Load)
		rs := probeResults(p, arm, outcomes)
		probe := report.CapacityProbe{Load: int64(pr.Load), Outcome: string(pr.Outcome), Why: pr.Message}
		var used []*result.Result
		for i, r := range p.RunsOf(arm) {
			probe.Experiments = append(probe.Experiments, r.Name)
			if rs[i] != nil {
				used = append(used, rs[i])
			}
		}
		probe.Succeeded = len(used)
		probe.Scenarios = scenarioMeans(used)
		j := judgesearch.DecideProbe(s.Spec.Template.Analysis.Objectives, rs, judgestats.Look{K: len(rs), Max: search.MaxRepeats})
		probe.Objectives, probe.Limiting = j.Objectives, j.Limiting
		if st.LastHeld != nil && pr.Load == *st.LastHeld {
			heldResults = used
		}
		if st.FirstBroken != nil && pr.Load == *st.FirstBroken {
			brokeResults = used
			out.LimitingObjective = j.Limiting
		}
		out.Probes = append(out.Probes, probe)
	}
	slices.SortStableFunc(out.Probes, func(a, b report.CapacityProbe) int { return cmp.Compare(a.Load, b.Load) })
	out.LimitingWorkload = limitingWorkload(brokeResults)
	if st.LastHeld != nil && st.FirstBroken != nil {
		out.RisingWorkload = risingWorkload(heldResults, brokeResults, *st.LastHeld, *st.FirstBroken, capacityUnit(s))
	}
	st.LimitingFactor = text.Truncate(out.LimitingFactor(), 512)
	if b := search.Bracket(judgeProbes(st.Probes)); len(b.Inverted) > 0 {
		out.Notes = append(out.Notes, fmt.Sprintf("the objectives held again at %v, above the lowest load that broke (%d): noise, or a system whose behaviour is not monotonic in load; the capacity is read below the first break",
			b.Inverted, b.Broke.Load))
	}
	return out
}

// limitingWorkload names the workload most in the way at the first load that broke: the most
// throttled (throttled CFS periods, a CPU limit biting), else the highest share of its CPU
// limit, else of its memory limit; empty when the results show none above a tenth.
func limitingWorkload(runs []*result.Result) string {
	type acc struct{ throttled, cpu, mem []float64 }
	byName := map[string]*acc{}
	var names []string
	for _, r := range runs {
		for _, w := range r.Workloads {
			key := w.Kind + "/" + w.Name
			a, ok := byName[key]
			if !ok {
				a = &acc{}
				byName[key] = a
				names = append(names, key)
			}
			if w.CPUThrottledPercent != nil {
				a.throttled = append(a.throttled, *w.CPUThrottledPercent)
			}
			if w.CPUPercentOfLimit != nil {
				a.cpu = append(a.cpu, *w.CPUPercentOfLimit)
			}
			if w.MemoryPercentOfLimit != nil {
				a.mem = append(a.mem, *w.MemoryPercentOfLimit)
			}
		}
	}
	slices.Sort(names)
	best := func(pick func(*acc) []float64, min float64) (string, float64) {
		name, top := "", math.Inf(-1)
		for _, n := range names {
			if m := mean(pick(byName[n])); m != nil && *m > top {
				name, top = n, *m
			}
		}
		if top < min {
			return "", 0
		}
		return name, top
	}
	if n, v := best(func(a *acc) []float64 { return a.throttled }, 10); n != "" {
		return fmt.Sprintf("%s: %.0f %% of its CPU periods throttled", n, v)
	}
	if n, v := best(func(a *acc) []float64 { return a.cpu }, 80); n != "" {
		return fmt.Sprintf("%s: CPU at %.0f %% of its limit", n, v)
	}
	if n, v := best(func(a *acc) []float64 { return a.mem }, 80); n != "" {
		return fmt.Sprintf("%s: memory at %.0f %% of its limit", n, v)
	}
	return ""
}

// Thresholds of risingWorkload: a rise smaller than either is not worth naming.
const (
	risingMinCores   = 0.1
	risingMinPercent = 25.0
)

// risingWorkload names the workload without a CPU limit whose mean CPU rose most (in cores)
// from the last load that held to the first that broke: a database or broker with no limit
// never shows in limitingWorkload's limit shares, yet its CPU is often what runs out. Empty
// unless the rise is at least risingMinCores and risingMinPercent of the held load's use.
func risingWorkload(held, broke []*result.Result, heldLoad, brokeLoad int32, unit string) string {
	type use struct{ cpu []float64 }
	collect := func(rs []*result.Result) (map[string]*use, []string) {
		m := map[string]*use{}
		var names []string
		for _, r := range rs {
			for _, w := range r.Workloads {
				if w.CPULimit != nil || w.CPUAvg == nil {
					continue
				}
				key := w.Kind + "/" + w.Name
				u, ok := m[key]
				if !ok {
					u = &use{}
					m[key] = u
					names = append(names, key)
				}
				u.cpu = append(u.cpu, *w.CPUAvg)
			}
		}
		slices.Sort(names)
		return m, names
	}
	before, _ := collect(held)
	after, names := collect(broke)
	best, bestRise := "", 0.0
	var from, to float64
	for _, n := range names {
		b, ok := before[n]
		if !ok {
			continue
		}
		mb, ma := mean(b.cpu), mean(after[n].cpu)
		if mb == nil || ma == nil {
			continue
		}
		rise := *ma - *mb
		if rise < risingMinCores || (*mb > 0 && rise/(*mb)*100 < risingMinPercent) || rise <= bestRise {
			continue
		}
		best, bestRise, from, to = n, rise, *mb, *ma
	}
	if best == "" {
		return ""
	}
	return fmt.Sprintf("%s: CPU %.2f -> %.2f cores from %d to %d %s (no CPU limit)", best, from, to, heldLoad, brokeLoad, unit)
}
