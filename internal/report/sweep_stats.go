// The per-arm statistics behind the sweep report's tables of transactions, services and
// queries: what each arm measured, the mean over its runs. The changes and verdicts those tables
// show are the arm's comparison's rows; these are the values beside them.

package report

import (
	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
)

// The kinds of transaction a sweep's Transactions tables have a table for.
const (
	// TransactionScenario is a whole scenario: every request of it.
	TransactionScenario = "Scenario"
	// TransactionRequest is one request name of a scenario.
	TransactionRequest = "Request"
	// TransactionGroup is a k6 group() timed as a whole.
	TransactionGroup = "Group"
	// TransactionTrend is a custom k6 Trend.
	TransactionTrend = "Trend"
	// TransactionIteration is a scenario's iteration duration.
	TransactionIteration = "Iteration"
	// TransactionCounter is a custom k6 Counter, by its rate.
	TransactionCounter = "Counter"
)

// SweepTransactionStats are one transaction's statistics in one arm, the mean over the arm's
// runs that have it: times and rates by their geometric mean (the comparison's change is on the
// log scale), error % by the arithmetic mean (as the comparison compares them). Times are in
// milliseconds except a Trend's in its own Unit; Rate is per second.
type SweepTransactionStats struct {
	Scenario string `json:"scenario"`
	// Kind is TransactionScenario, TransactionRequest, TransactionGroup, TransactionTrend,
	// TransactionIteration or TransactionCounter; Name the request's, group's, Trend's or
	// Counter's name.
	Kind         string   `json:"kind"`
	Name         string   `json:"name,omitempty"`
	Unit         string   `json:"unit,omitempty"`
	Runs         int      `json:"runs"`
	Avg          *float64 `json:"avg,omitempty"`
	P50          *float64 `json:"p50,omitempty"`
	P75          *float64 `json:"p75,omitempty"`
	P90          *float64 `json:"p90,omitempty"`
	P95          *float64 `json:"p95,omitempty"`
	P99          *float64 `json:"p99,omitempty"`
	Max          *float64 `json:"max,omitempty"`
	ErrorPercent *float64 `json:"errorPercent,omitempty"`
	Rate         *float64 `json:"rate,omitempty"`
}

// Stat is the transaction's value of one statistic; nil when it has none.
func (t SweepTransactionStats) Stat(m perfexpv1alpha1.ObjectiveMetric) *float64 {
	switch m {
	case perfexpv1alpha1.MetricAvg:
		return t.Avg
	case perfexpv1alpha1.MetricP50:
		return t.P50
	case perfexpv1alpha1.MetricP75:
		return t.P75
	case perfexpv1alpha1.MetricP90:
		return t.P90
	case perfexpv1alpha1.MetricP95:
		return t.P95
	case perfexpv1alpha1.MetricP99:
		return t.P99
	case perfexpv1alpha1.MetricMax:
		return t.Max
	case perfexpv1alpha1.MetricErrorRate:
		return t.ErrorPercent
	case perfexpv1alpha1.MetricRate:
		return t.Rate
	}
	return nil
}

// SweepWorkloadStats are one observed workload's CPU and memory in one arm, the arithmetic mean
// over the arm's runs that measured it (the comparison's values are that mean too). CPU is in
// cores summed over the pods, memory the working set in bytes; the percentages are as the run
// reports' Services tables define them.
type SweepWorkloadStats struct {
	Kind      string `json:"kind"`
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	Runs      int    `json:"runs"`
	// Pods is the most pods of any of the runs.
	Pods                 int      `json:"pods"`
	CPUAvg               *float64 `json:"cpuAvg,omitempty"`
	CPUPercentOfRequest  *float64 `json:"cpuPercentOfRequest,omitempty"`
	CPUPercentOfLimit    *float64 `json:"cpuPercentOfLimit,omitempty"`
	CPUThrottledPercent  *float64 `json:"cpuThrottledPercent,omitempty"`
	MemoryAvg            *float64 `json:"memoryAvg,omitempty"`
	MemoryPercentOfLimit *float64 `json:"memoryPercentOfLimit,omitempty"`
}

// Ref names the workload as comparisons do: "Deployment/shop/api".
func (w SweepWorkloadStats) Ref() string { return w.Kind + "/" + w.Namespace + "/" + w.Name }

// SweepQueryStats is one custom query in one arm: the mean of its value, or of each of its
// series, over the arm's runs.
type SweepQueryStats struct {
	Name   string             `json:"name"`
	Unit   string             `json:"unit,omitempty"`
	Runs   int                `json:"runs"`
	Value  *float64           `json:"value,omitempty"`
	Series []SweepQuerySeries `json:"series,omitempty"`
}

// SweepQuerySeries is one series of a query that returned several (one per broker, one per
// database): its labels and mean value.
type SweepQuerySeries struct {
	Labels map[string]string `json:"labels"`
	Value  *float64          `json:"value,omitempty"`
}

// SweepRouteStats is one route of an observed service in one arm, from the service's own
// request histogram: geometric means of its latencies (ms) and rate, arithmetic of its error
// share, over the arm's runs that had it.
type SweepRouteStats struct {
	// Workload names the service as comparisons do ("Deployment/shop/api").
	Workload     string   `json:"workload"`
	Route        string   `json:"route"`
	Runs         int      `json:"runs"`
	Rate         *float64 `json:"rate,omitempty"`
	ErrorPercent *float64 `json:"errorPercent,omitempty"`
	Avg          *float64 `json:"avg,omitempty"`
	P50          *float64 `json:"p50,omitempty"`
	P75          *float64 `json:"p75,omitempty"`
	P95          *float64 `json:"p95,omitempty"`
	P99          *float64 `json:"p99,omitempty"`
}
