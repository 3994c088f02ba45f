package v1alpha1

import (
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Analysis configures how an experiment's results are read from Prometheus and judged.
// +kubebuilder:validation:XValidation:rule="!has(self.queries) || self.queries.all(q, self.queries.exists_one(r, r.name == q.name))",message="query names must be unique"
// +kubebuilder:validation:XValidation:rule="!has(self.slices) || self.slices.all(q, self.slices.exists_one(r, r.name == q.name))",message="slice names must be unique"
// +kubebuilder:validation:XValidation:rule="!has(self.prometheusAuth) || has(self.prometheusURL)",message="prometheusAuth needs prometheusURL: the operator's own Prometheus is reached with the operator's credentials"
type Analysis struct {
	// prometheusURL overrides the operator's Prometheus for this experiment.
	// +optional
	// +kubebuilder:validation:MaxLength=1024
	// +kubebuilder:validation:Pattern=`^https?://`
	PrometheusURL string `json:"prometheusURL,omitempty"`

	// prometheusAuth are the credentials, TLS settings and extra headers for
	// spec.analysis.prometheusURL: the analysis reads with them and the k6 runners' remote
	// write sends them. Every value comes from a Secret in the experiment's namespace, checked
	// before anything is patched; none is ever copied into status, reports or events.
	// +optional
	PrometheusAuth *PrometheusAuth `json:"prometheusAuth,omitempty"`

	// observe lists extra workloads to report CPU and memory for, beside those the variant
	// touches (a database, Kafka brokers), and with routes their own latency per route.
	// +optional
	// +kubebuilder:validation:MaxItems=16
	Observe []ObservedWorkloads `json:"observe,omitempty"`

	// queries are named custom PromQL queries evaluated over the window. A query may use the
	// placeholders {{.Namespace}}, {{.TestID}}, {{.Start}}, {{.End}} (RFC 3339), {{.Window}}
	// (a PromQL range such as 1800s) and {{.WarmUpEnd}}, which are replaced by their values;
	// nothing else may stand between {{ and }}.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=32
	Queries []CustomQuery `json:"queries,omitempty"`

	// slices report results for parts of the window too, e.g. the first 2h and the last 12h of
	// a soak.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=8
	Slices []TimeSlice `json:"slices,omitempty"`

	// objectives decide the ObjectivesMet condition and the verdict.
	// +optional
	// +kubebuilder:validation:MaxItems=32
	Objectives []Objective `json:"objectives,omitempty"`

	// maxErrorRatePercent is the error rate (0-100) above which a scenario's results are
	// invalid: fast errors are not fast responses.
	// +optional
	// +kubebuilder:default="5"
	MaxErrorRatePercent *resource.Quantity `json:"maxErrorRatePercent,omitempty"`

	// minMeaningfulChangePercent is the smallest relative change (percent of the baseline)
	// that matters, δ: a metric is Regressed or Improved only when the whole 95 % interval of
	// its change lies beyond ±δ, NoMeaningfulChange when it lies inside ±δ, else
	// Inconclusive. Error rates are compared in percentage points, with δ percent of the
	// baseline's rate but at least 0.1 points. Defaults to 5; a value outside (0, 100) is
	// replaced by the default, and the comparison says so.
	// +optional
	MinMeaningfulChangePercent *resource.Quantity `json:"minMeaningfulChangePercent,omitempty"`

	// maxNodeLoadDifference is how far apart, in CPU cores, the load outside the experiment
	// on the run's nodes and on its baseline's may be before a comparison of one run with one
	// run widens every interval by the share of the node the busier run lost (0.26 cores more
	// on 2 cores: ±13 %), so that only a change larger than the neighbour could cause is
	// claimed; the comparison says which run had the busier node. A single run's interval
	// cannot see a noisy neighbour. Defaults to a tenth of the node's cores (250m when
	// cAdvisor does not say how many); repeated runs (a PerfSweep with repeats) are not
	// affected.
	// +optional
	MaxNodeLoadDifference *resource.Quantity `json:"maxNodeLoadDifference,omitempty"`

	// betweenRun is this environment's run-to-run noise, as measured by a calibration (an A/A
	// PerfSweep: its report prints the value to put here). A comparison of one run with one
	// run cannot see it and adds it to every latency, throughput, CPU and memory interval.
	// It is a floor: a metric whose spread in the latest segment of the baseline's and this
	// run's PerfHistory (at least 3 runs after the last change point, none older than 30 days)
	// is larger takes the history's. Without it the history's spread is used, and without such
	// a history a conservative 10 % is assumed (with Student's t on 3 degrees of freedom), so
	// one run against one run claims only changes far larger than run-to-run noise and never
	// NoMeaningfulChange.
	// +optional
	BetweenRun *BetweenRunNoise `json:"betweenRun,omitempty"`

	// confirm makes an experiment with a baseline settle an answer one run cannot: when the
	// comparison of this run with its baseline is not decisive (Inconclusive or Unknown), the
	// operator runs the baseline's variant and this experiment's variant again, in blocks of
	// one run each in a random order, through the same queue, and looks after every block
	// with the sequential sweep's rule until the headline is Regressed, Improved or
	// NoMeaningfulChange or the budget is spent. The experiment is Confirming meanwhile and
	// status.confirmation reports the answer, the runs and the environment time it took.
	// Needs spec.baseline; not allowed in a PerfSweep's template (use spec.sequential).
	// +optional
	Confirm *Confirm `json:"confirm,omitempty"`

	// primaryMetrics are the metrics the comparison's headline (status.comparison.change) is
	// decided on, with Holm's correction across them; every other compared metric is reported
	// but never flips it. Defaults to each scenario's P95 and ErrorRate. One naming a group,
	// Trend, Counter, Rate, query or workload that neither run produced is still a row of the
	// comparison: Unknown, with the name it looked for.
	// +optional
	// +kubebuilder:validation:MaxItems=16
	PrimaryMetrics []PrimaryMetric `json:"primaryMetrics,omitempty"`

	// failOnRegression makes a Regressed comparison headline (status.comparison.change) fail
	// the verdict, so Argo CD shows the experiment Degraded, kstatus Failed, and
	// `kubectl perfexp watch --fail-on fail` stops a pipeline. Unset takes the operator's
	// default (--fail-on-regression, Helm value failOnRegression; false unless set). In a
	// PerfSweep it applies to every run and makes the sweep's verdict Fail when an arm
	// Regressed.
	// +optional
	FailOnRegression *bool `json:"failOnRegression,omitempty"`

	// historyKey names the PerfHistory this run's record is appended to, instead of one chosen
	// by the fingerprint of the run (target namespace, scenarios, script hashes, load shape,
	// variant). Give runs the same key to follow them as one series even though a script
	// changed; see docs/history.md.
	// +optional
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	HistoryKey string `json:"historyKey,omitempty"`
}

// ObservedWorkloads chooses workloads to observe, possibly in another namespace.
type ObservedWorkloads struct {
	WorkloadSelector `json:",inline"`

	// namespace of the workloads; defaults to the target namespace.
	// +optional
	// +kubebuilder:validation:MaxLength=63
	Namespace string `json:"namespace,omitempty"`

	// routes reads the workloads' own request-duration histogram per route (server-side
	// latency), for the report's "Slowest APIs" table and its comparison with the baseline.
	// +optional
	Routes *RouteHistogram `json:"routes,omitempty"`
}

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

// QueryPattern is the rule a custom query is admitted by (the CEL rule on CustomQuery.Query
// repeats it): every {{ opens one of the placeholders, nothing else.
const QueryPattern = `^([^{]|[{][^{]|[{]$|[{][{][[:space:]]*[.](Namespace|TestID|Start|End|WarmUpEnd|Window)[[:space:]]*[}][}])*$`

// CustomQuery is a named PromQL query reported with the results.
type CustomQuery struct {
	// name of the query, used in reports and objectives.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-zA-Z0-9]([-_a-zA-Z0-9]*[a-zA-Z0-9])?$`
	Name string `json:"name"`

	// query is the PromQL, evaluated once at the end of the window (or of a slice), after
	// its placeholders ({{.Namespace}}, {{.TestID}}, {{.Start}}, {{.End}}, {{.WarmUpEnd}},
	// {{.Window}}; spaces inside the braces allowed) are replaced by their values. It is not
	// a template: any other {{ is refused.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=4096
	// +kubebuilder:validation:XValidation:rule="self.matches('^([^{]|[{][^{]|[{]$|[{][{][[:space:]]*[.](Namespace|TestID|Start|End|WarmUpEnd|Window)[[:space:]]*[}][}])*$')",message="a query may use only the placeholders {{.Namespace}}, {{.TestID}}, {{.Start}}, {{.End}}, {{.WarmUpEnd}} and {{.Window}}; nothing else may stand between {{ and }}"
	Query string `json:"query"`

	// unit of the result, for reports: e.g. cores, bytes, connections, ms, percent.
	// +optional
	// +kubebuilder:validation:MaxLength=32
	Unit string `json:"unit,omitempty"`

	// description says what the query measures.
	// +optional
	// +kubebuilder:validation:MaxLength=256
	Description string `json:"description,omitempty"`
}

// TimeSlice is a part of the measured window, given by offsets from its start or by its last
// stretch.
// +kubebuilder:validation:XValidation:rule="has(self.last) != (has(self.from) || has(self.to))",message="a slice takes either last, or from and/or to"
// +kubebuilder:validation:XValidation:rule="!has(self.from) || !has(self.to) || !self.from.matches('^(([0-9]{1,5}([.][0-9]+)?h)|([0-9]{1,7}([.][0-9]+)?m)|([0-9]{1,9}([.][0-9]+)?s)|([0-9]{1,12}([.][0-9]+)?ms)|([0-9]{1,15}([.][0-9]+)?(us|µs))|([0-9]{1,18}([.][0-9]+)?ns)){1,6}$') || !self.to.matches('^(([0-9]{1,5}([.][0-9]+)?h)|([0-9]{1,7}([.][0-9]+)?m)|([0-9]{1,9}([.][0-9]+)?s)|([0-9]{1,12}([.][0-9]+)?ms)|([0-9]{1,15}([.][0-9]+)?(us|µs))|([0-9]{1,18}([.][0-9]+)?ns)){1,6}$') || duration(self.from) < duration(self.to)",message="a slice's from must be before its to"
type TimeSlice struct {
	// name of the slice.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	Name string `json:"name"`

	// from is the slice's start as an offset from the start of the measured window; at most 720h
	// (30 days), and before to when both are set.
	// +optional
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern=`^([0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h))+$`
	// +kubebuilder:validation:MaxLength=32
	// +kubebuilder:validation:XValidation:rule="self.matches('^(([0-9]{1,5}([.][0-9]+)?h)|([0-9]{1,7}([.][0-9]+)?m)|([0-9]{1,9}([.][0-9]+)?s)|([0-9]{1,12}([.][0-9]+)?ms)|([0-9]{1,15}([.][0-9]+)?(us|µs))|([0-9]{1,18}([.][0-9]+)?ns)){1,6}$') && duration(self) <= duration('720h')",message="slice from must be a duration of at most 720h (30 days), such as 90s or 1h30m"
	From *metav1.Duration `json:"from,omitempty"`

	// to is the slice's end as an offset from the start of the measured window; defaults to its end.
	// Positive, at most 720h (30 days).
	// +optional
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern=`^([0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h))+$`
	// +kubebuilder:validation:MaxLength=32
	// +kubebuilder:validation:XValidation:rule="self.matches('^(([0-9]{1,5}([.][0-9]+)?h)|([0-9]{1,7}([.][0-9]+)?m)|([0-9]{1,9}([.][0-9]+)?s)|([0-9]{1,12}([.][0-9]+)?ms)|([0-9]{1,15}([.][0-9]+)?(us|µs))|([0-9]{1,18}([.][0-9]+)?ns)){1,6}$') && duration(self) > duration('0s') && duration(self) <= duration('720h')",message="slice to must be a positive duration of at most 720h (30 days), such as 90s or 1h30m"
	To *metav1.Duration `json:"to,omitempty"`

	// last is the slice's length counted back from the end of the window; positive, at most 720h.
	// +optional
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern=`^([0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h))+$`
	// +kubebuilder:validation:MaxLength=32
	// +kubebuilder:validation:XValidation:rule="self.matches('^(([0-9]{1,5}([.][0-9]+)?h)|([0-9]{1,7}([.][0-9]+)?m)|([0-9]{1,9}([.][0-9]+)?s)|([0-9]{1,12}([.][0-9]+)?ms)|([0-9]{1,15}([.][0-9]+)?(us|µs))|([0-9]{1,18}([.][0-9]+)?ns)){1,6}$') && duration(self) > duration('0s') && duration(self) <= duration('720h')",message="slice last must be a positive duration of at most 720h (30 days), such as 90s or 1h30m"
	Last *metav1.Duration `json:"last,omitempty"`
}

// ObjectiveMetric is a metric an objective judges.
// +kubebuilder:validation:Enum=Avg;P50;P75;P90;P95;P99;Max;ErrorRate;Rate;Query;PassRate;Count;Percent;Min;Last;CPU;CPUPercentOfRequest;Memory
type ObjectiveMetric string

// The metrics objectives may judge. Latencies are in milliseconds, ErrorRate in percent (0-100),
// Rate in requests per second, Query in the query's own unit and PassRate (a k6 check's pass
// rate, objectives only) in percent (0-100) and Count (a custom Counter's total in the window,
// objectives only) in the Counter's own unit; relative to a baseline, Count is judged on the
// change of the Counter's rate per second. Percent (a custom Rate's share of non-zero
// values, 0-100) and Min and Last (a custom Gauge's, beside Max) judge the script's own Rates
// and Gauges in objectives only, in their own unit. CPU (cores), CPUPercentOfRequest (CPU as a
// share of the workload's total request, 0-100 per request) and Memory (MiB) are a workload's,
// in primary metrics only.
const (
	MetricAvg       ObjectiveMetric = "Avg"
	MetricP50       ObjectiveMetric = "P50"
	MetricP75       ObjectiveMetric = "P75"
	MetricP90       ObjectiveMetric = "P90"
	MetricP95       ObjectiveMetric = "P95"
	MetricP99       ObjectiveMetric = "P99"
	MetricMax       ObjectiveMetric = "Max"
	MetricErrorRate ObjectiveMetric = "ErrorRate"
	MetricRate      ObjectiveMetric = "Rate"
	MetricQuery     ObjectiveMetric = "Query"
	MetricPassRate  ObjectiveMetric = "PassRate"
	MetricCount     ObjectiveMetric = "Count"
	MetricPercent   ObjectiveMetric = "Percent"
	MetricMin       ObjectiveMetric = "Min"
	MetricLast      ObjectiveMetric = "Last"

	MetricCPU                 ObjectiveMetric = "CPU"
	MetricCPUPercentOfRequest ObjectiveMetric = "CPUPercentOfRequest"
	MetricMemory              ObjectiveMetric = "Memory"
)

// Objective is a bound on one metric, absolute or relative to the baseline.
// +kubebuilder:validation:XValidation:rule="has(self.max) || has(self.min) || has(self.maxIncreasePercent) || has(self.maxDecreasePercent)",message="an objective needs a bound: max, min, maxIncreasePercent or maxDecreasePercent"
// +kubebuilder:validation:XValidation:rule="(self.metric == 'Query') == has(self.query)",message="query is set exactly when metric is Query"
// +kubebuilder:validation:XValidation:rule="!has(self.request) || has(self.scenario)",message="request needs scenario"
// +kubebuilder:validation:XValidation:rule="(has(self.group) ? 1 : 0) + (has(self.trend) ? 1 : 0) + (has(self.request) ? 1 : 0) + (has(self.query) ? 1 : 0) + (has(self.iteration) && self.iteration ? 1 : 0) + (has(self.check) ? 1 : 0) + (has(self.counter) ? 1 : 0) + (has(self.rate) ? 1 : 0) + (has(self.gauge) ? 1 : 0) <= 1",message="an objective names at most one of request, group, trend, iteration, check, counter, rate, gauge and query"
// +kubebuilder:validation:XValidation:rule="!(has(self.group) || has(self.trend)) || has(self.scenario)",message="group and trend need scenario"
// +kubebuilder:validation:XValidation:rule="!(has(self.group) || has(self.trend)) || self.metric in ['Avg', 'P50', 'P75', 'P90', 'P95', 'P99', 'Max']",message="a group or trend objective takes a distribution metric: Avg, P50, P75, P90, P95, P99 or Max"
// +kubebuilder:validation:XValidation:rule="!(has(self.iteration) && self.iteration) || has(self.scenario)",message="iteration needs scenario"
// +kubebuilder:validation:XValidation:rule="!(has(self.iteration) && self.iteration) || self.metric in ['Avg', 'P50', 'P75', 'P90', 'P95', 'P99', 'Max']",message="an iteration objective takes a distribution metric: Avg, P50, P75, P90, P95, P99 or Max"
// +kubebuilder:validation:XValidation:rule="(self.metric == 'PassRate') == has(self.check)",message="check is set exactly when metric is PassRate"
// +kubebuilder:validation:XValidation:rule="!has(self.check) || has(self.scenario)",message="check needs scenario"
// +kubebuilder:validation:XValidation:rule="self.metric != 'PassRate' || !(has(self.maxIncreasePercent) || has(self.maxDecreasePercent))",message="a PassRate objective takes max and/or min: k6 writes a check's pass rate without counts, so one run has no interval to judge a relative bound on"
// +kubebuilder:validation:XValidation:rule="(self.metric == 'Count') == has(self.counter)",message="counter is set exactly when metric is Count"
// +kubebuilder:validation:XValidation:rule="!has(self.counter) || has(self.scenario)",message="counter needs scenario"
// +kubebuilder:validation:XValidation:rule="(self.metric == 'Percent') == has(self.rate)",message="rate is set exactly when metric is Percent"
// +kubebuilder:validation:XValidation:rule="!has(self.gauge) || self.metric in ['Min', 'Max', 'Last']",message="a gauge objective takes Min, Max or Last"
// +kubebuilder:validation:XValidation:rule="!(self.metric in ['Min', 'Last']) || has(self.gauge)",message="Min and Last need gauge: they judge one custom k6 Gauge"
// +kubebuilder:validation:XValidation:rule="!(has(self.rate) || has(self.gauge)) || has(self.scenario)",message="rate and gauge need scenario"
// +kubebuilder:validation:XValidation:rule="!(has(self.rate) || has(self.gauge)) || !(has(self.maxIncreasePercent) || has(self.maxDecreasePercent))",message="a rate or gauge objective takes max and/or min: relative bounds need an interval, and k6 writes a Rate without counts and a Gauge's min, max or last is one value per run"
// +kubebuilder:validation:XValidation:rule="!(self.metric in ['CPU', 'CPUPercentOfRequest', 'Memory'])",message="CPU, CPUPercentOfRequest and Memory name a workload's use in primary metrics; objectives do not take them"
type Objective struct {
	// name of the objective, for reports; defaults to a description of the bound.
	// +optional
	// +kubebuilder:validation:MaxLength=63
	Name string `json:"name,omitempty"`

	// metric judged.
	// +required
	Metric ObjectiveMetric `json:"metric"`

	// scenario the metric is taken from; empty means all scenarios together.
	// +optional
	// +kubebuilder:validation:MaxLength=40
	Scenario string `json:"scenario,omitempty"`

	// request narrows the metric to one request name (the k6 `name` tag) of the scenario.
	// +optional
	// +kubebuilder:validation:MaxLength=256
	Request string `json:"request,omitempty"`

	// group narrows the metric to one k6 group (transaction) of the scenario: its
	// group_duration, named by its path as the report shows it ("check-out", or
	// "outer::inner" for a nested group).
	// +optional
	// +kubebuilder:validation:MaxLength=256
	Group string `json:"group,omitempty"`

	// trend narrows the metric to one custom k6 Trend of the scenario, by its name in the
	// script (`new Trend('checkout_transaction', true)` -> checkout_transaction). Values are
	// in the Trend's unit: milliseconds for a time Trend, the script's own for plain numbers.
	// +optional
	// +kubebuilder:validation:MaxLength=256
	Trend string `json:"trend,omitempty"`

	// iteration narrows the metric to the scenario's k6 iteration_duration: how long one
	// whole iteration of its default function took, in milliseconds.
	// +optional
	Iteration bool `json:"iteration,omitempty"`

	// check names one k6 check of the scenario (`check(res, {'status is 200': ...})` ->
	// "status is 200"), judged with metric PassRate: its pass rate in percent, the lowest
	// among the k6 runners, each counted since it started (k6 writes no counts for checks).
	// +optional
	// +kubebuilder:validation:MaxLength=256
	Check string `json:"check,omitempty"`

	// counter names one custom k6 Counter of the scenario (`new Counter('baskets')` ->
	// baskets), judged with metric Count: max and min bound the total the script added in
	// the window (exact, summed over runners), in the Counter's own unit; maxIncreasePercent
	// and maxDecreasePercent bound the change of its rate per second against the baseline,
	// judged on that change's 95 % interval.
	// +optional
	// +kubebuilder:validation:MaxLength=256
	Counter string `json:"counter,omitempty"`

	// rate names one custom k6 Rate of the scenario (`new Rate('heavy_basket')` ->
	// heavy_basket), judged with metric Percent: its share of non-zero values in percent, the
	// lowest among the k6 runners, each since it started (k6 writes a Rate without counts).
	// +optional
	// +kubebuilder:validation:MaxLength=256
	Rate string `json:"rate,omitempty"`

	// gauge names one custom k6 Gauge of the scenario (`new Gauge('queue_depth')` ->
	// queue_depth), judged with metric Min or Max (the lowest or highest value k6 pushed in the
	// window, over every runner) or Last (the last value pushed in the window, when a single
	// runner and tag set wrote the Gauge), in the Gauge's own unit.
	// +optional
	// +kubebuilder:validation:MaxLength=256
	Gauge string `json:"gauge,omitempty"`

	// query names the custom query judged, with metric Query.
	// +optional
	// +kubebuilder:validation:MaxLength=63
	Query string `json:"query,omitempty"`

	// max is the largest acceptable value.
	// +optional
	Max *resource.Quantity `json:"max,omitempty"`

	// min is the smallest acceptable value.
	// +optional
	Min *resource.Quantity `json:"min,omitempty"`

	// maxIncreasePercent is the largest acceptable increase over the baseline, in percent.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=100000
	MaxIncreasePercent *int32 `json:"maxIncreasePercent,omitempty"`

	// maxDecreasePercent is the largest acceptable decrease below the baseline, in percent
	// (for throughput-like metrics).
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=100
	MaxDecreasePercent *int32 `json:"maxDecreasePercent,omitempty"`
}

// ReportSuffix names an experiment's report ConfigMap: <experiment>-report. It holds
// report.md, results.json and dashboard.json.
const ReportSuffix = "-report"

// BetweenRunNoise is the standard deviation of a run's level between runs of one configuration.
type BetweenRunNoise struct {
	// sdPercent is the standard deviation of a run's level (its p95, average, CPU, ...) on the
	// log scale, in percent: 3 means runs of one configuration typically differ by about 3 %.
	// A value outside (0, 100) is replaced by the default, and the comparison says so.
	// +required
	SDPercent *resource.Quantity `json:"sdPercent"`
	// runs is how many runs the sd was estimated from; with few runs the estimate is itself
	// uncertain and the intervals use Student's t. Omitted: taken as known.
	// +optional
	// +kubebuilder:validation:Minimum=2
	// +kubebuilder:validation:Maximum=10000
	Runs int32 `json:"runs,omitempty"`
	// source says where the value came from (a calibration sweep's name and date), for the report.
	// +optional
	// +kubebuilder:validation:MaxLength=200
	Source string `json:"source,omitempty"`
}

// ConfirmMode says when an experiment's comparison is confirmed by repeated runs.
// +kubebuilder:validation:Enum=Auto
type ConfirmMode string

// ConfirmAuto confirms a comparison that one run against one run did not decide.
const ConfirmAuto ConfirmMode = "Auto"

// Confirm asks for repeated, paired runs of the baseline and the variant when one run against
// one run is not decisive, within a budget.
type Confirm struct {
	// mode says when to confirm: Auto (the default) when the single run's comparison headline
	// is Inconclusive or Unknown. A decisive single-run headline is kept as it is.
	// +optional
	// +kubebuilder:default=Auto
	Mode ConfirmMode `json:"mode,omitempty"`

	// maxRepeats is the most blocks the confirmation may run; each block runs the baseline
	// once and the variant once, so the budget in runs is twice this. The first look is after
	// 3 blocks (or maxRepeats when smaller), then after every block. Defaults to 10, the
	// design whose false-claim rate and power docs/comparison.md's simulation table measures.
	// +optional
	// +kubebuilder:default=10
	// +kubebuilder:validation:Minimum=2
	// +kubebuilder:validation:Maximum=20
	MaxRepeats int32 `json:"maxRepeats,omitempty"`

	// maxDuration is the most time the confirmation may take from its start: no block is
	// added after it, and the blocks that ran are judged. Unset: only maxRepeats bounds it.
	// +optional
	MaxDuration *metav1.Duration `json:"maxDuration,omitempty"`
}
