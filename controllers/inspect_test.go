package controllers_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/step"
	"github.com/perfexp/perfexp/internal/testenv"
)

// inspectingLab plans a load as the real runner does: a script with no known duration takes
// the 168 h the API allows, until its inspection found one. Its inspection waits once, then
// finds one minute, or fails for the experiment named "broken".
type inspectingLab struct {
	*lab
	mu    sync.Mutex
	calls map[string]int
}

func (l *inspectingLab) PlannedDuration(exp *perfexpv1alpha1.PerfExperiment) time.Duration {
	if exp.Status.Load != nil && len(exp.Status.Load.Inspected) > 0 {
		return exp.Status.Load.Inspected[0].TotalDuration.Duration
	}
	return 168 * time.Hour
}

func (l *inspectingLab) Inspect(_ context.Context, exp *perfexpv1alpha1.PerfExperiment) (step.Result, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if exp.Status.Load != nil && len(exp.Status.Load.Inspected) > 0 {
		return step.Done(), nil
	}
	l.calls[exp.Name]++
	switch {
	case l.calls[exp.Name] == 1:
		return step.Wait(100*time.Millisecond, "the inspect pod"), nil
	case exp.Name == "broken":
		return step.Fail(perfexpv1alpha1.ReasonScriptError, "k6 inspect of scenario course's script exited with 107"), nil
	}
	exp.Status.Load = &perfexpv1alpha1.LoadStatus{Inspected: []perfexpv1alpha1.ScriptInspection{{
		Scenario: "course", TotalDuration: metav1.Duration{Duration: time.Minute}, MaxVUs: 13, K6Scenarios: []string{"browse", "burst"}}}}
	return step.Done(), nil
}

// TestPendingInspectsScripts: an experiment whose load is known only once k6 inspected its
// script joins its queue with what k6 found (it was refused: "the load is planned to take
// 168h0m0s"), and a script k6 cannot read fails it before it queues.
func TestPendingInspectsScripts(t *testing.T) {
	env := testenv.Start(t)
	env.Namespace(t, leaseNamespace)
	c := env.Client
	ns := env.Namespace(t, "inspect")
	l := newLab()
	il := &inspectingLab{lab: l, calls: map[string]int{}}
	startOperatorOpts(t, env, operatorOptions{workers: 2, defaultOverall: time.Hour, maxOverall: 192 * time.Hour}, l, il, l)

	mustCreate(t, c, experiment(ns, "course", "course", 0))
	got := waitPhase(t, c, ns, "course", perfexpv1alpha1.PhaseRunning)
	if got.Status.Load == nil || len(got.Status.Load.Inspected) != 1 || got.Status.Load.Inspected[0].TotalDuration.Duration != time.Minute {
		t.Fatalf("status.load = %+v, want what k6 inspect found", got.Status.Load)
	}
	if ready := condition(got, perfexpv1alpha1.ConditionReady); ready != nil && ready.Reason == perfexpv1alpha1.ReasonInvalidTimeouts {
		t.Fatalf("refused: %s", ready.Message)
	}

	mustCreate(t, c, experiment(ns, "broken", "broken", 0))
	got = waitPhase(t, c, ns, "broken", perfexpv1alpha1.PhaseFailed)
	ready := condition(got, perfexpv1alpha1.ConditionReady)
	if ready == nil || ready.Reason != perfexpv1alpha1.ReasonScriptError || !strings.Contains(ready.Message, "exited with 107") {
		t.Fatalf("Ready %+v, want ScriptError from the inspection", ready)
	}
	if got.Status.StartTime != nil || l.restores("broken") != 0 {
		t.Errorf("it left the queue (startTime %v, %d restores)", got.Status.StartTime, l.restores("broken"))
	}
}
