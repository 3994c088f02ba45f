package main

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/testexp"
)

var update = flag.Bool("update", false, "rewrite the golden files of the watch rendering")

// t0 is the fixed clock of the rendering tests.
var t0 = time.Date(2026, 11, 22, 15, 0, 0, 0, time.UTC)

func at(d time.Duration) *metav1.Time { t := metav1.NewTime(t0.Add(d)); return &t }

// watchedExperiment builds the experiment of the rendering tests: two scenarios, checkout for
// 5 minutes from the start and import for 2 minutes after a 1 minute delay, and a 1 minute
// warm-up. Each option moves it along.
func watchedExperiment(opts ...func(*perfexpv1alpha1.PerfExperiment)) *perfexpv1alpha1.PerfExperiment {
	vus := int32(10)
	scenarios := testexp.WithScenarios(
		perfexpv1alpha1.Scenario{Name: "checkout", VUs: &vus, Duration: &metav1.Duration{Duration: 5 * time.Minute}},
		perfexpv1alpha1.Scenario{Name: "import", VUs: &vus, Duration: &metav1.Duration{Duration: 2 * time.Minute}, StartDelay: &metav1.Duration{Duration: time.Minute}},
	)
	warmUp := func(e *perfexpv1alpha1.PerfExperiment) {
		e.Spec.Load.WarmUp = &perfexpv1alpha1.WarmUp{VUs: 1, Duration: metav1.Duration{Duration: time.Minute}}
	}
	return testexp.New("demo", "no-cpu-limits", append([]testexp.Option{scenarios, warmUp}, opts...)...)
}

func inPhase(p perfexpv1alpha1.Phase, since time.Duration) func(*perfexpv1alpha1.PerfExperiment) {
	return func(e *perfexpv1alpha1.PerfExperiment) {
		e.Status.Phase = p
		e.Status.Queue = "demo"
		e.Status.PhaseHistory = append(e.Status.PhaseHistory, perfexpv1alpha1.PhaseTransition{Phase: p, Time: *at(since)})
	}
}

func queuedAt(pos int32) func(*perfexpv1alpha1.PerfExperiment) {
	return func(e *perfexpv1alpha1.PerfExperiment) { e.Status.QueuePosition = pos }
}

func withMessage(m string) func(*perfexpv1alpha1.PerfExperiment) {
	return func(e *perfexpv1alpha1.PerfExperiment) { e.Status.Message = m }
}

// loadStarted says the scenarios started at start; states gives each scenario's state.
func loadStarted(start time.Duration, states ...perfexpv1alpha1.ScenarioStatus) func(*perfexpv1alpha1.PerfExperiment) {
	return func(e *perfexpv1alpha1.PerfExperiment) {
		e.Status.TestID = "demo-no-cpu-limits-1"
		e.Status.Window = &perfexpv1alpha1.Window{Start: at(start - time.Minute), WarmUpEnd: at(start)}
		e.Status.Load = &perfexpv1alpha1.LoadStatus{StartTime: at(start), Scenarios: states}
	}
}

func finished(verdict perfexpv1alpha1.Verdict) func(*perfexpv1alpha1.PerfExperiment) {
	return func(e *perfexpv1alpha1.PerfExperiment) {
		e.Status.StartTime, e.Status.CompletionTime = at(-10*time.Minute), at(-30*time.Second)
		e.Status.Verdict = verdict
		e.Status.Results = &perfexpv1alpha1.Results{Validity: perfexpv1alpha1.Valid, P95: "212.4", Scenarios: []perfexpv1alpha1.ScenarioResult{
			{Name: "checkout", RequestStats: perfexpv1alpha1.RequestStats{P95: "230.1", ErrorPercent: "0"}},
			{Name: "import", RequestStats: perfexpv1alpha1.RequestStats{P95: "120.5", ErrorPercent: "0.12"}},
		}}
		e.Status.Comparison = &perfexpv1alpha1.Comparison{Baseline: "baseline", Change: perfexpv1alpha1.ChangeImproved}
		e.Status.ReportRef = &perfexpv1alpha1.LocalObjectReference{Name: "no-cpu-limits-report"}
	}
}

func f64(v float64) *float64 { return &v }

// TestRenderWatch pins what watch shows in each phase against golden text (go test -update
// rewrites the files; read the diff before committing it).
func TestRenderWatch(t *testing.T) {
	running := perfexpv1alpha1.ScenarioStatus{Name: "checkout", State: perfexpv1alpha1.ScenarioRunning, StartTime: at(-30 * time.Second)}
	waiting := perfexpv1alpha1.ScenarioStatus{Name: "import", State: perfexpv1alpha1.ScenarioWaiting}
	tests := []struct {
		name  string
		frame watchFrame
	}{
		{"pending", watchFrame{Exp: watchedExperiment()}},
		{"queued-behind-two", watchFrame{Exp: watchedExperiment(inPhase(perfexpv1alpha1.PhaseQueued, -95*time.Second), queuedAt(3))}},
		{"queued-next", watchFrame{Exp: watchedExperiment(inPhase(perfexpv1alpha1.PhaseQueued, -5*time.Second), queuedAt(1),
			withMessage("waiting for demo/baseline to finish"))}},
		{"preparing", watchFrame{Exp: watchedExperiment(inPhase(perfexpv1alpha1.PhasePreparing, -12*time.Second),
			withMessage("waiting for the rollout of deployment/checkout"))}},
		{"warming-up", watchFrame{Exp: watchedExperiment(inPhase(perfexpv1alpha1.PhaseWarmingUp, -20*time.Second), func(e *perfexpv1alpha1.PerfExperiment) {
			e.Status.Window = &perfexpv1alpha1.Window{Start: at(-20 * time.Second)}
		})}},
		{"running-live", watchFrame{Exp: watchedExperiment(inPhase(perfexpv1alpha1.PhaseRunning, -32*time.Second), loadStarted(-30*time.Second, running, waiting)),
			Live: &liveStats{P95: f64(0.2124), ErrorRate: f64(0), RequestRate: f64(48.25)}}},
		{"running-no-prometheus", watchFrame{Exp: watchedExperiment(inPhase(perfexpv1alpha1.PhaseRunning, -152*time.Second), loadStarted(-150*time.Second,
			perfexpv1alpha1.ScenarioStatus{Name: "checkout", State: perfexpv1alpha1.ScenarioRunning, StartTime: at(-150 * time.Second)},
			perfexpv1alpha1.ScenarioStatus{Name: "import", State: perfexpv1alpha1.ScenarioRunning, StartTime: at(-90 * time.Second)})),
			Live: &liveStats{Unavailable: `Prometheus: Post "http://prometheus-operated.monitoring:9090/api/v1/query": dial tcp: lookup failed`}}},
		{"running-overtime", watchFrame{Exp: watchedExperiment(inPhase(perfexpv1alpha1.PhaseRunning, -5*time.Minute-14*time.Second), loadStarted(-5*time.Minute-12*time.Second,
			perfexpv1alpha1.ScenarioStatus{Name: "checkout", State: perfexpv1alpha1.ScenarioRunning, StartTime: at(-5*time.Minute - 12*time.Second)}, perfexpv1alpha1.ScenarioStatus{Name: "import", State: perfexpv1alpha1.ScenarioSucceeded})),
			Live: &liveStats{P95: f64(0.19), ErrorRate: f64(0.0012)}}},
		{"running-ended-awaiting-summary", watchFrame{Exp: watchedExperiment(inPhase(perfexpv1alpha1.PhaseRunning, -32*time.Second), loadStarted(-30*time.Second,
			perfexpv1alpha1.ScenarioStatus{Name: "checkout", State: perfexpv1alpha1.ScenarioRunning, StartTime: at(-30 * time.Second), CompletionTime: at(-5 * time.Second)},
			perfexpv1alpha1.ScenarioStatus{Name: "import", State: perfexpv1alpha1.ScenarioSucceeded}), func(e *perfexpv1alpha1.PerfExperiment) {
			e.Status.Conditions = []metav1.Condition{{Type: perfexpv1alpha1.ConditionLoadCompleted, Status: metav1.ConditionFalse, Reason: perfexpv1alpha1.ReasonLoadRunning,
				Message: "running: checkout: every k6 pod ended at 10:29:55; reading the summary of no-cpu-limits-k6-checkout-0-x7k2p from its log (the kubelet has no log for this pod), until 10:30:55 at the latest"}}
		})}},
		{"succeeded", watchFrame{Exp: watchedExperiment(inPhase(perfexpv1alpha1.PhaseSucceeded, -30*time.Second), finished(perfexpv1alpha1.VerdictPass),
			withMessage("no-cpu-limits improved on baseline: checkout p95 -18 % [-25, -11]"))}},
		{"failed", watchFrame{Exp: watchedExperiment(inPhase(perfexpv1alpha1.PhaseFailed, -30*time.Second), func(e *perfexpv1alpha1.PerfExperiment) {
			e.Status.StartTime, e.Status.CompletionTime = at(-3*time.Minute), at(-30*time.Second)
			e.Status.Message = "scenario checkout failed: k6 exited with code 107 (script error)"
		})}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.frame.Now = t0
			got := renderWatch(tc.frame)
			path := filepath.Join("testdata", "watch", tc.name+".golden")
			if *update {
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run go test -run TestRenderWatch -update to write it)", err)
			}
			if got != string(want) {
				t.Errorf("rendering differs from %s\n--- got\n%s--- want\n%s", path, got, want)
			}
		})
	}
}

func TestProgress(t *testing.T) {
	tests := []struct {
		name           string
		elapsed, total time.Duration
		want           string
	}{
		{"just started", 0, 5 * time.Minute, "[------------------------------]   0%  0s of 5m00s, 5m00s left"},
		{"a third", 100 * time.Second, 5 * time.Minute, "[##########--------------------]  33%  1m40s of 5m00s, 3m20s left"},
		{"a clock behind the operator's counts as not started", -3 * time.Second, time.Minute, "[------------------------------]   0%  0s of 1m00s, 1m00s left"},
		{"past the plan the load is stopping", 5*time.Minute + 7*time.Second, 5 * time.Minute,
			"[##############################] 100%  5m00s planned, 7s over: the load is stopping"},
		{"no plan", 42 * time.Second, 0, "42s so far"},
		{"hours", 90 * time.Minute, 24 * time.Hour, "[##----------------------------]   6%  1h30m00s of 24h00m00s, 22h30m00s left"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := progress(tc.elapsed, tc.total); got != tc.want {
				t.Errorf("progress(%v, %v)\n got %q\nwant %q", tc.elapsed, tc.total, got, tc.want)
			}
		})
	}
}

func TestPlannedLoad(t *testing.T) {
	// checkout runs 5m from the start; import 1m + 2m: the load lasts 5m.
	if got := plannedLoad(watchedExperiment()); got != 5*time.Minute {
		t.Errorf("planned %v, want 5m", got)
	}
	// A late scenario decides: import starts after 4m and runs 2m.
	late := watchedExperiment(func(e *perfexpv1alpha1.PerfExperiment) {
		e.Spec.Load.Scenarios[1].StartDelay.Duration = 4 * time.Minute
	})
	if got := plannedLoad(late); got != 6*time.Minute {
		t.Errorf("planned %v, want 6m", got)
	}
	// A script without scriptDuration lasts what k6 inspect found in it, once it ran.
	script := watchedExperiment(func(e *perfexpv1alpha1.PerfExperiment) {
		e.Spec.Load.Scenarios = []perfexpv1alpha1.Scenario{{Name: "course", FromScript: true}}
	})
	if got := plannedLoad(script); got != 0 {
		t.Errorf("planned %v before inspection, want 0 (unknown)", got)
	}
	script.Status.Load = &perfexpv1alpha1.LoadStatus{Inspected: []perfexpv1alpha1.ScriptInspection{{Scenario: "course", TotalDuration: metav1.Duration{Duration: time.Minute}, MaxVUs: 13}}}
	if got := plannedLoad(script); got != time.Minute {
		t.Errorf("planned %v after inspection, want 1m", got)
	}
}

// On a terminal each refresh replaces the previous block; in a log a block is added when
// something happened, or as a heartbeat every logEvery.
func TestWatchDraw(t *testing.T) {
	queued := watchedExperiment(inPhase(perfexpv1alpha1.PhaseQueued, -time.Minute), queuedAt(2))
	next := watchedExperiment(inPhase(perfexpv1alpha1.PhaseQueued, -time.Minute), queuedAt(1))
	frames := []watchFrame{
		{Now: t0, Exp: queued},
		{Now: t0.Add(2 * time.Second), Exp: queued},
		{Now: t0.Add(4 * time.Second), Exp: next},
		{Now: t0.Add(6 * time.Second), Exp: next},
		{Now: t0.Add(4*time.Second + logEvery), Exp: next},
	}
	t.Run("terminal", func(t *testing.T) {
		w := &watcher{}
		var out strings.Builder
		for i, f := range frames {
			before := out.Len()
			if err := w.draw(&out, f, true); err != nil {
				t.Fatal(err)
			}
			got := out.String()[before:]
			want := renderWatch(f)
			if i > 0 {
				// Up two lines (the previous block's), clear, draw.
				want = "\x1b[2A\x1b[J" + want
			}
			if got != want {
				t.Errorf("refresh %d wrote %q, want %q", i, got, want)
			}
		}
	})
	t.Run("log", func(t *testing.T) {
		w := &watcher{}
		var out strings.Builder
		printed := 0
		for _, f := range frames {
			before := out.Len()
			if err := w.draw(&out, f, false); err != nil {
				t.Fatal(err)
			}
			if out.Len() > before {
				printed++
			}
		}
		// The first block, the change of position, and the heartbeat logEvery later.
		if printed != 3 || strings.Contains(out.String(), "\x1b[") {
			t.Errorf("printed %d blocks, want 3 without terminal codes:\n%s", printed, out.String())
		}
	})
}

// A status message holding a pod's log line with escape sequences (written by an operator
// before it replaced them) reaches the terminal without them: on a terminal the only escapes
// are the watch's own cursor moves, in a log there are none.
func TestWatchDrawsNoControlCharactersFromStatus(t *testing.T) {
	exp := testexp.New("demo", "checkout", withMessage("scenario checkout failed; log tail:\n\x1b[2J\x1b]0;pwned\x07\rFAKE Succeeded\u009b31m"))
	exp.Status.Phase = perfexpv1alpha1.PhaseFailed
	for _, terminal := range []bool{false, true} {
		w := &watcher{drawnLines: 3}
		var b strings.Builder
		if err := w.draw(&b, watchFrame{Exp: exp, Now: time.Now()}, terminal); err != nil {
			t.Fatal(err)
		}
		got := b.String()
		if terminal {
			got = strings.TrimPrefix(got, "\x1b[3A\x1b[J")
		}
		if strings.ContainsAny(got, "\x1b\x07\r\u009b") || !strings.Contains(got, "FAKE Succeeded") {
			t.Errorf("terminal %v: drew %q", terminal, got)
		}
	}
}
