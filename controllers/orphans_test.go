package controllers_test

import (
	"context"
	"errors"
	"strings"
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
	"github.com/perfexp/perfexp/internal/testenv"
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

// An object the janitor could not restore is reported on the next experiment that takes the
// lock of a queue for its namespace, besides the Event and the metric: that experiment may
// measure an environment that is not its baseline. The experiment that held the lock when the
// orphan was found, an experiment of another namespace, and an experiment that takes the lock
// after the object was settled carry no such condition.
func TestOrphanNotRestoredIsReportedOnTheNextExperimentOfTheQueue(t *testing.T) {
	env := testenv.Start(t)
	env.Namespace(t, leaseNamespace)
	c := env.Client
	ns := env.Namespace(t, "orphaned")
	clean := env.Namespace(t, "clean")

	obj := func(ns, kind, name string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{}
		u.SetAPIVersion("v1")
		u.SetKind(kind)
		u.SetNamespace(ns)
		u.SetName(name)
		u.SetUID(types.UID(ns + "-" + name))
		return u
	}
	found := &foundOrphans{orphans: []variant.Orphan{
		{Object: obj(ns, "ConfigMap", "settings"), Experiment: ns + "/gone", UID: "e-gone", Problem: "restoring: admission webhook denied the request"},
		{Object: obj(ns, "Service", "frontend"), Experiment: ns + "/gone", UID: "e-gone", Restored: true},
		{Object: obj("elsewhere", "ConfigMap", "other"), Experiment: "elsewhere/gone", UID: "e-other", Problem: "no snapshot"},
	}}
	janitor := &controllers.OrphanJanitor{Environment: found, Reader: c}
	lab := newLab()
	startOperatorOpts(t, env, operatorOptions{workers: 2, orphans: janitor}, lab, lab, lab)

	// The holder takes the lock before the janitor's look; the next one waits behind it.
	mustCreate(t, c, experiment(ns, "holder", ns, 0))
	waitPhase(t, c, ns, "holder", perfexpv1alpha1.PhaseRunning)
	mustCreate(t, c, experiment(ns, "next", ns, 0))
	waitPhase(t, c, ns, "next", perfexpv1alpha1.PhaseQueued)
	janitor.Round(t.Context())
	mustCreate(t, c, experiment(clean, "elsewhere", clean, 0))
	lab.finishLoad("holder")

	next := waitPhase(t, c, ns, "next", perfexpv1alpha1.PhaseRunning)
	cond := condition(next, perfexpv1alpha1.ConditionUnrestoredOrphans)
	if cond == nil || cond.Status != metav1.ConditionTrue || cond.Reason != perfexpv1alpha1.ReasonOrphanNotRestored {
		t.Fatalf("the next experiment of the queue has UnrestoredOrphans %+v, want True/OrphanNotRestored", cond)
	}
	for _, want := range []string{"ConfigMap " + ns + "/settings", ns + "/gone", "admission webhook denied"} {
		if !strings.Contains(cond.Message, want) {
			t.Errorf("UnrestoredOrphans message %q does not name %q", cond.Message, want)
		}
	}
	for _, not := range []string{"frontend", "elsewhere"} {
		if strings.Contains(cond.Message, not) {
			t.Errorf("UnrestoredOrphans message %q names %q: restored, or in another namespace", cond.Message, not)
		}
	}
	holder := waitPhase(t, c, ns, "holder", perfexpv1alpha1.PhaseSucceeded)
	if cond := condition(holder, perfexpv1alpha1.ConditionUnrestoredOrphans); cond != nil {
		t.Errorf("the holder, which took the lock before the orphan was found, has %+v", cond)
	}
	lab.finishLoad("elsewhere")
	if cond := condition(waitPhase(t, c, clean, "elsewhere", perfexpv1alpha1.PhaseSucceeded), perfexpv1alpha1.ConditionUnrestoredOrphans); cond != nil {
		t.Errorf("an experiment of a namespace without orphans has %+v", cond)
	}

	// Settled by hand: the next look finds nothing, and the next experiment says nothing.
	found.orphans = nil
	janitor.Round(t.Context())
	lab.finishLoad("next")
	waitPhase(t, c, ns, "next", perfexpv1alpha1.PhaseSucceeded)
	mustCreate(t, c, experiment(ns, "after", ns, 0))
	lab.finishLoad("after")
	if cond := condition(waitPhase(t, c, ns, "after", perfexpv1alpha1.PhaseSucceeded), perfexpv1alpha1.ConditionUnrestoredOrphans); cond != nil {
		t.Errorf("an experiment after the orphan was settled has %+v", cond)
	}
}

// reportCheck is an event recorder that looks, at each OrphanNotRestored Event, whether the
// janitor already tells the reconciler about that object.
type reportCheck struct {
	janitor *controllers.OrphanJanitor
	seen    []bool
}

func (r *reportCheck) Eventf(regarding runtime.Object, _ runtime.Object, _, reason, _, _ string, _ ...any) {
	if reason != controllers.EventOrphanNotRestored {
		return
	}
	u := regarding.(*unstructured.Unstructured)
	told := false
	for _, o := range r.janitor.Unrestored(u.GetNamespace()) {
		told = told || o.Object.GetUID() == u.GetUID()
	}
	r.seen = append(r.seen, told)
}

// Whoever sees the OrphanNotRestored Event and then starts an experiment must find the
// condition on it: the reconciler is told before the Event goes out. (On the local cluster, an
// experiment applied within a second of the Event took the lock before the janitor had
// finished its round, and said nothing.)
func TestOrphanJanitorTellsTheReconcilerBeforeTheEvent(t *testing.T) {
	obj := &unstructured.Unstructured{}
	obj.SetAPIVersion("apps/v1")
	obj.SetKind("Deployment")
	obj.SetNamespace("shop")
	obj.SetName("inventory")
	obj.SetUID("o1")
	s := runtime.NewScheme()
	if err := perfexpv1alpha1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	j := &controllers.OrphanJanitor{
		Environment: &foundOrphans{orphans: []variant.Orphan{{Object: obj, Experiment: "shop/gone", UID: "e1", Problem: "refused"}}},
		Reader:      fake.NewClientBuilder().WithScheme(s).Build(),
	}
	rec := &reportCheck{janitor: j}
	j.Recorder = rec
	j.Round(t.Context())
	if len(rec.seen) != 1 || !rec.seen[0] {
		t.Errorf("at the OrphanNotRestored Event the reconciler was told %v, want [true]", rec.seen)
	}
}

// The same object orphaned again (by a later experiment, or after it was settled) is reported
// again; one episode found by several rounds is reported once.
func TestOrphanJanitorReportsEachEpisode(t *testing.T) {
	obj := &unstructured.Unstructured{}
	obj.SetAPIVersion("apps/v1")
	obj.SetKind("Deployment")
	obj.SetNamespace("shop")
	obj.SetName("inventory")
	obj.SetUID("o1")
	s := runtime.NewScheme()
	if err := perfexpv1alpha1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	env := &foundOrphans{}
	recorder := events.NewFakeRecorder(10)
	j := &controllers.OrphanJanitor{Environment: env, Reader: fake.NewClientBuilder().WithScheme(s).Build(), Recorder: recorder}
	orphan := func(uid types.UID) []variant.Orphan {
		return []variant.Orphan{{Object: obj, Experiment: "shop/" + string(uid), UID: uid, Problem: "refused"}}
	}
	for _, round := range []struct {
		orphans []variant.Orphan
		events  int
	}{
		{orphan("e1"), 1}, {orphan("e1"), 0}, // one episode, two rounds
		{orphan("e2"), 1},           // orphaned again by a later experiment
		{nil, 0}, {orphan("e2"), 1}, // settled, then broken again
	} {
		env.orphans = round.orphans
		j.Round(t.Context())
		if got := len(recorder.Events); got != round.events {
			t.Errorf("round with %v: %d events, want %d", round.orphans, got, round.events)
		}
		for len(recorder.Events) > 0 {
			<-recorder.Events
		}
	}
}
