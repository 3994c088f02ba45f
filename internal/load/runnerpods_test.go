package load_test

import (
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/access"
	"github.com/perfexp/perfexp/internal/load"
	"github.com/perfexp/perfexp/internal/step"
	"github.com/perfexp/perfexp/internal/testenv"
)

// runnerPods: every pod perfexp creates runs as the runner service account with no token
// unless the experiment names an allowed one, and is checked against the operator's rules
// when it is created, so a spec that changed after the experiment left the queue (or was
// never checked) cannot run another image or account.
func runnerPods(t *testing.T, env *testenv.Env) {
	f := newFixture(t, env, "runner-pods")
	data := &perfexpv1alpha1.Setup{Image: "perfexp/datagen:1", RunAsUser: ptr.To[int64](999)}

	t.Run("setup, teardown, load and TestRun pods run as the runner account with no token", func(t *testing.T) {
		exp := f.experiment("defaults", []perfexpv1alpha1.Scenario{vusScenario("checkout", 1, time.Minute)}, func(e *perfexpv1alpha1.PerfExperiment) {
			e.Spec.Setup, e.Spec.Teardown = data.DeepCopy(), data.DeepCopy()
		})
		for _, step := range []func() (step.Result, error){
			func() (step.Result, error) { return f.r.Setup(t.Context(), exp) },
			func() (step.Result, error) { return f.r.Teardown(t.Context(), exp) },
			func() (step.Result, error) { return f.r.Run(t.Context(), exp) },
		} {
			if res := mustStep(t)(step()); res.Failure != nil {
				t.Fatalf("refused: %+v", res.Failure)
			}
		}
		for _, name := range []string{load.SetupJobName(exp), load.TeardownJobName(exp), load.UnitName(exp, "checkout")} {
			job := &batchv1.Job{}
			if !f.get(name, job) {
				t.Fatalf("no Job %s", name)
			}
			spec := job.Spec.Template.Spec
			if spec.ServiceAccountName != access.DefaultRunnerServiceAccount || spec.AutomountServiceAccountToken == nil || *spec.AutomountServiceAccountToken {
				t.Errorf("Job %s runs as %q with automount %v; want %s with no token", name, spec.ServiceAccountName, spec.AutomountServiceAccountToken, access.DefaultRunnerServiceAccount)
			}
		}
		sa := &corev1.ServiceAccount{}
		if !f.get(access.DefaultRunnerServiceAccount, sa) {
			t.Fatal("the runner service account was not created")
		}
		if sa.AutomountServiceAccountToken == nil || *sa.AutomountServiceAccountToken {
			t.Errorf("the runner service account mounts tokens: %v", sa.AutomountServiceAccountToken)
		}

		tr := f.experiment("defaults-operator", []perfexpv1alpha1.Scenario{vusScenario("checkout", 1, time.Minute)}, func(e *perfexpv1alpha1.PerfExperiment) {
			e.Spec.Load.Runner = perfexpv1alpha1.RunnerK6Operator
		})
		if res := mustStep(t)(f.r.Run(t.Context(), tr)); res.Failure != nil {
			t.Fatalf("refused: %+v", res.Failure)
		}
		obj := &unstructured.Unstructured{}
		obj.SetGroupVersionKind(load.TestRunGVK)
		if !f.get(load.UnitName(tr, "checkout"), obj) {
			t.Fatal("no TestRun")
		}
		account, _, _ := unstructured.NestedString(obj.Object, "spec", "runner", "serviceAccountName")
		automount, _, _ := unstructured.NestedString(obj.Object, "spec", "runner", "automountServiceAccountToken")
		if account != access.DefaultRunnerServiceAccount || automount != "false" {
			t.Errorf("TestRun runners run as %q with automount %q; want %s with no token", account, automount, access.DefaultRunnerServiceAccount)
		}
	})

	t.Run("a pod outside the rules is refused when it is created, and nothing is created", func(t *testing.T) {
		strict := load.New(env.Client, load.Options{K6Image: "perfexp/k6:v1.8.1", RemoteWriteURL: remoteWrite, Clock: f.clock, Logs: f.logs,
			Pods: access.RunnerPods{ServiceAccounts: []string{"k6"}, Images: []string{"perfexp/*"},
				Placement: access.Placement{Tolerations: []string{"dedicated=loadgen:NoSchedule"}, NodeSelectors: []string{"pool=loadgen"}}}})
		controlPlane := []corev1.Toleration{{Key: "node-role.kubernetes.io/control-plane", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}}
		tests := []struct {
			name string
			edit func(*perfexpv1alpha1.PerfExperiment)
			run  func(*perfexpv1alpha1.PerfExperiment) (step.Result, error)
			job  func(*perfexpv1alpha1.PerfExperiment) string
			says string
		}{
			{name: "teardown image swapped", edit: func(e *perfexpv1alpha1.PerfExperiment) {
				e.Spec.Teardown = &perfexpv1alpha1.Setup{Image: "evil.example.com/miner:1"}
			}, run: func(e *perfexpv1alpha1.PerfExperiment) (step.Result, error) { return strict.Teardown(t.Context(), e) },
				job: load.TeardownJobName, says: "may not run image evil.example.com/miner:1"},
			{name: "setup as another service account", edit: func(e *perfexpv1alpha1.PerfExperiment) {
				e.Spec.Setup = &perfexpv1alpha1.Setup{Image: "perfexp/datagen:1", ServiceAccountName: "deployer"}
			}, run: func(e *perfexpv1alpha1.PerfExperiment) (step.Result, error) { return strict.Setup(t.Context(), e) },
				job: load.SetupJobName, says: "may not run as service account deployer"},
			{name: "load image", edit: func(e *perfexpv1alpha1.PerfExperiment) {
				e.Spec.Load.Scenarios[0].Image = "docker.io/anything:latest"
			}, run: func(e *perfexpv1alpha1.PerfExperiment) (step.Result, error) { return strict.Run(t.Context(), e) },
				job: func(e *perfexpv1alpha1.PerfExperiment) string { return load.UnitName(e, "checkout") }, says: "may not run image docker.io/anything:latest"},
			{name: "load as the namespace's default account", edit: func(e *perfexpv1alpha1.PerfExperiment) {
				e.Spec.Load.Pod = &perfexpv1alpha1.RunnerPod{ServiceAccountName: "default"}
			}, run: func(e *perfexpv1alpha1.PerfExperiment) (step.Result, error) { return strict.Run(t.Context(), e) },
				job: func(e *perfexpv1alpha1.PerfExperiment) string { return load.UnitName(e, "checkout") }, says: "may not run as service account default"},
			{name: "TestRun as another service account", edit: func(e *perfexpv1alpha1.PerfExperiment) {
				e.Spec.Load.Runner = perfexpv1alpha1.RunnerK6Operator
				e.Spec.Load.Pod = &perfexpv1alpha1.RunnerPod{ServiceAccountName: "deployer"}
			}, run: func(e *perfexpv1alpha1.PerfExperiment) (step.Result, error) { return strict.Run(t.Context(), e) },
				says: "may not run as service account deployer"},
			{name: "load pods onto the control plane", edit: func(e *perfexpv1alpha1.PerfExperiment) {
				e.Spec.Load.Pod = &perfexpv1alpha1.RunnerPod{Tolerations: controlPlane}
			}, run: func(e *perfexpv1alpha1.PerfExperiment) (step.Result, error) { return strict.Run(t.Context(), e) },
				job:  func(e *perfexpv1alpha1.PerfExperiment) string { return load.UnitName(e, "checkout") },
				says: `may not tolerate "node-role.kubernetes.io/control-plane:NoSchedule"`},
			{name: "TestRun pods onto the control plane", edit: func(e *perfexpv1alpha1.PerfExperiment) {
				e.Spec.Load.Runner = perfexpv1alpha1.RunnerK6Operator
				e.Spec.Load.Pod = &perfexpv1alpha1.RunnerPod{Tolerations: controlPlane}
			}, run: func(e *perfexpv1alpha1.PerfExperiment) (step.Result, error) { return strict.Run(t.Context(), e) },
				says: `may not tolerate "node-role.kubernetes.io/control-plane:NoSchedule"`},
			{name: "load pods onto a node by name", edit: func(e *perfexpv1alpha1.PerfExperiment) {
				e.Spec.Load.Pod = &perfexpv1alpha1.RunnerPod{NodeSelector: map[string]string{"kubernetes.io/hostname": "billing-db-0"}}
			}, run: func(e *perfexpv1alpha1.PerfExperiment) (step.Result, error) { return strict.Run(t.Context(), e) },
				job:  func(e *perfexpv1alpha1.PerfExperiment) string { return load.UnitName(e, "checkout") },
				says: "may not select nodes by kubernetes.io/hostname=billing-db-0"},
		}
		for i, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				exp := f.experiment("refused-"+string(rune('a'+i)), []perfexpv1alpha1.Scenario{vusScenario("checkout", 1, time.Minute)}, tt.edit)
				res := mustStep(t)(tt.run(exp))
				if res.Failure == nil || res.Failure.Reason != perfexpv1alpha1.ReasonPodNotAllowed || !strings.Contains(res.Failure.Message, tt.says) {
					t.Fatalf("got %+v; want %s saying %q", res.Failure, perfexpv1alpha1.ReasonPodNotAllowed, tt.says)
				}
				if tt.job != nil && f.get(tt.job(exp), &batchv1.Job{}) {
					t.Errorf("Job %s was created", tt.job(exp))
				}
			})
		}
	})
}
