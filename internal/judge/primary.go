package judge

import (
	"fmt"
	"math"
	"strings"

	moremath "github.com/aclements/go-moremath/stats"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/result"
)

// betterEither is the direction of a TwoSided primary metric: a change either way is worse.
const betterEither = 2

// primaryMatch is one primary metric of the options that names a row, and the direction its
// change is judged in.
type primaryMatch struct {
	ok  bool
	dir int
}

// primaryIn is the first primary metric that match accepts, with its direction for a row of
// kind m.
func (o CompareOptions) primaryIn(m perfexpv1alpha1.ObjectiveMetric, match func(perfexpv1alpha1.PrimaryMetric) bool) primaryMatch {
	for _, p := range o.Primary {
		if p.Metric == m && match(p) {
			return primaryMatch{ok: true, dir: primaryDirection(p.Direction, m)}
		}
	}
	return primaryMatch{}
}

// primaryDirection is a primary metric's declared direction, or the one its kind makes
// obvious: throughput is better higher; latencies, error rates, CPU and memory lower. A
// Counter's, a custom Rate's or a query's has none (the API requires one).
func primaryDirection(d perfexpv1alpha1.MetricDirection, m perfexpv1alpha1.ObjectiveMetric) int {
	switch d {
	case perfexpv1alpha1.LowerIsBetter:
		return betterLower
	case perfexpv1alpha1.HigherIsBetter:
		return betterHigher
	case perfexpv1alpha1.TwoSided:
		return betterEither
	}
	switch m {
	case perfexpv1alpha1.MetricCount, perfexpv1alpha1.MetricPercent, perfexpv1alpha1.MetricQuery:
		return betterUnknown
	}
	return naturalDirection(m)
}

// naturalDirection is the direction decide judges a kind in.
func naturalDirection(m perfexpv1alpha1.ObjectiveMetric) int {
	if higherIsBetter(m) {
		return betterHigher
	}
	return betterLower
}

// namesRow says whether a primary metric names a scenario's, request's, group's, Trend's or
// Counter's row (its kind aside), not a custom Rate's, a query's or a workload's.
func namesRow(p perfexpv1alpha1.PrimaryMetric) bool {
	return p.Rate == "" && p.Query == "" && p.Workload == nil
}

// primaryRow is whether a row of a scenario, request, group, Trend or Counter is primary: by
// default each scenario's P95 and ErrorRate; with primaryMetrics, those they name, a metric of
// every scenario where one names none.
func (o CompareOptions) primaryRow(w row) primaryMatch {
	if w.query != "" {
		return o.primaryQuery(w.query)
	}
	if len(o.Primary) == 0 {
		if w.request == "" && w.scenario != "" && !w.transaction() && (w.kind == perfexpv1alpha1.MetricP95 || w.kind == perfexpv1alpha1.MetricErrorRate) {
			return primaryMatch{ok: true, dir: naturalDirection(w.kind)}
		}
		return primaryMatch{}
	}
	if w.iteration {
		return primaryMatch{}
	}
	return o.primaryIn(w.kind, func(p perfexpv1alpha1.PrimaryMetric) bool {
		if !namesRow(p) || p.Request != w.request || p.Group != w.group || p.Trend != w.trend || p.Counter != w.counter {
			return false
		}
		return p.Scenario == w.scenario || p.Scenario == "" && w.scenario != "" && w.request == "" && !w.transaction()
	})
}

// primaryCustom is whether a custom Rate's row is primary (checks and Gauges cannot be).
func (o CompareOptions) primaryCustom(w customRow) primaryMatch {
	if w.kind != result.KindRate {
		return primaryMatch{}
	}
	return o.primaryIn(w.metric, func(p perfexpv1alpha1.PrimaryMetric) bool { return p.Scenario == w.scenario && p.Rate == w.name })
}

// primaryQuery is whether a custom query's row is primary.
func (o CompareOptions) primaryQuery(name string) primaryMatch {
	return o.primaryIn(perfexpv1alpha1.MetricQuery, func(p perfexpv1alpha1.PrimaryMetric) bool { return p.Query == name })
}

// primaryWorkload is whether a workload's CPU or memory row is primary.
func (o CompareOptions) primaryWorkload(kind, namespace, name string, m perfexpv1alpha1.ObjectiveMetric) primaryMatch {
	return o.primaryIn(m, func(p perfexpv1alpha1.PrimaryMetric) bool {
		return p.Workload != nil && p.Route == "" && namesWorkload(*p.Workload, kind, namespace, name)
	})
}

// primaryRoute is whether a route's row (its workload named as "Deployment/shop/api") is
// primary.
func (o CompareOptions) primaryRoute(workload, route string, m perfexpv1alpha1.ObjectiveMetric) primaryMatch {
	parts := strings.SplitN(workload, "/", 3)
	if len(parts) != 3 {
		return primaryMatch{}
	}
	return o.primaryIn(m, func(p perfexpv1alpha1.PrimaryMetric) bool {
		return p.Route == route && p.Workload != nil && namesWorkload(*p.Workload, parts[0], parts[1], parts[2])
	})
}

// namesWorkload is whether a primary metric's workload is this one: kind (Deployment when
// unset) and name, and the namespace when it gives one.
func namesWorkload(w perfexpv1alpha1.MetricWorkload, kind, namespace, name string) bool {
	k := w.Kind
	if k == "" {
		k = perfexpv1alpha1.WorkloadKindDeployment
	}
	return string(k) == kind && w.Name == name && (w.Namespace == "" || w.Namespace == namespace)
}

// primaryWorkloadMetrics are the metrics of a workload that primary metrics name beyond the
// ones every workload is compared on (CPU as a share of its request).
func (o CompareOptions) primaryWorkloadMetrics(kind, namespace, name string) []perfexpv1alpha1.ObjectiveMetric {
	if o.primaryWorkload(kind, namespace, name, result.MetricCPUPercentOfRequest).ok {
		return append(append([]perfexpv1alpha1.ObjectiveMetric{}, workloadMetrics...), result.MetricCPUPercentOfRequest)
	}
	return workloadMetrics
}

// reorient turns a verdict decide made in direction natural to the direction want: the other
// way round, TwoSided (any change is Regressed), or unknown (a change is Inconclusive).
func reorient(mc *result.MetricComparison, natural, want int) {
	switch {
	case want == natural:
	case want == betterEither:
		twoSided(mc)
	case natural == betterHigher:
		// orient reads a verdict decided as "lower is better".
		mc.Change, mc.Unadjusted = swapClaim(mc.Change), swapClaim(mc.Unadjusted)
		orient(mc, want)
	default:
		orient(mc, want)
	}
}

// twoSided makes a change beyond ±δ either way Regressed: a TwoSided primary metric is one that
// should not move at all, so a move either way is the finding; the reason says which way.
func twoSided(mc *result.MetricComparison) {
	if mc.Unadjusted != perfexpv1alpha1.ChangeRegressed && mc.Unadjusted != perfexpv1alpha1.ChangeImproved {
		return
	}
	way := "up"
	if result.OrZero(mc.Estimate) < 0 {
		way = "down"
	}
	unit := scaleUnit(mc.Scale)
	mc.Unadjusted = perfexpv1alpha1.ChangeRegressed
	mc.UnadjustedWhy = fmt.Sprintf("changed %s beyond ±%.3g%s (interval [%+.1f, %+.1f]%s); direction TwoSided: a change either way counts as Regressed",
		way, result.OrZero(mc.Threshold), unit, result.OrZero(mc.Low), result.OrZero(mc.High), unit)
	mc.Change, mc.Why = mc.Unadjusted, mc.UnadjustedWhy
}

func swapClaim(c perfexpv1alpha1.Change) perfexpv1alpha1.Change {
	switch c {
	case perfexpv1alpha1.ChangeRegressed:
		return perfexpv1alpha1.ChangeImproved
	case perfexpv1alpha1.ChangeImproved:
		return perfexpv1alpha1.ChangeRegressed
	}
	return c
}

// maxRunsToDecide is the most runs per side runsToDecide counts to.
const maxRunsToDecide = 50

// runsToDecide is how many runs per side would decide a quantity measured once per run whose
// runs differ by sd (log scale), at the observed change (log ratio) against ±up: the fewest n
// whose 95 % t interval of the difference of means (2n-2 degrees of freedom) is narrower than
// the change's distance from δ, so that it would lie wholly beyond or wholly inside ±δ; 0 when
// more than maxRunsToDecide would be needed (the change is about δ itself).
func runsToDecide(change, sd, up float64) int {
	gap := math.Abs(math.Abs(change) - up)
	if sd <= 0 || gap == 0 {
		return 0
	}
	for n := 2; n <= maxRunsToDecide; n++ {
		q := moremath.InvCDF(moremath.TDist{V: float64(2*n - 2)})(1 - alpha/2)
		if q*sd*math.Sqrt(2/float64(n)) < gap {
			return n
		}
	}
	return 0
}

// oneValueWhy is why a single run against a single run cannot decide a quantity with one value
// per run, and how many runs per side would (runsHint).
func oneValueWhy(what string, value, baseline *float64, o CompareOptions) string {
	return what + " has one value per run: one run per side has no interval to decide on; " + runsHint(value, baseline, o)
}

// runsHint says how many runs per side would decide the change seen between two single runs, at
// the between-run noise the comparison holds.
func runsHint(value, baseline *float64, o CompareOptions) string {
	if value == nil || baseline == nil || *value <= 0 || *baseline <= 0 {
		return "repeat the runs (a PerfSweep with repeats, or analysis.confirm) to compare it run by run"
	}
	br := o.betweenRun()
	change := math.Log(*value / *baseline)
	n := runsToDecide(change, br.SDPercent/100, math.Log1p(o.MinChangePercent/100))
	seen := fmt.Sprintf("%+.1f %%", 100*math.Expm1(change))
	if n == 0 {
		return fmt.Sprintf("at the %s, a change of %s against ±%.3g %% would take more than %d runs per side to decide",
			br, seen, o.MinChangePercent, maxRunsToDecide)
	}
	return fmt.Sprintf("at the %s, about %d runs per side would decide a change of %s against ±%.3g %% (a PerfSweep with repeats, or analysis.confirm)",
		br, n, seen, o.MinChangePercent)
}

// missingWhy is why a named row has no value: the name it looked for and which side lacks it.
func missingWhy(what string, inCur, inBase bool, runs bool) string {
	this, baseline, either := "this run", "the baseline's run", "either run"
	if runs {
		this, baseline, either = "the arm's runs", "the baseline's runs", "the runs of either side"
	}
	switch {
	case !inCur && !inBase:
		return "no " + what + " in " + either
	case !inCur:
		return "no " + what + " in " + this
	}
	return "no " + what + " in " + baseline
}

// notRun is true for a primary metric of a scenario neither run ran (a sweep's arm that runs
// only some of the template's scenarios): it does not apply to the comparison, rather than
// reading Unknown.
func notRun(p perfexpv1alpha1.PrimaryMetric, r, base *result.Result) bool {
	return p.Scenario != "" && r.Lookup(p.Scenario, "") == nil && base.Lookup(p.Scenario, "") == nil
}

// notRunNotes say which primary metrics did not apply because neither side ran their scenario.
func notRunNotes(r, base *result.Result, o CompareOptions) []string {
	var out []string
	for _, p := range o.Primary {
		if namesRow(p) && notRun(p, r, base) {
			out = append(out, fmt.Sprintf("the primary metric %s of scenario %s does not decide this comparison: neither side ran the scenario", p.Metric, p.Scenario))
		}
	}
	return out
}
