package v1alpha1

// Results summarise an experiment's run. Numbers are decimal strings so they survive any JSON
// client exactly; an absent field means no data, never zero. The full results, with every
// request name and slice, are in the report ConfigMap.
type Results struct {
	// validity says whether the results can be trusted.
	// +optional
	Validity Validity `json:"validity,omitempty"`

	// invalidReason explains why the results are invalid.
	// +optional
	// +kubebuilder:validation:MaxLength=1024
	InvalidReason string `json:"invalidReason,omitempty"`

	// backendWarnings are the warnings the metrics backend sent with its answers (Prometheus'
	// "warnings", a Thanos or Cortex partial response). Counts read with a warning are not
	// called exact; a partial answer makes the results Invalid.
	// +optional
	// +kubebuilder:validation:MaxItems=8
	// +kubebuilder:validation:items:MaxLength=512
	BackendWarnings []string `json:"backendWarnings,omitempty"`

	// latencySource says where percentiles came from: NativeHistogram (exact merge across
	// runners) or TrendStats (k6's per-runner gauges, a labelled fallback).
	// +optional
	LatencySource LatencySource `json:"latencySource,omitempty"`

	// p95 is the 95th percentile response time over all scenarios, in milliseconds.
	// +optional
	P95 string `json:"p95,omitempty"`

	// scenarios lists results per scenario.
	// +optional
	// +kubebuilder:validation:MaxItems=16
	Scenarios []ScenarioResult `json:"scenarios,omitempty"`

	// workloads lists CPU and memory per observed workload.
	// +optional
	// +kubebuilder:validation:MaxItems=64
	Workloads []WorkloadResult `json:"workloads,omitempty"`

	// queries lists the custom queries' results.
	// +optional
	// +kubebuilder:validation:MaxItems=32
	Queries []QueryResult `json:"queries,omitempty"`

	// objectives lists each objective's outcome.
	// +optional
	// +kubebuilder:validation:MaxItems=32
	Objectives []ObjectiveResult `json:"objectives,omitempty"`
}

// Validity says whether results can be trusted.
// +kubebuilder:validation:Enum=Valid;Invalid
type Validity string

// The validity values.
const (
	Valid   Validity = "Valid"
	Invalid Validity = "Invalid"
)

// LatencySource is where latency percentiles came from.
// +kubebuilder:validation:Enum=NativeHistogram;TrendStats;None
type LatencySource string

// The latency sources.
const (
	LatencyFromNativeHistogram LatencySource = "NativeHistogram"
	LatencyFromTrendStats      LatencySource = "TrendStats"
	LatencyNone                LatencySource = "None"
)

// RequestStats are the request statistics of a scenario or a request name. Latencies are in
// milliseconds.
type RequestStats struct {
	// requests is the exact number of requests.
	// +optional
	Requests *int64 `json:"requests,omitempty"`
	// errors is the exact number of failed requests.
	// +optional
	Errors *int64 `json:"errors,omitempty"`
	// rate is requests per second over the measured window.
	// +optional
	Rate string `json:"rate,omitempty"`
	// errorPercent is errors as a percentage of requests.
	// +optional
	ErrorPercent string `json:"errorPercent,omitempty"`
	// avg response time.
	// +optional
	Avg string `json:"avg,omitempty"`
	// p50 response time.
	// +optional
	P50 string `json:"p50,omitempty"`
	// p75 response time.
	// +optional
	P75 string `json:"p75,omitempty"`
	// p90 response time.
	// +optional
	P90 string `json:"p90,omitempty"`
	// p95 response time.
	// +optional
	P95 string `json:"p95,omitempty"`
	// p99 response time.
	// +optional
	P99 string `json:"p99,omitempty"`
	// max response time.
	// +optional
	Max string `json:"max,omitempty"`
}

// ScenarioResult is the result of one scenario.
type ScenarioResult struct {
	// name of the scenario.
	Name string `json:"name"`
	// validity of this scenario's results.
	// +optional
	Validity     Validity `json:"validity,omitempty"`
	RequestStats `json:",inline"`
	// topRequests lists the most frequent request names (k6 `name` tag); all are in the report.
	// +optional
	// +kubebuilder:validation:MaxItems=10
	TopRequests []RequestResult `json:"topRequests,omitempty"`
	// groups lists the scenario's most frequent k6 groups (its transactions, timed by k6's
	// group_duration), in milliseconds; all are in the report.
	// +optional
	// +kubebuilder:validation:MaxItems=10
	Groups []GroupResult `json:"groups,omitempty"`
	// trends lists the custom Trend metrics the scenario's script defines; all are in the
	// report.
	// +optional
	// +kubebuilder:validation:MaxItems=8
	Trends []TrendResult `json:"trends,omitempty"`
	// failingChecks lists the scenario's k6 checks whose pass rate is below 100 % (the lowest
	// runner's, since it began), lowest first; all checks are in the report.
	// +optional
	// +kubebuilder:validation:MaxItems=8
	FailingChecks []CheckResult `json:"failingChecks,omitempty"`
}

// CheckResult is a k6 check that failed at least once.
type CheckResult struct {
	// name is the check's name in the script.
	// +kubebuilder:validation:MaxLength=256
	Name string `json:"name"`
	// passPercent is its pass rate in percent, e.g. "66.67".
	// +optional
	PassPercent string `json:"passPercent,omitempty"`
}

// Distribution summarises a k6 Trend: its mean, percentiles and max. Percentiles lie within
// the native histogram's bucket bound of the true value; max is an upper bound (the top of the
// highest non-empty bucket).
type Distribution struct {
	// avg is the mean.
	// +optional
	Avg string `json:"avg,omitempty"`
	// p50 is the median.
	// +optional
	P50 string `json:"p50,omitempty"`
	// p75 is the 75th percentile.
	// +optional
	P75 string `json:"p75,omitempty"`
	// p90 is the 90th percentile.
	// +optional
	P90 string `json:"p90,omitempty"`
	// p95 is the 95th percentile.
	// +optional
	P95 string `json:"p95,omitempty"`
	// max is an upper bound of the largest value.
	// +optional
	Max string `json:"max,omitempty"`
}

// GroupResult is one k6 group (a transaction of one or more requests) of a scenario.
type GroupResult struct {
	// name is the group's name; a group inside another is "outer::inner".
	// +kubebuilder:validation:MaxLength=256
	Name string `json:"name"`
	// count is the exact number of executions of the group that ended in the measured window.
	// +optional
	Count *int64 `json:"count,omitempty"`
	// The durations of the group, in milliseconds.
	Distribution `json:",inline"`
}

// TrendResult is one custom k6 Trend of a scenario.
type TrendResult struct {
	// name is the Trend's name in the script.
	// +kubebuilder:validation:MaxLength=256
	Name string `json:"name"`
	// unit is "ms" for a time Trend (`new Trend(name, true)`), empty for plain numbers.
	// +optional
	// +kubebuilder:validation:MaxLength=16
	Unit string `json:"unit,omitempty"`
	// count is the exact number of values added in the measured window.
	// +optional
	Count *int64 `json:"count,omitempty"`
	// The values' distribution, in unit.
	Distribution `json:",inline"`
}

// RequestResult is the result of one request name.
type RequestResult struct {
	// name is the request's k6 `name` tag.
	// +kubebuilder:validation:MaxLength=256
	Name         string `json:"name"`
	RequestStats `json:",inline"`
}

// WorkloadResult is the resource usage of one workload over the measured window.
type WorkloadResult struct {
	// kind of the workload.
	Kind string `json:"kind"`
	// namespace of the workload.
	Namespace string `json:"namespace"`
	// name of the workload.
	Name string `json:"name"`
	// pods is the most pods of the workload running at once during the window; a pod that is
	// gone (its cAdvisor samples are no longer fresh) no longer counts.
	// +optional
	Pods *int32 `json:"pods,omitempty"`
	// cpuAvg is the average CPU use in cores, summed over pods.
	// +optional
	CPUAvg string `json:"cpuAvg,omitempty"`
	// cpuMax is the highest CPU use in cores.
	// +optional
	CPUMax string `json:"cpuMax,omitempty"`
	// cpuPercentOfRequest is cpuAvg as a percentage of the CPU requests; "no request" when none is set.
	// +optional
	CPUPercentOfRequest string `json:"cpuPercentOfRequest,omitempty"`
	// cpuPercentOfLimit is the busiest pod's average CPU as a percentage of its own CPU limit;
	// "no limit" when none is set. Sidecars not in the pod template are left out of it.
	// +optional
	CPUPercentOfLimit string `json:"cpuPercentOfLimit,omitempty"`
	// cpuThrottledPercent is the share of CPU periods that were throttled.
	// +optional
	CPUThrottledPercent string `json:"cpuThrottledPercent,omitempty"`
	// memoryAvg is the average working set in bytes.
	// +optional
	MemoryAvg string `json:"memoryAvg,omitempty"`
	// memoryMax is the highest working set in bytes.
	// +optional
	MemoryMax string `json:"memoryMax,omitempty"`
	// memoryPercentOfLimit is the highest working set of any one pod as a percentage of its own
	// memory limit; "no limit" when none is set. Sidecars not in the pod template are left out.
	// +optional
	MemoryPercentOfLimit string `json:"memoryPercentOfLimit,omitempty"`
	// memoryGrowthPerHour is how fast the post-GC floor of the working set rises, in bytes per
	// hour: the Theil-Sen slope of each pod's block minima after its warm-up, summed over pods.
	// +optional
	MemoryGrowthPerHour string `json:"memoryGrowthPerHour,omitempty"`
	// leak is the memory-leak verdict: None, Suspected, LevelShift (the floor stepped up once
	// and stayed level: not a leak), or WindowTooShort.
	// +optional
	Leak string `json:"leak,omitempty"`
	// restarts of the workload's containers during the window.
	// +optional
	Restarts *int64 `json:"restarts,omitempty"`
	// oomKills of the workload's containers during the window.
	// +optional
	OOMKills *int64 `json:"oomKills,omitempty"`
}

// QueryResult is the result of one custom query.
type QueryResult struct {
	// name of the query.
	Name string `json:"name"`
	// value is the scalar result, absent when the query returned no data or several series.
	// +optional
	Value string `json:"value,omitempty"`
	// unit of the value.
	// +optional
	Unit string `json:"unit,omitempty"`
	// series is the number of series the query returned; the report lists the 50 of the
	// largest values (fewer when it must be cut to fit its ConfigMap) and counts the rest.
	// +optional
	Series int32 `json:"series,omitempty"`
	// error explains a failed query.
	// +optional
	// +kubebuilder:validation:MaxLength=1024
	Error string `json:"error,omitempty"`
}

// ObjectiveOutcome is how one objective was judged.
// +kubebuilder:validation:Enum=Met;Missed;Unknown
type ObjectiveOutcome string

// The objective outcomes.
const (
	ObjectiveMet     ObjectiveOutcome = "Met"
	ObjectiveMissed  ObjectiveOutcome = "Missed"
	ObjectiveUnknown ObjectiveOutcome = "Unknown"
)

// ObjectiveResult is the outcome of one objective.
type ObjectiveResult struct {
	// name of the objective.
	Name string `json:"name"`
	// outcome of the objective.
	Outcome ObjectiveOutcome `json:"outcome"`
	// value measured.
	// +optional
	Value string `json:"value,omitempty"`
	// message explains the outcome.
	// +optional
	// +kubebuilder:validation:MaxLength=512
	Message string `json:"message,omitempty"`
}

// Change is how a run compares with its baseline.
// +kubebuilder:validation:Enum=Improved;Regressed;NoMeaningfulChange;Inconclusive;Unknown
type Change string

// The change values. A change is decided on the 95 % interval of the relative change and the
// minimum meaningful change δ (spec.analysis.minMeaningfulChangePercent).
const (
	// ChangeImproved: the whole interval lies beyond δ in the better direction.
	ChangeImproved Change = "Improved"
	// ChangeRegressed: the whole interval lies beyond δ in the worse direction.
	ChangeRegressed Change = "Regressed"
	// ChangeNoMeaningfulChange: the whole interval lies inside ±δ (equivalence).
	ChangeNoMeaningfulChange Change = "NoMeaningfulChange"
	// ChangeInconclusive: the interval straddles ±δ (too few samples, or too noisy to tell).
	ChangeInconclusive Change = "Inconclusive"
	// ChangeUnknown: no comparison could be made (no data, no usable baseline).
	ChangeUnknown Change = "Unknown"
)

// Comparison compares the experiment with its baseline.
type Comparison struct {
	// baseline is the name of the baseline experiment.
	Baseline string `json:"baseline"`
	// change is the headline, decided on the primary metrics only (by default each
	// scenario's p95 and error rate) with Holm's multiplicity control across them: Regressed
	// or Improved when a primary metric changed beyond the minimum meaningful change,
	// NoMeaningfulChange when every primary metric stayed inside it, else Inconclusive;
	// Unknown when the baseline could not be compared with (message says why).
	// +optional
	Change Change `json:"change,omitempty"`
	// method says how the intervals were computed: BlockBootstrap (one run per side,
	// resampling blocks of intervals: between-run noise is not in its intervals, so repeat
	// runs before trusting a single-run verdict) or Runs (repeated runs, the run is the unit).
	// +optional
	// +kubebuilder:validation:MaxLength=64
	Method string `json:"method,omitempty"`
	// minMeaningfulChangePercent is the minimum meaningful change δ the verdicts used.
	// +optional
	MinMeaningfulChangePercent string `json:"minMeaningfulChangePercent,omitempty"`
	// metrics lists the compared metrics, primary metrics first (all are in the report).
	// +optional
	// +kubebuilder:validation:MaxItems=32
	Metrics []MetricComparison `json:"metrics,omitempty"`
	// message explains why a comparison could not be made (change Unknown).
	// +optional
	// +kubebuilder:validation:MaxLength=1024
	Message string `json:"message,omitempty"`
	// disturbed explains why no change was claimed although the intervals would have allowed
	// one: the node's load outside the experiment differed too much between the two runs.
	// +optional
	// +kubebuilder:validation:MaxLength=1024
	Disturbed string `json:"disturbed,omitempty"`
	// noise says how the comparison holds the noise between runs: for one run per side, the
	// between-run sd added to its intervals and where it came from (a calibration, or the
	// conservative default).
	// +optional
	// +kubebuilder:validation:MaxLength=512
	Noise string `json:"noise,omitempty"`
}

// MetricComparison compares one metric with the baseline.
type MetricComparison struct {
	// metric compared, e.g. "checkout p95".
	Metric string `json:"metric"`
	// primary is true for the metrics the headline is decided on.
	// +optional
	Primary bool `json:"primary,omitempty"`
	// baseline value.
	// +optional
	Baseline string `json:"baseline,omitempty"`
	// value in this experiment.
	// +optional
	Value string `json:"value,omitempty"`
	// delta is value minus baseline.
	// +optional
	Delta string `json:"delta,omitempty"`
	// deltaPercent is delta as a percentage of the baseline.
	// +optional
	DeltaPercent string `json:"deltaPercent,omitempty"`
	// low and high bound the 95 % interval of the change: in percent of the baseline, or
	// in percentage points for error rates (scale says which).
	// +optional
	Low string `json:"low,omitempty"`
	// high is the upper bound of the 95 % interval, on the same scale as low.
	// +optional
	High string `json:"high,omitempty"`
	// scale of low and high: Percent (relative change) or Points (absolute difference of
	// error rates in percentage points).
	// +optional
	// +kubebuilder:validation:MaxLength=16
	Scale string `json:"scale,omitempty"`
	// n is the number of samples of this experiment (intervals, or runs), baselineN the
	// baseline's.
	// +optional
	N int32 `json:"n,omitempty"`
	// baselineN is the number of samples of the baseline.
	// +optional
	BaselineN int32 `json:"baselineN,omitempty"`
	// pValue of the test of no change, a detail: the verdict is decided on the interval.
	// +optional
	PValue string `json:"pValue,omitempty"`
	// change is the judged direction.
	// +optional
	Change Change `json:"change,omitempty"`
	// why explains an Inconclusive or Unknown change.
	// +optional
	// +kubebuilder:validation:MaxLength=256
	Why string `json:"why,omitempty"`
}
