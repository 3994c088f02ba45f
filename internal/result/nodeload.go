package result

import (
	"fmt"
)

// NodeLoad is the CPU that the nodes of a run spent on everything but the run: other pods
// (the noisy neighbour of a shared environment), the node's own daemons, a build on the same
// machine. A single run cannot tell such load from the variant's effect, so a single-run
// comparison whose two runs saw very different node load widens its intervals for it, and one
// on a saturated node claims nothing (internal/judge's guards.go).
type NodeLoad struct {
	// Source says how the node's CPU was read: SourceNodeExporter (node_exporter's
	// node_cpu_seconds_total, busy in every mode but idle and iowait: the whole machine, as
	// kube-prometheus-stack installs it), SourceRootCgroup (cAdvisor's id="/" series, the whole
	// machine too; kube-prometheus-stack drops it) or SourcePods (the sum of every pod's
	// containers: processes outside pods are not seen).
	Source string `json:"source"`
	// Node is the instance label of the node with the most other load; Nodes counts the nodes
	// that ran the experiment's containers.
	Node  string `json:"node"`
	Nodes int    `json:"nodes"`
	// Cores is that node's CPU count (cAdvisor's machine_cpu_cores, else node_exporter's CPUs),
	// 0 when unknown.
	Cores float64 `json:"cores,omitempty"`
	// OtherCores is the mean CPU (cores) used on that node outside the experiment's
	// namespaces over the measured window; OtherPeakCores the 90th percentile over its steps.
	OtherCores     float64 `json:"otherCores"`
	OtherPeakCores float64 `json:"otherPeakCores"`
	// OwnCores is the mean CPU of the experiment's namespaces (target and runners) on it.
	OwnCores float64 `json:"ownCores"`
	// Steps is how many evaluation steps had both readings.
	Steps int `json:"steps"`
}

// OtherPercent is the mean other load as a share of the node's cores, or -1 when the core count
// is unknown.
func (n *NodeLoad) OtherPercent() float64 {
	if n == nil || n.Cores <= 0 {
		return -1
	}
	return 100 * n.OtherCores / n.Cores
}

// String is the node load as the report says it: Figure, and when the source cannot see
// processes outside pods, NotSeenOutsidePods.
func (n *NodeLoad) String() string {
	if !n.SeesOutsidePods() {
		return n.Figure() + " (" + NotSeenOutsidePods + ")"
	}
	return n.Figure()
}

// Figure is the load outside the experiment, in cores and as a share of the node.
func (n *NodeLoad) Figure() string {
	if n == nil {
		return "not measured"
	}
	if p := n.OtherPercent(); p >= 0 {
		return fmt.Sprintf("%.2f of %g cores, %.0f %% (90th percentile %.2f), outside the experiment", n.OtherCores, n.Cores, p, n.OtherPeakCores)
	}
	return fmt.Sprintf("%.2f cores (90th percentile %.2f) outside the experiment", n.OtherCores, n.OtherPeakCores)
}

// SeesOutsidePods says whether the source counts processes outside pods (the kubelet, a build
// on the same machine): every source but the sum of pods does.
func (n *NodeLoad) SeesOutsidePods() bool { return n == nil || n.Source != SourcePods }

// NotSeenOutsidePods is the clause the node load's line carries when its source cannot see
// processes outside pods.
const NotSeenOutsidePods = "processes outside pods not seen: no node_exporter or root cgroup series"

// How NodeLoad.Source read the node's CPU, most complete first.
const (
	SourceNodeExporter = "node_exporter CPU counters"
	SourceRootCgroup   = "cAdvisor root cgroup"
	SourcePods         = "sum of all pods"
)
