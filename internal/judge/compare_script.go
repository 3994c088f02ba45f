package judge

import (
	"fmt"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/result"
)

// orientCounter turns a Counter row's verdict, decided as "an increase is worse", to the
// direction the experiment's objectives on that Counter give (max or maxIncreasePercent: lower
// is better; min or maxDecreasePercent: higher is better). Without one, or when they disagree,
// a change beyond ±δ is not called Regressed or Improved: whether more is worse is the
// script's to say (more stuck refreshes is worse, more baskets better), as for a custom Rate or
// Gauge (compare_custom.go). Other rows are left as they are.
func (w row) orientCounter(mc *result.MetricComparison, objectives []perfexpv1alpha1.Objective) {
	if w.counter == "" {
		return
	}
	orient(mc, boundDirection(objectives, func(o perfexpv1alpha1.Objective) bool {
		return o.Metric == perfexpv1alpha1.MetricCount && o.Scenario == w.scenario && o.Counter == w.counter
	}))
}

// counterUnit is the unit of a Counter's compared rate: the Counter's own unit per second.
const counterUnit = "/s"

// scriptRows are the rows of each scenario's iteration duration (p95 and avg) and of its
// Counters, where both runs have them.
func scriptRows(r, base *result.Result) []row {
	var out []row
	for _, s := range r.Scenarios {
		if s.IterationDuration == nil {
			continue
		}
		if st, _ := base.IterationStats(s.Name); st == nil {
			continue
		}
		for _, m := range transactionMetrics {
			out = append(out, row{scenario: s.Name, iteration: true, kind: m})
		}
	}
	return append(out, counterRows(r, base)...)
}

// counterRows are the rows of each scenario's Counters found in both runs, in the report's
// order and within its cap (result.MaxCustomNames).
func counterRows(r, base *result.Result) []row {
	var out []row
	for _, s := range r.Scenarios {
		n := 0
		for _, c := range s.Counters {
			if n == result.MaxCustomNames {
				break
			}
			if base.CounterStats(s.Name, c.Name) == nil {
				continue
			}
			n++
			out = append(out, row{scenario: s.Name, counter: c.Name, kind: perfexpv1alpha1.MetricCount})
		}
	}
	return out
}

// compared is the value a row compares in a run: a Counter's rate, or the row's statistic
// (the successful requests' latency with successfulOnly).
func (w row) compared(r *result.Result, successfulOnly bool) *float64 {
	if k := w.workload; k.name != "" {
		return workloadValue(findWorkloadResult(r, result.WorkloadResult{Kind: k.kind, Namespace: k.namespace, Name: k.name}), w.kind)
	}
	if w.query != "" {
		if q := r.Query(w.query); q != nil {
			return q.Value
		}
		return nil
	}
	if w.counter != "" {
		if st := w.stats(r); st != nil {
			return st.Rate
		}
		return nil
	}
	return comparedStat(w.stats(r), w.kind, successfulOnly)
}

// bootstrapKind is the statistic the single-run bootstrap estimates for a row: a Counter's
// increments are resampled like request counts, so its rate.
func (w row) bootstrapKind() perfexpv1alpha1.ObjectiveMetric {
	if w.counter != "" {
		return perfexpv1alpha1.MetricRate
	}
	return w.kind
}

// noEffectWhy says why a single-run row has no estimate, more precisely than the bootstrap's
// why where the row's kind knows more.
func (w row) noEffectWhy(why string, r, base *result.Result) string {
	switch {
	case w.iteration && why == noIntervalsWhy:
		return "no per-interval iteration durations in one of the runs (its results were analysed by an older perfexp, which did not keep them): repeat the runs, which compare iteration durations run by run"
	case w.counter != "" && why == noIntervalsWhy:
		return fmt.Sprintf("no per-interval data for Counter %q in one of the runs (analysed by an older perfexp, or beyond the %d series results.json keeps): repeat the runs, which compare it run by run", w.counter, result.MaxStoredSeries)
	case w.counter != "":
		for _, x := range []*result.Result{r, base} {
			if v := w.compared(x, false); v != nil && *v == 0 {
				return fmt.Sprintf("Counter %q counted nothing in one of the runs: a rate of zero has no ratio", w.counter)
			}
		}
	}
	return why
}
