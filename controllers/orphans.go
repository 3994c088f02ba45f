package controllers

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/metrics"
	"github.com/perfexp/perfexp/internal/queue"
	"github.com/perfexp/perfexp/internal/variant"
)

// DefaultOrphanInterval is how often the janitor looks for orphans after its first look at
// start-up.
const DefaultOrphanInterval = 5 * time.Minute

// Event reasons of the orphan janitor, on the object it found.
const (
	EventOrphanRestored    = "OrphanRestored"
	EventOrphanNotRestored = "OrphanNotRestored"
	// EventOrphanRefused: the janitor did not act on the object's snapshot at all (not
	// recorded by perfexp, a namespace that has not opted in, a field no variant changes).
	EventOrphanRefused = "OrphanRefused"
)

// OrphanRecoverer restores objects patched for experiments that no longer exist
// (internal/variant).
type OrphanRecoverer interface {
	RecoverOrphans(ctx context.Context, alive func(context.Context) (map[types.UID]bool, error)) ([]variant.Orphan, error)
}

// OrphanJanitor puts back what an experiment patched when the experiment is gone without
// restoring it: someone removed its finalizer by force, and nothing else would ever notice the
// environment is still patched. At start-up and every Interval it has the Environment look
// for objects carrying perfexp's marks whose experiment does not exist, and restore them from
// the snapshot they carry. An object it cannot restore gets a Warning Event and is counted in
// perfexp_orphans_unrestorable_total (the chart's PerfexpOrphanNotRestored alert). It also
// deletes the free queue Leases earlier versions left behind.
//
// It is a manager Runnable that needs the leader: two operators must not restore at once.
type OrphanJanitor struct {
	Environment OrphanRecoverer
	// Reader lists experiments; it should bypass the cache (a manager's APIReader).
	Reader   client.Reader
	Recorder events.EventRecorder
	// Lock, when set, has its free Leases deleted at each round.
	Lock *queue.Lock
	// Interval between rounds; DefaultOrphanInterval when zero.
	Interval time.Duration
	// Namespaces, when not empty (a namespaced install), are where experiments are listed:
	// the only ones the operator may list, and the only ones whose experiments it runs.
	Namespaces []string

	// reported are the orphan episodes (object and experiment UIDs) already counted as
	// unrestorable, so a round that finds them again does not count them again. unrestored are the objects the last
	// finished round could not restore, by namespace, for the next experiment that takes a
	// queue's lock there (Unrestored).
	mu         sync.Mutex
	reported   map[string]bool
	unrestored map[string][]variant.Orphan
}

// OrphanReports says which objects the orphan janitor could not restore, so the next
// experiment whose environment holds one says so (UnrestoredOrphans).
type OrphanReports interface {
	// Unrestored returns the objects of the namespace the last look could not restore.
	Unrestored(namespace string) []variant.Orphan
}

// Unrestored returns the objects of namespace that the last finished round found patched for
// an experiment that is gone and could not put back.
func (j *OrphanJanitor) Unrestored(namespace string) []variant.Orphan {
	j.mu.Lock()
	defer j.mu.Unlock()
	return slices.Clone(j.unrestored[namespace])
}

// NeedLeaderElection makes the janitor run on the leader only.
func (j *OrphanJanitor) NeedLeaderElection() bool { return true }

// Start runs a round at once and then every Interval until ctx ends.
func (j *OrphanJanitor) Start(ctx context.Context) error {
	interval := j.Interval
	if interval <= 0 {
		interval = DefaultOrphanInterval
	}
	ticker := time.NewTicker(interval)
	defer ticker.Stop()
	for {
		j.Round(ctx)
		select {
		case <-ctx.Done():
			return nil
		case <-ticker.C:
		}
	}
}

// Round looks for orphans once; errors are logged and the next round tries again.
func (j *OrphanJanitor) Round(ctx context.Context) {
	logger := log.FromContext(ctx).WithName("orphans")
	if j.Lock != nil {
		if n, err := j.Lock.DeleteFree(ctx); err != nil {
			logger.Error(err, "Could not delete free queue Leases")
		} else if n > 0 {
			logger.Info("Deleted free queue Leases", "count", n)
		}
	}
	found, err := j.Environment.RecoverOrphans(ctx, j.alive)
	if err != nil {
		logger.Error(err, "Could not look for objects of experiments that are gone")
		return
	}
	// What could not be restored is told to the reconciler before anything is reported: an
	// experiment that takes a lock once the Event is out must see it.
	unrestored := map[string][]variant.Orphan{}
	for _, o := range found {
		if !o.Restored {
			ns := o.Object.GetNamespace()
			unrestored[ns] = append(unrestored[ns], o)
		}
	}
	j.mu.Lock()
	j.unrestored = unrestored
	j.mu.Unlock()
	for _, o := range found {
		kind := o.Object.GetKind()
		switch {
		case o.Restored:
			metrics.OrphansRestored.WithLabelValues(kind).Inc()
			note := "put back from its snapshot: experiment " + o.Experiment + " (UID " + string(o.UID) + ") is gone without restoring it"
			if o.Problem != "" {
				note += "; " + o.Problem
			}
			j.event(o, corev1.EventTypeNormal, EventOrphanRestored, note)
		case o.Refused && j.firstReport(reportKey(o)):
			metrics.OrphansUnrestorable.WithLabelValues(kind).Inc()
			j.event(o, corev1.EventTypeWarning, EventOrphanRefused,
				"snapshot of experiment "+o.Experiment+" (UID "+string(o.UID)+", gone) not applied: "+o.Problem)
			logger.Info("Refused an object's snapshot", "object", o.Ref(), "experiment", o.Experiment, "problem", o.Problem)
		case !o.Refused && j.firstReport(reportKey(o)):
			metrics.OrphansUnrestorable.WithLabelValues(kind).Inc()
			j.event(o, corev1.EventTypeWarning, EventOrphanNotRestored,
				"experiment "+o.Experiment+" (UID "+string(o.UID)+") is gone without restoring this object, and perfexp cannot: "+o.Problem)
			logger.Info("Could not restore an object whose experiment is gone", "object", o.Ref(), "experiment", o.Experiment, "problem", o.Problem)
		}
	}
	j.forgetSettled(unrestored)
}

// maxOrphansNamed bounds how many objects the UnrestoredOrphans condition names.
const maxOrphansNamed = 5

// reportOrphans sets UnrestoredOrphans on an experiment that takes its queue's lock while its
// target namespace holds objects the orphan janitor could not restore: nothing else on the
// experiment would say that it runs on an environment that may not be its baseline.
func (r *PerfExperimentReconciler) reportOrphans(exp *perfexpv1alpha1.PerfExperiment) {
	if r.Orphans == nil {
		return
	}
	found := r.Orphans.Unrestored(exp.TargetNamespace())
	if len(found) == 0 {
		return
	}
	parts := make([]string, 0, min(len(found), maxOrphansNamed)+1)
	for _, o := range found[:min(len(found), maxOrphansNamed)] {
		parts = append(parts, fmt.Sprintf("%s (experiment %s, UID %s): %s", o.Ref(), o.Experiment, o.UID, o.Problem))
	}
	if len(found) > maxOrphansNamed {
		parts = append(parts, fmt.Sprintf("and %d more", len(found)-maxOrphansNamed))
	}
	setCondition(exp, perfexpv1alpha1.ConditionUnrestoredOrphans, metav1.ConditionTrue, perfexpv1alpha1.ReasonOrphanNotRestored,
		"%d object(s) of namespace %s are still patched for experiments that no longer exist and perfexp could not put them back; this run may not measure the baseline environment: %s",
		len(found), exp.TargetNamespace(), strings.Join(parts, "; "))
}

// reportKey names one orphan episode: an object left patched by one experiment. The same
// object orphaned again by a later experiment is a new episode, reported again.
func reportKey(o variant.Orphan) string { return string(o.Object.GetUID()) + "/" + string(o.UID) }

func (j *OrphanJanitor) firstReport(key string) bool {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.reported == nil {
		j.reported = map[string]bool{}
	}
	if j.reported[key] {
		return false
	}
	j.reported[key] = true
	return true
}

// forgetSettled drops the reported episodes this round no longer found: settled by a person
// or restored, so a later one is reported again and the set does not grow for ever.
func (j *OrphanJanitor) forgetSettled(unrestored map[string][]variant.Orphan) {
	still := map[string]bool{}
	for _, list := range unrestored {
		for _, o := range list {
			still[reportKey(o)] = true
		}
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	for k := range j.reported {
		if !still[k] {
			delete(j.reported, k)
		}
	}
}

func (j *OrphanJanitor) event(o variant.Orphan, typ, reason, note string) {
	if j.Recorder == nil {
		return
	}
	j.Recorder.Eventf(o.Object, nil, typ, reason, "RecoverOrphan", "%s", note)
}

// alive lists the UIDs of every experiment that exists.
func (j *OrphanJanitor) alive(ctx context.Context) (map[types.UID]bool, error) {
	namespaces := j.Namespaces
	if len(namespaces) == 0 {
		namespaces = []string{""}
	}
	out := map[types.UID]bool{}
	for _, ns := range namespaces {
		// A namespace that cannot be listed fails the round: its experiments would otherwise
		// be taken for gone and their running variants restored under them.
		list := &perfexpv1alpha1.PerfExperimentList{}
		if err := j.Reader.List(ctx, list, client.InNamespace(ns)); err != nil {
			return nil, err
		}
		for i := range list.Items {
			out[list.Items[i].UID] = true
		}
	}
	return out, nil
}
