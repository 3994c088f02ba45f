// Package gitops_test runs the Argo CD health checks of argocd-cm.yaml, in the Lua interpreter
// Argo CD itself embeds, against statuses of every phase and verdict.
package gitops_test

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	lua "github.com/yuin/gopher-lua"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	kstatus "sigs.k8s.io/cli-utils/pkg/kstatus/status"
	"sigs.k8s.io/yaml"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
)

const healthKey = "resource.customizations.health.perfexp.dev_"

// healthScript reads one health check from argocd-cm.yaml, the file users apply.
func healthScript(t *testing.T, kind string) string {
	t.Helper()
	data, err := os.ReadFile("argocd-cm.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var cm corev1.ConfigMap
	if err := yaml.Unmarshal(data, &cm); err != nil {
		t.Fatal(err)
	}
	script := cm.Data[healthKey+kind]
	if script == "" {
		t.Fatalf("argocd-cm.yaml has no %s%s", healthKey, kind)
	}
	return script
}

// health runs a health script as Argo CD does: the object, as its JSON decodes, in the global
// obj; the script returns a table with status and message.
func health(t *testing.T, script string, obj any) (status, message string) {
	t.Helper()
	data, err := json.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	var decoded any
	if err := json.Unmarshal(data, &decoded); err != nil {
		t.Fatal(err)
	}
	L := lua.NewState()
	defer L.Close()
	L.SetGlobal("obj", toLua(L, decoded))
	if err := L.DoString(script); err != nil {
		t.Fatalf("running the health check: %v", err)
	}
	ret, ok := L.Get(-1).(*lua.LTable)
	if !ok {
		t.Fatalf("the health check returned %v, not a table", L.Get(-1))
	}
	return ret.RawGetString("status").String(), ret.RawGetString("message").String()
}

func toLua(L *lua.LState, v any) lua.LValue {
	switch v := v.(type) {
	case map[string]any:
		tbl := L.NewTable()
		for k, e := range v {
			tbl.RawSetString(k, toLua(L, e))
		}
		return tbl
	case []any:
		tbl := L.NewTable()
		for _, e := range v {
			tbl.Append(toLua(L, e))
		}
		return tbl
	case string:
		return lua.LString(v)
	case float64:
		return lua.LNumber(v)
	case bool:
		return lua.LBool(v)
	default:
		return lua.LNil
	}
}

func experiment(phase perfexpv1alpha1.Phase, verdict perfexpv1alpha1.Verdict, mutate ...func(*perfexpv1alpha1.PerfExperiment)) *perfexpv1alpha1.PerfExperiment {
	e := &perfexpv1alpha1.PerfExperiment{
		TypeMeta:   metav1.TypeMeta{APIVersion: "perfexp.dev/v1alpha1", Kind: "PerfExperiment"},
		ObjectMeta: metav1.ObjectMeta{Name: "no-cpu-limits", Namespace: "library", Generation: 1},
	}
	e.Status = perfexpv1alpha1.PerfExperimentStatus{Phase: phase, Verdict: verdict, ObservedGeneration: 1, Message: "msg"}
	for _, m := range mutate {
		m(e)
	}
	return e
}

func TestPerfExperimentHealth(t *testing.T) {
	script := healthScript(t, "PerfExperiment")
	tests := []struct {
		name        string
		exp         *perfexpv1alpha1.PerfExperiment
		want        string
		wantMessage string
	}{
		{name: "just applied", exp: experiment("", "", func(e *perfexpv1alpha1.PerfExperiment) { e.Status = perfexpv1alpha1.PerfExperimentStatus{} }),
			want: "Progressing", wantMessage: "Waiting for the perfexp operator"},
		{name: "spec changed, not observed yet", exp: experiment(perfexpv1alpha1.PhaseSucceeded, perfexpv1alpha1.VerdictPass, func(e *perfexpv1alpha1.PerfExperiment) { e.Generation = 2 }),
			want: "Progressing", wantMessage: "generation 2"},
		{name: "Pending", exp: experiment(perfexpv1alpha1.PhasePending, ""), want: "Progressing"},
		{name: "Queued", exp: experiment(perfexpv1alpha1.PhaseQueued, "", func(e *perfexpv1alpha1.PerfExperiment) {
			e.Status.QueuePosition, e.Status.Queue = 3, "library"
		}), want: "Progressing", wantMessage: "Queued at position 3 of queue library"},
		{name: "Preparing", exp: experiment(perfexpv1alpha1.PhasePreparing, ""), want: "Progressing"},
		{name: "SettingUp", exp: experiment("SettingUp", ""), want: "Progressing"},
		{name: "WarmingUp", exp: experiment("WarmingUp", ""), want: "Progressing"},
		{name: "Running", exp: experiment(perfexpv1alpha1.PhaseRunning, ""), want: "Progressing", wantMessage: "Running: msg"},
		{name: "Restoring", exp: experiment(perfexpv1alpha1.PhaseRestoring, ""), want: "Progressing"},
		{name: "Analyzing", exp: experiment(perfexpv1alpha1.PhaseAnalyzing, ""), want: "Progressing"},
		{name: "Succeeded, Pass", exp: experiment(perfexpv1alpha1.PhaseSucceeded, perfexpv1alpha1.VerdictPass), want: "Healthy", wantMessage: "Verdict Pass"},
		{name: "Succeeded, Inconclusive", exp: experiment(perfexpv1alpha1.PhaseSucceeded, perfexpv1alpha1.VerdictInconclusive), want: "Healthy", wantMessage: "Verdict Inconclusive"},
		{name: "Succeeded, no verdict", exp: experiment(perfexpv1alpha1.PhaseSucceeded, ""), want: "Healthy"},
		{name: "Succeeded, Fail", exp: experiment(perfexpv1alpha1.PhaseSucceeded, perfexpv1alpha1.VerdictFail), want: "Degraded", wantMessage: "Verdict Fail: msg"},
		{name: "Succeeded, Regressed under failOnRegression", exp: experiment(perfexpv1alpha1.PhaseSucceeded, perfexpv1alpha1.VerdictFail, regressedUnderGate),
			want: "Degraded", wantMessage: "Verdict Fail"},
		{name: "Succeeded, Regressed without failOnRegression", exp: experiment(perfexpv1alpha1.PhaseSucceeded, perfexpv1alpha1.VerdictPass, func(e *perfexpv1alpha1.PerfExperiment) {
			e.Status.Comparison = &perfexpv1alpha1.Comparison{Change: perfexpv1alpha1.ChangeRegressed}
		}), want: "Healthy"},
		{name: "Succeeded, Invalid", exp: experiment(perfexpv1alpha1.PhaseSucceeded, perfexpv1alpha1.VerdictInvalid), want: "Degraded"},
		{name: "Failed", exp: experiment(perfexpv1alpha1.PhaseFailed, ""), want: "Degraded", wantMessage: "Failed: msg"},
		{name: "Failed with a verdict", exp: experiment(perfexpv1alpha1.PhaseFailed, perfexpv1alpha1.VerdictInvalid), want: "Degraded"},
		{name: "Aborted", exp: experiment(perfexpv1alpha1.PhaseAborted, ""), want: "Degraded", wantMessage: "Aborted"},
	}
	seen := map[perfexpv1alpha1.Phase]bool{}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			seen[tt.exp.Status.Phase] = true
			status, message := health(t, script, tt.exp)
			if status != tt.want || !strings.Contains(message, tt.wantMessage) {
				t.Errorf("got %s %q, want %s with %q", status, message, tt.want, tt.wantMessage)
			}
		})
	}
	for _, p := range []perfexpv1alpha1.Phase{perfexpv1alpha1.PhasePending, perfexpv1alpha1.PhaseQueued, perfexpv1alpha1.PhasePreparing,
		perfexpv1alpha1.PhaseRunning, perfexpv1alpha1.PhaseRestoring, perfexpv1alpha1.PhaseAnalyzing,
		perfexpv1alpha1.PhaseSucceeded, perfexpv1alpha1.PhaseFailed, perfexpv1alpha1.PhaseAborted} {
		if !seen[p] {
			t.Errorf("no fixture for phase %s", p)
		}
	}
}

func sweep(phase perfexpv1alpha1.SweepPhase, mutate ...func(*perfexpv1alpha1.PerfSweep)) *perfexpv1alpha1.PerfSweep {
	s := &perfexpv1alpha1.PerfSweep{
		TypeMeta:   metav1.TypeMeta{APIVersion: "perfexp.dev/v1alpha1", Kind: "PerfSweep"},
		ObjectMeta: metav1.ObjectMeta{Name: "pool", Namespace: "library", Generation: 1},
	}
	s.Status = perfexpv1alpha1.PerfSweepStatus{Phase: phase, ObservedGeneration: 1, Total: 6, Progress: "2/6", Message: "msg"}
	for _, m := range mutate {
		m(s)
	}
	return s
}

func TestPerfSweepHealth(t *testing.T) {
	script := healthScript(t, "PerfSweep")
	tests := []struct {
		name, want, wantMessage string
		sweep                   *perfexpv1alpha1.PerfSweep
	}{
		{name: "just applied", sweep: sweep(""), want: "Progressing", wantMessage: "Waiting for the perfexp operator"},
		{name: "spec changed, not observed yet", sweep: sweep(perfexpv1alpha1.SweepSucceeded, func(s *perfexpv1alpha1.PerfSweep) { s.Generation = 3 }), want: "Progressing"},
		{name: "Pending", sweep: sweep(perfexpv1alpha1.SweepPending), want: "Progressing"},
		{name: "Running", sweep: sweep(perfexpv1alpha1.SweepRunning), want: "Progressing", wantMessage: "Running 2/6"},
		{name: "Succeeded", sweep: sweep(perfexpv1alpha1.SweepSucceeded), want: "Healthy", wantMessage: "Succeeded: msg"},
		{name: "Succeeded, some runs failed", sweep: sweep(perfexpv1alpha1.SweepSucceeded, func(s *perfexpv1alpha1.PerfSweep) { s.Status.Failed = 2 }),
			want: "Healthy", wantMessage: "2 of 6 runs failed"},
		{name: "Succeeded, an arm Regressed under failOnRegression", sweep: sweep(perfexpv1alpha1.SweepSucceeded, func(s *perfexpv1alpha1.PerfSweep) {
			s.Status.Verdict = perfexpv1alpha1.VerdictFail
			s.Status.Arms = []perfexpv1alpha1.SweepArmStatus{{Name: "pool-50", Change: perfexpv1alpha1.ChangeRegressed}}
		}), want: "Degraded", wantMessage: "Verdict Fail"},
		{name: "Succeeded, verdict Pass", sweep: sweep(perfexpv1alpha1.SweepSucceeded, func(s *perfexpv1alpha1.PerfSweep) { s.Status.Verdict = perfexpv1alpha1.VerdictPass }),
			want: "Healthy"},
		{name: "Failed", sweep: sweep(perfexpv1alpha1.SweepFailed), want: "Degraded"},
		{name: "Aborted", sweep: sweep(perfexpv1alpha1.SweepAborted), want: "Degraded"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, message := health(t, script, tt.sweep)
			if status != tt.want || !strings.Contains(message, tt.wantMessage) {
				t.Errorf("got %s %q, want %s with %q", status, message, tt.want, tt.wantMessage)
			}
		})
	}
}

// regressedUnderGate is an experiment whose comparison Regressed with failOnRegression set, as
// the operator writes it: verdict Fail, the Stalled condition kstatus reads.
func regressedUnderGate(e *perfexpv1alpha1.PerfExperiment) {
	yes := true
	e.Spec.Analysis = &perfexpv1alpha1.Analysis{FailOnRegression: &yes}
	e.Status.Comparison = &perfexpv1alpha1.Comparison{Change: perfexpv1alpha1.ChangeRegressed}
	e.SetKStatusConditions()
}

// TestRegressionFailsWherePipelinesLook: with failOnRegression, a Regressed experiment and a
// sweep with a Regressed arm read Degraded in Argo CD's health check and Failed in kstatus
// (sigs.k8s.io/cli-utils, as Flux uses it); without it they read Healthy and Current.
func TestRegressionFailsWherePipelinesLook(t *testing.T) {
	exp := experiment(perfexpv1alpha1.PhaseSucceeded, perfexpv1alpha1.VerdictFail, regressedUnderGate)
	sw := sweep(perfexpv1alpha1.SweepSucceeded, func(s *perfexpv1alpha1.PerfSweep) {
		s.Status.Verdict = perfexpv1alpha1.VerdictFail
		s.Status.Arms = []perfexpv1alpha1.SweepArmStatus{{Name: "pool-50", Change: perfexpv1alpha1.ChangeRegressed}}
		s.SetKStatusConditions()
	})
	passing := experiment(perfexpv1alpha1.PhaseSucceeded, perfexpv1alpha1.VerdictPass, func(e *perfexpv1alpha1.PerfExperiment) {
		e.Status.Comparison = &perfexpv1alpha1.Comparison{Change: perfexpv1alpha1.ChangeRegressed}
		e.SetKStatusConditions()
	})
	tests := []struct {
		name       string
		obj        any
		kind       string
		wantHealth string
		wantK      kstatus.Status
	}{
		{"experiment, failOnRegression", exp, "PerfExperiment", "Degraded", kstatus.FailedStatus},
		{"sweep, failOnRegression", sw, "PerfSweep", "Degraded", kstatus.FailedStatus},
		{"experiment, regressions do not fail", passing, "PerfExperiment", "Healthy", kstatus.CurrentStatus},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got, msg := health(t, healthScript(t, tt.kind), tt.obj); got != tt.wantHealth {
				t.Errorf("Argo CD health %s (%s), want %s", got, msg, tt.wantHealth)
			}
			content, err := runtime.DefaultUnstructuredConverter.ToUnstructured(tt.obj)
			if err != nil {
				t.Fatal(err)
			}
			res, err := kstatus.Compute(&unstructured.Unstructured{Object: content})
			if err != nil {
				t.Fatal(err)
			}
			if res.Status != tt.wantK {
				t.Errorf("kstatus %s (%s), want %s", res.Status, res.Message, tt.wantK)
			}
		})
	}
}
