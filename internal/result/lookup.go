package result

import (
	"fmt"
)

// ScenarioNamed is the scenario an objective or comparison row names, or why there is none.
func (r *Result) ScenarioNamed(name string) (*ScenarioResult, string) {
	if r == nil {
		return nil, noResults
	}
	for i := range r.Scenarios {
		if r.Scenarios[i].Name == name {
			return &r.Scenarios[i], ""
		}
	}
	return nil, fmt.Sprintf("no scenario %q in the results", name)
}

// noResults is why an objective has no value when there are no results at all.
const noResults = "no results"

// LatencyStats are a distribution's statistics as request statistics.
func LatencyStats(l Latency) *RequestStats {
	return &RequestStats{Avg: l.Avg, P50: l.P50, P75: l.P75, P90: l.P90, P95: l.P95, P99: l.P99, Max: l.Max}
}

// Lookup finds the statistics of a scenario ("" for all together) or one of its request names.
func (r *Result) Lookup(scenario, request string) *RequestStats {
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

// Query is the custom query named name, nil when there is none.
func (r *Result) Query(name string) *QueryResult {
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

// IterationStats is a scenario's iteration-duration distribution as request statistics, or
// why there is none.
func (r *Result) IterationStats(scenario string) (*RequestStats, string) {
	s, why := r.ScenarioNamed(scenario)
	if s == nil {
		return nil, why
	}
	if s.IterationDuration == nil {
		return nil, fmt.Sprintf("scenario %s has no iteration durations in the window (no iteration ended in it, or a k6 runner restarted)", scenario)
	}
	return LatencyStats(*s.IterationDuration), ""
}

// CounterStats is a Counter's rate as request statistics, nil when the scenario has no such
// Counter.
func (r *Result) CounterStats(scenario, counter string) *RequestStats {
	s, _ := r.ScenarioNamed(scenario)
	if s == nil {
		return nil
	}
	for _, c := range s.Counters {
		if c.Name == counter {
			return &RequestStats{Rate: c.Rate}
		}
	}
	return nil
}
