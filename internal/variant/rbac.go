package variant

// Permissions for reading what a variant changes and for telling why a rollout stalls. The
// right to patch is not here: it is the ClusterRole perfexp-environment-patch
// (config/rbac/environment_patch_role.yaml), which an administrator binds cluster-wide on a
// single-tenant cluster or per namespace under test with RoleBindings (config/rbac/namespaced,
// docs/security.md). Generic patches of other kinds need rights granted the same way
// (config/rbac/optional), never by a wildcard here.
//
// +kubebuilder:rbac:groups=apps,resources=deployments;statefulsets,verbs=get;list;watch
// +kubebuilder:rbac:groups=apps,resources=replicasets,verbs=get;list;watch
// +kubebuilder:rbac:groups="",resources=pods,verbs=get;list;watch
// +kubebuilder:rbac:groups=autoscaling,resources=horizontalpodautoscalers,verbs=get;list;watch
// +kubebuilder:rbac:groups=kafka.strimzi.io,resources=kafkas,verbs=get;list;watch
//
// The orphan janitor (orphans.go) lists the generic patch kinds' metadata to find the objects
// an experiment that is gone left patched, and every experiment lists them in its target
// namespace (others.go) to find another experiment's patch still in force: list on every kind a
// variant can patch (ConfigMaps are in the manager's role for reports and scripts, the others
// here; the optional kinds' rights are config/rbac/optional's). Reading a Service is patching's
// prerequisite anyway.
//
// +kubebuilder:rbac:groups="",resources=services,verbs=get;list
