package variant

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
)

// Why a signature, and not a copy of the snapshot kept where tenants cannot write: the
// annotation is the record that survives a force-removed finalizer (the experiment and its
// status are gone by then), and anyone who may annotate the object can write it. An HMAC with
// a key kept in the operator's own namespace, where tenants hold no right, proves perfexp
// wrote the annotation, needs no store that grows with the experiments, and costs nothing
// when nothing is orphaned.
// The signature covers the object's identity as well (kind, namespace, name, UID), so a
// snapshot copied from an object the tenant may patch onto one they may not is refused too.

// signatureVersion prefixes every signature, so a later scheme can be told apart.
const signatureVersion = "v1."

// signSnapshot returns the signature of snap written on u.
func signSnapshot(key []byte, u *unstructured.Unstructured, snap string) string {
	mac := hmac.New(sha256.New, key)
	for _, part := range []string{
		u.GroupVersionKind().GroupKind().String(), u.GetNamespace(), u.GetName(), string(u.GetUID()), snap,
	} {
		// A NUL ends each part: none holds one (the snapshot is JSON, which escapes it), so
		// no two different objects or snapshots give the same bytes.
		mac.Write([]byte(part))
		mac.Write([]byte{0})
	}
	return signatureVersion + base64.RawURLEncoding.EncodeToString(mac.Sum(nil))
}

// signatureProblem says why u's snapshot annotation is not one perfexp recorded with key (or
// with one of previous, the keys a rotation replaced), or "" when it is.
func signatureProblem(key []byte, previous [][]byte, u *unstructured.Unstructured) string {
	a := u.GetAnnotations()
	sig, ok := a[perfexpv1alpha1.AnnotationSnapshotSignature]
	signedBy := func(k []byte) bool {
		return len(k) > 0 && hmac.Equal([]byte(sig), []byte(signSnapshot(k, u, a[perfexpv1alpha1.AnnotationSnapshot])))
	}
	switch {
	case len(key) == 0:
		return "this operator holds no snapshot key, so it cannot tell a snapshot perfexp recorded from a hand-written one"
	case !ok:
		return "its " + perfexpv1alpha1.AnnotationSnapshot + " annotation carries no " + perfexpv1alpha1.AnnotationSnapshotSignature +
			" (written by hand, or by a perfexp older than the signatures)"
	case !strings.HasPrefix(sig, signatureVersion):
		return "its " + perfexpv1alpha1.AnnotationSnapshotSignature + " is not in a format this perfexp writes"
	case !signedBy(key) && !slices.ContainsFunc(previous, signedBy):
		return "its " + perfexpv1alpha1.AnnotationSnapshotSignature + " does not match the snapshot and the object it is on"
	}
	return ""
}
