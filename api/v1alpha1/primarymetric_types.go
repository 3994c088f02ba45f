package v1alpha1

// PrimaryMetric names a quantity the comparison's headline is decided on: a scenario's or one
// request's HTTP statistic, a k6 group's (transaction's) or custom Trend's distribution, a custom
// Counter's rate or custom Rate's share, a custom query's value, or a workload's CPU or memory.
// The selectors are the objectives' (group, trend, counter, rate, query), plus workload.
// +kubebuilder:validation:XValidation:rule="(has(self.request) ? 1 : 0) + (has(self.group) ? 1 : 0) + (has(self.trend) ? 1 : 0) + (has(self.counter) ? 1 : 0) + (has(self.rate) ? 1 : 0) + (has(self.query) ? 1 : 0) + (has(self.workload) ? 1 : 0) <= 1",message="a primary metric names at most one of request, group, trend, counter, rate, query and workload"
// +kubebuilder:validation:XValidation:rule="!has(self.request) || has(self.scenario)",message="request needs scenario"
// +kubebuilder:validation:XValidation:rule="!(has(self.group) || has(self.trend) || has(self.counter) || has(self.rate)) || has(self.scenario)",message="group, trend, counter and rate need scenario: they are a scenario's k6 metrics"
// +kubebuilder:validation:XValidation:rule="!(has(self.query) || has(self.workload)) || !has(self.scenario)",message="query and workload belong to the whole run, not to a scenario: leave scenario empty"
// +kubebuilder:validation:XValidation:rule="self.metric != 'Max'",message="a primary metric needs an interval: Max is one request's latency; use Avg, P50, P75, P90, P95 or P99"
// +kubebuilder:validation:XValidation:rule="!(self.metric in ['PassRate', 'Min', 'Last'])",message="PassRate, Min and Last judge one k6 check or Gauge in objectives; they cannot be primary metrics"
// +kubebuilder:validation:XValidation:rule="!(has(self.group) || has(self.trend)) || self.metric in ['Avg', 'P50', 'P75', 'P90', 'P95', 'P99']",message="a group or trend primary metric takes a distribution metric: Avg, P50, P75, P90, P95 or P99"
// +kubebuilder:validation:XValidation:rule="(self.metric == 'Count') == has(self.counter)",message="counter is set exactly when metric is Count (a Counter is compared on its rate per second)"
// +kubebuilder:validation:XValidation:rule="(self.metric == 'Percent') == has(self.rate)",message="rate is set exactly when metric is Percent (a custom Rate's share of non-zero values)"
// +kubebuilder:validation:XValidation:rule="(self.metric == 'Query') == has(self.query)",message="query is set exactly when metric is Query"
// +kubebuilder:validation:XValidation:rule="has(self.route) || (self.metric in ['CPU', 'CPUPercentOfRequest', 'Memory']) == has(self.workload)",message="workload is set exactly when metric is CPU, CPUPercentOfRequest or Memory, or with route"
// +kubebuilder:validation:XValidation:rule="!has(self.route) || (has(self.workload) && self.metric in ['Avg', 'P95', 'ErrorRate'])",message="route needs workload (the service whose own histogram analysis.observe[].routes reads) and metric Avg, P95 or ErrorRate"
// +kubebuilder:validation:XValidation:rule="!(has(self.counter) || has(self.rate) || has(self.query)) || has(self.direction)",message="a counter, rate or query primary metric needs a direction (LowerIsBetter, HigherIsBetter or TwoSided): whether more is better is the script's or the query's to say"
type PrimaryMetric struct {
	// metric is the statistic: Avg, P50, P75, P90, P95, P99, ErrorRate or Rate (requests per
	// second) of a scenario or request; Avg to P99 of a group or trend; Count of a counter (its
	// rate per second); Percent of a rate; Query of a query; CPU (cores), CPUPercentOfRequest
	// or Memory (MiB) of a workload.
	// +required
	Metric ObjectiveMetric `json:"metric"`

	// scenario the metric is taken from; empty means every scenario (one primary metric each)
	// for a scenario's own statistic, and must be empty for query and workload.
	// +optional
	// +kubebuilder:validation:MaxLength=40
	Scenario string `json:"scenario,omitempty"`

	// request narrows the metric to one request name (the k6 `name` tag) of the scenario.
	// +optional
	// +kubebuilder:validation:MaxLength=256
	Request string `json:"request,omitempty"`

	// group names one k6 group (transaction) of the scenario by its path as the report shows
	// it ("check-out", or "outer::inner"): its group_duration.
	// +optional
	// +kubebuilder:validation:MaxLength=256
	Group string `json:"group,omitempty"`

	// trend names one custom k6 Trend of the scenario by its name in the script
	// (`new Trend('import_duration', true)` -> import_duration), in its own unit.
	// +optional
	// +kubebuilder:validation:MaxLength=256
	Trend string `json:"trend,omitempty"`

	// counter names one custom k6 Counter of the scenario (metric Count), compared on its
	// rate per second.
	// +optional
	// +kubebuilder:validation:MaxLength=256
	Counter string `json:"counter,omitempty"`

	// rate names one custom k6 Rate of the scenario (metric Percent), compared in points of
	// its share of non-zero values. k6 writes a Rate without counts, so only repeated runs
	// decide it.
	// +optional
	// +kubebuilder:validation:MaxLength=256
	Rate string `json:"rate,omitempty"`

	// query names one of analysis.queries (metric Query). A query has one value per run, so
	// only repeated runs decide it, with the run as the unit.
	// +optional
	// +kubebuilder:validation:MaxLength=63
	Query string `json:"query,omitempty"`

	// workload names one workload whose CPU or memory is compared: one the variant touches,
	// one of analysis.observe, or one of the target namespace.
	// +optional
	Workload *MetricWorkload `json:"workload,omitempty"`

	// route names one route of the workload's own request histogram (an observe entry with
	// routes reads it), with metric Avg, P95 or ErrorRate: the service-side latency or error
	// share of that API decides the headline.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	Route string `json:"route,omitempty"`

	// direction says which way a change is worse: LowerIsBetter, HigherIsBetter, or TwoSided
	// (any change beyond the minimum meaningful change matters, and is reported as Regressed
	// whichever way it went; the reason says which). Defaults to HigherIsBetter for Rate and
	// LowerIsBetter for latencies, error rates, groups, Trends, CPU and memory; a counter, rate
	// or query must declare it.
	// +optional
	Direction MetricDirection `json:"direction,omitempty"`
}

// MetricWorkload names one workload of a primary metric.
type MetricWorkload struct {
	// kind of the workload.
	// +optional
	// +kubebuilder:default=Deployment
	Kind WorkloadKind `json:"kind,omitempty"`

	// name of the workload.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`

	// namespace of the workload; empty matches the workload of that kind and name in any
	// namespace the run reports (the target namespace, or an observed one).
	// +optional
	// +kubebuilder:validation:MaxLength=63
	Namespace string `json:"namespace,omitempty"`
}

// MetricDirection says which way a primary metric's change is worse.
// +kubebuilder:validation:Enum=LowerIsBetter;HigherIsBetter;TwoSided
type MetricDirection string

// The directions of a primary metric.
const (
	// LowerIsBetter: an increase beyond the minimum meaningful change is Regressed, a decrease
	// Improved.
	LowerIsBetter MetricDirection = "LowerIsBetter"
	// HigherIsBetter: a decrease beyond it is Regressed, an increase Improved.
	HigherIsBetter MetricDirection = "HigherIsBetter"
	// TwoSided: a change beyond it either way is Regressed (the reason names the way), for a
	// quantity that should not move at all; NoMeaningfulChange and Inconclusive read as usual,
	// and it is never Improved.
	TwoSided MetricDirection = "TwoSided"
)
