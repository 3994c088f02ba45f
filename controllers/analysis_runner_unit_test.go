package controllers

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/step"
)

// scriptedAnalyzer returns one scripted outcome and counts its calls.
type scriptedAnalyzer struct {
	calls atomic.Int32
	res   step.Result
	err   error
}

func (s *scriptedAnalyzer) Analyze(_ context.Context, exp, _ *perfexpv1alpha1.PerfExperiment) (step.Result, error) {
	s.calls.Add(1)
	if s.res.Done {
		exp.Status.Verdict = perfexpv1alpha1.VerdictPass
	}
	return s.res, s.err
}

// The runner starts one attempt, reports its outcome at every poll until the experiment moves
// on or the wait it asked for passes, and copies what the Analyzer recorded into the
// experiment; an attempt that failed with an error is reported and tried again only after a
// pause, never in a loop.
func TestAnalysisRunnerPolls(t *testing.T) {
	tests := []struct {
		name      string
		analyzer  *scriptedAnalyzer
		wantErr   bool
		wantDone  bool
		nextAfter time.Duration // when a second attempt starts
	}{
		{name: "done", analyzer: &scriptedAnalyzer{res: step.Done()}, wantDone: true},
		{name: "an error", analyzer: &scriptedAnalyzer{err: errors.New("reading the baseline: boom")}, wantErr: true, nextAfter: analysisErrorRetry},
		{name: "a wait", analyzer: &scriptedAnalyzer{res: step.Wait(30*time.Second, "Prometheus")}, nextAfter: 30 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clk := clocktesting.NewFakeClock(time.Now())
			ar := newAnalysisRunner(t.Context(), tt.analyzer, clk, 1, time.Minute)
			exp := &perfexpv1alpha1.PerfExperiment{ObjectMeta: metav1.ObjectMeta{Namespace: "perf", Name: "x", UID: "u1"}}
			if p, err := ar.poll(t.Context(), exp, nil); err != nil || p.res.Waiting != analysisRuns || p.firstStarted.IsZero() {
				t.Fatalf("first poll = %+v, %v; want the first attempt started", p, err)
			}
			var res step.Result
			var err error
			deadline := time.Now().Add(5 * time.Second)
			for {
				var p analysisPoll
				p, err = ar.poll(t.Context(), exp.DeepCopy(), nil)
				res = p.res
				if res.Waiting != analysisRuns || time.Now().After(deadline) {
					break
				}
				time.Sleep(10 * time.Millisecond)
			}
			for range 20 { // polls before the pause is over start nothing
				got := exp.DeepCopy()
				var p analysisPoll
				p, err = ar.poll(t.Context(), got, nil)
				res = p.res
				if tt.wantDone && got.Status.Verdict != perfexpv1alpha1.VerdictPass {
					t.Fatalf("the verdict the Analyzer wrote was not copied: %+v", got.Status)
				}
			}
			if (err != nil) != tt.wantErr || res.Done != tt.wantDone {
				t.Fatalf("poll = %+v, %v; want done %v, error %v", res, err, tt.wantDone, tt.wantErr)
			}
			if n := tt.analyzer.calls.Load(); n != 1 {
				t.Fatalf("%d calls before the pause was over, want 1", n)
			}
			if tt.nextAfter == 0 {
				return
			}
			clk.Step(tt.nextAfter)
			if p, _ := ar.poll(t.Context(), exp, nil); p.res.Waiting != analysisRuns || !p.firstStarted.IsZero() {
				t.Fatalf("after %s: %+v, want a new attempt, not the first", tt.nextAfter, p)
			}
		})
	}
}
