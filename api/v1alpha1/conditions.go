package v1alpha1

// Conditions of PerfExperiment and PerfSweep, one block per condition type: the type, what its
// True, False and Unknown mean, then every reason it may carry with when that reason is set.
// A reason another type shares is declared once, in the first block that uses it, and named
// again in the others. Reasons are CamelCase and say why a condition has its status; their
// string values are API and never change. docs/conditions.md tables the same content; the
// kstatus conditions Reconciling and Stalled are in kstatus.go.

// Queued (PerfExperiment). Besides the reasons below, Queued=False carries the reason of a
// check that failed as the experiment left the queue (BaselineNotFound, BaselineCycle,
// QueryInvalid), the same as Ready's.
const (
	// ConditionQueued is True while the experiment waits for its queue's lock, False once it
	// holds it or has ended.
	ConditionQueued = "Queued"

	// ReasonWaitingForQueue (Queued=True): the experiment joined its queue and waits for the
	// lock; the message names the queue and what holds it.
	ReasonWaitingForQueue = "WaitingForQueue"
	// ReasonWaitingForBaseline (Queued=True, Analyzed=False): the experiment waits for its
	// spec.baseline, either to appear before taking the queue's lock or to finish before the
	// two are compared.
	ReasonWaitingForBaseline = "WaitingForBaseline"
	// ReasonLockAcquired (Queued=False): the experiment holds its queue's lock and goes on.
	ReasonLockAcquired = "LockAcquired"
)

// EnvironmentReady (PerfExperiment). Besides the reasons below, EnvironmentReady=False carries
// the reason of an environment that could not be prepared (the access rules' reasons, the
// variant's, RolloutFailed, VariantDrifted), the same as Ready's.
const (
	// ConditionEnvironmentReady is True once the variant is applied and every rollout finished,
	// False while it is being applied or when it could not be (see the reason), and Unknown
	// before Preparing.
	ConditionEnvironmentReady = "EnvironmentReady"

	// ReasonRollingOut (EnvironmentReady=False): the variant is applied and the changed
	// workloads are rolling out; the message names what is awaited.
	ReasonRollingOut = "RollingOut"
	// ReasonRolledOut (EnvironmentReady=True): the variant is applied and every rollout
	// finished.
	ReasonRolledOut = "RolledOut"
	// ReasonSettling (EnvironmentReady=False): every rollout finished and the environment is
	// left alone for spec.settle before the run begins.
	ReasonSettling = "Settling"
)

// LoadCompleted (PerfExperiment). Besides the reasons below, LoadCompleted=False carries the
// reason of a load that failed (ScriptError, LoadFailed, PodNotAllowed), the same as Ready's.
const (
	// ConditionLoadCompleted is True once every scenario's load finished, False while it runs or
	// when it failed (see the reason).
	ConditionLoadCompleted = "LoadCompleted"

	// ReasonLoadRunning (LoadCompleted=False): the load runs; the message names what is
	// awaited.
	ReasonLoadRunning = "LoadRunning"
	// ReasonLoadSucceeded (LoadCompleted=True): every scenario finished.
	ReasonLoadSucceeded = "LoadSucceeded"
)

// ThresholdsCrossed (PerfExperiment).
const (
	// ConditionThresholdsCrossed is True when k6 reported crossed thresholds (exit code 99).
	// The experiment goes on to analysis, which makes the verdict Fail and names each crossed
	// threshold in this condition's message.
	ConditionThresholdsCrossed = "ThresholdsCrossed"

	// ReasonThresholdsCrossed (ThresholdsCrossed=True): k6 exited with code 99, or the results
	// show crossed thresholds; the analysis names them in the message.
	ReasonThresholdsCrossed = "ThresholdsCrossed"
)

// EnvironmentRestored (PerfExperiment).
const (
	// ConditionEnvironmentRestored is True once every touched object is back as it was (or
	// nothing was touched), False while restoring or when restoring has not succeeded yet.
	ConditionEnvironmentRestored = "EnvironmentRestored"

	// ReasonRestoring (EnvironmentRestored=False): the load is being stopped or the touched
	// objects put back; a failed attempt is retried and its error is in the message.
	ReasonRestoring = "Restoring"
	// ReasonRestored (EnvironmentRestored=True): every touched object is back as it was.
	ReasonRestored = "Restored"
	// ReasonRestoredNotHealthy (EnvironmentRestored=True): every field is back as it was, but a
	// workload that was healthy before the experiment has not finished its rollout within the
	// restore bound; the message names it. The queue is released anyway.
	ReasonRestoredNotHealthy = "RestoredNotHealthy"
)

// TornDown (PerfExperiment).
const (
	// ConditionTornDown says whether spec.teardown ran: False/TearingDown while it runs,
	// True/TornDown once it succeeded, False/TeardownFailed or False/TeardownTimedOut after it
	// failed (the queue is released all the same).
	ConditionTornDown = "TornDown"

	// ReasonTearingDown (TornDown=False): the teardown Job runs.
	ReasonTearingDown = "TearingDown"
	// ReasonTornDown (TornDown=True): the teardown Job succeeded.
	ReasonTornDown = "TornDown"
	// ReasonTeardownFailed (TornDown=False): the teardown Job failed; the message quotes why.
	ReasonTeardownFailed = "TeardownFailed"
	// ReasonTeardownTimedOut (TornDown=False): the teardown Job did not finish within
	// spec.timeouts.teardown.
	ReasonTeardownTimedOut = "TeardownTimedOut"
)

// Drifted (PerfExperiment).
const (
	// ConditionDrifted is True when someone else changed a field the variant had patched during
	// the run (a GitOps self-heal, a person). The field is restored to the snapshot anyway.
	ConditionDrifted = "Drifted"

	// ReasonFieldChangedDuringRun (Drifted=True): at restore, a patched field held neither the
	// variant's value nor the snapshot's; the message names each such field.
	ReasonFieldChangedDuringRun = "FieldChangedDuringRun"
)

// Confounded (PerfExperiment).
const (
	// ConditionConfounded is True when the run and its baseline ran in environments that differ
	// beyond the declared variant (an image, replicas, resources, env, nodes, a workload observed
	// in one run only): a change the comparison finds may come from that difference as well.
	// False when the two environments were compared and matched; Unknown when one of them
	// recorded no inventory. Absent for a run without a baseline.
	ConditionConfounded = "Confounded"

	// ReasonEnvironmentDiffers (Confounded=True): status.comparison's confounds are not empty;
	// the message counts them and names the first (up to five), as the report's Environment
	// section and its findings do.
	ReasonEnvironmentDiffers = "EnvironmentDiffers"
	// ReasonEnvironmentMatches (Confounded=False): beside the declared variant, both runs had
	// the same images, replicas, resources, env and nodes.
	ReasonEnvironmentMatches = "EnvironmentMatches"
	// ReasonEnvironmentNotCompared (Confounded=Unknown): this run or its baseline recorded no
	// environment inventory (a run of an older perfexp, or a baseline whose report is gone);
	// the message says which.
	ReasonEnvironmentNotCompared = "EnvironmentNotCompared"
)

// UnrestoredOrphans (PerfExperiment).
const (
	// ConditionUnrestoredOrphans is True when, as the experiment took its queue's lock, its
	// target namespace held an object patched for an experiment that no longer exists (its
	// finalizer was removed by force) which perfexp could not put back: the run may measure
	// an environment that is not its baseline. Absent otherwise. The object also has a Warning
	// Event OrphanNotRestored, perfexp_orphans_unrestorable_total counts it and the alert
	// PerfexpOrphanNotRestored fires.
	ConditionUnrestoredOrphans = "UnrestoredOrphans"

	// ReasonOrphanNotRestored (UnrestoredOrphans=True): the operator's last look for orphans
	// found objects in the target namespace it could not restore; the message names each
	// (up to five), the experiment that patched it and why it could not be put back.
	ReasonOrphanNotRestored = "OrphanNotRestored"
)

// Analyzed (PerfExperiment). Besides the reasons below, Analyzed=False carries the reason of
// an analysis that gave up (NoWindow, NoPrometheus, AnalysisFailed,
// PrometheusURLNotAllowed), the same as Ready's.
const (
	// ConditionAnalyzed is True once results were read from Prometheus, False while analysis
	// waits (for example for an unreachable Prometheus) or when it gave up.
	ConditionAnalyzed = "Analyzed"

	// ReasonWaitingForPrometheus (Analyzed=False): Prometheus did not answer yet or has not
	// scraped the whole window; analysis tries again until timeouts.analysis.
	ReasonWaitingForPrometheus = "WaitingForPrometheus"
	// ReasonAnalysisAttemptTimedOut (Analyzed=False): one call into the analysis got no answer
	// within the operator's --analysis-attempt-timeout; analysis tries again until
	// timeouts.analysis.
	ReasonAnalysisAttemptTimedOut = "AnalysisAttemptTimedOut"
	// ReasonAnalyzed (Analyzed=True): the results were read from Prometheus.
	ReasonAnalyzed = "Analyzed"
)

// ObjectivesMet (PerfExperiment).
const (
	// ConditionObjectivesMet is True when every objective was met, False when at least one was
	// missed, Unknown when one could not be judged.
	ConditionObjectivesMet = "ObjectivesMet"

	// ReasonObjectivesMet (ObjectivesMet=True): every declared objective was met.
	ReasonObjectivesMet = "ObjectivesMet"
	// ReasonNoObjectives (ObjectivesMet=True): the experiment declares no objectives.
	ReasonNoObjectives = "NoObjectives"
	// ReasonObjectivesMissed (ObjectivesMet=False): at least one objective was missed; the
	// message names each.
	ReasonObjectivesMissed = "ObjectivesMissed"
	// ReasonObjectivesUnknown (ObjectivesMet=Unknown): at least one objective could not be
	// judged (no data, no baseline); the message names each.
	ReasonObjectivesUnknown = "ObjectivesUnknown"
	// ReasonResultsInvalid (ObjectivesMet=Unknown): the results are invalid (the verdict is
	// Invalid), so no objective is judged; the message says why.
	ReasonResultsInvalid = "ResultsInvalid"
)

// Confirmed (PerfExperiment with spec.analysis.confirm). Besides the reasons below,
// Confirmed=False carries Aborted when spec.abort stopped the confirmation.
const (
	// ConditionConfirmed says whether the experiment's comparison with its baseline is
	// decisive: True when the single run already was, or the repeated runs of
	// spec.analysis.confirm made it so; False when the confirmation ended undecided or could
	// not run; Unknown while it runs.
	ConditionConfirmed = "Confirmed"

	// ReasonConfirming (Confirmed=Unknown, phase Confirming): the baseline and the variant run
	// again in blocks; the message names the sweep and how many runs ended.
	ReasonConfirming = "Confirming"
	// ReasonSingleRunDecisive (Confirmed=True): the single run's comparison headline was
	// already Regressed, Improved or NoMeaningfulChange; nothing was run again.
	ReasonSingleRunDecisive = "SingleRunDecisive"
	// ReasonDecisive (Confirmed=True): the repeated runs' headline is Regressed, Improved or
	// NoMeaningfulChange; status.confirmation says after how many runs and how much
	// environment time.
	ReasonDecisive = "Decisive"
	// ReasonBudgetSpent (Confirmed=False): confirm.maxRepeats or confirm.maxDuration was spent
	// and the repeated runs' headline is still Inconclusive or Unknown.
	ReasonBudgetSpent = "BudgetSpent"
	// ReasonConfirmationFailed (Confirmed=False): the confirmation could not run or judge (the
	// run's own results are Invalid, the baseline is gone, the experiment has no variant to run
	// again, the sweep was refused, failed or aborted on its own); the message says which. The
	// single run's comparison stands.
	ReasonConfirmationFailed = "ConfirmationFailed"
)

// SpecChangeRefused (PerfExperiment, PerfSweep).
const (
	// ConditionSpecChangeRefused is True when the spec changed after the experiment (or sweep)
	// had ended and the change was not acted on: an ended run is not run again, and
	// spec.abort cannot undo a result. Reason ExperimentEnded; the message names the
	// generation and, for spec.abort, says the results stand. Absent otherwise. The change is
	// observed all the same (status.observedGeneration follows it).
	ConditionSpecChangeRefused = "SpecChangeRefused"

	// ReasonExperimentEnded (SpecChangeRefused=True): the spec changed after the experiment or
	// sweep had ended.
	ReasonExperimentEnded = "ExperimentEnded"
)

// ExperimentsCreated (PerfSweep).
const (
	// ConditionExperimentsCreated is True once every run of the sweep exists as a
	// PerfExperiment, False while they are being created or when one could not be (see the
	// reason and message).
	ConditionExperimentsCreated = "ExperimentsCreated"

	// ReasonCreated (ExperimentsCreated=True): every run of the sweep exists.
	ReasonCreated = "Created"
	// ReasonCreateFailed (ExperimentsCreated=False, sweep Ready=False): the API server refused
	// a run (the message quotes it).
	ReasonCreateFailed = "CreateFailed"
	// ReasonInvalidSweep (ExperimentsCreated=False, sweep Ready=False): the sweep cannot run as
	// declared (two arms equal, an arm that changes nothing, too many runs); the message says
	// what to fix.
	ReasonInvalidSweep = "InvalidSweep"
)

// Reported (PerfSweep; on a PerfExperiment only when a report could not be written).
const (
	// ConditionReported is True once the sweep report was written, False while runs are in
	// progress or when it could not be written. On a PerfExperiment it appears only when a
	// report or dashboard could not be written: False/ConfigMapNotOwned (the results are in
	// status all the same).
	ConditionReported = "Reported"

	// ReasonReported (Reported=True): the sweep report was written; the message names its
	// ConfigMap.
	ReasonReported = "Reported"
	// ReasonRunsInProgress (Reported=False, sweep Ready=Unknown): some runs of the sweep have
	// not ended yet.
	ReasonRunsInProgress = "RunsInProgress"
	// ReasonProbing (Reported=False, sweep Ready=Unknown): a capacity search is running a
	// probe; the message names its load and run.
	ReasonProbing = "Probing"
	// ReasonBisecting (Reported=False, sweep Ready=Unknown): a bisect is running a step; the
	// message names the services whose new images the step applies.
	ReasonBisecting = "Bisecting"
	// ReasonReportFailed (Reported=False, sweep Ready=False): the sweep report could not be
	// written; the message quotes the error.
	ReasonReportFailed = "ReportFailed"
	// ReasonConfigMapNotOwned (Reported=False; sweep Ready=False): the report or dashboard
	// ConfigMap's name is taken by a ConfigMap that is not perfexp's; perfexp left it alone and
	// the message names it.
	ReasonConfigMapNotOwned = "ConfigMapNotOwned"
)

// Ready (PerfExperiment, PerfSweep): the summary. Its False reasons say why the experiment
// failed; the first failure recorded stays.
const (
	// ConditionReady is True when the experiment succeeded, False when it failed or was
	// aborted, Unknown while it is in progress. It summarises the others. On a PerfSweep: True
	// when the sweep succeeded, False when it failed, was refused or aborted, Unknown while it
	// runs.
	ConditionReady = "Ready"

	// ReasonInProgress (Ready=Unknown): the experiment joined its queue and has not ended.
	ReasonInProgress = "InProgress"
	// ReasonSucceeded (Ready=True): the experiment ran and was analysed (the message gives the
	// verdict), or the sweep's report was written.
	ReasonSucceeded = "Succeeded"

	// Refused before the experiment joins its queue (Ready=False, phase Failed).

	// ReasonInvalidTimeouts (Ready=False): spec.timeouts.overall is longer than the operator's
	// --max-overall-timeout, or the planned load does not fit in the overall timeout (the
	// spec's or the operator's default).
	ReasonInvalidTimeouts = "InvalidTimeouts"
	// ReasonQueueNotAllowed (Ready=False): spec.queue names the queue of another namespace (a
	// queue named like a namespace), whose annotation perfexp.dev/queue-members does not list
	// the experiment's target namespace.
	ReasonQueueNotAllowed = "QueueNotAllowed"

	// Refused by the operator's access rules (internal/access, docs/security.md) before
	// anything is patched (Ready=False).

	// ReasonNamespaceNotAllowed (Ready=False): the target namespace is a system namespace, the
	// operator's own, missing, outside --watch-namespaces (a namespaced install), or neither in
	// --allowed-namespaces nor labelled perfexp.dev/allow-experiments=true.
	ReasonNamespaceNotAllowed = "NamespaceNotAllowed"
	// ReasonPatchKindNotAllowed (Ready=False): a generic patch targets a kind outside the
	// operator's --generic-patch-kinds.
	ReasonPatchKindNotAllowed = "PatchKindNotAllowed"
	// ReasonPodNotAllowed (Ready=False): a setup or load pod names a service account or image
	// outside the operator's --allowed-runner-service-accounts or --allowed-runner-images.
	ReasonPodNotAllowed = "PodNotAllowed"
	// ReasonPrometheusURLNotAllowed (Ready=False): spec.analysis.prometheusURL is outside the
	// operator's --allowed-prometheus-urls.
	ReasonPrometheusURLNotAllowed = "PrometheusURLNotAllowed"

	// Found when the experiment leaves the queue, before anything is patched or any load runs
	// (Ready=False).

	// ReasonBaselineNotFound (Ready=False): spec.baseline names no experiment in the namespace.
	ReasonBaselineNotFound = "BaselineNotFound"
	// ReasonBaselineCycle (Ready=False): following spec.baseline from experiment to experiment
	// comes back to one already seen, so each would wait for the other's results for ever.
	ReasonBaselineCycle = "BaselineCycle"
	// ReasonQueryInvalid (Ready=False): a custom query's template does not render, or
	// Prometheus refuses its PromQL (the message names the query and quotes Prometheus).
	ReasonQueryInvalid = "QueryInvalid"
	// ReasonPrometheusAuthInvalid (Ready=False): spec.analysis.prometheusAuth names a Secret or
	// key that does not exist in the experiment's namespace, or a value that cannot be used (a
	// CA or client certificate that does not parse); the message names the reference, never
	// the value.
	ReasonPrometheusAuthInvalid = "PrometheusAuthInvalid"

	// The environment's plan and safety checks (internal/variant, docs/variants.md) and its
	// rollout (Ready=False).

	// ReasonInvalidVariant (Ready=False): the variant cannot be applied as written (two entries
	// change one field, a patch that does not parse or that the API server refuses, too many
	// objects, a paused or OnDelete workload); the message says which.
	ReasonInvalidVariant = "InvalidVariant"
	// ReasonWorkloadNotFound (Ready=False): a workload the variant names, or its selector,
	// matches nothing in the target namespace.
	ReasonWorkloadNotFound = "WorkloadNotFound"
	// ReasonContainerNotFound (Ready=False): a workload change names a container the workload
	// does not have.
	ReasonContainerNotFound = "ContainerNotFound"
	// ReasonObjectNotFound (Ready=False): a Kafka resource or a patch target does not exist (or
	// was deleted while being prepared).
	ReasonObjectNotFound = "ObjectNotFound"
	// ReasonPatchedByAnotherExperiment (Ready=False): an object the variant would change still
	// carries the snapshot of another experiment that no longer exists, so its baseline is not
	// known.
	ReasonPatchedByAnotherExperiment = "PatchedByAnotherExperiment"
	// ReasonTargetForbidden (Ready=False): perfexp may not read an object the variant names (a
	// generic patch of a Secret, say); the experiment fails before anything is patched.
	ReasonTargetForbidden = "TargetForbidden"
	// ReasonPatchForbidden (Ready=False): the API server refused perfexp's patch for lack of
	// permission; the kinds a generic patch targets need rights granted to perfexp's service
	// account.
	ReasonPatchForbidden = "PatchForbidden"
	// ReasonReplicasManagedByHPA (Ready=False): the variant sets replicas on a workload that a
	// HorizontalPodAutoscaler scales, which would set them back during the run.
	ReasonReplicasManagedByHPA = "ReplicasManagedByHPA"
	// ReasonRolloutFailed (Ready=False): a changed workload's rollout failed; the message says
	// which and how.
	ReasonRolloutFailed = "RolloutFailed"
	// ReasonRolloutTimedOut (Ready=False): the rollout did not finish within
	// spec.timeouts.rollout.
	ReasonRolloutTimedOut = "RolloutTimedOut"
	// ReasonVariantDrifted (Ready=False): a field the variant set holds another value once the
	// rollout finished (a GitOps self-heal, an autoscaler); the load would measure something
	// else.
	ReasonVariantDrifted = "VariantDrifted"

	// Setup and load (internal/load, docs/load.md) (Ready=False).

	// ReasonSetupFailed (Ready=False): the setup Job failed; the message quotes why.
	ReasonSetupFailed = "SetupFailed"
	// ReasonSetupTimedOut (Ready=False): the setup Job did not finish within
	// spec.timeouts.setup.
	ReasonSetupTimedOut = "SetupTimedOut"
	// ReasonScriptError (Ready=False): the k6 script or its configuration failed (missing
	// ConfigMap or key, an exception, test.abort(), refused options, a setup() or teardown()
	// timeout).
	ReasonScriptError = "ScriptError"
	// ReasonLoadFailed (Ready=False): the load could not run or k6 failed otherwise (a refused
	// Job or TestRun, a name taken, k6 killed or out of memory).
	ReasonLoadFailed = "LoadFailed"
	// ReasonLoadTimedOut (Ready=False): warm-up or load did not finish within its planned
	// duration plus spec.timeouts.loadGrace.
	ReasonLoadTimedOut = "LoadTimedOut"

	// Analysis gave up (Ready=False, and Analyzed=False with the same reason).

	// ReasonNoWindow (Ready=False): the load recorded no window (start and end), so there is
	// nothing to analyse.
	ReasonNoWindow = "NoWindow"
	// ReasonNoPrometheus (Ready=False): neither spec.analysis.prometheusURL nor the operator
	// names a Prometheus, or the URL does not parse.
	ReasonNoPrometheus = "NoPrometheus"
	// ReasonPrometheusUnauthorized (Ready=False): the metrics backend answered 401 or 403: the
	// credentials of spec.analysis.prometheusAuth (or the operator's) are missing or wrong.
	ReasonPrometheusUnauthorized = "PrometheusUnauthorized"
	// ReasonBackendLimit (Ready=False): the metrics backend refused one of perfexp's queries for
	// one of its own limits (points per series, samples loaded, series per query); the message
	// quotes the backend and says which limit to raise.
	ReasonBackendLimit = "BackendLimit"
	// ReasonAnalysisFailed (Ready=False): Prometheus refused one of perfexp's own queries (for
	// example a Prometheus without native-histogram support) or answered with more than
	// perfexp reads; retrying cannot help.
	ReasonAnalysisFailed = "AnalysisFailed"
	// ReasonAnalysisTimedOut (Ready=False): the results could not be read within
	// spec.timeouts.analysis.
	ReasonAnalysisTimedOut = "AnalysisTimedOut"

	// Ended from outside or by the operator's safeguards (Ready=False).

	// ReasonAborted (Ready=False, phase Aborted): spec.abort was set; on a PerfSweep, the sweep
	// was aborted or deleted (Ready=Unknown while its runs are being deleted).
	ReasonAborted = "Aborted"
	// ReasonDeadlineExceeded (Ready=False, phase Aborted; Ready=Unknown while its runs stop):
	// a PerfSweep's spec.deadline passed before it ended.
	ReasonDeadlineExceeded = "DeadlineExceeded"
	// ReasonDeleted (Ready=False, phase Aborted): the experiment was deleted before it ended.
	ReasonDeleted = "Deleted"
	// ReasonTimedOut (Ready=False): spec.timeouts.overall passed while the experiment held its
	// environment.
	ReasonTimedOut = "TimedOut"
	// ReasonStatusRefused (Ready=False): the API server kept refusing the experiment's status
	// while its environment could be patched, so the operator restored the environment, freed
	// the queue and ended the experiment.
	ReasonStatusRefused = "StatusRefused"
	// ReasonNotImplemented (Ready=False): the operator was started without a collaborator the
	// experiment needs (a variant without an environment manager, say).
	ReasonNotImplemented = "NotImplemented"
	// ReasonRunsFailed (sweep Ready=False, phase Failed, verdict Invalid): every run of the
	// sweep failed, so there was nothing to compare; the report still lists the runs.
	ReasonRunsFailed = "RunsFailed"
)
