package variant

import (
	"context"
	"fmt"
	"sort"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
)

// objRef names one object perfexp may change.
type objRef struct {
	APIVersion, Kind, Namespace, Name string
}

func refOf(u *unstructured.Unstructured) objRef {
	return objRef{APIVersion: u.GetAPIVersion(), Kind: u.GetKind(), Namespace: u.GetNamespace(), Name: u.GetName()}
}

func refOfTouched(t *perfexpv1alpha1.TouchedObject) objRef {
	return objRef{APIVersion: t.APIVersion, Kind: t.Kind, Namespace: t.Namespace, Name: t.Name}
}

func (r objRef) String() string { return fmt.Sprintf("%s %s/%s", r.Kind, r.Namespace, r.Name) }

// objKey identifies an object whatever version of its API it was read under: one object
// reached as autoscaling/v1 and autoscaling/v2 is one target, patched once and restored once.
type objKey struct {
	Group, Kind, Namespace, Name string
}

// key returns the version-free identity of the object.
func (r objRef) key() objKey {
	return objKey{Group: r.gvk().Group, Kind: r.Kind, Namespace: r.Namespace, Name: r.Name}
}

func (r objRef) gvk() schema.GroupVersionKind {
	return schema.FromAPIVersionAndKind(r.APIVersion, r.Kind)
}

// empty returns an unstructured object of this kind, to read into.
func (r objRef) empty() *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(r.gvk())
	return u
}

// isWorkload reports whether the object has a rollout to wait for.
func (r objRef) isWorkload() bool {
	g := r.gvk()
	kind := perfexpv1alpha1.WorkloadKind(g.Kind)
	return g.Group == appsv1.GroupName && (kind == perfexpv1alpha1.WorkloadKindDeployment || kind == perfexpv1alpha1.WorkloadKindStatefulSet)
}

// builtIn returns the Go type of a built-in kind (nil for custom resources). Strategic merge
// needs it for list merge keys, and the API server accepts strategic merge only for these
// kinds: a scheme that also knows perfexp's own types would wrongly allow it for CRDs.
func builtIn(gvk schema.GroupVersionKind) runtime.Object {
	obj, err := clientgoscheme.Scheme.New(gvk)
	if err != nil {
		return nil
	}
	return obj
}

// target is one object the variant changes, with the ops to apply to it in order.
type target struct {
	ref objRef
	// obj is the object as last read from (or written to) the API server.
	obj *unstructured.Unstructured
	ops []op
	// kafkaState is the status.kafkaMetadataState to wait for (Strimzi mode switch).
	kafkaState string
	// ours is this experiment's snapshot when the object already carries it.
	ours *Snapshot
	// theirs is another experiment's snapshot found on the object.
	theirs *Snapshot
	// restarts is true once the plan rolls the workload for spec.freshPods.
	restarts bool
}

// problem is a reason the variant cannot be applied.
type problem struct {
	reason, msg string
}

// plan is the resolved variant: every object it changes and how.
type plan struct {
	exp     *perfexpv1alpha1.PerfExperiment
	ns      string
	targets []*target
	byRef   map[objKey]*target
	// fields maps object and field to the part of the variant changing it, to refuse two
	// parts changing the same field (which one would win would be an accident of order).
	fields   map[string]string
	problems []problem
	// waits are reasons to wait before anything is patched.
	waits []string
	// hpas are the namespace's autoscalers, read when a workload change sets replicas.
	hpas []autoscalingv2.HorizontalPodAutoscaler
}

func (p *plan) fail(reason, format string, args ...any) {
	p.problems = append(p.problems, problem{reason: reason, msg: fmt.Sprintf(format, args...)})
}

// failure summarises the problems as one step failure, with the first problem's reason.
func (p *plan) failure() (reason, msg string) {
	msgs := make([]string, 0, len(p.problems))
	for _, pr := range p.problems {
		msgs = append(msgs, pr.msg)
	}
	const shown = 5
	if len(msgs) > shown {
		msgs = append(msgs[:shown], fmt.Sprintf("and %d more problems", len(p.problems)-shown))
	}
	return p.problems[0].reason, strings.Join(msgs, "; ")
}

// target returns the target for an object read from the API server, adding it on first use.
// An object named again under another version of its API is the same target: its changes
// apply to the copy read first, so one write carries them all and one snapshot records them.
func (p *plan) target(u *unstructured.Unstructured) *target {
	ref := refOf(u)
	if t, ok := p.byRef[ref.key()]; ok {
		return t
	}
	t := &target{ref: ref, obj: u}
	if s, ok := u.GetAnnotations()[perfexpv1alpha1.AnnotationSnapshot]; ok {
		snap, err := decodeSnapshot(s)
		switch {
		case err != nil:
			p.fail(perfexpv1alpha1.ReasonPatchedByAnotherExperiment, "%s carries a %s annotation perfexp cannot read (%v); put the object back by hand and remove the annotation",
				ref, perfexpv1alpha1.AnnotationSnapshot, err)
		case snap.UID == p.exp.UID:
			t.ours = snap
		default:
			t.theirs = snap
		}
	}
	p.byRef[ref.key()] = t
	p.targets = append(p.targets, t)
	return t
}

// addFieldOp adds field edits to a target, refusing a field another part already changes.
func (p *plan) addFieldOp(t *target, src string, edits []edit) {
	for _, e := range edits {
		key := t.ref.String() + " " + e.path.String()
		if prev, ok := p.fields[key]; ok && prev != src {
			p.fail(perfexpv1alpha1.ReasonInvalidVariant, "%s and %s both change %s in %s", prev, src, e.what, t.ref)
			continue
		}
		p.fields[key] = src
	}
	if len(edits) > 0 {
		t.ops = append(t.ops, &fieldOp{src: src, edits: edits})
	}
}

// resolve reads every object the variant changes and checks the whole variant, before
// anything is patched. Problems are collected, not returned one by one, so a person fixes
// them all at once.
func (e *Environment) resolve(ctx context.Context, exp *perfexpv1alpha1.PerfExperiment, ns string) (*plan, error) {
	p := &plan{exp: exp, ns: ns, byRef: map[objKey]*target{}, fields: map[string]string{}}
	v := exp.Spec.Variant
	if v == nil {
		v = &perfexpv1alpha1.Variant{} // a baseline run that only rolls its pods (spec.freshPods)
	}
	for i := range v.Workloads {
		wc := &v.Workloads[i]
		src := fmt.Sprintf("workloads[%d]", i)
		objs, err := e.selectWorkloads(ctx, p, src, wc.WorkloadSelector)
		if err != nil {
			return nil, err
		}
		for _, u := range objs {
			t := p.target(u)
			containers, ok := resolveContainers(p, src, t, wc.Containers)
			if !ok {
				continue
			}
			var edits []edit
			for _, c := range containers {
				ce, err := containerEdits(c, wc)
				if err != nil {
					p.fail(perfexpv1alpha1.ReasonInvalidVariant, "%s: %v", src, err)
					continue
				}
				edits = append(edits, ce...)
			}
			if len(edits) > 0 {
				checkUpdateStrategy(p, src, t)
			}
			if wc.Replicas != nil {
				if err := e.checkAutoscaled(ctx, p, src, t); err != nil {
					return nil, err
				}
				edits = append(edits, edit{path: replicasPath, value: int64(*wc.Replicas), what: "replicas"})
			}
			p.addFieldOp(t, src, edits)
		}
	}
	if k := v.Kafka; k != nil && k.Bootstrap != nil {
		if err := e.resolveBootstrap(ctx, p, k.Bootstrap); err != nil {
			return nil, err
		}
	}
	if k := v.Kafka; k != nil && k.StrimziMode != nil {
		sm := k.StrimziMode
		u := objRef{APIVersion: kafkaGVK.GroupVersion().String(), Kind: kafkaGVK.Kind, Namespace: ns, Name: sm.Name}.empty()
		found, err := e.getTarget(ctx, p, "kafka.strimziMode", u, ns, sm.Name)
		if err != nil {
			return nil, err
		}
		if found {
			t := p.target(u)
			t.kafkaState = expectedMetadataState(sm)
			p.addFieldOp(t, "kafka.strimziMode", []edit{{path: path("metadata", "annotations", kraftAnnotation), value: string(sm.KRaft),
				what: "the " + kraftAnnotation + " annotation"}})
		}
	}
	if fp := exp.Spec.FreshPods; fp != nil {
		if err := e.resolveFreshPods(ctx, p, fp); err != nil {
			return nil, err
		}
	}
	for i, pt := range v.Patches {
		src := fmt.Sprintf("patches[%d]", i)
		u := objRef{APIVersion: pt.Target.APIVersion, Kind: pt.Target.Kind}.empty()
		found, err := e.getTarget(ctx, p, src, u, ns, pt.Target.Name)
		if err != nil {
			return nil, err
		}
		if !found {
			continue
		}
		doc, err := patchDocument(pt.Patch)
		if err != nil {
			p.fail(perfexpv1alpha1.ReasonInvalidVariant, "%s: the patch is neither JSON nor YAML: %v", src, err)
			continue
		}
		typ := pt.Type
		if typ == "" {
			typ = perfexpv1alpha1.PatchTypeStrategicMerge
		}
		t := p.target(u)
		schemaObj := builtIn(t.ref.gvk())
		if typ == perfexpv1alpha1.PatchTypeStrategicMerge && schemaObj == nil {
			p.fail(perfexpv1alpha1.ReasonInvalidVariant, "%s: %s is a custom resource, which takes no strategic merge patch; use type Merge or JSON", src, t.ref)
			continue
		}
		t.ops = append(t.ops, &patchOp{src: src, typ: typ, doc: doc, schema: schemaObj})
	}
	if len(p.targets) > maxTouched {
		p.fail(perfexpv1alpha1.ReasonInvalidVariant, "the variant changes %d objects; at most %d are supported", len(p.targets), maxTouched)
	}
	if err := e.checkOtherExperiments(ctx, p); err != nil {
		return nil, err
	}
	return p, nil
}

// maxTouched is the bound on status.environment.touched.
const maxTouched = 256

// selectWorkloads reads the Deployments or StatefulSets a selector chooses.
func (e *Environment) selectWorkloads(ctx context.Context, p *plan, src string, sel perfexpv1alpha1.WorkloadSelector) ([]*unstructured.Unstructured, error) {
	kind := string(sel.Kind)
	if kind == "" {
		kind = string(perfexpv1alpha1.WorkloadKindDeployment)
	}
	if len(sel.Names) > 0 {
		var out []*unstructured.Unstructured
		for _, name := range sel.Names {
			u := objRef{APIVersion: appsv1.SchemeGroupVersion.String(), Kind: kind}.empty()
			if err := e.c.Get(ctx, client.ObjectKey{Namespace: p.ns, Name: name}, u); err != nil {
				if apierrors.IsNotFound(err) {
					p.fail(perfexpv1alpha1.ReasonWorkloadNotFound, "%s: %s %s/%s does not exist", src, kind, p.ns, name)
					continue
				}
				if apierrors.IsForbidden(err) {
					forbidden(p, src, kind+" "+p.ns+"/"+name, err)
					continue
				}
				return nil, fmt.Errorf("reading %s %s/%s: %w", kind, p.ns, name, err)
			}
			out = append(out, u)
		}
		return out, nil
	}
	if sel.Selector == nil {
		p.fail(perfexpv1alpha1.ReasonInvalidVariant, "%s: choose workloads by names or by selector (selector: {} chooses all)", src)
		return nil, nil
	}
	s, err := metav1.LabelSelectorAsSelector(sel.Selector)
	if err != nil {
		p.fail(perfexpv1alpha1.ReasonInvalidVariant, "%s: %v", src, err)
		return nil, nil
	}
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(appsv1.SchemeGroupVersion.WithKind(kind + "List"))
	if err := e.c.List(ctx, list, client.InNamespace(p.ns), client.MatchingLabelsSelector{Selector: s}); err != nil {
		if apierrors.IsForbidden(err) {
			forbidden(p, src, kind+"s in "+p.ns, err)
			return nil, nil
		}
		return nil, fmt.Errorf("listing %ss in %s: %w", kind, p.ns, err)
	}
	if len(list.Items) == 0 {
		p.fail(perfexpv1alpha1.ReasonWorkloadNotFound, "%s: no %s in %s matches the selector %q", src, kind, p.ns, s.String())
		return nil, nil
	}
	sort.Slice(list.Items, func(i, j int) bool { return list.Items[i].GetName() < list.Items[j].GetName() })
	out := make([]*unstructured.Unstructured, 0, len(list.Items))
	for i := range list.Items {
		u := &list.Items[i]
		u.SetGroupVersionKind(appsv1.SchemeGroupVersion.WithKind(kind))
		out = append(out, u)
	}
	return out, nil
}

// getTarget reads an object named by the variant, recording a problem when it is missing,
// of a kind the cluster does not know, or cluster-scoped.
func (e *Environment) getTarget(ctx context.Context, p *plan, src string, u *unstructured.Unstructured, ns, name string) (bool, error) {
	gvk := u.GroupVersionKind()
	namespaced, err := e.c.IsObjectNamespaced(u)
	if err != nil {
		if meta.IsNoMatchError(err) {
			p.fail(perfexpv1alpha1.ReasonObjectNotFound, "%s: this cluster has no kind %s in %s", src, gvk.Kind, gvk.GroupVersion())
			return false, nil
		}
		return false, fmt.Errorf("%s: looking up %s: %w", src, gvk, err)
	}
	if !namespaced {
		p.fail(perfexpv1alpha1.ReasonInvalidVariant, "%s: %s is cluster-scoped; a variant patches namespaced objects only", src, gvk.Kind)
		return false, nil
	}
	if err := e.c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, u); err != nil {
		if apierrors.IsNotFound(err) {
			p.fail(perfexpv1alpha1.ReasonObjectNotFound, "%s: %s %s/%s does not exist", src, gvk.Kind, ns, name)
			return false, nil
		}
		if apierrors.IsForbidden(err) {
			forbidden(p, src, gvk.Kind+" "+ns+"/"+name, err)
			return false, nil
		}
		return false, fmt.Errorf("%s: reading %s %s/%s: %w", src, gvk.Kind, ns, name, err)
	}
	u.SetGroupVersionKind(gvk)
	return true, nil
}

// forbidden records that perfexp may not read an object the variant names. Waiting would not
// help (rights are not granted by retrying) and nothing is patched yet, so the experiment
// fails at once with the API server's words, instead of sitting in Preparing.
func forbidden(p *plan, src, what string, err error) {
	p.fail(perfexpv1alpha1.ReasonTargetForbidden,
		"%s: perfexp may not read %s, so it cannot snapshot or patch it; grant its service account get and patch on this kind in the namespace, or leave it out of the variant (see docs/variants.md): %v",
		src, what, err)
}

// resolveBootstrap adds the Kafka bootstrap switch: one env var on the chosen containers.
func (e *Environment) resolveBootstrap(ctx context.Context, p *plan, b *perfexpv1alpha1.KafkaBootstrapSwitch) error {
	const src = "kafka.bootstrap"
	addr := b.Address
	if ref := b.FromKafka; ref != nil {
		ns := ref.Namespace
		if ns == "" {
			ns = p.ns
		}
		listener := ref.Listener
		if listener == "" {
			listener = defaultListener
		}
		u := objRef{APIVersion: kafkaGVK.GroupVersion().String(), Kind: kafkaGVK.Kind}.empty()
		found, err := e.getTarget(ctx, p, src+".fromKafka", u, ns, ref.Name)
		if err != nil {
			return err
		}
		if !found {
			return nil
		}
		a, ok := listenerAddress(u, listener)
		if !ok {
			p.waits = append(p.waits, fmt.Sprintf("Kafka %s/%s to report the bootstrap address of its listener %q", ns, ref.Name, listener))
			return nil
		}
		addr = a
	}
	name := b.EnvVar
	if name == "" {
		name = defaultBootstrapEnv
	}
	objs, err := e.selectWorkloads(ctx, p, src, b.Workloads)
	if err != nil {
		return err
	}
	for _, u := range objs {
		t := p.target(u)
		containers, ok := resolveContainers(p, src, t, b.Containers)
		if !ok {
			continue
		}
		var edits []edit
		for _, c := range containers {
			ed, err := envEdit(c, perfexpv1alpha1.EnvVar{Name: name, Value: addr})
			if err != nil {
				return err
			}
			edits = append(edits, ed)
		}
		checkUpdateStrategy(p, src, t)
		p.addFieldOp(t, src, edits)
	}
	return nil
}

// resolveContainers returns the named containers (all when none are named), recording a
// problem for each name the workload lacks.
func resolveContainers(p *plan, src string, t *target, names []string) ([]string, bool) {
	list, _, _ := unstructured.NestedSlice(t.obj.Object, "spec", "template", "spec", "containers")
	var have []string
	for _, c := range list {
		if m, ok := c.(map[string]any); ok {
			if n, _ := m["name"].(string); n != "" {
				have = append(have, n)
			}
		}
	}
	if len(names) == 0 {
		return have, true
	}
	ok := true
	for _, n := range names {
		found := false
		for _, h := range have {
			found = found || h == n
		}
		if !found {
			p.fail(perfexpv1alpha1.ReasonContainerNotFound, "%s: %s has no container %q (it has %s)", src, t.ref, n, strings.Join(have, ", "))
			ok = false
		}
	}
	return names, ok
}
