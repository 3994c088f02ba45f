package controllers_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/controllers"
	"github.com/perfexp/perfexp/internal/queue"
	"github.com/perfexp/perfexp/internal/step"
	"github.com/perfexp/perfexp/internal/testenv"
	"github.com/perfexp/perfexp/internal/testexp"
)

// These integration tests run the real reconciler against a real API server. The reconciler's
// collaborators (variant, load, analysis) are replaced by a scripted stand-in so the tests can
// decide when each experiment's load finishes; those collaborators have tests of their own.

const leaseNamespace = "perfexp-system"

func init() {
	// go test shows this output only for failing packages (or with -v).
	log.SetLogger(zap.New(zap.UseDevMode(true)))
}

// operator runs one manager with the reconciler until stopped, like a real operator process.
type operator struct {
	cancel context.CancelFunc
	done   chan error
}

func startOperator(t *testing.T, env *testenv.Env, lab *lab) *operator {
	t.Helper()
	return startOperatorWith(t, env, lab, lab, lab)
}

func startOperatorWith(t *testing.T, env *testenv.Env, environment controllers.Environment, load controllers.LoadRunner, analyzer controllers.Analyzer) *operator {
	t.Helper()
	return startOperatorOpts(t, env, operatorOptions{workers: 4}, environment, load, analyzer)
}

// operatorOptions are the reconciler's knobs a story sets; zero values are the reconciler's
// own defaults.
type operatorOptions struct {
	workers        int
	attemptTimeout time.Duration
	baselineGrace  time.Duration
	// defaultOverall and maxOverall bound timeouts.overall (overall.go).
	defaultOverall, maxOverall time.Duration
	// config replaces the API server's config (a benchmark counts requests through its own).
	config *rest.Config
	// orphans names the objects the orphan janitor could not restore.
	orphans controllers.OrphanReports
}

func startOperatorOpts(t testing.TB, env *testenv.Env, opts operatorOptions, environment controllers.Environment, load controllers.LoadRunner, analyzer controllers.Analyzer) *operator {
	t.Helper()
	cfg := env.Config
	if opts.config != nil {
		cfg = opts.config
	}
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:  env.Scheme,
		Metrics: metricsserver.Options{BindAddress: "0"},
		// As the operator's manager (internal/manager) caches them.
		Cache: cache.Options{DefaultTransform: cache.TransformStripManagedFields()},
	})
	if err != nil {
		t.Fatal(err)
	}
	r := &controllers.PerfExperimentReconciler{
		Client:                  mgr.GetClient(),
		APIReader:               mgr.GetAPIReader(),
		Recorder:                mgr.GetEventRecorder("perfexp"),
		Clock:                   clock.RealClock{},
		Lock:                    &queue.Lock{Client: mgr.GetClient(), Reader: mgr.GetAPIReader(), Namespace: leaseNamespace, Clock: clock.RealClock{}},
		Environment:             environment,
		Load:                    load,
		Analyzer:                analyzer,
		MaxConcurrentReconciles: opts.workers,
		AnalysisAttemptTimeout:  opts.attemptTimeout,
		BaselineArrivalGrace:    opts.baselineGrace,
		DefaultOverallTimeout:   opts.defaultOverall,
		MaxOverallTimeout:       opts.maxOverall,
		Orphans:                 opts.orphans,
		SkipNameValidation:      true,
	}
	ctx, cancel := context.WithCancel(context.Background())
	if err := r.SetupWithManager(ctx, mgr); err != nil {
		cancel()
		t.Fatal(err)
	}
	op := &operator{cancel: cancel, done: make(chan error, 1)}
	go func() { op.done <- mgr.Start(ctx) }()
	t.Cleanup(op.stop)
	return op
}

// stop ends the operator as a crash or a rollout would: at once, mid-work.
func (o *operator) stop() {
	if o.cancel == nil {
		return
	}
	o.cancel()
	if err := <-o.done; err != nil {
		log.Log.Error(err, "The operator stopped with an error")
	}
	o.cancel = nil
}

// lab is the scripted stand-in for the reconciler's collaborators. It records the order in
// which experiments touch the environment and checks that no two ever hold it at once.
type lab struct {
	mu       sync.Mutex
	prepared []string               // experiment names in the order Prepare first ran
	restored map[string]int         // Restore calls that finished, per experiment
	active   map[string]bool        // experiments between their first Prepare and finished Restore
	overlaps []string               // violations seen
	finish   map[string]bool        // experiments whose load may finish
	prepare  map[string]step.Result // scripted Prepare results, per experiment
	load     map[string]step.Result // scripted Run results, per experiment (overrides finish)
	crossed  map[string]bool        // experiments whose k6 thresholds are crossed
	// holdAnalysis makes an experiment's analysis wait until released.
	holdAnalysis map[string]bool
	// baselines records the baseline's phase each experiment was analysed against.
	baselines map[string]string
	// teardown scripts an experiment's teardown (Done when unset); teardowns records, per
	// experiment, how many restores had happened at each teardown call, and stoppedTeardown
	// the experiments whose teardown was stopped after its timeout.
	teardown        map[string]step.Result
	teardowns       map[string][]int
	stoppedTeardown map[string]bool
}

func newLab() *lab {
	return &lab{restored: map[string]int{}, active: map[string]bool{}, finish: map[string]bool{},
		prepare: map[string]step.Result{}, load: map[string]step.Result{}, crossed: map[string]bool{},
		holdAnalysis: map[string]bool{}, baselines: map[string]string{},
		teardown: map[string]step.Result{}, teardowns: map[string][]int{}, stoppedTeardown: map[string]bool{}}
}

func (l *lab) Teardown(_ context.Context, exp *perfexpv1alpha1.PerfExperiment) (step.Result, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.teardowns[exp.Name] = append(l.teardowns[exp.Name], l.restored[exp.Name])
	if r, ok := l.teardown[exp.Name]; ok {
		return r, nil
	}
	return step.Done(), nil
}

func (l *lab) StopTeardown(_ context.Context, exp *perfexpv1alpha1.PerfExperiment) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.stoppedTeardown[exp.Name] = true
	return nil
}

func (l *lab) scriptTeardown(name string, r step.Result) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.teardown[name] = r
}

// teardownCalls returns, for each teardown call of the experiment, how many restores had run.
func (l *lab) teardownCalls(name string) ([]int, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.teardowns[name]), l.stoppedTeardown[name]
}

func (l *lab) Prepare(_ context.Context, exp *perfexpv1alpha1.PerfExperiment) (step.Result, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.active[exp.Name] {
		for other := range l.active {
			l.overlaps = append(l.overlaps, fmt.Sprintf("%s prepared while %s held the environment", exp.Name, other))
		}
		l.active[exp.Name] = true
		if !slices.Contains(l.prepared, exp.Name) {
			l.prepared = append(l.prepared, exp.Name)
		}
	}
	if r, ok := l.prepare[exp.Name]; ok {
		return r, nil
	}
	return step.Done(), nil
}

func (l *lab) Restore(_ context.Context, exp *perfexpv1alpha1.PerfExperiment) (step.Result, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.active, exp.Name)
	l.restored[exp.Name]++
	return step.Done(), nil
}

func (l *lab) Setup(context.Context, *perfexpv1alpha1.PerfExperiment) (step.Result, error) {
	return step.Done(), nil
}

func (l *lab) WarmUp(context.Context, *perfexpv1alpha1.PerfExperiment) (step.Result, error) {
	return step.Done(), nil
}

func (l *lab) Run(_ context.Context, exp *perfexpv1alpha1.PerfExperiment) (step.Result, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if r, ok := l.load[exp.Name]; ok {
		return r, nil
	}
	if l.crossed[exp.Name] {
		exp.Status.Load = &perfexpv1alpha1.LoadStatus{ThresholdsCrossed: true}
	}
	if l.finish[exp.Name] {
		return step.Done(), nil
	}
	return step.Wait(200*time.Millisecond, "the test to finish the load"), nil
}

func (l *lab) Stop(context.Context, *perfexpv1alpha1.PerfExperiment) (step.Result, error) {
	return step.Done(), nil
}

func (l *lab) PlannedDuration(*perfexpv1alpha1.PerfExperiment) time.Duration { return time.Hour }

func (l *lab) Analyze(_ context.Context, exp, baseline *perfexpv1alpha1.PerfExperiment) (step.Result, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.holdAnalysis[exp.Name] {
		return step.Wait(200*time.Millisecond, "the test to release the analysis"), nil
	}
	if baseline != nil {
		l.baselines[exp.Name] = string(baseline.Status.Phase)
	}
	exp.Status.Verdict = perfexpv1alpha1.VerdictPass
	return step.Done(), nil
}

func (l *lab) setHoldAnalysis(name string, hold bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.holdAnalysis[name] = hold
}

func (l *lab) baselinePhaseSeen(name string) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.baselines[name]
}

func (l *lab) finishLoad(name string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.finish[name] = true
}

func (l *lab) script(name string, prepare, load *step.Result) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if prepare != nil {
		l.prepare[name] = *prepare
	}
	if load != nil {
		l.load[name] = *load
	}
}

func (l *lab) order() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.prepared)
}

func (l *lab) restores(name string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.restored[name]
}

func (l *lab) violations() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.overlaps)
}

// experiment builds a minimal valid experiment on a queue.
func experiment(ns, name, queueName string, priority int32) *perfexpv1alpha1.PerfExperiment {
	return testexp.New(ns, name, testexp.WithQueue(queueName), testexp.WithPriority(priority),
		testexp.WithScenarios(testexp.Constant("checkinout", 1, time.Minute)))
}

func get(t *testing.T, c client.Client, ns, name string) *perfexpv1alpha1.PerfExperiment {
	t.Helper()
	exp := &perfexpv1alpha1.PerfExperiment{}
	if err := c.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: name}, exp); err != nil {
		if apierrors.IsNotFound(err) {
			return nil
		}
		t.Fatal(err)
	}
	return exp
}

// eventually retries check until it returns nil or the timeout passes.
var eventually = testenv.Eventually

// consistently fails the test if check returns an error at any time within d.
func consistently(t *testing.T, d time.Duration, what string, check func() error) {
	t.Helper()
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		if err := check(); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func waitPhase(t *testing.T, c client.Client, ns, name string, want perfexpv1alpha1.Phase) *perfexpv1alpha1.PerfExperiment {
	t.Helper()
	var exp *perfexpv1alpha1.PerfExperiment
	eventually(t, 30*time.Second, fmt.Sprintf("%s reaches %s", name, want), func() error {
		exp = get(t, c, ns, name)
		if exp == nil {
			return fmt.Errorf("%s is gone", name)
		}
		if exp.Status.Phase != want {
			return fmt.Errorf("phase %q (%s)", exp.Status.Phase, exp.Status.Message)
		}
		return nil
	})
	return exp
}

func condition(exp *perfexpv1alpha1.PerfExperiment, typ string) *metav1.Condition {
	return meta.FindStatusCondition(exp.Status.Conditions, typ)
}
