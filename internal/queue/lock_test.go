package queue

import (
	"context"
	"slices"
	"strings"
	"testing"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
)

// A long queue's Lease had another name in earlier versions; an experiment holding it across an
// upgrade keeps the queue until it is gone.
func TestLockHonoursLegacyLeaseName(t *testing.T) {
	long := strings.Repeat("q", 60)
	legacy := legacyLeaseName(long)
	if legacy == "" || legacy == LeaseName(long) {
		t.Fatalf("legacy name %q, current %q: want two different names", legacy, LeaseName(long))
	}
	if legacyLeaseName("library") != "" {
		t.Fatal("a short queue has a legacy name")
	}
	held := func(uid string) *coordinationv1.Lease {
		id := uid
		return &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: "perfexp-system", Name: legacy,
			Annotations: map[string]string{AnnotationHolder: "perf/" + uid}}, Spec: coordinationv1.LeaseSpec{HolderIdentity: &id}}
	}
	tests := []struct {
		name        string
		legacy      *coordinationv1.Lease
		oldAlive    bool
		acquirer    types.UID
		wantHolder  types.UID // Holder before TryAcquire
		wantAcquire bool
	}{
		{name: "no legacy Lease", acquirer: "new", wantAcquire: true},
		{name: "a live holder under the legacy name keeps the queue", legacy: held("old"), oldAlive: true, acquirer: "new", wantHolder: "old"},
		{name: "a gone holder under the legacy name is replaced", legacy: held("old"), acquirer: "new", wantHolder: "old", wantAcquire: true},
		{name: "the legacy holder itself still holds", legacy: held("old"), oldAlive: true, acquirer: "old", wantHolder: "old", wantAcquire: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := runtime.NewScheme()
			if err := coordinationv1.AddToScheme(s); err != nil {
				t.Fatal(err)
			}
			b := fake.NewClientBuilder().WithScheme(s)
			if tt.legacy != nil {
				b = b.WithObjects(tt.legacy)
			}
			c := b.Build()
			l := &Lock{Client: c, Namespace: "perfexp-system", Clock: clocktesting.NewFakePassiveClock(metav1.Now().Time)}
			ctx := t.Context()
			h, err := l.Holder(ctx, long)
			if err != nil {
				t.Fatal(err)
			}
			if h.UID != tt.wantHolder {
				t.Errorf("holder %q, want %q", h.UID, tt.wantHolder)
			}
			alive := func(context.Context, Holder) (bool, error) { return tt.oldAlive, nil }
			got, err := l.TryAcquire(ctx, long, tt.acquirer, "perf/"+string(tt.acquirer), alive)
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.wantAcquire {
				t.Fatalf("acquired %v, want %v", got, tt.wantAcquire)
			}
			if !got {
				return
			}
			if err := l.Release(ctx, long, tt.acquirer); err != nil {
				t.Fatal(err)
			}
			if h, err := l.Holder(ctx, long); err != nil || !h.Free() {
				t.Errorf("after release the holder is %+v (%v), want free under both names", h, err)
			}
			lease := &coordinationv1.Lease{}
			if err := c.Get(ctx, client.ObjectKey{Namespace: "perfexp-system", Name: legacy}, lease); err == nil && lease.Spec.HolderIdentity != nil {
				t.Errorf("the legacy Lease still names %s", *lease.Spec.HolderIdentity)
			}
		})
	}
}

// Holder may read a cached copy of the Lease; the decision to take the lock never does: a copy
// that lags behind a holder that took the lock cannot let a second experiment take it too.
func TestLockDecidesOnTheFreshLeaseWhateverTheCacheShows(t *testing.T) {
	const ns, q = "perfexp-system", "library"
	lease := func(holder string) *coordinationv1.Lease {
		l := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: LeaseName(q)}}
		if holder != "" {
			l.Annotations = map[string]string{AnnotationHolder: "perf/" + holder}
			l.Spec.HolderIdentity = &holder
		}
		return l
	}
	tests := []struct {
		name          string
		cached, fresh string // holders of the two copies; "" is free
		acquirer      types.UID
		wantHolder    types.UID
		wantAcquire   bool
	}{
		{name: "both copies free", acquirer: "a", wantAcquire: true},
		{name: "the cache lags a holder that just took the lock", fresh: "old", acquirer: "a", wantHolder: "", wantAcquire: false},
		{name: "the cache lags a release", cached: "old", acquirer: "a", wantHolder: "old", wantAcquire: true},
		{name: "a holder that crashed before saying so finds itself in the cache", cached: "a", fresh: "a", acquirer: "a", wantHolder: "a", wantAcquire: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := runtime.NewScheme()
			if err := coordinationv1.AddToScheme(s); err != nil {
				t.Fatal(err)
			}
			fresh := fake.NewClientBuilder().WithScheme(s).WithObjects(lease(tt.fresh)).Build()
			cached := fake.NewClientBuilder().WithScheme(s).WithObjects(lease(tt.cached)).Build()
			l := &Lock{Client: fresh, Cache: cached, Namespace: ns, Clock: clocktesting.NewFakePassiveClock(metav1.Now().Time)}
			ctx := t.Context()
			h, err := l.Holder(ctx, q)
			if err != nil {
				t.Fatal(err)
			}
			if h.UID != tt.wantHolder {
				t.Errorf("holder %q, want %q (the cached copy)", h.UID, tt.wantHolder)
			}
			alive := func(context.Context, Holder) (bool, error) { return true, nil }
			got, err := l.TryAcquire(ctx, q, tt.acquirer, "perf/"+string(tt.acquirer), alive)
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.wantAcquire {
				t.Errorf("acquired %v, want %v", got, tt.wantAcquire)
			}
		})
	}
}

// A released lock leaves no Lease behind (queue names are the authors' strings; a Lease per
// name ever used would pile up), and the delete removes only the Lease as its holder read it:
// a waiter that took the lock in between keeps it.
func TestReleaseDeletesOnlyTheLeaseItHolds(t *testing.T) {
	const ns, q = "perfexp-system", "library"
	s := runtime.NewScheme()
	if err := coordinationv1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	held := func(holder string) *coordinationv1.Lease {
		return &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: LeaseName(q), UID: "lease-uid",
			Annotations: map[string]string{AnnotationHolder: "perf/" + holder}}, Spec: coordinationv1.LeaseSpec{HolderIdentity: &holder}}
	}
	clk := clocktesting.NewFakePassiveClock(metav1.Now().Time)
	exists := func(t *testing.T, c client.Client) bool {
		t.Helper()
		err := c.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: LeaseName(q)}, &coordinationv1.Lease{})
		if err != nil && !apierrors.IsNotFound(err) {
			t.Fatal(err)
		}
		return err == nil
	}

	t.Run("the holder releases: the Lease is gone", func(t *testing.T) {
		c := fake.NewClientBuilder().WithScheme(s).WithObjects(held("a")).Build()
		l := &Lock{Client: c, Namespace: ns, Clock: clk}
		if err := l.Release(t.Context(), q, "a"); err != nil {
			t.Fatal(err)
		}
		if exists(t, c) {
			t.Error("the released Lease is still there")
		}
		alive := func(context.Context, Holder) (bool, error) { return true, nil }
		if ok, err := l.TryAcquire(t.Context(), q, "b", "perf/b", alive); err != nil || !ok {
			t.Errorf("the next experiment took the lock: %v, %v; want true", ok, err)
		}
	})
	t.Run("someone else releases: the Lease stays", func(t *testing.T) {
		c := fake.NewClientBuilder().WithScheme(s).WithObjects(held("a")).Build()
		l := &Lock{Client: c, Namespace: ns, Clock: clk}
		if err := l.Release(t.Context(), q, "b"); err != nil {
			t.Fatal(err)
		}
		if !exists(t, c) {
			t.Error("a Lease held by another experiment was deleted")
		}
	})
	t.Run("a waiter took the lock after the holder read it: the Lease stays", func(t *testing.T) {
		current := fake.NewClientBuilder().WithScheme(s).WithObjects(held("a")).Build()
		stale := &coordinationv1.Lease{}
		if err := current.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: LeaseName(q)}, stale); err != nil {
			t.Fatal(err)
		}
		retaken := stale.DeepCopy()
		b := "b"
		retaken.Spec.HolderIdentity = &b
		if err := current.Update(t.Context(), retaken); err != nil {
			t.Fatal(err)
		}
		l := &Lock{Client: current, Reader: fake.NewClientBuilder().WithScheme(s).WithObjects(stale).Build(), Namespace: ns, Clock: clk}
		if err := l.Release(t.Context(), q, "a"); err != nil {
			t.Fatal(err)
		}
		if !exists(t, current) {
			t.Error("the Lease b took was deleted by a's late release")
		}
	})
	t.Run("free Leases of earlier versions are swept, held ones kept", func(t *testing.T) {
		free := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: LeaseName("old-queue")}}
		leader := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "perfexp-manager"}}
		c := fake.NewClientBuilder().WithScheme(s).WithObjects(held("a"), free, leader).Build()
		l := &Lock{Client: c, Namespace: ns, Clock: clk}
		n, err := l.DeleteFree(t.Context())
		if err != nil || n != 1 {
			t.Fatalf("deleted %d (%v), want 1", n, err)
		}
		left := &coordinationv1.LeaseList{}
		if err := c.List(t.Context(), left); err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, l := range left.Items {
			names = append(names, l.Name)
		}
		slices.Sort(names)
		if want := []string{"perfexp-manager", LeaseName(q)}; !slices.Equal(names, want) {
			t.Errorf("left %v, want %v", names, want)
		}
	})
}
