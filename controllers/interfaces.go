package controllers

import (
	"context"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/step"
)

// The reconciler orchestrates; the work of each phase is done by these collaborators. Each
// method is called repeatedly until it reports Done or a Failure, so each must be idempotent.
// They may record progress in exp.Status (the reconciler writes the status after every call).
// Timeouts are the reconciler's: a collaborator reports what it waits for and never gives up
// on its own, except for failures no amount of waiting can fix.

// Environment applies an experiment's variant and puts the environment back (internal/variant).
type Environment interface {
	// Prepare snapshots every object the variant touches (in status and on the object), applies
	// the variant and waits for the rollouts. It validates the whole variant before the first
	// patch, so bad input never leaves a half-patched environment.
	Prepare(ctx context.Context, exp *perfexpv1alpha1.PerfExperiment) (step.Result, error)
	// Restore puts every touched object back from its snapshot, retrying until every field is
	// written, then waits for the rollouts within a bound (timeouts.rollout) and only for the
	// health each workload had before the experiment; past the bound it is done and says what
	// is still not healthy.
	Restore(ctx context.Context, exp *perfexpv1alpha1.PerfExperiment) (step.Result, error)
}

// LoadRunner runs k6 (internal/load).
type LoadRunner interface {
	// Setup runs the data-preparation Job; Done once it succeeded.
	Setup(ctx context.Context, exp *perfexpv1alpha1.PerfExperiment) (step.Result, error)
	// WarmUp runs the warm-up load and records the window's start and warm-up end.
	WarmUp(ctx context.Context, exp *perfexpv1alpha1.PerfExperiment) (step.Result, error)
	// Run runs the scenarios, each after its start delay, and records the window and each
	// scenario's state; Done once every scenario finished.
	Run(ctx context.Context, exp *perfexpv1alpha1.PerfExperiment) (step.Result, error)
	// Stop stops every load pod of the experiment; Done once none runs.
	Stop(ctx context.Context, exp *perfexpv1alpha1.PerfExperiment) (step.Result, error)
	// PlannedDuration is how long the scenarios are planned to take, start delays included.
	PlannedDuration(exp *perfexpv1alpha1.PerfExperiment) time.Duration
}

// ScriptInspector is a LoadRunner that asks k6 how long the scripts of fromScript scenarios
// without a scriptDuration run (k6 inspect), before the experiment joins its queue, so that
// their planned load is known rather than the longest the API allows.
type ScriptInspector interface {
	// Inspect records what k6 found in status.load.inspected; Done once every such script is
	// known.
	Inspect(ctx context.Context, exp *perfexpv1alpha1.PerfExperiment) (step.Result, error)
}

// Analyzer turns the recorded window into results (internal/analyzer).
type Analyzer interface {
	// Analyze reads the results, compares them with the baseline (nil when none is set),
	// judges the objectives, writes status.results, status.comparison and status.verdict, and
	// publishes the report. It waits (RequeueAfter) while Prometheus is unreachable.
	Analyze(ctx context.Context, exp, baseline *perfexpv1alpha1.PerfExperiment) (step.Result, error)
}

// InventoryRecorder reads what the touched and observed workloads run with: images, replicas,
// resources, env and nodes (internal/analyzer). The Running phase records it once, as the
// measured window begins, so a comparison can name what else differed beside the variant.
type InventoryRecorder interface {
	Inventory(ctx context.Context, exp *perfexpv1alpha1.PerfExperiment, now metav1.Time) (*perfexpv1alpha1.Inventory, error)
}

// DashboardJanitor deletes what the analysis delivered outside an experiment's namespace, where
// no owner reference collects it (internal/analyzer).
type DashboardJanitor interface {
	// Forget deletes the dashboards delivered for the experiment key, which is gone.
	Forget(ctx context.Context, c client.Client, key types.NamespacedName) error
}

// notImplemented stands in for a collaborator that is not built yet. It fails experiments with
// a clear reason rather than pretending: an experiment must never report success for work
// that was not done.
type notImplemented struct{ what string }

func (n notImplemented) fail() (step.Result, error) {
	return step.Fail(perfexpv1alpha1.ReasonNotImplemented, "%s not implemented", n.what), nil
}

// NotImplementedEnvironment measures baselines (no variant) and refuses variants.
type NotImplementedEnvironment struct{}

// Prepare succeeds when there is nothing to change and fails otherwise.
func (NotImplementedEnvironment) Prepare(_ context.Context, exp *perfexpv1alpha1.PerfExperiment) (step.Result, error) {
	if exp.Spec.Variant == nil && exp.Spec.FreshPods == nil {
		return step.Done(), nil
	}
	return notImplemented{"variant patching"}.fail()
}

// Restore has nothing to restore, since Prepare never patches.
func (NotImplementedEnvironment) Restore(context.Context, *perfexpv1alpha1.PerfExperiment) (step.Result, error) {
	return step.Done(), nil
}

// NotImplementedLoad fails every load step.
type NotImplementedLoad struct{}

// Setup fails.
func (NotImplementedLoad) Setup(context.Context, *perfexpv1alpha1.PerfExperiment) (step.Result, error) {
	return notImplemented{"setup job runner"}.fail()
}

// WarmUp fails.
func (NotImplementedLoad) WarmUp(context.Context, *perfexpv1alpha1.PerfExperiment) (step.Result, error) {
	return notImplemented{"load runner"}.fail()
}

// Run fails.
func (NotImplementedLoad) Run(context.Context, *perfexpv1alpha1.PerfExperiment) (step.Result, error) {
	return notImplemented{"load runner"}.fail()
}

// Stop has nothing to stop.
func (NotImplementedLoad) Stop(context.Context, *perfexpv1alpha1.PerfExperiment) (step.Result, error) {
	return step.Done(), nil
}

// PlannedDuration is zero: nothing runs.
func (NotImplementedLoad) PlannedDuration(*perfexpv1alpha1.PerfExperiment) time.Duration { return 0 }

// NotImplementedAnalyzer fails analysis.
type NotImplementedAnalyzer struct{}

// Analyze fails.
func (NotImplementedAnalyzer) Analyze(context.Context, *perfexpv1alpha1.PerfExperiment, *perfexpv1alpha1.PerfExperiment) (step.Result, error) {
	return notImplemented{"analysis"}.fail()
}
