package controllers

import (
	"encoding/json"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
)

// objectBudget bounds the JSON of an experiment's spec and status together. etcd refuses
// objects above 1.5 MiB (and the API server requests above that by default); the rest of the
// object (metadata, managedFields, which name every field set) needs room too, so spec and
// status keep to 1 MiB.
const objectBudget = 1 << 20

// statusTrims are what fitStatus leaves out, in order, until the object fits. Each part is
// also in the report ConfigMap or on the patched objects, so leaving it out of status loses
// nothing that restoring or the report needs:
//  1. results.workloads: CPU and memory per workload (in the report);
//  2. comparison.metrics: per-metric changes (in the report; the verdict and its message stay);
//  3. results.scenarios: per-scenario and per-request statistics (in the report);
//  4. inventory.workloads: what the workloads ran with (in the report once analysed; left out
//     before, the comparison says the run recorded no inventory);
//  5. environment.touched[].snapshot: the copies of the snapshots for people (the annotation on
//     each patched object is what restoring reads).
//
// Phase, conditions, window, verdict, the touched objects themselves and the report reference
// are never left out.
var statusTrims = []struct {
	name string
	trim func(*perfexpv1alpha1.PerfExperimentStatus)
}{
	{"results.workloads", func(st *perfexpv1alpha1.PerfExperimentStatus) {
		if st.Results != nil {
			st.Results.Workloads = nil
		}
	}},
	{"comparison.metrics", func(st *perfexpv1alpha1.PerfExperimentStatus) {
		if st.Comparison != nil {
			st.Comparison.Metrics = nil
		}
	}},
	{"results.scenarios", func(st *perfexpv1alpha1.PerfExperimentStatus) {
		if st.Results != nil {
			st.Results.Scenarios = nil
		}
	}},
	{"inventory.workloads", func(st *perfexpv1alpha1.PerfExperimentStatus) {
		if st.Inventory != nil && st.Inventory.Workloads != nil {
			st.Inventory.Dropped += int32(len(st.Inventory.Workloads))
			st.Inventory.Workloads = nil
		}
	}},
	{"environment.touched[].snapshot", func(st *perfexpv1alpha1.PerfExperimentStatus) {
		if st.Environment != nil {
			for i := range st.Environment.Touched {
				st.Environment.Touched[i].Snapshot = ""
			}
		}
	}},
}

// objectSize is the size in bytes of the experiment's spec and status as JSON.
func objectSize(exp *perfexpv1alpha1.PerfExperiment) int {
	spec, err1 := json.Marshal(exp.Spec)
	status, err2 := json.Marshal(exp.Status)
	if err1 != nil || err2 != nil {
		return 0
	}
	return len(spec) + len(status)
}

// fitStatus leaves parts of the status out, in the order of statusTrims, until spec and status
// fit in objectBudget, and names what it left out.
func fitStatus(exp *perfexpv1alpha1.PerfExperiment) []string {
	var trimmed []string
	for _, t := range statusTrims {
		if objectSize(exp) <= objectBudget {
			break
		}
		t.trim(&exp.Status)
		trimmed = append(trimmed, t.name)
	}
	return trimmed
}
