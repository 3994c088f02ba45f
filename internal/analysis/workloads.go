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
	"github.com/perfexp/perfexp/internal/result"
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
	// window is the length of the window read; a short one (shortWindow) has one rate, at its
	// end.
	window time.Duration
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
// rw is that rate window as PromQL writes it. A window shorter than the rate window gets one
// rate over the window itself, evaluated at its end: never longer than the run, so nothing from
// before it (the idle seconds before the load, a setup Job) is mixed in. A container with fewer
// than two samples inside such a window has no rate; readWorkloads then falls back to the
// samples around the run (sparseRate).
func cadvisorRange(start, end time.Time) (r promv1.Range, rw string) {
	w := end.Sub(start)
	step := workloadStep(w)
	if shortWindow(w) {
		return promv1.Range{Start: end, End: end, Step: step}, promMillis(w)
	}
	return promv1.Range{Start: start.Add(rateWindow(step)), End: end, Step: step}, promDuration(rateWindow(step))
}

// shortWindow says whether a window of length w is read with one rate over the whole window
// (cadvisorRange) rather than per step.
func shortWindow(w time.Duration) bool { return w < rateWindow(workloadStep(w)) }

// promMillis renders a duration as a PromQL range in whole milliseconds, rounded down so a
// range never reaches before the window it reads.
func promMillis(d time.Duration) string { return fmt.Sprintf("%dms", max(d.Milliseconds(), 1)) }

// cadvisorLookback is how far before a short window the last sample of an idle container is
// looked for: Prometheus' default lookback, longer than any housekeeping interval of cAdvisor
// (which samples an unchanged container less and less often).
const cadvisorLookback = 5 * time.Minute

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
	d := &workloadData{workloads: ws, step: workloadStep(end.Sub(start)), window: end.Sub(start)}
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
	const cpuName = "container_cpu_usage_seconds_total"

	type rq struct {
		query string
		into  func(*workloadSeries) map[int64]float64
		kind  seriesKind
	}
	// Each series is kept at a step only while its container instance is fresh (above): a rate
	// over a container that has just gone would otherwise mix the old revision into the new
	// one for a whole rate window. The working set comes first: it says which are fresh.
	memQuery, peakQuery := memoryQueries(sel, rw, w, maxAge)
	short := shortWindow(w)
	ranges := []rq{
		{memQuery, func(s *workloadSeries) map[int64]float64 { return s.mem }, kindMemory},
		{fmt.Sprintf("%s (rate(%s%s[%s]))", byInstance, cpuName, sel, rw), func(s *workloadSeries) map[int64]float64 { return s.cpu }, kindCPU},
		{peakQuery, func(s *workloadSeries) map[int64]float64 { return s.memPeak }, kindMemoryPeak},
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
	// A short window's raw CPU samples, from a lookback before it to its end: the fallback for
	// the containers with fewer than two samples inside it.
	var raw model.Matrix
	if short {
		query := fmt.Sprintf("%s%s[%s]", cpuName, sel, promMillis(w+cadvisorLookback))
		fns = append(fns, func() (err error) { raw, err = matrix(ctx, q, query, end); return err })
	}
	if err := together(fns...); err != nil {
		return nil, err
	}
	fresh := freshSteps(matrices[0])
	if short {
		matrices[1] = append(matrices[1], sparseRates(raw, matrices[1], fresh, start, end)...)
	}
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

// memoryQueries read the working set of each container instance (only while it is fresh, and
// only the instances sampled in the window: sampledIn) and its peak within each rate window rw
// (so a spike between two steps is not missed), by instance, for a window of length w.
func memoryQueries(sel, rw string, w, maxAge time.Duration) (mem, peak string) {
	const name, byInstance = "container_memory_working_set_bytes", "sum by (namespace, pod, container, id)"
	return fmt.Sprintf("%s (%s%s and %s and %s)", byInstance, name, sel, fresh(name, sel, maxAge), sampledIn(name, sel, w, maxAge)),
		fmt.Sprintf("%s (max_over_time(%s%s[%s]))", byInstance, name, sel, rw)
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
