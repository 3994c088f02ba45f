package sweep

import (
	"fmt"
	"math"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/analysis/result"
	"github.com/perfexp/perfexp/internal/judge"
	"github.com/perfexp/perfexp/internal/report"
)

// Outcome is what one ended run left: its phase and, when it succeeded, its results.
type Outcome struct {
	Phase perfexpv1alpha1.Phase
	// Result is the run's results.json; nil when it has none.
	Result *result.Result
}

// Compare builds the sweep's results once every run has ended: each arm's statistics (means
// over its runs), the comparison of each arm's runs with the baseline's runs, the multiplicity
// control across arms, and the best arm. Runs that did not succeed, or left no results, are
// left out and named in the notes.
func Compare(s *perfexpv1alpha1.PerfSweep, p *Plan, outcomes map[string]Outcome) *report.SweepResult {
	out := &report.SweepResult{
		Sweep: s.Name, Namespace: s.Namespace, Repeats: PlannedRepeats(s),
		MinMeaningfulChangePercent: minChange(s), LoadParameter: p.LoadParameter,
	}
	results := map[string][]*result.Result{}
	design := &judge.Design{Blocks: map[string]int{}}
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
		a.Scenarios = scenarioMeans(results[arm.Name])
		out.Arms = append(out.Arms, a)
	}

	for _, arm := range p.Arms {
		design.Arms = append(design.Arms, results[arm.Name])
	}
	opts := judge.CompareOptions{MinChangePercent: out.MinMeaningfulChangePercent, Design: design}
	if a := s.Spec.Template.Analysis; a != nil {
		// The environment's calibrated run-to-run noise and node-load limit hold for a sweep
		// of one run per arm as for one experiment.
		fromTemplate, _ := judge.OptionsFor(*a)
		opts.BetweenRun, opts.MaxNodeLoadDifference = fromTemplate.BetweenRun, fromTemplate.MaxNodeLoadDifference
	}
	look := Look(s)
	if look != nil {
		opts.Alpha = look.Alpha()
	}
	comparisons := make([]*result.Comparison, 0, len(out.Arms)-1)
	for i := range out.Arms {
		a := &out.Arms[i]
		if a.Baseline == "" {
			continue
		}
		a.Comparison = judge.CompareRuns(results[a.Baseline], results[a.Name], opts)
		comparisons = append(comparisons, a.Comparison)
	}
	if look != nil {
		judge.AdjustArmsAt(comparisons, look.Alpha())
		out.Notes = append(out.Notes, sequentialNote(s, look, len(p.Arms)))
	} else {
		judge.AdjustArms(comparisons)
	}
	out.BestArm = bestArm(out.Arms)
	out.Notes = append(out.Notes, fmt.Sprintf("each arm's runs were compared with the baseline's runs (%d per arm), "+
		"with a multiplicity control across the %d arms; see each verdict's message", out.Repeats, len(comparisons)))
	return out
}

// sequentialNote says how far a sequential sweep went (the controller adds why it stopped).
func sequentialNote(s *perfexpv1alpha1.PerfSweep, look *judge.Look, arms int) string {
	return fmt.Sprintf("sequential: %d repeats of every arm ran (%d runs), %s", PlannedRepeats(s), PlannedRepeats(s)*arms, look)
}

// Decided reports whether every arm compared with a baseline has a decisive headline.
func Decided(r *report.SweepResult) bool {
	for _, a := range r.Arms {
		if a.Baseline != "" && !judge.Decisive(a.Comparison) {
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
// it: latencies and rates by their geometric mean (the statistic the comparison's change is the
// ratio of), error rates by their arithmetic mean (as the comparison compares them). They are for
// the table and the charts; the verdicts come from the comparison.
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
