// Package publish writes the ConfigMaps perfexp publishes for people and tools to read: an
// experiment's report (the analysis, then its history section), its Grafana dashboard and a
// sweep's report. One function writes them all, so every one of them refuses the same way to
// take over a ConfigMap that is not perfexp's.
package publish

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
)

// NotOwnedError says that a ConfigMap perfexp would write exists and is someone else's.
type NotOwnedError struct {
	Key types.NamespacedName
	// For is what perfexp wanted to write there ("the report of experiment team-a/checkout").
	For string
}

func (e *NotOwnedError) Error() string {
	return fmt.Sprintf("ConfigMap %s already exists and is not perfexp's, so %s was not written there; perfexp leaves it as it is: rename or delete that ConfigMap, or give the experiment another name",
		e.Key, e.For)
}

// IsNotOwned reports whether err is (or wraps) a NotOwnedError, and returns it.
func IsNotOwned(err error) (*NotOwnedError, bool) {
	var n *NotOwnedError
	ok := errors.As(err, &n)
	return n, ok
}

// Target says where a ConfigMap goes and whose it is.
type Target struct {
	Key types.NamespacedName
	// Owner, when set, controls the ConfigMap (a controller owner reference, so it is collected
	// with it): a ConfigMap that exists is perfexp's only when Owner controls it. Owner must be
	// in Key's namespace.
	Owner client.Object
	// Marks, when Owner is nil (a ConfigMap in another namespace), are labels that say whose
	// the ConfigMap is: one that exists is perfexp's only when it carries all of them. They are
	// set on the ConfigMap.
	Marks map[string]string
	// For says what is written, for the refusal's message.
	For string
	// Reader reads the ConfigMap before it is written; the client when nil. An uncached reader
	// spares a retry when the cache lags behind a write made a moment earlier.
	Reader client.Reader
	// ExistingOnly updates the ConfigMap only if it exists (a section added to a report).
	ExistingOnly bool
}

// ConfigMap creates the target's ConfigMap, or updates it when it is perfexp's own (see
// Target), with edit setting its labels and data; a write that lost a race is tried again on a
// fresh read. An existing ConfigMap that is not perfexp's is never changed or adopted:
// ConfigMap returns a *NotOwnedError naming it. With ExistingOnly, a missing ConfigMap is left
// missing and ConfigMap returns nil, nil.
func ConfigMap(ctx context.Context, c client.Client, t Target, edit func(*corev1.ConfigMap) error) (*corev1.ConfigMap, error) {
	var out *corev1.ConfigMap
	err := retry.OnError(retry.DefaultRetry, func(err error) bool {
		return apierrors.IsConflict(err) || apierrors.IsAlreadyExists(err)
	}, func() error {
		cm, err := t.write(ctx, c, edit)
		out = cm
		return err
	})
	if err != nil {
		if n, ok := IsNotOwned(err); ok {
			return nil, n
		}
		return nil, fmt.Errorf("writing ConfigMap %s (%s): %w", t.Key, t.For, err)
	}
	return out, nil
}

func (t Target) write(ctx context.Context, c client.Client, edit func(*corev1.ConfigMap) error) (*corev1.ConfigMap, error) {
	var reader client.Reader = c
	if t.Reader != nil {
		reader = t.Reader
	}
	cm := &corev1.ConfigMap{}
	err := reader.Get(ctx, t.Key, cm)
	switch {
	case apierrors.IsNotFound(err):
		if t.ExistingOnly {
			return nil, nil
		}
		cm = &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: t.Key.Namespace, Name: t.Key.Name}}
		if err := t.fill(c, cm, edit); err != nil {
			return nil, err
		}
		return cm, c.Create(ctx, cm)
	case err != nil:
		return nil, err
	case !t.owns(cm):
		return nil, &NotOwnedError{Key: t.Key, For: t.For}
	}
	before := cm.DeepCopy()
	if err := t.fill(c, cm, edit); err != nil {
		return nil, err
	}
	if equality.Semantic.DeepEqual(before, cm) {
		return cm, nil
	}
	return cm, c.Update(ctx, cm)
}

func (t Target) fill(c client.Client, cm *corev1.ConfigMap, edit func(*corev1.ConfigMap) error) error {
	if cm.Labels == nil {
		cm.Labels = map[string]string{}
	}
	for k, v := range t.Marks {
		cm.Labels[k] = v
	}
	if err := edit(cm); err != nil {
		return err
	}
	if t.Owner != nil {
		return controllerutil.SetControllerReference(t.Owner, cm, c.Scheme())
	}
	return nil
}

func (t Target) owns(cm *corev1.ConfigMap) bool {
	if t.Owner != nil {
		ref := metav1.GetControllerOf(cm)
		return ref != nil && ref.UID == t.Owner.GetUID()
	}
	if len(t.Marks) == 0 {
		return false
	}
	for k, v := range t.Marks {
		if cm.Labels[k] != v {
			return false
		}
	}
	return true
}

// Report is where an experiment's report goes: <name>-report beside it (or the ConfigMap its
// status already names), owned by it. The analysis writes it; the history adds its section.
func Report(exp *perfexpv1alpha1.PerfExperiment) Target {
	name := exp.ReportName()
	if exp.Status.ReportRef != nil {
		name = exp.Status.ReportRef.Name
	}
	return Target{
		Key:   types.NamespacedName{Namespace: exp.Namespace, Name: name},
		Owner: exp,
		For:   "the report of experiment " + exp.Namespace + "/" + exp.Name,
	}
}

// SweepReport is where a sweep's report goes: <name>-report beside it, owned by it.
func SweepReport(sw *perfexpv1alpha1.PerfSweep) Target {
	return Target{
		Key:   types.NamespacedName{Namespace: sw.Namespace, Name: sw.ReportName()},
		Owner: sw,
		For:   "the report of sweep " + sw.Namespace + "/" + sw.Name,
	}
}
