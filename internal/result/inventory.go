package result

import perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"

// The environment inventory: what every observed and touched workload ran with during the
// measured window (recorded by the controller once the window starts, after the variant is
// applied). Comparing two runs' inventories names what else differed between them beside the
// variant: a confound.

// WorkloadInventory is one workload as it ran: its replicas, its containers and the nodes its
// pods ran on.
type WorkloadInventory struct {
	Kind      string `json:"kind"`
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	// Replicas is spec.replicas; nil when the workload was not found.
	Replicas *int32 `json:"replicas,omitempty"`
	// Nodes are the distinct nodes its running pods were on, sorted.
	Nodes []string `json:"nodes,omitempty"`
	// Containers of the pod template, in its order (init containers are left out).
	Containers []ContainerInventory `json:"containers,omitempty"`
	// Declared are the inventory fields the run's own variant changed on this workload (see
	// internal/variant.DeclaredFields: "replicas", "image/api", "env/api/GOGC", "resources/api",
	// "container/api", "nodes", or "*" for the whole pod template): differences there are the
	// variant's, not confounds.
	Declared []string `json:"declared,omitempty"`
	// Missing says why the workload could not be read (not found), so it is not compared.
	Missing string `json:"missing,omitempty"`
}

// Ref is the workload's "Kind/namespace/name", as MetricComparison.Workload names it.
func (w *WorkloadInventory) Ref() string { return w.Kind + "/" + w.Namespace + "/" + w.Name }

// ContainerInventory is one container of a pod template.
type ContainerInventory struct {
	Name  string `json:"name"`
	Image string `json:"image"`
	// Requests and Limits are the resources as quantities ("500m", "256Mi").
	Requests map[string]string `json:"requests,omitempty"`
	Limits   map[string]string `json:"limits,omitempty"`
	// Env are the container's env vars in order; a value from a Secret or ConfigMap is kept by
	// reference only (From), never its value.
	Env []EnvVar `json:"env,omitempty"`
	// EnvDropped counts env vars left out to keep the record bounded.
	EnvDropped int `json:"envDropped,omitempty"`
}

// EnvVar is one env var: its literal value, or where the value comes from.
type EnvVar struct {
	Name  string `json:"name"`
	Value string `json:"value,omitempty"`
	// From is "secret NAME/KEY", "configMap NAME/KEY", "field PATH" or "resource NAME" for a
	// valueFrom; the value itself is not read.
	From string `json:"from,omitempty"`
}

// Confound is one difference between the baseline's and the run's environments that the
// declared variant does not explain.
type Confound struct {
	// Workload is "Kind/namespace/name".
	Workload string `json:"workload"`
	// Field is what differs: "image/api", "env/api/LOG_LEVEL", "resources/api/limits.cpu",
	// "replicas", "nodes", "container/api" (present on one side only), "workload" (observed on
	// one side only).
	Field string `json:"field"`
	// Baseline and Run are the two values; empty for absent.
	Baseline string `json:"baseline"`
	Run      string `json:"run"`
}

// Finding is one sentence at the top of a report, backed by a row of the report.
type Finding struct {
	// Kind is one of the Finding* kinds.
	Kind string `json:"kind"`
	// Text is the sentence, never stronger than the row's interval.
	Text string `json:"text"`
	// Row names the report's row that backs it: a table and the row's name
	// ("Services: CPU / Deployment/shop/api").
	Row string `json:"row,omitempty"`
}

// The kinds of findings.
const (
	FindingHotSpot     = "HotSpot"
	FindingMover       = "Mover"
	FindingCostPerLoad = "CPUPerRequests"
	FindingUneven      = "UnevenLoad"
	FindingEnvironment = "Environment"
	// FindingRoute is a route's server-side latency that moved against the baseline.
	FindingRoute = "Route"
	// FindingWarmUp is the warm-up's latency beside the measured window's, or a cold start
	// the measured window still held.
	FindingWarmUp = "WarmUp"
)

// InventoryFrom is a recorded inventory (status.inventory) as the results hold it; nil when
// none was recorded.
func InventoryFrom(inv *perfexpv1alpha1.Inventory) []WorkloadInventory {
	if inv == nil {
		return nil
	}
	out := make([]WorkloadInventory, 0, len(inv.Workloads))
	for _, w := range inv.Workloads {
		r := WorkloadInventory{Kind: w.Kind, Namespace: w.Namespace, Name: w.Name, Replicas: w.Replicas, Nodes: w.Nodes, Declared: w.Declared, Missing: w.Missing}
		for _, c := range w.Containers {
			rc := ContainerInventory{Name: c.Name, Image: c.Image, Requests: c.Requests, Limits: c.Limits, EnvDropped: int(c.EnvDropped)}
			for _, e := range c.Env {
				rc.Env = append(rc.Env, EnvVar{Name: e.Name, Value: e.Value, From: e.From})
			}
			r.Containers = append(r.Containers, rc)
		}
		out = append(out, r)
	}
	return out
}
