package manager

import (
	"context"
	"crypto/rand"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// SnapshotKeySecret is the Secret, in the operator's namespace (--lease-namespace), that holds
// the keys of the snapshot annotations perfexp writes (internal/variant, signature.go): data.key
// signs (and verifies), data.previous, when present, only verifies, so a rotation does not
// orphan the snapshots of experiments that began before it (docs/security.md, "Rotating the
// snapshot key"). The Secret is created at the first start and read at every start; deleting it
// makes every snapshot written before unverifiable, so the orphan janitor refuses them (an
// experiment still restores its own objects).
//
// A Secret: tenants hold no right in the operator's namespace, and whoever reads the key there
// can sign a snapshot the janitor would apply with the operator's rights. The operator reads it
// with its get on Secrets and creates it with a Role of its namespace (config/rbac,
// snapshot_key_role.yaml; the chart's snapshot-key Role).
const SnapshotKeySecret = "perfexp-snapshot-key"

// legacySnapshotKeyConfigMap held the key before it moved to a Secret. Its key verifies the
// snapshots it signed until the next rotation (it becomes data.previous); delete it once read.
const legacySnapshotKeyConfigMap = "perfexp-snapshot-key"

// snapshotKeyField and previousKeyField are the Secret's data keys, and minKeyBytes the
// shortest key accepted.
const (
	snapshotKeyField = "key"
	previousKeyField = "previous"
	minKeyBytes      = 32
)

// snapshotKeys are the key that signs and the keys that verify only.
type snapshotKeys struct {
	sign     []byte
	previous [][]byte
}

// readSnapshotKeys reads the snapshot keys from namespace ns, creating the Secret when it does
// not exist (two replicas starting at once: the second reads the first one's). r should bypass
// the cache: the manager caches Secrets nowhere.
func readSnapshotKeys(ctx context.Context, r client.Reader, w client.Writer, ns string) (snapshotKeys, error) {
	key := client.ObjectKey{Namespace: ns, Name: SnapshotKeySecret}
	for range 2 {
		s := &corev1.Secret{}
		err := r.Get(ctx, key, s)
		if err == nil {
			return keysOf(s)
		}
		if !apierrors.IsNotFound(err) {
			return snapshotKeys{}, fmt.Errorf("reading Secret %s/%s: %w", ns, SnapshotKeySecret, err)
		}
		s, err = newKeySecret(ctx, r, ns)
		if err != nil {
			return snapshotKeys{}, err
		}
		err = w.Create(ctx, s)
		if err == nil {
			return keysOf(s)
		}
		if !apierrors.IsAlreadyExists(err) {
			return snapshotKeys{}, fmt.Errorf("creating Secret %s/%s (the operator needs create on Secrets in its namespace: config/rbac/snapshot_key_role.yaml): %w", ns, SnapshotKeySecret, err)
		}
	}
	return snapshotKeys{}, fmt.Errorf("the Secret %s/%s was created and is gone again", ns, SnapshotKeySecret)
}

// newKeySecret is a Secret with a new random key; the key of the ConfigMap an older perfexp
// kept becomes its previous key.
func newKeySecret(ctx context.Context, r client.Reader, ns string) (*corev1.Secret, error) {
	k := make([]byte, minKeyBytes)
	if _, err := rand.Read(k); err != nil {
		return nil, err
	}
	s := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: SnapshotKeySecret, Labels: map[string]string{"app.kubernetes.io/name": "perfexp"}},
		Type:       corev1.SecretTypeOpaque,
		Data:       map[string][]byte{snapshotKeyField: k},
	}
	cm := &corev1.ConfigMap{}
	err := r.Get(ctx, client.ObjectKey{Namespace: ns, Name: legacySnapshotKeyConfigMap}, cm)
	switch {
	case err == nil && len(cm.BinaryData[snapshotKeyField]) >= minKeyBytes:
		s.Data[previousKeyField] = cm.BinaryData[snapshotKeyField]
	case err != nil && !apierrors.IsNotFound(err) && !apierrors.IsForbidden(err):
		return nil, fmt.Errorf("reading the former key ConfigMap %s/%s: %w", ns, legacySnapshotKeyConfigMap, err)
	}
	return s, nil
}

// keysOf reads a key Secret; a key too short to be one is refused rather than used.
func keysOf(s *corev1.Secret) (snapshotKeys, error) {
	k := snapshotKeys{sign: s.Data[snapshotKeyField]}
	if len(k.sign) < minKeyBytes {
		return snapshotKeys{}, fmt.Errorf("the Secret %s/%s holds no data.%s of at least %d bytes", s.Namespace, s.Name, snapshotKeyField, minKeyBytes)
	}
	if p, ok := s.Data[previousKeyField]; ok {
		if len(p) < minKeyBytes {
			return snapshotKeys{}, fmt.Errorf("the Secret %s/%s: data.%s is shorter than %d bytes", s.Namespace, s.Name, previousKeyField, minKeyBytes)
		}
		k.previous = [][]byte{p}
	}
	return k, nil
}
