package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Variant is what an experiment changes in the environment. At least one change is required;
// omit the whole variant for a baseline run.
// +kubebuilder:validation:XValidation:rule="(has(self.workloads) && size(self.workloads) > 0) || has(self.kafka) || (has(self.patches) && size(self.patches) > 0)",message="a variant must change something: set workloads, kafka or patches (omit the variant for a baseline run)"
type Variant struct {
	// description says in a few words what this variant is, for reports ("no CPU limits").
	// +optional
	// +kubebuilder:validation:MaxLength=256
	Description string `json:"description,omitempty"`

	// workloads lists changes to Deployments and StatefulSets in the target namespace. Entries
	// are applied in order; two entries must not change the same field of the same container.
	// +optional
	// +kubebuilder:validation:MaxItems=32
	Workloads []WorkloadChange `json:"workloads,omitempty"`

	// kafka switches the Kafka cluster or mode the environment uses.
	// +optional
	Kafka *KafkaVariant `json:"kafka,omitempty"`

	// patches are an escape hatch: patches on any namespaced object in the target namespace,
	// reverted from a snapshot of the patched paths when the experiment ends.
	// +optional
	// +kubebuilder:validation:MaxItems=16
	Patches []ObjectPatch `json:"patches,omitempty"`
}

// WorkloadKind is a kind of workload perfexp can patch.
// +kubebuilder:validation:Enum=Deployment;StatefulSet
type WorkloadKind string

// The workload kinds perfexp can patch.
const (
	WorkloadKindDeployment  WorkloadKind = "Deployment"
	WorkloadKindStatefulSet WorkloadKind = "StatefulSet"
)

// WorkloadSelector chooses workloads of one kind by name or by label selector.
// `selector: {}` chooses every workload of the kind in the namespace.
// +kubebuilder:validation:XValidation:rule="has(self.names) != has(self.selector)",message="choose workloads either by names or by selector, not both and not neither (selector: {} chooses all)"
type WorkloadSelector struct {
	// kind of the workloads.
	// +optional
	// +kubebuilder:default=Deployment
	Kind WorkloadKind `json:"kind,omitempty"`

	// names of the workloads. Every name must exist when the experiment starts.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=128
	// +kubebuilder:validation:items:MinLength=1
	// +kubebuilder:validation:items:MaxLength=253
	Names []string `json:"names,omitempty"`

	// selector chooses workloads by label; an empty selector ({}) chooses all of the kind.
	// +optional
	Selector *metav1.LabelSelector `json:"selector,omitempty"`
}

// WorkloadChange changes selected containers of selected workloads.
// +kubebuilder:validation:XValidation:rule="has(self.resources) || has(self.env) || has(self.replicas) || has(self.image)",message="a workload change must change something: set resources, env, replicas or image"
// +kubebuilder:validation:XValidation:rule="!has(self.image) || (has(self.containers) && size(self.containers) > 0)",message="image needs containers: name the containers whose image changes"
type WorkloadChange struct {
	WorkloadSelector `json:",inline"`

	// containers names the containers to change; empty means every container of the pod
	// template (init containers are never changed).
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=16
	// +kubebuilder:validation:items:MaxLength=63
	Containers []string `json:"containers,omitempty"`

	// resources sets, changes or removes resource requests and limits. Removing the CPU limit is
	// how a service runs without a CPU cap.
	// +optional
	Resources *ResourcesChange `json:"resources,omitempty"`

	// env sets or removes environment variables.
	// +optional
	Env *EnvChange `json:"env,omitempty"`

	// replicas sets the number of replicas.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=1000
	Replicas *int32 `json:"replicas,omitempty"`

	// image sets the image of the named containers (release A vs release B).
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	Image string `json:"image,omitempty"`
}

// ResourcesChange sets or removes resource requests and limits of a container.
// +kubebuilder:validation:XValidation:rule="!has(self.limits) || !has(self.removeLimits) || self.removeLimits.all(r, !(r in self.limits))",message="a limit cannot be both set and removed"
// +kubebuilder:validation:XValidation:rule="!has(self.requests) || !has(self.removeRequests) || self.removeRequests.all(r, !(r in self.requests))",message="a request cannot be both set and removed"
// +kubebuilder:validation:XValidation:rule="!has(self.limits) || !('cpu' in self.limits) || !(self.limits['cpu'] == 0 || self.limits['cpu'] in ['0', '+0', '00', '0.0', '0.00', '0.000', '0m', '0n', '0u', '0k', '0Ki', '0M', '0Mi', '0e0'])",message="a CPU limit of 0 is not a limit Kubernetes accepts; to run without a CPU limit (what CPU=0 means on ECS) use removeLimits: [cpu]"
// +kubebuilder:validation:XValidation:rule="(has(self.requests) && size(self.requests) > 0) || (has(self.limits) && size(self.limits) > 0) || (has(self.removeRequests) && size(self.removeRequests) > 0) || (has(self.removeLimits) && size(self.removeLimits) > 0)",message="resources must change something: set requests or limits, or remove some"
type ResourcesChange struct {
	// requests to set, by resource name (cpu, memory, ...).
	// +optional
	Requests corev1.ResourceList `json:"requests,omitempty"`

	// limits to set, by resource name. A CPU limit of 0 is refused: Kubernetes has no "0 means
	// unlimited" (as ECS has for CPU=0); removeLimits: [cpu] is how a container runs uncapped.
	// +optional
	Limits corev1.ResourceList `json:"limits,omitempty"`

	// removeRequests lists the requests to remove.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=8
	RemoveRequests []corev1.ResourceName `json:"removeRequests,omitempty"`

	// removeLimits lists the limits to remove; ["cpu"] runs the container without a CPU limit.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=8
	RemoveLimits []corev1.ResourceName `json:"removeLimits,omitempty"`
}

// EnvChange sets or removes environment variables of a container.
// +kubebuilder:validation:XValidation:rule="!has(self.set) || !has(self.remove) || self.set.all(e, !(e.name in self.remove))",message="an env var cannot be both set and removed in one change"
// +kubebuilder:validation:XValidation:rule="(has(self.set) && size(self.set) > 0) || (has(self.remove) && size(self.remove) > 0)",message="env must set or remove at least one variable"
type EnvChange struct {
	// set adds or replaces variables, with a value or valueFrom.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=64
	Set []EnvVar `json:"set,omitempty"`

	// remove lists the names of variables to remove.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:MaxLength=256
	Remove []string `json:"remove,omitempty"`
}

// EnvVar is an environment variable with a literal value or a value taken from a ConfigMap,
// Secret or field of the pod. It mirrors the commonly used part of core/v1 EnvVar with bounds.
// +kubebuilder:validation:XValidation:rule="!(has(self.value) && has(self.valueFrom))",message="an env var takes value or valueFrom, not both"
type EnvVar struct {
	// name of the variable.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	Name string `json:"name"`

	// value of the variable.
	// +optional
	// +kubebuilder:validation:MaxLength=4096
	Value string `json:"value,omitempty"`

	// valueFrom takes the value from a ConfigMap key, Secret key or pod field.
	// +optional
	ValueFrom *EnvVarSource `json:"valueFrom,omitempty"`
}

// EnvVarSource is where an env var's value comes from; exactly one source is set.
// +kubebuilder:validation:XValidation:rule="[has(self.configMapKeyRef), has(self.secretKeyRef), has(self.fieldRef)].filter(x, x).size() == 1",message="valueFrom takes exactly one of configMapKeyRef, secretKeyRef, fieldRef"
type EnvVarSource struct {
	// configMapKeyRef selects a key of a ConfigMap.
	// +optional
	ConfigMapKeyRef *corev1.ConfigMapKeySelector `json:"configMapKeyRef,omitempty"`
	// secretKeyRef selects a key of a Secret.
	// +optional
	SecretKeyRef *corev1.SecretKeySelector `json:"secretKeyRef,omitempty"`
	// fieldRef selects a field of the pod.
	// +optional
	FieldRef *corev1.ObjectFieldSelector `json:"fieldRef,omitempty"`
}

// KafkaVariant switches Kafka for the experiment: either point workloads at another Kafka
// cluster, or change the mode of a Strimzi Kafka cluster, or both.
// +kubebuilder:validation:XValidation:rule="has(self.bootstrap) || has(self.strimziMode)",message="kafka needs bootstrap or strimziMode"
type KafkaVariant struct {
	// bootstrap points the selected workloads at another Kafka cluster by setting their
	// bootstrap-servers env var.
	// +optional
	Bootstrap *KafkaBootstrapSwitch `json:"bootstrap,omitempty"`

	// strimziMode changes a Strimzi Kafka resource's metadata mode (ZooKeeper or KRaft) through
	// its strimzi.io/kraft annotation and waits for status.kafkaMetadataState to follow.
	// +optional
	StrimziMode *StrimziModeSwitch `json:"strimziMode,omitempty"`
}

// KafkaBootstrapSwitch points workloads at another Kafka cluster.
// +kubebuilder:validation:XValidation:rule="has(self.address) != has(self.fromKafka)",message="bootstrap takes exactly one of address or fromKafka"
type KafkaBootstrapSwitch struct {
	// workloads whose containers get the new bootstrap address.
	// +required
	Workloads WorkloadSelector `json:"workloads"`

	// containers to change; empty means all containers.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=16
	// +kubebuilder:validation:items:MaxLength=63
	Containers []string `json:"containers,omitempty"`

	// envVar is the name of the bootstrap-servers variable the workloads read.
	// +optional
	// +kubebuilder:default=KAFKA_BOOTSTRAP_SERVERS
	// +kubebuilder:validation:MaxLength=256
	EnvVar string `json:"envVar,omitempty"`

	// address is the bootstrap address to set, e.g. "kafka-kraft-bootstrap:9092".
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=1024
	Address string `json:"address,omitempty"`

	// fromKafka reads the address from a Strimzi Kafka resource's status listeners.
	// +optional
	FromKafka *StrimziKafkaRef `json:"fromKafka,omitempty"`
}

// StrimziKafkaRef names a Strimzi Kafka resource and one of its listeners.
type StrimziKafkaRef struct {
	// name of the Kafka resource (kafka.strimzi.io).
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`

	// namespace of the Kafka resource; defaults to the target namespace.
	// +optional
	// +kubebuilder:validation:MaxLength=63
	Namespace string `json:"namespace,omitempty"`

	// listener is the name of the listener whose bootstrapServers to use.
	// +optional
	// +kubebuilder:default=plain
	// +kubebuilder:validation:MaxLength=63
	Listener string `json:"listener,omitempty"`
}

// KRaftMode is a value of Strimzi's strimzi.io/kraft annotation.
// +kubebuilder:validation:Enum=enabled;disabled;migration;rollback
type KRaftMode string

// StrimziModeSwitch changes a Strimzi Kafka resource's metadata mode.
type StrimziModeSwitch struct {
	// name of the Kafka resource (kafka.strimzi.io) in the target namespace.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`

	// kraft is the value to give the strimzi.io/kraft annotation.
	// +required
	KRaft KRaftMode `json:"kraft"`

	// expectedMetadataState is the status.kafkaMetadataState to wait for; defaults to KRaft for
	// kraft=enabled and ZooKeeper for kraft=disabled.
	// +optional
	// +kubebuilder:validation:MaxLength=63
	ExpectedMetadataState string `json:"expectedMetadataState,omitempty"`
}

// PatchType is how an ObjectPatch's content is applied.
// +kubebuilder:validation:Enum=StrategicMerge;Merge;JSON
type PatchType string

// The patch types an ObjectPatch may use.
const (
	PatchTypeStrategicMerge PatchType = "StrategicMerge"
	PatchTypeMerge          PatchType = "Merge"
	PatchTypeJSON           PatchType = "JSON"
)

// ObjectPatch patches one namespaced object for the length of the experiment.
type ObjectPatch struct {
	// target is the object to patch, in the target namespace.
	// +required
	Target ObjectTarget `json:"target"`

	// type of the patch: StrategicMerge (built-in kinds only), Merge (RFC 7386) or JSON (RFC 6902).
	// +optional
	// +kubebuilder:default=StrategicMerge
	Type PatchType `json:"type,omitempty"`

	// patch is the patch document, JSON or YAML.
	// +required
	// +kubebuilder:validation:MinLength=2
	// +kubebuilder:validation:MaxLength=32768
	Patch string `json:"patch"`
}

// ObjectTarget names one namespaced object.
type ObjectTarget struct {
	// apiVersion of the object, e.g. "apps/v1" or "kafka.strimzi.io/v1beta2".
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:XValidation:rule="self.matches('^([a-z0-9]([-a-z0-9]*[a-z0-9])?([.][a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?[a-z0-9]([-a-z0-9]*[a-z0-9])?$')",message="apiVersion is group/version (apps/v1, kafka.strimzi.io/v1beta2) or a version of the core group (v1)"
	APIVersion string `json:"apiVersion"`
	// kind of the object.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	Kind string `json:"kind"`
	// name of the object.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`
}

// EnvironmentStatus records what the variant touched, so it can be put back.
type EnvironmentStatus struct {
	// touched lists every object the variant patched, with the prior value of each touched field.
	// The same record is kept in an annotation on the object itself.
	// +optional
	// +kubebuilder:validation:MaxItems=256
	Touched []TouchedObject `json:"touched,omitempty"`

	// restored is true once every touched object is back as it was and its rollout finished,
	// or the restore bound (spec.timeouts.rollout) ran out after fieldsRestoredAt; the
	// EnvironmentRestored condition then says which workload is still not healthy.
	// +optional
	Restored bool `json:"restored,omitempty"`

	// fieldsRestoredAt is when every touched field was written back; the wait for rollouts
	// that follows is bounded from this time.
	// +optional
	FieldsRestoredAt *metav1.Time `json:"fieldsRestoredAt,omitempty"`

	// rolledOutAt is when Preparing first found every rollout of the variant and of
	// spec.freshPods finished: the run's rolled pods are younger than this.
	// +optional
	RolledOutAt *metav1.Time `json:"rolledOutAt,omitempty"`
}

// TouchedObject is one object the variant patched.
type TouchedObject struct {
	// apiVersion of the object.
	APIVersion string `json:"apiVersion"`
	// kind of the object.
	Kind string `json:"kind"`
	// namespace of the object.
	Namespace string `json:"namespace"`
	// name of the object.
	Name string `json:"name"`
	// snapshot is the prior value of every field the variant touches (JSON), including fields
	// that were absent.
	// +optional
	// +kubebuilder:validation:MaxLength=65536
	Snapshot string `json:"snapshot,omitempty"`
	// patched is true once the variant's patch was applied.
	// +optional
	Patched bool `json:"patched,omitempty"`
	// restored is true once the object was put back.
	// +optional
	Restored bool `json:"restored,omitempty"`
	// containers lists the resources in force for each container during the run, used to report
	// CPU and memory as a share of requests and limits.
	// +optional
	// +kubebuilder:validation:MaxItems=16
	Containers []ContainerResources `json:"containers,omitempty"`
}

// ContainerResources is a container's resources during the run.
type ContainerResources struct {
	// name of the container.
	Name string `json:"name"`
	// requests in force during the run.
	// +optional
	Requests map[corev1.ResourceName]resource.Quantity `json:"requests,omitempty"`
	// limits in force during the run.
	// +optional
	Limits map[corev1.ResourceName]resource.Quantity `json:"limits,omitempty"`
}

// LabelPatchedBy carries, on an object perfexp patched, the UID of the experiment that patched
// it. It lets a restarted operator find every patched workload with one list call even when the
// experiment's status was lost. (AnnotationExperiment, on the same object, names the experiment
// as namespace/name for people.)
const LabelPatchedBy = "perfexp.dev/patched-by"
