// Package variant applies an experiment's environment variant and puts the environment back.
//
// Before it changes an object, it records the baseline of exactly the fields it changes in an
// annotation on the object, written in the same request as the change, and in the
// experiment's status. Restoring puts back exactly those fields, so a restarted operator
// always restores from the truth and never mistakes a patched object for its baseline. See
// docs/variants.md for what a variant may change and how.
//
// prepare.go applies a variant, restore.go puts the environment back, bookkeeping.go keeps the
// marks on patched objects and the record in the status; environment.go holds what both share.
package variant

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/access"
)

// LabelPatchedBy is the label perfexp puts on every object it patched (the experiment's UID).
const LabelPatchedBy = perfexpv1alpha1.LabelPatchedBy

// ourAnnotations are the annotations perfexp puts on a patched object and removes on restore.
var ourAnnotations = []string{perfexpv1alpha1.AnnotationSnapshot, perfexpv1alpha1.AnnotationSnapshotSignature, perfexpv1alpha1.AnnotationExperiment}

// Options configure an Environment.
type Options struct {
	// AllowedNamespaces may be patched without the perfexp.dev/allow-experiments label; every
	// other namespace must carry it (see internal/access).
	AllowedNamespaces []string
	// OperatorNamespaces are the operator's own namespaces, never patched.
	OperatorNamespaces []string
	// WatchedNamespaces, when not empty, are the only namespaces an experiment may use (a
	// namespaced install; see internal/access).
	WatchedNamespaces []string
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
	// RunnerPlacement bounds the load pods' tolerations and node selector.
	RunnerPlacement access.Placement
	// PrometheusURLs, when not empty, are the URLs spec.analysis.prometheusURL may name.
	PrometheusURLs []string
	// SnapshotKey signs the snapshot annotations perfexp writes (see signature.go). The orphan
	// janitor restores only objects whose signature this key verifies; without a key it
	// restores none.
	SnapshotKey []byte
	// PreviousSnapshotKeys are keys a rotation replaced: snapshots they signed still verify
	// (an experiment that began before the rotation may lose its finalizer after it), nothing
	// new is signed with them.
	PreviousSnapshotKeys [][]byte
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

func (e *Environment) now() time.Time {
	if e.opts.Clock != nil {
		return e.opts.Clock.Now()
	}
	return time.Now()
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
