package v1alpha1

// Condition types of a PerfExperiment. Each documents what True, False and Unknown mean.
const (
	// ConditionQueued is True while the experiment waits for its queue's lock, False once it
	// holds it or has ended.
	ConditionQueued = "Queued"

	// ConditionEnvironmentReady is True once the variant is applied and every rollout finished,
	// False while it is being applied or when it could not be (see the reason), and Unknown
	// before Preparing.
	ConditionEnvironmentReady = "EnvironmentReady"

	// ConditionLoadCompleted is True once every scenario's load finished, False while it runs or
	// when it failed (see the reason).
	ConditionLoadCompleted = "LoadCompleted"

	// ConditionThresholdsCrossed is True when k6 reported crossed thresholds (exit code 99).
	// The experiment goes on to analysis, which makes the verdict Fail and names each crossed
	// threshold in this condition's message.
	ConditionThresholdsCrossed = "ThresholdsCrossed"

	// ConditionEnvironmentRestored is True once every touched object is back as it was (or
	// nothing was touched), False while restoring or when restoring has not succeeded yet.
	ConditionEnvironmentRestored = "EnvironmentRestored"
	// ConditionTornDown says whether spec.teardown ran: False/TearingDown while it runs,
	// True/TornDown once it succeeded, False/TeardownFailed or False/TeardownTimedOut after it
	// failed (the queue is released all the same).
	ConditionTornDown = "TornDown"

	// ConditionDrifted is True when someone else changed a field the variant had patched during
	// the run (a GitOps self-heal, a person). The field is restored to the snapshot anyway.
	ConditionDrifted = "Drifted"

	// ConditionAnalyzed is True once results were read from Prometheus, False while analysis
	// waits (for example for an unreachable Prometheus) or when it gave up.
	ConditionAnalyzed = "Analyzed"

	// ConditionObjectivesMet is True when every objective was met, False when at least one was
	// missed, Unknown when one could not be judged.
	ConditionObjectivesMet = "ObjectivesMet"

	// ConditionSpecChangeRefused is True when the spec changed after the experiment (or sweep)
	// had ended and the change was not acted on: an ended run is not run again, and
	// spec.abort cannot undo a result. Reason ExperimentEnded; the message names the
	// generation and, for spec.abort, says the results stand. Absent otherwise. The change is
	// observed all the same (status.observedGeneration follows it).
	ConditionSpecChangeRefused = "SpecChangeRefused"

	// ConditionReady is True when the experiment succeeded, False when it failed or was
	// aborted, Unknown while it is in progress. It summarises the others.
	ConditionReady = "Ready"
)

// Condition reasons. Reasons are CamelCase and say why a condition has its status.
const (
	ReasonWaitingForQueue       = "WaitingForQueue"
	ReasonLockAcquired          = "LockAcquired"
	ReasonRollingOut            = "RollingOut"
	ReasonRolledOut             = "RolledOut"
	ReasonRolloutFailed         = "RolloutFailed"
	ReasonRolloutTimedOut       = "RolloutTimedOut"
	ReasonInvalidVariant        = "InvalidVariant"
	ReasonWorkloadNotFound      = "WorkloadNotFound"
	ReasonNamespaceNotAllowed   = "NamespaceNotAllowed"
	ReasonRestoring             = "Restoring"
	ReasonRestored              = "Restored"
	ReasonFieldChangedDuringRun = "FieldChangedDuringRun"
	ReasonSetupFailed           = "SetupFailed"
	ReasonSetupTimedOut         = "SetupTimedOut"
	ReasonTearingDown           = "TearingDown"
	ReasonTornDown              = "TornDown"
	ReasonTeardownFailed        = "TeardownFailed"
	ReasonTeardownTimedOut      = "TeardownTimedOut"
	ReasonLoadRunning           = "LoadRunning"
	ReasonLoadSucceeded         = "LoadSucceeded"
	ReasonLoadFailed            = "LoadFailed"
	ReasonLoadTimedOut          = "LoadTimedOut"
	ReasonScriptError           = "ScriptError"
	ReasonThresholdsCrossed     = "ThresholdsCrossed"
	ReasonExperimentEnded       = "ExperimentEnded"
	ReasonWaitingForPrometheus  = "WaitingForPrometheus"
	ReasonWaitingForBaseline    = "WaitingForBaseline"
	ReasonAnalysisTimedOut      = "AnalysisTimedOut"
	ReasonAnalyzed              = "Analyzed"
	ReasonResultsInvalid        = "ResultsInvalid"
	ReasonObjectivesMet         = "ObjectivesMet"
	ReasonObjectivesMissed      = "ObjectivesMissed"
	ReasonObjectivesUnknown     = "ObjectivesUnknown"
	ReasonNoObjectives          = "NoObjectives"
	ReasonNotImplemented        = "NotImplemented"
	ReasonAborted               = "Aborted"
	ReasonDeleted               = "Deleted"
	ReasonTimedOut              = "TimedOut"
	// ReasonInvalidTimeouts: spec.timeouts.overall is longer than the operator's
	// --max-overall-timeout, or the planned load does not fit in the overall timeout (the
	// spec's or the operator's default); refused before the experiment joins its queue.
	ReasonInvalidTimeouts = "InvalidTimeouts"
	// ReasonQueueNotAllowed: spec.queue names the queue of another namespace (a queue named
	// like a namespace), whose annotation perfexp.dev/queue-members does not list the
	// experiment's target namespace; refused before the experiment joins it.
	ReasonQueueNotAllowed = "QueueNotAllowed"
	ReasonSucceeded       = "Succeeded"
	ReasonInProgress      = "InProgress"

	// Reasons of a Ready=False found when the experiment leaves the queue, before anything is
	// patched or any load runs.

	// ReasonBaselineNotFound: spec.baseline names no experiment in the namespace.
	ReasonBaselineNotFound = "BaselineNotFound"
	// ReasonBaselineCycle: following spec.baseline from experiment to experiment comes back to
	// one already seen, so each would wait for the other's results for ever.
	ReasonBaselineCycle = "BaselineCycle"
	// ReasonQueryInvalid: a custom query's template does not render, or Prometheus refuses its
	// PromQL (the message names the query and quotes Prometheus).
	ReasonQueryInvalid = "QueryInvalid"

	// Reasons of the environment's safety checks (internal/variant, docs/variants.md).

	// ReasonTargetForbidden: perfexp may not read an object the variant names (a generic
	// patch of a Secret, say); the experiment fails before anything is patched.
	ReasonTargetForbidden = "TargetForbidden"
	// ReasonReplicasManagedByHPA: the variant sets replicas on a workload that a
	// HorizontalPodAutoscaler scales, which would set them back during the run.
	ReasonReplicasManagedByHPA = "ReplicasManagedByHPA"
	// ReasonVariantDrifted: a field the variant set holds another value once the rollout
	// finished (a GitOps self-heal, an autoscaler); the load would measure something else.
	ReasonVariantDrifted = "VariantDrifted"
	// ReasonRestoredNotHealthy: EnvironmentRestored is True because every field is back as it
	// was, but a workload that was healthy before the experiment has not finished its rollout
	// within the restore bound; the message names it. The queue is released anyway.
	ReasonRestoredNotHealthy = "RestoredNotHealthy"
)

// Labels and annotations perfexp puts on objects.
const (
	// LabelExperiment names the experiment that created an object (k6 Jobs, ConfigMaps).
	LabelExperiment = "perfexp.dev/experiment"
	// LabelTestID carries the experiment's test ID.
	LabelTestID = "perfexp.dev/testid"
	// LabelScenario names the scenario of a k6 Job.
	LabelScenario = "perfexp.dev/scenario"
	// AnnotationSnapshot holds, on a patched object, the prior value of every field the variant
	// touched, so the object can be restored even if the experiment's status is lost.
	AnnotationSnapshot = "perfexp.dev/snapshot"
	// AnnotationExperiment names, on a patched object, the experiment that patched it.
	AnnotationExperiment = "perfexp.dev/patched-by"
	// Finalizer keeps an experiment until its environment is restored and its queue lock freed.
	Finalizer = "perfexp.dev/restore"
)

// Reasons of the operator's access rules (internal/access, docs/security.md). Each fails the
// experiment before anything is patched.
const (
	// ReasonPatchKindNotAllowed: a generic patch targets a kind outside the operator's
	// --generic-patch-kinds.
	ReasonPatchKindNotAllowed = "PatchKindNotAllowed"
	// ReasonPodNotAllowed: a setup or load pod names a service account or image outside the
	// operator's --allowed-runner-service-accounts or --allowed-runner-images.
	ReasonPodNotAllowed = "PodNotAllowed"
	// ReasonPrometheusURLNotAllowed: spec.analysis.prometheusURL is outside the operator's
	// --allowed-prometheus-urls.
	ReasonPrometheusURLNotAllowed = "PrometheusURLNotAllowed"
)

// LabelAllowExperiments is the label by which a namespace opts in to being patched and read by
// experiments (value "true"). Namespaces in the operator's --allowed-namespaces need no label.
const LabelAllowExperiments = "perfexp.dev/allow-experiments"

// AnnotationQueueMembers on a namespace lists, comma-separated, the other namespaces whose
// experiments may join the queue named like it ("*" for any). A queue named like a namespace is
// that namespace's by default: only experiments targeting it may join it.
const AnnotationQueueMembers = "perfexp.dev/queue-members"

// Reasons of the reconciler's own safeguards (docs/operations.md).
const (
	// ReasonAnalysisAttemptTimedOut: one call into the analysis got no answer within the
	// operator's --analysis-attempt-timeout; analysis tries again until timeouts.analysis.
	ReasonAnalysisAttemptTimedOut = "AnalysisAttemptTimedOut"
	// ReasonStatusRefused: the API server kept refusing the experiment's status while its
	// environment could be patched, so the operator restored the environment, freed the queue
	// and ended the experiment.
	ReasonStatusRefused = "StatusRefused"
)
