package controllers_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/analysis/promtest"
	"github.com/perfexp/perfexp/internal/analyzer"
	"github.com/perfexp/perfexp/internal/step"
	"github.com/perfexp/perfexp/internal/testenv"
)

// labWithQueries is the scripted lab whose analyzer also tries the custom queries, through the
// real PrometheusAnalyzer against a real Prometheus.
type labWithQueries struct {
	*lab
	queries *analyzer.PrometheusAnalyzer
}

func (l labWithQueries) CheckQueries(ctx context.Context, exp *perfexpv1alpha1.PerfExperiment) (step.Result, error) {
	return l.queries.CheckQueries(ctx, exp)
}

// Stories of what is found wrong when an experiment leaves its queue: it fails at once, before
// the environment is touched or any load runs, and the queue moves on to the next experiment.
func TestPrecheck(t *testing.T) {
	env := testenv.Start(t)
	env.Namespace(t, leaseNamespace)
	c := env.Client

	failedBeforePreparing := func(t *testing.T, lab *lab, ns, name, reason, message string) {
		t.Helper()
		got := waitPhase(t, c, ns, name, perfexpv1alpha1.PhaseFailed)
		ready := condition(got, perfexpv1alpha1.ConditionReady)
		if ready == nil || ready.Reason != reason || !strings.Contains(ready.Message, message) {
			t.Errorf("%s: Ready condition %+v, want reason %s with %q", name, ready, reason, message)
		}
		if q := condition(got, perfexpv1alpha1.ConditionQueued); q == nil || q.Status != metav1.ConditionFalse || q.Reason != reason {
			t.Errorf("%s: Queued condition %+v", name, q)
		}
		if slices.Contains(lab.order(), name) || lab.restores(name) != 0 {
			t.Errorf("%s touched the environment: prepared %v, restored %d times", name, lab.order(), lab.restores(name))
		}
		for _, h := range got.Status.PhaseHistory {
			if h.Phase != perfexpv1alpha1.PhaseQueued && h.Phase != perfexpv1alpha1.PhaseFailed {
				t.Errorf("%s passed through %s", name, h.Phase)
			}
		}
	}

	t.Run("a baseline that does not exist fails the experiment and frees the queue", func(t *testing.T) {
		ns := env.Namespace(t, "missing-baseline")
		lab := newLab()
		startOperator(t, env, lab)
		typo := experiment(ns, "variant", "missing-baseline", 10)
		typo.Spec.Baseline = &perfexpv1alpha1.BaselineRef{Name: "baseline-run"}
		mustCreate(t, c, typo)
		mustCreate(t, c, experiment(ns, "next", "missing-baseline", 0))
		failedBeforePreparing(t, lab, ns, "variant", perfexpv1alpha1.ReasonBaselineNotFound, "no PerfExperiment baseline-run exists")
		waitPhase(t, c, ns, "next", perfexpv1alpha1.PhaseRunning)
	})

	t.Run("two experiments naming each other as baseline both fail", func(t *testing.T) {
		ns := env.Namespace(t, "baseline-cycle")
		lab := newLab()
		startOperator(t, env, lab)
		a := experiment(ns, "a", "baseline-cycle", 0)
		a.Spec.Baseline = &perfexpv1alpha1.BaselineRef{Name: "b"}
		b := experiment(ns, "b", "baseline-cycle", 0)
		b.Spec.Baseline = &perfexpv1alpha1.BaselineRef{Name: "a"}
		mustCreate(t, c, a)
		mustCreate(t, c, b)
		failedBeforePreparing(t, lab, ns, "a", perfexpv1alpha1.ReasonBaselineCycle, "a -> b -> a")
		failedBeforePreparing(t, lab, ns, "b", perfexpv1alpha1.ReasonBaselineCycle, "b -> a -> b")
	})

	t.Run("a custom query that does not parse fails the experiment with its name and the parser's words", func(t *testing.T) {
		prom := promtest.Start(t)
		ns := env.Namespace(t, "bad-query")
		lab := newLab()
		startOperatorWith(t, env, lab, lab, labWithQueries{lab: lab, queries: &analyzer.PrometheusAnalyzer{Client: c, PrometheusURL: prom.URL}})
		exp := experiment(ns, "soak", "bad-query", 0)
		exp.Spec.Analysis = &perfexpv1alpha1.Analysis{Queries: []perfexpv1alpha1.CustomQuery{
			{Name: "db-cpu", Query: `sum(rate(container_cpu_usage_seconds_total{namespace="{{.Namespace}}",pod="db-0"}[{{.Window}}]))`},
			{Name: "db-connections", Query: `sum(pg_stat_activity_count{namespace="{{.Namespace}}"}`},
		}}
		mustCreate(t, c, exp)
		failedBeforePreparing(t, lab, ns, "soak", perfexpv1alpha1.ReasonQueryInvalid,
			"query db-connections: the query does not parse: 1:")
		if got := get(t, c, ns, "soak"); !strings.Contains(condition(got, perfexpv1alpha1.ConditionReady).Message, "parse error: unclosed left parenthesis") {
			t.Errorf("the PromQL parser's message is missing: %s", condition(got, perfexpv1alpha1.ConditionReady).Message)
		}

		good := experiment(ns, "good", "bad-query", 0)
		good.Spec.Analysis = &perfexpv1alpha1.Analysis{Queries: exp.Spec.Analysis.Queries[:1]}
		mustCreate(t, c, good)
		waitPhase(t, c, ns, "good", perfexpv1alpha1.PhaseRunning)
	})

	t.Run("waiting for a running baseline does not consume the analysis timeout", func(t *testing.T) {
		ns := env.Namespace(t, "slow-baseline")
		lab := newLab()
		startOperator(t, env, lab)
		mustCreate(t, c, experiment(ns, "slow-base", "slow-baseline", 0))
		lab.setHoldAnalysis("slow-base", true)
		lab.finishLoad("slow-base")
		waitPhase(t, c, ns, "slow-base", perfexpv1alpha1.PhaseAnalyzing)

		variant := experiment(ns, "variant", "slow-baseline", 0)
		variant.Spec.Baseline = &perfexpv1alpha1.BaselineRef{Name: "slow-base"}
		variant.Spec.Timeouts = &perfexpv1alpha1.Timeouts{Analysis: &metav1.Duration{Duration: 2 * time.Second}}
		mustCreate(t, c, variant)
		lab.finishLoad("variant")
		waitPhase(t, c, ns, "variant", perfexpv1alpha1.PhaseAnalyzing)
		// Twice the analysis timeout spent waiting for the baseline.
		time.Sleep(4 * time.Second)
		got := get(t, c, ns, "variant")
		if got.Status.Phase != perfexpv1alpha1.PhaseAnalyzing {
			t.Fatalf("variant is %s (%s) while its baseline still runs; want it waiting in Analyzing", got.Status.Phase, got.Status.Message)
		}
		if cond := condition(got, perfexpv1alpha1.ConditionAnalyzed); cond == nil || cond.Reason != perfexpv1alpha1.ReasonWaitingForBaseline {
			t.Fatalf("Analyzed condition %+v", cond)
		}
		lab.setHoldAnalysis("slow-base", false)
		got = waitPhase(t, c, ns, "variant", perfexpv1alpha1.PhaseSucceeded)
		if seen := lab.baselinePhaseSeen("variant"); seen != string(perfexpv1alpha1.PhaseSucceeded) {
			t.Errorf("analysed against a baseline in phase %q: %s", seen, fmt.Sprint(got.Status.Message))
		}
	})
}
