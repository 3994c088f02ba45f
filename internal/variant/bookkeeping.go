// Bookkeeping: the marks perfexp leaves on a patched object (label, annotations) and the
// record of touched objects in the experiment's status.

package variant

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
)

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

// setOurs adds perfexp's annotations to an object about to be patched, and its label to a
// Deployment or StatefulSet. Only those are found by listing the label; other objects are
// named by the variant itself. Labelling them would also have side effects: Strimzi, for one,
// copies a Kafka resource's labels onto every pod and service it manages.
func setOurs(u *unstructured.Unstructured, exp *perfexpv1alpha1.PerfExperiment, snap string, key []byte) {
	a := u.GetAnnotations()
	if a == nil {
		a = map[string]string{}
	}
	a[perfexpv1alpha1.AnnotationSnapshot] = snap
	if len(key) > 0 {
		a[perfexpv1alpha1.AnnotationSnapshotSignature] = signSnapshot(key, u, snap)
	} else {
		delete(a, perfexpv1alpha1.AnnotationSnapshotSignature)
	}
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
