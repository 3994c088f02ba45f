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

// SnapshotKeyConfigMap is the ConfigMap, in the operator's namespace (--lease-namespace),
// that holds the key signing the snapshot annotations perfexp writes (internal/variant,
// signature.go). It is created at the first start; deleting it makes every snapshot written
// before unverifiable, so the orphan janitor refuses them (an experiment still restores its
// own objects).
//
// A ConfigMap rather than a Secret: the operator already holds get and create on ConfigMaps
// there (its queue Leases live there too), while a Secret would need a right on Secrets the
// operator has nowhere else. What the key guards against is a tenant, who holds no right in
// the operator's namespace; whoever may read ConfigMaps there may also write its Leases.
const SnapshotKeyConfigMap = "perfexp-snapshot-key"

// snapshotKeyField is the ConfigMap's binaryData key, and minKeyBytes the shortest key accepted.
const (
	snapshotKeyField = "key"
	minKeyBytes      = 32
)

// snapshotKey reads the snapshot key from namespace ns, creating it when it does not exist
// (two replicas starting at once: the second reads the first one's). r should bypass the
// cache: the manager caches ConfigMaps of the watched namespaces only.
func snapshotKey(ctx context.Context, r client.Reader, w client.Writer, ns string) ([]byte, error) {
	key := client.ObjectKey{Namespace: ns, Name: SnapshotKeyConfigMap}
	for range 2 {
		cm := &corev1.ConfigMap{}
		err := r.Get(ctx, key, cm)
		if err == nil {
			if k := cm.BinaryData[snapshotKeyField]; len(k) >= minKeyBytes {
				return k, nil
			}
			return nil, fmt.Errorf("ConfigMap %s/%s holds no binaryData.%s of at least %d bytes", ns, SnapshotKeyConfigMap, snapshotKeyField, minKeyBytes)
		}
		if !apierrors.IsNotFound(err) {
			return nil, fmt.Errorf("reading ConfigMap %s/%s: %w", ns, SnapshotKeyConfigMap, err)
		}
		k := make([]byte, minKeyBytes)
		if _, err := rand.Read(k); err != nil {
			return nil, err
		}
		cm = &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: SnapshotKeyConfigMap,
				Labels: map[string]string{"app.kubernetes.io/name": "perfexp"}},
			BinaryData: map[string][]byte{snapshotKeyField: k},
		}
		err = w.Create(ctx, cm)
		if err == nil {
			return k, nil
		}
		if !apierrors.IsAlreadyExists(err) {
			return nil, fmt.Errorf("creating ConfigMap %s/%s: %w", ns, SnapshotKeyConfigMap, err)
		}
	}
	return nil, fmt.Errorf("ConfigMap %s/%s was created and is gone again", ns, SnapshotKeyConfigMap)
}
