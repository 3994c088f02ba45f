package controllers

import (
	"context"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
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

	// reported are the objects already counted as unrestorable (by UID), so a round that
	// finds them again does not count them again.
	mu       sync.Mutex
	reported map[types.UID]bool
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
		case j.firstReport(o.Object.GetUID()):
			metrics.OrphansUnrestorable.WithLabelValues(kind).Inc()
			j.event(o, corev1.EventTypeWarning, EventOrphanNotRestored,
				"experiment "+o.Experiment+" (UID "+string(o.UID)+") is gone without restoring this object, and perfexp cannot: "+o.Problem)
			logger.Info("Could not restore an object whose experiment is gone", "object", o.Ref(), "experiment", o.Experiment, "problem", o.Problem)
		}
	}
}

func (j *OrphanJanitor) firstReport(uid types.UID) bool {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.reported == nil {
		j.reported = map[types.UID]bool{}
	}
	if j.reported[uid] {
		return false
	}
	j.reported[uid] = true
	return true
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
