package main

import (
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/testenv"
)

// Story: an engineer follows a bisect, a capacity search and a sweep of arms with `kubectl
// perfexp watch`, from their first run to their headline; a pipeline gates on how they ended
// with the exit codes of an experiment's watch. The sweeps are moved along by status updates
// on a real API server, as the operator would.
func TestWatchSweep(t *testing.T) {
	env := testenv.Start(t)
	ns := env.Namespace(t, "watch-sweep")
	conn := &connection{client: watchingClient(t, env), namespace: ns, rest: env.Config}
	ctx := t.Context()

	create := func(t *testing.T, name string, mutate func(*perfexpv1alpha1.PerfSweep)) {
		t.Helper()
		sw := &perfexpv1alpha1.PerfSweep{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
		sw.Spec.Template.Load = newExperiment(ns, "x").Spec.Load
		mutate(sw)
		if err := env.Client.Create(ctx, sw); err != nil {
			t.Fatal(err)
		}
	}
	update := func(t *testing.T, name string, change func(*perfexpv1alpha1.PerfSweepStatus)) {
		t.Helper()
		sw := &perfexpv1alpha1.PerfSweep{}
		if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, sw); err != nil {
			t.Fatal(err)
		}
		change(&sw.Status)
		if err := env.Client.Status().Update(ctx, sw); err != nil {
			t.Fatal(err)
		}
	}
	start := func(t *testing.T, args ...string) (out *syncBuffer, wait func() error) {
		out = &syncBuffer{}
		done := make(chan error, 1)
		go func() {
			cmd := newRootCommandWith(func(*kubeFlags) (*connection, error) { return conn, nil }, testSettings())
			cmd.SetOut(out)
			cmd.SetErr(out)
			cmd.SetArgs(args)
			done <- cmd.ExecuteContext(ctx)
		}()
		return out, func() error {
			select {
			case err := <-done:
				return err
			case <-time.After(20 * time.Second):
				t.Fatalf("watch did not end; it printed:\n%s", out.String())
				return nil
			}
		}
	}
	shows := func(t *testing.T, out *syncBuffer, from *int, texts ...string) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for {
			s := out.String()
			at, ok := *from, true
			for _, text := range texts {
				i := strings.Index(s[at:], text)
				if i < 0 {
					ok = false
					break
				}
				at += i + len(text)
			}
			if ok {
				*from = at
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("watch never showed %q after offset %d; it printed:\n%s", texts, *from, s)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	bisect := func(sw *perfexpv1alpha1.PerfSweep) {
		sw.Spec.Bisect = &perfexpv1alpha1.SweepBisect{Services: []perfexpv1alpha1.BisectService{
			{Name: "circulation", Container: "circulation", Baseline: "perfexp/demo-circulation:dev", Candidate: "perfexp/demo-circulation:next"},
			{Name: "inventory", Container: "inventory", Baseline: "perfexp/demo-inventory:dev", Candidate: "perfexp/demo-inventory:next"},
		}}
	}

	t.Run("a bisect from its first step to the culprit", func(t *testing.T) {
		create(t, "release", bisect)
		update(t, "release", func(s *perfexpv1alpha1.PerfSweepStatus) {
			s.Phase, s.Total, s.Done = perfexpv1alpha1.SweepRunning, 6, 2
			s.CurrentExperiment, s.CurrentArm = "release-step-1-2", "step-1"
			s.Bisect = &perfexpv1alpha1.SweepBisectStatus{Steps: []perfexpv1alpha1.BisectStepStatus{
				{Services: []int32{0, 1}, Description: "circulation, inventory", Repeats: 1}}}
		})
		// A sweep is named as kubectl names it, TYPE/NAME.
		out, wait := start(t, "watch", "psweep/release", "--fail-on", "regressed,fail")
		from := 0
		shows(t, out, &from, ns+"/release  Running  (bisect)",
			"runs       [##########--------------------] 2 of 6 done (the plan grows as the search goes)",
			"now        release-step-1-2 (step-1) holds the environment: kubectl perfexp watch release-step-1-2 -n "+ns,
			"step 1     circulation, inventory  1 repeat: running")

		update(t, "release", func(s *perfexpv1alpha1.PerfSweepStatus) {
			s.Total, s.Done, s.CurrentExperiment, s.CurrentArm = 12, 6, "release-step-2-1", "step-2"
			s.Bisect.Steps[0].Repeats, s.Bisect.Steps[0].Outcome, s.Bisect.Steps[0].Message = 3, perfexpv1alpha1.BisectReproduces, "p95 +800.0 % [+700.1, +901.3]"
			s.Bisect.Steps = append(s.Bisect.Steps, perfexpv1alpha1.BisectStepStatus{Services: []int32{0}, Description: "circulation"})
		})
		shows(t, out, &from, "6 of 12 done", "step 1     circulation, inventory  3 repeats: Reproduces, p95 +800.0 % [+700.1, +901.3]",
			"step 2     circulation  0 repeats: running")

		update(t, "release", func(s *perfexpv1alpha1.PerfSweepStatus) {
			s.Phase, s.Done, s.CurrentExperiment, s.CurrentArm = perfexpv1alpha1.SweepSucceeded, 12, "", ""
			s.Bisect.Steps[1].Repeats, s.Bisect.Steps[1].Outcome = 3, perfexpv1alpha1.BisectClean
			s.Bisect.Culprits, s.Bisect.Summary = []string{"inventory"}, "inventory: its new image alone makes the release slower (2 steps, 12 runs)"
			s.Verdict, s.Message = perfexpv1alpha1.VerdictPass, "culprit inventory"
			s.ReportRef = &perfexpv1alpha1.LocalObjectReference{Name: "release-report"}
		})
		err := wait()
		if code := exitCode(err); code != exitRegressed {
			t.Fatalf("exit %d (%v), want %d: a bisect that named a culprit is a regression\n%s", code, err, exitRegressed, out.String())
		}
		shows(t, out, &from, "Succeeded", "step 2     circulation  3 repeats: Clean",
			"answer     inventory: its new image alone makes the release slower (2 steps, 12 runs)",
			"verdict    Pass", "report     kubectl perfexp compare release -n "+ns)
	})

	t.Run("a capacity search shows its probes, by its bare name", func(t *testing.T) {
		create(t, "room", func(sw *perfexpv1alpha1.PerfSweep) {
			p95 := resource.MustParse("300")
			sw.Spec.Template.Analysis = &perfexpv1alpha1.Analysis{Objectives: []perfexpv1alpha1.Objective{{Scenario: sw.Spec.Template.Load.Scenarios[0].Name, Metric: perfexpv1alpha1.MetricP95, Max: &p95}}}
			sw.Spec.Capacity = &perfexpv1alpha1.SweepCapacity{Parameter: perfexpv1alpha1.LoadVUs, Min: 10, Max: 80}
		})
		update(t, "room", func(s *perfexpv1alpha1.PerfSweepStatus) {
			s.Phase, s.Total, s.Done = perfexpv1alpha1.SweepRunning, 3, 2
			s.Capacity = &perfexpv1alpha1.SweepCapacityStatus{Probes: []perfexpv1alpha1.CapacityProbeStatus{
				{Load: 10, Runs: 1, Outcome: perfexpv1alpha1.ProbeHeld, Message: "p95 80 ms"}, {Load: 20, Runs: 1}}}
		})
		out, wait := start(t, "watch", "room", "--timeout", "1s")
		from := 0
		shows(t, out, &from, ns+"/room  Running  (capacity search)", "probe 1    10 VUs  1 run: Held, p95 80 ms", "probe 2    20 VUs  1 run: running")
		err := wait()
		if code := exitCode(err); code != exitTimedOut || !strings.Contains(err.Error(), "sweep "+ns+"/room had not ended after --timeout 1s (phase Running)") {
			t.Fatalf("exit %d (%v), want %d naming the sweep\n%s", code, err, exitTimedOut, out.String())
		}
	})

	t.Run("a sweep's arms and the exit code of each way it ends", func(t *testing.T) {
		create(t, "pool", func(sw *perfexpv1alpha1.PerfSweep) {
			sw.Spec.Arms = []perfexpv1alpha1.SweepArm{{Name: "more", Load: &perfexpv1alpha1.LoadOverride{VUs: ptr(int32(2))}}}
		})
		update(t, "pool", func(s *perfexpv1alpha1.PerfSweepStatus) {
			s.Phase, s.Total, s.Done, s.Verdict = perfexpv1alpha1.SweepSucceeded, 4, 4, perfexpv1alpha1.VerdictPass
			s.Arms = []perfexpv1alpha1.SweepArmStatus{{Name: "baseline", Runs: 2, Succeeded: 2},
				{Name: "more", Value: "2", Runs: 2, Succeeded: 2, Change: perfexpv1alpha1.ChangeInconclusive, Message: "p95 +3.1 % [-4.0, +10.2]"}}
		})
		for _, tc := range []struct {
			failOn string
			code   int
		}{{"", 0}, {"fail,regressed", 0}, {"inconclusive", exitInconclusive}} {
			args := []string{"watch", "perfsweep/pool"}
			if tc.failOn != "" {
				args = append(args, "--fail-on", tc.failOn)
			}
			out, wait := start(t, args...)
			err := wait()
			if code := exitCode(err); (err == nil) != (tc.code == 0) || (err != nil && code != tc.code) {
				t.Errorf("--fail-on %q: error %v (exit %d), want exit %d\n%s", tc.failOn, err, code, tc.code, out.String())
			}
			from := 0
			shows(t, out, &from, "arm        baseline  2/2 runs ended", "arm        more (2)  2/2 runs ended: Inconclusive, p95 +3.1 % [-4.0, +10.2]")
		}
		update(t, "pool", func(s *perfexpv1alpha1.PerfSweepStatus) {
			s.Phase, s.Message = perfexpv1alpha1.SweepAborted, "aborted by spec.abort"
		})
		out, wait := start(t, "watch", "perfsweep/pool", "-o", "jsonpath={.status.phase}")
		err := wait()
		if code := exitCode(err); code != exitAborted {
			t.Fatalf("exit %d (%v), want %d\n%s", code, err, exitAborted, out.String())
		}
		// The progress went to standard error, then the sweep's phase to standard output (one
		// buffer here takes both).
		if !strings.Contains(out.String(), "message    aborted by spec.abort\nAborted") {
			t.Errorf("-o jsonpath printed %q; want the sweep's phase after the progress", out.String())
		}
	})

	t.Run("an unknown sweep", func(t *testing.T) {
		out, wait := start(t, "watch", "perfsweep/nope")
		if err := wait(); err == nil || !strings.Contains(err.Error(), `perfsweep "nope" not found in namespace "`+ns+`"`) || exitCode(err) != exitError {
			t.Fatalf("error %v, want not found naming the namespace\n%s", err, out.String())
		}
	})
}
