// The dimensions of a sweep's matrix: what each arm varies (environment variables, resources,
// replicas, images, the load).

package v1alpha1

// SweepDimension is one axis of a sweep's matrix: one parameter and the values it takes. Exactly
// one of env, resources, replicas, image and load is set.
// +kubebuilder:validation:XValidation:rule="[has(self.env), has(self.resources), has(self.replicas), has(self.image), has(self.load)].filter(x, x).size() == 1",message="a matrix dimension takes exactly one of env, resources, replicas, image or load"
type SweepDimension struct {
	// name of the dimension; arm names are made of it and the values (pool-10, cpu-500m-replicas-2).
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=20
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	// +kubebuilder:validation:XValidation:rule="!self.startsWith('baseline')",message="dimension names starting with baseline are reserved: arm names are made of them"
	Name string `json:"name"`

	// env sets one environment variable to each of its values.
	// +optional
	Env *EnvDimension `json:"env,omitempty"`

	// resources sets one request or limit to each of its values.
	// +optional
	Resources *ResourcesDimension `json:"resources,omitempty"`

	// replicas sets the replica count to each of its values.
	// +optional
	Replicas *ReplicasDimension `json:"replicas,omitempty"`

	// image sets the image of the named containers to each of its values.
	// +optional
	Image *ImageDimension `json:"image,omitempty"`

	// load sets the virtual users or the arrival rate of the load to each of its values (a
	// capacity curve: latency and throughput against load).
	// +optional
	Load *LoadDimension `json:"load,omitempty"`
}

// EnvDimension is an environment variable over values.
type EnvDimension struct {
	WorkloadSelector `json:",inline"`

	// containers to change; empty means every container of the pod template.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=16
	// +kubebuilder:validation:items:MaxLength=63
	Containers []string `json:"containers,omitempty"`

	// variable is the name of the environment variable.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	Variable string `json:"variable"`

	// values the variable takes, one arm each.
	// +required
	// +listType=set
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=16
	// +kubebuilder:validation:items:MaxLength=256
	Values []string `json:"values"`
}

// ResourceTarget says which of a container's resource settings a dimension changes.
// +kubebuilder:validation:Enum=Limit;Request
type ResourceTarget string

// The resource settings a matrix dimension can change.
const (
	ResourceLimit   ResourceTarget = "Limit"
	ResourceRequest ResourceTarget = "Request"
)

// ResourcesDimension is one resource request or limit over values.
// +kubebuilder:validation:XValidation:rule="self.values.all(v, v == 'none' || isQuantity(v))",message="every value of a resources dimension must be a quantity (500m, 1, 512Mi) or none"
type ResourcesDimension struct {
	WorkloadSelector `json:",inline"`

	// containers to change; empty means every container of the pod template.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=16
	// +kubebuilder:validation:items:MaxLength=63
	Containers []string `json:"containers,omitempty"`

	// resource is the resource name.
	// +required
	// +kubebuilder:validation:Enum=cpu;memory
	Resource string `json:"resource"`

	// target is whether the limit (default) or the request changes.
	// +optional
	// +kubebuilder:default=Limit
	Target ResourceTarget `json:"target,omitempty"`

	// values the setting takes, one arm each: quantities, or "none" to remove it (no CPU limit).
	// +required
	// +listType=set
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=16
	// +kubebuilder:validation:items:MaxLength=32
	Values []string `json:"values"`
}

// ReplicasDimension is a replica count over values.
type ReplicasDimension struct {
	WorkloadSelector `json:",inline"`

	// values the replica count takes, one arm each.
	// +required
	// +listType=set
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=16
	// +kubebuilder:validation:items:Minimum=0
	// +kubebuilder:validation:items:Maximum=1000
	Values []int32 `json:"values"`
}

// ImageDimension is a container image over values (release A, release B, ...).
type ImageDimension struct {
	WorkloadSelector `json:",inline"`

	// containers whose image changes.
	// +required
	// +listType=set
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=16
	// +kubebuilder:validation:items:MaxLength=63
	Containers []string `json:"containers"`

	// values are the images, one arm each.
	// +required
	// +listType=set
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=16
	// +kubebuilder:validation:items:MaxLength=512
	Values []string `json:"values"`
}

// LoadParameter is the load setting a load dimension varies.
// +kubebuilder:validation:Enum=VUs;Rate
type LoadParameter string

// The load settings a matrix dimension can vary.
const (
	// LoadVUs varies the virtual users of vus-with-duration scenarios.
	LoadVUs LoadParameter = "VUs"
	// LoadRate varies the iterations per timeUnit of arrivalRate scenarios.
	LoadRate LoadParameter = "Rate"
)

// LoadDimension is the load over values.
type LoadDimension struct {
	// parameter is what varies: VUs or Rate.
	// +required
	Parameter LoadParameter `json:"parameter"`

	// values the parameter takes, one arm each.
	// +required
	// +listType=set
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=16
	// +kubebuilder:validation:items:Minimum=1
	// +kubebuilder:validation:items:Maximum=1000000
	Values []int32 `json:"values"`
}
