package analysis

import (
	"context"
	"fmt"
	"math"
	"net"
	"sort"
	"strings"
	"time"

	"github.com/aclements/go-moremath/stats"
	"github.com/prometheus/common/model"

	"github.com/perfexp/perfexp/internal/result"
)

// NodeBusyModes are the modes of node_exporter's node_cpu_seconds_total that are not busy: a
// CPU is busy in every other mode (user, nice, system, irq, softirq, steal). iowait is idle time
// with a disk request outstanding; the CPU could run anything else meanwhile.
const NodeBusyModes = `idle|iowait`

// readNodeLoad reads the CPU of the nodes that ran the experiment's containers, and how much of
// it went to anything but the experiment's namespaces. The whole machine's CPU comes from
// node_exporter (node_cpu_seconds_total, what kube-prometheus-stack installs), else from
// cAdvisor's root cgroup, else from the sum of all pods (which cannot see processes outside
// pods). It returns nil (and a note) when cAdvisor has no data for the window: the comparison
// then goes on without the check.
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
		fmt.Sprintf(`sum by (instance, node) (rate(%s{%s,%s,namespace=~%s}[%s]))`, cpu, cadvisor, containers, quote(anyOf(namespaces)), rw),
		// By job too: a node_exporter scraped by two jobs is counted once (the larger).
		fmt.Sprintf(`sum by (job, instance, node) (rate(node_cpu_seconds_total{mode!~%q}[%s]))`, NodeBusyModes, rw),
	}
	ms := make([]model.Matrix, len(queries))
	var cores, exporterCores, uname model.Vector
	window := promDuration(end.Sub(start))
	fns := []func() error{
		func() (err error) {
			cores, err = vector(ctx, q, fmt.Sprintf(`max by (instance) (max_over_time(machine_cpu_cores{%s}[%s]))`, cadvisor, window), end)
			return err
		},
		func() (err error) {
			exporterCores, err = vector(ctx, q, `count by (job, instance, node) (node_cpu_seconds_total{mode="idle"})`, end)
			return err
		},
		func() (err error) {
			uname, err = vector(ctx, q, fmt.Sprintf(`max by (instance, nodename) (last_over_time(node_uname_info[%s]))`, window), end)
			return err
		},
	}
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
	exporters := newExporterIndex(ms[3], exporterCores, uname)
	coresOf := map[string]float64{}
	for _, s := range cores {
		coresOf[string(s.Metric["instance"])] = float64(s.Value)
	}
	nodeOf := map[string]string{}
	for _, s := range ms[2] {
		nodeOf[string(s.Metric["instance"])] = string(s.Metric["node"])
	}
	var best *result.NodeLoad
	matched := 0
	for inst, mine := range own {
		busy, exporterCores, named := exporters.of(inst, nodeOf[inst])
		if named {
			matched++
		}
		nl := otherLoad(mine, []sourced{{result.SourceNodeExporter, busy}, {result.SourceRootCgroup, root[inst]}, {result.SourcePods, pods[inst]}})
		if nl == nil {
			continue
		}
		nl.Node, nl.Cores = inst, coresOf[inst]
		if nl.Cores <= 0 {
			nl.Cores = exporterCores
		}
		if best == nil || nl.OtherCores > best.OtherCores || nl.OtherCores == best.OtherCores && nl.Node < best.Node {
			best = nl
		}
	}
	if best == nil {
		return nil, "the node load is unknown: cAdvisor's node and experiment series have no step in common", nil
	}
	best.Nodes = len(own)
	var note string
	if matched == 0 && len(ms[3]) > 0 {
		note = fmt.Sprintf("node_exporter's CPU series in the window (instances %s) name none of the experiment's nodes (%s), by node name or address: the node load is read from cAdvisor; give node_exporter's targets the node's name (a node or instance label) or its InternalIP",
			strings.Join(exporters.instances(), ", "), strings.Join(sortedKeys(own), ", "))
	}
	return best, note, nil
}

// sourced is one reading of a node's whole CPU over the window, time -> cores.
type sourced struct {
	source string
	all    map[model.Time]float64
}

// otherLoad is the load outside the experiment (mine, time -> cores) on one node, read from the
// first source that has a step in common with it; nil when none has.
func otherLoad(mine map[model.Time]float64, sources []sourced) *result.NodeLoad {
	for _, src := range sources {
		var others []float64
		var ownSum float64
		for ts, v := range mine {
			a, ok := src.all[ts]
			if !ok {
				continue
			}
			others = append(others, math.Max(0, a-v))
			ownSum += v
		}
		if len(others) == 0 {
			continue
		}
		sample := stats.Sample{Xs: others}
		return &result.NodeLoad{Source: src.source, Steps: len(others), OtherCores: sample.Mean(),
			OtherPeakCores: sample.Quantile(0.9), OwnCores: ownSum / float64(len(others))}
	}
	return nil
}

// exporterIndex holds node_exporter's busy CPU per scraped target, and the names each target
// goes by: its instance label, that label's host (a DaemonSet on the host network is scraped at
// the node's InternalIP:9100), its node label where a relabelling set one, and the kernel's
// host name from node_uname_info.
type exporterIndex struct {
	busy  []map[model.Time]float64
	names []map[string]bool
	cores []float64
	inst  []string
}

func newExporterIndex(busy model.Matrix, cores, uname model.Vector) *exporterIndex {
	hostname := map[string][]string{}
	for _, s := range uname {
		if n := string(s.Metric["nodename"]); n != "" {
			inst := string(s.Metric["instance"])
			hostname[inst] = append(hostname[inst], n)
		}
	}
	coresOf := map[string]float64{}
	for _, s := range cores {
		k := exporterKey(s.Metric)
		coresOf[k] = math.Max(coresOf[k], float64(s.Value))
	}
	x := &exporterIndex{}
	for _, ss := range busy {
		inst := string(ss.Metric["instance"])
		names := nameSet(append([]string{inst, hostOf(inst), string(ss.Metric["node"])}, hostname[inst]...))
		at := map[model.Time]float64{}
		for _, p := range ss.Values {
			if v := float64(p.Value); result.Finite(v) {
				at[p.Timestamp] = v
			}
		}
		x.busy, x.names, x.inst = append(x.busy, at), append(x.names, names), append(x.inst, inst)
		x.cores = append(x.cores, coresOf[exporterKey(ss.Metric)])
	}
	return x
}

// of is the busy CPU (time -> cores) of the node cAdvisor calls instance (with node label node),
// the largest of the node_exporter targets that go by one of its names, their core count, and
// whether any target does.
func (x *exporterIndex) of(instance, node string) (map[model.Time]float64, float64, bool) {
	want := []string{instance, hostOf(instance), node}
	out := map[model.Time]float64{}
	var cores float64
	named := false
	for i, names := range x.names {
		if !anyName(names, want) {
			continue
		}
		named = true
		for ts, v := range x.busy[i] {
			if cur, ok := out[ts]; !ok || v > cur {
				out[ts] = v
			}
		}
		cores = math.Max(cores, x.cores[i])
	}
	return out, cores, named
}

// instances lists the node_exporter targets, sorted, each once.
func (x *exporterIndex) instances() []string {
	set := map[string]bool{}
	for _, i := range x.inst {
		set[i] = true
	}
	return sortedKeys(set)
}

// hostOf is the host of an address (host:port), or the address itself when it has no port.
func hostOf(addr string) string {
	if h, _, err := net.SplitHostPort(addr); err == nil {
		return h
	}
	return addr
}

// nameSet is the non-empty names, lower-cased (node names are; host names need not be).
func nameSet(names []string) map[string]bool {
	set := map[string]bool{}
	for _, n := range names {
		if n != "" {
			set[strings.ToLower(n)] = true
		}
	}
	return set
}

func anyName(set map[string]bool, names []string) bool {
	for _, n := range names {
		if n != "" && set[strings.ToLower(n)] {
			return true
		}
	}
	return false
}

// exporterKey identifies a node_exporter target across queries: its job, instance and node.
func exporterKey(m model.Metric) string {
	return string(m["job"]) + "\x00" + string(m["instance"]) + "\x00" + string(m["node"])
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
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
