package analysis

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/aclements/go-moremath/stats"
	"github.com/prometheus/common/model"

	"github.com/perfexp/perfexp/internal/result"
)

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
