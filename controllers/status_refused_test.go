package controllers_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/controllers"
	"github.com/perfexp/perfexp/internal/testenv"
)

// refuseStatusLabel makes the policy below refuse every status write of the labelled experiment,
// as a too-large status or a site's own admission policy would.
const refuseStatusLabel = "test.perfexp.dev/refuse-status"

const refuseStatusPolicy = `
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata:
  name: test-refuse-status
spec:
  failurePolicy: Fail
  matchConstraints:
    resourceRules:
      - apiGroups: ["perfexp.dev"]
        apiVersions: ["v1alpha1"]
        operations: ["UPDATE"]
        resources: ["perfexperiments/status"]
  validations:
    - expression: "!has(object.metadata.labels) || !('` + refuseStatusLabel + `' in object.metadata.labels)"
      message: "status writes of this experiment are refused by the test"
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata:
  name: test-refuse-status
spec:
  policyName: test-refuse-status
  validationActions: [Deny]
`

func installRefuseStatusPolicy(t *testing.T, c client.Client, ns string) {
	t.Helper()
	for _, doc := range strings.Split(refuseStatusPolicy, "\n---\n") {
		obj := &unstructured.Unstructured{}
		if err := yaml.Unmarshal([]byte(doc), &obj.Object); err != nil {
			t.Fatal(err)
		}
		if err := c.Create(t.Context(), obj); err != nil {
			t.Fatal(err)
		}
	}
	// Policies take effect asynchronously: wait until a labelled probe's status is refused.
	probe := experiment(ns, "refuse-probe", "refuse-probe", 0)
	probe.Labels = map[string]string{refuseStatusLabel: "true"}
	probe.Spec.Abort = true // never run by an operator
	mustCreate(t, c, probe)
	eventually(t, 30*time.Second, "the refuse-status policy is in force", func() error {
		p := probe.DeepCopy()
		p.Status.Message = "probe"
		if err := c.Status().Update(t.Context(), p, client.DryRunAll); err == nil {
			return fmt.Errorf("a status write was accepted")
		}
		return nil
	})
}

// When the API server keeps refusing an experiment's status while its environment is patched,
// the environment is restored in the same reconcile and the queue freed: the environment never
// stays patched because its progress cannot be recorded.
func TestStatusRefusedWhilePatched(t *testing.T) {
	env := testenv.Start(t)
	env.Namespace(t, leaseNamespace)
	c := env.Client
	ns := env.Namespace(t, "refused")
	installRefuseStatusPolicy(t, c, ns)
	lab := newLab()
	startOperator(t, env, lab)

	mustCreate(t, c, experiment(ns, "stuck", "refused", 0))
	waitPhase(t, c, ns, "stuck", perfexpv1alpha1.PhaseRunning)
	mustCreate(t, c, experiment(ns, "next", "refused", 0))
	expectPositions(t, c, ns, "stuck", []string{"next"})

	stuck := get(t, c, ns, "stuck")
	patch := client.MergeFrom(stuck.DeepCopy())
	stuck.Labels = map[string]string{refuseStatusLabel: "true"}
	if err := c.Patch(t.Context(), stuck, patch); err != nil {
		t.Fatal(err)
	}
	// The load ends: Running -> Restoring is the first status write, and it is refused.
	lab.finishLoad("stuck")

	// Well within the queue's 30 s recheck: the Lease's release wakes the head at once.
	eventually(t, 15*time.Second, "stuck is restored and its queue freed though its status cannot be written", func() error {
		if lab.restores("stuck") == 0 {
			return fmt.Errorf("not restored")
		}
		got := get(t, c, ns, "next")
		if got.Status.Phase != perfexpv1alpha1.PhaseRunning {
			return fmt.Errorf("next is %s", got.Status.Phase)
		}
		return nil
	})
	got := get(t, c, ns, "stuck")
	if got.Status.Phase != perfexpv1alpha1.PhaseRunning {
		t.Errorf("stuck's stored phase is %s: the story meant its status never to be written", got.Status.Phase)
	}
	if _, ok := got.Annotations[controllers.AnnotationStatusRefused]; !ok {
		t.Errorf("stuck is not marked %s: %v", controllers.AnnotationStatusRefused, got.Annotations)
	}
	if hasFinalizer(got) {
		t.Error("stuck keeps its finalizer though its environment is restored")
	}
	if v := lab.violations(); len(v) > 0 {
		t.Errorf("next prepared while stuck still held the environment: %v", v)
	}

	// Once status writes are accepted again, the experiment ends and says why.
	patch = client.MergeFrom(got.DeepCopy())
	delete(got.Labels, refuseStatusLabel)
	if err := c.Patch(t.Context(), got, patch); err != nil {
		t.Fatal(err)
	}
	got = waitPhase(t, c, ns, "stuck", perfexpv1alpha1.PhaseFailed)
	if cond := condition(got, perfexpv1alpha1.ConditionReady); cond == nil || cond.Reason != perfexpv1alpha1.ReasonStatusRefused {
		t.Errorf("Ready condition %+v, want reason %s", cond, perfexpv1alpha1.ReasonStatusRefused)
	}
	if n := lab.restores("stuck"); n == 0 {
		t.Error("never restored")
	}
}
