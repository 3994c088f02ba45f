package analysis

import (
	"strconv"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
)

// ResultFromStatus rebuilds what a baseline's status holds (scenarios, their ten most frequent
// request names, query values), for when its report ConfigMap is gone. Strings that do not
// parse (empty: absent) stay absent.
func ResultFromStatus(s *perfexpv1alpha1.Results) *Result {
	if s == nil {
		return nil
	}
	r := &Result{Validity: s.Validity, LatencySource: s.LatencySource}
	if s.InvalidReason != "" {
		r.InvalidReasons = []string{s.InvalidReason}
	}
	for _, sc := range s.Scenarios {
		sr := ScenarioResult{Name: sc.Name, Validity: sc.Validity, RequestStats: statsFromStatus(sc.RequestStats)}
		for _, rr := range sc.TopRequests {
			sr.Requests = append(sr.Requests, RequestResult{Name: rr.Name, RequestStats: statsFromStatus(rr.RequestStats)})
		}
		r.Scenarios = append(r.Scenarios, sr)
	}
	if len(r.Scenarios) == 1 {
		r.Total = r.Scenarios[0].RequestStats
	} else {
		r.Total.P95 = parse(s.P95)
	}
	for _, q := range s.Queries {
		r.Queries = append(r.Queries, QueryResult{Name: q.Name, Unit: q.Unit, Value: parse(q.Value), Error: q.Error})
	}
	return r
}

func statsFromStatus(s perfexpv1alpha1.RequestStats) RequestStats {
	return RequestStats{Requests: s.Requests, Errors: s.Errors, Rate: parse(s.Rate), ErrorPercent: parse(s.ErrorPercent),
		Avg: parse(s.Avg), P50: parse(s.P50), P75: parse(s.P75), P90: parse(s.P90), P95: parse(s.P95), P99: parse(s.P99), Max: parse(s.Max)}
}

func parse(s string) *float64 {
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return nil
	}
	return num(v)
}
