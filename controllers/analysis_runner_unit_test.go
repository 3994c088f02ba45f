package controllers

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/backend"
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

// blockingAnalyzer holds every call until release is closed, recording which experiments are
// inside it.
type blockingAnalyzer struct {
	mu      sync.Mutex
	inside  map[string]bool
	release chan struct{}
}

func (b *blockingAnalyzer) Analyze(ctx context.Context, exp, _ *perfexpv1alpha1.PerfExperiment) (step.Result, error) {
	b.mu.Lock()
	b.inside[exp.Namespace+"/"+exp.Name] = true
	b.mu.Unlock()
	select {
	case <-b.release:
	case <-ctx.Done():
	}
	return step.Done(), nil
}

func (b *blockingAnalyzer) has(key string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.inside[key]
}

func (b *blockingAnalyzer) count() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.inside)
}

func analysedExp(ns, name, prometheusURL string) *perfexpv1alpha1.PerfExperiment {
	exp := &perfexpv1alpha1.PerfExperiment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, UID: types.UID(ns + "-" + name)}}
	exp.Spec.Analysis = &perfexpv1alpha1.Analysis{PrometheusURL: prometheusURL}
	return exp
}

// waitFor polls cond for up to two seconds.
func waitFor(cond func() bool) bool {
	for deadline := time.Now().Add(2 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if cond() {
			return true
		}
	}
	return cond()
}

// Story: one tenant starts four analyses against the shared Prometheus while another starts
// one. The second tenant's analysis runs at once: the first holds at most half the slots.
func TestAnalysisRunnerGivesEachNamespaceAShare(t *testing.T) {
	b := &blockingAnalyzer{inside: map[string]bool{}, release: make(chan struct{})}
	defer close(b.release)
	ar := newAnalysisRunner(t.Context(), b, clocktesting.NewFakeClock(time.Now()), 4, time.Minute)
	for i := range 4 {
		if _, err := ar.poll(t.Context(), analysedExp("team-a", fmt.Sprint("a", i), "http://prometheus:9090"), nil); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(func() bool { return b.count() >= 2 })
	if _, err := ar.poll(t.Context(), analysedExp("team-b", "b0", "http://prometheus:9090"), nil); err != nil {
		t.Fatal(err)
	}
	if !waitFor(func() bool { return b.has("team-b/b0") }) {
		t.Fatalf("team-b's analysis waits while team-a's hold %d slots of 4", b.count())
	}
	if n := b.count(); n != 3 {
		t.Fatalf("%d analyses inside the Analyzer, want team-a's 2 (its share of 4) and team-b's", n)
	}
}

// Story: three experiments name one Prometheus three ways. With one slot per Prometheus, one
// analysis runs at a time, not three.
func TestAnalysisRunnerKeysOnePrometheusOnce(t *testing.T) {
	b := &blockingAnalyzer{inside: map[string]bool{}, release: make(chan struct{})}
	defer close(b.release)
	ar := newAnalysisRunner(t.Context(), b, clocktesting.NewFakeClock(time.Now()), 1, time.Minute)
	for i, u := range []string{"http://prometheus:9090", "http://prometheus:9090/", "HTTP://Prometheus:9090"} {
		if _, err := ar.poll(t.Context(), analysedExp(fmt.Sprint("team-", i), "x", u), nil); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(func() bool { return b.count() > 1 })
	if n := b.count(); n != 1 {
		t.Fatalf("%d analyses against one Prometheus at once, want 1 (one slot)", n)
	}
}

func TestPrometheusKey(t *testing.T) {
	ar := &analysisRunner{defaultPrometheus: "http://prometheus-operated.monitoring:9090"}
	want := ar.prometheusOf(analysedExp("a", "x", ""))
	for _, u := range []string{"http://prometheus-operated.monitoring:9090", "http://prometheus-operated.monitoring:9090/",
		"HTTP://Prometheus-Operated.Monitoring:9090", " http://prometheus-operated.monitoring:9090// "} {
		if got := ar.prometheusOf(analysedExp("a", "x", u)); got != want {
			t.Errorf("%q is keyed %q, the default %q", u, got, want)
		}
	}
	if backend.ServerKey("http://p:80/") != backend.ServerKey("http://p") || backend.ServerKey("https://p:443") != backend.ServerKey("https://p/") {
		t.Error("the scheme's default port must not make another pool")
	}
	if backend.ServerKey("http://p:9090/thanos") == backend.ServerKey("http://p:9090") {
		t.Error("another path is another server")
	}
}
