package judge

import (
	"fmt"
	"strconv"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/result"
)

// checkPassRate is one check's reported pass rate in percent (the lowest runner's), or why
// there is none; an unknown name lists the checks the scenario wrote.
func checkPassRate(r *result.Result, scenario, check string) (*float64, string) {
	s, why := r.ScenarioNamed(scenario)
	if s == nil {
		return nil, why
	}
	names := make([]string, 0, len(s.Checks))
	for _, c := range s.Checks {
		if c.Name == check {
			if c.PassPercent == nil {
				return nil, fmt.Sprintf("scenario %s: check %q has no pass rate in the window", scenario, check)
			}
			return c.PassPercent, ""
		}
		names = append(names, strconv.Quote(c.Name))
	}
	return nil, fmt.Sprintf("scenario %s has no check %q in the window (checks: %s)", scenario, check, orNoneList(names))
}

// counterTotal is one custom Counter's total in the window (exact), or why there is none; an
// unknown name lists the Counters the scenario wrote.
func counterTotal(r *result.Result, scenario, counter string) (*float64, string) {
	s, why := r.ScenarioNamed(scenario)
	if s == nil {
		return nil, why
	}
	names := make([]string, 0, len(s.Counters))
	for _, c := range s.Counters {
		if c.Name == counter {
			if c.Total == nil {
				return nil, fmt.Sprintf("scenario %s: Counter %q has no total in the window", scenario, counter)
			}
			return c.Total, ""
		}
		names = append(names, c.Name)
	}
	return nil, fmt.Sprintf("scenario %s has no custom Counter %q in the window (Counters: %s)", scenario, counter, orNoneList(names))
}

// ratePercent is one custom Rate's reported share of non-zero values in percent (the lowest
// runner's), or why there is none; an unknown name lists the Rates the scenario wrote.
func ratePercent(r *result.Result, scenario, rate string) (*float64, string) {
	s, why := r.ScenarioNamed(scenario)
	if s == nil {
		return nil, why
	}
	names := make([]string, 0, len(s.Rates))
	for _, c := range s.Rates {
		if c.Name == rate {
			if c.Percent == nil {
				return nil, fmt.Sprintf("scenario %s: Rate %q has no value in the window", scenario, rate)
			}
			return c.Percent, ""
		}
		names = append(names, c.Name)
	}
	return nil, fmt.Sprintf("scenario %s has no custom Rate %q in the window (Rates: %s)", scenario, rate, orNoneList(names))
}

// gaugeValue is one custom Gauge's Min, Max or Last in the window, or why there is none: an
// unknown name lists the Gauges the scenario wrote, and Last of a Gauge written by several
// series (runners or tag sets) has no single value.
func gaugeValue(r *result.Result, scenario, gauge string, m perfexpv1alpha1.ObjectiveMetric) (*float64, string) {
	s, why := r.ScenarioNamed(scenario)
	if s == nil {
		return nil, why
	}
	names := make([]string, 0, len(s.Gauges))
	for _, g := range s.Gauges {
		if g.Name != gauge {
			names = append(names, g.Name)
			continue
		}
		v := result.GaugeStat(&g, m)
		switch {
		case v != nil:
			return v, ""
		case m == perfexpv1alpha1.MetricLast && g.Series > 1:
			return nil, fmt.Sprintf("scenario %s: Gauge %q was written by %d series (k6 runners or tag sets), so it has no single last value; judge its Min or Max", scenario, gauge, g.Series)
		}
		return nil, fmt.Sprintf("scenario %s: Gauge %q has no %s in the window", scenario, gauge, m)
	}
	return nil, fmt.Sprintf("scenario %s has no custom Gauge %q in the window (Gauges: %s)", scenario, gauge, orNoneList(names))
}

// transactionStats is a scenario's group (group != "") or custom Trend as statistics an
// objective or comparison row can read, with its unit; nil and a reason when the run has none
// by that name.
func transactionStats(r *result.Result, scenario, group, trend string) (*result.RequestStats, string, string) {
	s, why := r.ScenarioNamed(scenario)
	if s == nil {
		return nil, "", why
	}
	if group != "" {
		var names []string
		for _, g := range s.Groups {
			if g.Name == group {
				return result.LatencyStats(g.Latency), "ms", ""
			}
			names = append(names, g.Name)
		}
		return nil, "", fmt.Sprintf("scenario %s has no group %q in the window (groups: %s)", scenario, group, orNoneList(names))
	}
	var names []string
	for _, t := range s.Trends {
		if t.Name == trend {
			return result.LatencyStats(t.Latency), t.Unit, ""
		}
		names = append(names, t.Name)
	}
	return nil, "", fmt.Sprintf("scenario %s has no custom Trend %q in the window (Trends: %s)", scenario, trend, orNoneList(names))
}

func orNoneList(names []string) string {
	if len(names) == 0 {
		return "the run wrote none"
	}
	return result.ShortList(names, 10)
}
