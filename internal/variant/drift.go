package variant

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
)

// DriftChecker is what the reconciler needs to look for drift while the load runs; the
// Environment implements it.
type DriftChecker interface {
	CheckDrift(ctx context.Context, exp *perfexpv1alpha1.PerfExperiment) ([]Drift, error)
}

// CheckDrift compares every field the variant set, on every object the status names as
// patched and not yet restored, with the value the variant put there. A GitOps self-heal or
// an autoscaler that put a field back seconds after the rollout would otherwise leave the load
// measuring the baseline under the variant's name. Each drift names the field and, from the
// object's managedFields, the manager that owns it now (or, for a field removed, the last
// manager other than perfexp to write the object). It reads the objects and changes nothing.
func (e *Environment) CheckDrift(ctx context.Context, exp *perfexpv1alpha1.PerfExperiment) ([]Drift, error) {
	env := exp.Status.Environment
	if env == nil || !slices.ContainsFunc(env.Touched, func(tc perfexpv1alpha1.TouchedObject) bool { return tc.Patched && !tc.Restored }) {
		return nil, nil
	}
	// The reconciler calls this on every pass of Running: the workloads are read with one
	// list per kind, the other objects one by one.
	lab, err := e.labelled(ctx, exp)
	if err != nil {
		return nil, err
	}
	listed := make(map[objKey]*unstructured.Unstructured, len(lab))
	for _, u := range lab {
		listed[refOf(u).key()] = u
	}
	var out []Drift
	for i := range env.Touched {
		tc := &env.Touched[i]
		if !tc.Patched || tc.Restored {
			continue
		}
		ref := refOfTouched(tc)
		u, found, err := e.readCandidate(ctx, ref, listed[ref.key()])
		if err != nil {
			return nil, err
		}
		if !found {
			out = append(out, Drift{Object: ref.String(), Current: absentValue, Want: "the patched object", Manager: "unknown (the object was deleted)"})
			continue
		}
		snap, _, _ := ownSnapshot(u, exp)
		if snap == nil {
			// The annotation is gone or was replaced: compare with the status copy.
			if snap = statusSnapshot(exp, ref); snap == nil {
				continue
			}
		}
		out = append(out, driftsOf(ref, u, snap, e.opts.FieldManager)...)
	}
	return out, nil
}

// ReportDrift runs CheckDrift and, when a field drifted, sets the Drifted condition, which
// makes the analysis mark the results Invalid. It reports whether anything drifted.
func ReportDrift(ctx context.Context, c DriftChecker, exp *perfexpv1alpha1.PerfExperiment) (bool, error) {
	drifted, err := c.CheckDrift(ctx, exp)
	if err != nil || len(drifted) == 0 {
		return false, err
	}
	msgs := make([]string, 0, len(drifted))
	for _, d := range drifted {
		msgs = append(msgs, d.String())
	}
	setDrifted(exp, "the variant no longer holds during the run, so the load measured something else: "+strings.Join(msgs, "; "))
	log.FromContext(ctx).Info("Found the variant drifted", "drifted", summarize(msgs))
	return true, nil
}

// String describes the drift for conditions and the report.
func (d Drift) String() string {
	s := fmt.Sprintf("%s %s is %s, not %s as %s set it", d.Object, d.Path, d.Current, d.Want, d.Source)
	if d.Manager != "" {
		s += "; changed by " + d.Manager
	}
	return s
}

// driftsOf lists the fields of u that no longer hold the value the variant set, each with
// the manager that changed it.
func driftsOf(ref objRef, u *unstructured.Unstructured, snap *Snapshot, ours string) []Drift {
	out := drifts(u.Object, snap)
	for i := range out {
		out[i].Object = ref.String()
		out[i].Manager = managerOf(u.GetManagedFields(), out[i].Path, ours)
	}
	return out
}

// managerOf names the field manager that owns the value at p. Another manager's ownership
// comes first; perfexp's own (a value it wrote itself) is said to be perfexp's. A field nobody
// owns was removed; the manager that wrote the object last (other than perfexp and the status
// writers) is then the best guess, and is said to be one.
func managerOf(entries []metav1.ManagedFieldsEntry, p Path, ours string) string {
	var last, self *metav1.ManagedFieldsEntry
	for i := range entries {
		m := &entries[i]
		if m.Subresource == "status" || m.FieldsV1 == nil {
			continue
		}
		owns := ownsValue(m, p)
		if m.Manager == ours {
			if owns {
				self = m
			}
			continue
		}
		if owns {
			return describeManager(m)
		}
		if m.Time != nil && (last == nil || last.Time == nil || last.Time.Before(m.Time)) {
			last = m
		}
	}
	switch {
	case self != nil:
		return describeManager(self) + " (perfexp itself)"
	case last == nil:
		return "unknown (no other field manager)"
	}
	return describeManager(last) + " (probably: it wrote the object last; nobody owns the field now)"
}

func describeManager(m *metav1.ManagedFieldsEntry) string {
	s := fmt.Sprintf("%q (%s", m.Manager, m.Operation)
	if m.Subresource != "" {
		s += " of " + m.Subresource
	}
	if m.Time != nil {
		s += " at " + m.Time.UTC().Format("15:04:05")
	}
	return s + ")"
}

// ownsValue reports whether a managedFields entry owns the value at p, not merely its place.
// A field set (FieldsV1: "f:<field>" for map keys, `k:{"name":"<name>"}` for list elements
// keyed by name) marks with "." that a manager set a map or list element at all, and lists
// the key of an element ("f:name") because it is what identifies it: an env var written by
// kubectl apply and changed since by someone else stays in kubectl's set as
// {".":{},"f:name":{}} while its value belongs to the other writer. Only a leaf, or some field
// inside besides those two, is the value.
func ownsValue(m *metav1.ManagedFieldsEntry, p Path) bool {
	var cur map[string]any
	if err := json.Unmarshal(m.FieldsV1.GetRawBytes(), &cur); err != nil {
		return false
	}
	for _, e := range p {
		key := "f:" + e.Key
		if e.Item {
			b, err := json.Marshal(map[string]string{"name": e.Name})
			if err != nil {
				return false
			}
			key = "k:" + string(b)
		}
		next, ok := cur[key].(map[string]any)
		if !ok {
			return false
		}
		cur = next
	}
	if len(cur) == 0 {
		return true
	}
	for k := range cur {
		if k == "." || (len(p) > 0 && p[len(p)-1].Item && k == "f:name") {
			continue
		}
		return true
	}
	return false
}

// putBackBefore reports whether perfexp itself already put the changed field back to its
// value before the variant: an earlier Restore call of this experiment wrote the object and
// lost its status write (a conflict with another writer of the experiment), so the next call
// finds the snapshot annotation gone and the old value in place. That is its own restore, not
// drift. A value written by anyone else moves the field's ownership away from perfexp, so a
// present value counts only when perfexp owns it. A field that was absent before is owned by
// nobody once removed; it counts only when no other manager wrote the object (outside status
// and scale) since the experiment was created, before which no variant existed.
func putBackBefore(u *unstructured.Unstructured, c Change, ours string, since metav1.Time) bool {
	v, found, _ := get(u.Object, c.Path)
	if !sameValue(stripOurs(c.Path, v), found, c.Before) {
		return false
	}
	entries := u.GetManagedFields()
	for i := range entries {
		m := &entries[i]
		if m.Subresource == "status" || m.FieldsV1 == nil {
			continue
		}
		switch {
		case found && m.Manager == ours && ownsValue(m, c.Path):
			return true
		case !found && m.Manager != ours && m.Subresource == "" && (m.Time == nil || !m.Time.Before(&since)):
			return false
		}
	}
	return !found && !since.IsZero()
}

// setDrifted sets the Drifted condition with a bounded message.
func setDrifted(exp *perfexpv1alpha1.PerfExperiment, msg string) {
	const maxMsg = 2048
	if len(msg) > maxMsg {
		cut := maxMsg
		for cut > 0 && !utf8RuneStart(msg[cut]) {
			cut--
		}
		msg = msg[:cut] + "..."
	}
	meta.SetStatusCondition(&exp.Status.Conditions, metav1.Condition{
		Type:               perfexpv1alpha1.ConditionDrifted,
		Status:             metav1.ConditionTrue,
		Reason:             perfexpv1alpha1.ReasonFieldChangedDuringRun,
		Message:            msg,
		ObservedGeneration: exp.Generation,
	})
}

func utf8RuneStart(b byte) bool { return b&0xC0 != 0x80 }

// forceRollback deletes the pods a StatefulSet rolled out from the variant's revision that
// are not ready, once its template is restored. With the default OrderedReady pod management
// the StatefulSet controller waits for a broken pod to become ready before it goes on, so
// restoring the template alone never replaces a pod that cannot start (a bad variant image):
// Kubernetes documents this as the forced rollback case, where the pods tried with the bad
// configuration must be deleted so that the controller recreates them from the restored
// revision. Ready pods are left to the controller's own rolling update. A refusal to delete
// is logged and left to the bounded wait: it must not block restoring.
func (e *Environment) forceRollback(ctx context.Context, u *unstructured.Unstructured) error {
	if perfexpv1alpha1.WorkloadKind(u.GetKind()) != perfexpv1alpha1.WorkloadKindStatefulSet || !observed(u) {
		return nil
	}
	s := &appsv1.StatefulSet{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, s); err != nil {
		return err
	}
	if s.Status.UpdateRevision == "" || s.Spec.UpdateStrategy.Type == appsv1.OnDeleteStatefulSetStrategyType {
		return nil
	}
	sel, err := metav1.LabelSelectorAsSelector(s.Spec.Selector)
	if err != nil {
		return nil
	}
	pods, err := e.podsOf(ctx, s.Namespace, sel, s.UID, nil)
	if err != nil {
		return err
	}
	for i := range pods {
		p := &pods[i]
		rev := p.Labels[appsv1.ControllerRevisionHashLabelKey]
		if p.DeletionTimestamp != nil || rev == "" || rev == s.Status.UpdateRevision || podReady(p) {
			continue
		}
		err := e.c.Delete(ctx, p, client.Preconditions{UID: &p.UID})
		switch {
		case err == nil:
			log.FromContext(ctx).Info("Deleted a pod of the variant's revision that is not ready, so the StatefulSet recreates it from the restored one",
				"statefulSet", s.Namespace+"/"+s.Name, "pod", p.Name, "revision", rev)
		case apierrors.IsNotFound(err) || apierrors.IsConflict(err):
		case apierrors.IsForbidden(err):
			log.FromContext(ctx).Info("Could not delete a broken pod of the variant's revision; grant perfexp delete on pods (see docs/variants.md)", "pod", p.Namespace+"/"+p.Name, "error", err.Error())
		default:
			return fmt.Errorf("deleting pod %s/%s of the variant's revision: %w", p.Namespace, p.Name, err)
		}
	}
	return nil
}

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
