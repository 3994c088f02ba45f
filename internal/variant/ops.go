package variant

import (
	"encoding/json"
	"fmt"
	"sort"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"sigs.k8s.io/yaml"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
)

// An op is one part of the variant applied to one object: it changes a local copy of the
// object and records the baseline of every field it changes.
type op interface {
	// source names the part of the variant, for messages (workloads[0], patches[1]).
	source() string
	// apply changes obj and returns the baseline of every changed field.
	apply(obj map[string]any) ([]Change, error)
}

// edit sets (or, with remove, deletes) the field at path.
type edit struct {
	path   Path
	value  any
	remove bool
	// what says in a person's words which field this is, for conflict messages.
	what string
}

// fieldOp is a list of field edits: the workload changes (resources, env, image, replicas),
// the Kafka bootstrap switch and the Strimzi annotation.
type fieldOp struct {
	src   string
	edits []edit
}

func (o *fieldOp) source() string { return o.src }

func (o *fieldOp) apply(obj map[string]any) ([]Change, error) {
	changes := make([]Change, 0, len(o.edits))
	for _, e := range o.edits {
		c, err := record(obj, o.src, e.path)
		if err != nil {
			return nil, err
		}
		if e.remove {
			del(obj, e.path)
		} else if err := set(obj, e.path, runtime.DeepCopyJSONValue(e.value), -1); err != nil {
			return nil, err
		}
		changes = append(changes, c)
	}
	return changes, nil
}

var (
	podTemplatePath = path("spec", "template", "spec", "containers")
	replicasPath    = path("spec", "replicas")
)

// containerEdits turns one workload change into field edits for one container.
func containerEdits(container string, wc *perfexpv1alpha1.WorkloadChange) ([]edit, error) {
	c := podTemplatePath.item(container)
	var edits []edit
	if r := wc.Resources; r != nil {
		for _, kind := range []struct {
			key    string
			set    corev1.ResourceList
			remove []corev1.ResourceName
		}{{"requests", r.Requests, r.RemoveRequests}, {"limits", r.Limits, r.RemoveLimits}} {
			for _, name := range sortedResources(kind.set) {
				q := kind.set[name]
				edits = append(edits, edit{path: c.key("resources", kind.key, string(name)), value: q.String(),
					what: fmt.Sprintf("%s.%s of container %s", kind.key, name, container)})
			}
			for _, name := range kind.remove {
				edits = append(edits, edit{path: c.key("resources", kind.key, string(name)), remove: true,
					what: fmt.Sprintf("%s.%s of container %s", kind.key, name, container)})
			}
		}
	}
	if env := wc.Env; env != nil {
		for _, v := range env.Set {
			e, err := envEdit(container, v)
			if err != nil {
				return nil, err
			}
			edits = append(edits, e)
		}
		for _, name := range env.Remove {
			edits = append(edits, edit{path: c.key("env").item(name), remove: true,
				what: fmt.Sprintf("env %s of container %s", name, container)})
		}
	}
	if wc.Image != "" {
		edits = append(edits, edit{path: c.key("image"), value: wc.Image, what: "image of container " + container})
	}
	return edits, nil
}

// envEdit sets one env var of a container, converted to the core/v1 shape the API server keeps.
func envEdit(container string, v perfexpv1alpha1.EnvVar) (edit, error) {
	ev := corev1.EnvVar{Name: v.Name, Value: v.Value}
	if v.ValueFrom != nil {
		ev.ValueFrom = &corev1.EnvVarSource{
			ConfigMapKeyRef: v.ValueFrom.ConfigMapKeyRef,
			SecretKeyRef:    v.ValueFrom.SecretKeyRef,
			FieldRef:        v.ValueFrom.FieldRef,
		}
	}
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&ev)
	if err != nil {
		return edit{}, err
	}
	return edit{path: podTemplatePath.item(container).key("env").item(v.Name), value: m,
		what: fmt.Sprintf("env %s of container %s", v.Name, container)}, nil
}

func sortedResources(l corev1.ResourceList) []corev1.ResourceName {
	names := make([]corev1.ResourceName, 0, len(l))
	for n := range l {
		names = append(names, n)
	}
	sort.Slice(names, func(i, j int) bool { return names[i] < names[j] })
	return names
}

// patchOp applies a user's patch document (the escape hatch). Which fields it touches is
// found by comparing the object before and after: that works the same for strategic merge,
// merge and JSON patches, and it records exactly the fields that changed.
type patchOp struct {
	src string
	typ perfexpv1alpha1.PatchType
	doc []byte
	// schema is the Go type of a built-in kind, which strategic merge needs for its list keys.
	schema runtime.Object
}

func (o *patchOp) source() string { return o.src }

func (o *patchOp) apply(obj map[string]any) ([]Change, error) {
	orig, err := json.Marshal(obj)
	if err != nil {
		return nil, err
	}
	var patched []byte
	switch o.typ {
	case perfexpv1alpha1.PatchTypeJSON:
		p, err := jsonpatch.DecodePatch(o.doc)
		if err != nil {
			return nil, fmt.Errorf("reading the JSON patch: %w", err)
		}
		if patched, err = p.Apply(orig); err != nil {
			return nil, fmt.Errorf("applying the JSON patch: %w", err)
		}
	case perfexpv1alpha1.PatchTypeMerge:
		if patched, err = jsonpatch.MergePatch(orig, o.doc); err != nil {
			return nil, fmt.Errorf("applying the merge patch: %w", err)
		}
	default:
		if o.schema == nil {
			return nil, fmt.Errorf("a strategic merge patch needs a built-in kind; use type Merge or JSON for custom resources")
		}
		if patched, err = strategicpatch.StrategicMergePatch(orig, o.doc, o.schema); err != nil {
			return nil, fmt.Errorf("applying the strategic merge patch: %w", err)
		}
	}
	after := map[string]any{}
	if err := json.Unmarshal(patched, &after); err != nil {
		return nil, err
	}
	for _, p := range ownPaths {
		a, foundA, _ := get(obj, p)
		b, foundB, _ := get(after, p)
		if foundA != foundB || !sameJSON(a, b) {
			return nil, fmt.Errorf("the patch changes %s, which perfexp manages", p)
		}
	}
	var paths []Path
	diffPaths(obj, after, nil, &paths)
	changes := make([]Change, 0, len(paths))
	for _, p := range paths {
		if ignoredPath(p) {
			return nil, fmt.Errorf("the patch changes %s, which perfexp or the API server manages", p)
		}
		c, err := record(obj, o.src, p)
		if err != nil {
			return nil, err
		}
		changes = append(changes, c)
	}
	for k := range obj {
		delete(obj, k)
	}
	for k, v := range after {
		obj[k] = v
	}
	return changes, nil
}

// patchDocument reads a patch given as JSON or YAML.
func patchDocument(s string) ([]byte, error) {
	return yaml.YAMLToJSON([]byte(s))
}

// diffPaths lists the paths where a and b differ. Maps are compared key by key; anything else
// (lists included) is compared whole, because a list without merge keys has no stable way to
// name one of its elements.
func diffPaths(a, b map[string]any, prefix Path, out *[]Path) {
	keys := make([]string, 0, len(a)+len(b))
	seen := map[string]bool{}
	for k := range a {
		keys, seen[k] = append(keys, k), true
	}
	for k := range b {
		if !seen[k] {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		p := prefix.key(k)
		va, oka := a[k]
		vb, okb := b[k]
		ma, isMapA := va.(map[string]any)
		mb, isMapB := vb.(map[string]any)
		if oka && okb && isMapA && isMapB {
			diffPaths(ma, mb, p, out)
			continue
		}
		if oka != okb || !sameJSON(va, vb) {
			*out = append(*out, p)
		}
	}
}

func sameJSON(a, b any) bool {
	ja, err1 := json.Marshal(a)
	jb, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && string(normalizeJSON(ja)) == string(normalizeJSON(jb))
}

// ignoredPath is a field a patch may not change: the API server's bookkeeping.
func ignoredPath(p Path) bool {
	for _, q := range []Path{
		path("metadata", "resourceVersion"), path("metadata", "generation"), path("metadata", "managedFields"),
		path("metadata", "uid"), path("metadata", "creationTimestamp"), path("metadata", "name"),
		path("metadata", "namespace"), path("apiVersion"), path("kind"), path("status"),
	} {
		if p.hasPrefix(q) || q.hasPrefix(p) && len(p) < 2 {
			return true
		}
	}
	return false
}

// ownPaths are perfexp's own annotations and label, which no patch may change.
var ownPaths = []Path{
	path("metadata", "annotations", perfexpv1alpha1.AnnotationSnapshot),
	path("metadata", "annotations", perfexpv1alpha1.AnnotationSnapshotSignature),
	path("metadata", "annotations", perfexpv1alpha1.AnnotationExperiment),
	path("metadata", "labels", LabelPatchedBy),
}
