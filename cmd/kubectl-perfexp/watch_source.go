package main

import (
	"context"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
)

// experimentWatch opens watches on one experiment (or one sweep) for the RetryWatcher, and
// remembers since when opening them fails.
type experimentWatch struct {
	client          client.WithWatch
	namespace, name string
	now             func() time.Time
	// sweep watches a PerfSweep instead of a PerfExperiment.
	sweep bool

	mu      sync.Mutex
	since   time.Time
	lastErr error
}

func (e *experimentWatch) WatchWithContext(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	var list client.ObjectList = &perfexpv1alpha1.PerfExperimentList{}
	if e.sweep {
		list = &perfexpv1alpha1.PerfSweepList{}
	}
	wi, err := e.client.Watch(ctx, list, &client.ListOptions{
		Namespace:     e.namespace,
		FieldSelector: fields.OneTermEqualSelector("metadata.name", e.name),
		Raw:           &opts,
	})
	e.mu.Lock()
	defer e.mu.Unlock()
	switch {
	case err == nil:
		e.since, e.lastErr = time.Time{}, nil
	case ctx.Err() != nil:
	case e.lastErr == nil:
		e.since, e.lastErr = e.now(), err
	default:
		e.lastErr = err
	}
	return wi, err
}

// failing is when opening a watch began to fail, and the last error; nil while it works.
func (e *experimentWatch) failing() (time.Time, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.since, e.lastErr
}
