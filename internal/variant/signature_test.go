package variant

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
)

// A rotation: snapshots signed with the key it replaced still verify (the operator keeps it as
// a previous key), a key never the operator's does not, and nothing is signed with the old one.
func TestSignatureAcrossARotation(t *testing.T) {
	oldKey, newKey := []byte(strings.Repeat("o", 32)), []byte(strings.Repeat("n", 32))
	signed := func(key []byte) *unstructured.Unstructured {
		u := &unstructured.Unstructured{}
		u.SetAPIVersion("apps/v1")
		u.SetKind("Deployment")
		u.SetNamespace("shop")
		u.SetName("web")
		u.SetUID("6f1c0d2e-0000-4000-8000-000000000001")
		snap := `{"version":1}`
		u.SetAnnotations(map[string]string{perfexpv1alpha1.AnnotationSnapshot: snap,
			perfexpv1alpha1.AnnotationSnapshotSignature: signSnapshot(key, u, snap)})
		return u
	}
	if p := signatureProblem(newKey, [][]byte{oldKey}, signed(oldKey)); p != "" {
		t.Errorf("signed before the rotation: %s", p)
	}
	if p := signatureProblem(newKey, [][]byte{oldKey}, signed(newKey)); p != "" {
		t.Errorf("signed after the rotation: %s", p)
	}
	if p := signatureProblem(newKey, nil, signed(oldKey)); !strings.Contains(p, "does not match") {
		t.Errorf("the old key once dropped: %q, want refused", p)
	}
	if p := signatureProblem(newKey, [][]byte{oldKey}, signed([]byte(strings.Repeat("x", 32)))); !strings.Contains(p, "does not match") {
		t.Errorf("another key: %q, want refused", p)
	}
}
