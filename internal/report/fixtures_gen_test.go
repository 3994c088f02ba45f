//go:build fixtures

package report

import (
	"context"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/analysis"
	"github.com/perfexp/perfexp/internal/analysis/promtest"
	"github.com/perfexp/perfexp/internal/judge"
	"github.com/perfexp/perfexp/internal/result"
)

// TestWriteRunFixtures writes testdata/baseline.results.json and testdata/run.results.json: the
// results the real analysis computes from a real Prometheus (promtest) holding crafted k6 and
// cAdvisor series of two runs shaped like the demo's "no CPU limits" question. The baseline's
// circulation service runs at a CPU limit and is throttled (a heavy latency tail, worse for two
// minutes mid-run); the variant removes the limit. Regenerate with
//
//	go test -tags fixtures ./internal/report -run TestWriteRunFixtures -count=1
//
// The numbers differ from run to run only where wall-clock time enters (the window's dates).
func TestWriteRunFixtures(t *testing.T) {
	prom := promtest.Start(t)
	t0 := time.Now().Add(-45 * time.Minute).Truncate(time.Minute)
	const ns = "perfexp-demo"
	type run struct {
		name, id, variant string
		start             time.Time
		throttled         bool
		circulationPods   []string
	}
	runs := []run{
		{name: "demo-baseline", id: "demo-baseline-7f3a9c1e", start: t0, throttled: true, circulationPods: []string{"circulation-6d8f7c9b4-k2x7p", "circulation-6d8f7c9b4-q9m4z"}},
		{name: "demo-no-cpu-limits", id: "demo-no-cpu-limits-2b81d0f4", variant: "circulation without a CPU limit (limits.cpu removed)", start: t0.Add(16 * time.Minute),
			circulationPods: []string{"circulation-5b7c9d8f6-h4t2w", "circulation-5b7c9d8f6-v8n3r"}},
	}
	const warmUp, measured = time.Minute, 12 * time.Minute

	var series []promtest.Series
	for ri, rn := range runs {
		rng := rand.New(rand.NewPCG(42, uint64(ri+1)))
		lognormal := func(median, sigma float64) float64 { return math.Exp(math.Log(median) + sigma*rng.NormFloat64()) }
		// circulation serves check-out and check-in; CFS throttling at the limit adds up to a
		// period's wait to some requests, more while the burst of minutes 5-7 lasts.
		circulation := func(at time.Time, median float64) float64 {
			v := lognormal(median, 0.35)
			el := at.Sub(rn.start.Add(warmUp)).Minutes()
			p := 0.02
			if rn.throttled {
				p = 0.10
				if el >= 5 && el < 7 {
					p = 0.22
				}
			}
			if rng.Float64() < p {
				wait := 0.005 + 0.025*rng.Float64()
				if rn.throttled {
					wait = 0.02 + 0.08*rng.Float64()
				}
				v += wait
			}
			return v
		}
		out := promtest.NewK6Series(promtest.K6Labels(rn.id, "checkinout", "check-out", "0", true))
		outFail := promtest.NewK6Series(promtest.K6Labels(rn.id, "checkinout", "check-out", "0", false))
		in := promtest.NewK6Series(promtest.K6Labels(rn.id, "checkinout", "check-in", "0", true))
		search := promtest.NewK6Series(promtest.K6Labels(rn.id, "search", "search", "0", true))
		end := rn.start.Add(warmUp + measured)
		for at := rn.start.Add(5 * time.Second); !at.After(end); at = at.Add(5 * time.Second) {
			var o, i, s, f []float64
			for range 40 {
				if rng.Float64() < 0.002 {
					f = append(f, lognormal(0.004, 0.3)) // a failed check-out answers fast
					continue
				}
				o = append(o, circulation(at, 0.014))
			}
			for range 40 {
				i = append(i, circulation(at, 0.009))
			}
			for range 20 {
				s = append(s, lognormal(0.022, 0.45))
			}
			out.Flush(at, o...)
			in.Flush(at, i...)
			search.Flush(at, s...)
			if len(f) > 0 {
				outFail.Flush(at, f...)
			}
		}
		for _, k := range []*promtest.K6Series{out, outFail, in, search} {
			series = append(series, k.Series()...)
		}
		// The variant's rollout replaced circulation's pods; catalogue and postgres run on.
		for pi, pod := range rn.circulationPods {
			cpu, throttled := 0.47+0.03*float64(pi), 0.0
			if rn.throttled {
				cpu, throttled = 0.41+0.02*float64(pi), 2.6
			}
			series = append(series, container{ns: ns, pod: pod, name: "circulation", id: pod, from: rn.start.Add(-2 * time.Minute), to: end.Add(time.Minute),
				cores: cpu, mem: 300<<20 + float64(pi)*(12<<20), memGrowth: 6 << 20, periods: 10, throttled: throttled, cpuLimit: map[bool]float64{true: 0.5}[rn.throttled], memLimit: 512 << 20}.series()...)
		}
	}
	from, to := t0.Add(-2*time.Minute), runs[1].start.Add(warmUp+measured+time.Minute)
	series = append(series,
		container{ns: ns, pod: "catalogue-7c6b5d9f8-r5k8s", name: "catalogue", id: "cat1", from: from, to: to, cores: 0.31, mem: 210 << 20, memGrowth: 2 << 20, cpuLimit: 1, memLimit: 384 << 20, periods: 10}.series()...)
	series = append(series,
		container{ns: ns, pod: "postgres-0", name: "postgres", id: "pg0", from: from, to: to, cores: 0.18, mem: 620 << 20, memGrowth: 1 << 20}.series()...)
	prom.Write(t, series)

	cores := func(v float64) *float64 { return &v }
	workloads := func(throttled bool) []analysis.Workload {
		circ := analysis.Container{Name: "circulation", CPURequest: cores(0.25), MemoryLimit: cores(512 << 20)}
		if throttled {
			circ.CPULimit = cores(0.5)
		}
		return []analysis.Workload{
			{Kind: perfexpv1alpha1.WorkloadKindDeployment, Namespace: ns, Name: "circulation", Touched: !throttled, Containers: []analysis.Container{circ}},
			{Kind: perfexpv1alpha1.WorkloadKindDeployment, Namespace: ns, Name: "catalogue", Containers: []analysis.Container{{Name: "catalogue", CPURequest: cores(0.25), CPULimit: cores(1), MemoryLimit: cores(384 << 20)}}},
			{Kind: perfexpv1alpha1.WorkloadKindStatefulSet, Namespace: ns, Name: "postgres", Containers: []analysis.Container{{Name: "postgres"}}},
		}
	}
	maxP95 := resource.MustParse("60")
	inc := int32(10)
	objectives := []perfexpv1alpha1.Objective{
		{Name: "check-out p95 under 60 ms", Metric: perfexpv1alpha1.MetricP95, Scenario: "checkinout", Request: "check-out", Max: &maxP95},
		{Metric: perfexpv1alpha1.MetricP95, Scenario: "checkinout", MaxIncreasePercent: &inc},
	}
	// What the workloads ran with: the variant removed circulation's CPU limit (declared), and
	// catalogue's log level differed between the two runs without anyone declaring it.
	inventory := func(throttled bool) []result.WorkloadInventory {
		n := func(v int32) *int32 { return &v }
		circ := result.ContainerInventory{Name: "circulation", Image: "ghcr.io/perfexp/demo-circulation:1.8.2",
			Requests: map[string]string{"cpu": "250m"}, Limits: map[string]string{"memory": "512Mi"},
			Env: []result.EnvVar{{Name: "DB_URL", Value: "postgres://postgres:5432/library"}, {Name: "DB_PASSWORD", From: "secret postgres/password"}}}
		logLevel := "info"
		var declared []string
		if throttled {
			circ.Limits = map[string]string{"cpu": "500m", "memory": "512Mi"}
		} else {
			logLevel = "debug"
			declared = []string{"resources/circulation/limits.cpu"}
		}
		return []result.WorkloadInventory{
			{Kind: "Deployment", Namespace: ns, Name: "catalogue", Replicas: n(1), Nodes: []string{"perfexp-local"}, Containers: []result.ContainerInventory{{Name: "catalogue",
				Image: "ghcr.io/perfexp/demo-catalogue:1.8.2", Requests: map[string]string{"cpu": "250m"}, Limits: map[string]string{"cpu": "1", "memory": "384Mi"},
				Env: []result.EnvVar{{Name: "LOG_LEVEL", Value: logLevel}}}}},
			{Kind: "Deployment", Namespace: ns, Name: "circulation", Replicas: n(2), Nodes: []string{"perfexp-local"}, Containers: []result.ContainerInventory{circ}, Declared: declared},
			{Kind: "StatefulSet", Namespace: ns, Name: "postgres", Replicas: n(1), Nodes: []string{"perfexp-local"}, Containers: []result.ContainerInventory{{Name: "postgres", Image: "postgres:16.4"}}},
		}
	}
	analyze := func(rn run, b *judge.Baseline) *result.Result {
		warm := rn.start.Add(warmUp)
		end := warm.Add(measured)
		in := analysis.Input{Experiment: rn.name, Namespace: ns, TargetNamespace: ns, TestID: rn.id, Variant: rn.variant,
			Start: rn.start, WarmUpEnd: warm, End: end, Scenarios: []string{"checkinout", "search"},
			Workloads: workloads(rn.throttled), Baseline: b, Inventory: inventory(rn.throttled),
			Phases: []result.PhaseAt{{Phase: "Queued", Time: rn.start.Add(-70 * time.Second)}, {Phase: "Preparing", Time: rn.start.Add(-68 * time.Second)},
				{Phase: "WarmingUp", Time: rn.start}, {Phase: "Running", Time: warm}, {Phase: "Restoring", Time: end.Add(2 * time.Second)}, {Phase: "Analyzing", Time: end.Add(31 * time.Second)}}}
		if b != nil {
			in.Analysis.Objectives = objectives
		}
		r, err := analysis.Analyze(context.Background(), prom.API(t), in)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	baseline := analyze(runs[0], nil)
	variant := analyze(runs[1], &judge.Baseline{Name: runs[0].name, TestID: runs[0].id, Start: runs[0].start, WarmUpEnd: runs[0].start.Add(warmUp),
		End: runs[0].start.Add(warmUp + measured), Scenarios: []string{"checkinout", "search"}, Result: baseline})
	for name, r := range map[string]*result.Result{"baseline.results.json": baseline, "run.results.json": variant} {
		b, err := JSON(r)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join("testdata", name), append(b, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("variant: change %s, verdict %s, p95 %v ms (baseline %v ms)", variant.Comparison.Change, variant.Verdict, *variant.Total.P95, *baseline.Total.P95)
}

// container crafts the cAdvisor series of one container instance scraped every 15 s, labelled
// as kube-prometheus-stack labels them, with the cgroup's limits when it has any.
type container struct {
	ns, pod, name, id  string
	from, to           time.Time
	cores              float64 // constant CPU use
	mem, memGrowth     float64 // working set at from, and its growth per hour (bytes)
	periods, throttled float64 // CFS periods and throttled periods per second
	cpuLimit, memLimit float64 // 0: none
}

func (c container) series() []promtest.Series {
	labels := func(metric string) map[string]string {
		return map[string]string{"__name__": metric, "job": "kubelet", "metrics_path": "/metrics/cadvisor",
			"namespace": c.ns, "pod": c.pod, "container": c.name, "id": "/kubepods/" + c.pod + "/" + c.id, "name": c.id}
	}
	rng := rand.New(rand.NewPCG(7, uint64(len(c.pod))))
	byName := map[string][]promtest.Float{}
	for at := c.from; !at.After(c.to); at = at.Add(15 * time.Second) {
		el := at.Sub(c.from).Seconds()
		add := func(metric string, v float64) { byName[metric] = append(byName[metric], promtest.Float{T: at, V: v}) }
		add("container_cpu_usage_seconds_total", 1000+c.cores*el+0.02*rng.NormFloat64())
		// The working set saws: it grows between collections and drops back at each.
		add("container_memory_working_set_bytes", c.mem+c.memGrowth*el/3600+float64(int(el)%120)/120*(24<<20))
		add("container_start_time_seconds", float64(c.from.Unix()))
		add("container_oom_events_total", 0)
		if c.periods > 0 {
			add("container_cpu_cfs_periods_total", c.periods*el)
			add("container_cpu_cfs_throttled_periods_total", c.throttled*el)
		}
		add("container_spec_cpu_period", 100000)
		if c.cpuLimit > 0 {
			add("container_spec_cpu_quota", c.cpuLimit*100000)
		}
		add("container_spec_memory_limit_bytes", c.memLimit)
	}
	var out []promtest.Series
	for metric, fs := range byName {
		out = append(out, promtest.Series{Labels: labels(metric), Floats: fs})
	}
	return out
}
