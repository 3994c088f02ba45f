package controllers_test

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/yaml"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/controllers"
	"github.com/perfexp/perfexp/internal/history"
	"github.com/perfexp/perfexp/internal/load"
	"github.com/perfexp/perfexp/internal/queue"
	"github.com/perfexp/perfexp/internal/report"
	"github.com/perfexp/perfexp/internal/result"
	"github.com/perfexp/perfexp/internal/sweep"
	"github.com/perfexp/perfexp/internal/testenv"
	"github.com/perfexp/perfexp/internal/testexp"
)

// These user stories run the PerfSweep reconciler and the PerfExperiment reconciler together
// against a real API server, with the experiments' collaborators scripted by the lab: the
// sweep's runs go through the real queue, one at a time, in the order the sweep gave them.

func startSweepOperator(t *testing.T, env *testenv.Env, lab *lab) *operator {
	t.Helper()
	return startSweepOperatorWith(t, env, lab, lab)
}

// startSweepOperatorWith is startSweepOperator with another environment (variant.New: real
// patches of the test's workloads).
func startSweepOperatorWith(t *testing.T, env *testenv.Env, environment controllers.Environment, lab *lab) *operator {
	t.Helper()
	mgr, err := ctrl.NewManager(env.Config, ctrl.Options{Scheme: env.Scheme, Metrics: metricsserver.Options{BindAddress: "0"}})
	if err != nil {
		t.Fatal(err)
	}
	experiments := &controllers.PerfExperimentReconciler{
		Client: mgr.GetClient(), Recorder: mgr.GetEventRecorder("perfexp"), Clock: clock.RealClock{},
		Lock:        &queue.Lock{Client: mgr.GetClient(), Namespace: leaseNamespace, Clock: clock.RealClock{}},
		Environment: environment, Load: lab, Analyzer: lab, SkipNameValidation: true,
	}
	sweeps := &controllers.PerfSweepReconciler{Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), Recorder: mgr.GetEventRecorder("perfexp"), SkipNameValidation: true}
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

// newTestSweep builds a sweep of HTTP_MAXPOOLSIZE over the given values on one queue, run in the
// declared order so a test knows which run comes first.
func newTestSweep(ns, name string, repeats int32, values ...string) *perfexpv1alpha1.PerfSweep {
	s := newRandomizedTestSweep(ns, name, repeats, values...)
	s.Spec.Order = perfexpv1alpha1.SweepOrderInterleaved
	return s
}

// newRandomizedTestSweep builds the same sweep with the default (randomized) order.
func newRandomizedTestSweep(ns, name string, repeats int32, values ...string) *perfexpv1alpha1.PerfSweep {
	s := &perfexpv1alpha1.PerfSweep{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	s.Spec.Queue = ns
	s.Spec.Repeats = repeats
	s.Spec.Template.Load.Scenarios = experiment(ns, "template", ns, 0).Spec.Load.Scenarios
	// The lab rolls nothing: its runs need no settle (podAge Equal would wait 30 s each).
	s.Spec.Template.Settle = &metav1.Duration{}
	for _, v := range values {
		s.Spec.Arms = append(s.Spec.Arms, perfexpv1alpha1.SweepArm{Name: "pool-" + v, Variant: poolVariant(v)})
	}
	return s
}

func poolVariant(v string) *perfexpv1alpha1.Variant {
	return &perfexpv1alpha1.Variant{Workloads: []perfexpv1alpha1.WorkloadChange{{
		WorkloadSelector: perfexpv1alpha1.WorkloadSelector{Names: []string{"circulation"}},
		Env:              &perfexpv1alpha1.EnvChange{Set: []perfexpv1alpha1.EnvVar{{Name: "HTTP_MAXPOOLSIZE", Value: v}}},
	}}}
}

// resultReport builds the report ConfigMap of the run res names, holding res as results.json.
func resultReport(t *testing.T, ns string, res *result.Result) *corev1.ConfigMap {
	t.Helper()
	js, err := report.JSON(res)
	if err != nil {
		t.Fatal(err)
	}
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: res.Experiment + perfexpv1alpha1.ReportSuffix},
		Data: map[string]string{report.KeyJSON: string(js)}}
}

// runReport builds the report ConfigMap a run's analysis would have published: results.json
// with one scenario at the given p95.
func runReport(t *testing.T, ns, run string, p95 float64) *corev1.ConfigMap {
	t.Helper()
	f := func(v float64) *float64 { return &v }
	res := &result.Result{Experiment: run, Namespace: ns, Validity: perfexpv1alpha1.Valid, Verdict: perfexpv1alpha1.VerdictPass,
		Scenarios: []result.ScenarioResult{{Name: "checkinout", Validity: perfexpv1alpha1.Valid,
			RequestStats: result.RequestStats{Avg: f(p95 / 2), P95: f(p95), Rate: f(80)}}}}
	js, err := report.JSON(res)
	if err != nil {
		t.Fatal(err)
	}
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: run + perfexpv1alpha1.ReportSuffix},
		Data: map[string]string{report.KeyJSON: string(js)}}
}

func getSweep(t *testing.T, c client.Client, ns, name string) *perfexpv1alpha1.PerfSweep {
	t.Helper()
	s := &perfexpv1alpha1.PerfSweep{}
	if err := c.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: name}, s); err != nil {
		if apierrors.IsNotFound(err) {
			return nil
		}
		t.Fatal(err)
	}
	return s
}

func waitSweepPhase(t *testing.T, c client.Client, ns, name string, want perfexpv1alpha1.SweepPhase) *perfexpv1alpha1.PerfSweep {
	t.Helper()
	var s *perfexpv1alpha1.PerfSweep
	eventually(t, 60*time.Second, fmt.Sprintf("sweep %s reaches %s", name, want), func() error {
		s = getSweep(t, c, ns, name)
		if s == nil {
			return fmt.Errorf("sweep %s is gone", name)
		}
		if s.Status.Phase != want {
			return fmt.Errorf("phase %q (%s)", s.Status.Phase, s.Status.Message)
		}
		return nil
	})
	return s
}

// runsOf lists the sweep's PerfExperiments by name.
func runsOf(t *testing.T, c client.Client, ns string) map[string]perfexpv1alpha1.PerfExperiment {
	t.Helper()
	list := &perfexpv1alpha1.PerfExperimentList{}
	if err := c.List(t.Context(), list, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	out := map[string]perfexpv1alpha1.PerfExperiment{}
	for _, e := range list.Items {
		out[e.Name] = e
	}
	return out
}

func TestSweep(t *testing.T) {
	env := testenv.Start(t)
	env.Namespace(t, leaseNamespace)
	c := env.Client

	t.Run("a sweep of a baseline and 3 arms, 2 repeats, runs 8 interleaved experiments and reports", func(t *testing.T) {
		ns := env.Namespace(t, "sweep-story")
		lab := newLab()
		op := startSweepOperator(t, env, lab)
		want := []string{
			"pool-baseline-1", "pool-pool-1-1", "pool-pool-10-1", "pool-pool-50-1",
			"pool-baseline-2", "pool-pool-1-2", "pool-pool-10-2", "pool-pool-50-2",
		}
		// The runs' analyses would publish these; the lab's does not.
		for i, name := range want {
			mustCreate(t, c, runReport(t, ns, name, float64(100+10*i)))
		}
		sw := newTestSweep(ns, "pool", 2, "1", "10", "50")
		mustCreate(t, c, sw)

		var runs map[string]perfexpv1alpha1.PerfExperiment
		eventually(t, 30*time.Second, "8 runs exist", func() error {
			runs = runsOf(t, c, ns)
			if len(runs) != 8 {
				return fmt.Errorf("%d runs", len(runs))
			}
			return nil
		})
		uids := map[string]string{}
		for _, name := range want {
			exp, ok := runs[name]
			if !ok {
				t.Fatalf("run %s missing; runs: %v", name, keys(runs))
			}
			uids[name] = string(exp.UID)
			if ref := metav1.GetControllerOf(&exp); ref == nil || ref.Name != "pool" || ref.Kind != "PerfSweep" {
				t.Errorf("run %s is not controlled by the sweep: %+v", name, ref)
			}
			repeat := name[len(name)-1:]
			switch wantBase := "pool-baseline-" + repeat; {
			case strings.HasPrefix(name, "pool-baseline-"):
				if exp.Spec.Baseline != nil || exp.Spec.Variant != nil {
					t.Errorf("baseline run %s has baseline %+v, variant %+v", name, exp.Spec.Baseline, exp.Spec.Variant)
				}
			case exp.Spec.Baseline == nil || exp.Spec.Baseline.Name != wantBase:
				t.Errorf("run %s is compared with %+v, want %s", name, exp.Spec.Baseline, wantBase)
			}
			if exp.Spec.Queue != ns {
				t.Errorf("run %s in queue %q, want %q", name, exp.Spec.Queue, ns)
			}
		}

		// The queue's own order, as it stands with every run waiting or the first holding the lock.
		eventually(t, 30*time.Second, "the queue ordered the waiting runs as interleaved", func() error {
			runs = runsOf(t, c, ns)
			for i, name := range want[1:] {
				if got := runs[name].Status.QueuePosition; got != int32(i+1) {
					return fmt.Errorf("%s at queue position %d, want %d", name, got, i+1)
				}
			}
			return nil
		})
		if s := getSweep(t, c, ns, "pool"); s.Status.Total != 8 || s.Status.CurrentArm != "baseline" || s.Status.Progress != "0/8" {
			t.Errorf("progress %s current %q total %d, want 0/8 with the baseline running", s.Status.Progress, s.Status.CurrentArm, s.Status.Total)
		}

		t.Log("A restart that lost the sweep's status, and a re-apply of the same sweep, stamp nothing new.")
		op.stop()
		s := getSweep(t, c, ns, "pool")
		s.Status = perfexpv1alpha1.PerfSweepStatus{}
		if err := c.Status().Update(t.Context(), s); err != nil {
			t.Fatal(err)
		}
		s = getSweep(t, c, ns, "pool")
		s.Spec = sw.Spec
		if err := c.Update(t.Context(), s); err != nil {
			t.Fatal(err)
		}
		if g := getSweep(t, c, ns, "pool").Generation; g != 1 {
			t.Errorf("re-applying the same spec made generation %d", g)
		}
		startSweepOperator(t, env, lab)
		eventually(t, 30*time.Second, "the restarted operator counts the runs again", func() error {
			if s := getSweep(t, c, ns, "pool"); s.Status.Total != 8 {
				return fmt.Errorf("total %d", s.Status.Total)
			}
			return nil
		})
		for name, exp := range runsOf(t, c, ns) {
			if uids[name] != string(exp.UID) {
				t.Errorf("run %s was created again (uid %s, was %s)", name, exp.UID, uids[name])
			}
		}
		if n := len(runsOf(t, c, ns)); n != 8 {
			t.Errorf("%d runs after the restart, want 8", n)
		}

		for _, name := range want {
			lab.finishLoad(name)
		}
		done := waitSweepPhase(t, c, ns, "pool", perfexpv1alpha1.SweepSucceeded)
		if got := lab.order(); !slices.Equal(got, want) {
			t.Errorf("runs prepared in order\n %v\nwant %v", got, want)
		}
		if v := lab.violations(); len(v) > 0 {
			t.Errorf("runs overlapped: %v", v)
		}
		if done.Status.Progress != "8/8" || done.Status.Done != 8 || done.Status.Failed != 0 || done.Status.CurrentArm != "" {
			t.Errorf("status %+v, want 8/8 done and nothing current", done.Status)
		}
		if len(done.Status.Arms) != 4 || done.Status.Arms[0].Name != "baseline" || done.Status.Arms[3].Succeeded != 2 {
			t.Errorf("arms %+v", done.Status.Arms)
		}
		for _, typ := range []string{perfexpv1alpha1.ConditionReady, perfexpv1alpha1.ConditionReported, perfexpv1alpha1.ConditionExperimentsCreated} {
			cond := meta.FindStatusCondition(done.Status.Conditions, typ)
			if cond == nil || cond.Status != metav1.ConditionTrue || cond.ObservedGeneration != done.Generation {
				t.Errorf("condition %s = %+v, want True at generation %d", typ, cond, done.Generation)
			}
		}
		if done.Status.ReportRef == nil || done.Status.ReportRef.Name != "pool-report" {
			t.Fatalf("reportRef %+v", done.Status.ReportRef)
		}
		cm := &corev1.ConfigMap{}
		if err := c.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: "pool-report"}, cm); err != nil {
			t.Fatal(err)
		}
		res, err := report.ParseSweepJSON([]byte(cm.Data[report.KeySweepJSON]))
		if err != nil {
			t.Fatal(err)
		}
		// Geometric means over the two runs of each arm: baseline runs were written at 100 and
		// 140 ms, so sqrt(100 x 140) = 118.322 ms.
		if len(res.Arms) != 4 || res.Arms[0].Succeeded != 2 || math.Abs(*res.Arms[0].Scenarios[0].P95-math.Sqrt(100*140)) > 1e-9 {
			t.Errorf("sweep results %+v", res.Arms)
		}
		for _, a := range res.Arms[1:] {
			if a.Comparison == nil {
				t.Errorf("arm %s was not compared", a.Name)
			}
		}
		md := cm.Data[report.KeySweepMarkdown]
		for _, w := range []string{"| pool-10 | HTTP_MAXPOOLSIZE | 10 | checkinout | 2 |", "| baseline | - | as deployed | checkinout | 2 | 59.161 ms | 118.322 ms |"} {
			if !strings.Contains(md, w) {
				t.Errorf("report.md lacks %q:\n%s", w, md)
			}
		}
		if !strings.Contains(cm.Data[report.KeySweepHTML], "<svg") {
			t.Error("report.html has no chart")
		}
	})

	t.Run("a randomized sweep runs in its plan's order, a variant before its baseline waiting for it in analysis", func(t *testing.T) {
		ns := env.Namespace(t, "sweep-random")
		lab := newLab()
		startSweepOperator(t, env, lab)
		mustCreate(t, c, newRandomizedTestSweep(ns, "pool", 2, "1", "10", "50"))
		sw := getSweep(t, c, ns, "pool")
		if sw.Spec.Order != perfexpv1alpha1.SweepOrderRandomized {
			t.Errorf("order defaults to %q, want Randomized", sw.Spec.Order)
		}
		plan, err := sweep.NewPlan(sw)
		if err != nil {
			t.Fatal(err)
		}
		var want []string
		for _, r := range plan.Runs {
			want = append(want, r.Name)
		}
		eventually(t, 30*time.Second, "8 runs exist", func() error {
			if n := len(runsOf(t, c, ns)); n != 8 {
				return fmt.Errorf("%d runs", n)
			}
			return nil
		})
		for _, name := range want {
			lab.finishLoad(name)
		}
		waitSweepPhase(t, c, ns, "pool", perfexpv1alpha1.SweepSucceeded)
		if got := lab.order(); !slices.Equal(got, want) {
			t.Errorf("runs prepared in order\n %v\nwant the plan's %v", got, want)
		}
		if v := lab.violations(); len(v) > 0 {
			t.Errorf("runs overlapped: %v", v)
		}
		for _, r := range plan.Runs {
			if r.Baseline == "" {
				continue
			}
			if seen := lab.baselinePhaseSeen(r.Name); seen != string(perfexpv1alpha1.PhaseSucceeded) {
				t.Errorf("%s was analysed against its baseline in phase %q, want Succeeded", r.Name, seen)
			}
		}
	})

	t.Run("abort propagates to every unfinished run, which restores the environment", func(t *testing.T) {
		ns := env.Namespace(t, "sweep-abort")
		lab := newLab()
		startSweepOperator(t, env, lab)
		mustCreate(t, c, newTestSweep(ns, "ab", 1, "1", "10"))
		waitPhase(t, c, ns, "ab-baseline-1", perfexpv1alpha1.PhaseRunning)
		// A merge patch without a resourceVersion, as kubectl patch sends: it never conflicts with
		// the operator's status writes.
		s := getSweep(t, c, ns, "ab")
		if err := c.Patch(t.Context(), s, client.RawPatch(types.MergePatchType, []byte(`{"spec":{"abort":true}}`))); err != nil {
			t.Fatal(err)
		}
		done := waitSweepPhase(t, c, ns, "ab", perfexpv1alpha1.SweepAborted)
		for _, name := range []string{"ab-baseline-1", "ab-pool-1-1", "ab-pool-10-1"} {
			if exp := get(t, c, ns, name); exp == nil || exp.Status.Phase != perfexpv1alpha1.PhaseAborted || !exp.Spec.Abort {
				t.Errorf("run %s: %+v, want Aborted", name, exp)
			}
		}
		if lab.restores("ab-baseline-1") == 0 {
			t.Error("the running run did not restore the environment")
		}
		if cond := meta.FindStatusCondition(done.Status.Conditions, perfexpv1alpha1.ConditionReady); cond == nil || cond.Reason != perfexpv1alpha1.ReasonAborted || cond.Status != metav1.ConditionFalse {
			t.Errorf("Ready %+v, want False/Aborted", cond)
		}
	})

	t.Run("a sweep past its deadline aborts its unfinished runs and ends DeadlineExceeded", func(t *testing.T) {
		ns := env.Namespace(t, "sweep-deadline")
		lab := newLab()
		startSweepOperator(t, env, lab)
		mustCreate(t, c, newTestSweep(ns, "dl", 1, "1", "10"))
		waitPhase(t, c, ns, "dl-baseline-1", perfexpv1alpha1.PhaseRunning)
		// A deadline that has passed by the time the operator reads it; set as kubectl would.
		s := getSweep(t, c, ns, "dl")
		if err := c.Patch(t.Context(), s, client.RawPatch(types.MergePatchType, []byte(`{"spec":{"deadline":"1s"}}`))); err != nil {
			t.Fatal(err)
		}
		done := waitSweepPhase(t, c, ns, "dl", perfexpv1alpha1.SweepAborted)
		if exp := get(t, c, ns, "dl-baseline-1"); exp == nil || exp.Status.Phase != perfexpv1alpha1.PhaseAborted {
			t.Errorf("run dl-baseline-1: %+v, want Aborted", exp)
		}
		if lab.restores("dl-baseline-1") == 0 {
			t.Error("the running run did not restore the environment")
		}
		if cond := meta.FindStatusCondition(done.Status.Conditions, perfexpv1alpha1.ConditionReady); cond == nil || cond.Reason != "DeadlineExceeded" ||
			cond.Status != metav1.ConditionFalse || !strings.Contains(cond.Message, "the sweep's deadline passed") {
			t.Errorf("Ready %+v, want False/DeadlineExceeded", cond)
		}
		t.Logf("Ready: %s", done.Status.Message)
	})

	t.Run("deleting the sweep deletes its runs, a running one after it restored the environment", func(t *testing.T) {
		ns := env.Namespace(t, "sweep-delete")
		lab := newLab()
		startSweepOperator(t, env, lab)
		mustCreate(t, c, newTestSweep(ns, "del", 2, "1"))
		waitPhase(t, c, ns, "del-baseline-1", perfexpv1alpha1.PhaseRunning)
		if err := c.Delete(t.Context(), getSweep(t, c, ns, "del")); err != nil {
			t.Fatal(err)
		}
		eventually(t, 60*time.Second, "the sweep and its runs are gone", func() error {
			if s := getSweep(t, c, ns, "del"); s != nil {
				return fmt.Errorf("the sweep remains (%s)", s.Status.Message)
			}
			if runs := runsOf(t, c, ns); len(runs) > 0 {
				return fmt.Errorf("runs remain: %v", keys(runs))
			}
			return nil
		})
		if lab.restores("del-baseline-1") == 0 {
			t.Error("the running run went without restoring the environment")
		}
	})

	t.Run("a sweep applied again under its name replaces the runs an earlier sweep of that name left", func(t *testing.T) {
		ns := env.Namespace(t, "sweep-again")
		startSweepOperator(t, env, newLab())
		// A run of the earlier sweep "again", deleted: the garbage collector (which envtest
		// lacks) has not removed it yet.
		left := testexp.New(ns, "again-baseline-1")
		left.OwnerReferences = []metav1.OwnerReference{{APIVersion: perfexpv1alpha1.GroupVersion.String(), Kind: "PerfSweep",
			Name: "again", UID: "2f8e0c36-0000-4000-8000-000000000001", Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}}
		mustCreate(t, c, left)
		// A PerfExperiment of a run's name that nobody owns is another matter: never touched.
		mustCreate(t, c, testexp.New(ns, "other-baseline-1"))

		mustCreate(t, c, newTestSweep(ns, "again", 1, "1"))
		eventually(t, 60*time.Second, "the sweep's own runs exist", func() error {
			runs := runsOf(t, c, ns)
			for _, name := range []string{"again-baseline-1", "again-pool-1-1"} {
				r, ok := runs[name]
				if !ok {
					return fmt.Errorf("no run %s (runs %v)", name, keys(runs))
				}
				if ref := metav1.GetControllerOf(&r); ref == nil || ref.UID != getSweep(t, c, ns, "again").UID {
					return fmt.Errorf("run %s is not the new sweep's (%+v)", name, ref)
				}
			}
			return nil
		})
		if s := getSweep(t, c, ns, "again"); s.Status.Phase == perfexpv1alpha1.SweepFailed {
			t.Errorf("the sweep failed: %s", s.Status.Message)
		}

		mustCreate(t, c, newTestSweep(ns, "other", 1, "1"))
		got := waitSweepPhase(t, c, ns, "other", perfexpv1alpha1.SweepFailed)
		if !strings.Contains(got.Status.Message, "already exists and does not belong to this sweep") {
			t.Errorf("message %q, want the refusal of another owner's experiment", got.Status.Message)
		}
		if runs := runsOf(t, c, ns); runs["other-baseline-1"].OwnerReferences != nil {
			t.Error("the experiment nobody owned was changed")
		}
	})

	t.Run("the demo sweep is accepted by the API server", func(t *testing.T) {
		ns := env.Namespace(t, "sweep-demo")
		data, err := os.ReadFile(filepath.Join(testenv.Root(), "scenarios", "demo-sweep", "pool-size-sweep.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		obj := &unstructured.Unstructured{}
		if err := yaml.Unmarshal(data, &obj.Object); err != nil {
			t.Fatal(err)
		}
		obj.SetNamespace(ns)
		if err := c.Create(t.Context(), obj, client.DryRunAll); err != nil {
			t.Fatalf("the demo sweep was refused: %v", err)
		}
	})

	t.Run("a sequential sweep stops adding repeats once every arm is decisive, or when its budget is spent", func(t *testing.T) {
		ns := env.Namespace(t, "sweep-sequential")
		lab := newLab()
		startSweepOperator(t, env, lab)
		// decided: the arm is three times slower in every repeat; open: the arm is as often
		// faster as slower, so no look can decide it.
		p95 := map[string][]float64{
			"decided-baseline": {100, 101, 100, 101}, "decided-pool-1": {300, 303, 300, 303},
			"open-baseline": {100, 100, 100, 100}, "open-pool-1": {150, 60, 150, 60},
		}
		for arm, vs := range p95 {
			for i, v := range vs {
				mustCreate(t, c, runReport(t, ns, fmt.Sprintf("%s-%d", arm, i+1), v))
				lab.finishLoad(fmt.Sprintf("%s-%d", arm, i+1))
			}
		}
		for _, name := range []string{"decided", "open"} {
			sw := newTestSweep(ns, name, 2, "1")
			sw.Spec.Sequential = &perfexpv1alpha1.SweepSequential{MaxRepeats: 3}
			mustCreate(t, c, sw)
		}

		decided := waitSweepPhase(t, c, ns, "decided", perfexpv1alpha1.SweepSucceeded)
		if st := decided.Status.Sequential; st == nil || st.Repeats != 2 || st.Looks != 1 || !strings.Contains(st.StopReason, "every arm was decisive after 2 repeats") {
			t.Errorf("decided: sequential status %+v", st)
		}
		if decided.Status.Total != 4 || decided.Status.Arms[1].Change != perfexpv1alpha1.ChangeRegressed {
			t.Errorf("decided: %d runs, arm %s (%s)", decided.Status.Total, decided.Status.Arms[1].Change, decided.Status.Arms[1].Message)
		}

		open := waitSweepPhase(t, c, ns, "open", perfexpv1alpha1.SweepSucceeded)
		if st := open.Status.Sequential; st == nil || st.Repeats != 3 || st.Looks != 2 || !strings.Contains(st.StopReason, "budget of 3 repeats is spent") {
			t.Errorf("open: sequential status %+v", st)
		}
		if open.Status.Total != 6 || open.Status.Done != 6 || open.Status.Arms[1].Change == perfexpv1alpha1.ChangeRegressed || open.Status.Arms[1].Change == perfexpv1alpha1.ChangeImproved {
			t.Errorf("open: %d runs (%d done), arm %s", open.Status.Total, open.Status.Done, open.Status.Arms[1].Change)
		}
		runs := runsOf(t, c, ns)
		for _, name := range []string{"decided-baseline-3", "decided-pool-1-3", "open-baseline-4"} {
			if _, ok := runs[name]; ok {
				t.Errorf("run %s was created beyond the sweep's decision or budget", name)
			}
		}
		cm := &corev1.ConfigMap{}
		if err := c.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: open.Status.ReportRef.Name}, cm); err != nil {
			t.Fatal(err)
		}
		if md := cm.Data[report.KeyMarkdown]; !strings.Contains(md, "sequential: 3 repeats of every arm ran (6 runs), look 2 of at most 2") || !strings.Contains(md, "stopped: the budget") {
			t.Errorf("the report does not say how the sequential sweep went:\n%s", md)
		}
	})

	t.Run("a sequential sweep stops an arm once its verdict is decisive; the baseline and the undecided arm run on", func(t *testing.T) {
		ns := env.Namespace(t, "sweep-per-arm")
		lab := newLab()
		startSweepOperator(t, env, lab)
		// pool-1 is three times slower in every repeat: decided at the first look. pool-2 is
		// about 4 % slower, give or take 4 %: no look decides it.
		p95 := map[string][]float64{
			"perarm-baseline": {100, 101, 100}, "perarm-pool-1": {300, 303, 300}, "perarm-pool-2": {108, 100, 108},
		}
		for arm, vs := range p95 {
			for i, v := range vs {
				mustCreate(t, c, runReport(t, ns, fmt.Sprintf("%s-%d", arm, i+1), v))
				lab.finishLoad(fmt.Sprintf("%s-%d", arm, i+1))
			}
		}
		sw := newTestSweep(ns, "perarm", 2, "1", "2")
		sw.Spec.Sequential = &perfexpv1alpha1.SweepSequential{MaxRepeats: 3}
		mustCreate(t, c, sw)

		got := waitSweepPhase(t, c, ns, "perarm", perfexpv1alpha1.SweepSucceeded)
		st := got.Status.Sequential
		if st == nil || st.Repeats != 3 || st.Looks != 2 || len(st.Arms) != 1 || st.Arms[0].Name != "pool-1" || st.Arms[0].Repeats != 2 ||
			st.Arms[0].Change != perfexpv1alpha1.ChangeRegressed {
			t.Errorf("sequential status %+v: want 3 repeats, 2 looks, pool-1 stopped after 2 repeats Regressed", st)
		}
		runs := runsOf(t, c, ns)
		if _, ok := runs["perarm-pool-1-3"]; ok {
			t.Error("the decided arm got a run after its decision")
		}
		for _, name := range []string{"perarm-baseline-3", "perarm-pool-2-3"} {
			if _, ok := runs[name]; !ok {
				t.Errorf("run %s was not created: the baseline and the undecided arm run on", name)
			}
		}
		if got.Status.Total != 8 || got.Status.Arms[1].Change != perfexpv1alpha1.ChangeRegressed || got.Status.Arms[1].Runs != 2 {
			t.Errorf("%d runs, arm %s %s with %d runs", got.Status.Total, got.Status.Arms[1].Name, got.Status.Arms[1].Change, got.Status.Arms[1].Runs)
		}
		cm := &corev1.ConfigMap{}
		if err := c.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: got.Status.ReportRef.Name}, cm); err != nil {
			t.Fatal(err)
		}
		md := cm.Data[report.KeyMarkdown]
		for _, want := range []string{"| pool-1 | Regressed | yes, stopped | 2 | 1 (", "| 2 + 2 |", "| pool-2 |", "no: budget spent | 3 | 2 (", "| 3 + 3 |"} {
			if !strings.Contains(md, want) {
				t.Errorf("the report lacks %q:\n%s", want, md)
			}
		}
		res, err := report.ParseSweepJSON([]byte(cm.Data[report.KeySweepJSON]))
		if err != nil {
			t.Fatal(err)
		}
		// The decision's environment time is its runs' and the baseline's of the same repeats,
		// each from leaving the queue to entering Analyzing (the environment restored), as a
		// confirmation counts it; whole seconds, as the status stores them (the lab's runs may
		// start and end within one).
		want := 0.0
		for _, name := range []string{"perarm-pool-1-1", "perarm-pool-1-2", "perarm-baseline-1", "perarm-baseline-2"} {
			st := runs[name].Status
			if st.StartTime == nil || st.CompletionTime == nil {
				t.Fatalf("run %s has no start or completion time", name)
			}
			restored := st.CompletionTime.Time
			for _, tr := range st.PhaseHistory {
				if tr.Phase == perfexpv1alpha1.PhaseAnalyzing {
					restored = tr.Time.Time
					break
				}
			}
			want += restored.Sub(st.StartTime.Time).Seconds()
		}
		if d := res.Arms[1].Decision; d == nil || d.EnvironmentSeconds != want {
			t.Errorf("pool-1's decision %+v: want %v s of environment time, its runs' and the baseline's", d, want)
		}
	})

	t.Run("a sweep that sets neither repeats nor sequential is sequential by default", func(t *testing.T) {
		ns := env.Namespace(t, "sweep-auto")
		lab := newLab()
		startSweepOperator(t, env, lab)
		for arm, vs := range map[string][]float64{"auto-baseline": {100, 101, 100}, "auto-pool-1": {300, 303, 300}} {
			for i, v := range vs {
				mustCreate(t, c, runReport(t, ns, fmt.Sprintf("%s-%d", arm, i+1), v))
				lab.finishLoad(fmt.Sprintf("%s-%d", arm, i+1))
			}
		}
		mustCreate(t, c, newTestSweep(ns, "auto", 0, "1"))
		got := waitSweepPhase(t, c, ns, "auto", perfexpv1alpha1.SweepSucceeded)
		if got.Spec.Repeats != 0 {
			t.Errorf("the API server defaulted repeats to %d", got.Spec.Repeats)
		}
		st := got.Status.Sequential
		if st == nil || !st.Auto || st.MaxRepeats != 10 || st.Repeats != 3 || st.Looks != 1 || !strings.Contains(st.StopReason, "every arm was decisive after 3 repeats") {
			t.Errorf("sequential status %+v: want auto, a budget of 10, decided at the first look after 3 repeats", st)
		}
		if got.Status.Total != 6 || got.Status.Arms[1].Change != perfexpv1alpha1.ChangeRegressed {
			t.Errorf("%d runs, arm %s", got.Status.Total, got.Status.Arms[1].Change)
		}
	})

	t.Run("a sweep of one run per arm takes each arm's between-run noise from the PerfHistory of its configuration and its baseline's", func(t *testing.T) {
		ns := env.Namespace(t, "sweep-history")
		lab := newLab()
		startSweepOperator(t, env, lab)
		// The arm's run is 1 % slower than the baseline's, with the same within-run noise.
		for name, median := range map[string]float64{"noise-baseline-1": 50, "noise-pool-10-1": 50.5} {
			mustCreate(t, c, resultReport(t, ns, testexp.RunResult(name, median, 7)))
		}
		sw := newTestSweep(ns, "noise", 1, "10")
		sw.Spec.Template.Load.Scenarios = testexp.New(ns, "template").Spec.Load.Scenarios
		mustCreate(t, c, sw)
		var runs map[string]perfexpv1alpha1.PerfExperiment
		eventually(t, 30*time.Second, "2 runs exist", func() error {
			if runs = runsOf(t, c, ns); len(runs) != 2 {
				return fmt.Errorf("%d runs", len(runs))
			}
			return nil
		})
		// Each configuration ran eight times in the last eight hours, its p95 within 1 %.
		var names []string
		for _, run := range []string{"noise-baseline-1", "noise-pool-10-1"} {
			exp := runs[run]
			scripts, err := load.ScenarioScripts(t.Context(), c, &exp)
			if err != nil {
				t.Fatal(err)
			}
			name, fingerprint := history.Key(&exp, scripts)
			names = append(names, name)
			h := &perfexpv1alpha1.PerfHistory{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
			mustCreate(t, c, h)
			h.Status.Fingerprint = fingerprint
			for i, v := range []float64{30, 30.3, 29.7, 30.15, 29.85, 30.3, 29.7, 30.0} {
				h.Status.Records = append(h.Status.Records, perfexpv1alpha1.HistoryRecord{Experiment: fmt.Sprint(run, "-earlier-", i), UID: types.UID(fmt.Sprint(run, i)),
					Time: metav1.NewTime(time.Now().Add(-time.Duration(8-i) * time.Hour)), Validity: perfexpv1alpha1.Valid,
					Scenarios: []perfexpv1alpha1.HistoryScenario{{Name: "s", HistoryStats: perfexpv1alpha1.HistoryStats{P95: fmt.Sprint(v), Avg: fmt.Sprint(v / 2)}}}})
			}
			if err := c.Status().Update(t.Context(), h); err != nil {
				t.Fatal(err)
			}
		}
		if names[0] == names[1] {
			t.Fatalf("the baseline and the arm share history %s", names[0])
		}
		for run := range runs {
			lab.finishLoad(run)
		}
		done := waitSweepPhase(t, c, ns, "noise", perfexpv1alpha1.SweepSucceeded)
		cm := &corev1.ConfigMap{}
		if err := c.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: done.Status.ReportRef.Name}, cm); err != nil {
			t.Fatal(err)
		}
		res, err := report.ParseSweepJSON([]byte(cm.Data[report.KeySweepJSON]))
		if err != nil {
			t.Fatal(err)
		}
		cmp := res.Arms[1].Comparison
		slices.Sort(names)
		want := "between-run sd from PerfHistory " + strings.Join(names, ", ") + ", latest segment (15 runs"
		if cmp == nil || !strings.HasPrefix(cmp.Noise, want) {
			t.Fatalf("arm pool-10's comparison %+v: noise should start %q", cmp, want)
		}
		// Under the assumed 10 % one run each could not tell +1 % from nothing.
		if cmp.Change != perfexpv1alpha1.ChangeNoMeaningfulChange || done.Status.Arms[1].Change != perfexpv1alpha1.ChangeNoMeaningfulChange {
			t.Errorf("arm pool-10 reads %s (status %s), want NoMeaningfulChange under the histories' sd", cmp.Change, done.Status.Arms[1].Change)
		}
		t.Logf("arm pool-10: %s; noise: %s", cmp.Change, cmp.Noise)
	})

	t.Run("a sweep whose arm equals the baseline is refused and creates nothing", func(t *testing.T) {
		ns := env.Namespace(t, "sweep-refused")
		startSweepOperator(t, env, newLab())
		s := newTestSweep(ns, "same", 1, "10")
		s.Spec.Baseline = &perfexpv1alpha1.SweepBaseline{Variant: poolVariant("10")}
		mustCreate(t, c, s)
		got := waitSweepPhase(t, c, ns, "same", perfexpv1alpha1.SweepFailed)
		cond := meta.FindStatusCondition(got.Status.Conditions, perfexpv1alpha1.ConditionReady)
		if cond == nil || cond.Reason != perfexpv1alpha1.ReasonInvalidSweep || !strings.Contains(cond.Message, "arm pool-10 changes nothing compared with the baseline") {
			t.Errorf("Ready %+v, want InvalidSweep naming the arm", cond)
		}
		time.Sleep(time.Second)
		if runs := runsOf(t, c, ns); len(runs) > 0 {
			t.Errorf("a refused sweep created runs: %v", keys(runs))
		}

		t.Log("Corrected, the same sweep runs.")
		got.Spec.Baseline = nil
		if err := c.Update(t.Context(), got); err != nil {
			t.Fatal(err)
		}
		eventually(t, 30*time.Second, "the corrected sweep creates its runs", func() error {
			if runs := runsOf(t, c, ns); len(runs) != 2 {
				return fmt.Errorf("runs %v", keys(runs))
			}
			if s := getSweep(t, c, ns, "same"); s.Status.Phase != perfexpv1alpha1.SweepRunning {
				return fmt.Errorf("phase %s (%s)", s.Status.Phase, s.Status.Message)
			}
			return nil
		})
	})
}

func keys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
