package analysis

import (
	"context"
	"math"
	"testing"
	"time"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/analysis/promtest"
	"github.com/perfexp/perfexp/internal/result"
)

const mib = 1 << 20

// cadvisor crafts the series a kubelet's cAdvisor endpoint exposes for one container instance,
// scraped every 15 s, as kube-prometheus-stack labels them.
type cadvisor struct {
	ns, pod, container, id string
	from, to               time.Time
	cpuCores               float64                   // constant use
	cpuRate                func(t time.Time) float64 // use over the scrape ending at t; cpuCores when nil
	mem                    func(t time.Time) float64 // working set
	periodsPerSec          float64                   // CFS periods (only with a CPU limit)
	throttledPerSec        float64
	oomAt                  time.Time // zero: never
	end                    bool      // the instance ends at to
	// timestamped: the kubelet stamps the samples itself, so Prometheus writes no staleness
	// marker when the container goes (what real cAdvisor series look like).
	timestamped bool
	every       time.Duration // scrape interval; 15 s when zero
	// limits writes cAdvisor's container_spec_* series: the cgroup's CPU period (100 ms), its
	// quota (cpuLimit cores; none when 0) and its memory limit (memLimit bytes; 0 is none).
	limits             bool
	cpuLimit, memLimit float64
}

func (c cadvisor) series() []promtest.Series {
	labels := func(name string) map[string]string {
		return map[string]string{"__name__": name, "job": "kubelet", "metrics_path": "/metrics/cadvisor",
			"namespace": c.ns, "pod": c.pod, "container": c.container, "id": "/kubepods/" + c.pod + "/" + c.id, "name": c.id}
	}
	var cpu, mem, periods, throttled, start, oom, specPeriod, specQuota, specMem []promtest.Float
	every := c.every
	if every == 0 {
		every = 15 * time.Second
	}
	used := 1000.0
	for t := c.from; !t.After(c.to); t = t.Add(every) {
		el := t.Sub(c.from).Seconds()
		if c.cpuRate == nil {
			used = 1000 + c.cpuCores*el
		} else if t.After(c.from) {
			used += c.cpuRate(t) * every.Seconds()
		}
		cpu = append(cpu, promtest.Float{T: t, V: used})
		mem = append(mem, promtest.Float{T: t, V: c.mem(t)})
		start = append(start, promtest.Float{T: t, V: float64(c.from.Unix())})
		o := 0.0
		if !c.oomAt.IsZero() && !t.Before(c.oomAt) {
			o = 1
		}
		oom = append(oom, promtest.Float{T: t, V: o})
		if c.limits {
			specPeriod = append(specPeriod, promtest.Float{T: t, V: 100000})
			specMem = append(specMem, promtest.Float{T: t, V: c.memLimit})
			if c.cpuLimit > 0 {
				specQuota = append(specQuota, promtest.Float{T: t, V: c.cpuLimit * 100000})
			}
		}
		if c.periodsPerSec > 0 {
			periods = append(periods, promtest.Float{T: t, V: c.periodsPerSec * el})
			throttled = append(throttled, promtest.Float{T: t, V: c.throttledPerSec * el})
		}
	}
	// A scrape that no longer finds the container writes a staleness marker.
	if c.end && !c.timestamped {
		stale := promtest.Float{T: cpu[len(cpu)-1].T.Add(15 * time.Second), V: promtest.StaleNaN}
		for _, fs := range []*[]promtest.Float{&cpu, &mem, &start, &oom, &periods, &throttled, &specPeriod, &specQuota, &specMem} {
			if len(*fs) > 0 {
				*fs = append(*fs, stale)
			}
		}
	}
	out := []promtest.Series{
		{Labels: labels("container_cpu_usage_seconds_total"), Floats: cpu},
		{Labels: labels("container_memory_working_set_bytes"), Floats: mem},
		{Labels: labels("container_start_time_seconds"), Floats: start},
		{Labels: labels("container_oom_events_total"), Floats: oom},
	}
	for name, fs := range map[string][]promtest.Float{"container_spec_cpu_period": specPeriod, "container_spec_cpu_quota": specQuota, "container_spec_memory_limit_bytes": specMem} {
		if len(fs) > 0 {
			out = append(out, promtest.Series{Labels: labels(name), Floats: fs})
		}
	}
	if c.periodsPerSec > 0 {
		out = append(out, promtest.Series{Labels: labels("container_cpu_cfs_periods_total"), Floats: periods},
			promtest.Series{Labels: labels("container_cpu_cfs_throttled_periods_total"), Floats: throttled})
	}
	return out
}

func constant(v float64) func(time.Time) float64 { return func(time.Time) float64 { return v } }

func ptr(v float64) *float64 { return &v }

// Story: the report's per-service table. Two replicas at 40% of their CPU limit and throttled,
// a database without a limit, a worker killed by the OOM killer and restarted, a service
// leaking memory, and a look-alike Deployment whose pods must not be counted.
func TestCraftedWorkloads(t *testing.T) {
	prom := promtest.Start(t)
	base := time.Now().Add(-55 * time.Minute).Truncate(time.Minute)
	from, to := base, base.Add(50*time.Minute)
	// The measured window is not aligned to the 15 s scrapes.
	start, end := base.Add(5*time.Minute+7300*time.Millisecond), base.Add(45*time.Minute+2100*time.Millisecond)
	oom := base.Add(20 * time.Minute)

	var series []promtest.Series
	for _, c := range []cadvisor{
		{ns: "shop", pod: "api-7d9f8c6b5-abcde", container: "app", id: "a1", from: from, to: to, cpuCores: 0.4, mem: constant(200 * mib), periodsPerSec: 10, throttledPerSec: 2},
		{ns: "shop", pod: "api-7d9f8c6b5-fghij", container: "app", id: "a2", from: from, to: to, cpuCores: 0.4, mem: constant(200 * mib), periodsPerSec: 10, throttledPerSec: 2},
		{ns: "shop", pod: "api-v2-5f6d7c8b9-xyzab", container: "app", id: "v2", from: from, to: to, cpuCores: 3, mem: constant(900 * mib)},
		{ns: "other", pod: "api-7d9f8c6b5-zzzzz", container: "app", id: "o1", from: from, to: to, cpuCores: 5, mem: constant(900 * mib)},
		{ns: "shop", pod: "db-0", container: "postgres", id: "d1", from: from, to: to, cpuCores: 0.25, mem: constant(1024 * mib)},
		{ns: "shop", pod: "worker-6c5b4-qwert", container: "w", id: "w1", from: from, to: oom.Add(10 * time.Second), cpuCores: 0.1,
			mem: func(t time.Time) float64 { return math.Min(256*mib, 100*mib+t.Sub(from).Seconds()*2e5) }, oomAt: oom, end: true},
		{ns: "shop", pod: "worker-6c5b4-qwert", container: "w", id: "w2", from: oom.Add(15 * time.Second), to: to, cpuCores: 0.1, mem: constant(100 * mib)},
		{ns: "shop", pod: "leaky-8d7c6-lkjhg", container: "app", id: "l1", from: from, to: to, cpuCores: 0.05,
			mem: func(t time.Time) float64 { return 500*mib + t.Sub(from).Hours()*100*mib }},
	} {
		series = append(series, c.series()...)
	}
	prom.Write(t, series)

	workloads := []Workload{
		{Kind: perfexpv1alpha1.WorkloadKindDeployment, Namespace: "shop", Name: "api", Touched: true,
			Containers: []Container{{Name: "app", CPURequest: ptr(0.5), CPULimit: ptr(1), MemoryLimit: ptr(512 * mib)}}},
		{Kind: perfexpv1alpha1.WorkloadKindStatefulSet, Namespace: "shop", Name: "db", Containers: []Container{{Name: "postgres"}}},
		{Kind: perfexpv1alpha1.WorkloadKindDeployment, Namespace: "shop", Name: "worker", Containers: []Container{{Name: "w", MemoryLimit: ptr(256 * mib)}}},
		{Kind: perfexpv1alpha1.WorkloadKindDeployment, Namespace: "shop", Name: "leaky", Containers: []Container{{Name: "app"}}},
	}
	run := func(t *testing.T, start, end time.Time) map[string]result.WorkloadResult {
		r, err := Analyze(context.Background(), prom.API(t), Input{Experiment: "w", TestID: "none", Start: start, End: end, Scenarios: []string{"main"}, Workloads: workloads})
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]result.WorkloadResult{}
		for _, w := range r.Workloads {
			out[w.Name] = w
		}
		return out
	}
	got := run(t, start, end)

	near := func(p *float64, want, tol float64) bool { return p != nil && math.Abs(*p-want) <= tol }
	tests := []struct {
		name string
		ok   bool
		got  any
	}{
		{"api: two pods, not the look-alike api-v2 nor api in another namespace", got["api"].Pods == 2, got["api"].Pods},
		{"api: 0.8 cores on average", near(got["api"].CPUAvg, 0.8, 1e-6), deref(got["api"].CPUAvg)},
		{"api: 40% of its CPU limit", near(got["api"].CPUPercentOfLimit, 40, 1e-4), deref(got["api"].CPUPercentOfLimit)},
		{"api: 80% of its CPU request", near(got["api"].CPUPercentOfRequest, 80, 1e-4), deref(got["api"].CPUPercentOfRequest)},
		{"api: 20% of CFS periods throttled", near(got["api"].CPUThrottledPercent, 20, 1e-4), deref(got["api"].CPUThrottledPercent)},
		{"api: 400 MiB working set", near(got["api"].MemoryAvg, 400*mib, 1), deref(got["api"].MemoryAvg)},
		{"api: 39.06% of its memory limit", near(got["api"].MemoryPercentOfLimit, 39.0625, 1e-6), deref(got["api"].MemoryPercentOfLimit)},
		{"api: no restarts, no OOM kills", *got["api"].Restarts == 0 && *got["api"].OOMKills == 0, []any{deref(got["api"].Restarts), deref(got["api"].OOMKills)}},
		{"api: flat memory is no leak", got["api"].Leak == result.LeakNone, got["api"].Leak},
		{"db: 0.25 cores", near(got["db"].CPUAvg, 0.25, 1e-6), deref(got["db"].CPUAvg)},
		{"db: no limit rather than a division by zero", got["db"].CPULimitNote == "no limit" && got["db"].CPUPercentOfLimit == nil && got["db"].MemoryLimitNote == "no limit", []any{got["db"].CPULimitNote, deref(got["db"].CPUPercentOfLimit)}},
		{"db: no throttling data without a limit", got["db"].CPUThrottledPercent == nil, deref(got["db"].CPUThrottledPercent)},
		{"worker: one restart", got["worker"].Restarts != nil && *got["worker"].Restarts == 1, deref(got["worker"].Restarts)},
		{"worker: one OOM kill", got["worker"].OOMKills != nil && *got["worker"].OOMKills == 1, deref(got["worker"].OOMKills)},
		{"worker: its peak was 100% of its memory limit", near(got["worker"].MemoryPercentOfLimit, 100, 1e-6), deref(got["worker"].MemoryPercentOfLimit)},
		{"leaky: grows 100 MiB per hour", near(got["leaky"].MemoryGrowthPerHour, 100*mib, 1), deref(got["leaky"].MemoryGrowthPerHour)},
		{"leaky: a suspected leak", got["leaky"].Leak == result.LeakSuspected, got["leaky"].Leak},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if !tc.ok {
				t.Errorf("got %v", tc.got)
			}
		})
	}

	t.Run("a 10-minute window is too short for a leak verdict", func(t *testing.T) {
		short := run(t, start, start.Add(10*time.Minute))
		if short["leaky"].Leak != result.LeakWindowTooShort {
			t.Errorf("leak = %q, want %q", short["leaky"].Leak, result.LeakWindowTooShort)
		}
	})
}

// Story: a variant rolled a Deployment 23 s before the measured window began. cAdvisor stamps
// its samples itself, so Prometheus writes no staleness marker for the old pod and would carry
// its last values forward for five minutes. The report must show the new pod only: one pod,
// its memory and its CPU.
func TestCraftedWorkloadsAfterRollout(t *testing.T) {
	prom := promtest.Start(t)
	base := time.Now().Add(-45 * time.Minute).Truncate(time.Minute)
	rollout := base.Add(10 * time.Minute)
	start, end := rollout.Add(23*time.Second), base.Add(30*time.Minute)

	var series []promtest.Series
	for _, c := range []cadvisor{
		// The old revision: three times the new one's memory and CPU, gone at the rollout.
		{ns: "shop", pod: "cart-5d4c3b2a1-olddd", container: "app", id: "c-old", from: base, to: rollout, cpuCores: 0.6,
			mem: constant(300 * mib), end: true, timestamped: true},
		{ns: "shop", pod: "cart-6e5d4c3b2-newww", container: "app", id: "c-new", from: rollout.Add(-20 * time.Second), to: end.Add(5 * time.Minute), cpuCores: 0.2,
			mem: constant(100 * mib), timestamped: true},
		// A StatefulSet's pod is replaced under the same name: the old container instance
		// must not be summed with the new one either.
		{ns: "shop", pod: "zk-0", container: "zk", id: "z-old", from: base, to: rollout, cpuCores: 0.3, mem: constant(8 * mib), end: true, timestamped: true},
		{ns: "shop", pod: "zk-0", container: "zk", id: "z-new", from: rollout.Add(5 * time.Second), to: end.Add(5 * time.Minute), cpuCores: 0.1,
			mem: constant(8 * mib), timestamped: true},
	} {
		series = append(series, c.series()...)
	}
	prom.Write(t, series)

	// The same rollout before a short run (30 s, read with one rate over the run itself and a
	// fallback to the samples around it for sparse containers): the replaced pods, whose last
	// samples lie before the run, must still be left out (a CI run once counted two circulation
	// pods after a variant's rollout, when a fallback for the working set let the old one back in).
	for _, window := range []struct {
		name       string
		start, end time.Time
	}{
		{"a 20-minute run", start, end},
		{"a 30 s run", start, start.Add(30 * time.Second)},
	} {
		t.Run(window.name, func(t *testing.T) {
			r, err := Analyze(context.Background(), prom.API(t), Input{Experiment: "w", TestID: "none", Start: window.start, End: window.end, Scenarios: []string{"main"},
				Workloads: []Workload{
					{Kind: perfexpv1alpha1.WorkloadKindDeployment, Namespace: "shop", Name: "cart", Touched: true, Containers: []Container{{Name: "app", MemoryLimit: ptr(512 * mib)}}},
					{Kind: perfexpv1alpha1.WorkloadKindStatefulSet, Namespace: "shop", Name: "zk", Containers: []Container{{Name: "zk"}}},
				}})
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]result.WorkloadResult{}
			for _, w := range r.Workloads {
				got[w.Name] = w
			}
			near := func(p *float64, want, tol float64) bool { return p != nil && math.Abs(*p-want) <= tol }
			tests := []struct {
				name string
				ok   bool
				got  any
			}{
				{"cart: one pod running", got["cart"].Pods == 1, got["cart"].Pods},
				{"cart: only the new pod was seen in the window", got["cart"].PodsSeen == 1, got["cart"].PodsSeen},
				{"cart: the new pod's 100 MiB on average", near(got["cart"].MemoryAvg, 100*mib, 1), deref(got["cart"].MemoryAvg)},
				{"cart: the new pod's 100 MiB at most", near(got["cart"].MemoryMax, 100*mib, 1), deref(got["cart"].MemoryMax)},
				{"cart: 19.5% of its memory limit at the peak", near(got["cart"].MemoryPercentOfLimit, 100.0/512*100, 1e-6), deref(got["cart"].MemoryPercentOfLimit)},
				{"cart: the new revision's 0.2 cores, not mixed with the old", near(got["cart"].CPUAvg, 0.2, 1e-6) && near(got["cart"].CPUMax, 0.2, 1e-6),
					[]any{deref(got["cart"].CPUAvg), deref(got["cart"].CPUMax)}},
				{"zk: one pod", got["zk"].Pods == 1, got["zk"].Pods},
				{"zk: 8 MiB, not 16", near(got["zk"].MemoryMax, 8*mib, 1) && near(got["zk"].MemoryAvg, 8*mib, 1), []any{deref(got["zk"].MemoryAvg), deref(got["zk"].MemoryMax)}},
				{"zk: 0.1 cores", near(got["zk"].CPUAvg, 0.1, 1e-6), deref(got["zk"].CPUAvg)},
			}
			for _, tc := range tests {
				t.Run(tc.name, func(t *testing.T) {
					if !tc.ok {
						t.Errorf("got %v", tc.got)
					}
				})
			}
		})
	}
}

// Story: the highest pod's share of its limit. Two replicas of a 1-core, 512 MiB service run
// at 0.95 and 0.5 cores; an injected sidecar uses 0.3 cores in each; one replica's memory spikes
// to 500 MiB for a single 5 s scrape between two evaluation steps.
func TestCraftedWorkloadsPerPodLimits(t *testing.T) {
	prom := promtest.Start(t)
	base := time.Now().Add(-45 * time.Minute).Truncate(time.Minute)
	start, end := base.Add(5*time.Minute), base.Add(35*time.Minute)
	spike := base.Add(20*time.Minute + 5*time.Second)
	spiky := func(t time.Time) float64 {
		if t.Equal(spike) {
			return 500 * mib
		}
		return 200 * mib
	}
	var series []promtest.Series
	for _, c := range []cadvisor{
		{ns: "shop", pod: "web-7c6b5a4d3-aaaaa", container: "app", id: "w1", from: base, to: end.Add(time.Minute), cpuCores: 0.95, mem: spiky, every: 5 * time.Second},
		{ns: "shop", pod: "web-7c6b5a4d3-bbbbb", container: "app", id: "w2", from: base, to: end.Add(time.Minute), cpuCores: 0.5, mem: constant(200 * mib), every: 5 * time.Second},
		{ns: "shop", pod: "web-7c6b5a4d3-aaaaa", container: "istio-proxy", id: "s1", from: base, to: end.Add(time.Minute), cpuCores: 0.3, mem: constant(50 * mib), every: 5 * time.Second},
		{ns: "shop", pod: "web-7c6b5a4d3-bbbbb", container: "istio-proxy", id: "s2", from: base, to: end.Add(time.Minute), cpuCores: 0.3, mem: constant(50 * mib), every: 5 * time.Second},
	} {
		series = append(series, c.series()...)
	}
	prom.Write(t, series)
	r, err := Analyze(context.Background(), prom.API(t), Input{Experiment: "w", TestID: "none", Start: start, End: end, Scenarios: []string{"main"},
		Workloads: []Workload{{Kind: perfexpv1alpha1.WorkloadKindDeployment, Namespace: "shop", Name: "web",
			Containers: []Container{{Name: "app", CPULimit: ptr(1), MemoryLimit: ptr(512 * mib)}}}}})
	if err != nil {
		t.Fatal(err)
	}
	w := r.Workloads[0]
	near := func(p *float64, want, tol float64) bool { return p != nil && math.Abs(*p-want) <= tol }
	tests := []struct {
		name string
		ok   bool
		got  any
	}{
		{"two pods", w.Pods == 2, w.Pods},
		{"the sidecar's use counts: 0.95 + 0.5 + 2 x 0.3 cores", near(w.CPUAvg, 2.05, 1e-6), deref(w.CPUAvg)},
		{"the sidecar's limit does not: 2 cores of limit", near(w.CPULimit, 2, 1e-9), deref(w.CPULimit)},
		{"the busiest pod's app at 95% of its limit, not the 72.5% of the sum", near(w.CPUPercentOfLimit, 95, 1e-4), deref(w.CPUPercentOfLimit)},
		{"the sidecar is named", len(w.Sidecars) == 1 && w.Sidecars[0] == "istio-proxy", w.Sidecars},
		{"the 5 s spike is the peak: 500 + 200 + 2 x 50 MiB", near(w.MemoryMax, 800*mib, 1), deref(w.MemoryMax)},
		{"the spiking pod's app peaked at 97.7% of its limit", near(w.MemoryPercentOfLimit, 500.0/512*100, 1e-6), deref(w.MemoryPercentOfLimit)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if !tc.ok {
				t.Errorf("got %v", tc.got)
			}
		})
	}
}
