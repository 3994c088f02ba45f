package controllers_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/step"
	"github.com/perfexp/perfexp/internal/testenv"
)

// hungPrometheus stands in for an analysis against a Prometheus that accepts connections and
// never answers: for the experiment named hung, every call blocks until its context ends.
// Every other experiment is analysed by the lab.
type hungPrometheus struct {
	*lab
	hung  string
	calls atomic.Int32
}

func (h *hungPrometheus) Analyze(ctx context.Context, exp, baseline *perfexpv1alpha1.PerfExperiment) (step.Result, error) {
	if exp.Name != h.hung {
		return h.lab.Analyze(ctx, exp, baseline)
	}
	h.calls.Add(1)
	<-ctx.Done()
	return step.Result{}, fmt.Errorf("querying Prometheus: %w", ctx.Err())
}

// One hung Prometheus must not freeze the operator: while experiment A of queue qa is stuck in
// an analysis call, experiment B of queue qb restores its environment and ends, and A ends by
// its analysis timeout. Analysis runs apart from the reconcile workers, so even one worker and
// no deadline per call leave B free; before, that case was the fault itself.
func TestHungAnalysisBlocksNoOtherExperiment(t *testing.T) {
	env := testenv.Start(t)
	env.Namespace(t, leaseNamespace)
	c := env.Client

	tests := []struct {
		name string
		opts operatorOptions
		// retried: A's analysis is tried again after an attempt ran out.
		retried bool
	}{
		{name: "one worker and no deadline per call: B ends and A ends by its analysis timeout",
			opts: operatorOptions{workers: 1, attemptTimeout: time.Hour}},
		{name: "several workers and a deadline per call: B ends and A ends by its analysis timeout",
			opts: operatorOptions{workers: 4, attemptTimeout: time.Second}, retried: true},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ns := env.Namespace(t, fmt.Sprintf("hung-%d", i))
			lab := newLab()
			analyzer := &hungPrometheus{lab: lab, hung: "a"}
			startOperatorOpts(t, env, tt.opts, lab, lab, analyzer)

			a := experiment(ns, "a", fmt.Sprintf("qa-%d", i), 0)
			a.Spec.Timeouts = &perfexpv1alpha1.Timeouts{Analysis: &metav1.Duration{Duration: 10 * time.Second}}
			mustCreate(t, c, a)
			lab.finishLoad("a")
			waitPhase(t, c, ns, "a", perfexpv1alpha1.PhaseAnalyzing)
			eventually(t, 10*time.Second, "a's analysis call hangs", func() error {
				if analyzer.calls.Load() == 0 {
					return fmt.Errorf("no analysis call yet")
				}
				return nil
			})

			mustCreate(t, c, experiment(ns, "b", fmt.Sprintf("qb-%d", i), 0))
			lab.finishLoad("b")
			b := waitPhase(t, c, ns, "b", perfexpv1alpha1.PhaseSucceeded)
			if lab.restores("b") == 0 {
				t.Error("b ended without restoring its environment")
			}
			if got := get(t, c, ns, "a"); got.Status.Phase.IsTerminal() {
				t.Errorf("a already ended (%s) before b: the story did not overlap them", got.Status.Phase)
			}
			t.Logf("b ended %s after it was created, while a's analysis hung", b.Status.CompletionTime.Sub(b.CreationTimestamp.Time))

			got := waitPhase(t, c, ns, "a", perfexpv1alpha1.PhaseFailed)
			if cond := condition(got, perfexpv1alpha1.ConditionReady); cond == nil || cond.Reason != perfexpv1alpha1.ReasonAnalysisTimedOut {
				t.Errorf("a's Ready condition %+v, want reason %s", cond, perfexpv1alpha1.ReasonAnalysisTimedOut)
			}
			if n := analyzer.calls.Load(); tt.retried && n < 2 {
				t.Errorf("a's analysis was tried %d times, want a retry after the first attempt ran out", n)
			}
		})
	}
}
