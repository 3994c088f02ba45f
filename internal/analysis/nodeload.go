package analysis

import (
	"context"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/aclements/go-moremath/stats"
	"github.com/prometheus/common/model"

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

// readNodeLoad reads the CPU of the nodes that ran the experiment's containers, and how much of
// it went to anything but the experiment's namespaces. It returns nil (and a note) when cAdvisor
// has no data for the window: the comparison then goes on without the check.
func readNodeLoad(ctx context.Context, q Querier, in Input, start, end time.Time) (*result.NodeLoad, string, error) {
	if !end.After(start) {
		return nil, "", nil
	}
	cadvisor := in.cadvisorMatchers()
	r, rw := cadvisorRange(start, end)
	namespaces := []string{in.TargetNamespace}
	if in.Namespace != "" {
		namespaces = append(namespaces, in.Namespace)
	}
	const cpu = "container_cpu_usage_seconds_total"
	containers := `container!="",container!="POD"`
	queries := []string{
		fmt.Sprintf(`sum by (instance) (rate(%s{%s,id="/"}[%s]))`, cpu, cadvisor, rw),
		fmt.Sprintf(`sum by (instance) (rate(%s{%s,%s,pod!=""}[%s]))`, cpu, cadvisor, containers, rw),
		fmt.Sprintf(`sum by (instance) (rate(%s{%s,%s,namespace=~%s}[%s]))`, cpu, cadvisor, containers, quote(anyOf(namespaces)), rw),
	}
	ms := make([]model.Matrix, len(queries))
	var cores model.Vector
	fns := []func() error{func() (err error) {
		cores, err = vector(ctx, q, fmt.Sprintf(`max by (instance) (max_over_time(machine_cpu_cores{%s}[%s]))`, cadvisor, promDuration(end.Sub(start))), end)
		return err
	}}
	for i, query := range queries {
		fns = append(fns, func() (err error) { ms[i], err = rangeMatrix(ctx, q, query, r); return err })
	}
	if err := together(fns...); err != nil {
		return nil, "", err
	}
	root, pods, own := byInstance(ms[0]), byInstance(ms[1]), byInstance(ms[2])
	if len(own) == 0 {
		return nil, "the node load is unknown: cAdvisor has no CPU series of the experiment's namespaces in the window", nil
	}
	coresOf := map[string]float64{}
	for _, s := range cores {
		coresOf[string(s.Metric["instance"])] = float64(s.Value)
	}
	var best *result.NodeLoad
	for inst, mine := range own {
		nl := &result.NodeLoad{Source: result.SourceRootCgroup, Node: inst, Cores: coresOf[inst]}
		all := root[inst]
		if len(all) == 0 {
			nl.Source, all = result.SourcePods, pods[inst]
		}
		var others []float64
		var ownSum float64
		for ts, v := range mine {
			a, ok := all[ts]
			if !ok {
				continue
			}
			others = append(others, math.Max(0, a-v))
			ownSum += v
		}
		if len(others) == 0 {
			continue
		}
		nl.Steps = len(others)
		sample := stats.Sample{Xs: others}
		nl.OtherCores, nl.OtherPeakCores = sample.Mean(), sample.Quantile(0.9)
		nl.OwnCores = ownSum / float64(len(others))
		if best == nil || nl.OtherCores > best.OtherCores || nl.OtherCores == best.OtherCores && nl.Node < best.Node {
			best = nl
		}
	}
	if best == nil {
		return nil, "the node load is unknown: cAdvisor's node and experiment series have no step in common", nil
	}
	best.Nodes = len(own)
	return best, "", nil
}

// byInstance files a matrix summed by instance as instance -> time -> value.
func byInstance(m model.Matrix) map[string]map[model.Time]float64 {
	out := map[string]map[model.Time]float64{}
	for _, ss := range m {
		inst := string(ss.Metric["instance"])
		if out[inst] == nil {
			out[inst] = map[model.Time]float64{}
		}
		for _, p := range ss.Values {
			if v := float64(p.Value); result.Finite(v) {
				out[inst][p.Timestamp] += v
			}
		}
	}
	return out
}

// nodeLoadProblem says why a single-run comparison cannot be decided because the node was not
// the same for both runs, or "": the other load of the two runs differs by more than the limit
// (set, in cores, or the default).
func nodeLoadProblem(cur, base *result.NodeLoad, set float64) string {
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

// throttleProblem says why a single-run comparison cannot be decided because a workload was
// CPU-throttled in both runs, or "".
func throttleProblem(r, base *result.Result) string {
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
