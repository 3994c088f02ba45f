package result

import (
	"math"
	"strconv"
	"strings"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/text"
)

// FromStatus rebuilds what a baseline's status holds (scenarios, their ten most frequent
// request names, query values), for when its report ConfigMap is gone. Strings that do not
// parse (empty: absent) stay absent.
func FromStatus(s *perfexpv1alpha1.Results) *Result {
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
	return Num(v)
}

// Bounds of what goes into the experiment's status; the report holds everything.
const (
	statusTopRequests = 10
	StatusMaxMetrics  = 32
	statusMaxItems    = 64
	statusMaxMessage  = 1024
)

// Status turns the result into the experiment's bounded status: numbers as decimal strings,
// absent data as empty strings, the ten most frequent request names per scenario.
func (r *Result) Status() (*perfexpv1alpha1.Results, *perfexpv1alpha1.Comparison) {
	out := &perfexpv1alpha1.Results{
		Validity:      r.Validity,
		InvalidReason: text.Truncate(strings.Join(r.InvalidReasons, "; "), statusMaxMessage),
		LatencySource: r.LatencySource,
		P95:           ms(r.Total.P95),
	}
	for i, w := range r.BackendWarnings {
		if i == 8 {
			break
		}
		out.BackendWarnings = append(out.BackendWarnings, text.Truncate(w, 512))
	}
	for i, s := range r.Scenarios {
		if i == 16 {
			break
		}
		sr := perfexpv1alpha1.ScenarioResult{Name: s.Name, Validity: s.Validity, RequestStats: statusStats(s.RequestStats)}
		for j, rr := range s.Requests {
			if j == statusTopRequests {
				break
			}
			sr.TopRequests = append(sr.TopRequests, perfexpv1alpha1.RequestResult{Name: text.Truncate(rr.Name, 256), RequestStats: statusStats(rr.RequestStats)})
		}
		sr.Groups, sr.Trends = statusGroups(s.Groups), statusTrends(s.Trends)
		sr.FailingChecks = statusFailingChecks(s.Checks)
		out.Scenarios = append(out.Scenarios, sr)
	}
	for i, w := range r.Workloads {
		if i == statusMaxItems {
			break
		}
		out.Workloads = append(out.Workloads, perfexpv1alpha1.WorkloadResult{
			Kind: w.Kind, Namespace: w.Namespace, Name: w.Name, Pods: int32Ptr(w.Pods),
			CPUAvg: fixed(w.CPUAvg, 3), CPUMax: fixed(w.CPUMax, 3),
			CPUPercentOfRequest: orNote(fixed(w.CPUPercentOfRequest, 1), w.CPURequestNote),
			CPUPercentOfLimit:   orNote(fixed(w.CPUPercentOfLimit, 1), w.CPULimitNote),
			CPUThrottledPercent: fixed(w.CPUThrottledPercent, 1),
			MemoryAvg:           fixed(w.MemoryAvg, 0), MemoryMax: fixed(w.MemoryMax, 0),
			MemoryPercentOfLimit: orNote(fixed(w.MemoryPercentOfLimit, 1), w.MemoryLimitNote),
			MemoryGrowthPerHour:  fixed(w.MemoryGrowthPerHour, 0),
			Leak:                 w.Leak,
			Restarts:             w.Restarts,
			OOMKills:             w.OOMKills,
		})
	}
	for i, q := range r.Queries {
		if i == 32 {
			break
		}
		out.Queries = append(out.Queries, perfexpv1alpha1.QueryResult{Name: q.Name, Value: fixed(q.Value, 6), Unit: q.Unit,
			Series: int32(len(q.Series) + q.SeriesDropped), Error: text.Truncate(q.Error, statusMaxMessage)})
	}
	for i, o := range r.Objectives {
		if i == 32 {
			break
		}
		out.Objectives = append(out.Objectives, perfexpv1alpha1.ObjectiveResult{Name: text.Truncate(o.Name, 256), Outcome: o.Outcome,
			Value: fixed(o.Value, 3), Message: text.Truncate(o.Message, 512)})
	}
	if r.Comparison == nil {
		return out, nil
	}
	return out, r.Comparison.Status()
}

// Status is the comparison's bounded form for the experiment's status: primary metrics
// first, then scenario-level p95, error rate, average and throughput, then request names'
// p95 and workloads' CPU and memory, then the rest while there is room.
func (cmp *Comparison) Status() *perfexpv1alpha1.Comparison {
	if cmp == nil {
		return nil
	}
	c := &perfexpv1alpha1.Comparison{Baseline: cmp.Baseline, Change: cmp.Change, Method: cmp.Method, Message: text.Truncate(cmp.Message, statusMaxMessage),
		Disturbed: text.Truncate(cmp.Disturbed, statusMaxMessage), Noise: text.Truncate(cmp.Noise, 512)}
	if cmp.MinChangePercent > 0 {
		c.MinMeaningfulChangePercent = fixed(&cmp.MinChangePercent, 2)
	}
	rank := func(m MetricComparison) int {
		switch {
		case m.Primary:
			return 0
		case m.Route != "":
			return 3
		case m.Request == "" && m.Kind != perfexpv1alpha1.MetricQuery && (m.Kind == perfexpv1alpha1.MetricP95 || m.Kind == perfexpv1alpha1.MetricAvg ||
			m.Kind == perfexpv1alpha1.MetricErrorRate || m.Kind == perfexpv1alpha1.MetricRate):
			return 1
		case m.Request != "" && m.Kind == perfexpv1alpha1.MetricP95, m.Workload != "":
			return 2
		}
		return 3
	}
	for level := 0; level <= 3; level++ {
		for _, m := range cmp.Metrics {
			if rank(m) != level || len(c.Metrics) == StatusMaxMetrics {
				continue
			}
			c.Metrics = append(c.Metrics, perfexpv1alpha1.MetricComparison{
				Metric: text.Truncate(m.Metric, 256), Primary: m.Primary, Baseline: fixed(m.Baseline, 3), Value: fixed(m.Value, 3), Delta: fixed(m.Delta, 3),
				DeltaPercent: fixed(m.DeltaPercent, 1), Low: fixed(m.Low, 2), High: fixed(m.High, 2), Scale: m.Scale,
				N: int32(m.Samples), BaselineN: int32(m.BaselineSamples), PValue: sig(m.PValue), Change: m.Change, Why: text.Truncate(m.Why, 256),
			})
		}
	}
	return c
}

func statusStats(s RequestStats) perfexpv1alpha1.RequestStats {
	return perfexpv1alpha1.RequestStats{
		Requests: s.Requests, Errors: s.Errors, Rate: fixed(s.Rate, 2), ErrorPercent: fixed(s.ErrorPercent, 2),
		Avg: ms(s.Avg), P50: ms(s.P50), P75: ms(s.P75), P90: ms(s.P90), P95: ms(s.P95), P99: ms(s.P99), Max: ms(s.Max),
	}
}

// ms renders a latency in milliseconds with microsecond resolution.
func ms(v *float64) string { return fixed(v, 3) }

// fixed renders v with at most the given decimals, trailing zeros dropped; "" when absent.
func fixed(v *float64, decimals int) string {
	if v == nil || !Finite(*v) {
		return ""
	}
	p := math.Pow(10, float64(decimals))
	x := math.Round(*v*p) / p
	if x == 0 {
		x = 0 // no "-0"
	}
	return strconv.FormatFloat(x, 'f', -1, 64)
}

// sig renders a p-value with four significant digits.
func sig(v *float64) string {
	if v == nil || !Finite(*v) {
		return ""
	}
	return strconv.FormatFloat(*v, 'g', 4, 64)
}

func orNote(v, note string) string {
	if note != "" {
		return note
	}
	return v
}

func int32Ptr(n int) *int32 {
	v := int32(min(n, math.MaxInt32))
	return &v
}
