package result

import (
	"math"
	"time"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
)

// Result is everything an analysis found. It is what the report's results.json holds. A nil
// pointer means no data: absent data is never reported as zero.
type Result struct {
	// Experiment and Namespace name the experiment.
	Experiment string `json:"experiment"`
	Namespace  string `json:"namespace"`
	// TestID is the testid tag of the run's k6 samples.
	TestID string `json:"testID"`
	// Variant describes what the run changed, for the report.
	Variant string `json:"variant,omitempty"`
	// Window is the measured window.
	Window WindowInfo `json:"window"`
	// Findings are the report's conclusions in sentences, each backed by a row
	// (internal/judge/findings).
	Findings []Finding `json:"findings,omitempty"`
	// Validity says whether the results can be trusted; InvalidReasons say why not.
	Validity       perfexpv1alpha1.Validity `json:"validity"`
	InvalidReasons []string                 `json:"invalidReasons,omitempty"`
	// Notes are caveats a reader should know (a fallback used, a cross-check that differed).
	Notes []string `json:"notes,omitempty"`
	// BackendWarnings are the distinct warnings the metrics backend sent with its answers (a
	// Thanos or Cortex partial response, VictoriaMetrics' isPartial, Prometheus' own).
	BackendWarnings []string `json:"backendWarnings,omitempty"`
	// CountsInexact says the backend warned while answering: the counts were read from
	// answers that may be incomplete and are not called exact (partial ones also make the
	// results Invalid).
	CountsInexact bool `json:"countsInexact,omitempty"`
	// LatencySource says where percentiles came from.
	LatencySource perfexpv1alpha1.LatencySource `json:"latencySource"`
	// LatencyErrorBound is the largest relative error of a percentile or of max (0.0905 is
	// 9.05%), from the width of the native histogram's buckets.
	LatencyErrorBound *float64 `json:"latencyErrorBound,omitempty"`
	// Total is all scenarios together.
	Total RequestStats `json:"total"`
	// WarmUp is the warm-up's requests (scenario "warm-up", excluded from every other result),
	// read at its end; nil without a warm-up or without its native histograms.
	WarmUp *RequestStats `json:"warmUp,omitempty"`
	// Scenarios holds each declared scenario, with every request name.
	Scenarios []ScenarioResult `json:"scenarios"`
	// Workloads holds CPU and memory per touched or observed workload.
	Workloads []WorkloadResult `json:"workloads,omitempty"`
	// Inventory is what each touched and observed workload ran with (inventory.go); nil when
	// the run recorded none.
	Inventory []WorkloadInventory `json:"inventory,omitempty"`
	// Routes are the observed services' routes from their own request histograms
	// (analysis.observe[].routes), the slowest by p95 first within each service.
	Routes []RouteResult `json:"routes,omitempty"`
	// NodeLoad is the CPU the run's nodes spent outside the experiment, nil when unknown.
	NodeLoad *NodeLoad `json:"nodeLoad,omitempty"`
	// Runners is what the k6 pods used during the measured window (the busiest first).
	Runners []RunnerUse `json:"runners,omitempty"`
	// Queries holds the custom queries' results.
	Queries []QueryResult `json:"queries,omitempty"`
	// Slices holds results per time slice.
	Slices []SliceResult `json:"slices,omitempty"`
	// Comparison compares the run with its baseline.
	Comparison *Comparison `json:"comparison,omitempty"`
	// Objectives holds each objective's outcome.
	Objectives []ObjectiveResult `json:"objectives,omitempty"`
	// Thresholds are the script's k6 thresholds and whether each was crossed (see gate.go).
	Thresholds []ThresholdResult `json:"thresholds,omitempty"`
	// VerdictReasons say why the verdict failed beside the objectives: a crossed threshold, a
	// Regressed headline under failOnRegression.
	VerdictReasons []string `json:"verdictReasons,omitempty"`
	// Verdict is the overall judgement.
	Verdict perfexpv1alpha1.Verdict `json:"verdict"`
	// Timeline holds per-interval values over the measured window, for charts.
	Timeline *Timeline `json:"timeline,omitempty"`
	// LoadShape is the load shape of every scenario, so a later run can check it ran the same.
	LoadShape []ScenarioShape `json:"loadShape,omitempty"`
	// Intervals hold the per-interval counts and histograms a later comparison needs.
	Intervals *IntervalData `json:"intervals,omitempty"`
	// Queries made to Prometheus for this analysis.
	PrometheusQueries int `json:"prometheusQueries"`
	// Phases is the experiment's timeline.
	Phases []PhaseAt `json:"phases,omitempty"`
	// PodAge is what the run did to its pods' age before the load; nil when not recorded.
	PodAge *PodAge `json:"podAge,omitempty"`
}

// PodAge is the age of a run's pods at the start of its load.
type PodAge struct {
	// FreshPods is true when the run rolled workloads for spec.freshPods.
	FreshPods bool `json:"freshPods,omitempty"`
	// RolledSecondsBeforeLoad is how long before the load began the run's rollouts (variant and
	// freshPods) finished; nil when nothing rolled (the pods were as found).
	RolledSecondsBeforeLoad *float64 `json:"rolledSecondsBeforeLoad,omitempty"`
	// SettledSeconds is how long the environment was left alone before setup or load
	// (spec.settle); zero without a settle.
	SettledSeconds float64 `json:"settledSeconds,omitempty"`
}

// Timeline is per-interval values over the measured window: interval i covers
// [Start + i*Step, Start + (i+1)*Step].
type Timeline struct {
	Start       time.Time `json:"start"`
	StepSeconds float64   `json:"stepSeconds"`
	// Series per scenario; "*" is all scenarios together.
	Series []TimelineSeries `json:"series"`
}

// TimelineSeries are one scenario's per-interval p95 (ms), throughput (req/s) and error rate
// (%); null where an interval had no requests.
type TimelineSeries struct {
	Scenario  string     `json:"scenario"`
	P95       []*float64 `json:"p95"`
	Rate      []*float64 `json:"rate"`
	ErrorRate []*float64 `json:"errorRate"`
}

// PhaseAt is when the experiment entered a phase.
type PhaseAt struct {
	Phase string    `json:"phase"`
	Time  time.Time `json:"time"`
}

// WindowInfo is the measured window.
type WindowInfo struct {
	Start     time.Time  `json:"start"`
	WarmUpEnd *time.Time `json:"warmUpEnd,omitempty"`
	End       time.Time  `json:"end"`
	// MeasuredStart is where results begin: the warm-up's end, or the start.
	MeasuredStart time.Time `json:"measuredStart"`
	// MeasuredSeconds is the length of the measured window.
	MeasuredSeconds float64 `json:"measuredSeconds"`
}

// RequestStats are request statistics; latencies in milliseconds.
type RequestStats struct {
	Requests     *int64   `json:"requests,omitempty"`
	Errors       *int64   `json:"errors,omitempty"`
	Rate         *float64 `json:"rate,omitempty"`
	ErrorPercent *float64 `json:"errorPercent,omitempty"`
	Avg          *float64 `json:"avg,omitempty"`
	P50          *float64 `json:"p50,omitempty"`
	P75          *float64 `json:"p75,omitempty"`
	P90          *float64 `json:"p90,omitempty"`
	P95          *float64 `json:"p95,omitempty"`
	P99          *float64 `json:"p99,omitempty"`
	// Max is an upper bound: the top of the highest non-empty histogram bucket (or k6's own
	// max with trend stats).
	Max *float64 `json:"max,omitempty"`
	// PercentilesUpperBound is set when the percentiles come from k6's trend-stat gauges of
	// several runners or series: each is the largest of theirs, an upper bound of the merged
	// percentile (a percentile of a mixture never exceeds its parts' largest), not the value.
	PercentilesUpperBound bool `json:"percentilesUpperBound,omitempty"`
	// Successful is the latency of the successful requests only (k6's
	// expected_response="true"), set when some requests failed: failed requests are often
	// fast and would flatter the latency. Objectives on latency judge it; the fields above
	// cover all requests.
	Successful *Latency `json:"successful,omitempty"`
}

// Latency is a latency distribution's summary, in milliseconds.
type Latency struct {
	Avg *float64 `json:"avg,omitempty"`
	P50 *float64 `json:"p50,omitempty"`
	P75 *float64 `json:"p75,omitempty"`
	P90 *float64 `json:"p90,omitempty"`
	P95 *float64 `json:"p95,omitempty"`
	P99 *float64 `json:"p99,omitempty"`
	Max *float64 `json:"max,omitempty"`
}

// ScenarioResult is one scenario's result.
type ScenarioResult struct {
	Name          string                   `json:"name"`
	Validity      perfexpv1alpha1.Validity `json:"validity"`
	InvalidReason string                   `json:"invalidReason,omitempty"`
	RequestStats
	Iterations *int64 `json:"iterations,omitempty"`
	// IterationDuration is the distribution of k6's iteration_duration over the iterations
	// that ended in the window, in milliseconds (read by internal/analysis/iterations.go).
	IterationDuration *Latency `json:"iterationDuration,omitempty"`
	// ActiveSeconds is how long the scenario ran within the window (from its first to its last
	// k6 sample, when those are more than 30 s inside the window's edges): its rates are
	// requests over it, so a start delay does not dilute them.
	ActiveSeconds *float64 `json:"activeSeconds,omitempty"`
	// DroppedIterations are the iterations k6 could not start in the window (an arrival-rate
	// executor without a free VU, or a saturated runner), and DroppedPercent their share of
	// the planned ones (iterations + dropped): the achieved arrival rate fell short of the
	// planned one by that share.
	DroppedIterations *int64   `json:"droppedIterations,omitempty"`
	DroppedPercent    *float64 `json:"droppedPercent,omitempty"`
	// Saturated is set when the system under test could not sustain the planned arrival rate
	// (k6 dropped more than judge.MaxDroppedPercent of the iterations while its runners were
	// not CPU-bound): the scenario is valid, and its rate is the throughput it did sustain.
	Saturated bool            `json:"saturated,omitempty"`
	Requests  []RequestResult `json:"requestNames,omitempty"`
	// Groups are the scenario's k6 groups (its transactions), most frequent first, and
	// Trends the custom Trends its script defines (see groups.go).
	Groups []GroupResult `json:"groups,omitempty"`
	Trends []TrendResult `json:"trends,omitempty"`
	// Checks are the scenario's k6 checks, Counters, Rates and Gauges the custom ones its script
	// defines (see checks.go).
	Checks   []CheckResult   `json:"checks,omitempty"`
	Counters []CounterResult `json:"counters,omitempty"`
	Rates    []RateResult    `json:"rates,omitempty"`
	Gauges   []GaugeResult   `json:"gauges,omitempty"`
}

// RequestResult is one request name's result.
type RequestResult struct {
	Name string `json:"name"`
	RequestStats
}

// SliceResult is the result of one time slice.
type SliceResult struct {
	Name      string           `json:"name"`
	Start     time.Time        `json:"start"`
	End       time.Time        `json:"end"`
	Total     RequestStats     `json:"total"`
	Scenarios []ScenarioResult `json:"scenarios"`
	Workloads []WorkloadResult `json:"workloads,omitempty"`
	Queries   []QueryResult    `json:"queries,omitempty"`
}

// The leak verdicts.
const (
	LeakNone      = "None"
	LeakSuspected = "Suspected"
	// LeakLevelShift: the floor stepped up once and stayed level either side (a cache filled
	// once, a pool grown): not growth, and not a leak.
	LeakLevelShift     = "LevelShift"
	LeakWindowTooShort = "WindowTooShort"
)

// WorkloadResult is the resource use of one workload.
type WorkloadResult struct {
	Kind      string `json:"kind"`
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	// Touched is true for workloads the variant changed, false for observed ones.
	Touched bool `json:"touched"`
	// Listed is true for a workload reported because it runs in the target namespace, not
	// because it was touched or observed.
	Listed bool `json:"listed,omitempty"`
	// Pods is the most pods running at once in the window (a pod counts while its cAdvisor
	// samples are fresh); PodsSeen counts every distinct pod, so a rollout inside the window
	// shows as PodsSeen > Pods.
	Pods     int `json:"pods"`
	PodsSeen int `json:"podsSeen,omitempty"`
	// Sidecars are containers found in the pods but not in the pod template (injected at
	// admission): their use is in the CPU and memory sums, their requests and limits are not
	// in the capacity, and they are left out of the percentages of limit.
	Sidecars []string `json:"sidecars,omitempty"`
	// CPU in cores, summed over pods: the mean and the highest of the per-step rates.
	CPUAvg *float64 `json:"cpuAvg,omitempty"`
	CPUMax *float64 `json:"cpuMax,omitempty"`
	// CPURequest and CPULimit are the totals in force (cores, averaged over the window's pods).
	CPURequest *float64 `json:"cpuRequest,omitempty"`
	CPULimit   *float64 `json:"cpuLimit,omitempty"`
	// CPUPercentOfRequest is CPUAvg as a share of the total request. CPUPercentOfLimit is the
	// highest pod's: its mean CPU as a share of its own limit, so one pod at 95 % is not hidden
	// by others at 50 %. A note says "no request"/"no limit" when a container lacks one.
	CPUPercentOfRequest *float64 `json:"cpuPercentOfRequest,omitempty"`
	CPURequestNote      string   `json:"cpuRequestNote,omitempty"`
	CPUPercentOfLimit   *float64 `json:"cpuPercentOfLimit,omitempty"`
	CPULimitNote        string   `json:"cpuLimitNote,omitempty"`
	// CPUThrottledPercent is throttled CFS periods as a share of all periods.
	CPUThrottledPercent *float64 `json:"cpuThrottledPercent,omitempty"`
	// Memory working set in bytes, summed over pods: MemoryAvg the mean of the per-step sums,
	// MemoryMax the highest per-step sum of each container's peak within the rate window
	// (max_over_time), an upper bound when containers peak at different moments.
	// MemoryPercentOfLimit is the highest pod's peak as a share of its own limit.
	MemoryAvg            *float64 `json:"memoryAvg,omitempty"`
	MemoryMax            *float64 `json:"memoryMax,omitempty"`
	MemoryLimit          *float64 `json:"memoryLimit,omitempty"`
	MemoryPercentOfLimit *float64 `json:"memoryPercentOfLimit,omitempty"`
	MemoryLimitNote      string   `json:"memoryLimitNote,omitempty"`
	// MemoryGrowthPerHour is how fast the post-GC floor of the working set rises, bytes per
	// hour: the Theil-Sen slope of each pod's block minima after its warm-up, summed over the
	// pods judged. MemoryTrendZ is the largest pod's Mann-Kendall statistic, adjusted for
	// autocorrelation; Leak is the verdict (see internal/judge/history/leak.go).
	MemoryGrowthPerHour *float64 `json:"memoryGrowthPerHour,omitempty"`
	MemoryTrendZ        *float64 `json:"memoryTrendZ,omitempty"`
	Leak                string   `json:"leak,omitempty"`
	// Restarts and OOMKills of the workload's containers during the window.
	Restarts       *int64 `json:"restarts,omitempty"`
	RestartsSource string `json:"restartsSource,omitempty"`
	OOMKills       *int64 `json:"oomKills,omitempty"`
	// Containers breaks the numbers down per container name.
	Containers []ContainerUsage `json:"containers,omitempty"`
}

// ContainerUsage is one container name's use, summed over the workload's pods.
type ContainerUsage struct {
	Name                 string   `json:"name"`
	CPUAvg               *float64 `json:"cpuAvg,omitempty"`
	CPUMax               *float64 `json:"cpuMax,omitempty"`
	CPURequest           *float64 `json:"cpuRequest,omitempty"`
	CPULimit             *float64 `json:"cpuLimit,omitempty"`
	CPUPercentOfLimit    *float64 `json:"cpuPercentOfLimit,omitempty"`
	CPUThrottledPercent  *float64 `json:"cpuThrottledPercent,omitempty"`
	MemoryAvg            *float64 `json:"memoryAvg,omitempty"`
	MemoryMax            *float64 `json:"memoryMax,omitempty"`
	MemoryLimit          *float64 `json:"memoryLimit,omitempty"`
	MemoryPercentOfLimit *float64 `json:"memoryPercentOfLimit,omitempty"`
}

// QueryResult is one custom query's result.
type QueryResult struct {
	Name        string        `json:"name"`
	Description string        `json:"description,omitempty"`
	Unit        string        `json:"unit,omitempty"`
	Query       string        `json:"query"`
	Value       *float64      `json:"value,omitempty"`
	Series      []QuerySeries `json:"series,omitempty"`
	// SeriesDropped counts the series left out of Series: the largest MaxQuerySeriesKept are kept.
	SeriesDropped int    `json:"seriesDropped,omitempty"`
	Error         string `json:"error,omitempty"`
	// Note says why a query that Prometheus answered has no value: it returned no series over
	// the window it was evaluated for.
	Note string `json:"note,omitempty"`
}

// QuerySeries is one labelled value of a custom query.
type QuerySeries struct {
	Labels map[string]string `json:"labels"`
	Value  *float64          `json:"value,omitempty"`
}

// Comparison compares a run (or the runs of an arm) with its baseline.
type Comparison struct {
	Baseline string `json:"baseline"`
	// Change is the headline, from the primary metrics after the multiplicity control.
	Change  perfexpv1alpha1.Change `json:"change,omitempty"`
	Message string                 `json:"message,omitempty"`
	// Method is MethodBlockBootstrap or MethodRuns; Runs and BaselineRuns count the runs.
	Method       string `json:"method,omitempty"`
	Runs         int    `json:"runs,omitempty"`
	BaselineRuns int    `json:"baselineRuns,omitempty"`
	// MinChangePercent is δ, the minimum meaningful change.
	MinChangePercent float64 `json:"minChangePercent,omitempty"`
	// Multiplicity says how the headline's family of tests was controlled.
	Multiplicity string `json:"multiplicity,omitempty"`
	// Notes are caveats of the method.
	Notes []string `json:"notes,omitempty"`
	// Noise says how the comparison holds the noise between runs: for one run per side, the
	// between-run sd added to its intervals and where it came from.
	Noise string `json:"noise,omitempty"`
	// NodeLoad and BaselineNodeLoad are the two runs' node load (single-run comparisons);
	// Disturbed says why no change was claimed when they differ too much.
	NodeLoad         *NodeLoad `json:"nodeLoad,omitempty"`
	BaselineNodeLoad *NodeLoad `json:"baselineNodeLoad,omitempty"`
	Disturbed        string    `json:"disturbed,omitempty"`
	// Calibration is the run-to-run sd a blocked design (a sweep with repeats) measured over its
	// runs: what spec.analysis.betweenRun takes to calibrate one-run comparisons.
	Calibration *Calibration `json:"calibration,omitempty"`
	// Confounds are the differences between the two runs' environments beyond the declared
	// variants (an image, an env var, resources, replicas, nodes); ConfoundsUnknown says why
	// they could not be checked (a run without an inventory). Either marks the comparison.
	Confounds        []Confound         `json:"confounds,omitempty"`
	ConfoundsUnknown string             `json:"confoundsUnknown,omitempty"`
	Metrics          []MetricComparison `json:"metrics,omitempty"`
}

// Calibration is a run-to-run sd measured over a blocked design's runs, after the arm and block
// effects, of one row (the first scenario's p95).
type Calibration struct {
	Metric string `json:"metric"`
	// SDPercent is the sd in percent (on the log scale); Runs the runs a single calibration of
	// that many runs would stand for (the residual's degrees of freedom plus one).
	SDPercent float64 `json:"sdPercent"`
	Runs      int     `json:"runs"`
	// Newest is when the latest of the design's runs ended its measured window: a calibration
	// ages with the environment, and its readers are told how old it is.
	Newest *time.Time `json:"newest,omitempty"`
}

// MetricComparison compares one metric with the baseline.
type MetricComparison struct {
	// Metric is e.g. "checkinout p95" or "checkinout/check-out p95".
	Metric   string `json:"metric"`
	Scenario string `json:"scenario,omitempty"`
	Request  string `json:"request,omitempty"`
	// Workload names the workload of a CPU or memory row ("Deployment/shop/api"); Pods and
	// BaselinePods are its pods in each run (the most of any run, for repeats), so a variant
	// that scaled it shows beside a change of its totals.
	Workload string `json:"workload,omitempty"`
	// Route names the route of a server-side latency row (its service is RouteWorkload); such
	// rows are the report's "Slowest APIs" table.
	Route         string                          `json:"route,omitempty"`
	RouteWorkload string                          `json:"routeWorkload,omitempty"`
	Pods          int                             `json:"pods,omitempty"`
	BaselinePods  int                             `json:"baselinePods,omitempty"`
	Kind          perfexpv1alpha1.ObjectiveMetric `json:"kind"`
	Unit          string                          `json:"unit"`
	// Primary metrics decide the headline.
	Primary  bool     `json:"primary,omitempty"`
	Baseline *float64 `json:"baseline,omitempty"`
	Value    *float64 `json:"value,omitempty"`
	Delta    *float64 `json:"delta,omitempty"`
	// DeltaPercent is Delta as a percentage of Baseline.
	DeltaPercent *float64 `json:"deltaPercent,omitempty"`
	// Estimate, Low and High are the change and its 95 % interval on Scale: ScalePercent
	// (relative to the baseline) or ScalePoints (error rates, percentage points).
	Estimate *float64 `json:"estimate,omitempty"`
	Low      *float64 `json:"low,omitempty"`
	High     *float64 `json:"high,omitempty"`
	Scale    string   `json:"scale,omitempty"`
	// Threshold is δ on Scale (upwards; downwards it is the same relative change, -δ).
	Threshold *float64 `json:"threshold,omitempty"`
	// Method is MethodBlockBootstrap or MethodRuns; Samples and BaselineSamples count the
	// intervals or runs behind the estimate (SampleUnit says which).
	Method          string `json:"method,omitempty"`
	Samples         int    `json:"samples,omitempty"`
	BaselineSamples int    `json:"baselineSamples,omitempty"`
	SampleUnit      string `json:"sampleUnit,omitempty"`
	// PValue is the two-sided p-value of "no change", a detail. PBeyond is the p-value of
	// "the change lies within ±δ" (below 0.05 exactly when the interval lies beyond ±δ);
	// AdjustedP is PBeyond after Holm for primary metrics, and the Benjamini-Hochberg q across
	// the secondary rows for the others.
	PValue    *float64 `json:"pValue,omitempty"`
	PBeyond   *float64 `json:"pBeyond,omitempty"`
	AdjustedP *float64 `json:"adjustedP,omitempty"`
	// PEquivalent is the p-value of "the change lies beyond ±δ" (two one-sided tests, the
	// larger of their p-values, doubled as the interval is two-sided: below 0.05 exactly when
	// the interval lies inside ±δ). Across the arms of a sweep, NoMeaningfulChange is held as a
	// family on these (Holm), as a claim of change is on PBeyond.
	PEquivalent *float64 `json:"pEquivalent,omitempty"`
	// ClaimLevel, set when the row's own interval lies beyond ±δ but the multiplicity control
	// withheld the claim, is the coverage (0-1) the interval would need to lie beyond ±δ at to
	// be claimed: the level that decides, which the interval shown (Low, High) is not.
	ClaimLevel *float64 `json:"claimLevel,omitempty"`
	// Constant is true when both sides are the same constant (no errors at all): no change can
	// be claimed, so the metric spends none of the multiplicity budget.
	Constant bool `json:"constant,omitempty"`
	// Withdrawn, when set, says why nothing may be claimed from this row's interval at all
	// (a single run on a CPU-saturated node): Low and High are then the within-run interval
	// without the between-run noise, and no objective relative to the baseline is judged on it.
	Withdrawn string `json:"withdrawn,omitempty"`
	// Change is the verdict; for a primary metric after the multiplicity control, whose
	// verdict before it is Unadjusted.
	Change     perfexpv1alpha1.Change `json:"change"`
	Unadjusted perfexpv1alpha1.Change `json:"unadjusted,omitempty"`
	// Why explains an Inconclusive or Unknown change; UnadjustedWhy the unadjusted one's.
	Why           string `json:"why,omitempty"`
	UnadjustedWhy string `json:"unadjustedWhy,omitempty"`
}

// ObjectiveResult is one objective's outcome.
type ObjectiveResult struct {
	Name    string                           `json:"name"`
	Outcome perfexpv1alpha1.ObjectiveOutcome `json:"outcome"`
	Value   *float64                         `json:"value,omitempty"`
	Unit    string                           `json:"unit,omitempty"`
	Message string                           `json:"message"`
}

// Finite reports whether v is a usable number.
func Finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// Num returns a pointer to v, or nil when v is NaN or infinite, so NaN never leaks.
func Num(v float64) *float64 {
	if !Finite(v) {
		return nil
	}
	return &v
}

// Count returns a pointer to v.
func Count(v int64) *int64 { return &v }

// The scales a change is measured on.
const (
	// ScalePercent is a relative change in percent of the baseline.
	ScalePercent = "Percent"
	// ScalePoints is an absolute difference of error rates in percentage points.
	ScalePoints = "Points"
)

// The methods behind an interval.
const (
	// MethodBlockBootstrap resamples blocks of consecutive intervals of one run per side.
	MethodBlockBootstrap = "BlockBootstrap"
	// MethodRuns compares one statistic per run across repeated runs (Welch's t).
	MethodRuns = "Runs"
)
