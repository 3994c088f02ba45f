package variant

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
)

// Strimzi's Kafka kind, read and patched through the unstructured client so perfexp needs no
// Strimzi Go module (and works with whatever fields a Strimzi release adds).
var kafkaGVK = schema.GroupVersionKind{Group: "kafka.strimzi.io", Version: "v1beta2", Kind: "Kafka"}

const (
	// kraftAnnotation selects a Strimzi Kafka cluster's metadata mode.
	kraftAnnotation = "strimzi.io/kraft"
	// defaultBootstrapEnv is the variable the bootstrap switch sets when none is named.
	defaultBootstrapEnv = "KAFKA_BOOTSTRAP_SERVERS"
	// defaultListener is the Strimzi listener whose address fromKafka reads when none is named.
	defaultListener = "plain"
)

// expectedMetadataState is the status.kafkaMetadataState a Strimzi Kafka reaches once it
// acted on the annotation value. Strimzi moves through ZooKeeper, KRaftMigration,
// KRaftDualWriting, KRaftPostMigration, PreKRaft and KRaft; "migration" and "rollback" both
// come to rest in KRaftDualWriting.
func expectedMetadataState(sw *perfexpv1alpha1.StrimziModeSwitch) string {
	if sw.ExpectedMetadataState != "" {
		return sw.ExpectedMetadataState
	}
	switch sw.KRaft {
	case "enabled":
		return "KRaft"
	case "disabled":
		return "ZooKeeper"
	default:
		return "KRaftDualWriting"
	}
}

// metadataState reads status.kafkaMetadataState.
func metadataState(u *unstructured.Unstructured) string {
	s, _, _ := unstructured.NestedString(u.Object, "status", "kafkaMetadataState")
	return s
}

// listenerAddress reads the bootstrap address of one listener from a Kafka's status. Strimzi
// names listeners in status.listeners[].name; releases before 0.25 used .type instead.
func listenerAddress(u *unstructured.Unstructured, listener string) (string, bool) {
	listeners, _, _ := unstructured.NestedSlice(u.Object, "status", "listeners")
	for _, l := range listeners {
		m, ok := l.(map[string]any)
		if !ok {
			continue
		}
		name, _ := m["name"].(string)
		if name == "" {
			name, _ = m["type"].(string)
		}
		if name != listener {
			continue
		}
		if addr, _ := m["bootstrapServers"].(string); addr != "" {
			return addr, true
		}
	}
	return "", false
}
