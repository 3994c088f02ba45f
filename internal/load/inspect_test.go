package load_test

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/load"
	"github.com/perfexp/perfexp/internal/testenv"
)

// twoScenarioScript declares its own load: browse runs 5 VUs for 30 s from the start, burst
// 10 requests a second for 10 s from 10 s on, with up to 8 VUs. k6 plans it to take the longer
// of the two (30 s) plus the default 30 s graceful stop, with 5 + 8 VUs at most.
const twoScenarioScript = `export const options = { scenarios: {
  browse: { executor: 'constant-vus', vus: 5, duration: '30s' },
  burst: { executor: 'constant-arrival-rate', rate: 10, timeUnit: '1s', duration: '10s', startTime: '10s', preAllocatedVUs: 3, maxVUs: 8, exec: 'burst' },
} };
export default function () {}
export function burst() {}
`

// runInspectPod runs, with the real k6, the container of the inspect Job on the files of its
// script ConfigMap, and reports the pod ended with k6's exit code and output, as the kubelet
// and the pods/log API would.
func runInspectPod(t *testing.T, f *fixture, job *batchv1.Job, cm *corev1.ConfigMap) int32 {
	t.Helper()
	dir := t.TempDir()
	for name, data := range cm.Data {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	c := job.Spec.Template.Spec.Containers[0]
	args := make([]string, len(c.Args))
	for i, a := range c.Args {
		args[i] = strings.Replace(a, load.ScriptDir, dir, 1)
	}
	cmd := exec.Command(filepath.Join(testenv.Root(), "bin", "k6"), args...)
	for _, e := range c.Env {
		cmd.Env = append(cmd.Env, e.Name+"="+e.Value)
	}
	out, err := cmd.CombinedOutput()
	var code int32
	if err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			t.Fatalf("running k6 %v: %v", args, err)
		}
		code = int32(ee.ExitCode())
	}
	start := second(f.clock.Now())
	pod := f.runPod(job, 0, start)
	f.endPod(pod, code, "Completed", start, start.Add(time.Second), string(out))
	return code
}

// A fromScript scenario without scriptDuration: before it joins its queue, k6 inspect runs on
// the script in a Job of its own and its plan replaces the week the API allows at most.
func TestInspectOnAPIServer(t *testing.T) {
	env := testenv.Start(t, filepath.Join("testdata", "crds"))
	f := newFixture(t, env, "inspect")
	exp := f.experiment("course", []perfexpv1alpha1.Scenario{{
		Name: "course", Script: perfexpv1alpha1.ScriptSource{Inline: twoScenarioScript}, FromScript: true, Parallelism: 2,
		Env: []perfexpv1alpha1.EnvVar{{Name: "BASE_URL", Value: "http://shop"}},
	}})
	if d := f.r.PlannedDuration(exp); d != 168*time.Hour {
		t.Fatalf("PlannedDuration before inspection = %s, want the 168h bound", d)
	}
	if res := mustStep(t)(f.r.Inspect(t.Context(), exp)); res.Done || res.Failure != nil {
		t.Fatalf("Inspect() = %+v, want a wait for the inspect pod", res)
	}
	job := &batchv1.Job{}
	if !f.get(load.InspectJobName(exp, "course"), job) {
		t.Fatal("no inspect Job")
	}
	c := job.Spec.Template.Spec.Containers[0]
	if got := strings.Join(c.Args, " "); got != "inspect --execution-requirements /scripts/"+load.EntryKey {
		t.Fatalf("inspect args %q", got)
	}
	if len(c.Env) != 1 || c.Env[0].Name != "BASE_URL" || c.Image != "perfexp/k6:v1.8.1" {
		t.Fatalf("inspect container: image %s, env %+v", c.Image, c.Env)
	}
	if res := mustStep(t)(f.r.Inspect(t.Context(), exp)); res.Done {
		t.Fatalf("Inspect() with the pod not started = %+v, want a wait", res)
	}
	cm := &corev1.ConfigMap{}
	if !f.get(load.UnitName(exp, "course"), cm) {
		t.Fatal("no script ConfigMap: the inspection must read the copy the load runs")
	}
	if code := runInspectPod(t, f, job, cm); code != 0 {
		t.Fatalf("k6 inspect exited %d", code)
	}
	if res := mustStep(t)(f.r.Inspect(t.Context(), exp)); !res.Done {
		t.Fatalf("Inspect() after the pod ended = %+v, want done", res)
	}
	got := exp.Status.Load.Inspected
	if len(got) != 1 || got[0].Scenario != "course" || got[0].TotalDuration.Duration != time.Minute || got[0].MaxVUs != 13 ||
		strings.Join(got[0].K6Scenarios, ",") != "browse,burst" {
		t.Fatalf("status.load.inspected = %+v, want course 1m0s 13 VUs browse,burst", got)
	}
	if d := f.r.PlannedDuration(exp); d != time.Minute {
		t.Fatalf("PlannedDuration after inspection = %s, want 1m0s", d)
	}
	if s := load.InspectionSummary(exp); s != "scenario course: k6 inspect plans 1m0s with at most 13 VUs (k6 scenarios browse, burst)" {
		t.Fatalf("summary %q", s)
	}
	// The status went through the API server's schema.
	if err := f.c.Status().Update(t.Context(), exp); err != nil {
		t.Fatalf("writing status.load.inspected: %v", err)
	}
	// Known once, asked no more: a second call starts nothing.
	if err := f.c.Delete(t.Context(), job, client.PropagationPolicy(metav1.DeletePropagationBackground)); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); f.get(job.Name, &batchv1.Job{}); time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the inspect Job is not gone")
		}
	}
	if res := mustStep(t)(f.r.Inspect(t.Context(), exp)); !res.Done || f.get(load.InspectJobName(exp, "course"), &batchv1.Job{}) {
		t.Fatalf("Inspect() again = %+v, want done without a new Job", res)
	}
	// A scriptDuration the user gives is believed: nothing to inspect.
	given := f.experiment("given", []perfexpv1alpha1.Scenario{{
		Name: "course", Script: perfexpv1alpha1.ScriptSource{Inline: twoScenarioScript}, FromScript: true, ScriptDuration: &metav1.Duration{Duration: 2 * time.Minute},
	}})
	if res := mustStep(t)(f.r.Inspect(t.Context(), given)); !res.Done || f.get(load.InspectJobName(given, "course"), &batchv1.Job{}) {
		t.Fatalf("Inspect() with scriptDuration = %+v, want done without a Job", res)
	}

	// For k6-operator the ConfigMap made here is the TestRun's: an entry script without
	// perfexp's segments (k6-operator gives each runner its own).
	op := f.experiment("operator", []perfexpv1alpha1.Scenario{{
		Name: "course", Script: perfexpv1alpha1.ScriptSource{Inline: twoScenarioScript}, FromScript: true, Parallelism: 2,
	}}, func(e *perfexpv1alpha1.PerfExperiment) { e.Spec.Load.Runner = perfexpv1alpha1.RunnerK6Operator })
	if res := mustStep(t)(f.r.Inspect(t.Context(), op)); res.Done || res.Failure != nil {
		t.Fatalf("Inspect() = %+v, want a wait", res)
	}
	if !f.get(load.UnitName(op, "course"), cm) || !strings.Contains(cm.Data[load.EntryKey], "const segments = [];") {
		t.Fatalf("the TestRun's entry script, made by the inspection:\n%s", cm.Data[load.EntryKey])
	}

	// More runner pods than the script has VUs: some pods would make no load.
	wide := f.experiment("wide", []perfexpv1alpha1.Scenario{{
		Name: "course", Script: perfexpv1alpha1.ScriptSource{Inline: twoScenarioScript}, FromScript: true, Parallelism: 20,
	}})
	_ = mustStep(t)(f.r.Inspect(t.Context(), wide))
	if !f.get(load.InspectJobName(wide, "course"), job) || !f.get(load.UnitName(wide, "course"), cm) {
		t.Fatal("no inspect Job or ConfigMap for parallelism 20")
	}
	runInspectPod(t, f, job, cm)
	if res := mustStep(t)(f.r.Inspect(t.Context(), wide)); res.Failure == nil || !strings.Contains(res.Failure.Message, "at most 13 VUs, fewer than its parallelism 20") {
		t.Fatalf("Inspect() with parallelism 20 = %+v, want refused", res)
	}

	// A script k6 cannot load fails the experiment before it queues, with k6's own words.
	broken := f.experiment("broken", []perfexpv1alpha1.Scenario{{
		Name: "course", Script: perfexpv1alpha1.ScriptSource{Inline: "export const options = { scenarios: { a: { executor: 'no-such-executor' } } };\nexport default function () {}\n"}, FromScript: true,
	}})
	if res := mustStep(t)(f.r.Inspect(t.Context(), broken)); res.Done {
		t.Fatalf("Inspect() = %+v, want a wait", res)
	}
	if !f.get(load.InspectJobName(broken, "course"), job) || !f.get(load.UnitName(broken, "course"), cm) {
		t.Fatal("no inspect Job or ConfigMap for the broken script")
	}
	if code := runInspectPod(t, f, job, cm); code == 0 {
		t.Fatal("k6 inspect accepted an unknown executor")
	}
	res := mustStep(t)(f.r.Inspect(t.Context(), broken))
	if res.Failure == nil || res.Failure.Reason != perfexpv1alpha1.ReasonScriptError || !strings.Contains(res.Failure.Message, "no-such-executor") {
		t.Fatalf("Inspect() of a broken script = %+v, want ScriptError quoting k6", res)
	}
}
