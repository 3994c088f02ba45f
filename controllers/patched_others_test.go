package controllers_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/testenv"
	"github.com/perfexp/perfexp/internal/variant"
)

// An experiment patches a ConfigMap and is deleted with its finalizer removed by force while it
// runs. The next experiment of the namespace, a baseline without a variant, must not measure
// beside that patch: it fails with EnvironmentReady=False/PatchedByAnotherExperiment naming the
// ConfigMap. Once a person put it back, the one after it runs.
func TestPatchLeftByAGoneExperimentBlocksTheNextRun(t *testing.T) {
	env := testenv.Start(t)
	env.Namespace(t, leaseNamespace)
	c := env.Client
	ns := env.Namespace(t, "shop")
	mustCreate(t, c, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "settings"}, Data: map[string]string{"pool": "10"}})
	lab := newLab()
	startOperatorWith(t, env, variant.New(c, variant.Options{OperatorNamespaces: []string{leaseNamespace}}), lab, lab)

	first := experiment(ns, "first", ns, 0)
	first.Spec.Variant = &perfexpv1alpha1.Variant{Patches: []perfexpv1alpha1.ObjectPatch{{
		Target: perfexpv1alpha1.ObjectTarget{APIVersion: "v1", Kind: "ConfigMap", Name: "settings"}, Patch: `{"data":{"pool":"50"}}`}}}
	mustCreate(t, c, first)
	waitPhase(t, c, ns, "first", perfexpv1alpha1.PhaseRunning)
	settings := func() *corev1.ConfigMap {
		cm := &corev1.ConfigMap{}
		if err := c.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: "settings"}, cm); err != nil {
			t.Fatal(err)
		}
		return cm
	}
	if cm := settings(); cm.Data["pool"] != "50" {
		t.Fatalf("the first experiment's patch is not in force: %v", cm.Data)
	}
	// The finalizer removed by force: nothing restores the ConfigMap.
	// A merge patch, not an update: the operator writes the experiment's status meanwhile, and
	// an update of a copy read a moment before can conflict with it.
	got := get(t, c, ns, "first")
	if err := c.Patch(t.Context(), got, client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`))); err != nil {
		t.Fatal(err)
	}
	if err := c.Delete(t.Context(), got); err != nil {
		t.Fatal(err)
	}

	mustCreate(t, c, experiment(ns, "second", ns, 0))
	second := waitPhase(t, c, ns, "second", perfexpv1alpha1.PhaseFailed)
	cond := condition(second, perfexpv1alpha1.ConditionEnvironmentReady)
	if cond == nil || cond.Status != metav1.ConditionFalse || cond.Reason != perfexpv1alpha1.ReasonPatchedByAnotherExperiment ||
		!strings.Contains(cond.Message, "ConfigMap "+ns+"/settings still carries the snapshot of experiment "+ns+"/first") {
		t.Fatalf("EnvironmentReady = %+v; want False/PatchedByAnotherExperiment naming ConfigMap %s/settings", cond, ns)
	}
	if second.Status.Window != nil && second.Status.Window.Start != nil {
		t.Fatal("the second experiment's load ran beside the first one's patch")
	}

	// Settled by hand as the condition says: the next experiment runs.
	cm := settings()
	cm.Data["pool"] = "10"
	for _, a := range []string{perfexpv1alpha1.AnnotationSnapshot, perfexpv1alpha1.AnnotationSnapshotSignature, perfexpv1alpha1.AnnotationExperiment} {
		delete(cm.Annotations, a)
	}
	if err := c.Update(t.Context(), cm); err != nil {
		t.Fatal(err)
	}
	mustCreate(t, c, experiment(ns, "third", ns, 0))
	waitPhase(t, c, ns, "third", perfexpv1alpha1.PhaseRunning)
	lab.finishLoad("third")
	eventually(t, 30*time.Second, "third succeeds", func() error {
		if p := get(t, c, ns, "third").Status.Phase; p != perfexpv1alpha1.PhaseSucceeded {
			return fmt.Errorf("phase %s", p)
		}
		return nil
	})
}
