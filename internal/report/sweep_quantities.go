// The quantities of the sweep report's per-arm tables, gathered from the arms' results:
// transactions, workloads and custom queries, each with its columns.

package report

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/result"
)

// transactionKey names a transaction across arms.
type transactionKey struct{ scenario, kind, name string }

// transactionQuantities are the Transactions tables: every transaction any arm measured, in the
// order the arms list them (each scenario, then its requests, groups, Trends, iteration and
// Counters), the baseline's first. Results of an older sweep have no transactions: their
// scenarios' avg, p95, error % and rate stand in.
func transactionQuantities(r *SweepResult) []sweepQuantity {
	var keys []transactionKey
	units := map[transactionKey]string{}
	seen := map[transactionKey]bool{}
	for _, a := range r.Arms {
		for _, t := range a.Transactions {
			k := transactionKey{t.Scenario, t.Kind, t.Name}
			if !seen[k] {
				seen[k] = true
				keys = append(keys, k)
				units[k] = t.Unit
			}
		}
	}
	legacy := len(keys) == 0
	if legacy {
		for _, name := range sweepScenarios(r) {
			keys = append(keys, transactionKey{scenario: name, kind: TransactionScenario})
			units[keys[len(keys)-1]] = "ms"
		}
	}
	stats, key := r.statistics()
	out := make([]sweepQuantity, 0, len(keys))
	for _, k := range keys {
		q := sweepQuantity{section: perfexpv1alpha1.SweepSectionTransactions, title: transactionTitle(k, units[k])}
		if k.kind == TransactionCounter {
			q.columns = []sweepColumn{transactionColumn(k, perfexpv1alpha1.MetricRate, "Rate (/s)", showInterval, legacy)}
			out = append(out, q)
			continue
		}
		for _, m := range stats {
			if k.kind != TransactionScenario && k.kind != TransactionRequest && (m == perfexpv1alpha1.MetricErrorRate || m == perfexpv1alpha1.MetricRate) {
				continue // a group's, Trend's or iteration's errors and rate are its requests'
			}
			show := showChange
			if m == key {
				show = showInterval
			}
			if legacy && !legacyStat(m) {
				continue
			}
			q.columns = append(q.columns, transactionColumn(k, m, statLabel(m, units[k]), show, legacy))
		}
		out = append(out, q)
	}
	return out
}

// legacyStat is a statistic an older sweep's scenario statistics hold.
func legacyStat(m perfexpv1alpha1.ObjectiveMetric) bool {
	switch m {
	case perfexpv1alpha1.MetricAvg, perfexpv1alpha1.MetricP95, perfexpv1alpha1.MetricErrorRate, perfexpv1alpha1.MetricRate:
		return true
	}
	return false
}

func transactionTitle(k transactionKey, unit string) string {
	switch k.kind {
	case TransactionRequest:
		return k.scenario + " / " + k.name
	case TransactionGroup:
		return k.scenario + " · group " + k.name
	case TransactionTrend:
		if unit != "" && unit != "ms" {
			return fmt.Sprintf("%s · Trend %s (%s)", k.scenario, k.name, unit)
		}
		return k.scenario + " · Trend " + k.name
	case TransactionIteration:
		return k.scenario + " · iteration"
	case TransactionCounter:
		return k.scenario + " · Counter " + k.name
	}
	return k.scenario
}

// statLabel is a statistic's column header.
func statLabel(m perfexpv1alpha1.ObjectiveMetric, unit string) string {
	switch m {
	case perfexpv1alpha1.MetricErrorRate:
		return "Errors %"
	case perfexpv1alpha1.MetricRate:
		return unitPerSecond
	}
	label := strings.ToLower(string(m))
	if m == perfexpv1alpha1.MetricAvg {
		label = "Avg"
	}
	if unit != "" {
		label += " (" + unit + ")"
	}
	return label
}

// transactionColumn is one statistic of a transaction. The comparison names its rows as the run
// report's tables do ("checkinout p95", "checkinout/GET /loans p95", "checkinout group check-out
// p95", "checkinout counter refreshes rate"): the column finds its row by that name.
func transactionColumn(k transactionKey, m perfexpv1alpha1.ObjectiveMetric, label string, show int, legacy bool) sweepColumn {
	col := sweepColumn{label: label, show: show, points: m == perfexpv1alpha1.MetricErrorRate}
	col.value = func(a *SweepArmResult) *float64 {
		if legacy {
			for _, s := range a.Scenarios {
				if s.Name == k.scenario {
					return SweepTransactionStats{Avg: s.Avg, P95: s.P95, ErrorPercent: s.ErrorPercent, Rate: s.Rate}.Stat(m)
				}
			}
			return nil
		}
		for _, t := range a.Transactions {
			if t.Scenario == k.scenario && t.Kind == k.kind && t.Name == k.name {
				return t.Stat(m)
			}
		}
		return nil
	}
	stat := strings.ToLower(string(m))
	var name string
	switch k.kind {
	case TransactionScenario:
		name = k.scenario + " " + stat
	case TransactionRequest:
		col.metric = func(mc result.MetricComparison) bool {
			return mc.Scenario == k.scenario && mc.Request == k.name && mc.Kind == m && mc.Workload == "" && mc.Route == ""
		}
		return col
	case TransactionGroup:
		name = k.scenario + " group " + k.name + " " + stat
	case TransactionTrend:
		name = k.scenario + " trend " + k.name + " " + stat
	case TransactionIteration:
		name = k.scenario + " iteration " + stat
	case TransactionCounter:
		name = k.scenario + " counter " + k.name + " rate"
	}
	col.metric = func(mc result.MetricComparison) bool {
		if k.kind == TransactionScenario && mc.Metric == "" {
			// Rows of an older perfexp's results may name no metric: the scenario's own are
			// the ones of its kind without a request.
			return mc.Scenario == k.scenario && mc.Request == "" && mc.Kind == m && mc.Workload == "" && mc.Route == ""
		}
		return mc.Metric == name && mc.Workload == "" && mc.Route == ""
	}
	return col
}

// workloadQuantities are the Services tables, one per observed workload, those whose CPU or
// memory moved the most first; spec.report.maxWorkloads keeps that many.
func workloadQuantities(r *SweepResult) []sweepQuantity {
	var refs []string
	seen := map[string]bool{}
	for _, a := range r.Arms {
		for _, w := range a.Workloads {
			if !seen[w.Ref()] {
				seen[w.Ref()] = true
				refs = append(refs, w.Ref())
			}
		}
	}
	out := make([]sweepQuantity, 0, len(refs))
	for _, ref := range refs {
		find := func(a *SweepArmResult) *SweepWorkloadStats {
			for i := range a.Workloads {
				if a.Workloads[i].Ref() == ref {
					return &a.Workloads[i]
				}
			}
			return nil
		}
		field := func(f func(w *SweepWorkloadStats) *float64) func(a *SweepArmResult) *float64 {
			return func(a *SweepArmResult) *float64 {
				if w := find(a); w != nil {
					return f(w)
				}
				return nil
			}
		}
		row := func(kind perfexpv1alpha1.ObjectiveMetric) func(mc result.MetricComparison) bool {
			return func(mc result.MetricComparison) bool { return mc.Workload == ref && mc.Kind == kind }
		}
		pods := func(w *SweepWorkloadStats) *float64 {
			if w.Pods == 0 {
				return nil
			}
			p := float64(w.Pods)
			return &p
		}
		memory := func(w *SweepWorkloadStats) *float64 {
			if w.MemoryAvg == nil {
				return nil
			}
			return result.Num(*w.MemoryAvg / (1 << 20))
		}
		// A workload with neither a request nor a limit has no shares to show.
		shares := func(w *SweepWorkloadStats) *float64 {
			if w.CPUPercentOfRequest != nil {
				return w.CPUPercentOfRequest
			}
			return w.CPUPercentOfLimit
		}
		parts := strings.SplitN(ref, "/", 3)
		title := ref
		if len(parts) == 3 {
			title = fmt.Sprintf("%s %s/%s", strings.ToLower(parts[0]), parts[1], parts[2])
		}
		out = append(out, sweepQuantity{section: perfexpv1alpha1.SweepSectionServices, ref: ref, title: title, columns: []sweepColumn{
			{label: "Pods", show: showValue, whole: true, value: field(pods)},
			{label: "CPU (cores)", show: showInterval, value: field(func(w *SweepWorkloadStats) *float64 { return w.CPUAvg }), metric: row(result.MetricCPU)},
			{label: "% of request / limit", show: showValue, value: field(shares), text: func(a *SweepArmResult) string {
				w := find(a)
				if w == nil {
					return "-"
				}
				return compact(w.CPUPercentOfRequest) + " / " + compact(w.CPUPercentOfLimit)
			}},
			{label: "Throttled %", show: showValue, value: field(func(w *SweepWorkloadStats) *float64 { return w.CPUThrottledPercent })},
			{label: "Memory (MiB)", show: showInterval, value: field(memory), metric: row(result.MetricMemory)},
		}})
	}
	for i := range out {
		out[i].moved, out[i].spread = movement(r, out[i])
	}
	slices.SortStableFunc(out, func(a, b sweepQuantity) int {
		if c := cmp.Compare(b.moved, a.moved); c != 0 {
			return c
		}
		return cmp.Compare(b.spread, a.spread)
	})
	if r.Report != nil && r.Report.MaxWorkloads != nil && int(*r.Report.MaxWorkloads) < len(out) {
		n := int(*r.Report.MaxWorkloads)
		left := make([]string, 0, len(out)-n)
		for _, q := range out[n:] {
			left = append(left, q.title)
		}
		out = out[:n]
		out[n-1].footer = fmt.Sprintf("%d more workloads moved less (spec.report.maxWorkloads: %d): %s.", len(left), n, result.ShortList(left, 8))
	}
	return out
}

// queryQuantities are the Queries tables: one per custom query, with a column per series for a
// query that returned several (one per broker), the largest in the baseline first.
func queryQuantities(r *SweepResult) []sweepQuantity {
	var names []string
	units := map[string]string{}
	series := map[string][]string{}
	seen := map[string]bool{}
	for _, a := range r.Arms {
		for _, q := range a.Queries {
			if !seen[q.Name] {
				seen[q.Name] = true
				names = append(names, q.Name)
				units[q.Name] = q.Unit
			}
			for _, s := range q.Series {
				if l := labels(s.Labels); !slices.Contains(series[q.Name], l) {
					series[q.Name] = append(series[q.Name], l)
				}
			}
		}
	}
	find := func(a *SweepArmResult, name string) *SweepQueryStats {
		for i := range a.Queries {
			if a.Queries[i].Name == name {
				return &a.Queries[i]
			}
		}
		return nil
	}
	out := make([]sweepQuantity, 0, len(names))
	for _, name := range names {
		title := "query " + name
		if u := units[name]; u != "" {
			title += " (" + u + ")"
		}
		q := sweepQuantity{section: perfexpv1alpha1.SweepSectionQueries, title: title}
		ls := series[name]
		if len(ls) < 2 {
			q.columns = []sweepColumn{{label: "Value", show: showInterval,
				value: func(a *SweepArmResult) *float64 {
					if s := find(a, name); s != nil {
						return s.Value
					}
					return nil
				},
				metric: func(mc result.MetricComparison) bool {
					return mc.Kind == perfexpv1alpha1.MetricQuery && mc.Metric == "query "+name
				}}}
			out = append(out, q)
			continue
		}
		value := func(l string) func(a *SweepArmResult) *float64 {
			return func(a *SweepArmResult) *float64 {
				if s := find(a, name); s != nil {
					for _, sr := range s.Series {
						if labels(sr.Labels) == l {
							return sr.Value
						}
					}
				}
				return nil
			}
		}
		if len(r.Arms) > 0 {
			base := &r.Arms[0]
			slices.SortStableFunc(ls, func(x, y string) int {
				vx, vy := value(x)(base), value(y)(base)
				return cmp.Compare(orZero(vy), orZero(vx))
			})
		}
		if len(ls) > maxQuerySeries {
			q.footer = fmt.Sprintf("%d more series of query %s, smaller in the baseline, are in results.json.", len(ls)-maxQuerySeries, name)
			ls = ls[:maxQuerySeries]
		}
		for _, l := range ls {
			q.columns = append(q.columns, sweepColumn{label: seriesLabel(l), show: showChange, value: value(l)})
		}
		out = append(out, q)
	}
	return out
}
