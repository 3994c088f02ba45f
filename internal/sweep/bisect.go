package sweep

import (
	"fmt"
	"slices"
	"strings"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/judge"
	judgesearch "github.com/perfexp/perfexp/internal/judge/search"
	judgestats "github.com/perfexp/perfexp/internal/judge/stats"
	"github.com/perfexp/perfexp/internal/report"
	"github.com/perfexp/perfexp/internal/result"
	"github.com/perfexp/perfexp/internal/text"
)

// A bisect is a sweep whose arms come in pairs chosen one step after another: step k applies
// the new images of a set of services (arm step-k) and is compared with the old release (arm
// step-k-baseline), both run in blocks of one run each, looked at after bisectFirstLook repeats
// and after every further one. The steps live in the sweep's status, so the plan is rebuilt
// from it on every reconcile, and a restarted operator finds the same runs by name.

// bisectFirstLook is the repeats of a step before its first look.
const bisectFirstLook = 3

// BisectBudget is the bisect's repeat budget per step and its step budget.
func BisectBudget(s *perfexpv1alpha1.PerfSweep) (repeats, steps int) {
	repeats, steps = int(s.Spec.Bisect.MaxRepeats), int(s.Spec.Bisect.MaxSteps)
	if repeats == 0 {
		repeats = 10
	}
	if steps == 0 {
		steps = 10
	}
	return max(repeats, bisectFirstLook), steps
}

func bisectArms(k int) (step, baseline string) {
	step = fmt.Sprintf("step-%d", k)
	return step, step + "-" + perfexpv1alpha1.BaselineArm
}

// bisectVariant sets every service's image: the new one for the services in set, the old one
// for the others.
func bisectVariant(services []perfexpv1alpha1.BisectService, set []int32, description string) *perfexpv1alpha1.Variant {
	v := &perfexpv1alpha1.Variant{Description: text.Truncate(description, 256)}
	for i, svc := range services {
		img := svc.Baseline
		if slices.Contains(set, int32(i)) {
			img = svc.Candidate
		}
		v.Workloads = append(v.Workloads, perfexpv1alpha1.WorkloadChange{
			WorkloadSelector: perfexpv1alpha1.WorkloadSelector{Kind: svc.Kind, Names: []string{svc.Name}},
			Containers:       []string{svc.Container}, Image: img})
	}
	return v
}

// NewBisectPlan is a bisect's plan: two arms per step in its status (the step's images and the
// old release), with one run of each per repeat, in an order that alternates between repeats.
func NewBisectPlan(s *perfexpv1alpha1.PerfSweep) *Plan {
	p := &Plan{}
	if s.Status.Bisect == nil {
		return p
	}
	svcs := s.Spec.Bisect.Services
	for i, st := range s.Status.Bisect.Steps {
		name, baseName := bisectArms(i + 1)
		base := Arm{Name: baseName, Parameter: "images", Value: "baseline release",
			Variant: bisectVariant(svcs, nil, fmt.Sprintf("bisect %s, step %d: every service at its baseline image", s.Name, i+1))}
		arm := Arm{Name: name, Parameter: "new images", Value: text.Truncate(st.Description, 120), Baseline: baseName,
			Variant: bisectVariant(svcs, st.Services, fmt.Sprintf("bisect %s, step %d: new images of %s", s.Name, i+1, st.Description))}
		p.Arms = append(p.Arms, base, arm)
		for r := 1; r <= int(st.Repeats); r++ {
			b := Run{Arm: baseName, Repeat: r, Name: RunName(s.Name, baseName, r)}
			c := Run{Arm: name, Repeat: r, Name: RunName(s.Name, name, r), Baseline: b.Name}
			pair := []Run{b, c}
			if r%2 == 0 {
				// Alternate which runs first, so a drift within a block does not always favour one.
				pair = []Run{c, b}
			}
			for _, run := range pair {
				run.Sequence = len(p.Runs)
				p.Runs = append(p.Runs, run)
			}
		}
	}
	return p
}

// AdvanceBisect judges the running step from its ended runs and moves the bisect on in the
// sweep's status: another repeat of the step, a new step, or the answer. Every planned run must
// have ended. It returns whether the bisect is done, and what it decided, for the log.
func AdvanceBisect(s *perfexpv1alpha1.PerfSweep, p *Plan, outcomes map[string]Outcome) (bool, string) {
	if s.Status.Bisect == nil {
		s.Status.Bisect = &perfexpv1alpha1.SweepBisectStatus{}
	}
	st := s.Status.Bisect
	maxRepeats, maxSteps := BisectBudget(s)
	if n := len(st.Steps); n > 0 && st.Steps[n-1].Outcome == "" {
		step := &st.Steps[n-1]
		c := bisectComparison(s, p, n, outcomes)
		o := judgesearch.BisectOutcomeOf(c, int(step.Repeats) >= maxRepeats)
		step.Message = text.Truncate(stepMessage(c), 512)
		if o == judgesearch.BisectPending {
			step.Repeats++
			return false, fmt.Sprintf("step %d: another repeat (%s)", n, step.Message)
		}
		step.Outcome = perfexpv1alpha1.BisectStepOutcome(o)
	}
	names := bisectNames(s.Spec.Bisect.Services)
	var steps []judgesearch.BisectStep
	for _, step := range st.Steps {
		var set []string
		for _, i := range step.Services {
			set = append(set, names[i])
		}
		steps = append(steps, judgesearch.BisectStep{Set: set, Outcome: judgesearch.BisectOutcome(step.Outcome)})
	}
	ans := judgesearch.BisectNext(names, steps)
	if !ans.Done && len(st.Steps) >= maxSteps {
		ans.Done, ans.Why = true, fmt.Sprintf("the budget of %d steps is spent; culprits found so far: %s", maxSteps, orNoneList(ans.Culprits))
	}
	if !ans.Done {
		var idx []int32
		for _, n := range ans.Next {
			idx = append(idx, int32(slices.Index(names, n)))
		}
		slices.Sort(idx)
		st.Steps = append(st.Steps, perfexpv1alpha1.BisectStepStatus{Services: idx, Description: text.Truncate(describeSet(ans.Next, len(names)), 256), Repeats: bisectFirstLook})
		return false, fmt.Sprintf("step %d applies the new images of %s", len(st.Steps), describeSet(ans.Next, len(names)))
	}
	st.Culprits, st.Interaction, st.StopReason = ans.Culprits, ans.Interaction, text.Truncate(ans.Why, 512)
	switch {
	case len(ans.Culprits) == 0:
		st.Summary = "none found"
	case ans.Interaction:
		st.Summary = text.Truncate(strings.Join(ans.Culprits, " + ")+" (together)", 128)
	default:
		st.Summary = text.Truncate(strings.Join(ans.Culprits, ", "), 128)
	}
	return true, ans.Why
}

// bisectComparison compares step k's runs with its baseline runs, at the step's look.
func bisectComparison(s *perfexpv1alpha1.PerfSweep, p *Plan, k int, outcomes map[string]Outcome) *result.Comparison {
	name, baseName := bisectArms(k)
	maxRepeats, _ := BisectBudget(s)
	design := &judge.Design{Blocks: map[string]int{}}
	collect := func(arm string) []*result.Result {
		var out []*result.Result
		for _, run := range p.RunsOf(arm) {
			if o := outcomes[run.Name]; o.Phase == perfexpv1alpha1.PhaseSucceeded && o.Result != nil {
				out = append(out, o.Result)
				design.Blocks[o.Result.Experiment] = run.Repeat
			}
		}
		return out
	}
	base, cur := collect(baseName), collect(name)
	design.Arms = [][]*result.Result{base, cur}
	repeats := len(p.RunsOf(name))
	look := judgestats.Look{K: repeats - bisectFirstLook + 1, Max: maxRepeats - bisectFirstLook + 1}
	opts := judge.CompareOptions{MinChangePercent: minChange(s), Design: design, Alpha: look.Alpha()}
	if a := s.Spec.Template.Analysis; a != nil {
		fromTemplate, _ := judge.OptionsFor(*a)
		opts.BetweenRun, opts.MaxNodeLoadDifference, opts.Primary = fromTemplate.BetweenRun, fromTemplate.MaxNodeLoadDifference, fromTemplate.Primary
	}
	return judge.CompareRuns(base, cur, opts)
}

// stepMessage is a step's comparison in one line: the headline and each primary latency's
// change with its interval.
func stepMessage(c *result.Comparison) string {
	if c == nil {
		return "no comparison"
	}
	parts := []string{string(c.Change)}
	for _, m := range c.Metrics {
		if m.Primary && m.Low != nil && m.High != nil && m.DeltaPercent != nil && m.Kind != perfexpv1alpha1.MetricErrorRate {
			parts = append(parts, fmt.Sprintf("%s %+.1f %% [%+.1f, %+.1f]", m.Metric, *m.DeltaPercent, *m.Low, *m.High))
		}
	}
	if c.Message != "" {
		parts = append(parts, c.Message)
	}
	return strings.Join(parts, "; ")
}

func bisectNames(svcs []perfexpv1alpha1.BisectService) []string {
	out := make([]string, len(svcs))
	for i, s := range svcs {
		out[i] = s.Name
	}
	return out
}

// describeSet names a step's services: all of them, or the names, shortened.
func describeSet(set []string, total int) string {
	if len(set) == total {
		return fmt.Sprintf("all %d services", total)
	}
	const shown = 6
	if len(set) <= shown {
		return strings.Join(set, ", ")
	}
	return fmt.Sprintf("%s and %d more (%d of %d)", strings.Join(set[:shown], ", "), len(set)-shown, len(set), total)
}

func orNoneList(s []string) string {
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, ", ")
}

// BisectReport builds a finished bisect's results: every step with its comparison and runs,
// and the answer.
func BisectReport(s *perfexpv1alpha1.PerfSweep, p *Plan, outcomes map[string]Outcome) *report.BisectResult {
	out := &report.BisectResult{Sweep: s.Name, Namespace: s.Namespace}
	names := bisectNames(s.Spec.Bisect.Services)
	for _, svc := range s.Spec.Bisect.Services {
		out.Services = append(out.Services, report.BisectService{Name: svc.Name, Container: svc.Container, Baseline: svc.Baseline, Candidate: svc.Candidate})
	}
	st := s.Status.Bisect
	if st == nil {
		return out
	}
	out.Culprits, out.Interaction, out.Summary, out.StopReason = st.Culprits, st.Interaction, st.Summary, st.StopReason
	for k, step := range st.Steps {
		name, baseName := bisectArms(k + 1)
		rs := report.BisectStep{Outcome: string(step.Outcome), Message: step.Message}
		for _, i := range step.Services {
			rs.Services = append(rs.Services, names[i])
		}
		for _, run := range p.RunsOf(name) {
			rs.Experiments = append(rs.Experiments, run.Name)
		}
		for _, run := range p.RunsOf(baseName) {
			rs.BaselineExperiments = append(rs.BaselineExperiments, run.Name)
		}
		rs.Comparison = bisectComparison(s, p, k+1, outcomes)
		out.Steps = append(out.Steps, rs)
	}
	return out
}
