package metrics

import (
	"github.com/prometheus/client_golang/prometheus"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
)

// Orphans count the objects found patched for an experiment that no longer exists (its
// finalizer was removed by force): put back from their snapshot, or not (each such object
// counted once per operator process). See docs/metrics.md.
var (
	OrphansRestored = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: namespace, Name: "orphans_restored_total",
		Help: "Objects put back from their snapshot annotation because the experiment that patched them no longer exists.",
	}, []string{"kind"})
	OrphansUnrestorable = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: namespace, Name: "orphans_unrestorable_total",
		Help: "Objects patched for an experiment that no longer exists that perfexp could not put back (no readable snapshot, or the write was refused); each has an Event saying why.",
	}, []string{"kind"})
)

func init() {
	ctrlmetrics.Registry.MustRegister(OrphansRestored, OrphansUnrestorable)
}
