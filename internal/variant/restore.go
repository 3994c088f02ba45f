// Restoring: find every object this experiment may have patched (the status, the label, the
// variant), put back exactly the fields its snapshot recorded and wait for the rollouts.

package variant

import (
	"context"
	"fmt"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/step"
)

// Restore puts every object this experiment patched back from its snapshot, then waits, for
// a bounded time, for the rollouts. It finds the objects from the status, from the variant
// (named patch targets and Kafka resources) and by listing Deployments and StatefulSets
// carrying the experiment's label, so a status lost in a crash loses nothing. Only objects
// whose snapshot names this experiment are touched: a later experiment's patch is never
// undone.
//
// Writing the fields back is never given up: a conflict or an unreadable snapshot is a wait,
// since the queue must not be released on an environment still patched. Waiting for the
// rollouts is bounded by spec.timeouts.rollout from the moment every field was back: a
// workload that does not become healthy again (a node gone, a broken dependency) is named in
// the Waiting message of a Done result, which the reconciler reports, and the queue moves on.
// A workload that was not healthy before the experiment is not waited for at all beyond its
// controller seeing the restored spec.
func (e *Environment) Restore(ctx context.Context, exp *perfexpv1alpha1.PerfExperiment) (step.Result, error) {
	refs, listed, err := e.candidates(ctx, exp)
	if err != nil {
		return step.Result{}, err
	}
	if len(refs) == 0 {
		if exp.Status.Environment != nil {
			exp.Status.Environment.Restored = true
		}
		return step.Done(), nil
	}
	var r restoration
	for _, ref := range refs {
		if err := e.restoreObject(ctx, exp, ref, listed[ref.key()], &r); err != nil {
			return step.Result{}, err
		}
	}
	if len(r.drifted) > 0 {
		markDrifted(exp, r.drifted)
	}
	if len(r.waits) > 0 {
		return step.Wait(e.opts.PollInterval, "%s", summarize(r.waits)), nil
	}
	env := envStatus(exp)
	now := e.now()
	if env.FieldsRestoredAt == nil {
		env.FieldsRestoredAt = &metav1.Time{Time: now}
	}
	var settling []string
	for _, o := range r.current {
		w, err := e.settling(ctx, exp, o)
		if err != nil {
			return step.Result{}, err
		}
		settling = append(settling, w...)
	}
	if len(settling) == 0 {
		markAllRestored(exp)
		return step.Done(), nil
	}
	left := env.FieldsRestoredAt.Add(restoreBound(exp)).Sub(now)
	if left > 0 {
		return step.Wait(min(e.opts.PollInterval, left), "%s", summarize(settling)), nil
	}
	log.FromContext(ctx).Info("Released the environment with workloads not healthy yet", "bound", restoreBound(exp).String(), "notHealthy", summarize(settling))
	markAllRestored(exp)
	res := step.Done()
	res.Waiting = fmt.Sprintf("every field is back as it was, but after %s: %s", restoreBound(exp), summarize(settling))
	return res, nil
}

// defaultRestoreBound is how long Restore waits for rollouts when the experiment sets no
// spec.timeouts.rollout (the reconciler's default for Preparing).
const defaultRestoreBound = 10 * time.Minute

// restoreBound is how long Restore waits for rollouts after every field is back: as long as
// Preparing may wait for the variant's rollout.
func restoreBound(exp *perfexpv1alpha1.PerfExperiment) time.Duration {
	if t := exp.Spec.Timeouts; t != nil && t.Rollout != nil && t.Rollout.Duration > 0 {
		return t.Rollout.Duration
	}
	return defaultRestoreBound
}

// restoration is what one Restore call gathers while it goes through the candidates.
type restoration struct {
	// waits are the reasons the fields are not all back yet: Restore has to be called again,
	// however long it takes.
	waits []string
	// drifted describes fields someone else changed during the run.
	drifted []string
	// current are the objects back as they were (as written now, or as found when an earlier
	// call restored them), whose rollouts and Kafka metadata states are still to settle.
	current []restoredObject
}

// restoredObject is an object back as it was, with the snapshot it was restored from (nil
// when none is known any more).
type restoredObject struct {
	u    *unstructured.Unstructured
	snap *Snapshot
}

// restoreObject restores one candidate. listed is the object as the label list read it, or
// nil when it has to be read.
func (e *Environment) restoreObject(ctx context.Context, exp *perfexpv1alpha1.PerfExperiment, ref objRef, listed *unstructured.Unstructured, r *restoration) error {
	u, found, err := e.readCandidate(ctx, ref, listed)
	if apierrors.IsForbidden(err) && findTouched(exp, ref) == nil {
		// Named by the variant but never snapshotted, let alone patched: perfexp may not even
		// read it (a Secret), so there is nothing of ours on it to undo.
		log.FromContext(ctx).Info("Skipped object perfexp may not read and never patched", "object", ref.String())
		return nil
	}
	if err != nil {
		return err
	}
	if !found {
		markTouchedRestored(exp, ref)
		return nil
	}
	snap, theirs, unreadable := ownSnapshot(u, exp)
	if unreadable != nil && mayBeOurs(exp, ref, u) {
		// Counting this object as restored would release the queue on an environment that
		// may still carry the variant. The copy in status, when there is one, is as good.
		if snap = statusSnapshot(exp, ref); snap == nil {
			r.waits = append(r.waits, fmt.Sprintf("%s carries a %s annotation perfexp cannot read (%v) and the status holds no copy: put the object back by hand and remove perfexp's annotations and %s label",
				ref, perfexpv1alpha1.AnnotationSnapshot, unreadable, LabelPatchedBy))
			return nil
		}
	}
	fromCopy := false
	if snap == nil && theirs == "" && unreadable == nil && mayBeOurs(exp, ref, u) {
		// The annotation is gone but nobody else's took its place (a tool pruned it, a person
		// removed it): the variant may well still be in force, and the copy in status says
		// what to put back. Putting back values that are already there changes nothing.
		if snap = statusSnapshot(exp, ref); snap != nil {
			fromCopy = true
			log.FromContext(ctx).Info("Restoring from the status copy: the object's snapshot annotation is gone", "object", ref.String())
		}
	}
	if snap == nil {
		keepNotOurs(ctx, exp, ref, u, theirs, r)
		return nil
	}
	return e.putBack(ctx, exp, ref, u, snap, fromCopy, r)
}

// mayBeOurs reports whether an object may carry this experiment's patch: it has the
// experiment's label or name, or the status says it was patched and not yet restored.
func mayBeOurs(exp *perfexpv1alpha1.PerfExperiment, ref objRef, u *unstructured.Unstructured) bool {
	if u.GetLabels()[LabelPatchedBy] == string(exp.UID) || u.GetAnnotations()[perfexpv1alpha1.AnnotationExperiment] == exp.Namespace+"/"+exp.Name {
		return true
	}
	tc := findTouched(exp, ref)
	return tc != nil && tc.Patched && !tc.Restored
}

// statusSnapshot returns this experiment's snapshot of the object from its status.
func statusSnapshot(exp *perfexpv1alpha1.PerfExperiment, ref objRef) *Snapshot {
	tc := findTouched(exp, ref)
	if tc == nil || tc.Snapshot == "" {
		return nil
	}
	snap, err := decodeSnapshot(tc.Snapshot)
	if err != nil || snap.UID != exp.UID {
		return nil
	}
	return snap
}

// readCandidate returns the candidate as listed, or reads it. found is false when the object
// no longer exists or its kind is no longer served: there is nothing left to restore.
func (e *Environment) readCandidate(ctx context.Context, ref objRef, listed *unstructured.Unstructured) (u *unstructured.Unstructured, found bool, err error) {
	u = listed
	if u == nil {
		u = ref.empty()
		if err = e.c.Get(ctx, client.ObjectKey{Namespace: ref.Namespace, Name: ref.Name}, u); err != nil {
			if apierrors.IsNotFound(err) || meta.IsNoMatchError(err) {
				return nil, false, nil
			}
			return nil, false, fmt.Errorf("reading %s: %w", ref, err)
		}
	}
	u.SetGroupVersionKind(ref.gvk())
	return u, true, nil
}

// keepNotOurs leaves alone an object that does not (or no longer) carry this experiment's
// snapshot: restored by an earlier call whose status was lost, replaced as a whole by
// someone, or patched by a later experiment. When the status says this experiment patched
// it, it counts as restored and its rollout is still waited for.
func keepNotOurs(ctx context.Context, exp *perfexpv1alpha1.PerfExperiment, ref objRef, u *unstructured.Unstructured, theirs string, r *restoration) {
	tc := findTouched(exp, ref)
	if tc == nil || !tc.Patched {
		return
	}
	if !tc.Restored && theirs != "" {
		log.FromContext(ctx).Info("Left object alone: another experiment patched it since", "object", ref.String(), "patchedBy", theirs)
	}
	tc.Restored = true
	r.current = append(r.current, restoredObject{u: u, snap: statusSnapshot(exp, ref)})
}

// putBack writes the object back as its snapshot says it was, noting what others changed
// meanwhile. A conflict is a wait: the next call reads the object again. fromCopy says the
// snapshot is the status copy because the object's annotation is gone, which is also what an
// earlier call that restored the object but lost its status write leaves behind: the fields
// that call put back are not drift.
func (e *Environment) putBack(ctx context.Context, exp *perfexpv1alpha1.PerfExperiment, ref objRef, u *unstructured.Unstructured, snap *Snapshot, fromCopy bool, r *restoration) error {
	check := snap
	if fromCopy {
		check = &Snapshot{}
		for _, c := range snap.Changes {
			if !putBackBefore(u, c, e.opts.FieldManager, exp.CreationTimestamp) {
				check.Changes = append(check.Changes, c)
			}
		}
	}
	for _, d := range driftsOf(ref, u, check, e.opts.FieldManager) {
		r.drifted = append(r.drifted, d.String())
	}
	restored := u.DeepCopy()
	for _, s := range unwind(restored.Object, snap) {
		r.drifted = append(r.drifted, fmt.Sprintf("%s %s", ref, s))
	}
	removeOurs(restored)
	if err := recordTouched(exp, &target{ref: ref, obj: u}, snap, true); err != nil {
		return err
	}
	if e.beforeWrite != nil {
		if err := e.beforeWrite(ref); err != nil {
			return err
		}
	}
	if err := e.write(ctx, u, restored, false); err != nil {
		if apierrors.IsConflict(err) {
			r.waits = append(r.waits, fmt.Sprintf("%s changed while it was being restored; trying again", ref))
			return nil
		}
		return fmt.Errorf("restoring %s: %w", ref, err)
	}
	log.FromContext(ctx).Info("Restored object from its snapshot", "object", ref.String(), "changes", len(snap.Changes))
	markTouchedRestored(exp, ref)
	r.current = append(r.current, restoredObject{u: restored, snap: snap})
	return nil
}

// settling says what a restored object still waits for: its rollout, or the Kafka metadata
// state it had before the variant. A workload that was not healthy before the experiment is
// only waited for until its controller saw the restored spec.
func (e *Environment) settling(ctx context.Context, exp *perfexpv1alpha1.PerfExperiment, o restoredObject) ([]string, error) {
	var waits []string
	u := o.u
	ref := refOf(u)
	if ref.isWorkload() {
		if err := e.forceRollback(ctx, u); err != nil {
			return nil, err
		}
		r, err := e.rolloutOf(ctx, u)
		switch {
		case err != nil:
			waits = append(waits, fmt.Sprintf("%s (%v)", ref, err))
		case r.done:
		case !o.snap.wasHealthy() && observed(u):
			// Not healthy before either: its health is not perfexp's to bring back.
		case r.failed != "":
			waits = append(waits, fmt.Sprintf("%s: %s", ref, r.failed))
		default:
			waits = append(waits, fmt.Sprintf("%s: %s", ref, r.waiting))
		}
	}
	if want := restoredKafkaState(exp, ref); want != "" {
		if s := metadataState(u); s != want {
			waits = append(waits, fmt.Sprintf("%s: metadata state %q, waiting for %q", ref, s, want))
		}
	}
	return waits, nil
}

// candidates lists every object this experiment may have patched, and returns the objects
// the label list already read, so they are not read twice.
func (e *Environment) candidates(ctx context.Context, exp *perfexpv1alpha1.PerfExperiment) ([]objRef, map[objKey]*unstructured.Unstructured, error) {
	var refs []objRef
	listed := map[objKey]*unstructured.Unstructured{}
	seen := map[objKey]bool{}
	add := func(r objRef) {
		if !seen[r.key()] {
			seen[r.key()] = true
			refs = append(refs, r)
		}
	}
	if env := exp.Status.Environment; env != nil {
		for i := range env.Touched {
			add(refOfTouched(&env.Touched[i]))
		}
	}
	if !hasEnvironmentChange(exp) || exp.UID == "" {
		return refs, listed, nil
	}
	v := exp.Spec.Variant
	if v == nil {
		v = &perfexpv1alpha1.Variant{} // spec.freshPods rolls workloads only: they carry the label
	}
	ns := exp.TargetNamespace()
	if e.rules.Reserved(ns) {
		// Prepare refuses these namespaces before any write, so nothing was patched there
		// but what the status names. Other namespaces are listed even when their opt-in
		// label is gone: it may have been removed after the variant was applied.
		return refs, listed, nil
	}
	if v.Kafka != nil && v.Kafka.StrimziMode != nil {
		add(objRef{APIVersion: kafkaGVK.GroupVersion().String(), Kind: kafkaGVK.Kind, Namespace: ns, Name: v.Kafka.StrimziMode.Name})
	}
	for _, pt := range v.Patches {
		if _, err := schema.ParseGroupVersion(pt.Target.APIVersion); err != nil {
			// Prepare refuses such a target before any write (InvalidVariant), and no client
			// can read it: reading it here failed every restore, for ever.
			continue
		}
		add(objRef{APIVersion: pt.Target.APIVersion, Kind: pt.Target.Kind, Namespace: ns, Name: pt.Target.Name})
	}
	lab, err := e.labelled(ctx, exp)
	if err != nil {
		return nil, nil, err
	}
	for _, u := range lab {
		ref := refOf(u)
		add(ref)
		listed[ref.key()] = u
	}
	return refs, listed, nil
}

// labelled lists the Deployments and StatefulSets of the target namespace that carry the
// experiment's label.
func (e *Environment) labelled(ctx context.Context, exp *perfexpv1alpha1.PerfExperiment) ([]*unstructured.Unstructured, error) {
	var out []*unstructured.Unstructured
	ns := exp.TargetNamespace()
	if exp.UID == "" || e.rules.Reserved(ns) {
		return out, nil
	}
	for _, kind := range []perfexpv1alpha1.WorkloadKind{perfexpv1alpha1.WorkloadKindDeployment, perfexpv1alpha1.WorkloadKindStatefulSet} {
		list := &unstructured.UnstructuredList{}
		list.SetAPIVersion(appsv1.SchemeGroupVersion.String())
		list.SetKind(string(kind) + "List")
		if err := e.c.List(ctx, list, client.InNamespace(ns), client.MatchingLabels{LabelPatchedBy: string(exp.UID)}); err != nil {
			return nil, fmt.Errorf("listing %ss patched by the experiment in %s: %w", kind, ns, err)
		}
		for i := range list.Items {
			u := &list.Items[i]
			u.SetGroupVersionKind(appsv1.SchemeGroupVersion.WithKind(string(kind)))
			out = append(out, u)
		}
	}
	return out, nil
}

// ownSnapshot returns the object's snapshot when this experiment wrote it, else the
// experiment named by a foreign snapshot (empty when there is none), or why the snapshot
// annotation cannot be read.
func ownSnapshot(u *unstructured.Unstructured, exp *perfexpv1alpha1.PerfExperiment) (*Snapshot, string, error) {
	s, ok := u.GetAnnotations()[perfexpv1alpha1.AnnotationSnapshot]
	if !ok {
		return nil, "", nil
	}
	snap, err := decodeSnapshot(s)
	if err != nil {
		return nil, "an unreadable snapshot", err
	}
	if snap.UID != exp.UID {
		return nil, snap.Experiment, nil
	}
	return snap, "", nil
}

// restoredKafkaState is the metadata state a Strimzi Kafka had before the variant, from the
// snapshot kept in status (the object's own annotation is gone once restored).
func restoredKafkaState(exp *perfexpv1alpha1.PerfExperiment, ref objRef) string {
	if ref.gvk().GroupKind() != kafkaGVK.GroupKind() {
		return ""
	}
	tc := findTouched(exp, ref)
	if tc == nil || tc.Snapshot == "" {
		return ""
	}
	snap, err := decodeSnapshot(tc.Snapshot)
	if err != nil {
		return ""
	}
	return snap.KafkaMetadataState
}

// markDrifted reports fields someone else changed during the run, found when restoring.
func markDrifted(exp *perfexpv1alpha1.PerfExperiment, drifted []string) {
	setDrifted(exp, "changed during the run by someone else, restored to the snapshot anyway: "+strings.Join(drifted, "; "))
}
