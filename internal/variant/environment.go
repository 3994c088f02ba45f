// Package variant applies an experiment's environment variant and puts the environment back.
//
// Before it changes an object, it records the baseline of exactly the fields it changes in an
// annotation on the object, written in the same request as the change, and in the
// experiment's status. Restoring puts back exactly those fields, so a restarted operator
// always restores from the truth and never mistakes a patched object for its baseline. See
// docs/variants.md for what a variant may change and how.
package variant

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/access"
	"github.com/perfexp/perfexp/internal/step"
)

// LabelPatchedBy is the label perfexp puts on every object it patched (the experiment's UID).
const LabelPatchedBy = perfexpv1alpha1.LabelPatchedBy

// ourAnnotations are the annotations perfexp puts on a patched object and removes on restore.
var ourAnnotations = []string{perfexpv1alpha1.AnnotationSnapshot, perfexpv1alpha1.AnnotationExperiment}

// Options configure an Environment.
type Options struct {
	// AllowedNamespaces may be patched without the perfexp.dev/allow-experiments label; every
	// other namespace must carry it (see internal/access).
	AllowedNamespaces []string
	// OperatorNamespaces are the operator's own namespaces, never patched.
	OperatorNamespaces []string
	// GenericPatchKinds are the kinds variant.patches may target (Kind.group); nil means
	// access.DefaultGenericPatchKinds.
	GenericPatchKinds []string
	// RunnerServiceAccount is the service account runner pods run as when the experiment names
	// none (access.DefaultRunnerServiceAccount when empty); RunnerServiceAccounts are the others
	// an experiment may name. RunnerImages, when not empty, are the only images setup and load
	// pods may use; DefaultImage (the operator's k6 image) is always allowed.
	RunnerServiceAccount  string
	RunnerServiceAccounts []string
	RunnerImages          []string
	DefaultImage          string
	// PrometheusURLs, when not empty, are the URLs spec.analysis.prometheusURL may name.
	PrometheusURLs []string
	// FieldManager names perfexp in the managedFields of the objects it patches; default
	// "perfexp".
	FieldManager string
	// APIReader reads ReplicaSets and Pods when a rollout is slow, to tell a crash loop or an
	// image error from a slow start. The manager's cached client would keep an informer on
	// every ReplicaSet and Pod of the cluster for that; pass the manager's API reader to read
	// them directly. Defaults to the client.
	APIReader client.Reader
	// PollInterval is how soon to look again at an unfinished rollout; default 1s. A rollout's
	// end is seen this much late at most, and that lateness is the operator's overhead on every
	// Preparing and Restoring (measured by BenchmarkExperimentOverhead); a look costs reads of
	// the touched objects from the cache only.
	PollInterval time.Duration
	// PodProblemGrace is how long a pod of a rollout may stay unschedulable or unable to pull
	// or start its image before the rollout fails; shorter spells (a cluster-autoscaler
	// scale-up, one failed pull) only make it wait. Default 2m (see rollout.go).
	PodProblemGrace time.Duration
	// Clock tells the time for PodProblemGrace; default the real clock.
	Clock clock.PassiveClock
}

// Environment implements the controllers' Environment: it applies variants and restores.
//
// It reads the objects it changes through the unstructured client, which controller-runtime
// serves from the API server rather than a cache, so every decision is taken on fresh
// objects; and every write carries the resourceVersion it was computed from, so a stale read
// can only ever cause a conflict and a retry, never a lost change.
type Environment struct {
	c      client.Client
	reader client.Reader
	opts   Options
	rules  *access.Rules
	// beforeWrite, when set (tests only), runs before every write of Prepare and Restore; an
	// error stops the call there, the way an operator dying between two writes would.
	beforeWrite func(ref objRef) error
}

// New returns an Environment that patches through c.
func New(c client.Client, opts Options) *Environment {
	if opts.FieldManager == "" {
		opts.FieldManager = "perfexp"
	}
	if opts.PollInterval <= 0 {
		opts.PollInterval = time.Second
	}
	reader := opts.APIReader
	if reader == nil {
		reader = c
	}
	return &Environment{c: c, reader: reader, opts: opts, rules: rulesOf(opts, reader)}
}

// retrySoon is how soon to try again after an object changed under a write.
const retrySoon = time.Second

// targetNamespace is the namespace of the environment under test (the controllers' rule,
// repeated here because importing the controllers package would be an import cycle).
func targetNamespace(exp *perfexpv1alpha1.PerfExperiment) string {
	if exp.Spec.TargetNamespace != "" {
		return exp.Spec.TargetNamespace
	}
	return exp.Namespace
}

// pending is a patch validated and ready to be written.
type pending struct {
	t     *target
	local *unstructured.Unstructured
	snap  *Snapshot
	enc   string
}

// Prepare applies the variant and waits for the rollouts. The whole variant is resolved,
// applied to local copies and dry-run on the API server before the first real write, so
// invalid input fails with nothing changed. Objects that already carry this experiment's
// snapshot were patched by an earlier call (perhaps by an operator that died since): they are
// not patched again and their snapshot is reused, never retaken.
//
// The operator's access rules (internal/access) are checked first, on every experiment, with
// or without a variant: the analysis reads the target namespace too.
func (e *Environment) Prepare(ctx context.Context, exp *perfexpv1alpha1.PerfExperiment) (step.Result, error) {
	if res, err := e.admit(ctx, exp); res != nil || err != nil {
		return deref(res), err
	}
	ns := targetNamespace(exp)
	others, err := e.othersInNamespace(ctx, exp, ns)
	if err != nil {
		return step.Result{}, err
	}
	if len(others.problems) > 0 {
		reason, msg := others.failure()
		return step.Fail(reason, "%s", msg), nil
	}
	if len(others.waits) > 0 {
		return step.Wait(e.opts.PollInterval, "another experiment's variant is still in force in %s: %s", ns, summarize(others.waits)), nil
	}
	if exp.Spec.Variant == nil {
		return step.Done(), nil
	}
	if exp.UID == "" {
		return step.Result{}, errors.New("the experiment has no UID; it must be read from the API server")
	}
	p, err := e.resolve(ctx, exp, ns)
	if err != nil {
		return step.Result{}, err
	}
	if len(p.problems) > 0 {
		reason, msg := p.failure()
		return step.Fail(reason, "%s", msg), nil
	}
	for _, t := range p.targets {
		if t.ours != nil {
			if err := recordTouched(exp, t, t.ours, true); err != nil {
				return step.Result{}, err
			}
		}
	}
	if len(p.waits) > 0 {
		return step.Wait(e.opts.PollInterval, "%s", summarize(p.waits)), nil
	}

	var todo []*pending
	for _, t := range p.targets {
		if t.ours != nil {
			continue
		}
		w, res, err := e.validate(ctx, p, t)
		if err != nil || res != nil {
			return deref(res), err
		}
		if w != nil {
			todo = append(todo, w)
		}
	}
	if len(p.problems) > 0 {
		reason, msg := p.failure()
		return step.Fail(reason, "%s", msg), nil
	}

	for _, w := range todo {
		// The status records the snapshot before the write; the annotation, written in the
		// same request as the change, is what survives a crash before the status is saved.
		if err := recordTouched(exp, w.t, w.snap, false); err != nil {
			return step.Result{}, err
		}
		if e.beforeWrite != nil {
			if err := e.beforeWrite(w.t.ref); err != nil {
				return step.Result{}, err
			}
		}
		setOurs(w.local, exp, w.enc)
		if err := e.write(ctx, w.t.obj, w.local, false); err != nil {
			if apierrors.IsConflict(err) {
				return step.Wait(retrySoon, "%s changed while it was being patched; trying again", w.t.ref), nil
			}
			return step.Result{}, fmt.Errorf("patching %s: %w", w.t.ref, err)
		}
		log.FromContext(ctx).Info("Patched object for the variant", "object", w.t.ref.String(), "changes", len(w.snap.Changes))
		w.t.obj, w.t.ours = w.local, w.snap
		if err := recordTouched(exp, w.t, w.snap, true); err != nil {
			return step.Result{}, err
		}
	}
	return e.waitPrepared(ctx, exp, p), nil
}

func deref(r *step.Result) step.Result {
	if r == nil {
		return step.Result{}
	}
	return *r
}

// validate applies a target's ops to a local copy, dry-runs the patch and builds the
// snapshot. Problems are recorded in the plan; a result is returned when Prepare should wait.
func (e *Environment) validate(ctx context.Context, p *plan, t *target) (*pending, *step.Result, error) {
	local := t.obj.DeepCopy()
	snap := &Snapshot{Version: snapshotVersion, Experiment: p.exp.Namespace + "/" + p.exp.Name, UID: p.exp.UID}
	if t.kafkaState != "" {
		snap.KafkaMetadataState = metadataState(t.obj)
	}
	if t.ref.isWorkload() {
		h, err := healthOf(t.obj)
		if err != nil {
			return nil, nil, err
		}
		snap.Health = h
	}
	for _, o := range t.ops {
		changes, err := o.apply(local.Object)
		if err != nil {
			p.fail(perfexpv1alpha1.ReasonInvalidVariant, "%s: cannot change %s: %v", o.source(), t.ref, err)
			return nil, nil, nil
		}
		snap.Changes = append(snap.Changes, changes...)
	}
	dry := local.DeepCopy()
	if err := e.write(ctx, t.obj, dry, true); err != nil {
		switch {
		case apierrors.IsConflict(err):
			r := step.Wait(retrySoon, "%s changed while it was being checked; trying again", t.ref)
			return nil, &r, nil
		case apierrors.IsNotFound(err):
			p.fail(perfexpv1alpha1.ReasonObjectNotFound, "%s was deleted", t.ref)
		case apierrors.IsForbidden(err):
			p.fail(perfexpv1alpha1.ReasonPatchForbidden, "perfexp may not patch %s: grant its service account the patch verb on this kind (see docs/variants.md): %v", t.ref, err)
		case apierrors.IsInvalid(err) || apierrors.IsBadRequest(err) || apierrors.IsUnsupportedMediaType(err) || apierrors.IsMethodNotSupported(err):
			p.fail(perfexpv1alpha1.ReasonInvalidVariant, "the API server refused the change of %s: %v", t.ref, err)
		default:
			return nil, nil, fmt.Errorf("checking the patch of %s: %w", t.ref, err)
		}
		return nil, nil, nil
	}
	if err := fillAfter(dry.Object, snap.Changes); err != nil {
		return nil, nil, err
	}
	enc, err := snap.encode()
	if err != nil {
		return nil, nil, err
	}
	if len(enc) > maxSnapshot {
		p.fail(perfexpv1alpha1.ReasonInvalidVariant, "the snapshot of %s would take %d bytes, more than the %d an annotation of it may hold; patch fewer or smaller fields", t.ref, len(enc), maxSnapshot)
		return nil, nil, nil
	}
	return &pending{t: t, local: local, snap: snap, enc: enc}, nil, nil
}

// maxStatusSnapshots bounds the snapshots copied into one experiment's status (etcd refuses
// objects above 1.5 MiB).
const maxStatusSnapshots = 512 * 1024

// maxSnapshot bounds a snapshot: status.environment.touched[].snapshot takes at most 64 KiB,
// and all annotations of an object share 256 KiB.
const maxSnapshot = 65536

// waitPrepared reports whether every patched workload rolled out and every Strimzi Kafka
// reached its metadata state.
func (e *Environment) waitPrepared(ctx context.Context, exp *perfexpv1alpha1.PerfExperiment, p *plan) step.Result {
	var waits, failures []string
	for _, t := range p.targets {
		if t.ref.isWorkload() {
			if tc := findTouched(exp, t.ref); tc != nil {
				tc.Containers = containersInForce(t.obj)
			}
			r, err := e.rolloutOf(ctx, t.obj)
			switch {
			case err != nil:
				waits = append(waits, fmt.Sprintf("%s (%v)", t.ref, err))
			case r.failed != "":
				failures = append(failures, fmt.Sprintf("%s: %s", t.ref, r.failed))
			case !r.done:
				waits = append(waits, fmt.Sprintf("%s: %s", t.ref, r.waiting))
			}
		}
		if t.kafkaState != "" {
			if s := metadataState(t.obj); s != t.kafkaState {
				waits = append(waits, fmt.Sprintf("%s: metadata state %q, waiting for %q", t.ref, s, t.kafkaState))
			}
		}
	}
	if len(failures) > 0 {
		return step.Fail(perfexpv1alpha1.ReasonRolloutFailed, "%s", summarize(failures))
	}
	if len(waits) > 0 {
		return step.Wait(e.opts.PollInterval, "%s", summarize(waits))
	}
	// The objects were read at the start of this call, after the rollouts finished: a field
	// put back already (a GitOps self-heal races the rollout) means the load would measure
	// the baseline under the variant's name.
	var drifted []string
	for _, t := range p.targets {
		if t.ours == nil {
			continue
		}
		for _, d := range driftsOf(t.ref, t.obj, t.ours, e.opts.FieldManager) {
			drifted = append(drifted, d.String())
		}
	}
	if len(drifted) > 0 {
		msg := "the variant was undone right after its rollout: " + strings.Join(drifted, "; ")
		setDrifted(exp, msg)
		return step.Fail(perfexpv1alpha1.ReasonVariantDrifted, "%s; stop whatever reverts it (a GitOps self-heal, an autoscaler) for the run", summarize(drifted))
	}
	return step.Done()
}

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

func (e *Environment) now() time.Time {
	if e.opts.Clock != nil {
		return e.opts.Clock.Now()
	}
	return time.Now()
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
	if snap == nil {
		keepNotOurs(ctx, exp, ref, u, theirs, r)
		return nil
	}
	return e.putBack(ctx, exp, ref, u, snap, r)
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
// meanwhile. A conflict is a wait: the next call reads the object again.
func (e *Environment) putBack(ctx context.Context, exp *perfexpv1alpha1.PerfExperiment, ref objRef, u *unstructured.Unstructured, snap *Snapshot, r *restoration) error {
	for _, d := range driftsOf(ref, u, snap, e.opts.FieldManager) {
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

// markTouchedRestored marks the object restored in status, when the status names it.
func markTouchedRestored(exp *perfexpv1alpha1.PerfExperiment, ref objRef) {
	if tc := findTouched(exp, ref); tc != nil {
		tc.Restored = true
	}
}

// markAllRestored records that every object the experiment patched is back as it was.
func markAllRestored(exp *perfexpv1alpha1.PerfExperiment) {
	env := envStatus(exp)
	for i := range env.Touched {
		env.Touched[i].Restored = true
	}
	env.Restored = true
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
	v := exp.Spec.Variant
	if v == nil || exp.UID == "" {
		return refs, listed, nil
	}
	ns := targetNamespace(exp)
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
	ns := targetNamespace(exp)
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

// setOurs adds perfexp's annotations to an object about to be patched, and its label to a
// Deployment or StatefulSet. Only those are found by listing the label; other objects are
// named by the variant itself. Labelling them would also have side effects: Strimzi, for one,
// copies a Kafka resource's labels onto every pod and service it manages.
func setOurs(u *unstructured.Unstructured, exp *perfexpv1alpha1.PerfExperiment, snap string) {
	a := u.GetAnnotations()
	if a == nil {
		a = map[string]string{}
	}
	a[perfexpv1alpha1.AnnotationSnapshot] = snap
	a[perfexpv1alpha1.AnnotationExperiment] = exp.Namespace + "/" + exp.Name
	u.SetAnnotations(a)
	if !refOf(u).isWorkload() {
		return
	}
	l := u.GetLabels()
	if l == nil {
		l = map[string]string{}
	}
	l[LabelPatchedBy] = string(exp.UID)
	u.SetLabels(l)
}

// removeOurs removes perfexp's annotations and label from a restored object, leaving the maps
// absent when they held nothing else, as they were.
func removeOurs(u *unstructured.Unstructured) {
	a := u.GetAnnotations()
	for _, k := range ourAnnotations {
		delete(a, k)
	}
	if len(a) == 0 {
		a = nil
	}
	u.SetAnnotations(a)
	l := u.GetLabels()
	if _, ok := l[LabelPatchedBy]; !ok {
		return
	}
	delete(l, LabelPatchedBy)
	if len(l) == 0 {
		l = nil
	}
	u.SetLabels(l)
}

// write sends the difference between orig (as read) and modified as one patch carrying
// orig's resourceVersion, and reads the stored object back into modified.
//
// Why patches computed from two versions of the object, and not server-side apply: perfexp
// removes fields other managers own (a CPU limit applied by Argo CD, an env var set by Helm).
// With apply, omitting a field only gives up perfexp's own claim to it; removing a field
// another manager owns means first taking it over with force and then applying without it,
// and restoring would leave perfexp owning the baseline's fields, so the GitOps tool's next
// apply would conflict or share them. A strategic merge patch (merge patch for custom
// resources, which take no strategic merge) changes exactly the touched fields, removes a
// limit with "cpu": null and an env var with a $patch: delete directive, keeps env order with
// $setElementOrder, and only moves ownership of the fields it changes. The resourceVersion
// turns a concurrent change into a conflict instead of a silent overwrite.
func (e *Environment) write(ctx context.Context, orig, modified *unstructured.Unstructured, dryRun bool) error {
	rv := orig.GetResourceVersion()
	base := orig.DeepCopy()
	base.SetResourceVersion("")
	modified.SetResourceVersion(rv)
	origJSON, err := json.Marshal(base.Object)
	if err != nil {
		return err
	}
	modJSON, err := json.Marshal(modified.Object)
	if err != nil {
		return err
	}
	var patch client.Patch
	if schemaObj := builtIn(orig.GroupVersionKind()); schemaObj != nil {
		data, err := strategicpatch.CreateTwoWayMergePatch(origJSON, modJSON, schemaObj)
		if err != nil {
			return fmt.Errorf("computing the patch: %w", err)
		}
		patch = client.RawPatch(types.StrategicMergePatchType, data)
	} else {
		data, err := jsonpatch.CreateMergePatch(origJSON, modJSON)
		if err != nil {
			return fmt.Errorf("computing the patch: %w", err)
		}
		patch = client.RawPatch(types.MergePatchType, data)
	}
	opts := []client.PatchOption{client.FieldOwner(e.opts.FieldManager)}
	if dryRun {
		opts = append(opts, client.DryRunAll)
	}
	gvk := orig.GroupVersionKind()
	if err := e.c.Patch(ctx, modified, patch, opts...); err != nil {
		return err
	}
	modified.SetGroupVersionKind(gvk)
	return nil
}

// envStatus returns the experiment's environment status, creating it.
func envStatus(exp *perfexpv1alpha1.PerfExperiment) *perfexpv1alpha1.EnvironmentStatus {
	if exp.Status.Environment == nil {
		exp.Status.Environment = &perfexpv1alpha1.EnvironmentStatus{}
	}
	return exp.Status.Environment
}

func findTouched(exp *perfexpv1alpha1.PerfExperiment, ref objRef) *perfexpv1alpha1.TouchedObject {
	if exp.Status.Environment == nil {
		return nil
	}
	for i := range exp.Status.Environment.Touched {
		if refOfTouched(&exp.Status.Environment.Touched[i]).key() == ref.key() {
			return &exp.Status.Environment.Touched[i]
		}
	}
	return nil
}

// recordTouched records an object's snapshot in status, adding the entry on first use.
func recordTouched(exp *perfexpv1alpha1.PerfExperiment, t *target, snap *Snapshot, patched bool) error {
	enc, err := snap.encode()
	if err != nil {
		return err
	}
	env := envStatus(exp)
	tc := findTouched(exp, t.ref)
	if tc == nil {
		env.Touched = append(env.Touched, perfexpv1alpha1.TouchedObject{
			APIVersion: t.ref.APIVersion, Kind: t.ref.Kind, Namespace: t.ref.Namespace, Name: t.ref.Name,
		})
		tc = &env.Touched[len(env.Touched)-1]
	}
	total := 0
	for i := range env.Touched {
		if &env.Touched[i] != tc {
			total += len(env.Touched[i].Snapshot)
		}
	}
	// The object's annotation is the snapshot that counts; the copy in status is for people
	// and is left out once the status would grow past what an object can hold in etcd.
	if total+len(enc) <= maxStatusSnapshots {
		tc.Snapshot = enc
	} else {
		tc.Snapshot = ""
	}
	tc.Patched = tc.Patched || patched
	if t.ref.isWorkload() && len(tc.Containers) == 0 && patched {
		tc.Containers = containersInForce(t.obj)
	}
	return nil
}

// containersInForce lists each container's requests and limits, for reporting usage as a
// share of them.
func containersInForce(u *unstructured.Unstructured) []perfexpv1alpha1.ContainerResources {
	list, _, _ := unstructured.NestedSlice(u.Object, "spec", "template", "spec", "containers")
	var out []perfexpv1alpha1.ContainerResources
	for _, item := range list {
		m, ok := item.(map[string]any)
		if !ok {
			continue
		}
		var c corev1.Container
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(m, &c); err != nil {
			continue
		}
		out = append(out, perfexpv1alpha1.ContainerResources{Name: c.Name, Requests: c.Resources.Requests, Limits: c.Resources.Limits})
		if len(out) == 16 {
			break
		}
	}
	return out
}
