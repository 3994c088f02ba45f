package variant

// Permissions for what a variant changes and for telling why a rollout stalls. Generic patches
// may target any namespaced kind; their rights are granted per cluster by the user (see
// docs/variants.md and config/rbac/optional), never by a wildcard here.
//
// +kubebuilder:rbac:groups=apps,resources=deployments;statefulsets,verbs=get;list;watch;patch;update
// +kubebuilder:rbac:groups=apps,resources=replicasets,verbs=get;list;watch
// +kubebuilder:rbac:groups="",resources=pods,verbs=get;list;watch
// +kubebuilder:rbac:groups=kafka.strimzi.io,resources=kafkas,verbs=get;list;watch;patch;update
