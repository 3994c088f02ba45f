package report

import (
	"fmt"

	"github.com/perfexp/perfexp/internal/result"
)

// runners lists what each k6 pod used (for sizing the runner pods) and the node's load outside
// the experiment, when they were read.
func (m *markdown) runners(rs []result.RunnerUse, node *result.NodeLoad) {
	if len(rs) == 0 && node == nil {
		return
	}
	m.printf("## Load generators and node\n\n")
	if len(rs) > 0 {
		m.printf("What each k6 pod used over the measured window (cAdvisor; cores, and the highest working set). " +
			"A runner throttled in 10 %% or more of its CPU periods waited itself, and its latencies hold that wait.\n\n")
		m.printf("| k6 pod | CPU avg | CPU max | Memory max | Throttled %% |\n|---|---:|---:|---:|---:|\n")
		for _, u := range rs {
			th := noLimit
			if u.ThrottledPercent != nil {
				th = fmt.Sprintf("%.1f", *u.ThrottledPercent)
			}
			mem := u.MemoryMax
			m.printf("| %s | %.3f | %.3f | %s | %s |\n", cell(u.Pod), u.CPUAvg, u.CPUMax, mib(&mem), th)
		}
		m.printf("\n")
	}
	if node != nil {
		m.printf("Node %s (read from the %s): %s; this experiment's own use there %.2f cores.\n\n", cell(node.Node), node.Source, node, node.OwnCores)
	}
}

// noLimit stands in a table cell for a resource limit that is not set.
const noLimit = "no limit"
