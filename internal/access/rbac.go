package access

// The operator reads a Namespace for its opt-in label, directly from the API server (no
// cluster-wide watch of Namespaces).
//
// +kubebuilder:rbac:groups="",resources=namespaces,verbs=get
