package analysis

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/aclements/go-moremath/stats"
	"github.com/prometheus/common/model"

	"github.com/perfexp/perfexp/internal/judge"
	"github.com/perfexp/perfexp/internal/result"
)

// RunnerThrottledPercent is the share of its CPU periods a k6 pod may be throttled in before
// the report says k6 itself waited (judge.RunnerThrottledPercent, which also decides whether
// dropped iterations were k6's own).
const RunnerThrottledPercent = judge.RunnerThrottledPercent

// NodeSaturatedShare is the share of a node's cores in use, mean over the window, above which
// the report says the node was saturated: k6 and the services then wait for CPU in turn.
const NodeSaturatedShare = judge.NodeSaturatedShare

// maxRunnersListed caps the runner pods listed (the busiest kept).
const maxRunnersListed = 16

// readRunners reads the CPU, memory and throttling of the k6 pods (in.RunnerPods, a pattern of
// pod names in the experiment's namespace) over the measured window.
func readRunners(ctx context.Context, q Querier, in Input, start, end time.Time) ([]result.RunnerUse, error) {
	if in.RunnerPods == "" || !end.After(start) {
		return nil, nil
	}
	cadvisor := in.cadvisorMatchers()
	r, rw := cadvisorRange(start, end)
	sel := fmt.Sprintf(`{%s,namespace=%s,pod=~%s,container!="",container!="POD"}`, cadvisor, quote(in.Namespace), quote(in.RunnerPods))
	queries := []string{
		fmt.Sprintf(`sum by (pod) (rate(container_cpu_usage_seconds_total%s[%s]))`, sel, rw),
		fmt.Sprintf(`sum by (pod) (max_over_time(container_memory_working_set_bytes%s[%s]))`, sel, rw),
	}
	span := promDuration(end.Sub(start))
	throttled := fmt.Sprintf(`sum by (pod) (increase(container_cpu_cfs_throttled_periods_total%s[%s])) / sum by (pod) (increase(container_cpu_cfs_periods_total%s[%s]))`, sel, span, sel, span)
	ms := make([]model.Matrix, len(queries))
	var th model.Vector
	fns := []func() error{func() (err error) { th, err = vector(ctx, q, throttled, end); return err }}
	for i, query := range queries {
		fns = append(fns, func() (err error) { ms[i], err = rangeMatrix(ctx, q, query, r); return err })
	}
	if err := together(fns...); err != nil {
		return nil, err
	}
	byPod := map[string]*result.RunnerUse{}
	get := func(pod string) *result.RunnerUse {
		if byPod[pod] == nil {
			byPod[pod] = &result.RunnerUse{Pod: pod}
		}
		return byPod[pod]
	}
	for _, ss := range ms[0] {
		var xs []float64
		for _, p := range ss.Values {
			if v := float64(p.Value); result.Finite(v) {
				xs = append(xs, v)
			}
		}
		if len(xs) == 0 {
			continue
		}
		u := get(string(ss.Metric["pod"]))
		_, hi := stats.Bounds(xs)
		u.CPUAvg, u.CPUMax = stats.Mean(xs), hi
	}
	for _, ss := range ms[1] {
		u := get(string(ss.Metric["pod"]))
		for _, p := range ss.Values {
			if v := float64(p.Value); result.Finite(v) && v > u.MemoryMax {
				u.MemoryMax = v
			}
		}
	}
	for _, s := range th {
		if v := float64(s.Value); result.Finite(v) {
			get(string(s.Metric["pod"])).ThrottledPercent = result.Num(100 * v)
		}
	}
	out := make([]result.RunnerUse, 0, len(byPod))
	for _, u := range byPod {
		out = append(out, *u)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].CPUAvg != out[j].CPUAvg {
			return out[i].CPUAvg > out[j].CPUAvg
		}
		return out[i].Pod < out[j].Pod
	})
	if len(out) > maxRunnersListed {
		out = out[:maxRunnersListed]
	}
	return out, nil
}

// saturationNotes say when k6 itself, or the whole node, ran out of CPU during the window: the
// latencies then hold time spent waiting for CPU, not only the service's.
func saturationNotes(runners []result.RunnerUse, node *result.NodeLoad) []string {
	var notes, throttled []string
	for _, u := range runners {
		if u.ThrottledPercent != nil && *u.ThrottledPercent >= RunnerThrottledPercent {
			throttled = append(throttled, fmt.Sprintf("%s (%.1f %% of its CPU periods)", u.Pod, *u.ThrottledPercent))
		}
	}
	if len(throttled) > 0 {
		notes = append(notes, fmt.Sprintf("k6 runner pods were CPU-throttled: %s; a throttled runner sends and times its requests late, so the latencies include k6's own wait: give the runners more CPU (the scenario's resources) or more parallelism",
			strings.Join(throttled, ", ")))
	}
	if node != nil && node.Cores > 0 && node.OtherCores+node.OwnCores >= NodeSaturatedShare*node.Cores {
		notes = append(notes, fmt.Sprintf("the node %s was CPU-saturated: %.2f of its %g cores busy on average (%.2f for this experiment); k6 and the services waited for CPU in turn, so the latencies include that wait",
			node.Node, node.OtherCores+node.OwnCores, node.Cores, node.OwnCores))
	}
	return notes
}
