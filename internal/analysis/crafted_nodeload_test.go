package analysis

import (
	"context"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/perfexp/perfexp/internal/analysis/promtest"
	"github.com/perfexp/perfexp/internal/result"
)

// nodeCPU crafts one cAdvisor CPU counter of a node (instance): the root cgroup (id "/") when
// ns is empty, else one container of a pod in ns.
func nodeCPU(instance, ns, pod string, cores float64, from, to time.Time) promtest.Series {
	l := map[string]string{"__name__": "container_cpu_usage_seconds_total", "job": "kubelet", "metrics_path": "/metrics/cadvisor", "instance": instance}
	if ns == "" {
		l["id"] = "/"
	} else {
		l["namespace"], l["pod"], l["container"], l["id"] = ns, pod, "app", "/kubepods/"+pod+"/c"
	}
	var fs []promtest.Float
	for t := from; !t.After(to); t = t.Add(15 * time.Second) {
		fs = append(fs, promtest.Float{T: t, V: 5000 + cores*t.Sub(from).Seconds()})
	}
	return promtest.Series{Labels: l, Floats: fs}
}

func machineCores(instance string, cores float64, from, to time.Time) promtest.Series {
	var fs []promtest.Float
	for t := from; !t.After(to); t = t.Add(15 * time.Second) {
		fs = append(fs, promtest.Float{T: t, V: cores})
	}
	return promtest.Series{Labels: map[string]string{"__name__": "machine_cpu_cores", "job": "kubelet", "metrics_path": "/metrics/cadvisor", "instance": instance}, Floats: fs}
}

// TestCraftedNodeLoad writes a node's cAdvisor series to a real Prometheus: the experiment's
// pods, a neighbour's pod, and the root cgroup that also holds processes outside pods.
func TestCraftedNodeLoad(t *testing.T) {
	prom := promtest.Start(t)
	base := time.Now().Add(-40 * time.Minute).Truncate(time.Minute)
	start, end := base.Add(5*time.Minute), base.Add(15*time.Minute)
	to := end.Add(2 * time.Minute)
	prom.Write(t, []promtest.Series{
		// n1 ran the experiment: its service (0.5 cores) and its runner (0.3), a neighbour's
		// pod (0.6) and 0.2 cores outside any pod: 1.6 cores in the root cgroup.
		nodeCPU("n1", "shop", "cart-5d4c3b2a1-aaaaa", 0.5, base, to),
		nodeCPU("n1", "perf", "exp-k6-main-0-bbbbb", 0.3, base, to),
		nodeCPU("n1", "noisy", "batch-6e5d4c3b2-ccccc", 0.6, base, to),
		nodeCPU("n1", "", "", 1.6, base, to),
		machineCores("n1", 4, base, to),
		// n2 ran nothing of the experiment: its load does not count, however high.
		nodeCPU("n2", "noisy", "batch-6e5d4c3b2-ddddd", 3.5, base, to),
		nodeCPU("n2", "", "", 3.6, base, to),
		machineCores("n2", 4, base, to),
		// n3 has no root cgroup series (kube-prometheus-stack drops them): pods are summed.
		nodeCPU("n3", "other", "shop2-5d4c3b2a1-eeeee", 0.25, base, to),
		nodeCPU("n3", "noisy", "batch-6e5d4c3b2-fffff", 0.45, base, to),
	})
	in := Input{Namespace: "perf", TargetNamespace: "shop", Start: start, End: end}
	nl, note, err := readNodeLoad(context.Background(), prom.API(t), in, start, end)
	if err != nil || note != "" {
		t.Fatalf("readNodeLoad: %v %q", err, note)
	}
	near := func(got, want float64) bool { return math.Abs(got-want) < 1e-6 }
	checks := []struct {
		name string
		ok   bool
		got  any
	}{
		{"the experiment's node is n1", nl.Node == "n1" && nl.Nodes == 1, []any{nl.Node, nl.Nodes}},
		{"read from the root cgroup", nl.Source == result.SourceRootCgroup, nl.Source},
		{"other: the neighbour's 0.6 and 0.2 outside pods", near(nl.OtherCores, 0.8) && near(nl.OtherPeakCores, 0.8), []any{nl.OtherCores, nl.OtherPeakCores}},
		{"own: service and runner, 0.8", near(nl.OwnCores, 0.8), nl.OwnCores},
		{"4 cores, 20 %", near(nl.Cores, 4) && near(nl.OtherPercent(), 20), []any{nl.Cores, nl.OtherPercent()}},
		{"every step of the window", nl.Steps >= 8, nl.Steps},
	}
	for _, c := range checks {
		t.Run(c.name, func(t *testing.T) {
			if !c.ok {
				t.Errorf("got %v", c.got)
			}
		})
	}

	t.Run("without the root cgroup the pods are summed", func(t *testing.T) {
		nl, _, err := readNodeLoad(context.Background(), prom.API(t), Input{TargetNamespace: "other", Start: start, End: end}, start, end)
		if err != nil {
			t.Fatal(err)
		}
		if nl.Node != "n3" || nl.Source != result.SourcePods || !near(nl.OtherCores, 0.45) || nl.Cores != 0 || nl.OtherPercent() != -1 {
			t.Errorf("got %+v", nl)
		}
	})
	t.Run("no series of the experiment: unknown, with a note", func(t *testing.T) {
		nl, note, err := readNodeLoad(context.Background(), prom.API(t), Input{TargetNamespace: "absent", Start: start, End: end}, start, end)
		if err != nil || nl != nil || !strings.Contains(note, "unknown") {
			t.Errorf("got %+v %q %v", nl, note, err)
		}
	})
}

// TestCraftedRunners reads the k6 pods' use from cAdvisor series in a real Prometheus: a
// throttled runner and a runner without a CPU limit, while another experiment's runner and the
// warm-up are left out; the report then says k6 waited.
func TestCraftedRunners(t *testing.T) {
	prom := promtest.Start(t)
	base := time.Now().Add(-40 * time.Minute).Truncate(time.Minute)
	start, end := base.Add(5*time.Minute), base.Add(15*time.Minute)
	to := end.Add(2 * time.Minute)
	var series []promtest.Series
	for _, c := range []cadvisor{
		{ns: "perf", pod: "exp-k6-main-0-aaaaa", container: "k6", id: "r0", from: base, to: to, cpuCores: 0.9, mem: constant(300 * mib),
			periodsPerSec: 10, throttledPerSec: 4},
		{ns: "perf", pod: "exp-k6-main-1-bbbbb", container: "k6", id: "r1", from: base, to: to, cpuCores: 0.4, mem: constant(120 * mib)},
		{ns: "perf", pod: "exp-k6-warm-up-0-ccccc", container: "k6", id: "w", from: base, to: to, cpuCores: 0.2, mem: constant(50 * mib)},
		{ns: "perf", pod: "other-k6-main-0-ddddd", container: "k6", id: "o", from: base, to: to, cpuCores: 1.5, mem: constant(50 * mib)},
	} {
		series = append(series, c.series()...)
	}
	prom.Write(t, series)
	in := Input{Namespace: "perf", RunnerPods: `(?:exp-k6-main)-[0-9]+-[a-z0-9]+`}
	rs, err := readRunners(context.Background(), prom.API(t), in, start, end)
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != 2 || rs[0].Pod != "exp-k6-main-0-aaaaa" || rs[1].Pod != "exp-k6-main-1-bbbbb" {
		t.Fatalf("runners %+v", rs)
	}
	near := func(got, want float64) bool { return math.Abs(got-want) < 1e-6 }
	if !near(rs[0].CPUAvg, 0.9) || !near(rs[0].CPUMax, 0.9) || !near(rs[0].MemoryMax, 300*mib) || rs[0].ThrottledPercent == nil || !near(*rs[0].ThrottledPercent, 40) {
		t.Errorf("throttled runner %+v (throttled %v)", rs[0], deref(rs[0].ThrottledPercent))
	}
	if !near(rs[1].CPUAvg, 0.4) || rs[1].ThrottledPercent != nil {
		t.Errorf("runner without a limit %+v", rs[1])
	}
	notes := saturationNotes(rs, &result.NodeLoad{Node: "n1", Cores: 2, OtherCores: 0.6, OwnCores: 1.3})
	if len(notes) != 2 || !strings.Contains(notes[0], "exp-k6-main-0-aaaaa (40.0 % of its CPU periods)") || !strings.Contains(notes[1], "1.90 of its 2 cores") {
		t.Errorf("notes %q", notes)
	}
	if notes := saturationNotes(rs[1:], &result.NodeLoad{Cores: 2, OtherCores: 0.2, OwnCores: 1.0}); len(notes) != 0 {
		t.Errorf("a runner without a limit on a node at 60 %% got notes %q", notes)
	}
}
