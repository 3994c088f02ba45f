package judge

import (
	"fmt"
	"math"
	"strings"

	"github.com/perfexp/perfexp/internal/result"
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

// NodeSaturatedShare is the share of a node's cores in use, mean over the window, at which the
// node is saturated: its processes queue for CPU, and latency then grows with the queue, far
// beyond any share of the node a neighbour took (a no-op arm measured 20x slower on the demo's
// node at 1.99 of 2 cores busy). A single-run comparison whose either run ran on a saturated
// node claims nothing.
const NodeSaturatedShare = 0.95

// utilisation is the share of a node's cores busy over the window, -1 when the core count is
// unknown.
func utilisation(n *result.NodeLoad) float64 {
	if n == nil || n.Cores <= 0 {
		return -1
	}
	return (n.OtherCores + n.OwnCores) / n.Cores
}

// saturationProblem says why a single-run comparison claims nothing because a run's node was
// CPU-saturated, or "".
func saturationProblem(cur, base *result.NodeLoad) string {
	for _, side := range []struct {
		name string
		n    *result.NodeLoad
	}{{thisRun, cur}, {theBaseline, base}} {
		if u := utilisation(side.n); u >= NodeSaturatedShare {
			return fmt.Sprintf("the node was CPU-saturated during %s (%.2f of its %g cores busy on average): its processes queued for CPU, and latency under a queue grows without a bound one run per side could put on it, so no change is claimed; repeat both (a PerfSweep with repeats) on a node with CPU to spare",
				side.name, side.n.OtherCores+side.n.OwnCores, side.n.Cores)
		}
	}
	return ""
}

// theBaseline and thisRun name the two sides in the sentences that say which side a problem was
// on.
const (
	theBaseline = "the baseline"
	thisRun     = "this run"
)

// nodeLoadBias is how far the node's other work may have moved a single-run comparison, as a
// bound on the log scale: the share of the node's cores the busier run lost to it beyond the
// quieter one (0.26 cores more on 2 cores: up to 13 %), with why; 0 and "" within the limit.
// The comparison widens its intervals by the bound (effect.addBias), so a change far larger
// than what the neighbour could have caused is still claimed.
func nodeLoadBias(cur, base *result.NodeLoad, set float64) (string, float64) {
	if cur == nil || base == nil {
		return "", 0
	}
	maxDiff := maxNodeLoadDifference(set, cur, base)
	d := cur.OtherCores - base.OtherCores
	if math.Abs(d) <= maxDiff {
		return "", 0
	}
	busier, quieter := thisRun, theBaseline
	if d < 0 {
		busier, quieter = theBaseline, thisRun
	}
	cores := max(cur.Cores, base.Cores)
	if cores <= 0 {
		cores = FallbackMaxNodeLoadDifference / DefaultNodeLoadShare
	}
	// The share of the node the busier run lost, and, where the node's utilisation is known,
	// the slowdown a queue for CPU makes of it (a response time grows as 1/(1-utilisation)):
	// whichever is larger bounds what the neighbour could have done.
	bound := math.Log1p(math.Abs(d) / cores)
	if uc, ub := utilisation(cur), utilisation(base); uc >= 0 && ub >= 0 && max(uc, ub) < 1 {
		bound = max(bound, math.Abs(math.Log((1-min(uc, ub))/(1-max(uc, ub)))))
	}
	return fmt.Sprintf("the node was busier with other work during %s (%.2f cores outside the experiment, against %.2f during %s; more than %.2f cores apart): every interval is widened by ±%.1f %% for it, so only a change larger than the neighbour could cause is claimed; repeat both (a PerfSweep with repeats) or run on a quieter node to narrow it",
		busier, math.Max(cur.OtherCores, base.OtherCores), math.Min(cur.OtherCores, base.OtherCores), quieter, maxDiff, 100*math.Expm1(bound)), bound
}

// MinThrottledPercent is the share of CFS periods a workload must be CPU-throttled in, in one
// run, while in the other run it is throttled as much or runs near its limit (NearLimitPercent),
// for a single-run comparison to widen its intervals by ThrottledBetweenRunRatio. Under
// throttling a service's latency is set by when its CPU quota runs out within each 100 ms
// period, and that differs widely from run to run: on the demo, with circulation throttled in
// 19-51 % of its periods at the same CPU use, the baseline read p95 20.2 ms and a control that
// changed nothing relevant 6.3 ms (docs/comparison.md). A variant that lifts the throttling (no
// CPU limit) is still compared: that side is neither throttled nor near a limit.
const MinThrottledPercent = 10.0

// NearLimitPercent is how close to its CPU limit (mean use as a share of the limit, the
// highest pod's) a workload runs when whether it is throttled is itself run-to-run noise: on the
// demo, circulation at 81-89 % of its 250m limit was throttled in 1-27 % of its periods from one
// run of a configuration to the next, and at 90-98 % in 13-73 % (2026-11-29). A control that
// changed nothing relevant read p95 +83.7 % [+11.5, +179.8] against its baseline, throttled in
// 26.7 % of its periods against the baseline's 7.9 % at 84 % of the limit: one run per side
// cannot tell the variant from which side of the knee each run landed on.
const NearLimitPercent = 80.0

// ThrottledBetweenRunRatio is how far apart two runs of one configuration can read when a
// service is CPU-throttled, the largest spread seen on the demo: its baseline and a control that
// changed nothing relevant read p95 20.2 ms and 6.3 ms (3.2x, 2026-11-22); a no-op arm of
// `make demo-aa-one-run` read 23.6 ms against the baseline's 4.96 ms (4.8x, circulation throttled
// in 66.9 % of its periods against 6.5 % at 88 % of its limit, 2026-11-29), and the runs of one
// configuration in a quiet A/A sequential sweep 6 to 35 ms (5.8x, throttled in 13-73 %). A
// single-run comparison of such runs widens its intervals by this ratio, so only a change larger
// than that is claimed.
const ThrottledBetweenRunRatio = 6.0

// throttled says whether a workload was CPU-throttled in at least MinThrottledPercent of its
// periods.
func throttled(w result.WorkloadResult) bool {
	return w.CPUThrottledPercent != nil && *w.CPUThrottledPercent >= MinThrottledPercent
}

// atLimit says whether a workload was throttled or ran near its CPU limit: where its throttling
// may switch on or off from one run to the next.
func atLimit(w result.WorkloadResult) bool {
	return throttled(w) || w.CPUPercentOfLimit != nil && *w.CPUPercentOfLimit >= NearLimitPercent
}

// limitBoundPair says whether one of two runs of a workload was throttled and the other
// throttled or near its limit.
func limitBoundPair(a, b result.WorkloadResult) bool {
	return throttled(a) && atLimit(b) || throttled(b) && atLimit(a)
}

// throttleBias is the bound (log scale) a single-run comparison's intervals are widened by when
// a workload was CPU-throttled in one run and throttled or near its limit in the other, with
// why; 0 and "" otherwise.
func throttleBias(r, base *result.Result) (string, float64) {
	if r == nil || base == nil {
		return "", 0
	}
	var both []string
	for _, w := range r.Workloads {
		for _, bw := range base.Workloads {
			if bw.Namespace != w.Namespace || bw.Name != w.Name || !limitBoundPair(w, bw) {
				continue
			}
			both = append(both, fmt.Sprintf("%s (%s in this run, %s in the baseline)", w.Name, limitState(w), limitState(bw)))
		}
	}
	if len(both) == 0 {
		return "", 0
	}
	return fmt.Sprintf("CPU-throttled, or at its CPU limit, in both runs: %s; a throttled service's latency is set by when its CPU quota runs out, which differs widely from run to run (up to %.0fx between two runs of one configuration on the demo), so every interval is widened by that ratio and only a larger change is claimed: repeat both (a PerfSweep with repeats) or compare without the limit",
		strings.Join(both, ", "), ThrottledBetweenRunRatio), math.Log(ThrottledBetweenRunRatio)
}

// limitState says how throttled a workload was, and how near its limit when it was not
// throttled much.
func limitState(w result.WorkloadResult) string {
	var pct float64
	if w.CPUThrottledPercent != nil {
		pct = *w.CPUThrottledPercent
	}
	if throttled(w) || w.CPUPercentOfLimit == nil {
		return fmt.Sprintf("%.1f %% of its CPU periods throttled", pct)
	}
	return fmt.Sprintf("%.1f %% of its CPU periods throttled at %.0f %% of its CPU limit", pct, *w.CPUPercentOfLimit)
}
