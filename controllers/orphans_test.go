package controllers_test

import (
	"context"
	"errors"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/controllers"
	"github.com/perfexp/perfexp/internal/metrics"
	"github.com/perfexp/perfexp/internal/variant"
)

// foundOrphans returns the same orphans at every round and records which experiments the
// janitor said were alive.
type foundOrphans struct {
	orphans []variant.Orphan
	alive   map[types.UID]bool
}

func (f *foundOrphans) RecoverOrphans(ctx context.Context, alive func(context.Context) (map[types.UID]bool, error)) ([]variant.Orphan, error) {
	live, err := alive(ctx)
	f.alive = live
	return f.orphans, err
}

// The janitor counts and reports what the Environment found: every restore, and each object it
// could not restore once, however many rounds find it again.
func TestOrphanJanitorCountsAndReports(t *testing.T) {
	obj := func(kind, name, uid string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{}
		u.SetAPIVersion("apps/v1")
		u.SetKind(kind)
		u.SetNamespace("shop")
		u.SetName(name)
		u.SetUID(types.UID(uid))
		return u
	}
	env := &foundOrphans{orphans: []variant.Orphan{
		{Object: obj("StatefulSet", "web", "o1"), Experiment: "perf/gone", UID: "e1", Restored: true},
		{Object: obj("StatefulSet", "db", "o2"), Experiment: "perf/gone", UID: "e1", Problem: "no snapshot"},
	}}
	s := runtime.NewScheme()
	if err := perfexpv1alpha1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	running := &perfexpv1alpha1.PerfExperiment{ObjectMeta: metav1.ObjectMeta{Namespace: "perf", Name: "running", UID: "e2"}}
	recorder := events.NewFakeRecorder(10)
	j := &controllers.OrphanJanitor{Environment: env, Reader: fake.NewClientBuilder().WithScheme(s).WithObjects(running).Build(), Recorder: recorder}

	restored := testutil.ToFloat64(metrics.OrphansRestored.WithLabelValues("StatefulSet"))
	unrestorable := testutil.ToFloat64(metrics.OrphansUnrestorable.WithLabelValues("StatefulSet"))
	j.Round(t.Context())
	j.Round(t.Context())

	if !env.alive["e2"] || len(env.alive) != 1 {
		t.Errorf("alive experiments %v, want only e2", env.alive)
	}
	if d := testutil.ToFloat64(metrics.OrphansRestored.WithLabelValues("StatefulSet")) - restored; d != 2 {
		t.Errorf("perfexp_orphans_restored_total grew by %v, want 2 (one per restore)", d)
	}
	if d := testutil.ToFloat64(metrics.OrphansUnrestorable.WithLabelValues("StatefulSet")) - unrestorable; d != 1 {
		t.Errorf("perfexp_orphans_unrestorable_total grew by %v, want 1 (once per object)", d)
	}
	var got []string
	for len(recorder.Events) > 0 {
		got = append(got, <-recorder.Events)
	}
	want := 3 // two restores and one report
	if len(got) != want {
		t.Fatalf("events %q, want %d", got, want)
	}
	for _, e := range got {
		t.Log(e)
	}
}

// In a namespaced install the janitor lists experiments only in the watched namespaces (the
// only ones it may list), and a namespace it cannot list fails the round: its experiments
// must never be taken for gone.
func TestOrphanJanitorNamespaced(t *testing.T) {
	s := runtime.NewScheme()
	if err := perfexpv1alpha1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	a := &perfexpv1alpha1.PerfExperiment{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "a", UID: "ea"}}
	b := &perfexpv1alpha1.PerfExperiment{ObjectMeta: metav1.ObjectMeta{Namespace: "team-b", Name: "b", UID: "eb"}}
	other := &perfexpv1alpha1.PerfExperiment{ObjectMeta: metav1.ObjectMeta{Namespace: "elsewhere", Name: "c", UID: "ec"}}
	var listed []string
	reader := fake.NewClientBuilder().WithScheme(s).WithObjects(a, b, other).WithInterceptorFuncs(interceptor.Funcs{
		List: func(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
			lo := (&client.ListOptions{}).ApplyOptions(opts)
			listed = append(listed, lo.Namespace)
			if lo.Namespace == "" || lo.Namespace == "locked" {
				return apierrors.NewForbidden(schema.GroupResource{Group: "perfexp.dev", Resource: "perfexperiments"}, "", errors.New("namespaced install"))
			}
			return c.List(ctx, list, opts...)
		},
	}).Build()

	env := &foundOrphans{}
	j := &controllers.OrphanJanitor{Environment: env, Reader: reader, Namespaces: []string{"team-a", "team-b"}}
	j.Round(t.Context())
	if len(env.alive) != 2 || !env.alive["ea"] || !env.alive["eb"] {
		t.Errorf("alive experiments %v, want those of team-a and team-b", env.alive)
	}
	if len(listed) != 2 || listed[0] != "team-a" || listed[1] != "team-b" {
		t.Errorf("listed namespaces %q, want only the watched ones", listed)
	}

	env = &foundOrphans{}
	j = &controllers.OrphanJanitor{Environment: env, Reader: reader, Namespaces: []string{"team-a", "locked"}}
	j.Round(t.Context())
	if env.alive != nil {
		t.Errorf("a namespace that cannot be listed still gave alive experiments %v: its own would be taken for gone", env.alive)
	}
}
