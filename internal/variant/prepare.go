// Preparing: resolve the whole variant, validate and dry-run it, then write each patch with its
// snapshot and wait for the rollouts.

package variant

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/log"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/step"
)

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
	ns := exp.TargetNamespace()
	if !patchedAny(exp) {
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
	}
	if !hasEnvironmentChange(exp) {
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
		setOurs(w.local, exp, w.enc, e.opts.SnapshotKey)
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
	if env := envStatus(exp); env.RolledOutAt == nil && slices.ContainsFunc(p.targets, func(t *target) bool { return t.ref.isWorkload() }) {
		env.RolledOutAt = &metav1.Time{Time: e.now()}
	}
	return step.Done()
}

// patchedAny reports whether the experiment's status records an object it patched. The check
// for other experiments' patches (othersInNamespace) is what must hold before the first write;
// once this experiment has written, it holds its queue's and its environment's locks, so no
// other experiment can patch there meanwhile, and each poll of its rollouts would only list
// the namespace's every patchable kind again (six list requests to the API server, uncached).
// An experiment whose status was lost with a crash checks again: the others' marks are found
// as before, its own are skipped.
func patchedAny(exp *perfexpv1alpha1.PerfExperiment) bool {
	if exp.Status.Environment == nil {
		return false
	}
	for _, t := range exp.Status.Environment.Touched {
		if t.Patched {
			return true
		}
	}
	return false
}
