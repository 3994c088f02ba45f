package confirm

import (
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/sweep"
	"github.com/perfexp/perfexp/internal/testexp"
)

func poolVariant(v string) *perfexpv1alpha1.Variant {
	return &perfexpv1alpha1.Variant{Workloads: []perfexpv1alpha1.WorkloadChange{{
		WorkloadSelector: perfexpv1alpha1.WorkloadSelector{Names: []string{"circulation"}},
		Env:              &perfexpv1alpha1.EnvChange{Set: []perfexpv1alpha1.EnvVar{{Name: "HTTP_MAXPOOLSIZE", Value: v}}},
	}}}
}

// pair is a baseline (pool 10) and an experiment (pool 50) compared with it, asking for
// confirmation.
func pair(mutate ...func(exp, base *perfexpv1alpha1.PerfExperiment)) (exp, base *perfexpv1alpha1.PerfExperiment) {
	base = testexp.New("lib", "base", testexp.WithScenarios(testexp.Constant("checkinout", 5, time.Minute)), testexp.WithVariant(poolVariant("10")))
	exp = testexp.New("lib", "pool50", testexp.WithScenarios(testexp.Constant("checkinout", 5, time.Minute)), testexp.WithVariant(poolVariant("50")),
		testexp.WithQueue("env"), testexp.WithPriority(7))
	exp.Spec.Baseline = &perfexpv1alpha1.BaselineRef{Name: "base"}
	exp.Spec.Analysis = &perfexpv1alpha1.Analysis{Confirm: &perfexpv1alpha1.Confirm{Mode: perfexpv1alpha1.ConfirmAuto}}
	for _, m := range mutate {
		m(exp, base)
	}
	return exp, base
}

func configMapPatch() perfexpv1alpha1.ObjectPatch {
	return perfexpv1alpha1.ObjectPatch{Target: perfexpv1alpha1.ObjectTarget{APIVersion: "v1", Kind: "ConfigMap", Name: "settings"}, Patch: `{"data":{"pool":"50"}}`}
}

func TestNeeded(t *testing.T) {
	tests := []struct {
		name   string
		change perfexpv1alpha1.Change
		noCmp  bool
		want   bool
	}{
		{name: "Inconclusive", change: perfexpv1alpha1.ChangeInconclusive, want: true},
		{name: "Unknown", change: perfexpv1alpha1.ChangeUnknown, want: true},
		{name: "no comparison", noCmp: true, want: true},
		{name: "Regressed", change: perfexpv1alpha1.ChangeRegressed},
		{name: "Improved", change: perfexpv1alpha1.ChangeImproved},
		{name: "NoMeaningfulChange", change: perfexpv1alpha1.ChangeNoMeaningfulChange},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			exp, _ := pair()
			if !tt.noCmp {
				exp.Status.Comparison = &perfexpv1alpha1.Comparison{Change: tt.change}
			}
			if got := Needed(exp); got != tt.want {
				t.Errorf("Needed = %v, want %v", got, tt.want)
			}
		})
	}
	exp, _ := pair()
	exp.Spec.Analysis.Confirm = nil
	if Needed(exp) {
		t.Error("an experiment without confirm needs a confirmation")
	}
}

func TestSweep(t *testing.T) {
	t.Run("the baseline's variant against the experiment's, in its queue, sequential within the budget", func(t *testing.T) {
		exp, base := pair(func(exp, _ *perfexpv1alpha1.PerfExperiment) {
			exp.Status.Queue = "env"
			exp.Spec.Analysis.FailOnRegression = new(bool)
			exp.Spec.Analysis.Confirm.MaxDuration = &metav1.Duration{Duration: 3 * time.Hour}
		})
		sw, note, err := Sweep(exp, base)
		if err != nil || note != "" {
			t.Fatalf("Sweep: %v (note %q)", err, note)
		}
		s := sw.Spec
		if sw.Name != "pool50-confirm" || s.Queue != "env" || s.Priority != 7 || s.Repeats != 3 || s.Order != perfexpv1alpha1.SweepOrderRandomized ||
			s.Sequential == nil || s.Sequential.MaxRepeats != DefaultMaxRepeats || s.Sequential.MaxDuration.Duration != 3*time.Hour || s.MinMeaningfulChangePercent != 5 {
			t.Errorf("sweep %s: %+v", sw.Name, s)
		}
		if s.Baseline == nil || s.Baseline.Variant.Workloads[0].Env.Set[0].Value != "10" || len(s.Arms) != 1 || s.Arms[0].Name != Arm ||
			s.Arms[0].Variant.Workloads[0].Env.Set[0].Value != "50" {
			t.Errorf("arms: baseline %+v, arms %+v", s.Baseline, s.Arms)
		}
		if s.Template.Analysis.Confirm != nil || s.Template.Analysis.FailOnRegression == nil || exp.Spec.Analysis.Confirm == nil {
			t.Errorf("template analysis %+v; the experiment's own confirm %+v", s.Template.Analysis, exp.Spec.Analysis.Confirm)
		}
		// The sweep's own planner accepts it: two arms, runs <sweep>-<arm>-<repeat>.
		plan, err := sweep.NewPlan(sw)
		if err != nil {
			t.Fatalf("the sweep's planner refused the confirmation: %v", err)
		}
		if len(plan.Runs) != 6 || len(plan.RunsOf(Arm)) != 3 || plan.RunsOf(Arm)[0].Name != "pool50-confirm-variant-1" {
			t.Errorf("plan runs %+v", plan.Runs)
		}
		if sweep.MaxRepeats(sw) != DefaultMaxRepeats {
			t.Errorf("budget %d repeats", sweep.MaxRepeats(sw))
		}
	})

	t.Run("a small budget looks first at the budget", func(t *testing.T) {
		exp, base := pair(func(exp, _ *perfexpv1alpha1.PerfExperiment) { exp.Spec.Analysis.Confirm.MaxRepeats = 2 })
		sw, _, err := Sweep(exp, base)
		if err != nil || sw.Spec.Repeats != 2 || sw.Spec.Sequential.MaxRepeats != 2 {
			t.Fatalf("%v: %+v", err, sw.Spec)
		}
	})

	t.Run("a fractional minimum meaningful change is rounded, and said so", func(t *testing.T) {
		exp, base := pair(func(exp, _ *perfexpv1alpha1.PerfExperiment) {
			q := resource.MustParse("2.5")
			exp.Spec.Analysis.MinMeaningfulChangePercent = &q
		})
		sw, note, err := Sweep(exp, base)
		if err != nil || sw.Spec.MinMeaningfulChangePercent != 3 || !strings.Contains(note, "2.5% was rounded to 3%") {
			t.Errorf("%v: δ %d, note %q", err, sw.Spec.MinMeaningfulChangePercent, note)
		}
	})

	t.Run("a baseline that needs no more than the experiment's variant is confirmed", func(t *testing.T) {
		for name, mutate := range map[string]func(exp, base *perfexpv1alpha1.PerfExperiment){
			"no variant (the environment as it is)": func(_, base *perfexpv1alpha1.PerfExperiment) { base.Spec.Variant = nil },
			"a kind the experiment patches too": func(exp, base *perfexpv1alpha1.PerfExperiment) {
				exp.Spec.Variant.Patches = []perfexpv1alpha1.ObjectPatch{configMapPatch()}
				base.Spec.Variant = &perfexpv1alpha1.Variant{Patches: []perfexpv1alpha1.ObjectPatch{configMapPatch()}}
			},
			"a Deployment by a generic patch, the experiment's by workloads": func(_, base *perfexpv1alpha1.PerfExperiment) {
				base.Spec.Variant = &perfexpv1alpha1.Variant{Patches: []perfexpv1alpha1.ObjectPatch{{
					Target: perfexpv1alpha1.ObjectTarget{APIVersion: "apps/v1", Kind: "Deployment", Name: "circulation"}, Patch: `{"spec":{"replicas":2}}`}}}
			},
		} {
			exp, base := pair(mutate)
			if _, _, err := Sweep(exp, base); err != nil {
				t.Errorf("%s: %v", name, err)
			}
		}
	})

	refusals := []struct {
		name, want string
		mutate     func(exp, base *perfexpv1alpha1.PerfExperiment)
	}{
		{name: "no variant", want: "no spec.variant", mutate: func(exp, _ *perfexpv1alpha1.PerfExperiment) { exp.Spec.Variant = nil }},
		{name: "another environment", want: "ran against namespace other", mutate: func(_, base *perfexpv1alpha1.PerfExperiment) { base.Spec.TargetNamespace = "other" }},
		{name: "an Invalid run", want: "own results are Invalid", mutate: func(exp, _ *perfexpv1alpha1.PerfExperiment) { exp.Status.Verdict = perfexpv1alpha1.VerdictInvalid }},
		{name: "no confirm", want: "does not ask for confirmation", mutate: func(exp, _ *perfexpv1alpha1.PerfExperiment) { exp.Spec.Analysis.Confirm = nil }},
		// The baseline's variant changes what the confirmed experiment's author was never
		// checked for (each accepted before: the operator re-applied it on their behalf).
		{name: "the baseline patches a kind the experiment does not", want: "the baseline base's variant needs patch ConfigMap, which this experiment's variant does not",
			mutate: func(_, base *perfexpv1alpha1.PerfExperiment) {
				base.Spec.Variant.Patches = []perfexpv1alpha1.ObjectPatch{configMapPatch()}
			}},
		{name: "the baseline patches StatefulSets", want: "needs patch StatefulSet.apps,",
			mutate: func(_, base *perfexpv1alpha1.PerfExperiment) {
				base.Spec.Variant.Workloads[0].Kind = perfexpv1alpha1.WorkloadKindStatefulSet
			}},
		{name: "the baseline switches a Strimzi Kafka", want: "needs patch Kafka.kafka.strimzi.io,",
			mutate: func(_, base *perfexpv1alpha1.PerfExperiment) {
				base.Spec.Variant.Kafka = &perfexpv1alpha1.KafkaVariant{StrimziMode: &perfexpv1alpha1.StrimziModeSwitch{Name: "kafka", KRaft: "enabled"}}
			}},
		{name: "the baseline reads a Kafka in another namespace", want: "needs get Kafka.kafka.strimzi.io in namespace kafka-team,",
			mutate: func(_, base *perfexpv1alpha1.PerfExperiment) {
				base.Spec.Variant.Kafka = &perfexpv1alpha1.KafkaVariant{Bootstrap: &perfexpv1alpha1.KafkaBootstrapSwitch{
					Workloads: perfexpv1alpha1.WorkloadSelector{Names: []string{"circulation"}},
					FromKafka: &perfexpv1alpha1.StrimziKafkaRef{Name: "kafka", Namespace: "kafka-team"}}}
			}},
	}
	for _, tt := range refusals {
		t.Run("refused: "+tt.name, func(t *testing.T) {
			exp, base := pair(tt.mutate)
			if _, _, err := Sweep(exp, base); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want %q", err, tt.want)
			}
		})
	}
}

func TestEnvironmentTime(t *testing.T) {
	at := func(m int) metav1.Time { return metav1.NewTime(time.Date(2026, 11, 25, 10, m, 0, 0, time.UTC)) }
	run := func(start int, history map[perfexpv1alpha1.Phase]int, completed int) perfexpv1alpha1.PerfExperiment {
		var e perfexpv1alpha1.PerfExperiment
		if start >= 0 {
			s := at(start)
			e.Status.StartTime = &s
		}
		for _, p := range []perfexpv1alpha1.Phase{perfexpv1alpha1.PhasePreparing, perfexpv1alpha1.PhaseAnalyzing, perfexpv1alpha1.PhaseSucceeded, perfexpv1alpha1.PhaseFailed} {
			if m, ok := history[p]; ok {
				e.Status.PhaseHistory = append(e.Status.PhaseHistory, perfexpv1alpha1.PhaseTransition{Phase: p, Time: at(m)})
			}
		}
		if completed >= 0 {
			c := at(completed)
			e.Status.CompletionTime = &c
		}
		return e
	}
	runs := []perfexpv1alpha1.PerfExperiment{
		// Held 0:00-0:07, analysed until 0:09: 7 minutes.
		run(0, map[perfexpv1alpha1.Phase]int{perfexpv1alpha1.PhasePreparing: 0, perfexpv1alpha1.PhaseAnalyzing: 7, perfexpv1alpha1.PhaseSucceeded: 9}, 9),
		// Failed while holding it, restored and ended at 0:15: 5 minutes.
		run(10, map[perfexpv1alpha1.Phase]int{perfexpv1alpha1.PhasePreparing: 10, perfexpv1alpha1.PhaseFailed: 15}, 15),
		// Never left the queue: nothing.
		run(-1, nil, 20),
		// Still running: nothing yet.
		run(20, map[perfexpv1alpha1.Phase]int{perfexpv1alpha1.PhasePreparing: 20}, -1),
	}
	if got := EnvironmentTime(runs); got != 12*time.Minute {
		t.Errorf("EnvironmentTime = %s, want 12m", got)
	}
}

func TestRead(t *testing.T) {
	created := time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)
	ended := func(phase perfexpv1alpha1.SweepPhase, change perfexpv1alpha1.Change, verdict perfexpv1alpha1.Verdict, stop string) *perfexpv1alpha1.PerfSweep {
		return &perfexpv1alpha1.PerfSweep{
			ObjectMeta: metav1.ObjectMeta{Name: "pool50-confirm", CreationTimestamp: metav1.NewTime(created)},
			Spec:       perfexpv1alpha1.PerfSweepSpec{Repeats: 3},
			Status: perfexpv1alpha1.PerfSweepStatus{Phase: phase, Done: 10, Verdict: verdict, Message: "sweep message",
				Sequential: &perfexpv1alpha1.SweepSequentialStatus{Repeats: 5, Looks: 3, StopReason: stop},
				Arms:       []perfexpv1alpha1.SweepArmStatus{{Name: perfexpv1alpha1.BaselineArm}, {Name: Arm, Change: change, Message: "p95 +12 % [+8, +16]"}},
				ReportRef:  &perfexpv1alpha1.LocalObjectReference{Name: "pool50-confirm-report"}},
		}
	}
	tests := []struct {
		name           string
		sweep          *perfexpv1alpha1.PerfSweep
		status         metav1.ConditionStatus
		reason, substr string
		fail           bool
	}{
		{name: "decisive", sweep: ended(perfexpv1alpha1.SweepSucceeded, perfexpv1alpha1.ChangeRegressed, perfexpv1alpha1.VerdictFail, "every arm was decisive after 5 repeats"),
			status: metav1.ConditionTrue, reason: perfexpv1alpha1.ReasonDecisive, substr: "Regressed after 5 blocks, 10 runs", fail: true},
		{name: "budget spent", sweep: ended(perfexpv1alpha1.SweepSucceeded, perfexpv1alpha1.ChangeInconclusive, perfexpv1alpha1.VerdictPass, "the budget of 5 repeats is spent"),
			status: metav1.ConditionFalse, reason: perfexpv1alpha1.ReasonBudgetSpent, substr: "still Inconclusive after 5 blocks, 10 runs"},
		{name: "sweep failed", sweep: ended(perfexpv1alpha1.SweepFailed, "", perfexpv1alpha1.VerdictInvalid, ""),
			status: metav1.ConditionFalse, reason: perfexpv1alpha1.ReasonConfirmationFailed, substr: "ended Failed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := Read(tt.sweep, nil, created.Add(95*time.Minute))
			if o.Status != tt.status || o.Reason != tt.reason || !strings.Contains(o.Message, tt.substr) || o.FailVerdict != tt.fail {
				t.Errorf("got %s/%s %q fail=%v", o.Status, o.Reason, o.Message, o.FailVerdict)
			}
			c := o.Confirmation
			if c.Repeats != 5 || c.Runs != 10 || c.Elapsed.Duration != 95*time.Minute || c.ReportRef.Name != "pool50-confirm-report" {
				t.Errorf("confirmation %+v", c)
			}
		})
	}
}
