// Package queue keeps experiments on one environment from overlapping. Each queue has a lock,
// a coordination.k8s.io Lease in the API server whose holder is the UID of the experiment that
// runs, so the lock survives operator restarts and is visible with kubectl. Waiting experiments
// are ordered by priority (highest first), then creation time, then an explicit sequence (a
// PerfSweep's interleaved order), then namespace and name.
package queue

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// AnnotationHolder names the holding experiment (namespace/name) on the Lease, for people.
const AnnotationHolder = "perfexp.dev/holder"

// Annotations that place an experiment in its queue as if it had been created at another time
// and in an explicit order. A PerfSweep creates all its runs in one reconcile, so they share a
// creation second: it stamps each run with the sweep's creation time and the run's position in
// the interleaved order (B, V1, V2, ..., B, V1, V2, ...), and the queue keeps that order.
const (
	// AnnotationEnqueuedAt (RFC 3339) replaces the creation time in the queue order.
	AnnotationEnqueuedAt = "perfexp.dev/enqueued-at"
	// AnnotationSequence (a non-negative integer) orders experiments of equal priority and
	// equal (enqueued) creation time, before their names do.
	AnnotationSequence = "perfexp.dev/sequence"
)

// Member is what ordering needs to know of a waiting experiment.
type Member struct {
	UID       types.UID
	Namespace string
	Name      string
	Priority  int32
	Created   time.Time
	// Sequence orders members of equal priority and creation time; 0 when unset.
	Sequence int
	// Baseline names (in Namespace) the experiment this one is compared with, if any.
	Baseline string
}

// WithOrderAnnotations returns m with Created and Sequence taken from the annotations above,
// where they are present and well formed (a malformed value is ignored, not an error: the
// experiment still runs, in its ordinary place).
func (m Member) WithOrderAnnotations(annotations map[string]string) Member {
	if v, ok := annotations[AnnotationEnqueuedAt]; ok {
		if t, err := time.Parse(time.RFC3339, v); err == nil {
			m.Created = t
		}
	}
	if v, ok := annotations[AnnotationSequence]; ok {
		if n, err := strconv.Atoi(v); err == nil && n >= 0 {
			m.Sequence = n
		}
	}
	return m
}

// Order sorts waiting members into the order they will run: priority (highest first), then
// creation time (oldest first), then sequence, then namespace and name, so the order is total
// and stable.
// One exception: an experiment never runs before a baseline it names that waits in the same
// queue, so a whole queue applied at once (GitOps) measures the baseline first.
func Order(members []Member) {
	sortByRank(members)
	deferUntilBaseline(members)
}

// sortByRank sorts with slices.SortStableFunc rather than sort.SliceStable: every waiting
// member orders its whole queue at each of its reconciles, and the reflection-based swaps of
// sort.SliceStable were most of that cost in a queue of 1,000.
func sortByRank(members []Member) {
	slices.SortStableFunc(members, func(a, b Member) int {
		if a.Priority != b.Priority {
			return cmp.Compare(b.Priority, a.Priority)
		}
		if c := a.Created.Compare(b.Created); c != 0 {
			return c
		}
		if a.Sequence != b.Sequence {
			return cmp.Compare(a.Sequence, b.Sequence)
		}
		if a.Namespace != b.Namespace {
			return strings.Compare(a.Namespace, b.Namespace)
		}
		return strings.Compare(a.Name, b.Name)
	})
}

// deferUntilBaseline moves each member whose baseline waits behind it to just after that
// baseline, keeping every other relative order.
func deferUntilBaseline(members []Member) {
	// Most queues name no baseline: skip the maps of names below, built at every reconcile.
	if !slices.ContainsFunc(members, func(m Member) bool { return m.Baseline != "" }) {
		return
	}
	key := func(m Member) string { return m.Namespace + "/" + m.Name }
	waiting := make(map[string]bool, len(members))
	for _, m := range members {
		waiting[key(m)] = true
	}
	out := make([]Member, 0, len(members))
	placed := make(map[string]bool, len(members))
	deferred := map[string][]Member{} // baseline key -> members waiting for it
	var place func(m Member)
	place = func(m Member) {
		if placed[key(m)] {
			return
		}
		out = append(out, m)
		placed[key(m)] = true
		for _, d := range deferred[key(m)] {
			place(d)
		}
		delete(deferred, key(m))
	}
	for _, m := range members {
		b := m.Namespace + "/" + m.Baseline
		if m.Baseline != "" && b != key(m) && waiting[b] && !placed[b] {
			deferred[b] = append(deferred[b], m)
			continue
		}
		place(m)
	}
	// Baselines that form a cycle never get placed; keep their dependents in rank order.
	for _, m := range members {
		if !placed[key(m)] {
			place(m)
		}
	}
	copy(members, out)
}

// Position returns the 1-based place of uid among ordered members, or 0 when absent.
func Position(ordered []Member, uid types.UID) int32 {
	for i, m := range ordered {
		if m.UID == uid {
			return int32(i + 1)
		}
	}
	return 0
}

// ExactPositions is how many places at the head of a queue are always shown exactly. Beyond
// them a shown position may lag the exact one by up to a tenth (see ShownPosition).
const ExactPositions = 10

// ShownPosition is the queue position to show (store in status) for a member at the exact
// 1-based place exact, given the position shown now (0: none yet).
//
// The first ExactPositions places are shown exactly. Further back a shown position is kept
// while it is within a tenth of the exact one, and replaced by the exact one once it drifts
// further: each dequeue moves every member up one place, and rewriting them all would cost a
// status write per member per dequeue, O(n^2) over the life of a queue of n. With the band, a
// dequeue rewrites the ExactPositions at the head and the few members whose drift just crossed
// their tenth (about 10*ln(n/10) of them); a burst of arrivals that shifts a member back a few
// places rewrites nothing behind the head.
func ShownPosition(shown, exact int32) int32 {
	if exact <= ExactPositions || shown <= ExactPositions {
		return exact
	}
	drift := shown - exact
	if drift < 0 {
		drift = -drift
	}
	if 10*drift > exact {
		return exact
	}
	return shown
}

// Exact reports whether a shown position is the exact place, not an approximation.
func Exact(shown int32) bool { return shown <= ExactPositions }

// Lock takes and releases queue locks.
type Lock struct {
	Client client.Client
	// Reader reads Leases; it should bypass any cache (a manager's APIReader), so that a
	// decision to take or release a lock is never made on a stale copy. Client when nil.
	Reader client.Reader
	// Cache reads Leases from a copy that a watch keeps current (a manager's cache). When set,
	// Holder reads through it: Holder is asked at every reconcile of every waiting experiment,
	// and a round trip to the API server for each was most of what a long queue cost. A copy
	// that lags is safe there: TryAcquire and Release still read through Reader and write with
	// optimistic concurrency, and a process that starts reads a freshly listed copy, so an
	// experiment that took the lock and crashed before saying so still finds it holds the lock.
	Cache client.Reader
	// Namespace holds the Leases, normally the operator's own namespace.
	Namespace string
	Clock     clock.PassiveClock
}

// LeaseName is the name of the Lease that locks a queue: perfexp-queue-<queue> when that fits
// in 63 characters, else perfexp-queue.<hash> (the first 32 hex digits of the queue's SHA-256).
// The two forms differ in the character after "perfexp-queue", so a short queue name that
// looks like a hash can never share a Lease with a long one.
func LeaseName(queue string) string {
	name := "perfexp-queue-" + queue
	if len(name) <= 63 {
		return name
	}
	sum := sha256.Sum256([]byte(queue))
	return "perfexp-queue." + hex.EncodeToString(sum[:])[:32]
}

// Holder is the experiment that holds a queue's lock.
type Holder struct {
	UID types.UID
	// Namespace and Name of the experiment, from the Lease's annotation; empty on Leases written
	// without it.
	Namespace, Name string
}

// Free reports whether nobody holds the lock.
func (h Holder) Free() bool { return h.UID == "" }

// legacyLeaseName is the name earlier versions gave the Lease of a long queue
// (perfexp-queue-<16 hex digits>), or "" for a short queue. An experiment may still hold such a
// Lease across an upgrade, so it is honoured, though never created any more.
func legacyLeaseName(queue string) string {
	if len("perfexp-queue-"+queue) <= 63 {
		return ""
	}
	sum := sha256.Sum256([]byte(queue))
	return "perfexp-queue-" + hex.EncodeToString(sum[:])[:16]
}

// Holder returns who holds the queue's lock; its UID is "" when the lock is free. It reads
// through Cache when set (see there), so it may lag the API server by a watch event.
func (l *Lock) Holder(ctx context.Context, queue string) (Holder, error) {
	r := l.fresh()
	if l.Cache != nil {
		r = l.Cache
	}
	lease, err := getLease(ctx, r, l.Namespace, LeaseName(queue))
	switch {
	case apierrors.IsNotFound(err):
	case err != nil:
		return Holder{}, err
	case !holderOf(lease).Free():
		return holderOf(lease), nil
	}
	return l.legacyHolder(ctx, r, queue)
}

// legacyHolder is who holds the queue's lock under its legacy name.
func (l *Lock) legacyHolder(ctx context.Context, r client.Reader, queue string) (Holder, error) {
	name := legacyLeaseName(queue)
	if name == "" {
		return Holder{}, nil
	}
	lease, err := getLease(ctx, r, l.Namespace, name)
	if apierrors.IsNotFound(err) {
		return Holder{}, nil
	}
	if err != nil {
		return Holder{}, err
	}
	return holderOf(lease), nil
}

// TryAcquire takes the queue's lock for the experiment with the given UID when the lock is free,
// already held by it, or held by an experiment that alive reports as gone. The Lease is
// updated with optimistic concurrency, so two operators, or two workers of one operator
// reconciling different experiments of the queue at once, can never both take it.
// The Lease carries no expiry that matters: liveness is decided by alive, because an experiment
// may legitimately hold its environment for a 24-hour soak while the operator restarts.
func (l *Lock) TryAcquire(ctx context.Context, queue string, holder types.UID, holderName string,
	alive func(context.Context, Holder) (bool, error)) (bool, error) {
	// A holder under the legacy name keeps the lock until it is gone, as under the current one.
	legacy, err := l.legacyHolder(ctx, l.fresh(), queue)
	if err != nil {
		return false, err
	}
	if legacy.UID == holder {
		return true, nil
	}
	if !legacy.Free() {
		if ok, err := alive(ctx, legacy); err != nil || ok {
			return false, err
		}
		// Its holder is gone: clear it, so it is not looked up again.
		if err := l.release(ctx, legacyLeaseName(queue), legacy.UID); err != nil {
			return false, err
		}
	}
	lease, err := l.get(ctx, queue)
	if apierrors.IsNotFound(err) {
		lease = &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: LeaseName(queue), Namespace: l.Namespace}}
		l.stamp(lease, holder, holderName)
		if err := l.Client.Create(ctx, lease); err != nil {
			if apierrors.IsAlreadyExists(err) {
				return false, nil
			}
			return false, fmt.Errorf("creating queue lease %s: %w", lease.Name, err)
		}
		return true, nil
	}
	if err != nil {
		return false, err
	}
	current := holderOf(lease)
	if current.UID == holder {
		return true, nil
	}
	if !current.Free() {
		ok, err := alive(ctx, current)
		if err != nil || ok {
			return false, err
		}
	}
	l.stamp(lease, holder, holderName)
	if err := l.Client.Update(ctx, lease); err != nil {
		// Taken by another waiter, or released (deleted) by its holder since it was read: the
		// next try sees which.
		if apierrors.IsConflict(err) || apierrors.IsNotFound(err) {
			return false, nil
		}
		return false, fmt.Errorf("taking queue lease %s: %w", lease.Name, err)
	}
	return true, nil
}

// Release frees the queue's lock (under its current and its legacy name) if the given UID
// holds it. Releasing a lock one does not hold is a no-op, so Release is safe to repeat after a
// crash.
//
// A released lock's Lease is deleted, not left free: queue names are the authors' own strings,
// and a Lease kept for every name ever used would pile up in the operator's namespace. The
// delete is conditional on the resourceVersion the holder was read at, so it can only remove
// the Lease as this holder has it; a waiter that took the lock meanwhile keeps it, and one
// that finds no Lease creates it.
func (l *Lock) Release(ctx context.Context, queue string, holder types.UID) error {
	if legacy := legacyLeaseName(queue); legacy != "" {
		if err := l.release(ctx, legacy, holder); err != nil {
			return err
		}
	}
	return l.release(ctx, LeaseName(queue), holder)
}

func (l *Lock) release(ctx context.Context, name string, holder types.UID) error {
	lease, err := l.getNamed(ctx, name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if holderOf(lease).UID != holder {
		return nil
	}
	if err := l.deleteAt(ctx, lease); err != nil {
		return fmt.Errorf("releasing queue lease %s: %w", lease.Name, err)
	}
	return nil
}

// deleteAt deletes the Lease as read, or nothing when it changed since: a conflict means
// someone else wrote it (took it) and it is theirs now.
func (l *Lock) deleteAt(ctx context.Context, lease *coordinationv1.Lease) error {
	rv, uid := lease.ResourceVersion, lease.UID
	err := l.Client.Delete(ctx, lease, client.Preconditions{ResourceVersion: &rv, UID: &uid})
	if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
		return nil
	}
	return err
}

// DeleteFree deletes the queue Leases in the operator's namespace that nobody holds: the ones
// earlier versions left behind when they released a lock by clearing its holder. Each delete
// is conditional on the Lease as listed, so a lock taken meanwhile is kept. It returns how
// many it deleted.
func (l *Lock) DeleteFree(ctx context.Context) (int, error) {
	leases := &coordinationv1.LeaseList{}
	if err := l.fresh().List(ctx, leases, client.InNamespace(l.Namespace)); err != nil {
		return 0, err
	}
	deleted := 0
	for i := range leases.Items {
		lease := &leases.Items[i]
		if !strings.HasPrefix(lease.Name, "perfexp-queue") || !holderOf(lease).Free() {
			continue
		}
		if err := l.deleteAt(ctx, lease); err != nil {
			return deleted, fmt.Errorf("deleting free queue lease %s: %w", lease.Name, err)
		}
		deleted++
	}
	return deleted, nil
}

func (l *Lock) get(ctx context.Context, queue string) (*coordinationv1.Lease, error) {
	return l.getNamed(ctx, LeaseName(queue))
}

func (l *Lock) getNamed(ctx context.Context, name string) (*coordinationv1.Lease, error) {
	return getLease(ctx, l.fresh(), l.Namespace, name)
}

// fresh is the reader that decisions to take or release a lock are made on.
func (l *Lock) fresh() client.Reader {
	if l.Reader != nil {
		return l.Reader
	}
	return l.Client
}

func getLease(ctx context.Context, r client.Reader, namespace, name string) (*coordinationv1.Lease, error) {
	lease := &coordinationv1.Lease{}
	err := r.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, lease)
	return lease, err
}

func (l *Lock) stamp(lease *coordinationv1.Lease, holder types.UID, holderName string) {
	id := string(holder)
	now := metav1.NewMicroTime(l.Clock.Now())
	lease.Spec.HolderIdentity = &id
	lease.Spec.AcquireTime = &now
	lease.Spec.RenewTime = &now
	if lease.Annotations == nil {
		lease.Annotations = map[string]string{}
	}
	lease.Annotations[AnnotationHolder] = holderName
}

// HolderOf is who the Lease names as the holder of its queue's lock.
func HolderOf(lease *coordinationv1.Lease) Holder { return holderOf(lease) }

func holderOf(lease *coordinationv1.Lease) Holder {
	if lease.Spec.HolderIdentity == nil || *lease.Spec.HolderIdentity == "" {
		return Holder{}
	}
	h := Holder{UID: types.UID(*lease.Spec.HolderIdentity)}
	if ns, name, ok := strings.Cut(lease.Annotations[AnnotationHolder], "/"); ok {
		h.Namespace, h.Name = ns, name
	}
	return h
}
