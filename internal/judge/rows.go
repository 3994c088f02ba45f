package judge

import (
	"fmt"
	"strings"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/result"
)

// scenarioMetrics are compared for every scenario (and all together), in the report's order.
var scenarioMetrics = []perfexpv1alpha1.ObjectiveMetric{perfexpv1alpha1.MetricP95, perfexpv1alpha1.MetricErrorRate, perfexpv1alpha1.MetricAvg,
	perfexpv1alpha1.MetricP50, perfexpv1alpha1.MetricP90, perfexpv1alpha1.MetricP99, perfexpv1alpha1.MetricRate, perfexpv1alpha1.MetricMax}

// requestMetrics are compared for the most frequent request names.
var requestMetrics = []perfexpv1alpha1.ObjectiveMetric{perfexpv1alpha1.MetricP95, perfexpv1alpha1.MetricAvg}

// noIntervalsWhy is why a single-run row is Unknown when one run has no per-interval data for it.
const noIntervalsWhy = "no per-interval data for it in one of the runs"

// transactionMetrics are compared for each group and custom Trend found in both runs.
var transactionMetrics = []perfexpv1alpha1.ObjectiveMetric{perfexpv1alpha1.MetricP95, perfexpv1alpha1.MetricAvg}

// row names one compared metric: of a scenario (or all), one of its request names, groups
// or custom Trends.
type row struct {
	scenario, request string
	group, trend      string
	// iteration is the scenario's iteration duration (k6's iteration_duration).
	iteration bool
	// counter names a custom k6 Counter of the scenario (kind Count; see compare_script.go).
	counter string
	// zeroIfAbsent reads the Counter as 0 in a run of the scenario that lacks it: k6 sends no
	// series of a Counter never incremented, so a run without a failure has no failure counter.
	// Set only where another run of the comparison has the Counter (a name no run has stays
	// missing: a typo is not a zero).
	zeroIfAbsent bool
	// query names a custom query (kind Query), a row of repeated runs only: one value per run.
	query string
	// workload is a workload's CPU or memory across repeated runs (kind CPU,
	// CPUPercentOfRequest or Memory), so that a blocked design pairs it as it pairs latencies.
	workload workloadKey
	kind     perfexpv1alpha1.ObjectiveMetric
}

// workloadKey names one workload of a run.
type workloadKey struct{ kind, namespace, name string }

func (w row) label() string {
	if w.query != "" {
		return "query " + w.query
	}
	label := w.scenario
	if w.scenario == "" {
		label = "all"
	}
	switch {
	case w.request != "":
		label += "/" + w.request
	case w.group != "":
		label += " group " + w.group
	case w.trend != "":
		label += " trend " + w.trend
	case w.iteration:
		label += " iteration"
	case w.counter != "":
		return label + " counter " + w.counter + " rate"
	}
	return label + " " + strings.ToLower(string(w.kind))
}

// transaction is true for a group's, a custom Trend's, an iteration duration's, a Counter's or
// a query's row: none has a successful-only variant, and none is a scenario's own.
func (w row) transaction() bool {
	return w.group != "" || w.trend != "" || w.iteration || w.counter != "" || w.query != "" || w.workload.name != ""
}

// subject names what a row reads, for the reason when a run lacks it.
func (w row) subject() string {
	switch {
	case w.query != "":
		return "query " + w.query
	case w.request != "":
		return fmt.Sprintf("request %q of scenario %s", w.request, w.scenario)
	case w.group != "":
		return fmt.Sprintf("group %q of scenario %s", w.group, w.scenario)
	case w.trend != "":
		return fmt.Sprintf("trend %s of scenario %s", w.trend, w.scenario)
	case w.counter != "":
		return fmt.Sprintf("Counter %s of scenario %s", w.counter, w.scenario)
	}
	return "scenario " + w.scenario
}

// named is true for a row a run may lack although it has the row's scenario.
func (w row) named() bool {
	return w.request != "" || w.group != "" || w.trend != "" || w.counter != "" || w.query != ""
}

// missing is why a row has no value in one or both sides, "" when both have it.
func (w row) missing(cur, base []*result.Result) string {
	has := func(rs []*result.Result) bool {
		for _, r := range rs {
			if w.has(r) {
				return true
			}
		}
		return false
	}
	if !w.named() {
		return ""
	}
	inCur, inBase := has(cur), has(base)
	if inCur && inBase {
		return ""
	}
	return missingWhy(w.subject(), inCur, inBase, len(cur) > 1 || len(base) > 1)
}

// has is whether a run holds the row at all.
func (w row) has(r *result.Result) bool {
	if w.query != "" {
		return r.Query(w.query) != nil
	}
	return w.stats(r) != nil
}

// stats are the statistics a row reads from a run, nil when the run has none.
func (w row) stats(r *result.Result) *result.RequestStats {
	if w.query != "" {
		return nil
	}
	if w.counter != "" {
		if st := r.CounterStats(w.scenario, w.counter); st != nil || !w.zeroIfAbsent {
			return st
		}
		if sc, _ := r.ScenarioNamed(w.scenario); sc != nil && ((sc.RequestStats.Requests != nil && *sc.RequestStats.Requests > 0) || (sc.Iterations != nil && *sc.Iterations > 0)) {
			return &result.RequestStats{Rate: result.Num(0)}
		}
		return nil
	}
	if w.iteration {
		s, _ := r.IterationStats(w.scenario)
		return s
	}
	if w.transaction() {
		s, _, _ := transactionStats(r, w.scenario, w.group, w.trend)
		return s
	}
	return r.Lookup(w.scenario, w.request)
}

// unit is a row's unit in a run: a plain-number Trend's is the script's own (empty).
func (w row) unit(r *result.Result) string {
	if w.query != "" {
		if q := r.Query(w.query); q != nil {
			return q.Unit
		}
		return ""
	}
	if w.counter != "" {
		return counterUnit
	}
	if w.trend != "" {
		_, u, _ := transactionStats(r, w.scenario, w.group, w.trend)
		return u
	}
	return metricUnit(w.kind)
}

func (w row) key() result.IntervalKey {
	if w.scenario == "" {
		return result.IntervalKey{Scenario: result.AllScenarios}
	}
	return result.IntervalKey{Scenario: w.scenario, Request: w.request, Group: w.group, Trend: w.trend, Iteration: w.iteration, Counter: w.counter}
}

// rows lists what to compare for a result: all scenarios together (when there are several),
// each scenario, its most frequent request names found in the baseline too, and every primary
// metric and relative objective not among those.
func rows(r, base *result.Result, o CompareOptions) []row {
	var out []row
	seen := map[row]bool{}
	add := func(w row) {
		if !seen[w] {
			seen[w] = true
			out = append(out, w)
		}
	}
	if len(r.Scenarios) > 1 {
		for _, m := range scenarioMetrics {
			add(row{kind: m})
		}
	}
	for _, s := range r.Scenarios {
		for _, m := range scenarioMetrics {
			add(row{scenario: s.Name, kind: m})
		}
	}
	for _, s := range r.Scenarios {
		n := 0
		for _, rr := range s.Requests {
			if n == TopRequestsCompared {
				break
			}
			if base.Lookup(s.Name, rr.Name) == nil {
				continue
			}
			n++
			for _, m := range requestMetrics {
				add(row{scenario: s.Name, request: rr.Name, kind: m})
			}
		}
	}
	// Groups and custom Trends found in both runs: secondary rows (never primary, so out of
	// the headline's Holm family unless an objective names them).
	for _, s := range r.Scenarios {
		n := 0
		for _, g := range s.Groups {
			if n == TopRequestsCompared {
				break
			}
			if st, _, _ := transactionStats(base, s.Name, g.Name, ""); st == nil {
				continue
			}
			n++
			for _, m := range transactionMetrics {
				add(row{scenario: s.Name, group: g.Name, kind: m})
			}
		}
		for _, t := range s.Trends {
			if st, _, _ := transactionStats(base, s.Name, "", t.Name); st == nil {
				continue
			}
			for _, m := range transactionMetrics {
				add(row{scenario: s.Name, trend: t.Name, kind: m})
			}
		}
	}
	// Each scenario's iteration duration and custom Counters, when both runs have them:
	// secondary as well.
	for _, w := range scriptRows(r, base) {
		add(w)
	}
	for _, p := range o.Primary {
		if !namesRow(p) || notRun(p, r, base) {
			continue
		}
		if p.Scenario != "" {
			add(row{scenario: p.Scenario, request: p.Request, group: p.Group, trend: p.Trend, counter: p.Counter, kind: p.Metric})
			continue
		}
		for _, s := range r.Scenarios {
			add(row{scenario: s.Name, kind: p.Metric})
		}
	}
	for _, ob := range o.Objectives {
		if (ob.MaxIncreasePercent != nil || ob.MaxDecreasePercent != nil) && ob.Metric != perfexpv1alpha1.MetricQuery {
			add(objectiveRow(ob))
		}
	}
	return out
}

// ComparedIntervals are the per-interval series a comparison of r with base shows: its request
// names and transactions (groups, Trends, iterations).
func ComparedIntervals(r, base *result.Result, a perfexpv1alpha1.Analysis) []result.IntervalKey {
	opts, _ := OptionsFor(a)
	var keys []result.IntervalKey
	for _, w := range rows(r, base, opts.withDefaults()) {
		if w.request != "" || w.transaction() {
			keys = append(keys, w.key())
		}
	}
	return keys
}
