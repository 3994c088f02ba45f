package manager

import (
	"bytes"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/perfexp/perfexp/internal/testenv"
)

// The first start creates the key in a Secret (before: a ConfigMap, which whoever may read
// ConfigMaps of the operator's namespace could read); later starts (and a second replica) read
// the same one; a key too short to be one is refused rather than used; a rotation's previous
// key is read to verify; an older perfexp's ConfigMap key becomes the previous key.
func TestSnapshotKey(t *testing.T) {
	const ns = "perfexp-system"
	c := fake.NewClientBuilder().WithScheme(testenv.Scheme()).Build()
	first, err := readSnapshotKeys(t.Context(), c, c, ns)
	if err != nil || len(first.sign) < minKeyBytes || len(first.previous) != 0 {
		t.Fatalf("first start: key of %d bytes, %d previous, %v", len(first.sign), len(first.previous), err)
	}
	s := &corev1.Secret{}
	if err := c.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: SnapshotKeySecret}, s); err != nil || !bytes.Equal(s.Data[snapshotKeyField], first.sign) {
		t.Fatalf("the key is not in Secret %s/%s: %v", ns, SnapshotKeySecret, err)
	}
	if err := c.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: legacySnapshotKeyConfigMap}, &corev1.ConfigMap{}); err == nil {
		t.Error("a key ConfigMap was written too")
	}
	again, err := readSnapshotKeys(t.Context(), c, c, ns)
	if err != nil || !bytes.Equal(first.sign, again.sign) {
		t.Fatalf("restart: got another key (%v)", err)
	}

	secret := func(data map[string][]byte) client.Client {
		return fake.NewClientBuilder().WithScheme(testenv.Scheme()).WithObjects(&corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: SnapshotKeySecret}, Data: data}).Build()
	}
	newKey, oldKey := bytes.Repeat([]byte("n"), 32), bytes.Repeat([]byte("o"), 32)
	rotated := secret(map[string][]byte{snapshotKeyField: newKey, previousKeyField: oldKey})
	got, err := readSnapshotKeys(t.Context(), rotated, rotated, ns)
	if err != nil || !bytes.Equal(got.sign, newKey) || len(got.previous) != 1 || !bytes.Equal(got.previous[0], oldKey) {
		t.Errorf("rotated: sign %q previous %q, %v", got.sign, got.previous, err)
	}
	for name, data := range map[string]map[string][]byte{
		"a short key":          {snapshotKeyField: []byte("guessable")},
		"a short previous key": {snapshotKeyField: newKey, previousKeyField: []byte("guessable")},
	} {
		c := secret(data)
		if _, err := readSnapshotKeys(t.Context(), c, c, ns); err == nil || !strings.Contains(err.Error(), "32 bytes") {
			t.Errorf("%s: %v, want refused", name, err)
		}
	}

	legacy := fake.NewClientBuilder().WithScheme(testenv.Scheme()).WithObjects(&corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: legacySnapshotKeyConfigMap},
		BinaryData: map[string][]byte{snapshotKeyField: oldKey},
	}).Build()
	got, err = readSnapshotKeys(t.Context(), legacy, legacy, ns)
	if err != nil || len(got.sign) < minKeyBytes || bytes.Equal(got.sign, oldKey) || len(got.previous) != 1 || !bytes.Equal(got.previous[0], oldKey) {
		t.Errorf("upgrade from the ConfigMap: sign %q previous %q, %v; want a new key, the old one previous", got.sign, got.previous, err)
	}
}
