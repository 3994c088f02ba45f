package analysis

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/aclements/go-moremath/stats"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
)

// Alpha is the significance level of the Mann-Whitney U test: a p-value below it is a
// significant change.
const Alpha = 0.05

// minSamples is the fewest per-interval samples per run the test is run on: with four each the
// smallest two-sided p-value is 2/70 = 0.029, so a change can be significant at all.
const minSamples = 4

// topRequestsCompared is how many request names per scenario (the most frequent) are compared.
const topRequestsCompared = 10

// metricUnit is the unit of a metric in results and objectives.
func metricUnit(m perfexpv1alpha1.ObjectiveMetric) string {
	switch m {
	case perfexpv1alpha1.MetricErrorRate:
		return "%"
	case perfexpv1alpha1.MetricRate:
		return "req/s"
	case perfexpv1alpha1.MetricQuery:
		return ""
	}
	return "ms"
}

// higherIsBetter is true for throughput; latency and errors are better lower.
func higherIsBetter(m perfexpv1alpha1.ObjectiveMetric) bool { return m == perfexpv1alpha1.MetricRate }

// statOf picks one metric from request statistics.
func statOf(s *RequestStats, m perfexpv1alpha1.ObjectiveMetric) *float64 {
	if s == nil {
		return nil
	}
	switch m {
	case perfexpv1alpha1.MetricAvg:
		return s.Avg
	case perfexpv1alpha1.MetricP50:
		return s.P50
	case perfexpv1alpha1.MetricP75:
		return s.P75
	case perfexpv1alpha1.MetricP90:
		return s.P90
	case perfexpv1alpha1.MetricP95:
		return s.P95
	case perfexpv1alpha1.MetricP99:
		return s.P99
	case perfexpv1alpha1.MetricMax:
		return s.Max
	case perfexpv1alpha1.MetricErrorRate:
		return s.ErrorPercent
	case perfexpv1alpha1.MetricRate:
		return s.Rate
	}
	return nil
}

// lookup finds the statistics of a scenario ("" for all together) or one of its request names.
func (r *Result) lookup(scenario, request string) *RequestStats {
	if r == nil {
		return nil
	}
	if scenario == "" {
		return &r.Total
	}
	for i := range r.Scenarios {
		s := &r.Scenarios[i]
		if s.Name != scenario {
			continue
		}
		if request == "" {
			return &s.RequestStats
		}
		for j := range s.Requests {
			if s.Requests[j].Name == request {
				return &s.Requests[j].RequestStats
			}
		}
	}
	return nil
}

func (r *Result) query(name string) *QueryResult {
	if r == nil {
		return nil
	}
	for i := range r.Queries {
		if r.Queries[i].Name == name {
			return &r.Queries[i]
		}
	}
	return nil
}

// baselineProblem says why a baseline cannot be compared with, or "".
func baselineProblem(r *Result, b *Baseline) string {
	switch {
	case b.Problem != "":
		return b.Problem
	case b.Result == nil:
		return fmt.Sprintf("baseline %s has no results", b.Name)
	}
	mine, theirs := scenarioNames(r.Scenarios), slices.Clone(b.Scenarios)
	if len(theirs) == 0 {
		theirs = scenarioNames(b.Result.Scenarios)
	}
	sort.Strings(theirs)
	if !slices.Equal(mine, theirs) {
		return fmt.Sprintf("baseline %s ran the scenarios [%s], this experiment [%s]", b.Name, strings.Join(theirs, ", "), strings.Join(mine, ", "))
	}
	return ""
}

func scenarioNames(ss []ScenarioResult) []string {
	out := make([]string, 0, len(ss))
	for _, s := range ss {
		out = append(out, s.Name)
	}
	sort.Strings(out)
	return out
}

// compare compares the result with its baseline, metric by metric.
func compare(r *Result, cur intervalSamples, b *Baseline, base intervalSamples) *Comparison {
	c := &Comparison{Baseline: b.Name}
	if msg := baselineProblem(r, b); msg != "" {
		c.Message, c.Change = msg, perfexpv1alpha1.ChangeUnknown
		return c
	}
	scenarioMetrics := []perfexpv1alpha1.ObjectiveMetric{perfexpv1alpha1.MetricP95, perfexpv1alpha1.MetricAvg, perfexpv1alpha1.MetricP50,
		perfexpv1alpha1.MetricP99, perfexpv1alpha1.MetricErrorRate, perfexpv1alpha1.MetricRate, perfexpv1alpha1.MetricMax}
	add := func(scenario, request string, m perfexpv1alpha1.ObjectiveMetric) {
		label := scenario
		if scenario == "" {
			label = "all"
		}
		if request != "" {
			label += "/" + request
		}
		key := intervalKey{scenario: scenario, request: request}
		if scenario == "" {
			key.scenario = allScenarios
		}
		mc := MetricComparison{Metric: label + " " + strings.ToLower(string(m)), Scenario: scenario, Request: request, Kind: m, Unit: metricUnit(m)}
		mc.Value, mc.Baseline = statOf(r.lookup(scenario, request), m), statOf(b.Result.lookup(scenario, request), m)
		fillDelta(&mc)
		judge(&mc, cur[key][m], base[key][m])
		c.Metrics = append(c.Metrics, mc)
	}
	for _, m := range scenarioMetrics {
		add("", "", m)
	}
	for _, s := range r.Scenarios {
		for _, m := range scenarioMetrics {
			add(s.Name, "", m)
		}
	}
	for _, s := range r.Scenarios {
		n := 0
		for _, rr := range s.Requests {
			if n == topRequestsCompared {
				break
			}
			if b.Result.lookup(s.Name, rr.Name) == nil {
				continue
			}
			n++
			for _, m := range []perfexpv1alpha1.ObjectiveMetric{perfexpv1alpha1.MetricP95, perfexpv1alpha1.MetricAvg} {
				add(s.Name, rr.Name, m)
			}
		}
	}
	for _, qr := range r.Queries {
		mc := MetricComparison{Metric: "query " + qr.Name, Kind: perfexpv1alpha1.MetricQuery, Unit: qr.Unit, Value: qr.Value, Change: perfexpv1alpha1.ChangeUnknown,
			Why: "custom queries have no per-interval samples to test"}
		if bq := b.Result.query(qr.Name); bq != nil {
			mc.Baseline = bq.Value
		}
		fillDelta(&mc)
		c.Metrics = append(c.Metrics, mc)
	}
	c.Change = overall(c.Metrics)
	return c
}

func fillDelta(mc *MetricComparison) {
	if mc.Value == nil || mc.Baseline == nil {
		return
	}
	d := *mc.Value - *mc.Baseline
	mc.Delta = num(d)
	if *mc.Baseline != 0 {
		mc.DeltaPercent = num(100 * d / *mc.Baseline)
	}
}

// judge runs the two-sided Mann-Whitney U test (go-moremath, the implementation benchstat used)
// on the per-interval samples and names the direction of a significant change.
func judge(mc *MetricComparison, cur, base []float64) {
	cur, base = present(cur), present(base)
	mc.Samples, mc.BaselineSamples = len(cur), len(base)
	if mc.Kind == perfexpv1alpha1.MetricMax {
		mc.Change, mc.Why = perfexpv1alpha1.ChangeUnknown, "a maximum has no per-interval samples to test"
		return
	}
	if len(cur) < minSamples || len(base) < minSamples {
		mc.Change = perfexpv1alpha1.ChangeUnknown
		mc.Why = fmt.Sprintf("%d and %d per-interval samples; the test needs at least %d of each", len(cur), len(base), minSamples)
		return
	}
	res, err := stats.MannWhitneyUTest(cur, base, stats.LocationDiffers)
	switch {
	case errors.Is(err, stats.ErrSamplesEqual):
		mc.PValue, mc.Change = num(1), perfexpv1alpha1.ChangeNoSignificantChange
		return
	case err != nil:
		mc.Change, mc.Why = perfexpv1alpha1.ChangeUnknown, err.Error()
		return
	}
	mc.PValue = num(res.P)
	if res.P >= Alpha {
		mc.Change = perfexpv1alpha1.ChangeNoSignificantChange
		return
	}
	// U counts the pairs in which this run's sample is the larger: above half of all pairs,
	// this run tends higher.
	higher := res.U > float64(res.N1*res.N2)/2
	if higher == higherIsBetter(mc.Kind) {
		mc.Change = perfexpv1alpha1.ChangeImproved
	} else {
		mc.Change = perfexpv1alpha1.ChangeRegressed
	}
}

func overall(ms []MetricComparison) perfexpv1alpha1.Change {
	var improved, regressed, known bool
	for _, m := range ms {
		switch m.Change {
		case perfexpv1alpha1.ChangeRegressed:
			regressed = true
		case perfexpv1alpha1.ChangeImproved:
			improved = true
		}
		if m.Change != perfexpv1alpha1.ChangeUnknown && m.Change != "" {
			known = true
		}
	}
	switch {
	case regressed:
		return perfexpv1alpha1.ChangeRegressed
	case improved:
		return perfexpv1alpha1.ChangeImproved
	case known:
		return perfexpv1alpha1.ChangeNoSignificantChange
	}
	return perfexpv1alpha1.ChangeUnknown
}
