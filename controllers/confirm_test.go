package controllers_test

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/controllers"
	"github.com/perfexp/perfexp/internal/queue"
	"github.com/perfexp/perfexp/internal/report"
	"github.com/perfexp/perfexp/internal/step"
	"github.com/perfexp/perfexp/internal/testenv"
)

// These user stories follow one PerfExperiment with a baseline and spec.analysis.confirm: when
// its single run is not decisive it runs the baseline and its variant again, as a sequential
// sweep it owns, through the same queue and the lab's environment, and reports the answer.

// comparingLab is the lab whose analysis also writes a comparison headline for the named
// experiments (the lab's own writes none), and names a report ConfigMap for those in reports.
type comparingLab struct {
	*lab
	change  map[string]perfexpv1alpha1.Change
	reports map[string]bool
	invalid map[string]bool
}

func (l comparingLab) Analyze(ctx context.Context, exp, baseline *perfexpv1alpha1.PerfExperiment) (step.Result, error) {
	res, err := l.lab.Analyze(ctx, exp, baseline)
	if ch, ok := l.change[exp.Name]; ok && res.Done && baseline != nil {
		exp.Status.Comparison = &perfexpv1alpha1.Comparison{Baseline: baseline.Name, Change: ch}
	}
	if l.invalid[exp.Name] && res.Done {
		exp.Status.Verdict = perfexpv1alpha1.VerdictInvalid
	}
	if l.reports[exp.Name] && res.Done {
		exp.Status.ReportRef = &perfexpv1alpha1.LocalObjectReference{Name: exp.ReportName()}
	}
	return res, err
}

// startConfirmOperator runs the experiment and sweep reconcilers, as the operator does.
func startConfirmOperator(t *testing.T, env *testenv.Env, lab *lab, analyzer controllers.Analyzer) {
	t.Helper()
	mgr, err := ctrl.NewManager(env.Config, ctrl.Options{Scheme: env.Scheme, Metrics: metricsserver.Options{BindAddress: "0"}})
	if err != nil {
		t.Fatal(err)
	}
	experiments := &controllers.PerfExperimentReconciler{
		Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), Recorder: mgr.GetEventRecorder("perfexp"), Clock: clock.RealClock{},
		Lock:        &queue.Lock{Client: mgr.GetClient(), Namespace: leaseNamespace, Clock: clock.RealClock{}},
		Environment: lab, Load: lab, Analyzer: analyzer, SkipNameValidation: true, MaxConcurrentReconciles: 2,
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
}

// confirmed is the experiment each story confirms, within a budget of 4 blocks.
const (
	confirmed     = "pool50"
	confirmBudget = 4
)

// confirmedPair creates the baseline (HTTP_MAXPOOLSIZE 10), waits for it, then the experiment
// (HTTP_MAXPOOLSIZE 50) compared with it and asking for confirmation.
func confirmedPair(t *testing.T, env *testenv.Env, lab *lab, ns string) {
	t.Helper()
	name := confirmed
	c := env.Client
	base := experiment(ns, name+"-base", ns, 0)
	base.Spec.Variant = poolVariant("10")
	lab.finishLoad(base.Name)
	mustCreate(t, c, base)
	waitPhase(t, c, ns, base.Name, perfexpv1alpha1.PhaseSucceeded)

	exp := experiment(ns, name, ns, 0)
	exp.Spec.Variant = poolVariant("50")
	exp.Spec.Baseline = &perfexpv1alpha1.BaselineRef{Name: base.Name}
	exp.Spec.Analysis = &perfexpv1alpha1.Analysis{FailOnRegression: ptr.To(true), Confirm: &perfexpv1alpha1.Confirm{MaxRepeats: confirmBudget}}
	// The lab rolls nothing: the confirming sweep's runs need no settle (it keeps this one).
	exp.Spec.Settle = &metav1.Duration{}
	lab.finishLoad(exp.Name)
	mustCreate(t, c, exp)
}

// scriptConfirmation publishes the results each confirmation run would have (p95 per repeat
// of the baseline and the variant) and lets their load finish.
func scriptConfirmation(t *testing.T, env *testenv.Env, lab *lab, ns string, baseline, variant []float64) {
	t.Helper()
	for arm, p95s := range map[string][]float64{"baseline": baseline, "variant": variant} {
		for i, v := range p95s {
			run := fmt.Sprintf("%s-confirm-%s-%d", confirmed, arm, i+1)
			mustCreate(t, env.Client, runReport(t, ns, run, v))
			lab.finishLoad(run)
		}
	}
}

// waitConfirmed waits for the confirmed experiment to reach a phase.
func waitConfirmed(t *testing.T, env *testenv.Env, ns string, want perfexpv1alpha1.Phase) *perfexpv1alpha1.PerfExperiment {
	t.Helper()
	name := confirmed
	var exp *perfexpv1alpha1.PerfExperiment
	eventually(t, 120*time.Second, fmt.Sprintf("%s reaches %s", name, want), func() error {
		exp = get(t, env.Client, ns, name)
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

func passedThrough(exp *perfexpv1alpha1.PerfExperiment, p perfexpv1alpha1.Phase) bool {
	return slices.ContainsFunc(exp.Status.PhaseHistory, func(h perfexpv1alpha1.PhaseTransition) bool { return h.Phase == p })
}

func TestConfirm(t *testing.T) {
	env := testenv.Start(t)
	env.Namespace(t, leaseNamespace)
	c := env.Client

	t.Run("an inconclusive experiment runs its baseline and variant again, in blocks through the queue, until decisive", func(t *testing.T) {
		ns := env.Namespace(t, "confirm-decisive")
		lab := newLab()
		startConfirmOperator(t, env, lab, comparingLab{lab: lab, reports: map[string]bool{confirmed: true}})
		// The variant is three times slower in every block: decided at the first look, after
		// 3 blocks, within a budget of 4.
		scriptConfirmation(t, env, lab, ns, []float64{100, 101, 100, 101}, []float64{300, 303, 300, 303})
		confirmedPair(t, env, lab, ns)
		// The report the analysis would have published, which the confirmation adds to.
		created := get(t, c, ns, confirmed)
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: created.ReportName()},
			Data: map[string]string{report.KeyMarkdown: "# pool50\n\n## Comparison\n\nInconclusive.\n"}}
		if err := controllerutil.SetControllerReference(created, cm, env.Scheme); err != nil {
			t.Fatal(err)
		}
		mustCreate(t, c, cm)

		exp := waitConfirmed(t, env, ns, perfexpv1alpha1.PhaseSucceeded)
		if !passedThrough(exp, perfexpv1alpha1.PhaseConfirming) {
			t.Errorf("the experiment never was Confirming: %+v", exp.Status.PhaseHistory)
		}
		conf := exp.Status.Confirmation
		if conf == nil || conf.Change != perfexpv1alpha1.ChangeRegressed || conf.Repeats != 3 || conf.Runs != 6 ||
			conf.EnvironmentTime == nil || conf.Elapsed == nil || conf.ReportRef == nil || !strings.Contains(conf.StopReason, "decisive") {
			t.Fatalf("status.confirmation %+v", conf)
		}
		t.Logf("status.confirmation: change %s, %d blocks, %d runs, environment time %s, elapsed %s; %s",
			conf.Change, conf.Repeats, conf.Runs, conf.EnvironmentTime.Duration, conf.Elapsed.Duration, exp.Status.Message)
		if cond := condition(exp, perfexpv1alpha1.ConditionConfirmed); cond == nil || cond.Status != metav1.ConditionTrue ||
			cond.Reason != perfexpv1alpha1.ReasonDecisive || !strings.Contains(cond.Message, "Regressed after 3 blocks, 6 runs") {
			t.Errorf("Confirmed %+v", cond)
		}
		// failOnRegression holds for the confirmed answer as for a single run's.
		if exp.Status.Verdict != perfexpv1alpha1.VerdictFail || !strings.Contains(exp.Status.Message, "confirmed Regressed over 3 blocks (6 runs") {
			t.Errorf("verdict %s, message %q", exp.Status.Verdict, exp.Status.Message)
		}

		sw := getSweep(t, c, ns, conf.Sweep)
		if sw == nil || !metav1.IsControlledBy(sw, exp) || sw.Spec.Sequential == nil || sw.Spec.Queue != ns ||
			sw.Spec.Template.Analysis.Confirm != nil || len(sw.Spec.Arms) != 1 {
			t.Fatalf("confirmation sweep %+v", sw)
		}

		// One run at a time, each restored, the blocks in order: every run of block k
		// prepared before any of block k+1, each block one baseline and one variant run.
		if v := lab.violations(); len(v) > 0 {
			t.Errorf("two experiments held the environment at once: %v", v)
		}
		var blocks []int
		for _, name := range lab.order() {
			if !strings.HasPrefix(name, "pool50-confirm-") {
				continue
			}
			if lab.restores(name) == 0 {
				t.Errorf("run %s was never restored", name)
			}
			repeat, _ := strconv.Atoi(name[strings.LastIndex(name, "-")+1:])
			blocks = append(blocks, repeat)
		}
		if want := []int{1, 1, 2, 2, 3, 3}; !slices.Equal(blocks, want) {
			t.Errorf("the confirmation's runs ran in blocks %v, want %v", blocks, want)
		}
		if get(t, c, ns, "pool50-confirm-variant-4") != nil {
			t.Error("a fourth block was created although the third look was decisive")
		}

		// The experiment's report says it too.
		if err := c.Get(t.Context(), client.ObjectKeyFromObject(cm), cm); err != nil {
			t.Fatal(err)
		}
		md := cm.Data[report.KeyMarkdown]
		if !strings.HasPrefix(md, "# pool50") || !strings.Contains(md, "## Confirmation") || !strings.Contains(md, "| Answer | **Regressed** (Confirmed=True, Decisive) |") ||
			!strings.Contains(md, "| Blocks | 3 ") || !strings.Contains(md, "| Runs ended | 6 |") || cm.Data[report.KeyConfirmation] == "" {
			t.Errorf("the report does not say what the confirmation found:\n%s", md)
		}
	})

	t.Run("a confirmation that cannot decide stops at its budget and says so", func(t *testing.T) {
		ns := env.Namespace(t, "confirm-budget")
		lab := newLab()
		startConfirmOperator(t, env, lab, lab)
		// The variant is as often faster as slower: no look decides it.
		scriptConfirmation(t, env, lab, ns, []float64{100, 100, 100, 100}, []float64{150, 60, 150, 60})
		confirmedPair(t, env, lab, ns)

		exp := waitConfirmed(t, env, ns, perfexpv1alpha1.PhaseSucceeded)
		conf := exp.Status.Confirmation
		if conf == nil || conf.Repeats != 4 || conf.Runs != 8 || confirmDecisive(conf.Change) || !strings.Contains(conf.StopReason, "budget of 4 repeats is spent") {
			t.Fatalf("status.confirmation %+v", conf)
		}
		if cond := condition(exp, perfexpv1alpha1.ConditionConfirmed); cond == nil || cond.Status != metav1.ConditionFalse || cond.Reason != perfexpv1alpha1.ReasonBudgetSpent {
			t.Errorf("Confirmed %+v", cond)
		}
		if exp.Status.Verdict != perfexpv1alpha1.VerdictPass {
			t.Errorf("verdict %s; an undecided confirmation changes no verdict", exp.Status.Verdict)
		}
	})

	t.Run("a single run that is already decisive is not run again", func(t *testing.T) {
		ns := env.Namespace(t, "confirm-single")
		lab := newLab()
		startConfirmOperator(t, env, lab, comparingLab{lab: lab, change: map[string]perfexpv1alpha1.Change{confirmed: perfexpv1alpha1.ChangeNoMeaningfulChange}})
		confirmedPair(t, env, lab, ns)

		exp := waitConfirmed(t, env, ns, perfexpv1alpha1.PhaseSucceeded)
		if cond := condition(exp, perfexpv1alpha1.ConditionConfirmed); cond == nil || cond.Status != metav1.ConditionTrue || cond.Reason != perfexpv1alpha1.ReasonSingleRunDecisive {
			t.Errorf("Confirmed %+v", cond)
		}
		if exp.Status.Confirmation != nil || passedThrough(exp, perfexpv1alpha1.PhaseConfirming) || getSweep(t, c, ns, "pool50-confirm") != nil {
			t.Errorf("a decisive single run was confirmed: %+v", exp.Status.Confirmation)
		}
	})

	t.Run("an Invalid run is not confirmed: its repeats would compare nothing", func(t *testing.T) {
		ns := env.Namespace(t, "confirm-invalid")
		lab := newLab()
		startConfirmOperator(t, env, lab, comparingLab{lab: lab, invalid: map[string]bool{confirmed: true}})
		confirmedPair(t, env, lab, ns)

		exp := waitConfirmed(t, env, ns, perfexpv1alpha1.PhaseSucceeded)
		if cond := condition(exp, perfexpv1alpha1.ConditionConfirmed); cond == nil || cond.Status != metav1.ConditionFalse ||
			cond.Reason != perfexpv1alpha1.ReasonConfirmationFailed || !strings.Contains(cond.Message, "Invalid") {
			t.Errorf("Confirmed %+v", cond)
		}
		if passedThrough(exp, perfexpv1alpha1.PhaseConfirming) || getSweep(t, c, ns, "pool50-confirm") != nil {
			t.Error("an Invalid run was confirmed")
		}
	})

	t.Run("spec.abort while confirming aborts the sweep, whose running run restores, then the experiment", func(t *testing.T) {
		ns := env.Namespace(t, "confirm-abort")
		lab := newLab()
		startConfirmOperator(t, env, lab, lab)
		confirmedPair(t, env, lab, ns)

		// No confirmation run's load finishes: the first holds the environment until aborted.
		var running string
		eventually(t, 60*time.Second, "a confirmation run holds the environment", func() error {
			for name, e := range runsOf(t, c, ns) {
				if strings.HasPrefix(name, "pool50-confirm-") && e.Status.Phase == perfexpv1alpha1.PhaseRunning {
					running = name
					return nil
				}
			}
			return fmt.Errorf("no confirmation run is Running yet")
		})
		exp := get(t, c, ns, confirmed)
		if exp.Status.Phase != perfexpv1alpha1.PhaseConfirming {
			t.Fatalf("phase %s while its confirmation runs", exp.Status.Phase)
		}
		patch := client.MergeFrom(exp.DeepCopy())
		exp.Spec.Abort = true
		if err := c.Patch(t.Context(), exp, patch); err != nil {
			t.Fatal(err)
		}

		exp = waitConfirmed(t, env, ns, perfexpv1alpha1.PhaseAborted)
		if cond := condition(exp, perfexpv1alpha1.ConditionConfirmed); cond == nil || cond.Status != metav1.ConditionFalse || cond.Reason != perfexpv1alpha1.ReasonAborted {
			t.Errorf("Confirmed %+v", cond)
		}
		if sw := getSweep(t, c, ns, "pool50-confirm"); sw == nil || !sw.Spec.Abort || sw.Status.Phase != perfexpv1alpha1.SweepAborted {
			t.Errorf("confirmation sweep %+v", sw)
		}
		if lab.restores(running) == 0 {
			t.Errorf("the aborted run %s was not restored", running)
		}
		if r := get(t, c, ns, running); r == nil || r.Status.Phase != perfexpv1alpha1.PhaseAborted {
			t.Errorf("run %s: %+v", running, r)
		}
	})
}

func confirmDecisive(c perfexpv1alpha1.Change) bool {
	return c == perfexpv1alpha1.ChangeRegressed || c == perfexpv1alpha1.ChangeImproved || c == perfexpv1alpha1.ChangeNoMeaningfulChange
}
