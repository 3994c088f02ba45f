package v1alpha1

import (
	"encoding/json"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Inventory is what the touched and observed workloads ran with, read once when the measured
// window began (after the variant was applied and rolled out): a later comparison diffs two
// runs' inventories and names every difference the declared variants do not explain.
type Inventory struct {
	// recordedAt is when it was read.
	RecordedAt metav1.Time `json:"recordedAt"`
	// workloads are the touched workloads, the observed ones and the target namespace's, at
	// most MaxInventoryWorkloads of them.
	// +optional
	// +kubebuilder:validation:MaxItems=64
	Workloads []WorkloadInventory `json:"workloads,omitempty"`
	// dropped counts the workloads left out to keep the record bounded.
	// +optional
	Dropped int32 `json:"dropped,omitempty"`
}

// The bounds of an inventory, so the status stays within its size budget.
const (
	MaxInventoryWorkloads  = 64
	MaxInventoryContainers = 16
	MaxInventoryEnv        = 64
	MaxInventoryValue      = 256
	// MaxInventoryBytes bounds the inventory's JSON: Bound leaves out env vars, then
	// workloads, from the end until it fits.
	MaxInventoryBytes = 192 * 1024
)

// Bound leaves out the env vars of the last workloads (counted in envDropped), then the last
// workloads themselves (counted in dropped), until the inventory's JSON fits MaxInventoryBytes.
func (inv *Inventory) Bound() {
	size := func(w *WorkloadInventory) int {
		b, err := json.Marshal(w)
		if err != nil {
			return 0
		}
		return len(b) + 1
	}
	sizes := make([]int, len(inv.Workloads))
	total := 128 // recordedAt, dropped and the brackets
	for i := range inv.Workloads {
		sizes[i] = size(&inv.Workloads[i])
		total += sizes[i]
	}
	for i := len(inv.Workloads) - 1; i >= 0 && total > MaxInventoryBytes; i-- {
		for j := range inv.Workloads[i].Containers {
			c := &inv.Workloads[i].Containers[j]
			c.EnvDropped += int32(len(c.Env))
			c.Env = nil
		}
		before := sizes[i]
		sizes[i] = size(&inv.Workloads[i])
		total += sizes[i] - before
	}
	for n := len(inv.Workloads); n > 0 && total > MaxInventoryBytes; n-- {
		total -= sizes[n-1]
		inv.Workloads = inv.Workloads[:n-1]
		inv.Dropped++
	}
}

// WorkloadInventory is one workload as it ran.
type WorkloadInventory struct {
	// kind is Deployment or StatefulSet.
	Kind string `json:"kind"`
	// namespace of the workload.
	Namespace string `json:"namespace"`
	// name of the workload.
	Name string `json:"name"`
	// replicas is spec.replicas.
	// +optional
	Replicas *int32 `json:"replicas,omitempty"`
	// nodes are the distinct nodes its running pods were on.
	// +optional
	// +kubebuilder:validation:MaxItems=64
	Nodes []string `json:"nodes,omitempty"`
	// containers of the pod template (init containers left out).
	// +optional
	// +kubebuilder:validation:MaxItems=16
	Containers []ContainerInventory `json:"containers,omitempty"`
	// declared are the fields the run's variant changed on this workload ("replicas",
	// "image/NAME", "env/NAME/VAR", "env/NAME", "resources/NAME", "container/NAME", "nodes",
	// "*" for the whole pod template): differences there are expected.
	// +optional
	// +kubebuilder:validation:MaxItems=64
	Declared []string `json:"declared,omitempty"`
	// missing says why the workload could not be read.
	// +optional
	Missing string `json:"missing,omitempty"`
}

// ContainerInventory is one container of a pod template.
type ContainerInventory struct {
	// name of the container.
	Name string `json:"name"`
	// image of the container.
	Image string `json:"image"`
	// requests are its resource requests as quantities.
	// +optional
	Requests map[string]string `json:"requests,omitempty"`
	// limits are its resource limits as quantities.
	// +optional
	Limits map[string]string `json:"limits,omitempty"`
	// env are its env vars in order, a value from a Secret or ConfigMap by reference only.
	// +optional
	// +kubebuilder:validation:MaxItems=64
	Env []EnvVarInventory `json:"env,omitempty"`
	// envDropped counts the env vars left out to keep the record bounded.
	// +optional
	EnvDropped int32 `json:"envDropped,omitempty"`
}

// EnvVarInventory is one env var: its literal value (at most MaxInventoryValue characters),
// or where it comes from ("secret NAME/KEY", "configMap NAME/KEY", "field PATH",
// "resource NAME"); a Secret's or ConfigMap's value is never read.
type EnvVarInventory struct {
	// name of the env var.
	Name string `json:"name"`
	// value is its literal value.
	// +optional
	Value string `json:"value,omitempty"`
	// from is where a valueFrom takes its value from.
	// +optional
	From string `json:"from,omitempty"`
}
