package analysis

import (
	"context"
	"fmt"
	"math"
	"regexp"
	"sort"
	"strings"
	"time"

	promv1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
)

// Workload is a workload whose resource use is reported.
type Workload struct {
	Kind      perfexpv1alpha1.WorkloadKind
	Namespace string
	Name      string
	// Touched is true when the variant changed the workload.
	Touched bool
	// Containers are the containers with the resources in force during the run.
	Containers []Container
}

// Container is one container's resources; nil means not set.
type Container struct {
	Name string
	// CPU in cores, memory in bytes.
	CPURequest, CPULimit, MemoryRequest, MemoryLimit *float64
}

// DefaultCAdvisorMatchers select cAdvisor's series as kube-prometheus-stack scrapes them (and
// as the local cluster's Prometheus labels them).
const DefaultCAdvisorMatchers = `job="kubelet",metrics_path="/metrics/cadvisor"`

// Leak verdict thresholds. A working set that grows by at least leakMinGrowthPercent of its
// starting value over the window (and by at least leakMinGrowthBytes) along a line that fits
// (R² >= leakMinR2) is a suspected leak. Below leakMinWindow, warm-up effects (JIT, caches,
// garbage-collector sizing) look like growth, so no verdict is given.
const (
	leakMinWindow        = 30 * time.Minute
	leakMinGrowthPercent = 10.0
	leakMinGrowthBytes   = 1 << 20
	leakMinR2            = 0.6
)

// PodPattern matches the names of a workload's pods: a Deployment's pods are
// <name>-<pod-template-hash>-<suffix>, a StatefulSet's <name>-<ordinal>. Pods that existed
// during the run may be gone by analysis time (the restore rolled them), so pods are matched
// by name rather than listed.
func PodPattern(kind perfexpv1alpha1.WorkloadKind, name string) string {
	if kind == perfexpv1alpha1.WorkloadKindStatefulSet {
		return regexp.QuoteMeta(name) + "-[0-9]+"
	}
	return regexp.QuoteMeta(name) + "-[a-z0-9]+-[a-z0-9]+"
}

// workloadSeries is the per-step use of one workload.
type workloadSeries struct {
	cpu, mem, throttled, periods map[int64]float64
	// capacity per step: sums of the requests and limits of the containers seen at that step.
	cpuReq, cpuLim, memLim map[int64]float64
	pods                   map[string]bool
	containers             map[string]*workloadSeries
	restarts, oom          *int64
	restartsSource         string
}

func newWorkloadSeries() *workloadSeries {
	return &workloadSeries{
		cpu: map[int64]float64{}, mem: map[int64]float64{}, throttled: map[int64]float64{}, periods: map[int64]float64{},
		cpuReq: map[int64]float64{}, cpuLim: map[int64]float64{}, memLim: map[int64]float64{},
		pods: map[string]bool{}, containers: map[string]*workloadSeries{},
	}
}

// workloadData is every workload's use over the measured window.
type workloadData struct {
	workloads []Workload
	series    []*workloadSeries
	matchers  []*regexp.Regexp
	step      time.Duration
}

// workloadStep is the resolution of the range queries: about 300 points per window, at least
// 15 s (a common scrape interval).
func workloadStep(w time.Duration) time.Duration {
	s := (w / 300).Round(time.Second)
	if s < 15*time.Second {
		s = 15 * time.Second
	}
	return s
}

// rateWindow covers at least two scrapes at a 30 s interval.
func rateWindow(step time.Duration) time.Duration {
	if step < time.Minute {
		return time.Minute
	}
	return step
}

func readWorkloads(ctx context.Context, q Querier, cadvisor string, ws []Workload, start, end time.Time) (*workloadData, error) {
	d := &workloadData{workloads: ws, step: workloadStep(end.Sub(start))}
	if len(ws) == 0 {
		return d, nil
	}
	var namespaces, pods []string
	for _, w := range ws {
		namespaces = append(namespaces, w.Namespace)
		p := PodPattern(w.Kind, w.Name)
		pods = append(pods, "(?:"+p+")")
		d.matchers = append(d.matchers, regexp.MustCompile("^(?:"+p+")$"))
		d.series = append(d.series, newWorkloadSeries())
	}
	sort.Strings(pods)
	podRe := strings.Join(dedupe(pods), "|")
	target := fmt.Sprintf("namespace=~%s,pod=~%s", quote(anyOf(namespaces)), quote(podRe))
	sel := fmt.Sprintf("{%s,container!=\"\",container!=\"POD\",%s}", cadvisor, target)
	rw := promDuration(rateWindow(d.step))
	w := end.Sub(start)
	first := start.Add(min(rateWindow(d.step), w))
	r := promv1.Range{Start: first, End: end, Step: d.step}
	by := "sum by (namespace, pod, container)"

	type rq struct {
		query        string
		into         func(*workloadSeries) map[int64]float64
		isCPU, isMem bool
	}
	for _, x := range []rq{
		{fmt.Sprintf("%s (rate(container_cpu_usage_seconds_total%s[%s]))", by, sel, rw), func(s *workloadSeries) map[int64]float64 { return s.cpu }, true, false},
		{fmt.Sprintf("%s (container_memory_working_set_bytes%s)", by, sel), func(s *workloadSeries) map[int64]float64 { return s.mem }, false, true},
		{fmt.Sprintf("%s (rate(container_cpu_cfs_throttled_periods_total%s[%s]))", by, sel, rw), func(s *workloadSeries) map[int64]float64 { return s.throttled }, false, false},
		{fmt.Sprintf("%s (rate(container_cpu_cfs_periods_total%s[%s]))", by, sel, rw), func(s *workloadSeries) map[int64]float64 { return s.periods }, false, false},
	} {
		m, err := rangeMatrix(ctx, q, x.query, r)
		if err != nil {
			return nil, err
		}
		for _, ss := range m {
			i, ctr := d.owner(ss.Metric)
			if i < 0 {
				continue
			}
			s := d.series[i]
			s.pods[string(ss.Metric["pod"])] = true
			c := s.containers[ctr]
			if c == nil {
				c = newWorkloadSeries()
				s.containers[ctr] = c
			}
			spec := d.workloads[i].container(ctr)
			for _, p := range ss.Values {
				v := float64(p.Value)
				if !finite(v) {
					continue
				}
				ts := int64(p.Timestamp)
				x.into(s)[ts] += v
				x.into(c)[ts] += v
				if x.isCPU {
					addCapacity(s, c, ts, spec.CPURequest, spec.CPULimit, nil)
				}
				if x.isMem {
					addCapacity(s, c, ts, nil, nil, spec.MemoryLimit)
				}
			}
		}
	}

	span := promDuration(w)
	counts := func(query string, apply func(s *workloadSeries, v int64)) error {
		vec, err := vector(ctx, q, query, end)
		if err != nil {
			return err
		}
		for _, smp := range vec {
			i, _ := d.owner(smp.Metric)
			if i < 0 || !finite(float64(smp.Value)) {
				continue
			}
			apply(d.series[i], int64(math.Round(float64(smp.Value))))
		}
		return nil
	}
	// Restarts: kube-state-metrics' counter when it is there; else cAdvisor, where every
	// container instance (a restart makes a new one) is a series of its own.
	ksm := fmt.Sprintf("sum by (namespace, pod, container) (max_over_time(kube_pod_container_status_restarts_total{%s}[%s]) - min_over_time(kube_pod_container_status_restarts_total{%s}[%s]))", target, span, target, span)
	if err := counts(ksm, func(s *workloadSeries, v int64) { s.addRestarts(v, "kube-state-metrics") }); err != nil {
		return nil, err
	}
	instances := fmt.Sprintf("count by (namespace, pod, container) (max_over_time(container_start_time_seconds%s[%s]))", sel, span)
	if err := counts(instances, func(s *workloadSeries, v int64) {
		if s.restartsSource == "kube-state-metrics" {
			return
		}
		s.addRestarts(max(v-1, 0), "cAdvisor container instances")
	}); err != nil {
		return nil, err
	}
	// OOM kills: cAdvisor counts them per container instance; what grew during the window.
	oom := fmt.Sprintf("sum by (namespace, pod, container) (max_over_time(container_oom_events_total%s[%s]) - min_over_time(container_oom_events_total%s[%s]))", sel, span, sel, span)
	if err := counts(oom, func(s *workloadSeries, v int64) {
		if s.oom == nil {
			s.oom = count(0)
		}
		*s.oom += v
	}); err != nil {
		return nil, err
	}
	return d, nil
}

func (s *workloadSeries) addRestarts(v int64, source string) {
	if s.restartsSource != "" && s.restartsSource != source {
		return
	}
	if s.restarts == nil {
		s.restarts = count(0)
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

func (w Workload) container(name string) Container {
	for _, c := range w.Containers {
		if c.Name == name {
			return c
		}
	}
	return Container{Name: name}
}

// results computes each workload's result between a and b (inclusive), with the memory trend
// when trend is set.
func (d *workloadData) results(a, b time.Time, trend bool) []WorkloadResult {
	out := make([]WorkloadResult, 0, len(d.workloads))
	for i, w := range d.workloads {
		s := d.series[i]
		wr := WorkloadResult{Kind: string(w.Kind), Namespace: w.Namespace, Name: w.Name, Touched: w.Touched, Pods: len(s.pods)}
		u := s.usage(a, b)
		wr.CPUAvg, wr.CPUMax, wr.MemoryAvg, wr.MemoryMax, wr.CPUThrottledPercent = u.cpuAvg, u.cpuMax, u.memAvg, u.memMax, u.throttled
		wr.CPURequest, wr.CPUPercentOfRequest, wr.CPURequestNote = share(u.cpuAvg, u.cpuReq, w.allSet(func(c Container) *float64 { return c.CPURequest }), "request")
		wr.CPULimit, wr.CPUPercentOfLimit, wr.CPULimitNote = share(u.cpuAvg, u.cpuLim, w.allSet(func(c Container) *float64 { return c.CPULimit }), "limit")
		wr.MemoryLimit, _, wr.MemoryLimitNote = share(u.memMax, u.memLim, w.allSet(func(c Container) *float64 { return c.MemoryLimit }), "limit")
		if wr.MemoryLimitNote == "" {
			wr.MemoryPercentOfLimit = u.memPeakShare
		}
		if trend {
			wr.Restarts, wr.RestartsSource, wr.OOMKills = s.restarts, s.restartsSource, s.oom
			wr.MemoryGrowthPerHour, wr.MemoryGrowthR2, wr.Leak = leak(s.mem, a, b)
		}
		names := make([]string, 0, len(s.containers))
		for n := range s.containers {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			cu := s.containers[n].usage(a, b)
			spec := w.container(n)
			c := ContainerUsage{Name: n, CPUAvg: cu.cpuAvg, CPUMax: cu.cpuMax, CPURequest: cu.cpuReq, CPULimit: cu.cpuLim,
				CPUThrottledPercent: cu.throttled, MemoryAvg: cu.memAvg, MemoryMax: cu.memMax, MemoryLimit: cu.memLim}
			if spec.CPULimit != nil && cu.cpuAvg != nil && cu.cpuLim != nil && *cu.cpuLim > 0 {
				c.CPUPercentOfLimit = num(100 * *cu.cpuAvg / *cu.cpuLim)
			}
			if spec.MemoryLimit != nil {
				c.MemoryPercentOfLimit = cu.memPeakShare
			}
			wr.Containers = append(wr.Containers, c)
		}
		out = append(out, wr)
	}
	return out
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
	return capacity, num(100 * *use / *capacity), ""
}

type usage struct {
	cpuAvg, cpuMax, memAvg, memMax, throttled *float64
	cpuReq, cpuLim, memLim                    *float64
	memPeakShare                              *float64
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
		return num(sum / float64(n)), num(mx)
	}
	var u usage
	u.cpuAvg, u.cpuMax = meanMax(s.cpu)
	u.memAvg, u.memMax = meanMax(s.mem)
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
		u.throttled = num(100 * thr / per)
	}
	var peak float64
	found := false
	for ts, v := range s.mem {
		if l := s.memLim[ts]; in(ts) && l > 0 {
			if sh := 100 * v / l; !found || sh > peak {
				peak, found = sh, true
			}
		}
	}
	if found {
		u.memPeakShare = num(peak)
	}
	return u
}

// leak fits a line to the working set: least squares, by hand because it is four sums and no
// statistics library here offers a fit that also reports R².
func leak(mem map[int64]float64, a, b time.Time) (*float64, *float64, string) {
	lo, hi := int64(model.TimeFromUnixNano(a.UnixNano())), int64(model.TimeFromUnixNano(b.UnixNano()))
	var xs, ys []float64
	for ts, v := range mem {
		if ts >= lo && ts <= hi {
			xs = append(xs, float64(ts-lo)/1000/3600)
			ys = append(ys, v)
		}
	}
	if len(xs) < 3 {
		if b.Sub(a) < leakMinWindow {
			return nil, nil, LeakWindowTooShort
		}
		return nil, nil, ""
	}
	slope, intercept, r2 := linearFit(xs, ys)
	verdict := LeakNone
	growth := slope * b.Sub(a).Hours()
	switch {
	case b.Sub(a) < leakMinWindow:
		verdict = LeakWindowTooShort
	case intercept > 0 && growth >= leakMinGrowthBytes && 100*growth/intercept >= leakMinGrowthPercent && r2 >= leakMinR2:
		verdict = LeakSuspected
	}
	return num(slope), num(r2), verdict
}
