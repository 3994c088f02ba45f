package variant

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/testenv"
)

// An experiment patched a Deployment (resources, env) and a ConfigMap (generic patch), then
// its finalizer was removed by force and it is gone. RecoverOrphans puts both back from their
// snapshot annotations; another experiment's patched object, whose experiment exists, is left
// alone; a workload with the label of a gone experiment but no snapshot is reported, not
// guessed at.
func storyOrphans(t *testing.T, te *testenv.Env, ns string) {
	c := te.Client
	create(t, c,
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "settings"}, Data: map[string]string{"pool": "10"}},
		deployment(ns, "web", nil, service("app")),
		deployment(ns, "marked", nil, service("app")),
	)
	rollOut(t, c, ns)
	// One experiment at a time patches a namespace: the live one works in its own.
	liveNS := te.Namespace(t, ns+"-live")
	create(t, c, deployment(liveNS, "live", nil, service("app")))
	rollOut(t, c, liveNS)
	before := state(t, c, ns)
	e := New(c, Options{})
	alive := func(ctx context.Context) (map[types.UID]bool, error) {
		list := &perfexpv1alpha1.PerfExperimentList{}
		if err := c.List(ctx, list); err != nil {
			return nil, err
		}
		out := map[types.UID]bool{}
		for _, x := range list.Items {
			out[x.UID] = true
		}
		return out, nil
	}

	gone := experiment(t, c, ns, "gone", &perfexpv1alpha1.Variant{
		Workloads: []perfexpv1alpha1.WorkloadChange{{WorkloadSelector: perfexpv1alpha1.WorkloadSelector{Names: []string{"web"}},
			Resources: &perfexpv1alpha1.ResourcesChange{RemoveLimits: []corev1.ResourceName{corev1.ResourceCPU}},
			Env:       &perfexpv1alpha1.EnvChange{Set: []perfexpv1alpha1.EnvVar{{Name: "POOL", Value: "200"}}}}},
		Patches: []perfexpv1alpha1.ObjectPatch{{Target: perfexpv1alpha1.ObjectTarget{APIVersion: "v1", Kind: "ConfigMap", Name: "settings"}, Patch: "data:\n  pool: \"50\"\n"}},
	})
	prepare(t, e, c, gone)
	live := experiment(t, c, liveNS, "live", &perfexpv1alpha1.Variant{
		Workloads: []perfexpv1alpha1.WorkloadChange{{WorkloadSelector: perfexpv1alpha1.WorkloadSelector{Names: []string{"live"}},
			Resources: &perfexpv1alpha1.ResourcesChange{RemoveLimits: []corev1.ResourceName{corev1.ResourceCPU}}}},
	})
	prepare(t, e, c, live)
	marked := getDeployment(t, c, ns, "marked")
	marked.Labels[LabelPatchedBy] = "0b5e55ed-0000-4000-8000-000000000000"
	if err := c.Update(t.Context(), marked); err != nil {
		t.Fatal(err)
	}
	if err := c.Delete(t.Context(), gone); err != nil {
		t.Fatal(err)
	}

	found, err := e.RecoverOrphans(t.Context(), alive)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]Orphan{}
	for _, o := range found {
		got[o.Object.GetKind()+"/"+o.Object.GetName()] = o
	}
	for _, key := range []string{"Deployment/web", "ConfigMap/settings"} {
		if o, ok := got[key]; !ok || !o.Restored || o.Problem != "" || o.UID != gone.UID || o.Experiment != ns+"/gone" {
			t.Errorf("%s: %+v; want restored for %s/gone with no problem", key, o, ns)
		}
	}
	if o, ok := got["Deployment/marked"]; !ok || o.Restored || !strings.Contains(o.Problem, "no "+perfexpv1alpha1.AnnotationSnapshot+" annotation") {
		t.Errorf("Deployment/marked: %+v; want reported as not restorable", o)
	}
	if _, ok := got["Deployment/live"]; ok {
		t.Error("the live experiment's Deployment was taken for an orphan")
	}
	if len(got) != 3 {
		t.Errorf("found %d orphans, want 3: %v", len(got), got)
	}

	after := state(t, c, ns)
	for _, key := range []string{"Deployment/web", "ConfigMap/settings"} {
		requireSameState(t, map[string]map[string]any{key: before[key]}, map[string]map[string]any{key: after[key]})
	}
	if l := getDeployment(t, c, liveNS, "live").Labels[LabelPatchedBy]; l != string(live.UID) {
		t.Errorf("the live experiment's Deployment lost its mark: %q", l)
	}

	// A second round finds nothing new to restore.
	again, err := e.RecoverOrphans(t.Context(), alive)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range again {
		if o.Restored {
			t.Errorf("%s restored a second time", o.Ref())
		}
	}
}
