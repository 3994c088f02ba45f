package v1alpha1

import (
	"encoding/json"
	"strings"
	"testing"
)

// A large inventory (64 workloads of 16 containers of 8 long env vars, 2.5 MB) is cut to
// MaxInventoryBytes: the last workloads' env vars go first, counted, and the first workloads
// keep theirs.
func TestInventoryBound(t *testing.T) {
	inv := &Inventory{}
	for range MaxInventoryWorkloads {
		w := WorkloadInventory{Kind: "Deployment", Namespace: "ns", Name: "w"}
		for range MaxInventoryContainers {
			c := ContainerInventory{Name: "c", Image: strings.Repeat("i", 100)}
			for range 8 {
				c.Env = append(c.Env, EnvVarInventory{Name: "V", Value: strings.Repeat("v", MaxInventoryValue)})
			}
			w.Containers = append(w.Containers, c)
		}
		inv.Workloads = append(inv.Workloads, w)
	}
	inv.Bound()
	b, err := json.Marshal(inv)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) > MaxInventoryBytes {
		t.Fatalf("%d bytes, over %d", len(b), MaxInventoryBytes)
	}
	first, last := inv.Workloads[0].Containers[0], inv.Workloads[len(inv.Workloads)-1].Containers[0]
	if len(first.Env) != 8 || first.EnvDropped != 0 || last.Env != nil || last.EnvDropped != 8 {
		t.Fatalf("first container keeps %d env (%d dropped), last %d (%d dropped)", len(first.Env), first.EnvDropped, len(last.Env), last.EnvDropped)
	}
	if int(inv.Dropped)+len(inv.Workloads) != MaxInventoryWorkloads {
		t.Fatalf("%d workloads kept, %d dropped", len(inv.Workloads), inv.Dropped)
	}
}
