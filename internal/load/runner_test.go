package load_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/yaml"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/load"
	"github.com/perfexp/perfexp/internal/testenv"
)

// One API server serves every story; each story works in its own namespace.
func TestLoadOnAPIServer(t *testing.T) {
	env := testenv.Start(t, filepath.Join("testdata", "crds"))
	t.Run("each load shape becomes an Indexed Job and a script ConfigMap", func(t *testing.T) { jobSpecs(t, env) })
	t.Run("a scenario with a start delay starts when its delay has passed", func(t *testing.T) { startDelay(t, env) })
	t.Run("the warm-up runs first and marks the window", func(t *testing.T) { warmUp(t, env) })
	t.Run("k6 exit codes and pod failures decide the run", func(t *testing.T) { outcomes(t, env) })
	t.Run("a run that ends well records the window, exit codes and summaries", func(t *testing.T) { success(t, env) })
	t.Run("abort stops the load promptly", func(t *testing.T) { stop(t, env) })
	t.Run("stop leaves alone a Job whose pods all ended", func(t *testing.T) { stopAfterSuccess(t, env) })
	t.Run("an experiment with a long name gets Jobs the API server accepts", func(t *testing.T) { longNames(t, env) })
	t.Run("the k6-operator runner follows its TestRun", func(t *testing.T) { testRun(t, env) })
	t.Run("the setup Job prepares data before the load", func(t *testing.T) { setup(t, env) })
	t.Run("the teardown Job runs after the load, outlives Stop, and stops after its timeout", func(t *testing.T) { teardown(t, env) })
	t.Run("the scenario library's experiments are accepted", func(t *testing.T) { library(t, env) })
	t.Run("runner pods run as the runner account and pass the operator's rules when created", func(t *testing.T) { runnerPods(t, env) })
	t.Run("objects of an earlier experiment of the same name are replaced, others' refused", func(t *testing.T) { earlierIncarnation(t, env) })
}

// A sweep deleted and applied again (or a GitOps tool recreating an experiment) gives a run the
// name of one whose Jobs and ConfigMaps the garbage collector has not removed yet. Those are
// deleted and waited for; an object another owner holds under that name still fails the run.
func earlierIncarnation(t *testing.T, env *testenv.Env) {
	f := newFixture(t, env, "again")
	scenarios := []perfexpv1alpha1.Scenario{vusScenario("checkout", 1, time.Minute)}
	warm := func(exp *perfexpv1alpha1.PerfExperiment) {
		exp.Spec.Load.WarmUp = &perfexpv1alpha1.WarmUp{Scenario: "checkout", VUs: 1, Duration: metav1.Duration{Duration: time.Minute}}
	}
	old := f.experiment("run-1", scenarios, warm)
	if res := mustStep(t)(f.r.WarmUp(t.Context(), old)); res.Done || res.Failure != nil {
		t.Fatalf("WarmUp() = %+v", res)
	}
	oldJob := f.job(old, load.WarmUpName)
	// envtest runs no garbage collector: the old experiment's Job and ConfigMap stay, as they do
	// for a while on a real cluster.
	if err := f.c.Delete(t.Context(), old); err != nil {
		t.Fatal(err)
	}
	exp := f.experiment("run-1", scenarios, warm)
	for i := 0; ; i++ {
		res := mustStep(t)(f.r.WarmUp(t.Context(), exp))
		if res.Failure != nil {
			t.Fatalf("the run failed on what its earlier namesake left: %s", res.Failure.Message)
		}
		job := &batchv1.Job{}
		if f.get(load.UnitName(exp, load.WarmUpName), job) && metav1.GetControllerOf(job).UID == exp.UID {
			break
		}
		if !strings.Contains(res.Waiting, "left by an earlier experiment named run-1") || res.RequeueAfter <= 0 {
			t.Fatalf("WarmUp() = %+v, want a wait for the earlier experiment's objects", res)
		}
		if i == 3 {
			t.Fatal("no Job of the new experiment after 3 waits")
		}
	}
	if got := (&batchv1.Job{}); f.get(oldJob.Name, got) && got.UID == oldJob.UID {
		t.Error("the earlier experiment's Job is still there")
	}
	cm := &corev1.ConfigMap{}
	if !f.get(load.UnitName(exp, load.WarmUpName), cm) || metav1.GetControllerOf(cm).UID != exp.UID {
		t.Error("the script ConfigMap is not the new experiment's")
	}

	// A Job of that name held by something else is not touched.
	other := f.experiment("run-2", scenarios)
	holder := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "holder", Namespace: f.ns}}
	if err := f.c.Create(t.Context(), holder); err != nil {
		t.Fatal(err)
	}
	foreign := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: load.UnitName(other, "checkout"), Namespace: f.ns}, Spec: *oldJob.Spec.DeepCopy()}
	foreign.Spec.Selector, foreign.Spec.Template.Labels = nil, map[string]string{"app": "foreign"}
	if err := controllerutil.SetControllerReference(holder, foreign, f.c.Scheme()); err != nil {
		t.Fatal(err)
	}
	if err := f.c.Create(t.Context(), foreign); err != nil {
		t.Fatal(err)
	}
	res := mustStep(t)(f.r.Run(t.Context(), other))
	if res.Failure == nil || !strings.Contains(res.Failure.Message, "does not belong to this experiment") {
		t.Errorf("Run() = %+v, want a failure for another owner's Job", res)
	}
	if !f.get(foreign.Name, &batchv1.Job{}) {
		t.Error("another owner's Job was deleted")
	}
}

func teardown(t *testing.T, env *testenv.Env) {
	f := newFixture(t, env, "teardown")
	exp := f.experiment("reset", []perfexpv1alpha1.Scenario{vusScenario("checkout", 1, time.Minute)}, func(exp *perfexpv1alpha1.PerfExperiment) {
		exp.Spec.Teardown = &perfexpv1alpha1.Setup{Image: "perfexp/datagen:1", Args: []string{"--reset-refresh-state"}, RunAsUser: ptr.To[int64](999)}
	})
	if res := mustStep(t)(f.r.Teardown(t.Context(), exp)); res.Done || res.Failure != nil {
		t.Fatalf("Teardown() = %+v, want a wait for its Job", res)
	}
	job := &batchv1.Job{}
	if !f.get(load.TeardownJobName(exp), job) {
		t.Fatal("no teardown Job")
	}
	if c := job.Spec.Template.Spec.Containers[0]; c.Image != "perfexp/datagen:1" || !slices.Equal(c.Args, []string{"--reset-refresh-state"}) {
		t.Errorf("teardown container %+v", c)
	}
	if ref := metav1.GetControllerOf(job); ref == nil || ref.UID != exp.UID {
		t.Error("the teardown Job is not owned by the experiment")
	}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: job.Name + "-x", Namespace: f.ns, Labels: job.Spec.Template.Labels},
		Spec: *job.Spec.Template.Spec.DeepCopy()}
	if err := f.c.Create(t.Context(), pod); err != nil {
		t.Fatal(err)
	}

	// Restoring calls Stop on every pass; the teardown runs after the load and must survive it.
	if res := mustStep(t)(f.r.Stop(t.Context(), exp)); !res.Done {
		t.Fatalf("Stop() = %+v: it waits for the teardown pod", res)
	}
	if !f.get(job.Name, job) || ptr.Deref(job.Spec.Suspend, false) {
		t.Fatal("Stop suspended the teardown Job")
	}
	if !f.get(pod.Name, &corev1.Pod{}) {
		t.Fatal("Stop deleted the teardown pod")
	}

	if err := f.r.StopTeardown(t.Context(), exp); err != nil {
		t.Fatal(err)
	}
	if !f.get(job.Name, job) || !ptr.Deref(job.Spec.Suspend, false) {
		t.Error("StopTeardown did not suspend the teardown Job")
	}
	if got := &(corev1.Pod{}); f.get(pod.Name, got) && got.DeletionTimestamp == nil {
		t.Error("StopTeardown left the teardown pod running")
	}
}

func jobSpecs(t *testing.T, env *testenv.Env) {
	f := newFixture(t, env, "shapes")
	userCM := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "checkout-scripts", Namespace: f.ns},
		Data: map[string]string{
			"checkout.js": "import { items } from './lib.js';\nexport default function () {}\n",
			"lib.js":      "export const items = 5;\n",
		},
	}
	if err := f.c.Create(t.Context(), userCM); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name        string
		scenario    perfexpv1alpha1.Scenario
		mutate      func(*perfexpv1alpha1.PerfExperiment)
		parallelism int32
		// wantShape is the k6 scenario the entry script declares.
		wantShape  map[string]any
		wantScript string
		wantFiles  []string
		check      func(t *testing.T, job *batchv1.Job)
	}{
		{
			name:        "vus-duration",
			scenario:    vusScenario("checkout", 8, 30*time.Minute),
			parallelism: 1,
			wantShape:   map[string]any{"executor": "constant-vus", "vus": 8.0, "duration": "30m0s"},
			wantScript:  "export default function () {}\n",
			wantFiles:   []string{load.EntryKey, load.InlineScriptKey},
		},
		{
			name: "stages",
			scenario: perfexpv1alpha1.Scenario{Name: "soak", Script: perfexpv1alpha1.ScriptSource{Inline: "export default function () {}\n"},
				Stages: []perfexpv1alpha1.Stage{{Duration: metav1.Duration{Duration: time.Minute}, Target: 20}, {Duration: metav1.Duration{Duration: 24 * time.Hour}, Target: 20}}},
			parallelism: 1,
			wantShape: map[string]any{"executor": "ramping-vus", "stages": []any{
				map[string]any{"duration": "1m0s", "target": 20.0}, map[string]any{"duration": "24h0m0s", "target": 20.0}}},
			wantFiles: []string{load.EntryKey, load.InlineScriptKey},
		},
		{
			name: "arrival-rate",
			scenario: perfexpv1alpha1.Scenario{Name: "import", Script: perfexpv1alpha1.ScriptSource{Inline: "export default function () {}\n"},
				ArrivalRate: &perfexpv1alpha1.ArrivalRate{Rate: 50, Duration: metav1.Duration{Duration: 10 * time.Minute}, PreAllocatedVUs: 10, MaxVUs: ptr.To[int32](30)}},
			parallelism: 1,
			wantShape: map[string]any{"executor": "constant-arrival-rate", "rate": 50.0, "timeUnit": "1s", "duration": "10m0s",
				"preAllocatedVUs": 10.0, "maxVUs": 30.0},
			wantFiles: []string{load.EntryKey, load.InlineScriptKey},
		},
		{
			name: "parallelism-3-from-a-configmap",
			scenario: func() perfexpv1alpha1.Scenario {
				s := vusScenario("checkout", 9, 5*time.Minute)
				s.Script = perfexpv1alpha1.ScriptSource{ConfigMap: &perfexpv1alpha1.ConfigMapScript{Name: "checkout-scripts", Key: "checkout.js"}}
				s.Parallelism = 3
				s.Env = []perfexpv1alpha1.EnvVar{
					{Name: "BASE_URL", Value: "http://circulation:8080"},
					{Name: "PASSWORD", ValueFrom: &perfexpv1alpha1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
						LocalObjectReference: corev1.LocalObjectReference{Name: "patrons"}, Key: "password"}}},
					{Name: "K6_PROMETHEUS_RW_TREND_AS_NATIVE_HISTOGRAM", Value: "false"},
				}
				s.Args = []string{"--http-debug"}
				s.Resources = &corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("512Mi")}}
				return s
			}(),
			mutate: func(exp *perfexpv1alpha1.PerfExperiment) {
				exp.Spec.Load.Pod = &perfexpv1alpha1.RunnerPod{
					NodeSelector:       map[string]string{"pool": "load"},
					Tolerations:        []corev1.Toleration{{Key: "load", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}},
					ServiceAccountName: "k6",
				}
				exp.Spec.Analysis = &perfexpv1alpha1.Analysis{PrometheusURL: "http://thanos-receive.monitoring:9090/"}
			},
			parallelism: 3,
			wantShape:   map[string]any{"executor": "constant-vus", "vus": 9.0, "duration": "5m0s"},
			wantScript:  userCM.Data["checkout.js"],
			wantFiles:   []string{load.EntryKey, "checkout.js", "lib.js"},
			check: func(t *testing.T, job *batchv1.Job) {
				spec := job.Spec.Template.Spec
				c := spec.Containers[0]
				if spec.NodeSelector["pool"] != "load" || len(spec.Tolerations) != 1 || spec.ServiceAccountName != "k6" {
					t.Errorf("placement not applied: %v %v %q", spec.NodeSelector, spec.Tolerations, spec.ServiceAccountName)
				}
				if c.Resources.Limits.Memory().String() != "512Mi" {
					t.Errorf("resources not applied: %v", c.Resources)
				}
				env := map[string]corev1.EnvVar{}
				for _, e := range c.Env {
					env[e.Name] = e
				}
				if got := env["K6_PROMETHEUS_RW_SERVER_URL"].Value; got != "http://thanos-receive.monitoring:9090/api/v1/write" {
					t.Errorf("remote write goes to %q, want the analysis' Prometheus", got)
				}
				if got := env["K6_PROMETHEUS_RW_TREND_AS_NATIVE_HISTOGRAM"].Value; got != "false" {
					t.Errorf("the scenario's env must override perfexp's, got %q", got)
				}
				if env["PASSWORD"].ValueFrom == nil || env["PASSWORD"].ValueFrom.SecretKeyRef.Name != "patrons" {
					t.Errorf("credentials must come from the Secret: %+v", env["PASSWORD"])
				}
				if !slices.Contains(c.Args, "--http-debug") {
					t.Errorf("user args missing: %q", c.Args)
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mutate := func(*perfexpv1alpha1.PerfExperiment) {}
			if tt.mutate != nil {
				mutate = tt.mutate
			}
			exp := f.experiment(tt.name, []perfexpv1alpha1.Scenario{tt.scenario}, mutate)
			res := mustStep(t)(f.r.Run(t.Context(), exp))
			if res.Done || res.Failure != nil {
				t.Fatalf("Run() = %+v; want it waiting for the pods", res)
			}
			name := tt.scenario.Name
			job := f.job(exp, name)

			// The Job: Indexed, N pods, never retried, labelled and owned.
			if ptr.Deref(job.Spec.CompletionMode, "") != batchv1.IndexedCompletion ||
				*job.Spec.Parallelism != tt.parallelism || *job.Spec.Completions != tt.parallelism ||
				ptr.Deref(job.Spec.BackoffLimitPerIndex, -1) != 0 {
				t.Errorf("Job spec: mode %v parallelism %d completions %d backoffLimitPerIndex %v",
					job.Spec.CompletionMode, *job.Spec.Parallelism, *job.Spec.Completions, job.Spec.BackoffLimitPerIndex)
			}
			for _, obj := range []metav1.Object{job, &job.Spec.Template} {
				l := obj.GetLabels()
				if l[perfexpv1alpha1.LabelExperiment] != exp.Name || l[perfexpv1alpha1.LabelTestID] != exp.Status.TestID || l[perfexpv1alpha1.LabelScenario] != name {
					t.Errorf("labels %v", l)
				}
			}
			if ref := metav1.GetControllerOf(job); ref == nil || ref.UID != exp.UID {
				t.Errorf("the Job is not owned by the experiment: %v", job.OwnerReferences)
			}

			// The k6 container: perfexp's command line, restricted security.
			c := job.Spec.Template.Spec.Containers[0]
			wantArgs := append([]string{"run"}, tt.scenario.Args...)
			wantArgs = append(wantArgs, "--quiet", "--tag", "testid="+exp.Status.TestID, "--tag", "scenario="+name,
				"--out", "experimental-prometheus-rw", "--summary-export", "/dev/stdout", "--tag", "instance_id=$(JOB_COMPLETION_INDEX)", "/scripts/perfexp-run.js")
			if !slices.Equal(c.Args, wantArgs) {
				t.Errorf("args\n%q\nwant\n%q", c.Args, wantArgs)
			}
			if c.Image != "perfexp/k6:v1.8.1" {
				t.Errorf("image %q", c.Image)
			}
			sc, psc := c.SecurityContext, job.Spec.Template.Spec.SecurityContext
			if !*sc.ReadOnlyRootFilesystem || *sc.AllowPrivilegeEscalation || sc.Capabilities.Drop[0] != "ALL" ||
				!*psc.RunAsNonRoot || *psc.RunAsUser != load.DefaultRunAsUser || psc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
				t.Errorf("not restricted: %+v %+v", sc, psc)
			}
			if !slices.ContainsFunc(c.VolumeMounts, func(m corev1.VolumeMount) bool { return m.MountPath == "/tmp" }) {
				t.Errorf("no writable /tmp: %v", c.VolumeMounts)
			}
			if tt.check != nil {
				tt.check(t, job)
			}

			// The ConfigMap: the entry script with the experiment's shape beside the user's files.
			cm := &corev1.ConfigMap{}
			if !f.get(load.UnitName(exp, name), cm) {
				t.Fatal("no script ConfigMap")
			}
			if ref := metav1.GetControllerOf(cm); ref == nil || ref.UID != exp.UID {
				t.Errorf("the ConfigMap is not owned by the experiment")
			}
			var files []string
			for k := range cm.Data {
				files = append(files, k)
			}
			slices.Sort(files)
			want := slices.Sorted(slices.Values(tt.wantFiles))
			if !slices.Equal(files, want) {
				t.Errorf("ConfigMap keys %v, want %v", files, want)
			}
			if tt.wantScript != "" && cm.Data[filesMain(tt.scenario)] != tt.wantScript {
				t.Errorf("the user's script changed: %q", cm.Data[filesMain(tt.scenario)])
			}
			entry := cm.Data[load.EntryKey]
			if got := shapeOf(t, entry, name); !equalJSON(got, tt.wantShape) {
				t.Errorf("entry script shape %v, want %v", got, tt.wantShape)
			}
			segs, seq := load.ExecutionSegments(int(tt.parallelism))
			if tt.parallelism > 1 {
				wantSegs, _ := json.Marshal(segs)
				if !strings.Contains(entry, "const segments = "+string(wantSegs)+";") || !strings.Contains(entry, `const sequence = "`+seq+`";`) {
					t.Errorf("entry script lacks the segments %s / %s:\n%s", wantSegs, seq, entry)
				}
			}
		})
	}
}

func filesMain(sc perfexpv1alpha1.Scenario) string {
	if sc.Script.ConfigMap != nil {
		return sc.Script.ConfigMap.Key
	}
	return load.InlineScriptKey
}

// shapeOf reads the k6 scenario an entry script declares.
func shapeOf(t *testing.T, entry, name string) map[string]any {
	t.Helper()
	start := strings.Index(entry, "const shape = ")
	end := strings.Index(entry, ";\nconst segments")
	if start < 0 || end < 0 {
		t.Fatalf("no shape in the entry script:\n%s", entry)
	}
	var shape map[string]map[string]any
	if err := json.Unmarshal([]byte(entry[start+len("const shape = "):end]), &shape); err != nil {
		t.Fatal(err)
	}
	return shape[name]
}

func equalJSON(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}

func startDelay(t *testing.T, env *testenv.Env) {
	f := newFixture(t, env, "delay")
	importer := vusScenario("import", 2, 5*time.Minute)
	importer.StartDelay = &metav1.Duration{Duration: 10 * time.Minute}
	importer.Parallelism = 2
	exp := f.experiment("checkout-with-import", []perfexpv1alpha1.Scenario{vusScenario("checkout", 5, 30*time.Minute), importer})

	res := mustStep(t)(f.r.Run(t.Context(), exp))
	if res.Done || res.RequeueAfter <= 0 || res.RequeueAfter > 10*time.Minute {
		t.Fatalf("Run() = %+v", res)
	}
	f.job(exp, "checkout")
	if f.get(load.UnitName(exp, "import"), &batchv1.Job{}) {
		t.Fatal("the import Job was created before its start delay passed")
	}
	if st := scenarioState(exp, "import"); st == nil || st.State != perfexpv1alpha1.ScenarioWaiting {
		t.Fatalf("import state %+v, want Waiting", st)
	}
	if !strings.Contains(res.Waiting, "import starts in 10m") {
		t.Errorf("waiting for %q", res.Waiting)
	}

	checkout := f.job(exp, "checkout")
	f.runPod(checkout, 0, second(time.Now()))
	f.clock.Step(10 * time.Minute)
	if res := mustStep(t)(f.r.Run(t.Context(), exp)); res.Failure != nil {
		t.Fatalf("Run() = %+v", res)
	}
	job := f.job(exp, "import")
	if *job.Spec.Parallelism != 2 {
		t.Fatalf("import parallelism %d", *job.Spec.Parallelism)
	}
	if planned := f.r.PlannedDuration(exp); planned != 30*time.Minute {
		t.Errorf("PlannedDuration() = %s", planned)
	}
}

func warmUp(t *testing.T, env *testenv.Env) {
	f := newFixture(t, env, "warmup")
	exp := f.experiment("warm", []perfexpv1alpha1.Scenario{vusScenario("browse", 2, time.Minute), vusScenario("checkout", 4, time.Minute)},
		func(exp *perfexpv1alpha1.PerfExperiment) {
			exp.Spec.Load.WarmUp = &perfexpv1alpha1.WarmUp{Scenario: "checkout", VUs: 3, Duration: metav1.Duration{Duration: 2 * time.Minute}}
		})
	res := mustStep(t)(f.r.WarmUp(t.Context(), exp))
	if res.Done {
		t.Fatal("the warm-up was done before it ran")
	}
	job := f.job(exp, load.WarmUpName)
	if *job.Spec.Parallelism != 1 {
		t.Errorf("warm-up parallelism %d", *job.Spec.Parallelism)
	}
	cm := &corev1.ConfigMap{}
	f.get(load.UnitName(exp, load.WarmUpName), cm)
	if got := shapeOf(t, cm.Data[load.EntryKey], load.WarmUpName); !equalJSON(got, map[string]any{"executor": "constant-vus", "vus": 3, "duration": "2m0s"}) {
		t.Errorf("warm-up shape %v", got)
	}
	if f.get(load.UnitName(exp, "checkout"), &batchv1.Job{}) {
		t.Fatal("a scenario started during the warm-up")
	}

	start := second(time.Now())
	pod := f.runPod(job, 0, start)
	if res := mustStep(t)(f.r.WarmUp(t.Context(), exp)); res.Done {
		t.Fatal("done while the warm-up pod runs")
	}
	if exp.Status.Window == nil || !exp.Status.Window.Start.Time.Equal(start) {
		t.Fatalf("window %+v, want start %s", exp.Status.Window, start)
	}
	end := start.Add(2 * time.Minute)
	f.endPod(pod, 0, "Completed", start, end, k6Log(100))
	if res := mustStep(t)(f.r.WarmUp(t.Context(), exp)); !res.Done {
		t.Fatalf("WarmUp() = %+v after the pod ended", res)
	}
	// Container times are whole seconds, cut down: the warm-up ended within the second after.
	if !exp.Status.Window.WarmUpEnd.Time.Equal(end.Add(time.Second)) || !exp.Status.Window.Start.Time.Equal(start) {
		t.Fatalf("window %+v, want %s..%s", exp.Status.Window, start, end.Add(time.Second))
	}
	if st := scenarioState(exp, load.WarmUpName); st == nil || st.State != perfexpv1alpha1.ScenarioSucceeded || exp.Status.Load.Scenarios[0].Name != load.WarmUpName {
		t.Fatalf("warm-up status %+v", exp.Status.Load)
	}
}

func outcomes(t *testing.T, env *testenv.Env) {
	f := newFixture(t, env, "outcomes")
	scriptErr := "time=\"2026-03-01T09:00:01Z\" level=error msg=\"ReferenceError: patron is not defined\\n\\tat default (file:///scripts/script.js:12:5)\" hint=\"script exception\"\n"
	tests := []struct {
		name string
		// act simulates what happens to the two pods of the scenario.
		act         func(f *fixture, pods []*corev1.Pod, start time.Time)
		wantDone    bool
		wantReason  string
		wantMessage string
		wantCodes   []int32
		thresholds  bool
	}{
		{
			name: "exit-0",
			act: func(f *fixture, pods []*corev1.Pod, s time.Time) {
				f.endPod(pods[0], 0, "Completed", s, s.Add(time.Minute), k6Log(10))
				f.endPod(pods[1], 0, "Completed", s, s.Add(time.Minute), k6Log(10))
			},
			wantDone: true, wantCodes: []int32{0, 0},
		},
		{
			name: "thresholds-crossed",
			act: func(f *fixture, pods []*corev1.Pod, s time.Time) {
				f.endPod(pods[0], 99, "Error", s, s.Add(time.Minute), k6Log(10))
				f.endPod(pods[1], 0, "Completed", s, s.Add(time.Minute), k6Log(10))
			},
			wantDone: true, wantCodes: []int32{99, 0}, thresholds: true,
		},
		{
			name: "script-error",
			act: func(f *fixture, pods []*corev1.Pod, s time.Time) {
				f.endPod(pods[0], 107, "Error", s, s.Add(time.Second), scriptErr)
			},
			wantReason: perfexpv1alpha1.ReasonScriptError, wantMessage: "ReferenceError: patron is not defined", wantCodes: []int32{107, -1},
		},
		{
			name: "script-abort",
			act: func(f *fixture, pods []*corev1.Pod, s time.Time) {
				f.endPod(pods[1], 108, "Error", s, s.Add(time.Second), "level=error msg=\"test aborted: no patrons\"\n")
			},
			wantReason: perfexpv1alpha1.ReasonScriptError, wantMessage: "test aborted: no patrons", wantCodes: []int32{-1, 108},
		},
		{
			name: "oom-killed",
			act: func(f *fixture, pods []*corev1.Pod, s time.Time) {
				f.endPod(pods[0], 137, "OOMKilled", s, s.Add(time.Second), "")
			},
			wantReason: perfexpv1alpha1.ReasonLoadFailed, wantMessage: "OOMKilled", wantCodes: []int32{137, -1},
		},
		{
			name: "evicted",
			act: func(f *fixture, pods []*corev1.Pod, _ time.Time) {
				f.setState(pods[1], corev1.PodFailed, corev1.ContainerState{}, func(s *corev1.PodStatus) {
					s.Reason, s.Message = "Evicted", "The node was low on resource: memory."
				})
			},
			wantReason: perfexpv1alpha1.ReasonLoadFailed, wantMessage: "evicted: The node was low on resource: memory.",
		},
		{
			name: "image-pull-back-off",
			act: func(f *fixture, pods []*corev1.Pod, _ time.Time) {
				f.setState(pods[0], corev1.PodPending, corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{
					Reason: "ImagePullBackOff", Message: `Back-off pulling image "perfexp/k6:v1.8.1"`}})
			},
			wantReason: perfexpv1alpha1.ReasonLoadFailed, wantMessage: "image cannot be pulled (ImagePullBackOff)",
		},
		{
			name: "pending-too-long",
			act: func(f *fixture, pods []*corev1.Pod, _ time.Time) {
				f.setState(pods[0], corev1.PodPending, corev1.ContainerState{}, func(s *corev1.PodStatus) {
					s.ContainerStatuses = nil
					s.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse,
						Reason: "Unschedulable", Message: "0/1 nodes are available: 1 Insufficient cpu."}}
				})
				f.clock.Step(6 * time.Minute)
			},
			wantReason: perfexpv1alpha1.ReasonLoadFailed, wantMessage: "Insufficient cpu",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := vusScenario("checkout", 4, time.Minute)
			s.Parallelism = 2
			exp := f.experiment(tt.name, []perfexpv1alpha1.Scenario{s})
			mustStep(t)(f.r.Run(t.Context(), exp))
			job := f.job(exp, "checkout")
			start := second(time.Now())
			pods := []*corev1.Pod{f.runPod(job, 0, start), f.runPod(job, 1, start)}
			tt.act(f, pods, start)
			res := mustStep(t)(f.r.Run(t.Context(), exp))
			st := scenarioState(exp, "checkout")
			switch tt.wantReason {
			case "":
				if !res.Done {
					t.Fatalf("Run() = %+v, want done", res)
				}
				if st.State != perfexpv1alpha1.ScenarioSucceeded {
					t.Errorf("state %s", st.State)
				}
			default:
				if res.Failure == nil || res.Failure.Reason != tt.wantReason || !strings.Contains(res.Failure.Message, tt.wantMessage) {
					t.Fatalf("Run() failure %+v; want reason %s with %q", res.Failure, tt.wantReason, tt.wantMessage)
				}
				if st.State != perfexpv1alpha1.ScenarioFailed || !strings.Contains(st.Message, tt.wantMessage) {
					t.Errorf("scenario status %+v", st)
				}
			}
			if tt.wantCodes != nil && !slices.Equal(st.ExitCodes, tt.wantCodes) {
				t.Errorf("exit codes %v, want %v", st.ExitCodes, tt.wantCodes)
			}
			if exp.Status.Load.ThresholdsCrossed != tt.thresholds {
				t.Errorf("thresholdsCrossed %v", exp.Status.Load.ThresholdsCrossed)
			}
		})
	}
}

func success(t *testing.T, env *testenv.Env) {
	f := newFixture(t, env, "success")
	s := vusScenario("checkout", 4, time.Minute)
	s.Parallelism = 2
	exp := f.experiment("ok", []perfexpv1alpha1.Scenario{s, vusScenario("search", 1, time.Minute)})
	mustStep(t)(f.r.Run(t.Context(), exp))
	checkout, search := f.job(exp, "checkout"), f.job(exp, "search")
	t1 := second(time.Now())
	pods := []*corev1.Pod{f.runPod(checkout, 0, t1.Add(time.Second)), f.runPod(checkout, 1, t1), f.runPod(search, 0, t1.Add(2*time.Second))}
	f.endPod(pods[0], 0, "Completed", t1.Add(time.Second), t1.Add(61*time.Second), k6Log(60))
	f.endPod(pods[1], 0, "Completed", t1, t1.Add(63*time.Second), k6Log(62))
	if res := mustStep(t)(f.r.Run(t.Context(), exp)); res.Done {
		t.Fatal("done while search still runs")
	}
	if st := scenarioState(exp, "checkout"); st.State != perfexpv1alpha1.ScenarioSucceeded || !st.CompletionTime.Time.Equal(t1.Add(63*time.Second)) {
		t.Fatalf("checkout %+v", st)
	}
	if exp.Status.Window.End != nil {
		t.Fatal("the window ended while search runs")
	}
	f.endPod(pods[2], 0, "Completed", t1.Add(2*time.Second), t1.Add(65*time.Second), k6Log(30))
	if res := mustStep(t)(f.r.Run(t.Context(), exp)); !res.Done {
		t.Fatalf("Run() = %+v", res)
	}
	w := exp.Status.Window
	if !w.Start.Time.Equal(t1) || !w.End.Time.Equal(t1.Add(66*time.Second)) {
		t.Fatalf("window %s..%s, want %s..%s (the last pod's end, rounded up)", w.Start, w.End, t1, t1.Add(66*time.Second))
	}
	summaries, err := load.ReadSummaries(t.Context(), f.c, exp)
	if err != nil {
		t.Fatal(err)
	}
	iterations := map[string]float64{}
	for k, s := range summaries {
		iterations[k], _ = s.Metrics["iterations"].Value("count")
	}
	want := map[string]float64{"checkout-0.json": 60, "checkout-1.json": 62, "search-0.json": 30}
	if !equalJSON(iterations, want) {
		t.Fatalf("summaries %v, want %v", iterations, want)
	}
	if exp.Status.Load.SummariesRef == nil || exp.Status.Load.SummariesRef.Name != load.SummariesName(exp) {
		t.Errorf("summariesRef %+v", exp.Status.Load.SummariesRef)
	}
	reads := f.logs.read[pods[0].Name]
	mustStep(t)(f.r.Run(t.Context(), exp))
	if f.logs.read[pods[0].Name] != reads {
		t.Error("a kept summary was read again")
	}
	// Stop after a good run changes nothing and leaves the finished pods for their logs.
	if res := mustStep(t)(f.r.Stop(t.Context(), exp)); !res.Done {
		t.Fatalf("Stop() = %+v", res)
	}
	if st := scenarioState(exp, "checkout"); st.State != perfexpv1alpha1.ScenarioSucceeded {
		t.Fatalf("Stop changed a finished scenario: %+v", st)
	}
}

func stop(t *testing.T, env *testenv.Env) {
	f := newFixture(t, env, "stop")
	s := vusScenario("checkout", 4, time.Hour)
	s.Parallelism = 2
	later := vusScenario("import", 1, time.Minute)
	later.StartDelay = &metav1.Duration{Duration: 30 * time.Minute}
	exp := f.experiment("abort", []perfexpv1alpha1.Scenario{s, later}, func(exp *perfexpv1alpha1.PerfExperiment) {
		exp.Spec.Setup = &perfexpv1alpha1.Setup{Image: "perfexp/datagen:1"}
	})
	mustStep(t)(f.r.Run(t.Context(), exp))
	job := f.job(exp, "checkout")
	now := second(time.Now())
	pods := []*corev1.Pod{f.runPod(job, 0, now), f.runPod(job, 1, now)}
	mustStep(t)(f.r.Run(t.Context(), exp))

	res := mustStep(t)(f.r.Stop(t.Context(), exp))
	if res.Done {
		t.Fatal("Stop() done while k6 pods ran")
	}
	job = f.job(exp, "checkout")
	if !ptr.Deref(job.Spec.Suspend, false) {
		t.Error("the Job was not suspended, so the Job controller would start pods again")
	}
	for _, p := range pods {
		if f.get(p.Name, &corev1.Pod{}) {
			t.Errorf("pod %s still exists", p.Name)
		}
	}
	for _, name := range []string{"checkout", "import"} {
		if st := scenarioState(exp, name); st.State != perfexpv1alpha1.ScenarioStopped {
			t.Errorf("%s state %s, want Stopped", name, st.State)
		}
	}
	if res := mustStep(t)(f.r.Stop(t.Context(), exp)); !res.Done {
		t.Fatalf("Stop() = %+v once no pod runs", res)
	}
}

func testRun(t *testing.T, env *testenv.Env) {
	f := newFixture(t, env, "k6-operator")
	s := vusScenario("checkout", 6, 10*time.Minute)
	s.Parallelism = 3
	s.Env = []perfexpv1alpha1.EnvVar{{Name: "BASE_URL", Value: "http://circulation:8080"}}
	exp := f.experiment("operator", []perfexpv1alpha1.Scenario{s}, func(exp *perfexpv1alpha1.PerfExperiment) {
		exp.Spec.Load.Runner = perfexpv1alpha1.RunnerK6Operator
		exp.Spec.Load.Pod = &perfexpv1alpha1.RunnerPod{NodeSelector: map[string]string{"pool": "load"}}
	})
	if res := mustStep(t)(f.r.Run(t.Context(), exp)); res.Done || res.Failure != nil {
		t.Fatalf("Run() = %+v", res)
	}
	tr := &unstructured.Unstructured{}
	tr.SetGroupVersionKind(load.TestRunGVK)
	name := load.UnitName(exp, "checkout")
	if !f.get(name, tr) {
		t.Fatal("no TestRun")
	}
	spec := tr.Object["spec"].(map[string]any)
	if spec["parallelism"] != int64(3) {
		t.Errorf("parallelism %v", spec["parallelism"])
	}
	if cm, _, _ := unstructured.NestedString(tr.Object, "spec", "script", "configMap", "name"); cm != name {
		t.Errorf("script ConfigMap %q", cm)
	}
	if file, _, _ := unstructured.NestedString(tr.Object, "spec", "script", "configMap", "file"); file != load.EntryKey {
		t.Errorf("script file %q", file)
	}
	wantArgs := "--tag testid=" + exp.Status.TestID + " --tag scenario=checkout --out experimental-prometheus-rw --summary-export /dev/stdout"
	if spec["arguments"] != wantArgs {
		t.Errorf("arguments %q\nwant %q", spec["arguments"], wantArgs)
	}
	if l, _, _ := unstructured.NestedStringMap(tr.Object, "spec", "runner", "metadata", "labels"); l[perfexpv1alpha1.LabelScenario] != "checkout" || l[perfexpv1alpha1.LabelTestID] != exp.Status.TestID {
		t.Errorf("runner labels %v", l)
	}
	if ro, _, _ := unstructured.NestedBool(tr.Object, "spec", "runner", "containerSecurityContext", "readOnlyRootFilesystem"); !ro {
		t.Error("runner not restricted")
	}
	if ns, _, _ := unstructured.NestedStringMap(tr.Object, "spec", "runner", "nodeSelector"); ns["pool"] != "load" {
		t.Errorf("nodeSelector %v", ns)
	}
	cm := &corev1.ConfigMap{}
	f.get(name, cm)
	if strings.Contains(cm.Data[load.EntryKey], "1/3") {
		t.Error("the entry script picks segments, which k6-operator passes itself")
	}

	// k6-operator's stages, played by the test: it creates runners, starts them, they end.
	setStage := func(stage string, conds ...map[string]any) {
		t.Helper()
		_ = unstructured.SetNestedField(tr.Object, stage, "status", "stage")
		if len(conds) > 0 {
			list := make([]any, len(conds))
			for i := range conds {
				list[i] = conds[i]
			}
			_ = unstructured.SetNestedSlice(tr.Object, list, "status", "conditions")
		}
		if err := f.c.Status().Update(t.Context(), tr); err != nil {
			t.Fatal(err)
		}
	}
	setStage("initialization")
	setStage("created")
	podsStart := second(time.Now())
	var pods []*corev1.Pod
	for i := 1; i <= 3; i++ {
		job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: name + "-" + string(rune('0'+i)), Namespace: f.ns}}
		job.Spec.Template.Spec.Containers = []corev1.Container{{Name: "k6", Image: "perfexp/k6:v1.8.1"}}
		job.Spec.Template.Labels = map[string]string{"app": "k6", "k6_cr": name, "runner": "true",
			perfexpv1alpha1.LabelTestID: exp.Status.TestID, perfexpv1alpha1.LabelScenario: "checkout", "app.kubernetes.io/managed-by": "perfexp"}
		pod := f.runPod(job, 0, podsStart)
		pods = append(pods, pod)
	}
	if res := mustStep(t)(f.r.Run(t.Context(), exp)); res.Done {
		t.Fatal("done while runners wait to be started")
	}
	resumed := podsStart.Add(4 * time.Second)
	setStage("started", map[string]any{"type": "TestRunRunning", "status": "True", "reason": "TestRunRunningTrue", "message": "",
		"lastTransitionTime": resumed.Format(time.RFC3339)})
	mustStep(t)(f.r.Run(t.Context(), exp))
	if st := scenarioState(exp, "checkout"); st.State != perfexpv1alpha1.ScenarioRunning || !st.StartTime.Time.Equal(resumed) {
		t.Fatalf("status %+v; want Running since the runners were resumed at %s", st, resumed)
	}
	for i, p := range pods {
		code := int32(0)
		if i == 2 {
			code = 99
		}
		f.endPod(p, code, "Completed", podsStart, resumed.Add(10*time.Minute), k6Log(100))
	}
	setStage("finished")
	res := mustStep(t)(f.r.Run(t.Context(), exp))
	if !res.Done {
		t.Fatalf("Run() = %+v after the TestRun finished", res)
	}
	st := scenarioState(exp, "checkout")
	if !slices.Equal(st.ExitCodes, []int32{0, 0, 99}) || !exp.Status.Load.ThresholdsCrossed {
		t.Fatalf("exit codes %v thresholds %v; k6-operator does not report them, the runner pods do", st.ExitCodes, exp.Status.Load.ThresholdsCrossed)
	}
	if !exp.Status.Window.Start.Time.Equal(resumed) || !exp.Status.Window.End.Time.Equal(resumed.Add(10*time.Minute+time.Second)) {
		t.Errorf("window %+v", exp.Status.Window)
	}

	t.Run("an error stage fails the load", func(t *testing.T) {
		exp := f.experiment("operator-error", []perfexpv1alpha1.Scenario{vusScenario("checkout", 1, time.Minute)}, func(exp *perfexpv1alpha1.PerfExperiment) {
			exp.Spec.Load.Runner = perfexpv1alpha1.RunnerK6Operator
		})
		mustStep(t)(f.r.Run(t.Context(), exp))
		tr = &unstructured.Unstructured{}
		tr.SetGroupVersionKind(load.TestRunGVK)
		f.get(load.UnitName(exp, "checkout"), tr)
		setStage("error", map[string]any{"type": "TestRunRunning", "status": "False", "reason": "TestRunFailed",
			"message": "initializer: k6 inspect failed", "lastTransitionTime": time.Now().UTC().Format(time.RFC3339)})
		res := mustStep(t)(f.r.Run(t.Context(), exp))
		if res.Failure == nil || !strings.Contains(res.Failure.Message, "k6 inspect failed") {
			t.Fatalf("Run() = %+v", res)
		}
		if res := mustStep(t)(f.r.Stop(t.Context(), exp)); !res.Done {
			t.Fatalf("Stop() = %+v with the TestRun in its error stage", res)
		}
	})

	t.Run("abort deletes an unfinished TestRun", func(t *testing.T) {
		exp := f.experiment("operator-abort", []perfexpv1alpha1.Scenario{vusScenario("checkout", 1, time.Hour)}, func(exp *perfexpv1alpha1.PerfExperiment) {
			exp.Spec.Load.Runner = perfexpv1alpha1.RunnerK6Operator
		})
		mustStep(t)(f.r.Run(t.Context(), exp))
		mustStep(t)(f.r.Stop(t.Context(), exp))
		gone := &unstructured.Unstructured{}
		gone.SetGroupVersionKind(load.TestRunGVK)
		if f.get(load.UnitName(exp, "checkout"), gone) && gone.GetDeletionTimestamp() == nil {
			t.Fatal("the TestRun was not deleted")
		}
		if res := mustStep(t)(f.r.Stop(t.Context(), exp)); !res.Done {
			t.Fatalf("Stop() = %+v", res)
		}
	})
}

func setup(t *testing.T, env *testenv.Env) {
	f := newFixture(t, env, "setup")
	withSetup := func(exp *perfexpv1alpha1.PerfExperiment) {
		exp.Spec.Setup = &perfexpv1alpha1.Setup{
			Image: "perfexp/datagen:1", Command: []string{"/datagen"}, Args: []string{"--records", "25000"},
			Env:       []perfexpv1alpha1.EnvVar{{Name: "DB_URL", Value: "postgres://db:5432/library"}},
			RunAsUser: ptr.To[int64](999), BackoffLimit: 1,
		}
	}
	tests := []struct {
		name       string
		conditions []batchv1.JobCondition
		log        string
		wantDone   bool
		wantFail   string
	}{
		{name: "complete", wantDone: true, conditions: []batchv1.JobCondition{
			{Type: batchv1.JobSuccessCriteriaMet, Status: corev1.ConditionTrue},
			{Type: batchv1.JobComplete, Status: corev1.ConditionTrue},
		}},
		{name: "failed", log: "loading 25000 records\nERROR: relation \"items\" does not exist\n",
			wantFail: `relation "items" does not exist`, conditions: []batchv1.JobCondition{
				{Type: batchv1.JobFailureTarget, Status: corev1.ConditionTrue, Reason: "BackoffLimitExceeded", Message: "Job has reached the specified backoff limit"},
				{Type: batchv1.JobFailed, Status: corev1.ConditionTrue, Reason: "BackoffLimitExceeded", Message: "Job has reached the specified backoff limit"},
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			exp := f.experiment(tt.name, []perfexpv1alpha1.Scenario{vusScenario("checkout", 1, time.Minute)}, withSetup)
			if res := mustStep(t)(f.r.Setup(t.Context(), exp)); res.Done || res.Failure != nil {
				t.Fatalf("Setup() = %+v", res)
			}
			job := &batchv1.Job{}
			if !f.get(load.SetupJobName(exp), job) {
				t.Fatal("no setup Job")
			}
			c := job.Spec.Template.Spec.Containers[0]
			if c.Image != "perfexp/datagen:1" || !slices.Equal(c.Args, []string{"--records", "25000"}) || c.Env[0].Name != "DB_URL" ||
				*job.Spec.BackoffLimit != 1 || *job.Spec.Template.Spec.SecurityContext.RunAsUser != 999 || *c.SecurityContext.AllowPrivilegeEscalation {
				t.Errorf("setup Job spec %+v", job.Spec)
			}
			if ref := metav1.GetControllerOf(job); ref == nil || ref.UID != exp.UID {
				t.Error("the setup Job is not owned by the experiment")
			}
			start := second(time.Now())
			pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: job.Name + "-x", Namespace: f.ns, Labels: job.Spec.Template.Labels},
				Spec: *job.Spec.Template.Spec.DeepCopy()}
			if err := f.c.Create(t.Context(), pod); err != nil {
				t.Fatal(err)
			}
			code := int32(0)
			if tt.wantFail != "" {
				code = 1
			}
			f.endPod(pod, code, "", start, start.Add(time.Minute), tt.log)
			now := metav1.Now()
			job.Status.StartTime = &now
			if tt.wantDone {
				job.Status.CompletionTime = &now
				job.Status.Succeeded = 1
			} else {
				job.Status.Failed = 2
			}
			for _, c := range tt.conditions {
				c.LastProbeTime, c.LastTransitionTime = now, now
				job.Status.Conditions = append(job.Status.Conditions, c)
			}
			if err := f.c.Status().Update(t.Context(), job); err != nil {
				t.Fatal(err)
			}
			res := mustStep(t)(f.r.Setup(t.Context(), exp))
			if res.Done != tt.wantDone {
				t.Fatalf("Setup() = %+v", res)
			}
			if tt.wantFail != "" && (res.Failure == nil || res.Failure.Reason != perfexpv1alpha1.ReasonSetupFailed || !strings.Contains(res.Failure.Message, tt.wantFail)) {
				t.Fatalf("Setup() failure %+v, want %s with %q", res.Failure, perfexpv1alpha1.ReasonSetupFailed, tt.wantFail)
			}
		})
	}
}

func library(t *testing.T, env *testenv.Env) {
	ns := env.Namespace(t, "library")
	files, err := filepath.Glob(filepath.Join(testenv.Root(), "scenarios", "*", "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	experiments := 0
	for _, file := range files {
		if filepath.Base(filepath.Dir(file)) == "demo" {
			continue
		}
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, doc := range strings.Split(string(data), "\n---\n") {
			obj := &unstructured.Unstructured{}
			if err := yaml.Unmarshal([]byte(doc), &obj.Object); err != nil {
				t.Fatalf("%s: %v", file, err)
			}
			if obj.GetKind() != "PerfExperiment" {
				continue
			}
			experiments++
			t.Run(filepath.Base(filepath.Dir(file))+"/"+obj.GetName(), func(t *testing.T) {
				obj.SetNamespace(ns)
				if err := env.Client.Create(t.Context(), obj, client.DryRunAll); err != nil {
					t.Fatalf("%s refused: %v", file, err)
				}
			})
		}
	}
	if experiments < 5 {
		t.Fatalf("found %d experiments in scenarios/; want one per workflow", experiments)
	}

	t.Run("the examples of docs/load.md are accepted", func(t *testing.T) {
		doc, err := os.ReadFile(filepath.Join(testenv.Root(), "docs", "load.md"))
		if err != nil {
			t.Fatal(err)
		}
		examples := 0
		for _, block := range strings.Split(string(doc), "```yaml\n")[1:] {
			obj := &unstructured.Unstructured{}
			if err := yaml.Unmarshal([]byte(block[:strings.Index(block, "```")]), &obj.Object); err != nil {
				t.Fatalf("an example does not parse: %v\n%s", err, block)
			}
			if obj.GetKind() != "PerfExperiment" {
				continue
			}
			examples++
			obj.SetNamespace(ns)
			if err := env.Client.Create(t.Context(), obj, client.DryRunAll); err != nil {
				t.Errorf("example %s refused: %v", obj.GetName(), err)
			}
		}
		if examples < 8 {
			t.Fatalf("found %d examples", examples)
		}
	})

	t.Run("an arrival rate with fewer VUs than pods is refused", func(t *testing.T) {
		exp := &perfexpv1alpha1.PerfExperiment{ObjectMeta: metav1.ObjectMeta{Name: "too-few-vus", Namespace: ns}}
		exp.Spec.Load.Scenarios = []perfexpv1alpha1.Scenario{{
			Name: "import", Script: perfexpv1alpha1.ScriptSource{Inline: "x"}, Parallelism: 4,
			ArrivalRate: &perfexpv1alpha1.ArrivalRate{Rate: 10, Duration: metav1.Duration{Duration: time.Minute}, PreAllocatedVUs: 2},
		}}
		err := env.Client.Create(t.Context(), exp, client.DryRunAll)
		if err == nil || !strings.Contains(err.Error(), "preAllocatedVUs must be at least parallelism") {
			t.Fatalf("got %v", err)
		}
	})
}

// stopAfterSuccess plays the moment after a successful run: every k6 pod of one scenario has
// succeeded but the Job controller has not yet marked its Job Complete, while another
// scenario's pod still runs. Restoring's stop must suspend only the latter, so the finished
// pods and their logs stay and `kubectl get jobs` does not read "Suspended".
func stopAfterSuccess(t *testing.T, env *testenv.Env) {
	f := newFixture(t, env, "stop-after-success")
	done := vusScenario("checkout", 2, time.Minute)
	done.Parallelism = 2
	exp := f.experiment("finished", []perfexpv1alpha1.Scenario{done, vusScenario("import", 1, time.Hour)})
	mustStep(t)(f.r.Run(t.Context(), exp))
	doneJob, runningJob := f.job(exp, "checkout"), f.job(exp, "import")
	start := second(time.Now())
	var donePods []*corev1.Pod
	for i := range 2 {
		p := f.runPod(doneJob, i, start)
		f.endPod(p, 0, "Completed", start, start.Add(time.Minute), k6Log(10))
		donePods = append(donePods, p)
	}
	running := f.runPod(runningJob, 0, start)
	// The Job controller's view lags: one pod still counted active, no condition yet.
	doneJob.Status.StartTime = &metav1.Time{Time: start}
	doneJob.Status.Active, doneJob.Status.Succeeded = 1, 1
	if err := f.c.Status().Update(t.Context(), doneJob); err != nil {
		t.Fatal(err)
	}

	mustStep(t)(f.r.Stop(t.Context(), exp))
	if j := f.job(exp, "checkout"); ptr.Deref(j.Spec.Suspend, false) {
		t.Error("the Job whose pods all succeeded was suspended: its pods and logs would be removed")
	}
	for _, p := range donePods {
		if !f.get(p.Name, &corev1.Pod{}) {
			t.Errorf("succeeded pod %s was deleted", p.Name)
		}
	}
	if j := f.job(exp, "import"); !ptr.Deref(j.Spec.Suspend, false) {
		t.Error("the Job still running was not suspended")
	}
	if f.get(running.Name, &corev1.Pod{}) {
		t.Error("the running pod was not deleted")
	}
	if st := scenarioState(exp, "import"); st == nil || st.State != perfexpv1alpha1.ScenarioStopped {
		t.Errorf("import state %+v, want Stopped", st)
	}
}

// longNames creates the Jobs of experiments whose names are as long as Kubernetes allows, and
// contain dots, through the real API server, which refuses an Indexed Job whose pods'
// hostnames (<job>-<index>) would not be DNS labels.
func longNames(t *testing.T, env *testenv.Env) {
	f := newFixture(t, env, "long-names")
	names := []string{
		strings.Repeat("checkout-soak-", 4)[:53],
		strings.Repeat("a", 253),
		strings.TrimSuffix(strings.Repeat("release.v2.", 23), "."),
	}
	for _, name := range names {
		t.Run(fmt.Sprintf("%d-characters", len(name)), func(t *testing.T) {
			s := vusScenario(strings.Repeat("s", 40), 64, time.Minute)
			s.Parallelism = 64
			exp := f.experiment(name, []perfexpv1alpha1.Scenario{s}, func(exp *perfexpv1alpha1.PerfExperiment) {
				exp.Spec.Setup = &perfexpv1alpha1.Setup{Image: "perfexp/datagen:1"}
			})
			// The test id is the reconciler's: a label value.
			exp.Status.TestID = "long-" + strings.ReplaceAll(string(exp.UID), "-", "")[:8]
			if res := mustStep(t)(f.r.Setup(t.Context(), exp)); res.Failure != nil {
				t.Fatalf("Setup() = %+v", res)
			}
			if !f.get(load.SetupJobName(exp), &batchv1.Job{}) {
				t.Fatalf("no setup Job %s", load.SetupJobName(exp))
			}
			if res := mustStep(t)(f.r.Run(t.Context(), exp)); res.Failure != nil {
				t.Fatalf("Run() = %+v", res)
			}
			job := f.job(exp, s.Name)
			if pod := job.Name + "-63-abcde"; len(pod) > 63 {
				t.Errorf("the last pod's name %s has %d characters", pod, len(pod))
			}
		})
	}

	t.Run("a Job the API server refuses fails the load at once, in its words", func(t *testing.T) {
		exp := f.experiment("refused", []perfexpv1alpha1.Scenario{vusScenario("s", 1, time.Minute)}, func(exp *perfexpv1alpha1.PerfExperiment) {
			// The CRD takes core/v1 tolerations as they are; the Job's validation refuses this one.
			exp.Spec.Load.Pod = &perfexpv1alpha1.RunnerPod{Tolerations: []corev1.Toleration{{Key: "pool", Operator: corev1.TolerationOpExists, Value: "load"}}}
		})
		res := mustStep(t)(f.r.Run(t.Context(), exp))
		if res.Failure == nil || res.Failure.Reason != perfexpv1alpha1.ReasonLoadFailed ||
			!strings.Contains(res.Failure.Message, "the API server refused the Job refused-k6-s") || !strings.Contains(res.Failure.Message, "tolerations") {
			t.Fatalf("Run() = %+v; want LoadFailed quoting the API server", res)
		}
	})
}
