package load_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/load"
	"github.com/perfexp/perfexp/internal/testenv"
)

// A script that runs its own scenarios, as a user applies it: the API server takes fromScript
// without a load shape and refuses it with one, the runner's entry script keeps the script's
// scenarios, and the k6 scenarios the pods' summaries count are recorded in status.
func TestFromScriptOnAPIServer(t *testing.T) {
	env := testenv.Start(t, filepath.Join("testdata", "crds"))
	f := newFixture(t, env, "from-script")
	script := perfexpv1alpha1.ScriptSource{Inline: "export const options = { scenarios: { browse: { executor: 'shared-iterations', exec: 'browse' } } };\nexport function browse() {}\n"}

	refused := &perfexpv1alpha1.PerfExperiment{ObjectMeta: metav1.ObjectMeta{Name: "both", Namespace: f.ns}}
	refused.Spec.Load.Scenarios = []perfexpv1alpha1.Scenario{{Name: "docs", Script: script, FromScript: true, VUs: ptr.To[int32](2), Duration: &metav1.Duration{Duration: time.Minute}}}
	if err := f.c.Create(t.Context(), refused); err == nil || !strings.Contains(err.Error(), "fromScript (which takes none of the others)") {
		t.Fatalf("fromScript with vus and duration: %v, want refused", err)
	}
	refused.Spec.Load.Scenarios = []perfexpv1alpha1.Scenario{{Name: "docs", Script: script, FromScript: true, Exec: "browse"}}
	if err := f.c.Create(t.Context(), refused); err == nil || !strings.Contains(err.Error(), "exec names the function") {
		t.Fatalf("fromScript with exec: %v, want refused", err)
	}

	// Objectives may name the script's k6 scenarios, which the API cannot know.
	objective := func(exp *perfexpv1alpha1.PerfExperiment) {
		exp.Spec.Analysis = &perfexpv1alpha1.Analysis{Objectives: []perfexpv1alpha1.Objective{{Name: "news p95", Metric: perfexpv1alpha1.ObjectiveMetric("P95"), Scenario: "news", Max: ptr.To(resource.MustParse("500"))}}}
	}
	named := &perfexpv1alpha1.PerfExperiment{ObjectMeta: metav1.ObjectMeta{Name: "objective", Namespace: f.ns}}
	named.Spec.Load.Scenarios = []perfexpv1alpha1.Scenario{{Name: "docs", Script: script, VUs: ptr.To[int32](1), Duration: &metav1.Duration{Duration: time.Minute}}}
	objective(named)
	if err := f.c.Create(t.Context(), named); err == nil || !strings.Contains(err.Error(), "every objective's scenario must name one of load.scenarios") {
		t.Fatalf("an objective on an unknown scenario: %v, want refused", err)
	}
	_ = f.experiment("objective", []perfexpv1alpha1.Scenario{{Name: "docs", Script: script, FromScript: true}}, objective)

	refused.Spec.Load.Scenarios = []perfexpv1alpha1.Scenario{{Name: "docs", Script: script, VUs: ptr.To[int32](1), Duration: &metav1.Duration{Duration: time.Minute}, ScriptDuration: &metav1.Duration{Duration: time.Minute}}}
	if err := f.c.Create(t.Context(), refused); err == nil || !strings.Contains(err.Error(), "scriptDuration is how long a fromScript scenario's script runs") {
		t.Fatalf("scriptDuration without fromScript: %v, want refused", err)
	}

	exp := f.experiment("docs", []perfexpv1alpha1.Scenario{{Name: "docs", Script: script, FromScript: true, Parallelism: 2, ScriptDuration: &metav1.Duration{Duration: 2 * time.Minute}}})
	if res := mustStep(t)(f.r.Run(t.Context(), exp)); res.Done || res.Failure != nil {
		t.Fatalf("Run() = %+v, want a wait for the pods", res)
	}
	cm := &corev1.ConfigMap{}
	if !f.get(load.UnitName(exp, "docs"), cm) || !strings.Contains(cm.Data[load.EntryKey], "const shape = null;") {
		t.Fatalf("the entry script does not keep the script's scenarios:\n%s", cm.Data[load.EntryKey])
	}
	job := f.job(exp, "docs")
	start := second(f.clock.Now())
	for i := range 2 {
		pod := f.runPod(job, i, start)
		// What the pods' k6 prints: the summary with the per-scenario counts the entry declares.
		log := fmt.Sprintf("{\n\"metrics\": {\"http_reqs\": {\"count\": 5}, \"http_reqs{scenario:browse}\": {\"count\": 3}, \"http_reqs{scenario:checkout}\": {\"count\": %d}}\n}\n", 2+i)
		f.endPod(pod, 0, "Completed", start, start.Add(time.Minute), log)
	}
	f.clock.Step(time.Minute)
	if res := mustStep(t)(f.r.Run(t.Context(), exp)); !res.Done {
		t.Fatalf("Run() = %+v, want done", res)
	}
	if st := scenarioState(exp, "docs"); st == nil || strings.Join(st.K6Scenarios, ",") != "browse,checkout" {
		t.Fatalf("status %+v, want k6Scenarios browse,checkout", st)
	}

	// k6-operator passes the execution segments on its runners' command line; the entry script
	// keeps the script's scenarios all the same.
	op := f.experiment("docs-operator", []perfexpv1alpha1.Scenario{{Name: "docs", Script: script, FromScript: true, Parallelism: 2}}, func(exp *perfexpv1alpha1.PerfExperiment) {
		exp.Spec.Load.Runner = perfexpv1alpha1.RunnerK6Operator
	})
	if res := mustStep(t)(f.r.Run(t.Context(), op)); res.Done || res.Failure != nil {
		t.Fatalf("Run() = %+v, want a wait for the TestRun", res)
	}
	tr := &unstructured.Unstructured{}
	tr.SetGroupVersionKind(load.TestRunGVK)
	if !f.get(load.UnitName(op, "docs"), tr) {
		t.Fatal("no TestRun")
	}
	if !f.get(load.UnitName(op, "docs"), cm) || !strings.Contains(cm.Data[load.EntryKey], "const shape = null;") || !strings.Contains(cm.Data[load.EntryKey], "const segments = [];") {
		t.Fatalf("the TestRun's entry script:\n%s", cm.Data[load.EntryKey])
	}
}
