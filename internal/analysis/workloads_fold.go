// Folding what readWorkloads read into results: per-pod and per-workload use over time, the
// capacity (requests and limits) in force, restarts, and each workload's share of its limits;
// listed workloads beyond the cap are summed, never dropped.

package analysis

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/prometheus/common/model"

	judgehistory "github.com/perfexp/perfexp/internal/judge/history"
	"github.com/perfexp/perfexp/internal/result"
)

// seriesKind says which capacity and per-pod use a range query's values feed.
type seriesKind int

const (
	kindOther seriesKind = iota
	kindCPU
	kindMemory
	kindMemoryPeak
)

// add files one series of a range query under its workload and container.
func (d *workloadData) add(ss *model.SampleStream, kind seriesKind, into func(*workloadSeries) map[int64]float64) {
	i, ctr := d.owner(ss.Metric)
	if i < 0 {
		return
	}
	s := d.series[i]
	podName := string(ss.Metric["pod"])
	s.pods[podName] = true
	c := s.containers[ctr]
	if c == nil {
		c = newWorkloadSeries()
		s.containers[ctr] = c
	}
	c.pods[podName] = true
	spec, inTemplate := d.workloads[i].lookup(ctr)
	if !inTemplate && len(d.workloads[i].Containers) > 0 {
		s.sidecars[ctr] = true
	}
	// A workload whose spec is unknown (deleted since the run) has no sidecars to tell apart:
	// every container is its own.
	inTemplate = inTemplate || len(d.workloads[i].Containers) == 0
	spec = d.ranWith(s, spec, string(ss.Metric["namespace"]), podName, inTemplate)
	for _, p := range ss.Values {
		v := float64(p.Value)
		if !result.Finite(v) {
			continue
		}
		ts := int64(p.Timestamp)
		into(s)[ts] += v
		into(c)[ts] += v
		if kind == kindCPU || kind == kindMemory {
			for _, t := range []*workloadSeries{s, c} {
				if t.podsAt[ts] == nil {
					t.podsAt[ts] = map[string]bool{}
				}
				t.podsAt[ts][podName] = true
			}
		}
		switch kind {
		case kindCPU:
			addCapacity(s, c, ts, spec.CPURequest, spec.CPULimit, nil)
			if inTemplate {
				s.pod(podName).add(ts, v, 0, spec.CPULimit, nil)
			}
			c.pod(podName).add(ts, v, 0, spec.CPULimit, nil)
		case kindMemory:
			addCapacity(s, c, ts, nil, nil, spec.MemoryLimit)
			if s.podMem[podName] == nil {
				s.podMem[podName] = map[int64]float64{}
			}
			s.podMem[podName][ts] += v
		case kindMemoryPeak:
			if inTemplate {
				s.pod(podName).add(ts, 0, v, nil, spec.MemoryLimit)
			}
			c.pod(podName).add(ts, 0, v, nil, spec.MemoryLimit)
		}
	}
}

func (p *podUse) add(ts int64, cpu, peak float64, cpuLim, memLim *float64) {
	if cpuLim != nil || cpu != 0 {
		p.cpu[ts] += cpu
	}
	if peak != 0 {
		p.memPeak[ts] += peak
	}
	if cpuLim != nil {
		p.cpuLim[ts] += *cpuLim
	}
	if memLim != nil {
		p.memLim[ts] += *memLim
	}
}

func (s *workloadSeries) addRestarts(v int64, source string) {
	if s.restartsSource != "" && s.restartsSource != source {
		return
	}
	if s.restarts == nil {
		s.restarts = result.Count(0)
	}
	*s.restarts += v
	s.restartsSource = source
}

func addCapacity(s, c *workloadSeries, ts int64, req, lim, memLim *float64) {
	for _, x := range []struct {
		v   *float64
		dst func(*workloadSeries) map[int64]float64
	}{
		{req, func(w *workloadSeries) map[int64]float64 { return w.cpuReq }},
		{lim, func(w *workloadSeries) map[int64]float64 { return w.cpuLim }},
		{memLim, func(w *workloadSeries) map[int64]float64 { return w.memLim }},
	} {
		if x.v != nil {
			x.dst(s)[ts] += *x.v
			x.dst(c)[ts] += *x.v
		}
	}
}

func dedupe(s []string) []string {
	out := s[:0]
	for i, v := range s {
		if i == 0 || v != s[i-1] {
			out = append(out, v)
		}
	}
	return out
}

// owner finds the workload a series belongs to, and its container name.
func (d *workloadData) owner(m model.Metric) (int, string) {
	ns, pod := string(m["namespace"]), string(m["pod"])
	for i, w := range d.workloads {
		if w.Namespace == ns && d.matchers[i].MatchString(pod) {
			return i, string(m["container"])
		}
	}
	return -1, ""
}

// lookup finds a container of the pod template; a name that is not there (a sidecar injected
// at admission) has no resources to count.
func (w Workload) lookup(name string) (Container, bool) {
	for _, c := range w.Containers {
		if c.Name == name {
			return c, true
		}
	}
	return Container{Name: name}, false
}

// results computes each workload's result between a and b (inclusive), with the memory trend
// when trend is set.
func (d *workloadData) results(a, b time.Time, trend bool) []result.WorkloadResult {
	out := make([]result.WorkloadResult, 0, len(d.workloads))
	for i, w := range d.workloads {
		s := d.series[i]
		u := s.usage(a, b)
		ran := Workload{Containers: d.ranContainers(i)}
		wr := result.WorkloadResult{Kind: string(w.Kind), Namespace: w.Namespace, Name: w.Name, Touched: w.Touched, Listed: w.Listed,
			Pods: u.pods, PodsSeen: len(s.pods)}
		wr.CPUAvg, wr.CPUMax, wr.MemoryAvg, wr.MemoryMax, wr.CPUThrottledPercent = u.cpuAvg, u.cpuMax, u.memAvg, u.memMax, u.throttled
		wr.CPURequest, wr.CPUPercentOfRequest, wr.CPURequestNote = share(u.cpuAvg, u.cpuReq, w.allSet(func(c Container) *float64 { return c.CPURequest }), "request")
		wr.CPULimit, _, wr.CPULimitNote = share(u.cpuAvg, u.cpuLim, ran.allSet(func(c Container) *float64 { return c.CPULimit }), "limit")
		if wr.CPULimitNote == "" {
			wr.CPUPercentOfLimit = u.cpuPodShare
		}
		wr.MemoryLimit, _, wr.MemoryLimitNote = share(u.memMax, u.memLim, ran.allSet(func(c Container) *float64 { return c.MemoryLimit }), "limit")
		if wr.MemoryLimitNote == "" {
			wr.MemoryPercentOfLimit = u.memPodShare
		}
		for n := range s.sidecars {
			wr.Sidecars = append(wr.Sidecars, n)
		}
		sort.Strings(wr.Sidecars)
		if trend {
			wr.Restarts, wr.RestartsSource, wr.OOMKills = s.restarts, s.restartsSource, s.oom
			wr.MemoryGrowthPerHour, wr.MemoryTrendZ, wr.Leak = judgehistory.Leak(s.podMem, a, b)
		}
		names := make([]string, 0, len(s.containers))
		for n := range s.containers {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			cu := s.containers[n].usage(a, b)
			spec, _ := ran.lookup(n)
			c := result.ContainerUsage{Name: n, CPUAvg: cu.cpuAvg, CPUMax: cu.cpuMax, CPURequest: cu.cpuReq, CPULimit: cu.cpuLim,
				CPUThrottledPercent: cu.throttled, MemoryAvg: cu.memAvg, MemoryMax: cu.memMax, MemoryLimit: cu.memLim}
			if spec.CPULimit != nil {
				c.CPUPercentOfLimit = cu.cpuPodShare
			}
			if spec.MemoryLimit != nil {
				c.MemoryPercentOfLimit = cu.memPodShare
			}
			wr.Containers = append(wr.Containers, c)
		}
		out = append(out, wr)
	}
	return out
}

// DefaultMaxListedWorkloads is the default Input.MaxListedWorkloads: enough for a namespace
// of services, few enough for the report to fit a ConfigMap.
const DefaultMaxListedWorkloads = 40

// capListed drops listed workloads that had no pods in the window, and keeps at most limit of
// the others: those with the largest share of the listed workloads' CPU or memory, whichever is
// larger, so a memory-heavy database is kept beside a CPU-heavy service. Touched and observed
// workloads are always kept. It returns a note for the report when some were left out.
func (d *workloadData) capListed(a, b time.Time, limit int) string {
	if limit <= 0 {
		limit = DefaultMaxListedWorkloads
	}
	type cand struct {
		i        int
		cpu, mem float64
	}
	var listed []cand
	var totalCPU, totalMem float64
	keep := make([]bool, len(d.workloads))
	for i, w := range d.workloads {
		if !w.Listed {
			keep[i] = true
			continue
		}
		u := d.series[i].usage(a, b)
		if u.cpuAvg == nil && u.memAvg == nil {
			continue
		}
		c := cand{i: i, cpu: result.OrZero(u.cpuAvg), mem: result.OrZero(u.memAvg)}
		totalCPU += c.cpu
		totalMem += c.mem
		listed = append(listed, c)
	}
	weight := func(c cand) float64 {
		var w float64
		if totalCPU > 0 {
			w = c.cpu / totalCPU
		}
		if totalMem > 0 {
			w = max(w, c.mem/totalMem)
		}
		return w
	}
	sort.SliceStable(listed, func(x, y int) bool { return weight(listed[x]) > weight(listed[y]) })
	var left []string
	for n, c := range listed {
		if n < limit {
			keep[c.i] = true
		} else {
			left = append(left, d.workloads[c.i].Name)
		}
	}
	kept := &workloadData{step: d.step, window: d.window}
	for i, k := range keep {
		if k {
			kept.workloads = append(kept.workloads, d.workloads[i])
			kept.series = append(kept.series, d.series[i])
			kept.matchers = append(kept.matchers, d.matchers[i])
		}
	}
	*d = *kept
	if len(left) == 0 {
		return ""
	}
	sort.Strings(left)
	return fmt.Sprintf("%d of the target namespace's %d running workloads are listed (at most %d, the largest by share of CPU or memory); left out: %s",
		limit, len(listed), limit, result.ShortList(left, 20))
}

// coverage says whether all, none or some containers have a resource set.
type coverage struct {
	state   string // all, none, some, unknown
	without []string
}

func (w Workload) allSet(get func(Container) *float64) coverage {
	var without []string
	for _, c := range w.Containers {
		if get(c) == nil {
			without = append(without, c.Name)
		}
	}
	switch {
	case len(w.Containers) == 0:
		return coverage{state: "unknown"}
	case len(without) == 0:
		return coverage{state: "all"}
	case len(without) == len(w.Containers):
		return coverage{state: "none", without: without}
	}
	return coverage{state: "some", without: without}
}

// share divides use by capacity where every container has the resource set; otherwise it says
// "no limit" (or "no request") rather than dividing by zero or by a partial sum.
func share(use, capacity *float64, set coverage, what string) (*float64, *float64, string) {
	switch set.state {
	case "none":
		return nil, nil, "no " + what
	case "some":
		return nil, nil, fmt.Sprintf("no %s on %s", what, strings.Join(set.without, ", "))
	case "unknown":
		return nil, nil, what + " unknown"
	}
	if use == nil || capacity == nil || *capacity <= 0 {
		return capacity, nil, ""
	}
	return capacity, result.Num(100 * *use / *capacity), ""
}

type usage struct {
	cpuAvg, cpuMax, memAvg, memMax, throttled *float64
	cpuReq, cpuLim, memLim                    *float64
	// cpuPodShare and memPodShare are the highest pod's: its mean CPU as a share of its CPU
	// limit, and its highest working set as a share of its memory limit.
	cpuPodShare, memPodShare *float64
	// pods is the most pods with fresh samples at any one step.
	pods int
}

func (s *workloadSeries) usage(a, b time.Time) usage {
	lo, hi := int64(model.TimeFromUnixNano(a.UnixNano())), int64(model.TimeFromUnixNano(b.UnixNano()))
	in := func(ts int64) bool { return ts >= lo && ts <= hi }
	meanMax := func(m map[int64]float64) (*float64, *float64) {
		var sum, mx float64
		n := 0
		for ts, v := range m {
			if !in(ts) {
				continue
			}
			sum += v
			if n == 0 || v > mx {
				mx = v
			}
			n++
		}
		if n == 0 {
			return nil, nil
		}
		return result.Num(sum / float64(n)), result.Num(mx)
	}
	var u usage
	u.cpuAvg, u.cpuMax = meanMax(s.cpu)
	u.memAvg, _ = meanMax(s.mem)
	_, u.memMax = meanMax(s.memPeak)
	u.cpuReq, _ = meanMax(s.cpuReq)
	u.cpuLim, _ = meanMax(s.cpuLim)
	u.memLim, _ = meanMax(s.memLim)
	var thr, per float64
	for ts, v := range s.periods {
		if in(ts) {
			per += v
			thr += s.throttled[ts]
		}
	}
	if per > 0 {
		u.throttled = result.Num(100 * thr / per)
	}
	for ts, p := range s.podsAt {
		if in(ts) {
			u.pods = max(u.pods, len(p))
		}
	}
	for _, p := range s.perPod {
		cpu, _ := meanMax(p.cpu)
		lim, _ := meanMax(p.cpuLim)
		if cpu != nil && lim != nil && *lim > 0 {
			if sh := 100 * *cpu / *lim; u.cpuPodShare == nil || sh > *u.cpuPodShare {
				u.cpuPodShare = result.Num(sh)
			}
		}
		for ts, v := range p.memPeak {
			if l := p.memLim[ts]; in(ts) && l > 0 {
				if sh := 100 * v / l; u.memPodShare == nil || sh > *u.memPodShare {
					u.memPodShare = result.Num(sh)
				}
			}
		}
	}
	return u
}
