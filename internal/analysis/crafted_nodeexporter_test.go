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

// withLabels returns s with extra labels.
func withLabels(s promtest.Series, extra map[string]string) promtest.Series {
	l := map[string]string{}
	for k, v := range s.Labels {
		l[k] = v
	}
	for k, v := range extra {
		l[k] = v
	}
	s.Labels = l
	return s
}

// nodeExporterCPU crafts node_exporter's node_cpu_seconds_total of a machine with cpus CPUs,
// busy cores of them in all: per CPU a share in user, system and softirq, and the rest idle
// with a tenth of it in iowait (which is not busy).
func nodeExporterCPU(labels map[string]string, cpus int, busy float64, from, to time.Time) []promtest.Series {
	b := busy / float64(cpus)
	shares := map[string]float64{"user": 0.7 * b, "system": 0.2 * b, "softirq": 0.1 * b, "idle": 0.9 * (1 - b), "iowait": 0.1 * (1 - b)}
	var out []promtest.Series
	for c := range cpus {
		for mode, share := range shares {
			l := map[string]string{"__name__": "node_cpu_seconds_total", "cpu": string(rune('0' + c)), "mode": mode}
			for k, v := range labels {
				l[k] = v
			}
			var fs []promtest.Float
			for t := from; !t.After(to); t = t.Add(15 * time.Second) {
				fs = append(fs, promtest.Float{T: t, V: 90000 + share*t.Sub(from).Seconds()})
			}
			out = append(out, promtest.Series{Labels: l, Floats: fs})
		}
	}
	return out
}

func unameInfo(instance, nodename string, from, to time.Time) promtest.Series {
	var fs []promtest.Float
	for t := from; !t.After(to); t = t.Add(15 * time.Second) {
		fs = append(fs, promtest.Float{T: t, V: 1})
	}
	return promtest.Series{Labels: map[string]string{"__name__": "node_uname_info", "job": "node-exporter", "instance": instance, "nodename": nodename}, Floats: fs}
}

// TestCraftedNodeLoadFromNodeExporter writes cAdvisor's and node_exporter's series of several
// nodes, labelled as kube-prometheus-stack labels them (cAdvisor: instance the kubelet's
// InternalIP:10250 and node the node's name; node_exporter: instance the node's
// InternalIP:9100, since its DaemonSet runs on the host network, and no node label), and as
// relabelled setups do, to a real Prometheus.
func TestCraftedNodeLoadFromNodeExporter(t *testing.T) {
	prom := promtest.Start(t)
	base := time.Now().Add(-40 * time.Minute).Truncate(time.Minute)
	start, end := base.Add(5*time.Minute), base.Add(15*time.Minute)
	to := end.Add(2 * time.Minute)
	kubelet := func(ip, node string) map[string]string {
		return map[string]string{"instance": ip + ":10250", "node": node}
	}
	exporter := func(instance string) map[string]string {
		return map[string]string{"job": "node-exporter", "instance": instance, "namespace": "monitoring", "pod": "kps-prometheus-node-exporter-x1", "container": "node-exporter", "endpoint": "http-metrics"}
	}
	var series []promtest.Series
	add := func(ss ...promtest.Series) { series = append(series, ss...) }
	// The burner: 10.0.0.4 (node n4) ran the experiment's quiet pods (0.1 cores) while
	// processes outside the cluster kept it busy: node_exporter reads 1.96 of 2 cores. No root
	// cgroup series (kube-prometheus-stack drops them), no other pod.
	add(withLabels(nodeCPU("10.0.0.4:10250", "burn", "svc-5d4c3b2a1-aaaaa", 0.1, base, to), kubelet("10.0.0.4", "n4")),
		withLabels(machineCores("10.0.0.4:10250", 2, base, to), kubelet("10.0.0.4", "n4")))
	add(nodeExporterCPU(exporter("10.0.0.4:9100"), 2, 1.96, base, to)...)
	// Matched by name: node_exporter's instance relabelled to the node's name; the root cgroup
	// is scraped too (1.0 cores) but node_exporter (1.5, irq time and all) is preferred.
	add(withLabels(nodeCPU("10.0.0.5:10250", "byname", "svc-5d4c3b2a1-bbbbb", 0.4, base, to), kubelet("10.0.0.5", "n5")),
		withLabels(nodeCPU("10.0.0.5:10250", "", "", 1.0, base, to), kubelet("10.0.0.5", "n5")),
		withLabels(machineCores("10.0.0.5:10250", 4, base, to), kubelet("10.0.0.5", "n5")))
	add(nodeExporterCPU(exporter("n5"), 4, 1.5, base, to)...)
	// Scraped twice (two jobs): counted once.
	add(nodeExporterCPU(map[string]string{"job": "node", "instance": "n5"}, 4, 1.5, base, to)...)
	// Matched by the kernel's host name: cAdvisor's instance relabelled to the node's name (no
	// node label), node_exporter's left at its address; no machine_cpu_cores, so node_exporter
	// counts the CPUs.
	add(nodeCPU("n6", "byuname", "svc-5d4c3b2a1-ccccc", 0.5, base, to))
	add(nodeExporterCPU(exporter("10.0.0.6:9100"), 4, 2.5, base, to)...)
	add(unameInfo("10.0.0.6:9100", "n6", base, to))
	// No node_exporter on 10.0.0.7, only on another node: the pods are summed, and the
	// report says what that misses.
	add(withLabels(nodeCPU("10.0.0.7:10250", "blind", "svc-5d4c3b2a1-ddddd", 0.2, base, to), kubelet("10.0.0.7", "n7")),
		withLabels(nodeCPU("10.0.0.7:10250", "noisy", "batch-6e5d4c3b2-eeeee", 0.3, base, to), kubelet("10.0.0.7", "n7")))
	// node_exporter on 10.0.0.8 stopped before the window: the root cgroup is read instead.
	add(withLabels(nodeCPU("10.0.0.8:10250", "stopped", "svc-5d4c3b2a1-fffff", 0.3, base, to), kubelet("10.0.0.8", "n8")),
		withLabels(nodeCPU("10.0.0.8:10250", "", "", 0.9, base, to), kubelet("10.0.0.8", "n8")))
	add(nodeExporterCPU(exporter("10.0.0.8:9100"), 2, 1.7, base, start.Add(-2*time.Minute))...)
	prom.Write(t, series)

	read := func(t *testing.T, ns string) (*result.NodeLoad, string) {
		t.Helper()
		nl, note, err := readNodeLoad(context.Background(), prom.API(t), Input{TargetNamespace: ns, Start: start, End: end}, start, end)
		if err != nil || nl == nil {
			t.Fatalf("readNodeLoad: %+v %q %v", nl, note, err)
		}
		return nl, note
	}
	near := func(got, want float64) bool { return math.Abs(got-want) < 1e-6 }

	t.Run("the burner: node_exporter sees the load outside the cluster", func(t *testing.T) {
		nl, note := read(t, "burn")
		if nl.Source != result.SourceNodeExporter || nl.Node != "10.0.0.4:10250" || note != "" {
			t.Fatalf("got %+v, note %q", nl, note)
		}
		if !near(nl.OtherCores, 1.86) || !near(nl.OtherPeakCores, 1.86) || !near(nl.OwnCores, 0.1) || nl.Cores != 2 {
			t.Errorf("want 1.86 cores outside the experiment and 0.1 in it on 2 cores, got %+v", nl)
		}
		s := nl.String()
		if !strings.Contains(s, "1.86 of 2 cores, 93 %") || strings.Contains(s, "not seen") {
			t.Errorf("the line should name the neighbour's load: %q", s)
		}
		if notes := saturationNotes(nil, nl); len(notes) != 1 || !strings.Contains(notes[0], "1.96 of its 2 cores busy") {
			t.Errorf("the node was saturated: notes %q", notes)
		}
	})
	t.Run("node_exporter matched by node name, preferred to the root cgroup, scraped twice", func(t *testing.T) {
		nl, _ := read(t, "byname")
		if nl.Source != result.SourceNodeExporter || !near(nl.OtherCores, 1.1) || nl.Cores != 4 {
			t.Errorf("want node_exporter's 1.5 less the experiment's 0.4 on 4 cores, got %+v", nl)
		}
	})
	t.Run("node_exporter matched by the kernel's host name, counting the CPUs", func(t *testing.T) {
		nl, _ := read(t, "byuname")
		if nl.Source != result.SourceNodeExporter || nl.Node != "n6" || !near(nl.OtherCores, 2.0) || nl.Cores != 4 {
			t.Errorf("want 2.5 less 0.5 on node_exporter's 4 CPUs, got %+v", nl)
		}
	})
	t.Run("node_exporter without samples in the window: the root cgroup", func(t *testing.T) {
		nl, note := read(t, "stopped")
		if nl.Source != result.SourceRootCgroup || !near(nl.OtherCores, 0.6) || !strings.Contains(note, "series in the window") || strings.Contains(note, "10.0.0.8:9100") {
			t.Errorf("got %+v, note %q", nl, note)
		}
	})
	t.Run("no node_exporter for the node: the pods, and the line says what is not seen", func(t *testing.T) {
		nl, note := read(t, "blind")
		if nl.Source != result.SourcePods || !near(nl.OtherCores, 0.3) || nl.SeesOutsidePods() {
			t.Errorf("got %+v", nl)
		}
		if s := nl.String(); !strings.Contains(s, "(processes outside pods not seen: no node_exporter") {
			t.Errorf("line %q", s)
		}
		for _, want := range []string{"10.0.0.4:9100", "10.0.0.6:9100", "n5", "name none of the experiment's nodes (10.0.0.7:10250)"} {
			if !strings.Contains(note, want) {
				t.Errorf("note %q lacks %q", note, want)
			}
		}
	})
}
