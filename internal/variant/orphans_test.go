package variant

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

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
	e := New(c, Options{SnapshotKey: testSnapshotKey})
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

// testSnapshotKey signs the snapshots of the tests' Environments.
var testSnapshotKey = []byte("0123456789abcdef0123456789abcdef")

// A tenant who may annotate Deployments writes snapshot annotations by hand, for an experiment
// that never existed, setting an image and a service account: the janitor writes none of
// them. Nor does it act in a namespace that has not opted in, on a signature moved from
// another object, or on a signed snapshot that names a field no variant changes.
func storyForgedSnapshots(t *testing.T, te *testenv.Env, ns string) {
	c := te.Client
	plain := te.PlainNamespace(t, ns+"-plain")
	e := New(c, Options{SnapshotKey: testSnapshotKey})
	never := types.UID("0b5e55ed-0000-4000-8000-00000000f00d")
	takeover := &Snapshot{Version: snapshotVersion, Experiment: ns + "/never", UID: never, Changes: []Change{
		{Source: "workloads[0]", Path: path("spec", "template", "spec").key("serviceAccountName"), Before: json.RawMessage(`"cluster-admin"`)},
		{Source: "workloads[0]", Path: path("spec", "template", "spec", "containers").item("web").key("image"), Before: json.RawMessage(`"registry.example/evil:1"`)},
	}}
	ownMark := &Snapshot{Version: snapshotVersion, Experiment: ns + "/never", UID: never, Changes: []Change{
		{Source: "patches[0]", Path: path("metadata", "labels", LabelPatchedBy), Before: json.RawMessage(`"someone-else"`)},
	}}
	for _, d := range []struct{ ns, name string }{{ns, "unsigned"}, {ns, "wrong-key"}, {ns, "moved"}, {ns, "own-mark"}, {ns, "donor"}, {plain, "not-opted-in"}} {
		create(t, c, deployment(d.ns, d.name, nil, service("web")))
	}
	forge(t, c, ns, "unsigned", takeover, nil)
	forge(t, c, ns, "wrong-key", takeover, func(u *unstructured.Unstructured, snap string) string {
		return signSnapshot([]byte("a key that is not the operator's!"), u, snap)
	})
	donor := forge(t, c, ns, "donor", takeover, func(u *unstructured.Unstructured, snap string) string {
		return signSnapshot(testSnapshotKey, u, snap)
	})
	forge(t, c, ns, "moved", takeover, func(*unstructured.Unstructured, string) string {
		return donor.GetAnnotations()[perfexpv1alpha1.AnnotationSnapshotSignature]
	})
	forge(t, c, ns, "own-mark", ownMark, func(u *unstructured.Unstructured, snap string) string {
		return signSnapshot(testSnapshotKey, u, snap)
	})
	forge(t, c, plain, "not-opted-in", takeover, func(u *unstructured.Unstructured, snap string) string {
		return signSnapshot(testSnapshotKey, u, snap)
	})
	before := map[string]map[string]any{}
	for _, n := range []string{ns, plain} {
		for k, v := range state(t, c, n) {
			before[n+"/"+k] = v
		}
	}

	found, err := e.RecoverOrphans(t.Context(), func(context.Context) (map[types.UID]bool, error) { return map[types.UID]bool{}, nil })
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]Orphan{}
	for _, o := range found {
		got[o.Object.GetNamespace()+"/"+o.Object.GetName()] = o
	}
	for key, want := range map[string]string{
		ns + "/unsigned":        "refused: not recorded by perfexp: its perfexp.dev/snapshot annotation carries no perfexp.dev/snapshot-signature",
		ns + "/wrong-key":       "refused: not recorded by perfexp: its perfexp.dev/snapshot-signature does not match",
		ns + "/moved":           "refused: not recorded by perfexp: its perfexp.dev/snapshot-signature does not match",
		ns + "/own-mark":        "refused: its snapshot would set metadata.labels",
		plain + "/not-opted-in": "refused: perfexp may not restore objects in namespace " + plain + ": the namespace has not opted in",
	} {
		o, ok := got[key]
		if !ok || o.Restored || !o.Refused || !strings.Contains(o.Problem, want) {
			t.Errorf("%s: %+v; want refused saying %q", key, o, want)
		}
	}
	if o := got[ns+"/donor"]; !o.Restored {
		t.Errorf("the object whose signature is its own was not restored: %+v", o)
	}
	after := map[string]map[string]any{}
	for _, n := range []string{ns, plain} {
		for k, v := range state(t, c, n) {
			after[n+"/"+k] = v
		}
	}
	delete(before, ns+"/Deployment/donor")
	delete(after, ns+"/Deployment/donor")
	requireSameState(t, before, after)
}

// forge writes snap by hand on Deployment ns/name, with the signature sign returns (none when
// sign is nil), as a tenant who may annotate it could.
func forge(t *testing.T, c client.Client, ns, name string, snap *Snapshot, sign func(*unstructured.Unstructured, string) string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(appsv1.SchemeGroupVersion.WithKind("Deployment"))
	if err := c.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: name}, u); err != nil {
		t.Fatal(err)
	}
	u.SetGroupVersionKind(appsv1.SchemeGroupVersion.WithKind("Deployment"))
	enc, err := snap.encode()
	if err != nil {
		t.Fatal(err)
	}
	a := map[string]string{perfexpv1alpha1.AnnotationSnapshot: enc, perfexpv1alpha1.AnnotationExperiment: snap.Experiment}
	if sign != nil {
		a[perfexpv1alpha1.AnnotationSnapshotSignature] = sign(u, enc)
	}
	u.SetAnnotations(a)
	u.SetLabels(map[string]string{"app": name, LabelPatchedBy: string(snap.UID)})
	if err := c.Update(t.Context(), u); err != nil {
		t.Fatal(err)
	}
	return u
}
