package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/history"
	"github.com/perfexp/perfexp/internal/report"
	"github.com/perfexp/perfexp/internal/result"
	"github.com/perfexp/perfexp/internal/testenv"
	"github.com/perfexp/perfexp/internal/testexp"
)

// Story: after a study, an engineer prints the comparison of two experiments and the table of a
// sweep from kubectl.
func TestCompare(t *testing.T) {
	env := testenv.Start(t)
	ns := env.Namespace(t, "compare")
	conn := &connection{client: env.Client, namespace: ns}
	ctx := t.Context()
	f := func(v float64) *float64 { return &v }
	create := func(obj client.Object) {
		t.Helper()
		if err := env.Client.Create(ctx, obj); err != nil {
			t.Fatal(err)
		}
	}
	finished := func(name string, res *result.Result) {
		t.Helper()
		exp := newExperiment(ns, name)
		create(exp)
		create(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name + "-report"}, Data: map[string]string{report.KeyJSON: mustJSON(t, res)}})
		exp.Status.Phase = perfexpv1alpha1.PhaseSucceeded
		exp.Status.ReportRef = &perfexpv1alpha1.LocalObjectReference{Name: name + "-report"}
		if err := env.Client.Status().Update(ctx, exp); err != nil {
			t.Fatal(err)
		}
	}
	scenario := func(p95 float64) []result.ScenarioResult {
		return []result.ScenarioResult{{Name: "s", Validity: perfexpv1alpha1.Valid, RequestStats: result.RequestStats{P95: f(p95)}}}
	}
	finished("base", &result.Result{Experiment: "base", Validity: perfexpv1alpha1.Valid, Scenarios: scenario(100)})
	finished("variant", &result.Result{Experiment: "variant", Validity: perfexpv1alpha1.Valid, Scenarios: scenario(130),
		Comparison: &result.Comparison{Baseline: "base", Change: perfexpv1alpha1.ChangeRegressed, Message: "s p95 rose", Metrics: []result.MetricComparison{
			{Metric: "s p95", Scenario: "s", Kind: perfexpv1alpha1.MetricP95, Unit: "ms", Baseline: f(100), Value: f(130), DeltaPercent: f(30),
				Samples: 20, BaselineSamples: 20, Change: perfexpv1alpha1.ChangeRegressed},
			{Metric: "shop/api cpu avg", Workload: "Deployment/shop/api", Pods: 2, BaselinePods: 1, Kind: result.MetricCPU, Unit: "cores", Baseline: f(0.4), Value: f(0.8),
				DeltaPercent: f(100), Estimate: f(99), Low: f(95), High: f(103), Scale: result.ScalePercent, Samples: 19, BaselineSamples: 19, Change: perfexpv1alpha1.ChangeRegressed},
		}}})
	finished("other", &result.Result{Experiment: "other", Validity: perfexpv1alpha1.Valid, Scenarios: scenario(90)})
	// Two runs never compared, the second 1 % slower, whose configurations each ran eight times
	// in the last eight hours with p95 within 1 %; and a third that declares its noise.
	finished("hist-base", testexp.RunResult("hist-base", 50, 7))
	finishedAs := func(exp *perfexpv1alpha1.PerfExperiment, res *result.Result) {
		t.Helper()
		create(exp)
		create(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: exp.Name + "-report"}, Data: map[string]string{report.KeyJSON: mustJSON(t, res)}})
		exp.Status.Phase = perfexpv1alpha1.PhaseSucceeded
		exp.Status.ReportRef = &perfexpv1alpha1.LocalObjectReference{Name: exp.Name + "-report"}
		if err := env.Client.Status().Update(ctx, exp); err != nil {
			t.Fatal(err)
		}
	}
	pool10 := testexp.WithVariant(&perfexpv1alpha1.Variant{Workloads: []perfexpv1alpha1.WorkloadChange{{
		WorkloadSelector: perfexpv1alpha1.WorkloadSelector{Names: []string{"api"}},
		Env:              &perfexpv1alpha1.EnvChange{Set: []perfexpv1alpha1.EnvVar{{Name: "POOL", Value: "10"}}}}}})
	finishedAs(testexp.New(ns, "hist-variant", pool10), testexp.RunResult("hist-variant", 50.5, 7))
	declared := testexp.New(ns, "hist-declared", pool10)
	sd := resource.MustParse("4")
	declared.Spec.Analysis = &perfexpv1alpha1.Analysis{BetweenRun: &perfexpv1alpha1.BetweenRunNoise{SDPercent: &sd}}
	finishedAs(declared, testexp.RunResult("hist-declared", 50.5, 7))
	var histories []string
	for _, name := range []string{"hist-base", "hist-variant"} {
		exp := &perfexpv1alpha1.PerfExperiment{}
		if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, exp); err != nil {
			t.Fatal(err)
		}
		key, fingerprint := history.Key(exp, nil)
		histories = append(histories, key)
		h := &perfexpv1alpha1.PerfHistory{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: key}}
		create(h)
		h.Status.Fingerprint = fingerprint
		for i, v := range []float64{30, 30.3, 29.7, 30.15, 29.85, 30.3, 29.7, 30.0} {
			h.Status.Records = append(h.Status.Records, perfexpv1alpha1.HistoryRecord{Experiment: fmt.Sprint(name, "-", i), UID: types.UID(fmt.Sprint(name, i)),
				Time: metav1.NewTime(time.Now().Add(-time.Duration(8-i) * time.Hour)), Validity: perfexpv1alpha1.Valid,
				Scenarios: []perfexpv1alpha1.HistoryScenario{{Name: "s", HistoryStats: perfexpv1alpha1.HistoryStats{P95: fmt.Sprint(v), Avg: fmt.Sprint(v / 2)}}}})
		}
		if err := env.Client.Status().Update(ctx, h); err != nil {
			t.Fatal(err)
		}
	}
	slices.Sort(histories)
	fromHistory := "between-run sd from PerfHistory " + strings.Join(histories, ", ") + ", latest segment (15 runs, newest 1 h old, oldest 8 h"
	finished("noisy", &result.Result{Experiment: "noisy", Validity: perfexpv1alpha1.Valid, Scenarios: scenario(60),
		Comparison: &result.Comparison{Baseline: "base", Change: perfexpv1alpha1.ChangeInconclusive, Disturbed: "the node was busier during the baseline", Metrics: []result.MetricComparison{
			{Metric: "s p95", Scenario: "s", Kind: perfexpv1alpha1.MetricP95, Unit: "ms", Baseline: f(100), Value: f(60), DeltaPercent: f(-40),
				Samples: 20, BaselineSamples: 20, Change: perfexpv1alpha1.ChangeInconclusive},
		}}})

	// A finished sweep with its report, and one still running.
	sweepResult := &report.SweepResult{Sweep: "pool", Namespace: ns, Repeats: 2, MinMeaningfulChangePercent: 5, BestArm: "pool-10", Arms: []report.SweepArmResult{
		{Name: "baseline", Parameter: "-", Value: "as deployed", Scenarios: []report.SweepScenarioStats{{Name: "s", Runs: 2, Avg: f(50), P95: f(100)}}},
		{Name: "pool-10", Parameter: "HTTP_MAXPOOLSIZE", Value: "10", Scenarios: []report.SweepScenarioStats{{Name: "s", Runs: 2, Avg: f(40), P95: f(80)}},
			Comparison: &result.Comparison{Change: perfexpv1alpha1.ChangeImproved, Metrics: []result.MetricComparison{{Scenario: "s", Kind: perfexpv1alpha1.MetricP95, DeltaPercent: f(-20)}}}},
	}}
	js, err := report.SweepJSON(sweepResult)
	if err != nil {
		t.Fatal(err)
	}
	create(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "pool-report"},
		Data: map[string]string{report.KeySweepJSON: string(js), report.KeySweepMarkdown: report.SweepMarkdown(sweepResult)}})
	newSweep := func(name string) *perfexpv1alpha1.PerfSweep {
		s := &perfexpv1alpha1.PerfSweep{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
		s.Spec.Template.Load = newExperiment(ns, "x").Spec.Load
		s.Spec.Arms = []perfexpv1alpha1.SweepArm{{Name: "more", Load: &perfexpv1alpha1.LoadOverride{VUs: ptr(int32(2))}}}
		create(s)
		return s
	}
	pool := newSweep("pool")
	pool.Status.Phase, pool.Status.ReportRef = perfexpv1alpha1.SweepSucceeded, &perfexpv1alpha1.LocalObjectReference{Name: "pool-report"}
	if err := env.Client.Status().Update(ctx, pool); err != nil {
		t.Fatal(err)
	}
	// A sequential sweep whose arm was decided after 3 repeats.
	seqResult := *sweepResult
	seqResult.Sweep, seqResult.Repeats = "seq", 5
	seqResult.Arms = slices.Clone(sweepResult.Arms)
	seqResult.Arms[1].Decision = &report.SweepDecision{Decided: true, Change: perfexpv1alpha1.ChangeImproved, Repeats: 3, Look: 1, Alpha: 0.002,
		Runs: 3, BaselineRuns: 3, EnvironmentSeconds: 540}
	seqCmp := *sweepResult.Arms[1].Comparison
	seqCmp.Calibration = &result.Calibration{Metric: "s p95", SDPercent: 6.96, Runs: 21}
	seqResult.Arms[1].Comparison = &seqCmp
	seqJS, err := report.SweepJSON(&seqResult)
	if err != nil {
		t.Fatal(err)
	}
	create(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "seq-report"}, Data: map[string]string{report.KeySweepJSON: string(seqJS)}})
	seq := newSweep("seq")
	seq.Status.Phase, seq.Status.ReportRef = perfexpv1alpha1.SweepSucceeded, &perfexpv1alpha1.LocalObjectReference{Name: "seq-report"}
	if err := env.Client.Status().Update(ctx, seq); err != nil {
		t.Fatal(err)
	}
	// A sweep of one run per arm, whose comparison holds a declared between-run noise.
	singleResult := *sweepResult
	singleResult.Sweep, singleResult.Repeats = "single", 1
	singleResult.Arms = slices.Clone(sweepResult.Arms)
	singleCmp := *sweepResult.Arms[1].Comparison
	singleCmp.Noise = "between-run sd 4 % (spec.analysis.betweenRun)"
	singleResult.Arms[1].Comparison = &singleCmp
	singleJS, err := report.SweepJSON(&singleResult)
	if err != nil {
		t.Fatal(err)
	}
	create(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "single-report"}, Data: map[string]string{report.KeySweepJSON: string(singleJS)}})
	single := newSweep("single")
	single.Status.Phase, single.Status.ReportRef = perfexpv1alpha1.SweepSucceeded, &perfexpv1alpha1.LocalObjectReference{Name: "single-report"}
	if err := env.Client.Status().Update(ctx, single); err != nil {
		t.Fatal(err)
	}
	// A study's sweep with per-arm tables: the arm raised circulation's CPU by 26 % and left
	// its scenario's p95 alone.
	studyResult := *sweepResult
	studyResult.Sweep, studyResult.BestArm = "study", ""
	circulation := func(cpu float64) []report.SweepWorkloadStats {
		return []report.SweepWorkloadStats{{Kind: "Deployment", Namespace: "lib", Name: "circulation", Runs: 2, Pods: 2, CPUAvg: f(cpu)}}
	}
	scenarioStats := []report.SweepTransactionStats{{Scenario: "s", Kind: report.TransactionScenario, Unit: "ms", Runs: 2, P95: f(100), ErrorPercent: f(0.5)}}
	studyResult.Arms = []report.SweepArmResult{
		{Name: "baseline", Parameter: "-", Value: "as deployed", Scenarios: sweepResult.Arms[0].Scenarios, Transactions: scenarioStats, Workloads: circulation(0.5)},
		{Name: "no-limit", Parameter: "limits.cpu", Value: "none", Scenarios: sweepResult.Arms[0].Scenarios, Transactions: scenarioStats, Workloads: circulation(0.63),
			Comparison: &result.Comparison{Change: perfexpv1alpha1.ChangeNoMeaningfulChange, Metrics: []result.MetricComparison{
				{Metric: "s p95", Scenario: "s", Kind: perfexpv1alpha1.MetricP95, Estimate: f(0.4), Low: f(-2), High: f(2.8), Scale: result.ScalePercent, Change: perfexpv1alpha1.ChangeNoMeaningfulChange},
				{Metric: "lib/circulation cpu avg", Workload: "Deployment/lib/circulation", Kind: result.MetricCPU, Estimate: f(26), Low: f(19), High: f(33),
					Scale: result.ScalePercent, Change: perfexpv1alpha1.ChangeRegressed, AdjustedP: f(0.004)},
			}}},
	}
	studyJS, err := report.SweepJSON(&studyResult)
	if err != nil {
		t.Fatal(err)
	}
	create(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "study-report"}, Data: map[string]string{report.KeySweepJSON: string(studyJS)}})
	study := newSweep("study")
	study.Status.Phase, study.Status.ReportRef = perfexpv1alpha1.SweepSucceeded, &perfexpv1alpha1.LocalObjectReference{Name: "study-report"}
	if err := env.Client.Status().Update(ctx, study); err != nil {
		t.Fatal(err)
	}
	running := newSweep("running")
	running.Status.Phase, running.Status.Progress, running.Status.Message = perfexpv1alpha1.SweepRunning, "3/4", "3 of 4 runs ended"
	running.Status.Arms = []perfexpv1alpha1.SweepArmStatus{{Name: "baseline", Runs: 2, Succeeded: 2}, {Name: "more", Parameter: "vus", Value: "2", Runs: 2, Succeeded: 1}}
	if err := env.Client.Status().Update(ctx, running); err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name    string
		args    []string
		want    []string
		wantErr string
	}{
		{"an experiment against the baseline it was analysed with", []string{"compare", "base", "variant"},
			[]string{"variant against base: Regressed (as analysed when variant ran)", "s p95 rose", "METRIC", "s p95", "100 ms", "130 ms", "+30.0 %", "Regressed", "20 vs 20",
				"shop/api cpu avg (pods 1 -> 2)", "0.4 cores", "0.8 cores", "+100.0 %", "[+95.0, +103.0] %", "Regressed"}, ""},
		{"a comparison with widened intervals says why", []string{"compare", "base", "noisy"},
			[]string{"noisy against base: Inconclusive", "Intervals widened: the node was busier during the baseline", "METRIC", "-40.0 %", "Inconclusive"}, ""},
		{"as Markdown", []string{"compare", "base", "variant", "-o", "md"}, []string{"## variant against base: Regressed", "| s p95 | 100 ms | 130 ms | +30.0 % |"}, ""},
		{"two experiments never compared are compared now, and it says so", []string{"compare", "base", "other"},
			[]string{"other against base:", "(computed now from one run each)"}, ""},
		{"two runs compared now take their between-run noise from their configurations' PerfHistory, and say so", []string{"compare", "hist-base", "hist-variant"},
			[]string{"hist-variant against hist-base: NoMeaningfulChange (computed now from one run each, with " + fromHistory, "s/p95 0.802 %", "added to the intervals)",
				"s p95", "NoMeaningfulChange"}, ""},
		{"an experiment's declared betweenRun wins over the history", []string{"compare", "hist-base", "hist-declared"},
			[]string{"hist-declared against hist-base: Inconclusive (computed now from one run each, with between-run sd 4 % (spec.analysis.betweenRun) added to the intervals)"}, ""},
		{"a sweep's table", []string{"compare", "pool"}, []string{"ARM", "VERDICT", "baseline", "as deployed", "100 ms", "pool-10", "HTTP_MAXPOOLSIZE", "80 ms", "-20.0 %", "Improved",
			"per-arm tables (transactions, services, queries), 2 rows: 1 Unknown, 1 not compared; none decided (-o wide for every row)",
			"best arm: pool-10; 2 run(s) per arm"}, ""},
		{"a sequential sweep's table says what each decision took", []string{"compare", "seq"}, []string{"sequential, up to 5 run(s) per arm",
			"RUNS (ARM + BASELINE)", "ENVIRONMENT TIME", "yes, stopped", "3 + 3", "9m0s",
			"calibration: run-to-run sd of s p95 over this sweep's runs, after the arm and block effects: 6.96 % (21 runs)",
			`betweenRun: {sdPercent: "6.96", runs: 21, source: "sweep ` + ns + `/seq"}`}, ""},
		{"a sweep of one run per arm says where each arm's between-run noise came from", []string{"compare", "single"},
			[]string{"pool-10: one run per side, with between-run sd 4 % (spec.analysis.betweenRun)", "1 run(s) per arm"}, ""},
		{"a study's sweep names the per-arm rows whose change was decided", []string{"compare", "study"},
			[]string{"per-arm tables (transactions, services, queries), 3 rows: 1 Regressed, 1 NoMeaningfulChange, 1 not compared; the decided ones (-o wide for every row):",
				"SECTION", "Services", "deployment lib/circulation", "CPU (cores)", "no-limit", "0.5", "0.63", "+26.0 % [+19.0, +33.0]", "Regressed", "0.004",
				"no arm improved on the baseline"}, ""},
		{"-o wide prints every row of the per-arm tables", []string{"compare", "study", "-o", "wide"},
			[]string{"3 rows: 1 Regressed, 1 NoMeaningfulChange, 1 not compared; every one:", "Transactions", "s", "p95 (ms)", "no-limit", "100", "+0.4 % [-2.0, +2.8]", "NoMeaningfulChange",
				"Transactions", "s", "Errors %", "0.5", "0.5", "0.00 pt", "not compared", "Services", "deployment lib/circulation", "Regressed"}, ""},
		{"a sweep's report as Markdown", []string{"compare", "pool", "-o", "md"}, []string{"# Sweep " + ns + "/pool", "| pool-10 | HTTP_MAXPOOLSIZE | 10 |"}, ""},
		{"a sweep without a report shows its progress", []string{"compare", "running"}, []string{"has no report yet (phase Running, 3/4 runs ended)", "more", "vus"}, ""},
		{"an unknown sweep", []string{"compare", "nope"}, nil, "no PerfSweep nope in namespace " + ns},
		{"an experiment without results", []string{"compare", "base", "nope"}, nil, "not found"},
		{"an unknown format", []string{"compare", "pool", "-o", "pdf"}, nil, `unknown output "pdf"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, err := run(t, conn, tc.args...)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			last := -1
			for _, w := range tc.want {
				i := strings.Index(out[max(last, 0):], w)
				if i < 0 {
					t.Fatalf("output lacks %q (in order):\n%s", w, out)
				}
				last = max(last, 0) + i
			}
		})
	}

	t.Run("a user who may not read PerfHistory gets the assumed noise and is told why", func(t *testing.T) {
		forbidden := noHistories{env.Client}
		out, err := run(t, &connection{client: forbidden, namespace: ns}, "compare", "hist-base", "hist-variant")
		for _, w := range []string{"hist-variant against hist-base: Inconclusive (computed now from one run each, with between-run sd 10 % (assumed",
			"; the runs' PerfHistory could not be read (forbidden: reading it takes get on perfhistories and configmaps))"} {
			if err != nil || !strings.Contains(out, w) {
				t.Errorf("output lacks %q (%v):\n%s", w, err, out)
			}
		}
	})

	t.Run("the help has examples", func(t *testing.T) {
		out, err := run(t, conn, "compare", "--help")
		if err != nil || !strings.Contains(out, "kubectl perfexp compare baseline pool-10 -n perf") {
			t.Errorf("help lacks examples (%v):\n%s", err, out)
		}
	})
}

func ptr[T any](v T) *T { return &v }

func mustJSON(t *testing.T, res *result.Result) string {
	t.Helper()
	js, err := report.JSON(res)
	if err != nil {
		t.Fatal(err)
	}
	return string(js)
}

// noHistories is a client of a user without get on perfhistories.
type noHistories struct{ client.Client }

func (c noHistories) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if _, ok := obj.(*perfexpv1alpha1.PerfHistory); ok {
		return apierrors.NewForbidden(perfexpv1alpha1.GroupVersion.WithResource("perfhistories").GroupResource(), key.Name, errors.New("RBAC"))
	}
	return c.Client.Get(ctx, key, obj, opts...)
}
