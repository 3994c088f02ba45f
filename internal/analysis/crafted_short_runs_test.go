package analysis

import (
	"context"
	"math"
	"strings"
	"testing"
	"time"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/analysis/promtest"
	"github.com/perfexp/perfexp/internal/judge"
	"github.com/perfexp/perfexp/internal/result"
)

// sampled is one container's cAdvisor CPU counter and working set at the given times only, as
// cAdvisor stamps them (sparse for an idle container, a reset on a restart in place).
func sampled(ns, pod, container, id string, at []time.Time, cpu []float64, mem float64) []promtest.Series {
	labels := func(name string) map[string]string {
		return map[string]string{"__name__": name, "job": "kubelet", "metrics_path": "/metrics/cadvisor",
			"namespace": ns, "pod": pod, "container": container, "id": "/kubepods/" + pod + "/" + id, "name": id}
	}
	var c, m []promtest.Float
	for i, t := range at {
		c = append(c, promtest.Float{T: t, V: cpu[i]})
		m = append(m, promtest.Float{T: t, V: mem})
	}
	return []promtest.Series{{Labels: labels("container_cpu_usage_seconds_total"), Floats: c}, {Labels: labels("container_memory_working_set_bytes"), Floats: m}}
}

// counterEvery samples a counter every interval from from to to.
func counterEvery(from, to time.Time, every time.Duration, counter func(time.Time) float64) ([]time.Time, []float64) {
	var at []time.Time
	var v []float64
	for t := from; !t.After(to); t = t.Add(every) {
		at = append(at, t)
		v = append(v, counter(t))
	}
	return at, v
}

// restartedAt is a CPU counter of a container using cores from from, restarted in place at
// reset: from 1000 before, from zero after.
func restartedAt(from, reset time.Time, cores float64) func(time.Time) float64 {
	return func(t time.Time) float64 {
		if t.After(reset) {
			return cores * t.Sub(reset).Seconds()
		}
		return 1000 + cores*t.Sub(from).Seconds()
	}
}

// Story: the short forms of the reference studies measure 30-45 s, shorter than the minute a
// rate of cAdvisor's counters spans. Read over that minute, a 40 s run's CPU mixed in the idle
// seconds before the load, and its one rate, stamped past the last whole interval, left the run
// without per-interval use. Read over the run itself, a container with two samples inside has
// the run's own use; an idle container, which cAdvisor samples only every 45 s here, may have
// one sample inside a 31 s run: its use is read from the samples around the run, not missing (a
// CI run once failed on exactly that: "workload kafka-zookeeper has no CPU").
func TestCraftedWorkloadsShortRun(t *testing.T) {
	prom := promtest.Start(t)
	base := time.Now().Add(-45 * time.Minute).Truncate(time.Minute)
	// api: samples every 15 s, 0.1 cores idle, 0.5 from the load's start; the samples at 20:00
	// and 20:15 lie in the minute before a 40 s run's end, the next two inside the run.
	load := base.Add(20*time.Minute + 19900*time.Millisecond)
	busy := func(t time.Time) float64 {
		if t.After(load) {
			return 0.5
		}
		return 0.1
	}
	series := cadvisor{ns: "shop", pod: "api-7d9f8c6b5-abcde", container: "app", id: "a1", from: base, to: base.Add(40 * time.Minute), cpuRate: busy, mem: constant(200 * mib)}.series()
	end := base.Add(40 * time.Minute)
	// zookeeper-0: idle (0.002 cores), sampled every 45 s.
	at, v := counterEvery(base, end, 45*time.Second, func(t time.Time) float64 { return 1000 + 0.002*t.Sub(base).Seconds() })
	series = append(series, sampled("shop", "zookeeper-0", "zookeeper", "z1", at, v, 300*mib)...)
	// worker: 0.5 cores, every 15 s, restarted in place (its counter back to zero) just after the
	// sample at 20:30, so the sample at 20:45, inside the 40 s run, holds 7.5 s.
	at, v = counterEvery(base, end, 15*time.Second, restartedAt(base, base.Add(20*time.Minute+30*time.Second), 0.5))
	series = append(series, sampled("shop", "worker-6c5b4d3a2-qwert", "w", "w1", at, v, 100*mib)...)
	// batch: 0.5 cores sampled every 45 s, restarted in place just after its sample at 15:00:
	// the one sample inside a run from 15:20 holds only the 22.5 s since.
	at, v = counterEvery(base, end, 45*time.Second, restartedAt(base, base.Add(15*time.Minute), 0.5))
	series = append(series, sampled("shop", "batch-5f4e3d2c1-plmok", "b", "b1", at, v, 100*mib)...)
	// The load's requests: the results keep per-interval use only beside per-interval requests.
	ok := promtest.NewK6Series(promtest.K6Labels("short", "checkout", "pay", "0", true))
	for i := 1; i <= 8; i++ {
		ok.Flush(load.Add(time.Duration(i)*5*time.Second), latencies(20, 0.005, 0.015, i)...)
	}
	series = append(series, ok.Series()...)
	prom.Write(t, series)

	workloads := []Workload{
		{Kind: perfexpv1alpha1.WorkloadKindDeployment, Namespace: "shop", Name: "api", Touched: true, Containers: []Container{{Name: "app"}}},
		{Kind: perfexpv1alpha1.WorkloadKindStatefulSet, Namespace: "shop", Name: "zookeeper", Listed: true, Containers: []Container{{Name: "zookeeper"}}},
		{Kind: perfexpv1alpha1.WorkloadKindDeployment, Namespace: "shop", Name: "worker", Listed: true, Containers: []Container{{Name: "w"}}},
		{Kind: perfexpv1alpha1.WorkloadKindDeployment, Namespace: "shop", Name: "batch", Listed: true, Containers: []Container{{Name: "b"}}},
	}
	analyze := func(t *testing.T, start, end time.Time) *result.Result {
		t.Helper()
		r, err := Analyze(context.Background(), prom.API(t), Input{Experiment: "w", TestID: "short", TargetNamespace: "shop", Start: start, End: end, Scenarios: []string{"checkout"}, Workloads: workloads,
			Analysis: perfexpv1alpha1.Analysis{Queries: []perfexpv1alpha1.CustomQuery{
				{Name: "api-cpu", Query: `max(rate(container_cpu_usage_seconds_total{namespace="{{.Namespace}}",pod=~"api-.*",container="app"}[{{.Window}}]))`},
				{Name: "zookeeper-cpu", Query: `max(rate(container_cpu_usage_seconds_total{namespace="{{.Namespace}}",pod="zookeeper-0"}[{{.Window}}]))`},
			}}})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	cpu := func(t *testing.T, r *result.Result, name string) *float64 {
		t.Helper()
		for _, w := range r.Workloads {
			if w.Name == name {
				if w.MemoryAvg == nil {
					t.Errorf("%s: no working set", name)
				}
				return w.CPUAvg
			}
		}
		t.Fatalf("workload %s missing from %+v", name, r.Workloads)
		return nil
	}
	near := func(t *testing.T, what string, got *float64, want, tol float64) {
		t.Helper()
		if got == nil || math.Abs(*got-want) > tol {
			t.Errorf("%s: cpu %v, want %v ± %v", what, deref(got), want, tol)
		}
	}

	t.Run("a 40 s run at 0.5 cores reads 0.5, in its intervals", func(t *testing.T) {
		r := analyze(t, load, load.Add(40*time.Second))
		// Read over the minute before the run's end: 0.367 (the idle seconds mixed in).
		near(t, "api", cpu(t, r, "api"), 0.5, 0.005)
		if q := r.Queries[0]; q.Value == nil || math.Abs(*q.Value-0.5) > 0.005 || q.Note != "" {
			t.Errorf("query %s: %v, note %q", q.Name, deref(q.Value), q.Note)
		}
		// A reset inside the run, between two samples inside it: rate() counts the 7.5 s since.
		near(t, "worker (reset)", cpu(t, r, "worker"), 0.5, 0.005)
		iv := r.Intervals.FindWorkload(string(perfexpv1alpha1.WorkloadKindDeployment), "shop", "api")
		if iv == nil {
			t.Fatal("no per-interval use")
		}
		var got []float64
		for _, v := range iv.CPU {
			if !math.IsNaN(v) {
				got = append(got, v)
			}
		}
		if len(got) == 0 || math.Abs(got[len(got)-1]-0.5) > 0.005 {
			t.Errorf("per-interval cpu %v, want the run's 0.5 in an interval", iv.CPU)
		}
		// Compared with a run like it, the row has both uses: never Unknown for want of one.
		c := judge.CompareRuns([]*result.Result{analyze(t, load, load.Add(40*time.Second))}, []*result.Result{r}, judge.CompareOptions{})
		found := false
		for _, m := range c.Metrics {
			if m.Kind == result.MetricCPU && m.Workload == "Deployment/shop/api" {
				found = true
				if m.Change == perfexpv1alpha1.ChangeUnknown || m.Value == nil || m.Baseline == nil {
					t.Errorf("cpu row %s %q", m.Change, m.Why)
				}
			}
		}
		if !found {
			t.Errorf("no cpu row for api in %+v", c.Metrics)
		}
	})

	t.Run("an idle container with no sample inside a 31 s run reads nothing rather than a guess", func(t *testing.T) {
		// zookeeper's samples at 15:00 and 15:45; the run 15:05-15:36. Without a sample inside
		// the window it cannot be told from a pod a rollout replaced just before the run
		// (sampledIn), so it has neither CPU nor working set, rather than the old pod's.
		start := base.Add(15*time.Minute + 5*time.Second)
		r := analyze(t, start, start.Add(31*time.Second))
		for _, w := range r.Workloads {
			if w.Name == "zookeeper" && (w.CPUAvg != nil || w.MemoryAvg != nil) {
				t.Errorf("zookeeper: cpu %v memory %v, want neither", deref(w.CPUAvg), deref(w.MemoryAvg))
			}
		}
		// A custom query's rate over {{.Window}} has nothing to go on, and says why (the
		// studies' writer-CPU query was once empty so).
		q := r.Queries[1]
		if q.Value != nil || q.Error != "" || !strings.Contains(q.Note, "the query returned no series at "+start.Add(31*time.Second).UTC().Format(time.RFC3339)) ||
			!strings.Contains(q.Note, "({{.Window}} = 31s)") || !strings.Contains(q.Note, "two samples") {
			t.Errorf("query %s: %v %q, note %q", q.Name, deref(q.Value), q.Error, q.Note)
		}
	})

	t.Run("an idle container with one sample inside a 31 s run reads its use since the last before", func(t *testing.T) {
		// zookeeper's samples at 14:15 and 15:00; the run 14:50-15:21.
		start := base.Add(14*time.Minute + 50*time.Second)
		r := analyze(t, start, start.Add(31*time.Second))
		near(t, "zookeeper", cpu(t, r, "zookeeper"), 0.002, 1e-6)
	})

	t.Run("a reset with one sample inside the run counts from zero", func(t *testing.T) {
		// batch's samples at 15:00 (before the reset) and 15:45 (22.5 s since it); the run
		// 15:20-15:51.
		start := base.Add(15*time.Minute + 20*time.Second)
		r := analyze(t, start, start.Add(31*time.Second))
		near(t, "batch", cpu(t, r, "batch"), 0.5, 0.005)
	})

	t.Run("a run that ended a moment ago: Prometheus takes the look past its end", func(t *testing.T) {
		// The look for a sample after the end reaches into the future right after a run.
		end := time.Now().Add(-2 * time.Second)
		if _, err := Analyze(context.Background(), prom.API(t), Input{Experiment: "w", TestID: "short", TargetNamespace: "shop", Start: end.Add(-31 * time.Second), End: end,
			Scenarios: []string{"checkout"}, Workloads: workloads}); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("a run longer than the rate window reads as before", func(t *testing.T) {
		r := analyze(t, base.Add(5*time.Minute), base.Add(15*time.Minute))
		near(t, "api", cpu(t, r, "api"), 0.1, 0.001)
		near(t, "zookeeper", cpu(t, r, "zookeeper"), 0.002, 1e-4)
		near(t, "worker", cpu(t, r, "worker"), 0.5, 0.005)
	})
}

func TestCadvisorRange(t *testing.T) {
	start := time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)
	tests := []struct {
		name      string
		window    time.Duration
		wantStart time.Time
		wantRW    string
	}{
		{"a 40 s run: one rate over the run, at its end", 40*time.Second + 500*time.Millisecond, start.Add(40*time.Second + 500*time.Millisecond), "40500ms"},
		{"a 10 min run: a rate over a minute every step, the first a minute in", 10 * time.Minute, start.Add(time.Minute), "60s"},
		{"a 6 h run: the step is the rate window", 6 * time.Hour, start.Add(72 * time.Second), "72s"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, rw := cadvisorRange(start, start.Add(tt.window))
			if !r.Start.Equal(tt.wantStart) || rw != tt.wantRW || !r.End.Equal(start.Add(tt.window)) {
				t.Errorf("range %v..%v rw %s, want start %v rw %s", r.Start, r.End, rw, tt.wantStart, tt.wantRW)
			}
		})
	}
}
