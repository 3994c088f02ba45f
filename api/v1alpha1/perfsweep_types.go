package v1alpha1

import (
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// PerfSweepSpec declares a whole study: one template of the runs, a baseline, and the arms
// (variants) to compare with it, each run `repeats` times in an interleaved order.
// +kubebuilder:validation:XValidation:rule="has(self.capacity) || has(self.bisect) || (has(self.arms) && size(self.arms) > 0) || (has(self.matrix) && size(self.matrix) > 0)",message="a sweep needs something to compare with the baseline: set arms, matrix or both (or capacity for a capacity search, bisect for a bisect)"
// +kubebuilder:validation:XValidation:rule="!has(self.capacity) || ((!has(self.arms) || size(self.arms) == 0) && (!has(self.matrix) || size(self.matrix) == 0))",message="a capacity search probes the template's load at levels it chooses: arms and matrix are not allowed with capacity"
// +kubebuilder:validation:XValidation:rule="!has(self.capacity) || !has(self.sequential)",message="a capacity search repeats each probe until it is decided (capacity.maxRepeats): sequential is not allowed with capacity"
// +kubebuilder:validation:XValidation:rule="!has(self.capacity) || !has(self.baseline)",message="a capacity search has no baseline: put the variant every probe runs with under capacity.variant"
// +kubebuilder:validation:XValidation:rule="!has(self.bisect) || (!has(self.capacity) && !has(self.baseline) && !has(self.sequential) && (!has(self.arms) || size(self.arms) == 0) && (!has(self.matrix) || size(self.matrix) == 0))",message="a bisect chooses its own steps and baselines (the services' baseline images): capacity, baseline, sequential, arms and matrix are not allowed with bisect"
// +kubebuilder:validation:XValidation:rule="!has(self.capacity) || (has(self.capacity.maxProbes) ? self.capacity.maxProbes : 12) * (has(self.capacity.maxRepeats) ? self.capacity.maxRepeats : 3) <= 200",message="a capacity search may make capacity.maxProbes x capacity.maxRepeats runs; at most 200 runs are allowed in one sweep: lower maxProbes or maxRepeats"
// +kubebuilder:validation:XValidation:rule="!has(self.bisect) || (has(self.bisect.maxSteps) ? self.bisect.maxSteps : 10) * (has(self.bisect.maxRepeats) ? self.bisect.maxRepeats : 10) * 2 <= 200",message="a bisect may make bisect.maxSteps x bisect.maxRepeats x 2 runs (each repeat runs the step and the old release); at most 200 runs are allowed in one sweep: lower maxSteps or maxRepeats"
// +kubebuilder:validation:XValidation:rule="!has(self.capacity) || self.capacity.parameter != 'VUs' || self.capacity.max <= 100000",message="capacity.max may be at most 100000 when the search varies VUs, the most virtual users a scenario may have"
// +kubebuilder:validation:XValidation:rule="!has(self.capacity) || self.capacity.parameter != 'VUs' || self.template.load.scenarios.all(s, !has(s.vus) || !has(s.parallelism) || s.parallelism <= self.capacity.min)",message="capacity.min must be at least the parallelism of every vus scenario of the template, so that every probe gives each runner pod a virtual user"
// +kubebuilder:validation:XValidation:rule="!has(self.sequential) || !has(self.repeats) || self.repeats <= self.sequential.maxRepeats",message="sequential.maxRepeats must be at least repeats (the repeats of the first look)"
// +kubebuilder:validation:XValidation:rule="!has(self.arms) || self.arms.all(a, self.arms.exists_one(b, b.name == a.name))",message="arm names must be unique"
// +kubebuilder:validation:XValidation:rule="!has(self.matrix) || self.matrix.all(d, self.matrix.exists_one(e, e.name == d.name))",message="matrix dimension names must be unique"
// +kubebuilder:validation:XValidation:rule="!has(self.arms) || self.arms.all(a, self.arms.exists_one(b, (has(a.variant) ? has(b.variant) && a.variant == b.variant : !has(b.variant)) && (has(a.load) ? has(b.load) && a.load == b.load : !has(b.load))))",message="two arms are equal: every arm must differ from the others in its variant or load"
// +kubebuilder:validation:XValidation:rule="!has(self.arms) || !self.arms.exists(a, has(a.load) && has(a.load.scenarios) && !a.load.scenarios.all(n, self.template.load.scenarios.exists(s, s.name == n)))",message="every scenario an arm's load names must be one of template.load.scenarios"
type PerfSweepSpec struct {
	// queue names the environment lock every run of the sweep waits for, as a PerfExperiment's
	// spec.queue. Defaults to the target namespace.
	// +optional
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	Queue string `json:"queue,omitempty"`

	// priority of every run of the sweep in its queue: higher runs first.
	// +optional
	// +kubebuilder:default=0
	// +kubebuilder:validation:Minimum=-1000
	// +kubebuilder:validation:Maximum=1000
	Priority int32 `json:"priority,omitempty"`

	// template holds what every run shares: the target, the setup, the load, the analysis and
	// the timeouts. Arms change the environment (variant) and, optionally, the load.
	// +required
	Template SweepTemplate `json:"template"`

	// baseline is the arm every other arm is compared with. Omit it (or its variant) to use the
	// environment as it is.
	// +optional
	Baseline *SweepBaseline `json:"baseline,omitempty"`

	// arms lists the variants to compare with the baseline, one by one.
	// +optional
	// +kubebuilder:validation:MaxItems=32
	Arms []SweepArm `json:"arms,omitempty"`

	// matrix makes one arm per combination of its dimensions' values (the cross product), for
	// example an env var over 50/100/200, or a CPU limit times a replica count. The arms of the
	// matrix are added after the explicit arms.
	// +optional
	// +kubebuilder:validation:MaxItems=3
	Matrix []SweepDimension `json:"matrix,omitempty"`

	// repeats is how many runs each arm (the baseline included) gets. With 2 or more the run is
	// the unit of comparison, so the noise between runs enters the intervals. Omitted (and
	// without sequential), the sweep is sequential with the default budget (repeats: auto): it
	// runs 3 repeats, then adds one at a time, stopping each arm once its verdict is decisive,
	// up to 10 repeats (fewer when 10 would exceed 200 runs). Set it to run exactly that many.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=10
	Repeats int32 `json:"repeats,omitempty"`

	// order is the order of the runs within each repeat. Randomized (the default) shuffles the
	// arms of every repeat, the baseline included, with a seed taken from the sweep's UID, so
	// that a drift over time (a cache warming, a neighbour's batch job) does not always favour
	// the same arm. Interleaved keeps the declared order: the baseline, then the arms.
	// +optional
	// +kubebuilder:default=Randomized
	// +kubebuilder:validation:Enum=Randomized;Interleaved
	Order SweepOrder `json:"order,omitempty"`

	// podAge says whether every run starts on pods of the same age. Equal (the default) rolls,
	// before every run, the baseline's included, the union of the workloads the arms change
	// (each run's spec.freshPods), so no arm is measured on fresh pods against a baseline on
	// long-lived ones. AsFound rolls only what each run's variant changes.
	// +optional
	// +kubebuilder:default=Equal
	PodAge SweepPodAge `json:"podAge,omitempty"`

	// sequential makes the sweep stop as soon as its answer is decisive: it runs `repeats`
	// repeats (at least 2), then adds one repeat (a block in which every arm runs once) at a
	// time and looks at the comparisons after each, until every arm's headline is Regressed,
	// Improved or NoMeaningfulChange, or its budget is spent. Each look spends a share of the
	// 5 % error rate, so looking after every repeat does not inflate false claims
	// (docs/comparison.md). An arm whose verdict is decisive stops getting runs while the
	// others, and the baseline, continue. Without it the sweep runs exactly `repeats` repeats
	// when repeats is set, and is sequential with the default budget when it is not.
	// +optional
	Sequential *SweepSequential `json:"sequential,omitempty"`

	// capacity makes the sweep a capacity search: it probes the template's load at levels it
	// chooses (doubling from capacity.min until the objectives of template.analysis break,
	// then bisecting) and reports the highest load at which they held (docs/capacity.md).
	// Not with arms, matrix, baseline or sequential.
	// +optional
	Capacity *SweepCapacity `json:"capacity,omitempty"`

	// bisect makes the sweep a performance bisect: given each changed service's old and new
	// image, it finds the service (or the smallest set) whose new image makes the system slower
	// than the old release (docs/bisect.md). Not with arms, matrix, baseline, sequential or
	// capacity.
	// +optional
	Bisect *SweepBisect `json:"bisect,omitempty"`

	// deadline bounds the whole sweep from its creation: when it passes, the runs that have not
	// ended are aborted (their environments restored), none is created, and the sweep ends
	// Aborted with reason DeadlineExceeded. It keeps one sweep from holding a queue for weeks.
	// At most 720h (30 days).
	// +optional
	// +kubebuilder:default="168h0m0s"
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern=`^([0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h))+$`
	// +kubebuilder:validation:MaxLength=32
	// +kubebuilder:validation:XValidation:rule="self.matches('^(([0-9]{1,5}([.][0-9]+)?h)|([0-9]{1,7}([.][0-9]+)?m)|([0-9]{1,9}([.][0-9]+)?s)|([0-9]{1,12}([.][0-9]+)?ms)|([0-9]{1,15}([.][0-9]+)?(us|µs))|([0-9]{1,18}([.][0-9]+)?ns)){1,6}$') && duration(self) > duration('0s') && duration(self) <= duration('720h')",message="deadline must be a positive duration of at most 720h (30 days), such as 90s or 1h30m"
	Deadline *metav1.Duration `json:"deadline,omitempty"`

	// minMeaningfulChangePercent is the smallest relative change that matters: an arm is
	// Regressed or Improved only when the whole interval of a change lies beyond it.
	// +optional
	// +kubebuilder:default=5
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100
	MinMeaningfulChangePercent int32 `json:"minMeaningfulChangePercent,omitempty"`

	// report chooses the per-arm tables of the sweep's report (transactions, services' CPU and
	// memory, custom queries) and their columns. Omitted: every table with its default columns.
	// +optional
	Report *SweepReport `json:"report,omitempty"`

	// abort, when set to true, aborts every run of the sweep that has not ended: running load is
	// stopped and the environment restored. Runs not yet created are not created.
	// +optional
	Abort bool `json:"abort,omitempty"`
}

// SweepOrder is the order of a sweep's runs within each repeat.
type SweepOrder string

const (
	// SweepOrderRandomized shuffles each repeat's runs with a seed from the sweep's UID.
	SweepOrderRandomized SweepOrder = "Randomized"
	// SweepOrderInterleaved runs each repeat in the declared order: baseline, then the arms.
	SweepOrderInterleaved SweepOrder = "Interleaved"
)

// SweepSequential is the budget of a sequential sweep.
type SweepSequential struct {
	// maxRepeats is the most repeats the sweep may run: the budget in runs is the arms (the
	// baseline included) times maxRepeats. It must be at least repeats.
	// +required
	// +kubebuilder:validation:Minimum=2
	// +kubebuilder:validation:Maximum=20
	MaxRepeats int32 `json:"maxRepeats"`
	// maxDuration is the most time the sweep may take from its creation: no repeat is added
	// after it, and the comparisons of the repeats that ran are reported.
	// +optional
	MaxDuration *metav1.Duration `json:"maxDuration,omitempty"`
}

// SweepSequentialStatus is a sequential sweep's progress.
type SweepSequentialStatus struct {
	// repeats is how many repeats the sweep has planned so far.
	Repeats int32 `json:"repeats"`
	// looks is how many times the comparisons were looked at.
	// +optional
	Looks int32 `json:"looks,omitempty"`
	// stopReason says why no further repeat was added.
	// +optional
	// +kubebuilder:validation:MaxLength=512
	StopReason string `json:"stopReason,omitempty"`
	// auto is true when the sweep is sequential by default (neither repeats nor sequential
	// set), with maxRepeats its default budget.
	// +optional
	Auto bool `json:"auto,omitempty"`
	// maxRepeats is the budget in repeats the sweep runs under.
	// +optional
	MaxRepeats int32 `json:"maxRepeats,omitempty"`
	// arms lists the arms that stopped getting runs because their verdict was decisive, with
	// the repeats it rests on: their verdicts are final.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=64
	Arms []SweepSequentialArm `json:"arms,omitempty"`
}

// SweepSequentialArm is an arm of a sequential sweep that was decided and stopped.
type SweepSequentialArm struct {
	// name of the arm.
	// +kubebuilder:validation:MaxLength=63
	Name string `json:"name"`
	// repeats is how many repeats (blocks) the arm ran; its verdict rests on them and on the
	// baseline's runs of the same blocks.
	Repeats int32 `json:"repeats"`
	// change is the verdict the arm was decided with.
	// +optional
	Change Change `json:"change,omitempty"`
}

// SweepTemplate is the part of a PerfExperiment's spec every run of a sweep shares.
// +kubebuilder:validation:XValidation:rule="!has(self.analysis) || !has(self.analysis.confirm)",message="template.analysis.confirm is for a single experiment; a sweep repeats its arms itself (use spec.sequential)"
// +kubebuilder:validation:XValidation:rule="!has(self.load.warmUp) || !has(self.load.warmUp.scenario) || self.load.scenarios.exists(s, s.name == self.load.warmUp.scenario)",message="template.load.warmUp.scenario must name one of template.load.scenarios"
type SweepTemplate struct {
	// targetNamespace is the namespace of the environment under test. Defaults to the sweep's
	// own namespace.
	// +optional
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	TargetNamespace string `json:"targetNamespace,omitempty"`

	// setup is an optional data-preparation Job run before the load of every run.
	// +optional
	Setup *Setup `json:"setup,omitempty"`

	// teardown runs after every run's load, as a PerfExperiment's spec.teardown.
	// +optional
	Teardown *Setup `json:"teardown,omitempty"`

	// load is the k6 load of every run, unless an arm overrides part of it.
	// +required
	Load Load `json:"load"`

	// analysis configures how every run's results are read and judged. Objectives relative to
	// a baseline apply to the arms only (the baseline runs have no baseline of their own).
	// +optional
	Analysis *Analysis `json:"analysis,omitempty"`

	// timeouts bound each step of every run.
	// +optional
	Timeouts *Timeouts `json:"timeouts,omitempty"`

	// settle is every run's spec.settle: how long the environment is left alone after its
	// rollout (or the previous run's restore) before its setup, warm-up or load. Omitted, it
	// is 30s when spec.podAge is Equal and an arm changes a workload, and nothing otherwise.
	// +optional
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern=`^([0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h))+$`
	// +kubebuilder:validation:MaxLength=32
	// +kubebuilder:validation:XValidation:rule="self.matches('^(([0-9]{1,5}([.][0-9]+)?h)|([0-9]{1,7}([.][0-9]+)?m)|([0-9]{1,9}([.][0-9]+)?s)|([0-9]{1,12}([.][0-9]+)?ms)|([0-9]{1,15}([.][0-9]+)?(us|µs))|([0-9]{1,18}([.][0-9]+)?ns)){1,6}$') && duration(self) >= duration('0s') && duration(self) <= duration('10m')",message="settle must be a duration of at most 10m, such as 30s"
	Settle *metav1.Duration `json:"settle,omitempty"`
}

// SweepBaseline is the arm the others are compared with.
type SweepBaseline struct {
	// variant the baseline runs with; usually omitted: the environment as it is.
	// +optional
	Variant *Variant `json:"variant,omitempty"`
}

// SweepArm is one variant compared with the baseline. An arm that changes both the environment
// and the load is compared with the baseline at the same load, which the sweep adds (an arm
// baseline-<load>) unless another arm already runs that load as the baseline does.
// +kubebuilder:validation:XValidation:rule="has(self.variant) || has(self.load)",message="an arm must change something compared with the baseline: set variant, load or both"
type SweepArm struct {
	// name of the arm, used in the names of its runs and in the report. Names starting with
	// "baseline" are reserved for the baselines.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=40
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	// +kubebuilder:validation:XValidation:rule="!self.startsWith('baseline')",message="arm names starting with baseline are reserved for the baselines"
	Name string `json:"name"`

	// variant is what this arm changes in the environment (the same type as a PerfExperiment's
	// spec.variant). Omit it for an arm that only changes the load.
	// +optional
	Variant *Variant `json:"variant,omitempty"`

	// load changes the template's load for this arm: the virtual users, the arrival rate, the
	// stages, or the set of scenarios that run.
	// +optional
	Load *LoadOverride `json:"load,omitempty"`
}

// LoadOverride changes part of the template's load for one arm. vus, rate and stages apply to
// every scenario that runs (after scenarios has chosen them) and that has the matching shape:
// vus to vus-with-duration scenarios, rate to arrivalRate scenarios; stages replace the shape
// of every vus-with-duration or stages scenario.
// +kubebuilder:validation:XValidation:rule="has(self.scenarios) || has(self.vus) || has(self.rate) || has(self.stages)",message="an arm's load must change something: set scenarios, vus, rate or stages"
// +kubebuilder:validation:XValidation:rule="[has(self.vus), has(self.rate), has(self.stages)].filter(x, x).size() <= 1",message="an arm's load sets at most one of vus, rate and stages"
type LoadOverride struct {
	// scenarios names the template scenarios this arm runs; the others are left out (e.g.
	// check-in/check-out alone against check-in/check-out plus a data import).
	// +optional
	// +listType=set
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=16
	// +kubebuilder:validation:items:MaxLength=40
	Scenarios []string `json:"scenarios,omitempty"`

	// vus sets the virtual users of every scenario that runs with vus and duration.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100000
	VUs *int32 `json:"vus,omitempty"`

	// rate sets the iterations per timeUnit of every scenario that runs with an arrivalRate.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1000000
	Rate *int32 `json:"rate,omitempty"`

	// stages replace the shape of every scenario that runs with vus or stages (ramping-vus).
	// +optional
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=32
	Stages []Stage `json:"stages,omitempty"`
}

// SweepPhase is where a sweep is.
// +kubebuilder:validation:Enum=Pending;Running;Succeeded;Failed;Aborted
type SweepPhase string

// The phases of a sweep.
const (
	// SweepPending: the sweep has not been looked at yet.
	SweepPending SweepPhase = "Pending"
	// SweepRunning: its runs are created and at least one has not ended.
	SweepRunning SweepPhase = "Running"
	// SweepSucceeded: every run ended and the sweep report was written. Some runs may have
	// failed; the report says which and leaves them out.
	SweepSucceeded SweepPhase = "Succeeded"
	// SweepFailed: the sweep cannot run as declared (see the Ready condition), or its report
	// could not be written.
	SweepFailed SweepPhase = "Failed"
	// SweepAborted: spec.abort was set and every run has ended.
	SweepAborted SweepPhase = "Aborted"
)

// IsTerminal reports whether the sweep has ended.
func (p SweepPhase) IsTerminal() bool {
	return p == SweepSucceeded || p == SweepFailed || p == SweepAborted
}

// SweepArmStatus is the progress and outcome of one arm.
type SweepArmStatus struct {
	// name of the arm; "baseline" for the baseline.
	Name string `json:"name"`
	// parameter the arm changes, for people ("HTTP_MAXPOOLSIZE", "cpu limit x replicas").
	// +optional
	Parameter string `json:"parameter,omitempty"`
	// value of the parameter in this arm ("10", "500m x 2").
	// +optional
	Value string `json:"value,omitempty"`
	// runs is how many runs the arm has; succeeded and failed how many ended so.
	Runs int32 `json:"runs"`
	// +optional
	Succeeded int32 `json:"succeeded,omitempty"`
	// +optional
	Failed int32 `json:"failed,omitempty"`
	// change is the arm's verdict against the baseline, once every run has ended.
	// +optional
	Change Change `json:"change,omitempty"`
	// message explains the change in one line; the report has the full reasons.
	// +optional
	// +kubebuilder:validation:MaxLength=512
	Message string `json:"message,omitempty"`
}

// PerfSweepStatus is the observed state of a PerfSweep.
type PerfSweepStatus struct {
	// phase is where the sweep is.
	// +optional
	Phase SweepPhase `json:"phase,omitempty"`

	// observedGeneration is the generation of the spec the status was computed from.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// conditions: ExperimentsCreated, Reported and Ready; see the constants.
	// +optional
	// +listType=map
	// +listMapKey=type
	// +kubebuilder:validation:MaxItems=8
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// total is the number of runs: (baselines + arms) x repeats.
	// +optional
	Total int32 `json:"total,omitempty"`
	// done is the number of runs that have ended, whatever the outcome.
	// +optional
	Done int32 `json:"done,omitempty"`
	// failed is the number of runs that failed or were aborted.
	// +optional
	Failed int32 `json:"failed,omitempty"`
	// progress is done/total, for kubectl get.
	// +optional
	Progress string `json:"progress,omitempty"`

	// currentArm is the arm of the run that holds the environment now, if any.
	// +optional
	CurrentArm string `json:"currentArm,omitempty"`
	// currentExperiment is the PerfExperiment that holds the environment now, if any.
	// +optional
	CurrentExperiment string `json:"currentExperiment,omitempty"`

	// bestArm is the Improved arm with the largest improvement of its primary latency, once
	// the report is written; empty when no arm improved.
	// +optional
	// sequential is a sequential sweep's progress: the repeats planned so far, the looks
	// taken, and why it stopped.
	// +optional
	Sequential *SweepSequentialStatus `json:"sequential,omitempty"`
	BestArm    string                 `json:"bestArm,omitempty"`

	// capacity is a capacity search's probes and answer.
	// +optional
	Capacity *SweepCapacityStatus `json:"capacity,omitempty"`

	// bisect is a bisect's steps and answer.
	// +optional
	Bisect *SweepBisectStatus `json:"bisect,omitempty"`

	// arms holds each arm's progress and outcome, the baseline first.
	// +optional
	// +kubebuilder:validation:MaxItems=100
	Arms []SweepArmStatus `json:"arms,omitempty"`

	// reportRef names the ConfigMap holding the sweep report (report.md, report.html,
	// results.json).
	// +optional
	ReportRef *LocalObjectReference `json:"reportRef,omitempty"`

	// verdict is the sweep's judgement once its report is written: Fail when
	// spec.analysis.failOnRegression (or the operator's default) is in force and an arm
	// Regressed, Pass otherwise. Argo CD's health check and kstatus read Fail as Degraded /
	// Failed.
	// +optional
	Verdict Verdict `json:"verdict,omitempty"`

	// message is a one-line human summary of the current state or outcome.
	// +optional
	Message string `json:"message,omitempty"`
}

// PerfSweep is a whole study from one manifest: a baseline and arms (variants, or load levels)
// over one template, each repeated, run in an interleaved order (B, V1, V2, ..., B, V1, V2, ...)
// as owned PerfExperiments in one queue, and summarised in one report.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=psweep,categories=perfexp
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=`.status.phase`
// +kubebuilder:printcolumn:name="Done",type=string,JSONPath=`.status.progress`
// +kubebuilder:printcolumn:name="Current",type=string,JSONPath=`.status.currentArm`
// +kubebuilder:printcolumn:name="Best",type=string,JSONPath=`.status.bestArm`
// +kubebuilder:printcolumn:name="Capacity",type=string,JSONPath=`.status.capacity.summary`
// +kubebuilder:printcolumn:name="Culprit",type=string,JSONPath=`.status.bisect.summary`
// +kubebuilder:printcolumn:name="Verdict",type=string,JSONPath=`.status.verdict`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type PerfSweep struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec declares the sweep.
	// +required
	Spec PerfSweepSpec `json:"spec"`

	// status is the sweep's observed state.
	// +optional
	Status PerfSweepStatus `json:"status,omitempty"`
}

// PerfSweepList contains a list of PerfSweep.
// +kubebuilder:object:root=true
type PerfSweepList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []PerfSweep `json:"items"`
}

// ReportName is the name of the sweep's report ConfigMap, <name>-report, shortened like every
// child's name (see ChildName).
func (s *PerfSweep) ReportName() string {
	return ChildName(s.Name, strings.TrimPrefix(ReportSuffix, "-"), 63)
}

// Labels and annotations on a sweep's runs.
const (
	// LabelSweep names the sweep that created a PerfExperiment.
	LabelSweep = "perfexp.dev/sweep"
	// LabelArm names the arm of a sweep's run ("baseline" for the baseline).
	LabelArm = "perfexp.dev/arm"
	// LabelRepeat is the 1-based repeat of a sweep's run.
	LabelRepeat = "perfexp.dev/repeat"
	// SweepFinalizer keeps a sweep until its runs are deleted (and have restored the
	// environment), so `kubectl delete psweep` returns once the environment is back.
	SweepFinalizer = "perfexp.dev/sweep-runs"
	// BaselineArm is the name of a sweep's baseline arm.
	BaselineArm = "baseline"
)

// DefaultSweepDeadline is spec.deadline's default, and the deadline of a sweep created before
// the field existed.
const DefaultSweepDeadline = 168 * time.Hour

// DeadlineAt is when the sweep's deadline passes: spec.deadline (DefaultSweepDeadline when
// unset) after its creation.
func (s *PerfSweep) DeadlineAt() time.Time {
	d := DefaultSweepDeadline
	if s.Spec.Deadline != nil {
		d = s.Spec.Deadline.Duration
	}
	return s.CreationTimestamp.Add(d)
}
