// Package load runs an experiment's k6 load: the data-preparation Job, the warm-up and the
// scenarios, either as Indexed Jobs of k6 pods (the default) or as k6-operator TestRuns. It
// records what really happened (the window, each scenario's state and exit codes, k6's own
// end-of-test summaries) in the experiment's status for the analysis that follows.
package load

import (
	"context"
	"time"

	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/access"
	metricsbackend "github.com/perfexp/perfexp/internal/backend"
	"github.com/perfexp/perfexp/internal/step"
)

// DefaultK6Image is the k6 image runner pods use when neither the operator nor the experiment
// names one. It is pinned: a moving tag would change the load generator between two runs that
// are meant to be compared.
const DefaultK6Image = "grafana/k6:1.8.1"

// DefaultRunAsUser is the user k6 runs as: the official grafana/k6 image's k6 user. Any
// non-root user works for an image holding only the static k6 binary.
const DefaultRunAsUser int64 = 12345

// DefaultTrendStats are the trend statistics k6 writes as gauges when native histograms are
// switched off (K6_PROMETHEUS_RW_TREND_AS_NATIVE_HISTOGRAM=false in a scenario's env, for a
// Prometheus without native histogram support). They cover every statistic perfexp reports;
// count and sum give exact averages.
var DefaultTrendStats = []string{"p(50)", "p(75)", "p(90)", "p(95)", "p(99)", "avg", "min", "max", "count", "sum"}

// Options configure a Runner.
type Options struct {
	// K6Image is the default image for k6 pods; DefaultK6Image when empty.
	K6Image string
	// RemoteWriteURL is the Prometheus remote-write URL k6 pushes samples to. An experiment's
	// spec.analysis.prometheusURL overrides it (with /api/v1/write appended), so k6 writes to
	// the Prometheus the analysis reads.
	RemoteWriteURL string
	// Tenants maps experiment namespaces to the tenant header of their remote write.
	Tenants metricsbackend.Tenants
	// Clock tells the time; the real clock when nil.
	Clock clock.PassiveClock
	// Logs reads the tail of a pod's log, for k6's summary and for the messages of failures.
	// When nil, summaries are not kept and failure messages carry the kubelet's termination
	// message (the last lines of the log) instead.
	Logs PodLogs
	// PendingTimeout is how long a load or setup pod may stay unstarted (unschedulable, image
	// still pulling) before the step fails; 5m when zero.
	PendingTimeout time.Duration
	// PollInterval is how often a running step looks at its pods when nothing else is due;
	// 5s when zero. Watching the Jobs makes the reconciler react sooner.
	PollInterval time.Duration
	// RunAsUser is the user id of k6 pods; DefaultRunAsUser when zero.
	RunAsUser int64
	// APIReader reads the users' script ConfigMaps. The manager's cached client may only watch
	// perfexp's own objects; an uncached reader (mgr.GetAPIReader()) reads any. The client is
	// used when nil.
	APIReader client.Reader
	// SummaryTimeout is how long after a pod ended its summary is still looked for when its
	// log cannot be read; 1m when zero. A summary is a cross-check, never a reason to hold the
	// environment.
	SummaryTimeout time.Duration
	// LogTimeout bounds one read of a pod's log; 20s when zero. It also bounds all the reads
	// of one call together: a call never spends longer than this reading logs.
	LogTimeout time.Duration
	// LogsPerCall is how many pod logs one call reads at most (16 when zero), LogsInFlight how
	// many of them at once (4 when zero). The summaries of more ended pods are read by the
	// next calls, which come soon: a reconcile worker is never held by an experiment with a
	// thousand pods, and the summaries ConfigMap records what was read (nothing twice).
	LogsPerCall, LogsInFlight int
	// Pods are the rules every runner pod must pass when it is created: its service account
	// (Pods.Account() when the experiment names none) and its images. Pods.DefaultImage is
	// K6Image when empty.
	Pods access.RunnerPods
}

// Runner runs k6 load for PerfExperiments. It implements controllers.LoadRunner.
type Runner struct {
	c    client.Client
	opts Options
}

// +kubebuilder:rbac:groups=batch,resources=jobs,verbs=get;list;watch;create;delete;patch
// +kubebuilder:rbac:groups="",resources=pods,verbs=get;list;watch;delete
// +kubebuilder:rbac:groups="",resources=pods/log,verbs=get
// +kubebuilder:rbac:groups="",resources=configmaps,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups="",resources=serviceaccounts,verbs=get;create
// +kubebuilder:rbac:groups=k6.io,resources=testruns,verbs=get;list;watch;create;delete

// New returns a Runner that creates k6 Jobs, ConfigMaps and TestRuns with c.
func New(c client.Client, opts Options) *Runner {
	if opts.K6Image == "" {
		opts.K6Image = DefaultK6Image
	}
	if opts.Pods.DefaultImage == "" {
		opts.Pods.DefaultImage = opts.K6Image
	}
	if opts.Clock == nil {
		opts.Clock = clock.RealClock{}
	}
	if opts.PendingTimeout <= 0 {
		opts.PendingTimeout = 5 * time.Minute
	}
	if opts.PollInterval <= 0 {
		opts.PollInterval = 5 * time.Second
	}
	if opts.RunAsUser == 0 {
		opts.RunAsUser = DefaultRunAsUser
	}
	if opts.SummaryTimeout <= 0 {
		opts.SummaryTimeout = time.Minute
	}
	if opts.LogTimeout <= 0 {
		opts.LogTimeout = 20 * time.Second
	}
	if opts.LogsPerCall <= 0 {
		opts.LogsPerCall = 16
	}
	if opts.LogsInFlight <= 0 {
		opts.LogsInFlight = 4
	}
	return &Runner{c: c, opts: opts}
}

// unknownScriptDuration stands for the duration of a fromScript scenario without a
// scriptDuration that k6 inspect has not measured (see Inspect): the longest the API allows,
// so that only timeouts.overall bounds the load.
const unknownScriptDuration = 168 * time.Hour

// PlannedDuration is the longest start delay plus load shape over the scenarios. The warm-up
// and k6's graceful stop are not included: the reconciler adds its load grace on top.
func (r *Runner) PlannedDuration(exp *perfexpv1alpha1.PerfExperiment) time.Duration {
	var longest time.Duration
	for i := range exp.Spec.Load.Scenarios {
		sc := &exp.Spec.Load.Scenarios[i]
		d := ShapeDuration(sc)
		if sc.FromScript && sc.ScriptDuration == nil {
			d = unknownScriptDuration
			if in := inspected(exp, sc.Name); in != nil {
				d = in.TotalDuration.Duration
			}
		}
		if sc.StartDelay != nil {
			d += sc.StartDelay.Duration
		}
		longest = max(longest, d)
	}
	return longest
}

// ShapeDuration is how long a scenario's load shape lasts: its duration, the sum of its stages,
// or its arrival-rate duration; a fromScript scenario's scriptDuration, zero when unknown.
func ShapeDuration(sc *perfexpv1alpha1.Scenario) time.Duration {
	switch {
	case sc.FromScript:
		if sc.ScriptDuration != nil {
			return sc.ScriptDuration.Duration
		}
		return 0
	case sc.Duration != nil:
		return sc.Duration.Duration
	case sc.ArrivalRate != nil:
		return sc.ArrivalRate.Duration.Duration
	}
	var d time.Duration
	for _, st := range sc.Stages {
		d += st.Duration.Duration
	}
	return d
}

// Setup runs the experiment's data-preparation Job; Done once it succeeded.
func (r *Runner) Setup(ctx context.Context, exp *perfexpv1alpha1.PerfExperiment) (step.Result, error) {
	return r.setup(ctx, exp)
}

// Teardown runs the experiment's teardown Job; Done once it succeeded.
func (r *Runner) Teardown(ctx context.Context, exp *perfexpv1alpha1.PerfExperiment) (step.Result, error) {
	return r.teardown(ctx, exp)
}

// StopTeardown suspends the teardown Job (its timeout passed); Done once it no longer runs.
func (r *Runner) StopTeardown(ctx context.Context, exp *perfexpv1alpha1.PerfExperiment) error {
	return r.stopTeardown(ctx, exp)
}

// WarmUp runs the warm-up load and records the window's start and the warm-up's end.
func (r *Runner) WarmUp(ctx context.Context, exp *perfexpv1alpha1.PerfExperiment) (step.Result, error) {
	return r.warmUp(ctx, exp)
}

// Run runs the scenarios, each after its start delay, and records the window and each
// scenario's state; Done once every scenario finished.
func (r *Runner) Run(ctx context.Context, exp *perfexpv1alpha1.PerfExperiment) (step.Result, error) {
	return r.run(ctx, exp)
}

// Stop stops every load and setup pod of the experiment (not the teardown's); Done once none
// runs.
func (r *Runner) Stop(ctx context.Context, exp *perfexpv1alpha1.PerfExperiment) (step.Result, error) {
	return r.stop(ctx, exp)
}
