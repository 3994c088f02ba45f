package v1alpha1

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// PerfExperimentSpec declares one performance experiment: the environment variant to apply, the
// load to run against it and how to analyse the outcome.
// +kubebuilder:validation:XValidation:rule="!has(self.analysis) || !has(self.analysis.objectives) || has(self.baseline) || self.analysis.objectives.all(o, !has(o.maxIncreasePercent) && !has(o.maxDecreasePercent))",message="objectives relative to a baseline (maxIncreasePercent, maxDecreasePercent) need spec.baseline"
// +kubebuilder:validation:XValidation:rule="!has(self.load.warmUp) || !has(self.load.warmUp.scenario) || self.load.scenarios.exists(s, s.name == self.load.warmUp.scenario)",message="load.warmUp.scenario must name one of load.scenarios"
// +kubebuilder:validation:XValidation:rule="!has(self.analysis) || !has(self.analysis.objectives) || self.load.scenarios.exists(s, has(s.fromScript) && s.fromScript) || self.analysis.objectives.all(o, !has(o.scenario) || self.load.scenarios.exists(s, s.name == o.scenario))",message="every objective's scenario must name one of load.scenarios (or, with a fromScript scenario, a k6 scenario of its script)"
// +kubebuilder:validation:XValidation:rule="!has(self.analysis) || !has(self.analysis.confirm) || has(self.baseline)",message="analysis.confirm runs the baseline and the variant again: it needs spec.baseline"
// +kubebuilder:validation:XValidation:rule="!has(self.analysis) || !has(self.analysis.objectives) || self.analysis.objectives.all(o, o.metric != 'Query' || (has(self.analysis.queries) && self.analysis.queries.exists(q, q.name == o.query)))",message="every objective with metric Query must name one of analysis.queries"
// +kubebuilder:validation:XValidation:rule="!has(self.analysis) || !has(self.analysis.primaryMetrics) || self.load.scenarios.exists(s, has(s.fromScript) && s.fromScript) || self.analysis.primaryMetrics.all(p, !has(p.scenario) || self.load.scenarios.exists(s, s.name == p.scenario))",message="every primary metric's scenario must name one of load.scenarios (or, with a fromScript scenario, a k6 scenario of its script)"
// +kubebuilder:validation:XValidation:rule="!has(self.analysis) || !has(self.analysis.primaryMetrics) || self.analysis.primaryMetrics.all(p, !has(p.query) || (has(self.analysis.queries) && self.analysis.queries.exists(q, q.name == p.query)))",message="every primary metric's query must name one of analysis.queries"
type PerfExperimentSpec struct {
	// queue names the environment lock this experiment waits for. Experiments with the same
	// queue run one at a time, ordered by priority (highest first), then creation time, then
	// name. Defaults to the target namespace, so experiments against one environment never
	// overlap.
	// +optional
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	Queue string `json:"queue,omitempty"`

	// priority orders experiments waiting in the same queue: higher runs first.
	// +optional
	// +kubebuilder:default=0
	// +kubebuilder:validation:Minimum=-1000
	// +kubebuilder:validation:Maximum=1000
	Priority int32 `json:"priority,omitempty"`

	// targetNamespace is the namespace of the environment under test: the workloads the variant
	// patches and the services the load calls. Defaults to the experiment's own namespace.
	// +optional
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	TargetNamespace string `json:"targetNamespace,omitempty"`

	// variant is what this experiment changes in the environment for the length of the run.
	// Omit it to measure the environment as it is (a baseline run). Every change is undone when
	// the experiment ends, whatever the outcome.
	// +optional
	Variant *Variant `json:"variant,omitempty"`

	// freshPods rolls the named workloads before the run (after the variant is applied, in
	// the same rollout), so this run's pods are as young as those of a run it is compared
	// with whose variant rolled them. A sweep sets it on every run (spec.podAge: Equal).
	// +optional
	FreshPods *FreshPods `json:"freshPods,omitempty"`

	// settle is how long the environment is left alone after the variant's (or freshPods')
	// rollout finished, or after the queue was handed over by the previous run's restore when
	// nothing rolled, before setup, warm-up or load begin: the aftermath of a rollout (new
	// pods starting, old ones shutting down) or of the run before is not measured. At most
	// 10m; omitted, nothing is waited for. The report states the wait.
	// +optional
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern=`^([0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h))+$`
	// +kubebuilder:validation:MaxLength=32
	// +kubebuilder:validation:XValidation:rule="self.matches('^(([0-9]{1,5}([.][0-9]+)?h)|([0-9]{1,7}([.][0-9]+)?m)|([0-9]{1,9}([.][0-9]+)?s)|([0-9]{1,12}([.][0-9]+)?ms)|([0-9]{1,15}([.][0-9]+)?(us|µs))|([0-9]{1,18}([.][0-9]+)?ns)){1,6}$') && duration(self) >= duration('0s') && duration(self) <= duration('10m')",message="settle must be a duration of at most 10m, such as 30s"
	Settle *metav1.Duration `json:"settle,omitempty"`

	// setup is an optional data-preparation Job that runs after the variant is in place and
	// before any load, for example to regenerate test data.
	// +optional
	Setup *Setup `json:"setup,omitempty"`

	// teardown is an optional Job of the same shape as setup that puts the data back after the
	// load, for example to reset state a run leaves behind. It runs on every path once setup or
	// load may have begun (success, failure, abort, deletion, timeout), after the workloads are
	// restored and before the queue is released, within timeouts.teardown. Its failure is
	// reported in the TornDown condition; it never keeps the workloads from being restored.
	// +optional
	Teardown *Setup `json:"teardown,omitempty"`

	// load is the k6 load to run: an optional warm-up and one or more scenarios.
	// +required
	Load Load `json:"load"`

	// analysis configures how results are read from Prometheus and judged.
	// +optional
	Analysis *Analysis `json:"analysis,omitempty"`

	// baseline names an earlier experiment to compare this one with.
	// +optional
	Baseline *BaselineRef `json:"baseline,omitempty"`

	// timeouts bound each step of the experiment.
	// +optional
	Timeouts *Timeouts `json:"timeouts,omitempty"`

	// abort, when set to true, stops the experiment as soon as possible: running load is stopped,
	// the environment is restored and the experiment ends as Aborted. It is the only field that
	// may change once the experiment has joined its queue.
	// +optional
	Abort bool `json:"abort,omitempty"`
}

// BaselineRef names the experiment whose results this one is compared with.
type BaselineRef struct {
	// name of a PerfExperiment in the same namespace. It must have succeeded and have run the
	// same scenarios. It cannot be the experiment itself (refused at apply); a baseline that does
	// not exist, or a chain of baselines that loops back, fails the experiment when it leaves
	// the queue, before anything is patched.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`
}

// Timeouts bound each step of an experiment. Every value is a duration such as "90s" or "1h30m".
// rollout, setup and loadGrace may be at most 24h, analysis at most 168h (7 days) and overall at
// most 720h (30 days): the API server refuses larger values, and values too large for the
// operator to read (Go durations end near 2562047h), at apply time.
type Timeouts struct {
	// rollout is how long every patched or restored workload may take to finish its rollout; at
	// most 24h.
	// +optional
	// +kubebuilder:default="10m"
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern=`^([0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h))+$`
	// +kubebuilder:validation:MaxLength=32
	// +kubebuilder:validation:XValidation:rule="self.matches('^(([0-9]{1,5}([.][0-9]+)?h)|([0-9]{1,7}([.][0-9]+)?m)|([0-9]{1,9}([.][0-9]+)?s)|([0-9]{1,12}([.][0-9]+)?ms)|([0-9]{1,15}([.][0-9]+)?(us|µs))|([0-9]{1,18}([.][0-9]+)?ns)){1,6}$') && duration(self) > duration('0s') && duration(self) <= duration('24h')",message="timeouts.rollout must be a positive duration of at most 24h (1 day), such as 90s or 1h30m"
	Rollout *metav1.Duration `json:"rollout,omitempty"`

	// setup is how long the setup Job may run; at most 24h.
	// +optional
	// +kubebuilder:default="30m"
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern=`^([0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h))+$`
	// +kubebuilder:validation:MaxLength=32
	// +kubebuilder:validation:XValidation:rule="self.matches('^(([0-9]{1,5}([.][0-9]+)?h)|([0-9]{1,7}([.][0-9]+)?m)|([0-9]{1,9}([.][0-9]+)?s)|([0-9]{1,12}([.][0-9]+)?ms)|([0-9]{1,15}([.][0-9]+)?(us|µs))|([0-9]{1,18}([.][0-9]+)?ns)){1,6}$') && duration(self) > duration('0s') && duration(self) <= duration('24h')",message="timeouts.setup must be a positive duration of at most 24h (1 day), such as 90s or 1h30m"
	Setup *metav1.Duration `json:"setup,omitempty"`

	// teardown is how long the teardown Job may run; at most 24h. When it passes, the Job is
	// stopped, TornDown reads TeardownTimedOut and the queue is released.
	// +optional
	// +kubebuilder:default="10m"
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern=`^([0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h))+$`
	// +kubebuilder:validation:MaxLength=32
	// +kubebuilder:validation:XValidation:rule="self.matches('^(([0-9]{1,5}([.][0-9]+)?h)|([0-9]{1,7}([.][0-9]+)?m)|([0-9]{1,9}([.][0-9]+)?s)|([0-9]{1,12}([.][0-9]+)?ms)|([0-9]{1,15}([.][0-9]+)?(us|µs))|([0-9]{1,18}([.][0-9]+)?ns)){1,6}$') && duration(self) > duration('0s') && duration(self) <= duration('24h')",message="timeouts.teardown must be a positive duration of at most 24h (1 day), such as 90s or 1h30m"
	Teardown *metav1.Duration `json:"teardown,omitempty"`

	// loadGrace is how much longer than its planned duration the load may take (pod start-up,
	// graceful stop) before it is stopped and the experiment fails. At most 24h.
	// +optional
	// +kubebuilder:default="5m"
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern=`^([0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h))+$`
	// +kubebuilder:validation:MaxLength=32
	// +kubebuilder:validation:XValidation:rule="self.matches('^(([0-9]{1,5}([.][0-9]+)?h)|([0-9]{1,7}([.][0-9]+)?m)|([0-9]{1,9}([.][0-9]+)?s)|([0-9]{1,12}([.][0-9]+)?ms)|([0-9]{1,15}([.][0-9]+)?(us|µs))|([0-9]{1,18}([.][0-9]+)?ns)){1,6}$') && duration(self) > duration('0s') && duration(self) <= duration('24h')",message="timeouts.loadGrace must be a positive duration of at most 24h (1 day), such as 90s or 1h30m"
	LoadGrace *metav1.Duration `json:"loadGrace,omitempty"`

	// analysis is how long analysis may keep retrying an unreachable or lagging Prometheus. The
	// environment is already restored by then, so waiting costs nothing but time. At most 168h.
	// +optional
	// +kubebuilder:default="30m"
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern=`^([0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h))+$`
	// +kubebuilder:validation:MaxLength=32
	// +kubebuilder:validation:XValidation:rule="self.matches('^(([0-9]{1,5}([.][0-9]+)?h)|([0-9]{1,7}([.][0-9]+)?m)|([0-9]{1,9}([.][0-9]+)?s)|([0-9]{1,12}([.][0-9]+)?ms)|([0-9]{1,15}([.][0-9]+)?(us|µs))|([0-9]{1,18}([.][0-9]+)?ns)){1,6}$') && duration(self) > duration('0s') && duration(self) <= duration('168h')",message="timeouts.analysis must be a positive duration of at most 168h (7 days), such as 90s or 1h30m"
	Analysis *metav1.Duration `json:"analysis,omitempty"`

	// overall bounds the experiment from leaving the queue to the end of load. When it passes,
	// load is stopped, the environment restored and the experiment fails. Unset means the
	// operator's --default-overall-timeout (48h unless the administrator changed it). At most
	// 720h (30 days) here, and at most the operator's --max-overall-timeout (192h unless
	// changed); a planned load that does not end within it is refused before the experiment
	// joins its queue (InvalidTimeouts).
	// +optional
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern=`^([0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h))+$`
	// +kubebuilder:validation:MaxLength=32
	// +kubebuilder:validation:XValidation:rule="self.matches('^(([0-9]{1,5}([.][0-9]+)?h)|([0-9]{1,7}([.][0-9]+)?m)|([0-9]{1,9}([.][0-9]+)?s)|([0-9]{1,12}([.][0-9]+)?ms)|([0-9]{1,15}([.][0-9]+)?(us|µs))|([0-9]{1,18}([.][0-9]+)?ns)){1,6}$') && duration(self) > duration('0s') && duration(self) <= duration('720h')",message="timeouts.overall must be a positive duration of at most 720h (30 days), such as 90s or 1h30m"
	Overall *metav1.Duration `json:"overall,omitempty"`
}

// Phase is where an experiment is in its one flow.
// +kubebuilder:validation:Enum=Pending;Queued;Preparing;SettingUp;WarmingUp;Running;Restoring;Analyzing;Confirming;Succeeded;Failed;Aborted
type Phase string

// The phases, in the order an experiment passes through them. Restoring runs on every path
// that patched anything: success, failure, abort and deletion.
const (
	PhasePending   Phase = "Pending"
	PhaseQueued    Phase = "Queued"
	PhasePreparing Phase = "Preparing"
	PhaseSettingUp Phase = "SettingUp"
	PhaseWarmingUp Phase = "WarmingUp"
	PhaseRunning   Phase = "Running"
	PhaseRestoring Phase = "Restoring"
	PhaseAnalyzing Phase = "Analyzing"
	// PhaseConfirming: spec.analysis.confirm runs the baseline and the variant again (a PerfSweep
	// the experiment owns, through the same queue) because one run was not decisive. The
	// experiment holds no lock meanwhile; its own results are in status already.
	PhaseConfirming Phase = "Confirming"
	PhaseSucceeded  Phase = "Succeeded"
	PhaseFailed     Phase = "Failed"
	PhaseAborted    Phase = "Aborted"
)

// IsTerminal reports whether the experiment has ended.
func (p Phase) IsTerminal() bool {
	return p == PhaseSucceeded || p == PhaseFailed || p == PhaseAborted
}

// Verdict is the overall judgement of an experiment.
// +kubebuilder:validation:Enum=Pass;Fail;Inconclusive;Invalid
type Verdict string

const (
	// VerdictPass means every objective was met (or none were declared) on valid results.
	VerdictPass Verdict = "Pass"
	// VerdictFail means at least one objective was missed.
	VerdictFail Verdict = "Fail"
	// VerdictInconclusive means an objective could not be judged (data absent, or a relative
	// objective whose interval straddles its bound).
	VerdictInconclusive Verdict = "Inconclusive"
	// VerdictInvalid means the results cannot be trusted (for example a scenario exceeded the
	// maximum error rate), whatever the objectives say.
	VerdictInvalid Verdict = "Invalid"
)

// Window is the measured time window of the load, as it really happened: taken from the load
// pods' container start and finish times. Kubernetes reports those in whole seconds, rounded
// down, so warmUpEnd and end are rounded up to the next second to contain every sample.
type Window struct {
	// start is when the first load pod (warm-up or scenario) started making requests.
	// +optional
	Start *metav1.Time `json:"start,omitempty"`
	// warmUpEnd is when the warm-up ended; samples before it are excluded from results.
	// +optional
	WarmUpEnd *metav1.Time `json:"warmUpEnd,omitempty"`
	// end is when the last load pod finished.
	// +optional
	End *metav1.Time `json:"end,omitempty"`
}

// PhaseTransition records when the experiment entered a phase.
type PhaseTransition struct {
	// phase entered.
	Phase Phase `json:"phase"`
	// time the phase was entered.
	Time metav1.Time `json:"time"`
}

// PerfExperimentStatus is the observed state of a PerfExperiment.
type PerfExperimentStatus struct {
	// phase is where the experiment is in its flow.
	// +optional
	Phase Phase `json:"phase,omitempty"`

	// observedGeneration is the generation of the spec the status was computed from.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// conditions describe the experiment's state in detail; see the Condition* constants.
	// +optional
	// +listType=map
	// +listMapKey=type
	// +kubebuilder:validation:MaxItems=16
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// queue is the resolved queue name (spec.queue or the target namespace).
	// +optional
	Queue string `json:"queue,omitempty"`

	// queuePosition is this experiment's place among the experiments waiting in its queue:
	// 1 runs next. Zero or absent when it is not waiting. The first 10 places are exact;
	// further back it is within a tenth of the exact place (it is rewritten only when it
	// drifts further, so a long queue's dequeue does not rewrite every member).
	// +optional
	QueuePosition int32 `json:"queuePosition,omitempty"`

	// testID identifies this run's samples: every k6 sample carries the tag testid=<testID>.
	// +optional
	TestID string `json:"testID,omitempty"`

	// startTime is when the experiment left the queue.
	// +optional
	StartTime *metav1.Time `json:"startTime,omitempty"`

	// completionTime is when the experiment ended.
	// +optional
	CompletionTime *metav1.Time `json:"completionTime,omitempty"`

	// phaseHistory lists when each phase was entered, oldest first.
	// +optional
	// +kubebuilder:validation:MaxItems=16
	PhaseHistory []PhaseTransition `json:"phaseHistory,omitempty"`

	// window is the measured load window, as it really happened.
	// +optional
	Window *Window `json:"window,omitempty"`

	// environment records what the variant touched and how to put it back.
	// +optional
	Environment *EnvironmentStatus `json:"environment,omitempty"`

	// inventory is what the touched and observed workloads ran with when the measured window
	// began: images, replicas, resources, env and nodes.
	// +optional
	Inventory *Inventory `json:"inventory,omitempty"`

	// load records the state of each load scenario.
	// +optional
	Load *LoadStatus `json:"load,omitempty"`

	// results summarise the run; the full report lives in the ConfigMap named by reportRef.
	// +optional
	Results *Results `json:"results,omitempty"`

	// comparison with the baseline experiment, when one is set.
	// +optional
	Comparison *Comparison `json:"comparison,omitempty"`

	// confirmation is the outcome of spec.analysis.confirm: the comparison of the baseline's
	// and the variant's repeated runs, and what it took to reach it.
	// +optional
	Confirmation *Confirmation `json:"confirmation,omitempty"`

	// verdict is the overall judgement of the run.
	// +optional
	Verdict Verdict `json:"verdict,omitempty"`

	// reportRef names the ConfigMap holding the full report (report.md, results.json).
	// +optional
	ReportRef *LocalObjectReference `json:"reportRef,omitempty"`

	// dashboardURL links to a Grafana dashboard for the run, when one was published.
	// +optional
	DashboardURL string `json:"dashboardURL,omitempty"`

	// message is a one-line human summary of the current state or outcome.
	// +optional
	Message string `json:"message,omitempty"`
}

// Confirmation is what spec.analysis.confirm ran and found. status.comparison keeps the single
// run's comparison; the headline here is the one over the repeated runs.
type Confirmation struct {
	// sweep names the PerfSweep, owned by this experiment, that runs the baseline's variant and
	// this experiment's variant again in blocks; its report has every run and interval.
	Sweep string `json:"sweep"`
	// change is the headline over the repeated runs, once the confirmation ended: Regressed,
	// Improved or NoMeaningfulChange when it was decisive, else Inconclusive or Unknown.
	// +optional
	Change Change `json:"change,omitempty"`
	// message explains the change in one line.
	// +optional
	// +kubebuilder:validation:MaxLength=512
	Message string `json:"message,omitempty"`
	// repeats is how many blocks ran (each one run of the baseline and one of the variant).
	// +optional
	Repeats int32 `json:"repeats,omitempty"`
	// runs is how many of the confirmation's runs ended, whatever the outcome.
	// +optional
	Runs int32 `json:"runs,omitempty"`
	// environmentTime is the time the confirmation's runs held the environment, summed: from
	// leaving the queue to the restored environment, run by run.
	// +optional
	EnvironmentTime *metav1.Duration `json:"environmentTime,omitempty"`
	// elapsed is the time from the confirmation's start to its answer, queue waits included.
	// +optional
	Elapsed *metav1.Duration `json:"elapsed,omitempty"`
	// stopReason says why no further block was added: decisive, or the budget spent.
	// +optional
	// +kubebuilder:validation:MaxLength=512
	StopReason string `json:"stopReason,omitempty"`
	// reportRef names the sweep's report ConfigMap.
	// +optional
	ReportRef *LocalObjectReference `json:"reportRef,omitempty"`
}

// LocalObjectReference names an object in the experiment's namespace.
type LocalObjectReference struct {
	// name of the object.
	Name string `json:"name"`
}

// PerfExperiment is one declarative performance experiment: an environment variant, a k6 load
// against it, and the analysed results. Experiments in one queue run one at a time, and the
// environment is always restored when an experiment ends.
// Once an experiment has joined its queue its spec is frozen, except spec.abort; the
// ValidatingAdmissionPolicy in config/policy refuses other changes at apply time. (A CRD
// transition rule cannot do it: comparing whole specs exceeds the CRD's static CEL cost budget.)
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:validation:XValidation:rule="!has(self.spec.baseline) || self.spec.baseline.name != self.metadata.name",message="spec.baseline names this experiment itself: a baseline is an earlier experiment to compare with"
// +kubebuilder:resource:shortName=pexp,categories=perfexp
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=`.status.phase`
// +kubebuilder:printcolumn:name="Queue",type=string,JSONPath=`.status.queue`
// +kubebuilder:printcolumn:name="Position",type=integer,JSONPath=`.status.queuePosition`
// +kubebuilder:printcolumn:name="P95",type=string,JSONPath=`.status.results.p95`
// +kubebuilder:printcolumn:name="Verdict",type=string,JSONPath=`.status.verdict`
// +kubebuilder:printcolumn:name="Confirmed",type=string,JSONPath=`.status.confirmation.change`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type PerfExperiment struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec declares the experiment.
	// +required
	Spec PerfExperimentSpec `json:"spec"`

	// status is the experiment's observed state.
	// +optional
	Status PerfExperimentStatus `json:"status,omitempty"`
}

// PerfExperimentList contains a list of PerfExperiment.
// +kubebuilder:object:root=true
type PerfExperimentList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []PerfExperiment `json:"items"`
}

// ChildName is the name of an object perfexp creates for the experiment named exp:
// "<exp>-<suffix>" when that is at most limit characters and a DNS label. Otherwise it is cut,
// its dots turned into dashes, and it ends in a hash of the full name, so it stays deterministic
// (a restarted operator finds the same object), unique per experiment and suffix, and short
// enough for the names Kubernetes derives from it: an Indexed Job's pods are
// <job>-<index>-<random> and their hostname <job>-<index> must be a DNS label.
func ChildName(exp, suffix string, limit int) string {
	name := exp + "-" + suffix
	if len(name) <= limit && !strings.Contains(name, ".") {
		return name
	}
	sum := sha256.Sum256([]byte(name))
	hash := hex.EncodeToString(sum[:])[:8]
	keep := min(limit-len(hash)-1, len(name))
	return strings.TrimRight(strings.ReplaceAll(name[:keep], ".", "-"), "-") + "-" + hash
}

// ReportName is the name of the experiment's report ConfigMap, <name>-report (see ReportSuffix).
func (e *PerfExperiment) ReportName() string {
	return ChildName(e.Name, strings.TrimPrefix(ReportSuffix, "-"), 63)
}

// DashboardName is the name of the experiment's Grafana dashboard ConfigMap in its own
// namespace, <name>-dashboard, shortened like every child's name (see ChildName).
func (e *PerfExperiment) DashboardName() string {
	return ChildName(e.Name, "dashboard", 63)
}

// TargetNamespace is the namespace of the environment under test: spec.targetNamespace, else
// the experiment's own.
func (e *PerfExperiment) TargetNamespace() string {
	if e.Spec.TargetNamespace != "" {
		return e.Spec.TargetNamespace
	}
	return e.Namespace
}

// QueueName is the queue the experiment waits in: status.queue once set (it is frozen when the
// experiment joins its queue, so the lock it takes is the lock it releases), else spec.queue,
// else the target namespace.
func (e *PerfExperiment) QueueName() string {
	if e.Status.Queue != "" {
		return e.Status.Queue
	}
	if e.Spec.Queue != "" {
		return e.Spec.Queue
	}
	return e.TargetNamespace()
}

// TestID derives the ID that labels one run's samples: the name, shortened when needed, then
// the first 8 characters of the UID without dashes. It is a valid label value (at most 63
// characters) and unique per run. The experiment records it in status.testID when it joins
// its queue; read that afterwards.
func (e *PerfExperiment) TestID() string {
	uid := strings.ReplaceAll(string(e.UID), "-", "")
	if len(uid) > 8 {
		uid = uid[:8]
	}
	name := e.Name
	if limit := 63 - len(uid) - 1; len(name) > limit {
		name = strings.TrimRight(name[:limit], "-.")
	}
	return name + "-" + uid
}
