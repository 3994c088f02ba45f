package analysis

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/perfexp/perfexp/internal/result"
)

// ranLimits are the limits one container of one pod ran with, as the node saw them. A nil
// limit with its known flag set means the container ran without that limit.
type ranLimits struct {
	cpu, mem           *float64
	cpuKnown, memKnown bool
	source             string
}

// ranLimitsKey names a container of a pod.
type ranLimitsKey struct{ namespace, pod, container string }

// limitSourceCAdvisor and limitSourceKSM name where a container's limits were read.
const (
	limitSourceCAdvisor = "cAdvisor"
	limitSourceKSM      = "kube-state-metrics"
)

// unlimitedMemory is where cAdvisor's memory limit stops being a limit: an unlimited cgroup
// reads as the largest page-aligned int64 (cgroup v1) or "max" (v2); cAdvisor itself reports
// values above 2^62 as 0.
const unlimitedMemory = 1 << 62

// readRanLimits reads the CPU and memory limits every container of the workloads ran with
// during (end-span, end]. The workload's spec at analysis time is not the run's: another
// experiment may have patched it since, or a person edited it. cAdvisor's container_spec_*
// series describe the cgroup each container ran in; kube-state-metrics' resource series the
// pod it ran in, for Prometheus setups that drop container_spec_* (kube-prometheus-stack's
// defaults keep them, some slimmed configurations do not). One instant query reads both: a
// pod's limits do not change over its life, so the largest value in the window is the one.
func readRanLimits(ctx context.Context, q Querier, sel, target, span string, end time.Time) (map[ranLimitsKey]ranLimits, error) {
	part := func(metric, matchers, what string) string {
		return fmt.Sprintf(`label_replace(max by (namespace, pod, container) (max_over_time(%s%s[%s])), "limit", %q, "", "")`, metric, matchers, span, what)
	}
	ksm := func(extra string) string { return "{" + target + `,container!=""` + extra + "}" }
	query := strings.Join([]string{
		part("container_spec_cpu_period", sel, "cpu_period"),
		part("container_spec_cpu_quota", sel, "cpu_quota"),
		part("container_spec_memory_limit_bytes", sel, "memory"),
		part("kube_pod_container_info", ksm(""), "ksm_info"),
		part("kube_pod_container_resource_limits", ksm(`,resource="cpu"`), "ksm_cpu"),
		part("kube_pod_container_resource_limits", ksm(`,resource="memory"`), "ksm_memory"),
	}, " or ")
	vec, err := vector(ctx, q, query, end)
	if err != nil {
		return nil, err
	}
	type raw struct {
		period, quota, mem, ksmCPU, ksmMem *float64
		hasCPU, hasMem, ksmInfo            bool
	}
	raws := map[ranLimitsKey]*raw{}
	for _, s := range vec {
		v := float64(s.Value)
		if !result.Finite(v) {
			continue
		}
		k := ranLimitsKey{string(s.Metric["namespace"]), string(s.Metric["pod"]), string(s.Metric["container"])}
		r := raws[k]
		if r == nil {
			r = &raw{}
			raws[k] = r
		}
		switch s.Metric["limit"] {
		case "cpu_period":
			r.hasCPU, r.period = true, result.Num(v)
		case "cpu_quota":
			r.hasCPU, r.quota = true, result.Num(v)
		case "memory":
			r.hasMem, r.mem = true, result.Num(v)
		case "ksm_info":
			r.ksmInfo = true
		case "ksm_cpu":
			r.ksmCPU = result.Num(v)
		case "ksm_memory":
			r.ksmMem = result.Num(v)
		}
	}
	out := make(map[ranLimitsKey]ranLimits, len(raws))
	for k, r := range raws {
		var l ranLimits
		switch {
		case r.hasCPU:
			// cAdvisor exports a quota only when one is set; a period alone is no limit.
			l.cpuKnown, l.source = true, limitSourceCAdvisor
			if r.quota != nil && r.period != nil && *r.quota > 0 && *r.period > 0 {
				l.cpu = result.Num(*r.quota / *r.period)
			}
		case r.ksmInfo:
			l.cpuKnown, l.source, l.cpu = true, limitSourceKSM, r.ksmCPU
		}
		switch {
		case r.hasMem:
			l.memKnown, l.source = true, limitSourceCAdvisor
			if *r.mem > 0 && *r.mem < unlimitedMemory {
				l.mem = r.mem
			}
		case r.ksmInfo:
			l.memKnown, l.mem = true, r.ksmMem
			if l.source == "" {
				l.source = limitSourceKSM
			}
		}
		if l.cpuKnown || l.memKnown {
			out[k] = l
		}
	}
	return out, nil
}

// ranWith returns the container's spec with the limits it ran with in this pod, and records
// them for the workload's coverage ("no limit on ...") when the container is the template's.
func (d *workloadData) ranWith(s *workloadSeries, spec Container, namespace, pod string, inTemplate bool) Container {
	l, ok := d.ranLimits[ranLimitsKey{namespace, pod, spec.Name}]
	if l.cpuKnown {
		spec.CPULimit = l.cpu
	}
	if l.memKnown {
		spec.MemoryLimit = l.mem
	}
	if !inTemplate {
		return spec
	}
	if !ok || !l.cpuKnown || !l.memKnown {
		s.specLimits[spec.Name] = true
	}
	if s.ran[spec.Name] == nil {
		s.ran[spec.Name] = map[string]Container{}
	}
	s.ran[spec.Name][pod] = spec
	return spec
}

// ranContainers are the workload's containers with the limits they ran with in the pods
// seen: a limit counts only when every pod had it, as a share of a limit some replicas did not
// have would mislead. A template container that never ran in the window keeps its spec.
func (d *workloadData) ranContainers(i int) []Container {
	w, s := d.workloads[i], d.series[i]
	var names []string
	for _, c := range w.Containers {
		names = append(names, c.Name)
	}
	if len(names) == 0 {
		for n := range s.ran {
			names = append(names, n)
		}
		sort.Strings(names)
	}
	cs := make([]Container, 0, len(names))
	for _, n := range names {
		spec, _ := w.lookup(n)
		if pods := s.ran[n]; len(pods) > 0 {
			spec.CPULimit, spec.MemoryLimit = ptr1(), ptr1()
			for _, p := range pods {
				if p.CPULimit == nil {
					spec.CPULimit = nil
				}
				if p.MemoryLimit == nil {
					spec.MemoryLimit = nil
				}
			}
		}
		cs = append(cs, spec)
	}
	return cs
}

// ptr1 marks a limit as set; only its presence is read.
func ptr1() *float64 { v := 1.0; return &v }

// specLimitsNote names the workloads whose limits, for some container, could only be read from
// their spec at analysis time, which may differ from the run's.
func (d *workloadData) specLimitsNote() string {
	var names []string
	for i, w := range d.workloads {
		if len(d.series[i].specLimits) > 0 {
			names = append(names, w.Name)
		}
	}
	if len(names) == 0 {
		return ""
	}
	sort.Strings(names)
	return fmt.Sprintf("the limits of %s were read from the workloads' specs at analysis time (Prometheus has neither cAdvisor's container_spec_* nor kube-state-metrics' resource series for their pods); a change made since the run would show", result.ShortList(names, 10))
}
