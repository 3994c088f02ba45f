package analysis

import (
	"context"
	"fmt"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	promv1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/analysis/result"
	"github.com/perfexp/perfexp/internal/judge"
)

// Workload is a workload whose resource use is reported.
type Workload struct {
	Kind      perfexpv1alpha1.WorkloadKind
	Namespace string
	Name      string
	// Touched is true when the variant changed the workload.
	Touched bool
	// Listed is true for a workload reported only because it runs in the target namespace
	// (neither touched nor named in analysis.observe); those are capped.
	Listed bool
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

// workloadSeries is the per-step use of one workload (or of one container name of it).
type workloadSeries struct {
	// cpu, mem (the working set at the step) and memPeak (its highest over the rate window)
	// are summed over every container seen, sidecars included.
	cpu, mem, memPeak, throttled, periods map[int64]float64
	// capacity per step: sums of the requests and limits of the containers seen at that step.
	cpuReq, cpuLim, memLim map[int64]float64
	// pods are the pods seen at all; podsAt the pods with a fresh sample at each step.
	pods   map[string]bool
	podsAt map[int64]map[string]bool
	// podMem is each pod's working set (every container), for the leak verdict.
	podMem map[string]map[int64]float64
	// perPod holds each pod's use and capacity for the containers of the pod template, for the
	// highest pod's share of its limit.
	perPod map[string]*podUse
	// sidecars are container names seen in the pods but absent from the pod template
	// (injected by a mutating webhook): their use counts, their limits do not.
	sidecars   map[string]bool
	containers map[string]*workloadSeries
	// ran holds, per template container and pod, the limits it ran with (from ranLimits, or
	// the spec when Prometheus has neither cAdvisor's nor kube-state-metrics' series).
	ran map[string]map[string]Container
	// specLimits names the containers whose limits came from the spec at analysis time.
	specLimits     map[string]bool
	restarts, oom  *int64
	restartsSource string
}

// podUse is one pod's per-step use and limits, template containers only.
type podUse struct {
	cpu, memPeak, cpuLim, memLim map[int64]float64
}

func newPodUse() *podUse {
	return &podUse{cpu: map[int64]float64{}, memPeak: map[int64]float64{}, cpuLim: map[int64]float64{}, memLim: map[int64]float64{}}
}

func newWorkloadSeries() *workloadSeries {
	return &workloadSeries{
		cpu: map[int64]float64{}, mem: map[int64]float64{}, memPeak: map[int64]float64{}, throttled: map[int64]float64{}, periods: map[int64]float64{},
		cpuReq: map[int64]float64{}, cpuLim: map[int64]float64{}, memLim: map[int64]float64{},
		pods: map[string]bool{}, podsAt: map[int64]map[string]bool{}, perPod: map[string]*podUse{}, podMem: map[string]map[int64]float64{},
		sidecars: map[string]bool{}, containers: map[string]*workloadSeries{},
		ran: map[string]map[string]Container{}, specLimits: map[string]bool{},
	}
}

func (s *workloadSeries) pod(name string) *podUse {
	p := s.perPod[name]
	if p == nil {
		p = newPodUse()
		s.perPod[name] = p
	}
	return p
}

// workloadData is every workload's use over the measured window.
type workloadData struct {
	workloads []Workload
	series    []*workloadSeries
	matchers  []*regexp.Regexp
	step      time.Duration
	// ranLimits are the limits each pod's containers ran with.
	ranLimits map[ranLimitsKey]ranLimits
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

// cadvisorMatchers select cAdvisor's series: the input's, else DefaultCAdvisorMatchers.
func (in Input) cadvisorMatchers() string {
	if in.CAdvisorMatchers == "" {
		return DefaultCAdvisorMatchers
	}
	return in.CAdvisorMatchers
}

// cadvisorRange is how rates of cAdvisor's counters over [start, end] are evaluated: every
// workloadStep, the first a rate window after start so that every rate lies inside the window;
// rw is that rate window as PromQL writes it.
func cadvisorRange(start, end time.Time) (r promv1.Range, rw string) {
	step := workloadStep(end.Sub(start))
	first := start.Add(min(rateWindow(step), end.Sub(start)))
	return promv1.Range{Start: first, End: end, Step: step}, promDuration(rateWindow(step))
}

// rateWindow covers at least two scrapes at a 30 s interval.
func rateWindow(step time.Duration) time.Duration {
	if step < time.Minute {
		return time.Minute
	}
	return step
}

// DefaultCAdvisorMaxAge is the default Input.CAdvisorMaxAge: two 30 s scrapes, which also
// covers cAdvisor's own housekeeping delay (at most 15 s by default) at a 15 s scrape interval.
const DefaultCAdvisorMaxAge = time.Minute

// fresh keeps only the series of sel whose newest real sample is at most maxAge old at each
// evaluation. cAdvisor stamps its samples with its own times, and Prometheus writes no
// staleness markers for such series (before track_timestamps_staleness, 2.48), so without
// this a container that is gone keeps its last value for the whole 5-minute lookback: after a
// rollout the old and the new pods are summed. timestamp() of a plain selector is the
// sample's own time in every Prometheus 2.x. (A plain selector also honours the staleness
// markers a normal scrape writes, which a range selector would skip.) The working set is read
// this way, per container instance (one cAdvisor id: a restarted container in the same pod is
// another); it is scraped with every other cAdvisor series of the instance, so the steps at
// which it is fresh are the steps at which the instance's rates count too, filtered in Go:
// one selector per rate query instead of two.
func fresh(metric, sel string, maxAge time.Duration) string {
	return fmt.Sprintf("(timestamp(%s%s) > time() - %s)", metric, sel, strconv.FormatFloat(maxAge.Seconds(), 'f', -1, 64))
}

// sampledIn keeps only the container instances with a sample of their own stamped inside the
// window (its last part for a window shorter than maxAge/2). fresh alone keeps a container that
// a rollout replaced just before the window for up to maxAge into it: with a window shorter than
// that, the old pods were summed with the new ones for the whole window (seen on the local
// cluster: memory twice the baseline's after a 25 s load). cAdvisor's samples carry its own
// times, so an instance that was gone before the window has no sample stored inside it.
func sampledIn(metric, sel string, window, maxAge time.Duration) string {
	if window < maxAge/2 {
		window = maxAge / 2
	}
	return fmt.Sprintf("count_over_time(%s%s[%s] @ end())", metric, sel, promDuration(window))
}

// instanceKey names a container instance in a cAdvisor answer grouped by instance.
func instanceKey(m model.Metric) string {
	return string(m["namespace"]) + "/" + string(m["pod"]) + "/" + string(m["container"]) + "/" + string(m["id"])
}

// freshSteps are, per container instance, the steps at which its working set was fresh.
func freshSteps(mem model.Matrix) map[string]map[model.Time]bool {
	out := map[string]map[model.Time]bool{}
	for _, ss := range mem {
		k := instanceKey(ss.Metric)
		if out[k] == nil {
			out[k] = map[model.Time]bool{}
		}
		for _, p := range ss.Values {
			out[k][p.Timestamp] = true
		}
	}
	return out
}

// keepFresh drops the steps at which the series' container instance was not fresh. When no
// instance has a working-set series (a scrape configuration that drops it) every series is kept
// whole; otherwise an instance without one had no sample in the window (sampledIn) and is
// dropped (nil): a container a rollout replaced just before the window.
func keepFresh(ss *model.SampleStream, fresh map[string]map[model.Time]bool) *model.SampleStream {
	at, ok := fresh[instanceKey(ss.Metric)]
	if !ok {
		if len(fresh) == 0 {
			return ss
		}
		return nil
	}
	out := &model.SampleStream{Metric: ss.Metric}
	for _, p := range ss.Values {
		if at[p.Timestamp] {
			out.Values = append(out.Values, p)
		}
	}
	return out
}

func readWorkloads(ctx context.Context, q Querier, cadvisor string, maxAge time.Duration, ws []Workload, start, end time.Time) (*workloadData, error) {
	d := &workloadData{workloads: ws, step: workloadStep(end.Sub(start))}
	if len(ws) == 0 {
		return d, nil
	}
	if maxAge <= 0 {
		maxAge = DefaultCAdvisorMaxAge
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
	r, rw := cadvisorRange(start, end)
	w := end.Sub(start)
	byInstance := "sum by (namespace, pod, container, id)"
	const (
		cpuName = "container_cpu_usage_seconds_total"
		memName = "container_memory_working_set_bytes"
	)

	type rq struct {
		query string
		into  func(*workloadSeries) map[int64]float64
		kind  seriesKind
	}
	// Each series is kept at a step only while its container instance is fresh (above): a rate
	// over a container that has just gone would otherwise mix the old revision into the new
	// one for a whole rate window. The working set comes first: it says which are fresh.
	ranges := []rq{
		{fmt.Sprintf("%s (%s%s and %s and %s)", byInstance, memName, sel, fresh(memName, sel, maxAge), sampledIn(memName, sel, w, maxAge)), func(s *workloadSeries) map[int64]float64 { return s.mem }, kindMemory},
		{fmt.Sprintf("%s (rate(%s%s[%s]))", byInstance, cpuName, sel, rw), func(s *workloadSeries) map[int64]float64 { return s.cpu }, kindCPU},
		// The peak within each rate window, so a spike between two steps is not missed.
		{fmt.Sprintf("%s (max_over_time(%s%s[%s]))", byInstance, memName, sel, rw), func(s *workloadSeries) map[int64]float64 { return s.memPeak }, kindMemoryPeak},
		{fmt.Sprintf("%s (rate(container_cpu_cfs_throttled_periods_total%s[%s]))", byInstance, sel, rw), func(s *workloadSeries) map[int64]float64 { return s.throttled }, kindOther},
		{fmt.Sprintf("%s (rate(container_cpu_cfs_periods_total%s[%s]))", byInstance, sel, rw), func(s *workloadSeries) map[int64]float64 { return s.periods }, kindOther},
	}
	span := promDuration(w)
	// Restarts: kube-state-metrics' counter when it is there; else cAdvisor, where every
	// container instance (a restart makes a new one) is a series of its own. OOM kills:
	// cAdvisor counts them per container instance; what grew during the window.
	counts := []string{
		fmt.Sprintf("sum by (namespace, pod, container) (max_over_time(kube_pod_container_status_restarts_total{%s}[%s]) - min_over_time(kube_pod_container_status_restarts_total{%s}[%s]))", target, span, target, span),
		fmt.Sprintf("count by (namespace, pod, container) (max_over_time(container_start_time_seconds%s[%s]))", sel, span),
		fmt.Sprintf("sum by (namespace, pod, container) (max_over_time(container_oom_events_total%s[%s]) - min_over_time(container_oom_events_total%s[%s]))", sel, span, sel, span),
	}
	// The queries are independent: read them all at once, then file the answers in order.
	matrices := make([]model.Matrix, len(ranges))
	vectors := make([]model.Vector, len(counts))
	var fns []func() error
	fns = append(fns, func() (err error) { d.ranLimits, err = readRanLimits(ctx, q, sel, target, span, end); return err })
	for i, x := range ranges {
		fns = append(fns, func() (err error) { matrices[i], err = rangeMatrix(ctx, q, x.query, r); return err })
	}
	for i, query := range counts {
		fns = append(fns, func() (err error) { vectors[i], err = vector(ctx, q, query, end); return err })
	}
	if err := together(fns...); err != nil {
		return nil, err
	}
	fresh := freshSteps(matrices[0])
	for i, x := range ranges {
		kept := matrices[i]
		if i > 0 {
			kept = make(model.Matrix, 0, len(matrices[i]))
			for _, ss := range matrices[i] {
				if k := keepFresh(ss, fresh); k != nil {
					kept = append(kept, k)
				}
			}
		}
		for _, ss := range byContainer(kept) {
			d.add(ss, x.kind, x.into)
		}
	}
	apply := []func(s *workloadSeries, v int64){
		func(s *workloadSeries, v int64) { s.addRestarts(v, "kube-state-metrics") },
		func(s *workloadSeries, v int64) {
			if s.restartsSource == "kube-state-metrics" {
				return
			}
			s.addRestarts(max(v-1, 0), "cAdvisor container instances")
		},
		func(s *workloadSeries, v int64) {
			if s.oom == nil {
				s.oom = result.Count(0)
			}
			*s.oom += v
		},
	}
	for i, vec := range vectors {
		for _, smp := range vec {
			j, _ := d.owner(smp.Metric)
			if j < 0 || !result.Finite(float64(smp.Value)) {
				continue
			}
			apply[i](d.series[j], int64(math.Round(float64(smp.Value))))
		}
	}
	return d, nil
}

// byContainer sums the instances of each container of each pod step by step: two instances
// fresh at once (a restart within the freshness age) are one container using both's resources
// under one limit.
func byContainer(m model.Matrix) []*model.SampleStream {
	type key struct{ ns, pod, container string }
	sums := map[key]map[model.Time]float64{}
	var order []key
	for _, ss := range m {
		k := key{string(ss.Metric["namespace"]), string(ss.Metric["pod"]), string(ss.Metric["container"])}
		if sums[k] == nil {
			sums[k] = map[model.Time]float64{}
			order = append(order, k)
		}
		for _, p := range ss.Values {
			sums[k][p.Timestamp] += float64(p.Value)
		}
	}
	out := make([]*model.SampleStream, 0, len(order))
	for _, k := range order {
		ss := &model.SampleStream{Metric: model.Metric{"namespace": model.LabelValue(k.ns), "pod": model.LabelValue(k.pod), "container": model.LabelValue(k.container)}}
		for ts, v := range sums[k] {
			ss.Values = append(ss.Values, model.SamplePair{Timestamp: ts, Value: model.SampleValue(v)})
		}
		sort.Slice(ss.Values, func(i, j int) bool { return ss.Values[i].Timestamp < ss.Values[j].Timestamp })
		out = append(out, ss)
	}
	return out
}

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
			wr.MemoryGrowthPerHour, wr.MemoryTrendZ, wr.Leak = judge.Leak(s.podMem, a, b)
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
	kept := &workloadData{step: d.step}
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
