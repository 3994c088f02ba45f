package v1alpha1

// SweepReport chooses the per-arm tables a sweep's report shows after its table of arms: one
// table per quantity, a row per arm with its value and its change against the baseline.
// +kubebuilder:validation:XValidation:rule="!has(self.statistics) || !has(self.sections) || self.sections.exists(s, s == 'Transactions')",message="statistics are the columns of the Transactions tables: list Transactions in sections too"
// +kubebuilder:validation:XValidation:rule="!has(self.maxWorkloads) || !has(self.sections) || self.sections.exists(s, s == 'Services')",message="maxWorkloads limits the Services tables: list Services in sections too"
type SweepReport struct {
	// sections are the tables, in this order whatever the list's: Transactions (each scenario,
	// its most frequent requests, k6 groups, Trends, iteration durations and Counters),
	// Services (each observed workload's CPU and memory), Routes (the slowest APIs of the
	// services whose own request histogram analysis.observe[].routes reads) and Queries (the
	// custom queries). Omitted: all four.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=4
	Sections []SweepReportSection `json:"sections,omitempty"`

	// statistics are the columns of the Transactions tables, in this order. Omitted: Avg, P50,
	// P75, P95, P99, ErrorRate, Rate. The change of P95 (or of the first statistic listed when
	// P95 is not) gets its interval and verdict in a column of its own.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=9
	// +kubebuilder:validation:XValidation:rule="self.all(s, s in ['Avg', 'P50', 'P75', 'P90', 'P95', 'P99', 'Max', 'ErrorRate', 'Rate'])",message="the Transactions tables' statistics are Avg, P50, P75, P90, P95, P99, Max, ErrorRate and Rate"
	Statistics []ObjectiveMetric `json:"statistics,omitempty"`

	// maxWorkloads keeps the Services tables of the workloads whose CPU or memory moved the
	// most against the baseline (the largest change of any arm); the others are counted in a
	// line. Omitted: every observed workload.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=200
	MaxWorkloads *int32 `json:"maxWorkloads,omitempty"`
}

// SweepReportSection is one kind of per-arm table of a sweep's report.
// +kubebuilder:validation:Enum=Transactions;Services;Routes;Queries
type SweepReportSection string

const (
	// SweepSectionTransactions are the tables of scenarios, requests, groups, Trends,
	// iteration durations and Counters.
	SweepSectionTransactions SweepReportSection = "Transactions"
	// SweepSectionServices are the tables of the observed workloads' CPU and memory.
	SweepSectionServices SweepReportSection = "Services"
	// SweepSectionRoutes are the tables of the observed services' slowest routes, from their
	// own request histograms (server-side latency).
	SweepSectionRoutes SweepReportSection = "Routes"
	// SweepSectionQueries is the table of the custom queries.
	SweepSectionQueries SweepReportSection = "Queries"
)
