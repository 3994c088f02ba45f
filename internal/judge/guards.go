package judge

import (
	"fmt"
	"math"
	"strings"

	"github.com/perfexp/perfexp/internal/analysis/result"
)

// DefaultNodeLoadShare and FallbackMaxNodeLoadDifference make the default limit on how far
// apart the other load of the two runs of a single-run comparison may be: a tenth of the node's
// cores, or a quarter of a core when the core count is unknown. On the local 2-core cluster,
// quiet runs were 0.20-0.24 cores apart from each other at most 0.04; a run that started with
// the cluster, and had a build beside it, read 0.44 (docs/comparison.md).
const (
	DefaultNodeLoadShare          = 0.10
	FallbackMaxNodeLoadDifference = 0.25
)

// maxNodeLoadDifference is the limit in force: the setting, else the default for the nodes.
func maxNodeLoadDifference(set float64, cur, base *result.NodeLoad) float64 {
	if set > 0 {
		return set
	}
	if cores := max(cur.Cores, base.Cores); cores > 0 {
		return DefaultNodeLoadShare * cores
	}
	return FallbackMaxNodeLoadDifference
}

// NodeLoadProblem says why a single-run comparison cannot be decided because the node was not
// the same for both runs, or "": the other load of the two runs differs by more than the limit
// (set, in cores, or the default).
func NodeLoadProblem(cur, base *result.NodeLoad, set float64) string {
	if cur == nil || base == nil {
		return ""
	}
	maxDiff := maxNodeLoadDifference(set, cur, base)
	d := cur.OtherCores - base.OtherCores
	if math.Abs(d) <= maxDiff {
		return ""
	}
	busier, quieter := "this run", "the baseline"
	if d < 0 {
		busier, quieter = "the baseline", "this run"
	}
	return fmt.Sprintf("the node was busier with other work during %s (%.2f cores outside the experiment, against %.2f during %s; more than %.2f cores apart): one run per side cannot tell that from the variant's effect, so no change is claimed; repeat both (a PerfSweep with repeats) or run on a quieter node",
		busier, math.Max(cur.OtherCores, base.OtherCores), math.Min(cur.OtherCores, base.OtherCores), quieter, maxDiff)
}

// MinThrottledPercent is the share of CFS periods a workload must be CPU-throttled in, in both
// runs, for a single-run comparison to claim nothing. Under throttling a service's latency is
// set by when its CPU quota runs out within each 100 ms period, and that differs widely from
// run to run: on the demo, with circulation throttled in 19-51 % of its periods at the same CPU
// use, the baseline read p95 20.2 ms and a control that changed nothing relevant 6.3 ms
// (docs/comparison.md). A variant
// that lifts the throttling (no CPU limit) is still compared: one side is not throttled.
const MinThrottledPercent = 10.0

// ThrottleProblem says why a single-run comparison cannot be decided because a workload was
// CPU-throttled in both runs, or "".
func ThrottleProblem(r, base *result.Result) string {
	if r == nil || base == nil {
		return ""
	}
	var both []string
	for _, w := range r.Workloads {
		if w.CPUThrottledPercent == nil || *w.CPUThrottledPercent < MinThrottledPercent {
			continue
		}
		for _, bw := range base.Workloads {
			if bw.Namespace == w.Namespace && bw.Name == w.Name && bw.CPUThrottledPercent != nil && *bw.CPUThrottledPercent >= MinThrottledPercent {
				both = append(both, fmt.Sprintf("%s (%.1f %% of its CPU periods in this run, %.1f %% in the baseline)", w.Name, *w.CPUThrottledPercent, *bw.CPUThrottledPercent))
			}
		}
	}
	if len(both) == 0 {
		return ""
	}
	return fmt.Sprintf("CPU-throttled in both runs: %s; a throttled service's latency is set by when its CPU quota runs out, which differs widely from run to run, so one run per side cannot show a change: repeat both (a PerfSweep with repeats) or compare without the limit",
		strings.Join(both, ", "))
}
