package v1alpha1

import (
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// RunnerKind is how k6 runs.
// +kubebuilder:validation:Enum=Job;K6Operator
type RunnerKind string

// The load runners.
const (
	// RunnerJob runs each scenario as an Indexed Job of k6 pods created by perfexp.
	RunnerJob RunnerKind = "Job"
	// RunnerK6Operator creates a k6-operator TestRun (k6.io/v1alpha1) per scenario.
	RunnerK6Operator RunnerKind = "K6Operator"
)

// Load is the k6 load of an experiment.
// +kubebuilder:validation:XValidation:rule="self.scenarios.all(s, self.scenarios.exists_one(t, t.name == s.name))",message="scenario names must be unique"
type Load struct {
	// runner chooses how k6 runs: Job (default) or K6Operator.
	// +optional
	// +kubebuilder:default=Job
	Runner RunnerKind `json:"runner,omitempty"`

	// image is the k6 image for every scenario that does not set its own.
	// Defaults to the operator's configured k6 image.
	// +optional
	// +kubebuilder:validation:MaxLength=512
	Image string `json:"image,omitempty"`

	// warmUp is optional load run before the scenarios; its samples are excluded from results.
	// +optional
	WarmUp *WarmUp `json:"warmUp,omitempty"`

	// scenarios run concurrently, each after its own start delay.
	// +required
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=16
	Scenarios []Scenario `json:"scenarios"`

	// pod sets placement and resources shared by every k6 runner pod.
	// +optional
	Pod *RunnerPod `json:"pod,omitempty"`
}

// WarmUp is load run before the measured scenarios.
type WarmUp struct {
	// scenario names the scenario whose script the warm-up runs; defaults to the first.
	// +optional
	// +kubebuilder:validation:MaxLength=40
	Scenario string `json:"scenario,omitempty"`

	// exec names the function of the scenario's script the warm-up runs, instead of the
	// scenario's exec or the script's default function; a fromScript scenario whose script has
	// no default function needs it.
	// +optional
	// +kubebuilder:validation:MaxLength=128
	// +kubebuilder:validation:Pattern=`^[A-Za-z_$][A-Za-z0-9_$]*$`
	Exec string `json:"exec,omitempty"`

	// vus is the number of virtual users during warm-up.
	// +optional
	// +kubebuilder:default=1
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=10000
	VUs int32 `json:"vus,omitempty"`

	// duration of the warm-up: positive, at most 168h (7 days).
	// +required
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern=`^([0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h))+$`
	// +kubebuilder:validation:MaxLength=32
	// +kubebuilder:validation:XValidation:rule="self.matches('^(([0-9]{1,5}([.][0-9]+)?h)|([0-9]{1,7}([.][0-9]+)?m)|([0-9]{1,9}([.][0-9]+)?s)|([0-9]{1,12}([.][0-9]+)?ms)|([0-9]{1,15}([.][0-9]+)?(us|µs))|([0-9]{1,18}([.][0-9]+)?ns)){1,6}$') && duration(self) > duration('0s') && duration(self) <= duration('168h')",message="warmUp.duration must be a positive duration of at most 168h (7 days), such as 90s or 1h30m"
	Duration metav1.Duration `json:"duration"`
}

// Scenario is one k6 load scenario. Its shape is exactly one of: vus with duration, stages, or
// arrivalRate; or fromScript. The shape given here overrides the script's own `options` for
// scenarios, VUs, duration and stages; fromScript runs them as the script declares them.
// +kubebuilder:validation:XValidation:rule="(has(self.fromScript) && self.fromScript) ? [has(self.vus) || has(self.duration), has(self.stages), has(self.arrivalRate)].filter(x, x).size() == 0 : [has(self.vus) || has(self.duration), has(self.stages), has(self.arrivalRate)].filter(x, x).size() == 1",message="a scenario takes exactly one load shape: vus with duration, stages, arrivalRate, or fromScript (which takes none of the others)"
// +kubebuilder:validation:XValidation:rule="!(has(self.fromScript) && self.fromScript && has(self.exec))",message="exec names the function of the experiment's load shape; with fromScript the script's own scenarios name theirs"
// +kubebuilder:validation:XValidation:rule="!has(self.scriptDuration) || (has(self.fromScript) && self.fromScript)",message="scriptDuration is how long a fromScript scenario's script runs; other scenarios take their duration from their load shape"
// +kubebuilder:validation:XValidation:rule="has(self.vus) == has(self.duration)",message="vus and duration go together"
// +kubebuilder:validation:XValidation:rule="!has(self.parallelism) || !has(self.vus) || self.vus >= self.parallelism",message="vus must be at least parallelism, so every runner pod gets a virtual user"
// +kubebuilder:validation:XValidation:rule="!has(self.parallelism) || !has(self.arrivalRate) || self.arrivalRate.preAllocatedVUs >= self.parallelism",message="arrivalRate.preAllocatedVUs must be at least parallelism, so every runner pod gets a virtual user"
type Scenario struct {
	// name of the scenario; every sample carries the tag scenario=<name>. "warm-up" is reserved.
	// +required
	// +kubebuilder:validation:XValidation:rule="self != 'warm-up'",message="the scenario name warm-up is reserved for the warm-up load"
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=40
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	Name string `json:"name"`

	// script is the k6 script to run, from a ConfigMap or inline.
	// +required
	Script ScriptSource `json:"script"`

	// exec names the function of the script the scenario runs (k6's exec), instead of its default
	// function, e.g. "checkout" for `export function checkout() {...}`.
	// +optional
	// +kubebuilder:validation:MaxLength=128
	// +kubebuilder:validation:Pattern=`^[A-Za-z_$][A-Za-z0-9_$]*$`
	Exec string `json:"exec,omitempty"`

	// fromScript runs the script's own execution options as it declares them: its
	// options.scenarios (executors, exec functions, startTime, tags, per-scenario options), or
	// its vus/duration/stages/iterations. perfexp still tags every sample with the test id, splits
	// the load over parallelism pods with k6 execution segments and reports each k6 scenario of
	// the script as a scenario of its own. The scenario then takes no vus, duration, stages or
	// arrivalRate.
	// +optional
	FromScript bool `json:"fromScript,omitempty"`

	// scriptDuration is how long a fromScript scenario's script runs, as `k6 inspect
	// --execution-requirements` prints it (totalDuration). The load step is stopped and fails when
	// it runs longer than this plus timeouts.loadGrace; without it only timeouts.overall bounds
	// the script (k6 itself ends every executor at its duration or maxDuration). At most 168h.
	// +optional
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern=`^([0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h))+$`
	// +kubebuilder:validation:MaxLength=32
	// +kubebuilder:validation:XValidation:rule="self.matches('^(([0-9]{1,5}([.][0-9]+)?h)|([0-9]{1,7}([.][0-9]+)?m)|([0-9]{1,9}([.][0-9]+)?s)|([0-9]{1,12}([.][0-9]+)?ms)|([0-9]{1,15}([.][0-9]+)?(us|µs))|([0-9]{1,18}([.][0-9]+)?ns)){1,6}$') && duration(self) > duration('0s') && duration(self) <= duration('168h')",message="scriptDuration must be a positive duration of at most 168h (7 days), such as 90s or 1h30m"
	ScriptDuration *metav1.Duration `json:"scriptDuration,omitempty"`

	// vus is the number of virtual users, with duration.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100000
	VUs *int32 `json:"vus,omitempty"`

	// duration of the scenario, with vus: positive, at most 168h (7 days).
	// +optional
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern=`^([0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h))+$`
	// +kubebuilder:validation:MaxLength=32
	// +kubebuilder:validation:XValidation:rule="self.matches('^(([0-9]{1,5}([.][0-9]+)?h)|([0-9]{1,7}([.][0-9]+)?m)|([0-9]{1,9}([.][0-9]+)?s)|([0-9]{1,12}([.][0-9]+)?ms)|([0-9]{1,15}([.][0-9]+)?(us|µs))|([0-9]{1,18}([.][0-9]+)?ns)){1,6}$') && duration(self) > duration('0s') && duration(self) <= duration('168h')",message="duration must be a positive duration of at most 168h (7 days), such as 90s or 1h30m"
	Duration *metav1.Duration `json:"duration,omitempty"`

	// stages ramp the number of virtual users (k6 ramping-vus).
	// +optional
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=32
	Stages []Stage `json:"stages,omitempty"`

	// arrivalRate runs iterations at a constant rate (k6 constant-arrival-rate).
	// +optional
	ArrivalRate *ArrivalRate `json:"arrivalRate,omitempty"`

	// parallelism splits the scenario over this many k6 pods with k6 execution segments; together
	// they make exactly the declared load.
	// +optional
	// +kubebuilder:default=1
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=64
	Parallelism int32 `json:"parallelism,omitempty"`

	// startDelay is how long after the load starts this scenario begins (e.g. a data import 10
	// minutes into a check-in/check-out run). At most 168h (7 days).
	// +optional
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern=`^([0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h))+$`
	// +kubebuilder:validation:MaxLength=32
	// +kubebuilder:validation:XValidation:rule="self.matches('^(([0-9]{1,5}([.][0-9]+)?h)|([0-9]{1,7}([.][0-9]+)?m)|([0-9]{1,9}([.][0-9]+)?s)|([0-9]{1,12}([.][0-9]+)?ms)|([0-9]{1,15}([.][0-9]+)?(us|µs))|([0-9]{1,18}([.][0-9]+)?ns)){1,6}$') && duration(self) <= duration('168h')",message="startDelay must be a duration of at most 168h (7 days), such as 90s or 1h30m"
	StartDelay *metav1.Duration `json:"startDelay,omitempty"`

	// env is passed to the script as k6 environment variables (__ENV), e.g. BASE_URL; values may
	// come from Secrets. The variables that say where and under which tags samples go are
	// perfexp's (K6_OUT, K6_CONFIG, K6_TAGS, K6_SUMMARY_EXPORT, K6_PROMETHEUS_RW_* but the
	// three that shape trends: _TREND_AS_NATIVE_HISTOGRAM, _TREND_STATS, _STALE_MARKERS): a
	// scenario that could set them could write its samples under another experiment's test id
	// or to another tenant's Prometheus.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:XValidation:rule="self.all(e, !(e.name in ['K6_OUT', 'K6_CONFIG', 'K6_TAGS', 'K6_SUMMARY_EXPORT']) && (!e.name.startsWith('K6_PROMETHEUS_RW_') || e.name in ['K6_PROMETHEUS_RW_TREND_AS_NATIVE_HISTOGRAM', 'K6_PROMETHEUS_RW_TREND_STATS', 'K6_PROMETHEUS_RW_STALE_MARKERS']))",message="env may not set K6_OUT, K6_CONFIG, K6_TAGS, K6_SUMMARY_EXPORT or K6_PROMETHEUS_RW_* (but _TREND_AS_NATIVE_HISTOGRAM, _TREND_STATS and _STALE_MARKERS): perfexp sets where the samples go and the tags that say whose they are"
	Env []EnvVar `json:"env,omitempty"`

	// args are extra k6 command-line arguments, placed before perfexp's own flags. The flags
	// that choose outputs, a config file or the summary file (-o/--out, -c/--config,
	// --summary-export) and the tags perfexp reads (testid, scenario, instance_id) are perfexp's:
	// an argument that set them could write samples under another experiment's test id.
	// +optional
	// +kubebuilder:validation:MaxItems=32
	// +kubebuilder:validation:items:MaxLength=1024
	// +kubebuilder:validation:XValidation:rule="self.all(a, !a.matches('^(--out|--config|--summary-export)([=].*)?$') && !a.matches('^-[^-]*[oc]') && !a.matches('^(--tag=)?(testid|scenario|instance_id)='))",message="args may not choose outputs, a config file or the summary file (-o, --out, -c, --config, --summary-export) nor set the tags testid, scenario or instance_id: perfexp sets where the samples go and the tags that say whose they are"
	Args []string `json:"args,omitempty"`

	// image overrides the k6 image for this scenario.
	// +optional
	// +kubebuilder:validation:MaxLength=512
	Image string `json:"image,omitempty"`

	// resources of each k6 pod of this scenario.
	// +optional
	Resources *corev1.ResourceRequirements `json:"resources,omitempty"`
}

// ScriptSource is where a k6 script comes from: exactly one of configMap or inline.
// +kubebuilder:validation:XValidation:rule="has(self.configMap) != has(self.inline)",message="a script takes exactly one source: configMap or inline"
type ScriptSource struct {
	// configMap holds the script under a key.
	// +optional
	ConfigMap *ConfigMapScript `json:"configMap,omitempty"`

	// inline is the script text; perfexp stores it in a ConfigMap owned by the experiment.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=262144
	Inline string `json:"inline,omitempty"`
}

// ConfigMapScript names a script in a ConfigMap in the experiment's namespace.
type ConfigMapScript struct {
	// name of the ConfigMap.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`

	// key of the script in the ConfigMap.
	// +optional
	// +kubebuilder:default="script.js"
	// +kubebuilder:validation:MaxLength=253
	Key string `json:"key,omitempty"`
}

// Stage is one step of a ramping-vus scenario.
type Stage struct {
	// duration of the stage: positive, at most 168h (7 days). With at most 32 stages a ramp
	// stays far from the largest duration Go can represent (about 292 years).
	// +required
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern=`^([0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h))+$`
	// +kubebuilder:validation:MaxLength=32
	// +kubebuilder:validation:XValidation:rule="self.matches('^(([0-9]{1,5}([.][0-9]+)?h)|([0-9]{1,7}([.][0-9]+)?m)|([0-9]{1,9}([.][0-9]+)?s)|([0-9]{1,12}([.][0-9]+)?ms)|([0-9]{1,15}([.][0-9]+)?(us|µs))|([0-9]{1,18}([.][0-9]+)?ns)){1,6}$') && duration(self) > duration('0s') && duration(self) <= duration('168h')",message="stage duration must be a positive duration of at most 168h (7 days), such as 90s or 1h30m"
	Duration metav1.Duration `json:"duration"`

	// target is the number of virtual users at the end of the stage.
	// +required
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=100000
	Target int32 `json:"target"`
}

// ArrivalRate runs iterations at a constant rate.
// +kubebuilder:validation:XValidation:rule="!has(self.maxVUs) || self.maxVUs >= self.preAllocatedVUs",message="maxVUs must be at least preAllocatedVUs"
type ArrivalRate struct {
	// rate is the number of iterations started per timeUnit.
	// +required
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1000000
	Rate int32 `json:"rate"`

	// timeUnit is the period of rate: positive, at most 24h.
	// +optional
	// +kubebuilder:default="1s"
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern=`^([0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h))+$`
	// +kubebuilder:validation:MaxLength=32
	// +kubebuilder:validation:XValidation:rule="self.matches('^(([0-9]{1,5}([.][0-9]+)?h)|([0-9]{1,7}([.][0-9]+)?m)|([0-9]{1,9}([.][0-9]+)?s)|([0-9]{1,12}([.][0-9]+)?ms)|([0-9]{1,15}([.][0-9]+)?(us|µs))|([0-9]{1,18}([.][0-9]+)?ns)){1,6}$') && duration(self) > duration('0s') && duration(self) <= duration('24h')",message="timeUnit must be a positive duration of at most 24h (1 day), such as 90s or 1h30m"
	TimeUnit *metav1.Duration `json:"timeUnit,omitempty"`

	// duration of the scenario: positive, at most 168h (7 days).
	// +required
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern=`^([0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h))+$`
	// +kubebuilder:validation:MaxLength=32
	// +kubebuilder:validation:XValidation:rule="self.matches('^(([0-9]{1,5}([.][0-9]+)?h)|([0-9]{1,7}([.][0-9]+)?m)|([0-9]{1,9}([.][0-9]+)?s)|([0-9]{1,12}([.][0-9]+)?ms)|([0-9]{1,15}([.][0-9]+)?(us|µs))|([0-9]{1,18}([.][0-9]+)?ns)){1,6}$') && duration(self) > duration('0s') && duration(self) <= duration('168h')",message="arrivalRate.duration must be a positive duration of at most 168h (7 days), such as 90s or 1h30m"
	Duration metav1.Duration `json:"duration"`

	// preAllocatedVUs is the number of virtual users k6 starts with.
	// +required
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100000
	PreAllocatedVUs int32 `json:"preAllocatedVUs"`

	// maxVUs is the most virtual users k6 may use to keep the rate.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100000
	MaxVUs *int32 `json:"maxVUs,omitempty"`
}

// RunnerPod sets placement and resources of k6 runner pods.
type RunnerPod struct {
	// resources of each runner pod, unless a scenario sets its own.
	// +optional
	Resources *corev1.ResourceRequirements `json:"resources,omitempty"`

	// nodeSelector places runner pods on matching nodes.
	// +optional
	// +kubebuilder:validation:MaxProperties=16
	NodeSelector map[string]string `json:"nodeSelector,omitempty"`

	// tolerations let runner pods run on tainted nodes.
	// +optional
	// +kubebuilder:validation:MaxItems=16
	Tolerations []corev1.Toleration `json:"tolerations,omitempty"`

	// serviceAccountName runs the runner pods under this service account.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	ServiceAccountName string `json:"serviceAccountName,omitempty"`
}

// Setup is a data-preparation Job run after the variant is applied and before any load.
type Setup struct {
	// image of the setup container.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	Image string `json:"image"`

	// command of the setup container.
	// +optional
	// +kubebuilder:validation:MaxItems=32
	// +kubebuilder:validation:items:MaxLength=4096
	Command []string `json:"command,omitempty"`

	// args of the setup container.
	// +optional
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:MaxLength=4096
	Args []string `json:"args,omitempty"`

	// env of the setup container; values may come from Secrets.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=64
	Env []EnvVar `json:"env,omitempty"`

	// resources of the setup container.
	// +optional
	Resources *corev1.ResourceRequirements `json:"resources,omitempty"`

	// serviceAccountName runs the setup pod under this service account.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	ServiceAccountName string `json:"serviceAccountName,omitempty"`

	// runAsUser runs the setup container as this user id. The setup pod follows the restricted
	// Pod Security Standard, so it never runs as root: set this when the image's own user is
	// root or not numeric.
	// +optional
	// +kubebuilder:validation:Minimum=1
	RunAsUser *int64 `json:"runAsUser,omitempty"`

	// backoffLimit is how many times a failed setup pod is retried.
	// +optional
	// +kubebuilder:default=0
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=10
	BackoffLimit int32 `json:"backoffLimit,omitempty"`
}

// LoadStatus records the load as it ran.
type LoadStatus struct {
	// scenarios lists each scenario's run, plus "warm-up" when one ran.
	// +optional
	// +kubebuilder:validation:MaxItems=17
	Scenarios []ScenarioStatus `json:"scenarios,omitempty"`

	// thresholdsCrossed is true when k6 reported crossed thresholds (exit code 99) in any pod.
	// +optional
	ThresholdsCrossed bool `json:"thresholdsCrossed,omitempty"`

	// startTime is when perfexp began starting the scenarios; every scenario's startDelay counts
	// from it.
	// +optional
	StartTime *metav1.Time `json:"startTime,omitempty"`

	// summariesRef names the ConfigMap that keeps each runner pod's k6 end-of-test summary
	// (the JSON of k6 --summary-export) under the key <scenario>-<pod index>.json.
	// +optional
	SummariesRef *LocalObjectReference `json:"summariesRef,omitempty"`

	// inspected is what `k6 inspect --execution-requirements` found in the script of each
	// fromScript scenario that gives no scriptDuration, run in a short pod before the experiment
	// joins its queue: the planned load and its deadline use its totalDuration.
	// +optional
	// +listType=map
	// +listMapKey=scenario
	// +kubebuilder:validation:MaxItems=16
	Inspected []ScriptInspection `json:"inspected,omitempty"`
}

// ScriptInspection is what k6 found in a fromScript scenario's script before its run.
type ScriptInspection struct {
	// scenario is the perfexp scenario whose script was inspected.
	// +kubebuilder:validation:MaxLength=63
	Scenario string `json:"scenario"`
	// totalDuration is how long k6 plans the script to run, every k6 scenario's start time,
	// duration and graceful stop included.
	TotalDuration metav1.Duration `json:"totalDuration"`
	// maxVUs is the most virtual users the script needs at once, over all its pods.
	// +kubebuilder:validation:Minimum=0
	MaxVUs int64 `json:"maxVUs"`
	// k6Scenarios are the k6 scenarios the script declares, by name.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=32
	// +kubebuilder:validation:items:MaxLength=128
	K6Scenarios []string `json:"k6Scenarios,omitempty"`
}

// ScenarioRunState is the state of one scenario's run.
// +kubebuilder:validation:Enum=Waiting;Running;Succeeded;Failed;Stopped
type ScenarioRunState string

// The states of a scenario's run.
const (
	ScenarioWaiting   ScenarioRunState = "Waiting"
	ScenarioRunning   ScenarioRunState = "Running"
	ScenarioSucceeded ScenarioRunState = "Succeeded"
	ScenarioFailed    ScenarioRunState = "Failed"
	ScenarioStopped   ScenarioRunState = "Stopped"
)

// ScenarioStatus is the state of one scenario's run.
type ScenarioStatus struct {
	// name of the scenario.
	Name string `json:"name"`
	// state of the run.
	State ScenarioRunState `json:"state"`
	// runner is the Job or TestRun that runs the scenario.
	// +optional
	Runner string `json:"runner,omitempty"`
	// startTime is when the first k6 pod of the scenario started.
	// +optional
	StartTime *metav1.Time `json:"startTime,omitempty"`
	// completionTime is when the last k6 pod of the scenario ended.
	// +optional
	CompletionTime *metav1.Time `json:"completionTime,omitempty"`
	// k6Scenarios are the k6 scenarios of a fromScript scenario's script, as its runner pods'
	// summaries name them; the analysis reports each as a scenario of its own.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=32
	// +kubebuilder:validation:items:MaxLength=128
	K6Scenarios []string `json:"k6Scenarios,omitempty"`
	// exitCodes lists each runner pod's k6 exit code, by pod index; -1 while a pod has not ended.
	// +optional
	// +kubebuilder:validation:MaxItems=64
	ExitCodes []int32 `json:"exitCodes,omitempty"`
	// message explains a failure.
	// +optional
	// +kubebuilder:validation:MaxLength=4096
	Message string `json:"message,omitempty"`
}

// ReservedK6Env says whether a k6 environment variable is perfexp's: one that chooses where
// samples go, under which tags, or the config and summary files. The Scenario env rule refuses
// the same names at admission.
func ReservedK6Env(name string) bool {
	switch name {
	case "K6_OUT", "K6_CONFIG", "K6_TAGS", "K6_SUMMARY_EXPORT":
		return true
	case "K6_PROMETHEUS_RW_TREND_AS_NATIVE_HISTOGRAM", "K6_PROMETHEUS_RW_TREND_STATS", "K6_PROMETHEUS_RW_STALE_MARKERS":
		return false
	}
	return strings.HasPrefix(name, "K6_PROMETHEUS_RW_")
}
