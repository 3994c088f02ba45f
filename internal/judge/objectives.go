package judge

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/result"
)

// ObjectiveName is an objective's name, or a description of its bound.
func ObjectiveName(o perfexpv1alpha1.Objective) string {
	return objectiveName(o, objectiveUnit(o))
}

// objectiveUnit is the unit of an objective's value as far as the spec tells it.
func objectiveUnit(o perfexpv1alpha1.Objective) string {
	switch {
	case o.Trend != "":
		// A Trend's unit is known only from the results: ms for a time Trend, the script's
		// own for plain numbers.
		return ""
	case o.Rate != "":
		return "%"
	case o.Gauge != "":
		// A Gauge holds whatever the script sets: its unit is the script's.
		return ""
	}
	return metricUnit(o.Metric)
}

// objectiveName is an objective's name, or a description of its bound in the given unit.
func objectiveName(o perfexpv1alpha1.Objective, unit string) string {
	if o.Name != "" {
		return o.Name
	}
	subject := "all scenarios"
	switch {
	case o.Metric == perfexpv1alpha1.MetricQuery:
		subject = "query " + o.Query
	case o.Request != "":
		subject = o.Scenario + "/" + o.Request
	case o.Group != "":
		subject = o.Scenario + " group " + o.Group
	case o.Trend != "":
		subject = o.Scenario + " trend " + o.Trend
	case o.Iteration:
		subject = o.Scenario + " iteration"
	case o.Check != "":
		subject = fmt.Sprintf("%s check %q", o.Scenario, o.Check)
	case o.Counter != "":
		subject = o.Scenario + " counter " + o.Counter
	case o.Rate != "":
		subject = o.Scenario + " rate " + o.Rate
	case o.Gauge != "":
		subject = o.Scenario + " gauge " + o.Gauge
	case o.Scenario != "":
		subject = o.Scenario
	}
	var bounds []string
	if o.Max != nil {
		bounds = append(bounds, fmt.Sprintf("<= %s%s", o.Max.String(), spaced(unit)))
	}
	if o.Min != nil {
		bounds = append(bounds, fmt.Sprintf(">= %s%s", o.Min.String(), spaced(unit)))
	}
	if o.MaxIncreasePercent != nil {
		bounds = append(bounds, fmt.Sprintf("at most +%d%% vs baseline", *o.MaxIncreasePercent))
	}
	if o.MaxDecreasePercent != nil {
		bounds = append(bounds, fmt.Sprintf("at most -%d%% vs baseline", *o.MaxDecreasePercent))
	}
	return fmt.Sprintf("%s %s %s", subject, o.Metric, strings.Join(bounds, ", "))
}

func spaced(unit string) string {
	if unit == "" || unit == "%" {
		return unit
	}
	return " " + unit
}

// Objectives decides each objective. Absolute bounds are in the metric's unit (latency
// ms, ErrorRate percent, Rate requests per second, Query the query's unit). A relative bound
// is judged on the 95 % interval of the change, as comparisons are: Missed only when the whole
// interval lies beyond the bound, Met only when it lies within it, else Unknown with the
// reason. Max and custom queries have no interval and are judged on the difference alone.
func Objectives(r *result.Result, specs []perfexpv1alpha1.Objective) []result.ObjectiveResult {
	out := make([]result.ObjectiveResult, 0, len(specs))
	for _, o := range specs {
		or := result.ObjectiveResult{Name: ObjectiveName(o), Unit: objectiveUnit(o)}
		value, successOnly, noData := objectiveValue(r, o, &or)
		or.Value = value
		if value == nil {
			or.Outcome, or.Message = perfexpv1alpha1.ObjectiveUnknown, noData
			out = append(out, or)
			continue
		}
		var missed, unknown []string
		// A percentile that is only an upper bound (trend-stats fallback over several runners)
		// proves a maximum is met when it is below it, and proves nothing else.
		upper := o.Metric != perfexpv1alpha1.MetricQuery && o.Group == "" && o.Trend == "" && !o.Iteration && isPercentile(o.Metric) && boundedRow(r.Lookup(o.Scenario, o.Request))
		if o.Max != nil {
			if bound := o.Max.AsApproximateFloat64(); *value > bound {
				if upper {
					unknown = append(unknown, fmt.Sprintf("%s is above the maximum %s, but it is an upper bound (the largest of several k6 runners' own %s, no histograms to merge), so the true value may be within it",
						format(*value), o.Max.String(), o.Metric))
				} else {
					missed = append(missed, fmt.Sprintf("%s is above the maximum %s", format(*value), o.Max.String()))
				}
			}
		}
		if o.Min != nil {
			switch bound := o.Min.AsApproximateFloat64(); {
			case upper:
				unknown = append(unknown, fmt.Sprintf("%s is an upper bound (the largest of several k6 runners' own %s), which cannot show a minimum of %s is met",
					format(*value), o.Metric, o.Min.String()))
			case *value < bound:
				missed = append(missed, fmt.Sprintf("%s is below the minimum %s", format(*value), o.Min.String()))
			}
		}
		if o.MaxIncreasePercent != nil || o.MaxDecreasePercent != nil {
			m, u := relative(r, o)
			missed, unknown = append(missed, m...), append(unknown, u...)
		}
		switch {
		case len(missed) > 0:
			or.Outcome, or.Message = perfexpv1alpha1.ObjectiveMissed, strings.Join(missed, "; ")
		case len(unknown) > 0:
			or.Outcome, or.Message = perfexpv1alpha1.ObjectiveUnknown, strings.Join(unknown, "; ")
		default:
			or.Outcome, or.Message = perfexpv1alpha1.ObjectiveMet, fmt.Sprintf("%s%s is within bounds", format(*value), spaced(or.Unit))
		}
		if successOnly {
			or.Message += " (successful requests only)"
		}
		if o.Check != "" {
			or.Message += " (the lowest k6 runner's pass rate, counted since it started)"
		}
		if o.Rate != "" {
			or.Message += " (the lowest k6 runner's share, counted since it started)"
		}
		out = append(out, or)
	}
	return out
}

// objectiveValue is the value an objective judges, whether it is the successful requests'
// latency, or why there is none; it sets the result's unit and name when the data decide them.
func objectiveValue(r *result.Result, o perfexpv1alpha1.Objective, or *result.ObjectiveResult) (value *float64, successOnly bool, noData string) {
	noData = "no data for this metric"
	switch {
	case o.Metric == perfexpv1alpha1.MetricQuery:
		if q := r.Query(o.Query); q != nil {
			value, or.Unit = q.Value, q.Unit
		}
	case o.Group != "" || o.Trend != "":
		// A group's or Trend's distribution covers every execution: k6 tags neither with
		// the requests' success, so there is no successful-only variant.
		st, unit, why := transactionStats(r, o.Scenario, o.Group, o.Trend)
		if st == nil {
			return nil, false, why
		}
		value, or.Unit = statOf(st, o.Metric), unit
		or.Name = objectiveName(o, unit)
	case o.Iteration:
		// iteration_duration covers every iteration: k6 tags it with no success.
		st, why := r.IterationStats(o.Scenario)
		if st == nil {
			return nil, false, why
		}
		value = statOf(st, o.Metric)
	case o.Check != "":
		pass, why := checkPassRate(r, o.Scenario, o.Check)
		if pass == nil {
			return nil, false, why
		}
		value = pass
	case o.Counter != "":
		total, why := counterTotal(r, o.Scenario, o.Counter)
		if total == nil {
			return nil, false, why
		}
		value = total
	case o.Rate != "":
		pct, why := ratePercent(r, o.Scenario, o.Rate)
		if pct == nil {
			return nil, false, why
		}
		value = pct
	case o.Gauge != "":
		v, why := gaugeValue(r, o.Scenario, o.Gauge, o.Metric)
		if v == nil {
			return nil, false, why
		}
		value = v
	default:
		value = statOf(r.Lookup(o.Scenario, o.Request), o.Metric)
		if ok := successfulOf(r.Lookup(o.Scenario, o.Request), o.Metric); ok != nil {
			value, successOnly = ok, true
		}
	}
	return value, successOnly, noData
}

// successfulOf is a latency metric of the successful requests, when the row has them apart.
func successfulOf(s *result.RequestStats, m perfexpv1alpha1.ObjectiveMetric) *float64 {
	if s == nil || s.Successful == nil {
		return nil
	}
	l := s.Successful
	switch m {
	case perfexpv1alpha1.MetricAvg:
		return l.Avg
	case perfexpv1alpha1.MetricP50:
		return l.P50
	case perfexpv1alpha1.MetricP75:
		return l.P75
	case perfexpv1alpha1.MetricP90:
		return l.P90
	case perfexpv1alpha1.MetricP95:
		return l.P95
	case perfexpv1alpha1.MetricP99:
		return l.P99
	case perfexpv1alpha1.MetricMax:
		return l.Max
	}
	return nil
}

func isPercentile(m perfexpv1alpha1.ObjectiveMetric) bool {
	switch m {
	case perfexpv1alpha1.MetricP50, perfexpv1alpha1.MetricP75, perfexpv1alpha1.MetricP90, perfexpv1alpha1.MetricP95, perfexpv1alpha1.MetricP99:
		return true
	}
	return false
}

func boundedRow(s *result.RequestStats) bool { return s != nil && s.PercentilesUpperBound }

// relative judges an objective's bounds relative to the baseline.
func relative(r *result.Result, o perfexpv1alpha1.Objective) (missed, unknown []string) {
	mc := findComparison(r, o)
	switch {
	case r.Comparison == nil || r.Comparison.Message != "":
		why := "no baseline"
		if r.Comparison != nil {
			why = r.Comparison.Message
		}
		return nil, []string{"no comparison with the baseline: " + why}
	case mc == nil || mc.Baseline == nil || mc.Value == nil:
		return nil, []string{"no baseline value to compare with"}
	case mc.Withdrawn != "":
		// The comparison claims nothing from this row; neither may an objective on it.
		return nil, []string{"not judged: " + mc.Withdrawn}
	}
	if mc.Low == nil || mc.High == nil {
		return relativeOnDelta(mc, o)
	}
	// The bound on the row's scale: a percentage of the baseline, or for error rates
	// (compared in points) that percentage of the baseline's rate.
	bound := func(pct int32) float64 {
		if mc.Scale == result.ScalePoints {
			return float64(pct) / 100 * *mc.Baseline
		}
		return float64(pct)
	}
	interval := fmt.Sprintf("95%% interval [%+.1f, %+.1f]%s", *mc.Low, *mc.High, scaleUnit(mc.Scale))
	if o.MaxIncreasePercent != nil {
		b := bound(*o.MaxIncreasePercent)
		switch {
		case *mc.Low > b:
			missed = append(missed, fmt.Sprintf("%s lies above +%d%%", interval, *o.MaxIncreasePercent))
		case *mc.High > b:
			unknown = append(unknown, fmt.Sprintf("%s straddles +%d%%: %s", interval, *o.MaxIncreasePercent, orReason(mc.Why, "cannot tell")))
		}
	}
	if o.MaxDecreasePercent != nil {
		b := -bound(*o.MaxDecreasePercent)
		switch {
		case *mc.High < b:
			missed = append(missed, fmt.Sprintf("%s lies below -%d%%", interval, *o.MaxDecreasePercent))
		case *mc.Low < b:
			unknown = append(unknown, fmt.Sprintf("%s straddles -%d%%: %s", interval, *o.MaxDecreasePercent, orReason(mc.Why, "cannot tell")))
		}
	}
	return missed, unknown
}

// relativeOnDelta judges a metric without an interval (max, a custom query) on its difference.
func relativeOnDelta(mc *result.MetricComparison, o perfexpv1alpha1.Objective) (missed, unknown []string) {
	if mc.DeltaPercent == nil {
		return nil, []string{"no baseline value to compare with"}
	}
	if mc.Kind != perfexpv1alpha1.MetricMax && mc.Kind != perfexpv1alpha1.MetricQuery {
		return nil, []string{"no interval for the change: " + orReason(mc.Why, "unknown")}
	}
	d := *mc.DeltaPercent
	if o.MaxIncreasePercent != nil && d > float64(*o.MaxIncreasePercent) {
		missed = append(missed, fmt.Sprintf("%+.1f%% vs baseline exceeds +%d%% (one value per run: no interval)", d, *o.MaxIncreasePercent))
	}
	if o.MaxDecreasePercent != nil && -d > float64(*o.MaxDecreasePercent) {
		missed = append(missed, fmt.Sprintf("%+.1f%% vs baseline exceeds -%d%% (one value per run: no interval)", d, *o.MaxDecreasePercent))
	}
	return missed, unknown
}

func orReason(why, fallback string) string {
	if why == "" {
		return fallback
	}
	return why
}

func findComparison(r *result.Result, o perfexpv1alpha1.Objective) *result.MetricComparison {
	if r.Comparison == nil {
		return nil
	}
	for i := range r.Comparison.Metrics {
		mc := &r.Comparison.Metrics[i]
		if o.Metric == perfexpv1alpha1.MetricQuery {
			if mc.Kind == perfexpv1alpha1.MetricQuery && mc.Metric == "query "+o.Query {
				return mc
			}
			continue
		}
		if mc.Kind != o.Metric || mc.Scenario != o.Scenario || mc.Request != o.Request {
			continue
		}
		// The label tells a scenario's own row from its groups' and Trends' rows, which
		// share scenario, request ("") and kind (scenario names have no spaces).
		w := objectiveRow(o)
		if w.transaction() && mc.Metric == w.label() || !w.transaction() && (mc.Request != "" || !transactionLabel(mc.Metric)) {
			return mc
		}
	}
	return nil
}

// objectiveRow is the comparison row an objective's relative bound is judged on.
func objectiveRow(o perfexpv1alpha1.Objective) row {
	return row{scenario: o.Scenario, request: o.Request, group: o.Group, trend: o.Trend, iteration: o.Iteration, counter: o.Counter, kind: o.Metric}
}

// transactionLabel is true for a group's, a custom Trend's, an iteration duration's or a
// Counter's comparison row, and for a check's, a custom Rate's or a Gauge's (a Gauge's max row shares
// its kind with the scenario's latency max).
func transactionLabel(label string) bool {
	for _, w := range []string{" group ", " trend ", " iteration ", " counter ", " check ", " rate ", " gauge "} {
		if strings.Contains(label, w) {
			return true
		}
	}
	return false
}

// format renders a number with up to three decimals and no trailing zeros.
func format(v float64) string {
	if !result.Finite(v) {
		return ""
	}
	return strconv.FormatFloat(math.Round(v*1000)/1000, 'f', -1, 64)
}
