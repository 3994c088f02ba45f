package sweep

import (
	"math"
	"slices"
	"strings"

	"github.com/perfexp/perfexp/internal/judge"
	"github.com/perfexp/perfexp/internal/report"
	"github.com/perfexp/perfexp/internal/result"
)

// maxQuerySeries is how many series of one query an arm keeps (the first the run lists: a
// query's series are kept largest first): enough for the brokers or databases of a study.
const maxQuerySeries = 24

// transactionMeans are each transaction's statistics over the runs that have it, for the
// report's Transactions tables: each scenario, its most frequent request names (as many as the
// comparison compares), its k6 groups, Trends, iteration duration and Counters.
//
// counters are the Counters (scenario, name) some valid run of the sweep has: k6 sends no series
// of a Counter never incremented, so a run of the scenario without one of them counts 0 (as the
// comparison counts it, judge.CompareRuns), and a Counter's rate is the arithmetic mean over the
// runs, as the comparison's value is.
func transactionMeans(runs []*result.Result, counters map[[2]string]bool) []report.SweepTransactionStats {
	type sums struct {
		latency [7][]float64 // avg, p50, p75, p90, p95, p99, max
		errs    []float64
		rate    []float64
	}
	var out []report.SweepTransactionStats
	var acc []*sums
	index := map[[3]string]int{}
	add := func(scenario, kind, name, unit string, l result.Latency, errs, rate *float64) {
		k := [3]string{scenario, kind, name}
		i, ok := index[k]
		if !ok {
			i = len(out)
			index[k] = i
			out = append(out, report.SweepTransactionStats{Scenario: scenario, Kind: kind, Name: name, Unit: unit})
			acc = append(acc, &sums{})
		}
		out[i].Runs++
		a := acc[i]
		for j, v := range []*float64{l.Avg, l.P50, l.P75, l.P90, l.P95, l.P99, l.Max} {
			appendFinite(&a.latency[j], v)
		}
		appendFinite(&a.errs, errs)
		appendFinite(&a.rate, rate)
	}
	latencyOf := func(s result.RequestStats) result.Latency {
		return result.Latency{Avg: s.Avg, P50: s.P50, P75: s.P75, P90: s.P90, P95: s.P95, P99: s.P99, Max: s.Max}
	}
	for _, r := range runs {
		for _, sc := range r.Scenarios {
			add(sc.Name, report.TransactionScenario, "", "ms", latencyOf(sc.RequestStats), sc.ErrorPercent, sc.Rate)
			for i, rq := range sc.Requests {
				if i == judge.TopRequestsCompared {
					break
				}
				add(sc.Name, report.TransactionRequest, rq.Name, "ms", latencyOf(rq.RequestStats), rq.ErrorPercent, rq.Rate)
			}
			for i, g := range sc.Groups {
				if i == judge.TopRequestsCompared {
					break
				}
				add(sc.Name, report.TransactionGroup, g.Name, "ms", g.Latency, nil, nil)
			}
			for _, t := range sc.Trends {
				add(sc.Name, report.TransactionTrend, t.Name, t.Unit, t.Latency, nil, nil)
			}
			if sc.IterationDuration != nil {
				add(sc.Name, report.TransactionIteration, "", "ms", *sc.IterationDuration, nil, nil)
			}
			had := map[string]bool{}
			for i, c := range sc.Counters {
				if i == result.MaxCustomNames {
					break
				}
				had[c.Name] = true
				add(sc.Name, report.TransactionCounter, c.Name, "", result.Latency{}, nil, c.Rate)
			}
			for _, name := range sortedCounters(counters, sc.Name) {
				if !had[name] {
					add(sc.Name, report.TransactionCounter, name, "", result.Latency{}, nil, result.Num(0))
				}
			}
		}
	}
	for i := range out {
		a, t := acc[i], &out[i]
		t.Avg, t.P50, t.P75, t.P90, t.P95, t.P99, t.Max = geomean(a.latency[0]), geomean(a.latency[1]), geomean(a.latency[2]),
			geomean(a.latency[3]), geomean(a.latency[4]), geomean(a.latency[5]), geomean(a.latency[6])
		t.ErrorPercent, t.Rate = mean(a.errs), geomean(a.rate)
		if t.Kind == report.TransactionCounter {
			t.Rate = mean(a.rate)
		}
	}
	return out
}

// sweepCounters are the Counters (scenario, name) any of the runs has, within the report's cap
// per scenario.
func sweepCounters(runs ...[]*result.Result) map[[2]string]bool {
	out := map[[2]string]bool{}
	for _, rs := range runs {
		for _, r := range rs {
			for _, sc := range r.Scenarios {
				for i, c := range sc.Counters {
					if i == result.MaxCustomNames {
						break
					}
					out[[2]string{sc.Name, c.Name}] = true
				}
			}
		}
	}
	return out
}

// sortedCounters are the names of the Counters of scenario in counters, sorted.
func sortedCounters(counters map[[2]string]bool, scenario string) []string {
	var out []string
	for k := range counters {
		if k[0] == scenario {
			out = append(out, k[1])
		}
	}
	slices.Sort(out)
	return out
}

// workloadMeans are each observed workload's CPU and memory over the runs that measured it, for
// the report's Services tables: arithmetic means, as the comparison's values are.
func workloadMeans(runs []*result.Result) []report.SweepWorkloadStats {
	type sums struct{ cpu, request, limit, throttled, memory, memoryLimit []float64 }
	var out []report.SweepWorkloadStats
	var acc []*sums
	index := map[string]int{}
	for _, r := range runs {
		for _, w := range r.Workloads {
			k := w.Kind + "/" + w.Namespace + "/" + w.Name
			i, ok := index[k]
			if !ok {
				i = len(out)
				index[k] = i
				out = append(out, report.SweepWorkloadStats{Kind: w.Kind, Namespace: w.Namespace, Name: w.Name})
				acc = append(acc, &sums{})
			}
			out[i].Runs++
			out[i].Pods = max(out[i].Pods, w.Pods)
			a := acc[i]
			appendFinite(&a.cpu, w.CPUAvg)
			appendFinite(&a.request, w.CPUPercentOfRequest)
			appendFinite(&a.limit, w.CPUPercentOfLimit)
			appendFinite(&a.throttled, w.CPUThrottledPercent)
			appendFinite(&a.memory, w.MemoryAvg)
			appendFinite(&a.memoryLimit, w.MemoryPercentOfLimit)
		}
	}
	for i := range out {
		a, w := acc[i], &out[i]
		w.CPUAvg, w.CPUPercentOfRequest, w.CPUPercentOfLimit, w.CPUThrottledPercent = mean(a.cpu), mean(a.request), mean(a.limit), mean(a.throttled)
		w.MemoryAvg, w.MemoryPercentOfLimit = mean(a.memory), mean(a.memoryLimit)
	}
	return out
}

// queryMeans are each custom query's value, and each of its series' values, averaged over the
// runs that returned them, for the report's Queries table.
func queryMeans(runs []*result.Result) []report.SweepQueryStats {
	type sums struct {
		value  []float64
		series map[string][]float64
		labels map[string]map[string]string
		order  []string
	}
	var out []report.SweepQueryStats
	var acc []*sums
	index := map[string]int{}
	for _, r := range runs {
		for _, q := range r.Queries {
			if q.Error != "" {
				continue
			}
			i, ok := index[q.Name]
			if !ok {
				i = len(out)
				index[q.Name] = i
				out = append(out, report.SweepQueryStats{Name: q.Name, Unit: q.Unit})
				acc = append(acc, &sums{series: map[string][]float64{}, labels: map[string]map[string]string{}})
			}
			out[i].Runs++
			a := acc[i]
			appendFinite(&a.value, q.Value)
			if len(q.Series) < 2 {
				continue
			}
			for _, s := range q.Series {
				k := seriesKey(s.Labels)
				if _, seen := a.labels[k]; !seen {
					if len(a.order) == maxQuerySeries {
						continue
					}
					a.labels[k] = s.Labels
					a.order = append(a.order, k)
				}
				vs := a.series[k]
				appendFinite(&vs, s.Value)
				a.series[k] = vs
			}
		}
	}
	for i := range out {
		a := acc[i]
		out[i].Value = mean(a.value)
		for _, k := range a.order {
			out[i].Series = append(out[i].Series, report.SweepQuerySeries{Labels: a.labels[k], Value: mean(a.series[k])})
		}
	}
	return out
}

// seriesKey identifies a series by its labels, whatever their order in the map.
func seriesKey(labels map[string]string) string {
	keys := make([]string, 0, len(labels))
	for k := range labels {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var b strings.Builder
	for _, k := range keys {
		b.WriteString(k + "=" + labels[k] + "\x00")
	}
	return b.String()
}

// appendFinite adds a usable value to a list.
func appendFinite(dst *[]float64, v *float64) {
	if v != nil && !math.IsNaN(*v) && !math.IsInf(*v, 0) {
		*dst = append(*dst, *v)
	}
}

// routeMeans are each observed service's routes over the runs that read them, for the report's
// Slowest APIs tables: geometric means of latencies and rates, arithmetic of error shares, as
// the transactions'.
func routeMeans(runs []*result.Result) []report.SweepRouteStats {
	type sums struct{ rate, errs, avg, p50, p75, p95, p99 []float64 }
	var out []report.SweepRouteStats
	var acc []*sums
	index := map[[2]string]int{}
	for _, r := range runs {
		for _, rr := range r.Routes {
			k := [2]string{rr.Workload, rr.Route}
			i, ok := index[k]
			if !ok {
				i = len(out)
				index[k] = i
				out = append(out, report.SweepRouteStats{Workload: rr.Workload, Route: rr.Route})
				acc = append(acc, &sums{})
			}
			out[i].Runs++
			a := acc[i]
			for _, f := range []struct {
				dst *[]float64
				v   *float64
			}{{&a.rate, rr.Rate}, {&a.errs, rr.ErrorPercent}, {&a.avg, rr.Avg}, {&a.p50, rr.P50}, {&a.p75, rr.P75}, {&a.p95, rr.P95}, {&a.p99, rr.P99}} {
				appendFinite(f.dst, f.v)
			}
		}
	}
	for i := range out {
		a, s := acc[i], &out[i]
		s.Rate, s.ErrorPercent = geomean(a.rate), mean(a.errs)
		s.Avg, s.P50, s.P75, s.P95, s.P99 = geomean(a.avg), geomean(a.p50), geomean(a.p75), geomean(a.p95), geomean(a.p99)
	}
	return out
}
