package controllers_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/yaml"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/controllers"
	"github.com/perfexp/perfexp/internal/queue"
	"github.com/perfexp/perfexp/internal/report"
	"github.com/perfexp/perfexp/internal/step"
	"github.com/perfexp/perfexp/internal/sweep"
	"github.com/perfexp/perfexp/internal/testenv"
)

// kneeLab is the lab with a system under test behind it: a run's load ends at once, and its
// analysis publishes the results a system with a knee would give at the run's VUs, p95 =
// 100 ms / (1 - vus/60), so p95 crosses 300 ms at 40 VUs.
type kneeLab struct {
	*lab
	t *testing.T
	c client.Client
	// holdFrom, when set, keeps the load of every probe at or above it running until released.
	mu       sync.Mutex
	holdFrom int32
}

func (k *kneeLab) hold(from int32) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.holdFrom = from
}

func kneeP95(vus int32) float64 {
	if vus >= 59 {
		return 5000
	}
	return 100 / (1 - float64(vus)/60)
}

func (k *kneeLab) Run(_ context.Context, exp *perfexpv1alpha1.PerfExperiment) (step.Result, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.holdFrom > 0 && *exp.Spec.Load.Scenarios[0].VUs >= k.holdFrom {
		return step.Wait(200*time.Millisecond, "the test to release the load"), nil
	}
	return step.Done(), nil
}

func (k *kneeLab) Analyze(ctx context.Context, exp, _ *perfexpv1alpha1.PerfExperiment) (step.Result, error) {
	vus := *exp.Spec.Load.Scenarios[0].VUs
	cm := runReport(k.t, exp.Namespace, exp.Name, kneeP95(vus))
	if err := k.c.Create(ctx, cm); err != nil && !apierrors.IsAlreadyExists(err) {
		return step.Result{}, err
	}
	exp.Status.Verdict = perfexpv1alpha1.VerdictPass
	return step.Done(), nil
}

func startCapacityOperator(t *testing.T, env *testenv.Env, k *kneeLab) *operator {
	t.Helper()
	return startOperatorWithAnalyzer(t, env, k, k)
}

// startOperatorWithAnalyzer runs the experiment and sweep reconcilers with the lab's
// environment, k's load and the given analyzer.
func startOperatorWithAnalyzer(t *testing.T, env *testenv.Env, k *kneeLab, analyzer controllers.Analyzer) *operator {
	t.Helper()
	mgr, err := ctrl.NewManager(env.Config, ctrl.Options{Scheme: env.Scheme, Metrics: metricsserver.Options{BindAddress: "0"}})
	if err != nil {
		t.Fatal(err)
	}
	experiments := &controllers.PerfExperimentReconciler{
		Client: mgr.GetClient(), Recorder: mgr.GetEventRecorder("perfexp"), Clock: clock.RealClock{},
		Lock:        &queue.Lock{Client: mgr.GetClient(), Namespace: leaseNamespace, Clock: clock.RealClock{}},
		Environment: k.lab, Load: k, Analyzer: analyzer, SkipNameValidation: true,
	}
	sweeps := &controllers.PerfSweepReconciler{Client: mgr.GetClient(), Recorder: mgr.GetEventRecorder("perfexp"), SkipNameValidation: true}
	ctx, cancel := context.WithCancel(context.Background())
	if err := experiments.SetupWithManager(ctx, mgr); err != nil {
		cancel()
		t.Fatal(err)
	}
	if err := sweeps.SetupWithManager(mgr); err != nil {
		cancel()
		t.Fatal(err)
	}
	op := &operator{cancel: cancel, done: make(chan error, 1)}
	go func() { op.done <- mgr.Start(ctx) }()
	t.Cleanup(op.stop)
	return op
}

func newCapacitySweep(ns, name string) *perfexpv1alpha1.PerfSweep {
	s := &perfexpv1alpha1.PerfSweep{}
	s.Namespace, s.Name = ns, name
	s.Spec.Queue = ns
	s.Spec.Template.Load.Scenarios = experiment(ns, "template", ns, 0).Spec.Load.Scenarios
	p95 := resource.MustParse("300")
	s.Spec.Template.Analysis = &perfexpv1alpha1.Analysis{Objectives: []perfexpv1alpha1.Objective{{Scenario: "checkinout", Metric: perfexpv1alpha1.MetricP95, Max: &p95}}}
	s.Spec.Capacity = &perfexpv1alpha1.SweepCapacity{Parameter: perfexpv1alpha1.LoadVUs, Min: 5, Max: 200, ResolutionPercent: 10, MaxProbes: 12, MaxRepeats: 1}
	return s
}

func TestCapacitySearch(t *testing.T) {
	env := testenv.Start(t)
	env.Namespace(t, leaseNamespace)
	c := env.Client

	t.Run("a capacity search brackets by doubling, bisects to the knee and reports it", func(t *testing.T) {
		ns := env.Namespace(t, "capacity-story")
		k := &kneeLab{lab: newLab(), t: t, c: c}
		startCapacityOperator(t, env, k)
		mustCreate(t, c, newCapacitySweep(ns, "cap"))

		var done *perfexpv1alpha1.PerfSweep
		eventually(t, 120*time.Second, "the search ends", func() error {
			done = getSweep(t, c, ns, "cap")
			if done.Status.Phase != perfexpv1alpha1.SweepSucceeded {
				return fmt.Errorf("phase %q: %s", done.Status.Phase, done.Status.Message)
			}
			return nil
		})
		st := done.Status.Capacity
		t.Logf("status: %s; probes %+v", done.Status.Message, st.Probes)
		if st == nil || st.LastHeld == nil || st.FirstBroken == nil {
			t.Fatalf("capacity status %+v", st)
		}
		// The knee is at 40 VUs: the answer brackets it within the resolution and never above.
		if *st.LastHeld > 40 || *st.FirstBroken < *st.LastHeld || float64(*st.FirstBroken) > 1.1*float64(*st.LastHeld) || *st.LastHeld < 36 {
			t.Errorf("bracket %d-%d, want one within 10 %% at or below the knee of 40", *st.LastHeld, *st.FirstBroken)
		}
		var loads []int32
		for _, p := range st.Probes {
			loads = append(loads, p.Load)
			if p.Outcome == "" || p.Runs != 1 {
				t.Errorf("probe %+v not decided in one run", p)
			}
		}
		if len(loads) < 4 || loads[0] != 5 || loads[1] != 10 || loads[2] != 20 || loads[3] != 40 {
			t.Errorf("probes at %v, want 5, 10, 20, 40 first (doubling)", loads)
		}
		if st.Summary != fmt.Sprintf("%d-%d VUs", *st.LastHeld, *st.FirstBroken) {
			t.Errorf("summary %q", st.Summary)
		}
		if !strings.Contains(st.LimitingFactor, "P95") {
			t.Errorf("limiting factor %q, want the p95 objective", st.LimitingFactor)
		}

		// Every probe ran as an owned experiment at its load, one after another.
		runs := runsOf(t, c, ns)
		if len(runs) != len(loads) || int(done.Status.Total) != len(loads) {
			t.Errorf("%d runs and total %d for %d probes", len(runs), done.Status.Total, len(loads))
		}
		for _, l := range loads {
			name := fmt.Sprintf("cap-vus-%d-1", l)
			exp, ok := runs[name]
			if !ok {
				t.Fatalf("run %s missing: %v", name, keys(runs))
			}
			if got := *exp.Spec.Load.Scenarios[0].VUs; got != l {
				t.Errorf("run %s ran %d VUs, want %d", name, got, l)
			}
		}
		if v := k.violations(); len(v) > 0 {
			t.Errorf("runs overlapped: %v", v)
		}

		cm := &corev1.ConfigMap{}
		if err := c.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: done.Status.ReportRef.Name}, cm); err != nil {
			t.Fatal(err)
		}
		if md := cm.Data[report.KeyMarkdown]; !strings.Contains(md, "**Capacity: "+st.Summary+"**") {
			t.Errorf("report.md does not state the capacity:\n%s", md)
		}
		if !strings.Contains(cm.Data[report.KeySweepHTML], "capacity-line") {
			t.Error("report.html has no capacity curve")
		}
		if cnd := meta.FindStatusCondition(done.Status.Conditions, perfexpv1alpha1.ConditionReady); cnd == nil || cnd.Status != "True" {
			t.Errorf("Ready %+v", cnd)
		}
	})

	t.Run("a search whose objectives cannot decide a load is refused", func(t *testing.T) {
		ns := env.Namespace(t, "capacity-refused")
		startCapacityOperator(t, env, &kneeLab{lab: newLab(), t: t, c: c})
		s := newCapacitySweep(ns, "cap")
		pct := int32(10)
		s.Spec.Template.Analysis.Objectives[0].Max, s.Spec.Template.Analysis.Objectives[0].MaxIncreasePercent = nil, &pct
		mustCreate(t, c, s)
		got := waitSweepPhase(t, c, ns, "cap", perfexpv1alpha1.SweepFailed)
		if !strings.Contains(got.Status.Message, "baseline") {
			t.Errorf("message %q, want the relative objective named", got.Status.Message)
		}
		if n := len(runsOf(t, c, ns)); n != 0 {
			t.Errorf("%d runs created for a refused search", n)
		}
	})

	t.Run("a restart that lost the search's status replays its decisions from the runs, and an abort stops it", func(t *testing.T) {
		ns := env.Namespace(t, "capacity-restart")
		k := &kneeLab{lab: newLab(), t: t, c: c}
		k.hold(20)
		op := startCapacityOperator(t, env, k)
		mustCreate(t, c, newCapacitySweep(ns, "cap"))
		eventually(t, 60*time.Second, "the probe at 20 VUs runs", func() error {
			if s := getSweep(t, c, ns, "cap"); s.Status.CurrentExperiment != "cap-vus-20-1" {
				return fmt.Errorf("current %q: %s", s.Status.CurrentExperiment, s.Status.Message)
			}
			return nil
		})
		uids := map[string]string{}
		for name, exp := range runsOf(t, c, ns) {
			uids[name] = string(exp.UID)
		}
		op.stop()
		s := getSweep(t, c, ns, "cap")
		s.Status = perfexpv1alpha1.PerfSweepStatus{}
		if err := c.Status().Update(t.Context(), s); err != nil {
			t.Fatal(err)
		}
		startCapacityOperator(t, env, k)
		eventually(t, 60*time.Second, "the restarted search is back at the probe at 20 VUs", func() error {
			s := getSweep(t, c, ns, "cap")
			if st := s.Status.Capacity; st == nil || len(st.Probes) != 3 || st.Probes[2].Load != 20 {
				return fmt.Errorf("capacity %+v", st)
			}
			return nil
		})
		for name, exp := range runsOf(t, c, ns) {
			if uids[name] != string(exp.UID) {
				t.Errorf("run %s was created again", name)
			}
		}
		if n := len(runsOf(t, c, ns)); n != 3 {
			t.Errorf("%d runs after the restart, want 3", n)
		}

		s = getSweep(t, c, ns, "cap")
		s.Spec.Abort = true
		if err := c.Update(t.Context(), s); err != nil {
			t.Fatal(err)
		}
		aborted := waitSweepPhase(t, c, ns, "cap", perfexpv1alpha1.SweepAborted)
		if n := len(runsOf(t, c, ns)); n != 3 {
			t.Errorf("%d runs after the abort, want 3", n)
		}
		if run := get(t, c, ns, "cap-vus-20-1"); run.Status.Phase != perfexpv1alpha1.PhaseAborted || k.restores("cap-vus-20-1") == 0 {
			t.Errorf("the running probe ended %s with %d restores; want Aborted and restored", run.Status.Phase, k.restores("cap-vus-20-1"))
		}
		t.Logf("aborted: %s", aborted.Status.Message)
	})

	t.Run("the demo's capacity searches are accepted by the API server and planned", func(t *testing.T) {
		ns := env.Namespace(t, "capacity-demo")
		for _, file := range []string{"capacity.yaml", "capacity-no-cpu-limit.yaml"} {
			data, err := os.ReadFile(filepath.Join(testenv.Root(), "scenarios", "demo-capacity", file))
			if err != nil {
				t.Fatal(err)
			}
			obj := &unstructured.Unstructured{}
			if err := yaml.Unmarshal(data, &obj.Object); err != nil {
				t.Fatal(err)
			}
			obj.SetNamespace(ns)
			if err := c.Create(t.Context(), obj, client.DryRunAll); err != nil {
				t.Fatalf("%s was refused: %v", file, err)
			}
			sw := &perfexpv1alpha1.PerfSweep{}
			if err := yaml.UnmarshalStrict(data, sw); err != nil {
				t.Fatal(err)
			}
			if _, err := sweep.NewCapacityPlan(sw); err != nil {
				t.Errorf("%s cannot be planned: %v", file, err)
			}
		}
	})
}
