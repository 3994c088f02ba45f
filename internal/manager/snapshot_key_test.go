package manager

import (
	"bytes"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/perfexp/perfexp/internal/testenv"
)

// The first start creates the key; later starts (and a second replica) read the same one; a
// key too short to be one is refused rather than used.
func TestSnapshotKey(t *testing.T) {
	c := fake.NewClientBuilder().WithScheme(testenv.Scheme()).Build()
	first, err := snapshotKey(t.Context(), c, c, "perfexp-system")
	if err != nil || len(first) < minKeyBytes {
		t.Fatalf("first start: key of %d bytes, %v", len(first), err)
	}
	again, err := snapshotKey(t.Context(), c, c, "perfexp-system")
	if err != nil || !bytes.Equal(first, again) {
		t.Fatalf("restart: got another key (%v)", err)
	}

	short := fake.NewClientBuilder().WithScheme(testenv.Scheme()).WithObjects(&corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: "perfexp-system", Name: SnapshotKeyConfigMap},
		BinaryData: map[string][]byte{snapshotKeyField: []byte("guessable")},
	}).Build()
	if _, err := snapshotKey(t.Context(), short, short, "perfexp-system"); err == nil || !strings.Contains(err.Error(), "at least 32 bytes") {
		t.Errorf("a short key: %v, want refused", err)
	}
}
