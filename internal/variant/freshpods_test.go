package variant

import (
	"context"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/types"

	"sigs.k8s.io/controller-runtime/pkg/client"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/testenv"
)

// baselineWithFreshPods creates a baseline run (no variant) that rolls the named Deployments.
func baselineWithFreshPods(t *testing.T, c client.Client, ns, name string, v *perfexpv1alpha1.Variant, names ...string) *perfexpv1alpha1.PerfExperiment {
	t.Helper()
	exp := newExperiment(ns, name, v)
	exp.Spec.FreshPods = &perfexpv1alpha1.FreshPods{Workloads: []perfexpv1alpha1.WorkloadSelector{{Names: names}}}
	create(t, c, exp)
	return exp
}

func TestFreshPodsStories(t *testing.T) {
	te := startEnv(t)
	for i, s := range []struct {
		name string
		run  func(t *testing.T, te *testenv.Env, ns string)
	}{
		{"a baseline's workloads are rolled before its load and restored exactly after", storyFreshBaseline},
		{"a restore whose status was lost finds the rolled workloads by their label", storyFreshStatusLost},
		{"a variant and freshPods on one workload roll it once and put back an earlier restart", storyFreshWithVariant},
		{"a workload freshPods names that does not exist changes nothing", storyFreshMissing},
		{"the orphan janitor puts back the roll of a gone experiment", storyFreshOrphan},
	} {
		t.Run(s.name, func(t *testing.T) { s.run(t, te, te.Namespace(t, "fresh-"+string(rune('a'+i)))) })
	}
}

// A baseline run with spec.freshPods: before its load, the workload it names has a new pod
// template (so new pods, as a variant's rollout makes), Prepare waits for that rollout like a
// variant's, the workload it does not name is untouched, and after Restore every object is
// exactly as before.
func storyFreshBaseline(t *testing.T, te *testenv.Env, ns string) {
	c := te.Client
	create(t, c, deployment(ns, "circulation", nil, service("app")), deployment(ns, "edge", nil, service("app")))
	rollOut(t, c, ns)
	before := state(t, c, ns)
	exp := baselineWithFreshPods(t, c, ns, "baseline", nil, "circulation")
	e := New(c, Options{})

	res, err := e.Prepare(t.Context(), exp)
	if err != nil || res.Done || res.Failure != nil {
		t.Fatalf("first Prepare of a baseline with freshPods: %+v, %v; want a wait for the rollout (today a baseline changes nothing)", res, err)
	}
	save(t, c, exp)
	d := getDeployment(t, c, ns, "circulation")
	if got := d.Spec.Template.Annotations[perfexpv1alpha1.AnnotationRestartedAt]; got != string(exp.UID) {
		t.Fatalf("circulation's pod template has %s=%q; want the experiment's UID %q", perfexpv1alpha1.AnnotationRestartedAt, got, exp.UID)
	}
	if d.Labels[LabelPatchedBy] != string(exp.UID) || d.Annotations[perfexpv1alpha1.AnnotationSnapshot] == "" {
		t.Fatalf("circulation carries no label or snapshot of the experiment: labels %v", d.Labels)
	}
	if edge := getDeployment(t, c, ns, "edge"); len(edge.Spec.Template.Annotations) != 0 || edge.Labels[LabelPatchedBy] != "" {
		t.Fatalf("edge, which freshPods does not name, was changed: %v %v", edge.Spec.Template.Annotations, edge.Labels)
	}
	if exp.Status.Environment.RolledOutAt != nil {
		t.Fatalf("rolledOutAt set before the rollout finished")
	}
	prepare(t, e, c, exp)
	if exp.Status.Environment.RolledOutAt == nil {
		t.Fatal("no rolledOutAt after the rollout finished")
	}
	if len(exp.Status.Environment.Touched) != 1 || exp.Status.Environment.Touched[0].Name != "circulation" || !exp.Status.Environment.Touched[0].Patched {
		t.Fatalf("touched %+v; want circulation, patched", exp.Status.Environment.Touched)
	}
	if drifts, err := e.CheckDrift(t.Context(), exp); err != nil || len(drifts) != 0 {
		t.Fatalf("drift right after the roll: %v, %v", drifts, err)
	}
	restore(t, e, c, exp)
	requireSameState(t, before, state(t, c, ns))
	if !exp.Status.Environment.Restored {
		t.Fatal("the environment is not marked restored")
	}
}

// The operator lost the status after rolling (a crash before the status write): Restore
// still finds the rolled workload, by its label, and puts it back.
func storyFreshStatusLost(t *testing.T, te *testenv.Env, ns string) {
	c := te.Client
	create(t, c, deployment(ns, "circulation", nil, service("app")))
	rollOut(t, c, ns)
	before := state(t, c, ns)
	exp := baselineWithFreshPods(t, c, ns, "baseline", nil, "circulation")
	e := New(c, Options{})
	if _, err := e.Prepare(t.Context(), exp); err != nil {
		t.Fatal(err)
	}
	lost := reread(t, c, exp) // the status was never saved
	if lost.Status.Environment != nil {
		t.Fatalf("the status was saved: %+v", lost.Status.Environment)
	}
	restore(t, e, c, lost)
	requireSameState(t, before, state(t, c, ns))
}

// A variant arm with freshPods that name its own workload and another: the shared workload
// gets both changes in one write (one rollout), the other only the restart; a restart
// annotation an earlier experiment left is put back as it was, not removed.
func storyFreshWithVariant(t *testing.T, te *testenv.Env, ns string) {
	c := te.Client
	old := deployment(ns, "edge", nil, service("app"))
	old.Spec.Template.Annotations = map[string]string{perfexpv1alpha1.AnnotationRestartedAt: "an-earlier-run"}
	create(t, c, deployment(ns, "circulation", nil, service("app")), old)
	rollOut(t, c, ns)
	before := state(t, c, ns)
	v := &perfexpv1alpha1.Variant{Workloads: []perfexpv1alpha1.WorkloadChange{{
		WorkloadSelector: perfexpv1alpha1.WorkloadSelector{Names: []string{"circulation"}},
		Env:              &perfexpv1alpha1.EnvChange{Set: []perfexpv1alpha1.EnvVar{{Name: "HTTP_MAXPOOLSIZE", Value: "50"}}},
	}}}
	exp := baselineWithFreshPods(t, c, ns, "arm", v, "circulation", "edge")
	exp.Spec.FreshPods.Workloads = append(exp.Spec.FreshPods.Workloads, perfexpv1alpha1.WorkloadSelector{Selector: selectAll()})
	e := New(c, Options{})
	gen := getDeployment(t, c, ns, "circulation").Generation
	prepare(t, e, c, exp)
	d := getDeployment(t, c, ns, "circulation")
	if d.Generation != gen+1 {
		t.Errorf("circulation's generation went from %d to %d; want one write (one rollout)", gen, d.Generation)
	}
	if v, _ := envValue(containerOf(t, d.Spec.Template.Spec, "app"), "HTTP_MAXPOOLSIZE"); v != "50" || d.Spec.Template.Annotations[perfexpv1alpha1.AnnotationRestartedAt] != string(exp.UID) {
		t.Fatalf("circulation has HTTP_MAXPOOLSIZE=%s and annotations %v; want 50 and the restart", v, d.Spec.Template.Annotations)
	}
	if a := getDeployment(t, c, ns, "edge").Spec.Template.Annotations[perfexpv1alpha1.AnnotationRestartedAt]; a != string(exp.UID) {
		t.Fatalf("edge's restart annotation is %q", a)
	}
	restore(t, e, c, exp)
	requireSameState(t, before, state(t, c, ns))
}

// A freshPods name that does not exist fails the run before anything is written.
func storyFreshMissing(t *testing.T, te *testenv.Env, ns string) {
	c := te.Client
	create(t, c, deployment(ns, "circulation", nil, service("app")))
	rollOut(t, c, ns)
	before := state(t, c, ns)
	exp := baselineWithFreshPods(t, c, ns, "baseline", nil, "circulation", "gone")
	res, err := New(c, Options{}).Prepare(t.Context(), exp)
	if err != nil || res.Failure == nil || res.Failure.Reason != perfexpv1alpha1.ReasonWorkloadNotFound || !strings.Contains(res.Failure.Message, "freshPods.workloads[0]") {
		t.Fatalf("Prepare: %+v, %v; want WorkloadNotFound naming freshPods.workloads[0]", res, err)
	}
	requireSameState(t, before, state(t, c, ns))
}

// A baseline rolled a workload, then was deleted with its finalizer removed by force: the
// orphan janitor finds the workload by its label and puts the pod template back from the
// signed snapshot, as it does for any variant.
func storyFreshOrphan(t *testing.T, te *testenv.Env, ns string) {
	c := te.Client
	create(t, c, deployment(ns, "circulation", nil, service("app")))
	rollOut(t, c, ns)
	before := state(t, c, ns)
	e := New(c, Options{SnapshotKey: testSnapshotKey})
	gone := baselineWithFreshPods(t, c, ns, "gone", nil, "circulation")
	prepare(t, e, c, gone)
	if err := c.Delete(t.Context(), gone); err != nil {
		t.Fatal(err)
	}
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
	found, err := e.RecoverOrphans(t.Context(), alive)
	if err != nil {
		t.Fatal(err)
	}
	var recovered bool
	for _, o := range found {
		if o.Object.GetNamespace() == ns && o.Object.GetName() == "circulation" {
			recovered = o.Restored
		}
	}
	if !recovered {
		t.Fatalf("circulation was not restored by the janitor: %+v", found)
	}
	requireSameState(t, before, state(t, c, ns))
}
