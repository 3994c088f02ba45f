package variant

import (
	"strings"
	"testing"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/testenv"
)

// An experiment patches a ConfigMap, a Service and a HorizontalPodAutoscaler (no Deployment
// label on any of them) and is deleted with its finalizer removed by force. The next
// experiment in the namespace, with no variant at all, must not measure beside those patches:
// it waits while the first exists, fails with PatchedByAnotherExperiment naming each object
// once the first is gone, and runs once they are put back. A snapshot annotation nobody can
// read blocks it too.
func storyOthersOfEveryKind(t *testing.T, te *testenv.Env, ns string) {
	c := te.Client
	create(t, c,
		deployment(ns, "web", nil, service("app")),
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "settings"}, Data: map[string]string{"pool": "10"}},
		&corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"}, Spec: corev1.ServiceSpec{
			Selector: map[string]string{"app": "web"}, Ports: []corev1.ServicePort{{Name: "http", Port: 80}}}},
		&autoscalingv2.HorizontalPodAutoscaler{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"}, Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
			ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"},
			MinReplicas:    ptr.To[int32](1), MaxReplicas: 3}},
	)
	rollOut(t, c, ns)
	before := state(t, c, ns)
	first := experiment(t, c, ns, "first", &perfexpv1alpha1.Variant{Patches: []perfexpv1alpha1.ObjectPatch{
		{Target: perfexpv1alpha1.ObjectTarget{APIVersion: "v1", Kind: "ConfigMap", Name: "settings"}, Patch: `{"data":{"pool":"50"}}`},
		{Target: perfexpv1alpha1.ObjectTarget{APIVersion: "v1", Kind: "Service", Name: "web"}, Patch: `{"metadata":{"labels":{"perf":"on"}}}`},
		{Target: perfexpv1alpha1.ObjectTarget{APIVersion: "autoscaling/v2", Kind: "HorizontalPodAutoscaler", Name: "web"}, Patch: `{"spec":{"maxReplicas":8}}`},
	}})
	second := experiment(t, c, ns, "second", nil)
	e := New(c, Options{})
	prepare(t, e, c, first)
	patched := []string{"ConfigMap " + ns + "/settings", "Service " + ns + "/web", "HorizontalPodAutoscaler " + ns + "/web"}

	res, err := e.Prepare(t.Context(), second)
	if err != nil || res.Done || res.Failure != nil || !strings.Contains(res.Waiting, "experiment "+ns+"/first to restore") {
		t.Fatalf("second Prepare while the first exists: %+v %v; want a wait for the first", res, err)
	}

	// The first experiment disappears without restoring (its finalizer was removed by force).
	if err := c.Delete(t.Context(), first); err != nil {
		t.Fatal(err)
	}
	res, err = e.Prepare(t.Context(), second)
	if err != nil || res.Failure == nil || res.Failure.Reason != perfexpv1alpha1.ReasonPatchedByAnotherExperiment {
		t.Fatalf("second Prepare after the first vanished: %+v %v; want PatchedByAnotherExperiment", res, err)
	}
	for _, ref := range patched {
		if !strings.Contains(res.Failure.Message, ref+" still carries the snapshot of experiment "+ns+"/first") {
			t.Errorf("the condition does not name %s: %s", ref, res.Failure.Message)
		}
	}
	if !strings.Contains(res.Failure.Message, "put the object back from its "+perfexpv1alpha1.AnnotationSnapshot+" annotation") {
		t.Errorf("the condition does not say how to settle it: %s", res.Failure.Message)
	}

	// Put back (here from the first experiment's last in-memory copy): nothing blocks.
	if res, err := e.Restore(t.Context(), first); err != nil || !res.Done {
		t.Fatalf("Restore of the first: %+v %v", res, err)
	}
	requireSameState(t, before, state(t, c, ns))
	if res, err := e.Prepare(t.Context(), second); err != nil || !res.Done {
		t.Fatalf("second Prepare after the restore: %+v %v; want done", res, err)
	}

	// A snapshot annotation perfexp cannot read, on a ConfigMap: whose it is and what the
	// object was are unknown, so a person settles it.
	cm := &corev1.ConfigMap{}
	if err := c.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: "settings"}, cm); err != nil {
		t.Fatal(err)
	}
	cm.Annotations = map[string]string{perfexpv1alpha1.AnnotationSnapshot: "not a snapshot", perfexpv1alpha1.AnnotationExperiment: ns + "/gone"}
	if err := c.Update(t.Context(), cm); err != nil {
		t.Fatal(err)
	}
	res, err = e.Prepare(t.Context(), second)
	if err != nil || res.Failure == nil || res.Failure.Reason != perfexpv1alpha1.ReasonPatchedByAnotherExperiment ||
		!strings.Contains(res.Failure.Message, "ConfigMap "+ns+"/settings carries a "+perfexpv1alpha1.AnnotationSnapshot+" annotation perfexp cannot read") {
		t.Fatalf("second Prepare beside an unreadable snapshot: %+v %v", res, err)
	}
}
