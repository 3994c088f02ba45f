package sweep

import (
	"fmt"
	"math"
	"slices"
	"strings"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/judge"
	"github.com/perfexp/perfexp/internal/judge/findings"
	judgestats "github.com/perfexp/perfexp/internal/judge/stats"
	"github.com/perfexp/perfexp/internal/report"
	"github.com/perfexp/perfexp/internal/result"
)

// Outcome is what one ended run left: its phase and, when it succeeded, its results.
type Outcome struct {
	Phase perfexpv1alpha1.Phase
	// Result is the run's results.json; nil when it has none.
	Result *result.Result
	// Seconds is how long the run held the environment (EnvironmentTime: from leaving the
	// queue to the restored environment).
	Seconds float64
}

// Noise is, by arm name, the between-run noise learned from the PerfHistory segments of the
// arm's configuration and of its baseline's (history.ReadNoise, read by the controller). An
// arm's one-run comparison holds it when the template sets no betweenRun; an arm without an
// entry takes the default.
type Noise map[string]*judge.HistoryNoise

// LearnsNoise reports whether the sweep's one-run comparisons take their between-run noise
// from the history: when the template's analysis sets no betweenRun (an explicit value wins).
func LearnsNoise(s *perfexpv1alpha1.PerfSweep) bool {
	a := s.Spec.Template.Analysis
	if a == nil {
		return true
	}
	o, _ := judge.OptionsFor(*a)
	return o.BetweenRun == nil
}

// OneRunArms are the arms compared one run against one: the arm and its baseline each have
// exactly one succeeded run with results. Only their comparisons use Noise, so the controller
// reads the histories of these arms alone.
func OneRunArms(p *Plan, outcomes map[string]Outcome) map[string]bool {
	succeeded := func(arm string) int {
		n := 0
		for _, run := range p.RunsOf(arm) {
			if o, ok := outcomes[run.Name]; ok && o.Phase == perfexpv1alpha1.PhaseSucceeded && o.Result != nil {
				n++
			}
		}
		return n
	}
	out := map[string]bool{}
	for _, arm := range p.Arms {
		if arm.Baseline != "" && succeeded(arm.Name) == 1 && succeeded(arm.Baseline) == 1 {
			out[arm.Name] = true
		}
	}
	return out
}

// Compare builds the sweep's results once every run has ended: each arm's statistics (means
// over its runs), the comparison of each arm's runs with the baseline's runs, the multiplicity
// control across arms, and the best arm. Runs that did not succeed, or left no results, are
// left out and named in the notes. noise is the between-run noise of each arm's one-run
// comparison, used as a single experiment's analysis uses its history: only when the template
// sets no betweenRun.
func Compare(s *perfexpv1alpha1.PerfSweep, p *Plan, outcomes map[string]Outcome, noise Noise) *report.SweepResult {
	out := &report.SweepResult{
		Sweep: s.Name, Namespace: s.Namespace, Repeats: PlannedRepeats(s),
		MinMeaningfulChangePercent: minChange(s), LoadParameter: p.LoadParameter, Report: s.Spec.Report,
	}
	results := map[string][]*result.Result{}
	design := &judge.Design{Blocks: map[string]int{}, FixedOrder: s.Spec.Order == perfexpv1alpha1.SweepOrderInterleaved}
	validOf := make([][]*result.Result, 0, len(p.Arms))
	for _, arm := range p.Arms {
		a := report.SweepArmResult{Name: arm.Name, Parameter: arm.Parameter, Value: arm.Value, LoadValue: arm.LoadValue, Baseline: arm.Baseline}
		for _, run := range p.RunsOf(arm.Name) {
			a.Experiments = append(a.Experiments, run.Name)
			o, ok := outcomes[run.Name]
			switch {
			case !ok:
				out.Notes = append(out.Notes, fmt.Sprintf("run %s does not exist; it is left out", run.Name))
			case o.Phase != perfexpv1alpha1.PhaseSucceeded:
				out.Notes = append(out.Notes, fmt.Sprintf("run %s ended %s; it is left out", run.Name, o.Phase))
			case o.Result == nil:
				out.Notes = append(out.Notes, fmt.Sprintf("run %s succeeded but its results (report ConfigMap, results.json) could not be read; it is left out", run.Name))
			default:
				results[arm.Name] = append(results[arm.Name], o.Result)
				design.Blocks[o.Result.Experiment] = run.Repeat
				a.Succeeded++
			}
		}
		// The table shows the runs the comparison compares: Valid ones (judge.CompareRuns
		// leaves the others out, and its notes say so).
		valid := make([]*result.Result, 0, len(results[arm.Name]))
		for _, r := range results[arm.Name] {
			if r.Validity == perfexpv1alpha1.Valid {
				valid = append(valid, r)
				continue
			}
			out.Notes = append(out.Notes, fmt.Sprintf("run %s's results are not Valid (%s); the table and the comparisons leave it out", r.Experiment, strings.Join(r.InvalidReasons, "; ")))
		}
		a.Scenarios = scenarioMeans(valid)
		a.Workloads, a.Queries = workloadMeans(valid), queryMeans(valid)
		a.Routes = routeMeans(valid)
		out.Arms = append(out.Arms, a)
		validOf = append(validOf, valid)
	}
	// A Counter is read as 0 in a run of its scenario without it once any run of the sweep has
	// it (transactionMeans), so the tables are filled once every arm's runs are known.
	counters := sweepCounters(validOf...)
	for i := range out.Arms {
		out.Arms[i].Transactions = transactionMeans(validOf[i], counters)
	}

	opts := judge.CompareOptions{MinChangePercent: out.MinMeaningfulChangePercent}
	if a := s.Spec.Template.Analysis; a != nil {
		// The environment's calibrated run-to-run noise and node-load limit hold for a sweep
		// of one run per arm as for one experiment.
		fromTemplate, _ := judge.OptionsFor(*a)
		opts.BetweenRun, opts.MaxNodeLoadDifference = fromTemplate.BetweenRun, fromTemplate.MaxNodeLoadDifference
		// Every arm is decided on the template's primary metrics: its headline, the Holm family
		// across the arms and the sequential looks' stopping all read them.
		opts.Primary = fromTemplate.Primary
	}
	// compare judges the given arms (indexes into out.Arms) on the runs of the first n blocks.
	compare := func(look *judgestats.Look, n int, arms []int) []*result.Comparison {
		d := &judge.Design{Blocks: design.Blocks, FixedOrder: design.FixedOrder}
		for _, arm := range p.Arms {
			d.Arms = append(d.Arms, upTo(results[arm.Name], design.Blocks, n))
		}
		o := opts
		o.Design, o.Look = d, look
		cs := make([]*result.Comparison, 0, len(arms))
		for _, i := range arms {
			a := &out.Arms[i]
			oa := o
			if oa.BetweenRun == nil {
				oa.History = noise[a.Name]
			}
			cs = append(cs, judge.CompareRuns(upTo(results[a.Baseline], design.Blocks, n), upTo(results[a.Name], design.Blocks, n), oa))
		}
		return cs
	}
	var compared, loadOnly []int
	for i := range out.Arms {
		switch {
		case out.Arms[i].Baseline == "":
		case p.Arms[i].LoadOnly:
			loadOnly = append(loadOnly, i)
		default:
			compared = append(compared, i)
		}
	}
	if stopping, ok := Stopping(s); ok {
		judgeSequential(s, p, out, stopping, compared, compare, outcomes)
		// Arms that change only the load are not decided by any look: they run as long as
		// the sweep does and are compared on all its repeats.
		if len(loadOnly) > 0 {
			look := stopping.LookAt(PlannedRepeats(s))
			cs := compare(&look, PlannedRepeats(s), loadOnly)
			judge.AdjustArmsLook(cs, look)
			for j, i := range loadOnly {
				out.Arms[i].Comparison = cs[j]
			}
		}
	} else {
		compared = append(compared, loadOnly...)
		slices.Sort(compared)
		cs := compare(nil, PlannedRepeats(s), compared)
		judge.AdjustArms(cs)
		for j, i := range compared {
			out.Arms[i].Comparison = cs[j]
		}
		out.Notes = append(out.Notes, fmt.Sprintf("each arm's runs were compared with the baseline's runs (%d per arm), "+
			"with a multiplicity control across the %d arms; see each verdict's message", out.Repeats, len(compared)))
	}
	if n := podAgeNote(s, p, results); n != "" {
		out.Notes = append(out.Notes, n)
	}
	armFindings := make([]findings.Arm, 0, len(out.Arms))
	for _, a := range out.Arms {
		if a.Comparison != nil {
			findings.MarkArm(a.Comparison, results[a.Name], results[a.Baseline])
		}
		armFindings = append(armFindings, findings.Arm{Name: a.Name, Baseline: a.Baseline, Comparison: a.Comparison, Runs: results[a.Name]})
	}
	out.Findings = findings.Sweep(armFindings)
	out.BestArm = bestArm(out.Arms)
	return out
}

// judgeSequential replays a sequential sweep's looks (judge.DecideArms): each arm gets the
// comparison of the look that decided it, frozen there, or of the last look, and says how many
// runs and how much environment time its decision took.
func judgeSequential(s *perfexpv1alpha1.PerfSweep, p *Plan, out *report.SweepResult, stopping judgestats.Stopping,
	compared []int, compare func(look *judgestats.Look, n int, arms []int) []*result.Comparison, outcomes map[string]Outcome) {
	stoppedAfter := StoppedAfter(s)
	stopped := make([]int, len(compared))
	for j, i := range compared {
		stopped[j] = stoppedAfter[out.Arms[i].Name]
	}
	decisions := judge.DecideArms(stopping, PlannedRepeats(s), stopped, len(compared), func(look judgestats.Look, n int, arms []int) []*result.Comparison {
		idx := make([]int, len(arms))
		for k, j := range arms {
			idx[k] = compared[j]
		}
		cs := compare(&look, n, idx)
		judge.AdjustArmsLook(cs, look)
		return cs
	})
	for j, i := range compared {
		a, d := &out.Arms[i], decisions[j]
		a.Comparison = d.Comparison
		a.Decision = &report.SweepDecision{Decided: d.Decided, Repeats: d.Blocks}
		if d.Comparison != nil {
			a.Decision.Change = d.Comparison.Change
		}
		if rec := recordedChange(s, a.Name); rec != "" && rec != a.Decision.Change {
			// Only a change in the runs' results (a report re-read differently) can do this.
			out.Notes = append(out.Notes, fmt.Sprintf("arm %s stopped with the verdict %s after %d repeats; its runs' results now read %s on the same repeats",
				a.Name, rec, d.Blocks, a.Decision.Change))
		}
		look := stopping.LookAt(d.Blocks)
		a.Decision.Look, a.Decision.Alpha = look.K, look.Alpha()
		for _, run := range p.RunsOf(a.Name) {
			if run.Repeat <= d.Blocks {
				a.Decision.Runs++
				a.Decision.BaselineRuns++
				a.Decision.EnvironmentSeconds += outcomes[run.Name].Seconds + outcomes[run.Baseline].Seconds
			}
		}
	}
	out.Notes = append(out.Notes, sequentialNote(s, p, stopping, len(compared)))
}

// recordedChange is the verdict an arm of a sequential sweep was stopped with, or "".
func recordedChange(s *perfexpv1alpha1.PerfSweep, arm string) perfexpv1alpha1.Change {
	if st := s.Status.Sequential; st != nil {
		for _, a := range st.Arms {
			if a.Name == arm {
				return a.Change
			}
		}
	}
	return ""
}

// upTo is the runs of the first n blocks.
func upTo(rs []*result.Result, blocks map[string]int, n int) []*result.Result {
	out := make([]*result.Result, 0, len(rs))
	for _, r := range rs {
		if b, ok := blocks[r.Experiment]; ok && b <= n {
			out = append(out, r)
		}
	}
	return out
}

// sequentialNote says how far a sequential sweep went and how its arms stopped (the controller
// adds why it stopped).
func sequentialNote(s *perfexpv1alpha1.PerfSweep, p *Plan, stopping judgestats.Stopping, arms int) string {
	how := ""
	if Auto(s) {
		how = " (the default for a sweep that sets neither repeats nor sequential: repeats auto)"
	}
	n := PlannedRepeats(s)
	ran := fmt.Sprintf("%d repeats of every arm ran (%d runs)", n, len(p.Runs))
	if len(p.Runs) < n*len(p.Arms) {
		ran = fmt.Sprintf("%d repeats ran (%d runs; arms decided earlier stopped there)", n, len(p.Runs))
	}
	return fmt.Sprintf("sequential%s: %s, %s; first look after %d repeats. At each look the arms not yet decided are judged on the repeats so far, "+
		"with Holm across them (%d arms at the first look). An arm stops getting runs at the look where its verdict is decisive and keeps that look's comparison: "+
		"later repeats are not used for it. The baseline runs on while any arm does, so every comparison pairs an arm's runs with the baseline's runs of the same repeats",
		how, ran, stopping.LookAt(n), stopping.First, arms)
}

// Decided reports whether every arm compared with a baseline is decided: by the decision of a
// sequential sweep's look (judge.DecideArms), else by a decisive headline. In a sequential
// sweep's results only the arms with a decision count: an arm that changes only
// the load has none (nothing to decide), and a sweep of such arms alone is decided at its first
// look.
func Decided(r *report.SweepResult) bool {
	sequential := slices.ContainsFunc(r.Arms, func(a report.SweepArmResult) bool { return a.Decision != nil })
	for _, a := range r.Arms {
		switch {
		case a.Baseline == "":
		case a.Decision != nil:
			if !a.Decision.Decided {
				return false
			}
		case sequential:
		case !judge.Decisive(a.Comparison):
			return false
		}
	}
	return true
}

func minChange(s *perfexpv1alpha1.PerfSweep) float64 {
	if s.Spec.MinMeaningfulChangePercent > 0 {
		return float64(s.Spec.MinMeaningfulChangePercent)
	}
	return 5
}

// scenarioMeans averages each scenario's avg, p95, rate and error % over the runs that report
// it: latencies and rates by their geometric mean (the comparison's change is on the log scale),
// error rates by their arithmetic mean (as the comparison compares them). They are for the table
// and the charts; the changes and verdicts come from the comparison, whose paired fit weighs an
// outlying run down and pairs an arm that stopped early with the baseline's runs of its repeats
// only.
func scenarioMeans(runs []*result.Result) []report.SweepScenarioStats {
	var out []report.SweepScenarioStats
	index := map[string]int{}
	type sums struct{ avg, p95, rate, errs []float64 }
	var acc []sums
	for _, r := range runs {
		for _, sc := range r.Scenarios {
			i, ok := index[sc.Name]
			if !ok {
				i = len(out)
				index[sc.Name] = i
				out = append(out, report.SweepScenarioStats{Name: sc.Name})
				acc = append(acc, sums{})
			}
			out[i].Runs++
			add := func(dst *[]float64, v *float64) {
				if v != nil && !math.IsNaN(*v) && !math.IsInf(*v, 0) {
					*dst = append(*dst, *v)
				}
			}
			add(&acc[i].avg, sc.Avg)
			add(&acc[i].p95, sc.P95)
			add(&acc[i].rate, sc.Rate)
			add(&acc[i].errs, sc.ErrorPercent)
		}
	}
	for i := range out {
		out[i].Avg, out[i].P95, out[i].Rate, out[i].ErrorPercent = geomean(acc[i].avg), geomean(acc[i].p95), geomean(acc[i].rate), mean(acc[i].errs)
	}
	return out
}

func mean(vs []float64) *float64 {
	if len(vs) == 0 {
		return nil
	}
	s := 0.0
	for _, v := range vs {
		s += v
	}
	m := s / float64(len(vs))
	return &m
}

// geomean is the geometric mean of positive values; with a zero or negative value among them
// (no ratio to take) the arithmetic mean.
func geomean(vs []float64) *float64 {
	if len(vs) == 0 {
		return nil
	}
	s := 0.0
	for _, v := range vs {
		if v <= 0 {
			return mean(vs)
		}
		s += math.Log(v)
	}
	m := math.Exp(s / float64(len(vs)))
	return &m
}

// bestArm is the Improved arm whose scenarios' p95 fell the most on average (by the
// comparison's relative change). An arm that is not Improved is never best, however large
// its point estimate: the verdict already says the change is not established.
func bestArm(arms []report.SweepArmResult) string {
	best, bestDelta := "", math.Inf(1)
	for _, a := range arms {
		if a.Comparison == nil || a.Comparison.Change != perfexpv1alpha1.ChangeImproved {
			continue
		}
		var deltas []float64
		for _, m := range a.Comparison.Metrics {
			if m.Request == "" && m.Kind == perfexpv1alpha1.MetricP95 && m.DeltaPercent != nil {
				deltas = append(deltas, *m.DeltaPercent)
			}
		}
		d := 0.0
		if m := mean(deltas); m != nil {
			d = *m
		}
		if best == "" || d < bestDelta {
			best, bestDelta = a.Name, d
		}
	}
	return best
}
