package analysis

import (
	"context"
	"math"
	"strings"
	"testing"
	"time"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/analysis/promtest"
	"github.com/perfexp/perfexp/internal/result"
)

// ksmLimits crafts kube-state-metrics' series for one container: its info and the limits set
// (0 is none), scraped every 30 s by Prometheus (so without timestamps of their own).
func ksmLimits(ns, pod, container string, from, to time.Time, cpu, mem float64) []promtest.Series {
	labels := func(name string, extra ...string) map[string]string {
		m := map[string]string{"__name__": name, "job": "kube-state-metrics", "namespace": ns, "pod": pod, "container": container}
		for i := 0; i+1 < len(extra); i += 2 {
			m[extra[i]] = extra[i+1]
		}
		return m
	}
	var one, cpus, mems []promtest.Float
	for t := from; !t.After(to); t = t.Add(30 * time.Second) {
		one = append(one, promtest.Float{T: t, V: 1})
		cpus = append(cpus, promtest.Float{T: t, V: cpu})
		mems = append(mems, promtest.Float{T: t, V: mem})
	}
	out := []promtest.Series{{Labels: labels("kube_pod_container_info", "image", "x"), Floats: one}}
	if cpu > 0 {
		out = append(out, promtest.Series{Labels: labels("kube_pod_container_resource_limits", "resource", "cpu", "unit", "core"), Floats: cpus})
	}
	if mem > 0 {
		out = append(out, promtest.Series{Labels: labels("kube_pod_container_resource_limits", "resource", "memory", "unit", "byte"), Floats: mems})
	}
	return out
}

// Story (issue 11): analysis runs after the environment was handed on. By then another
// experiment has removed inventory's CPU limit and raised its memory limit, a person has added
// limits to orders, and billing's CPU limit was quadrupled. The report must give each
// service's use as a share of the limits it ran with, not of its spec at analysis time: from
// cAdvisor's container_spec_* series, else kube-state-metrics', else (and then said so) the
// spec.
func TestCraftedLimitsAsTheyRan(t *testing.T) {
	prom := promtest.Start(t)
	base := time.Now().Add(-45 * time.Minute).Truncate(time.Minute)
	from, to := base, base.Add(40*time.Minute)
	start, end := base.Add(5*time.Minute), base.Add(35*time.Minute)

	var series []promtest.Series
	for _, c := range []cadvisor{
		// Ran with 0.5 cores and 256 MiB.
		{ns: "shop", pod: "inventory-6d5c4b3a2-aaaaa", container: "app", id: "i1", from: from, to: to, cpuCores: 0.25, mem: constant(128 * mib),
			periodsPerSec: 10, limits: true, cpuLimit: 0.5, memLimit: 256 * mib},
		// Ran with no limits at all: a period but no quota, a memory limit of 0.
		{ns: "shop", pod: "orders-5c4b3a2d1-bbbbb", container: "app", id: "o1", from: from, to: to, cpuCores: 1.5, mem: constant(600 * mib), limits: true},
		// cAdvisor's spec series dropped by the scrape configuration; kube-state-metrics has
		// the pod's limits.
		{ns: "shop", pod: "billing-4b3a2d1c0-ccccc", container: "app", id: "b1", from: from, to: to, cpuCores: 0.8, mem: constant(256 * mib), periodsPerSec: 10},
		// Neither source: the spec is all there is.
		{ns: "shop", pod: "legacy-3a2d1c0b9-ddddd", container: "app", id: "l1", from: from, to: to, cpuCores: 0.3, mem: constant(100 * mib), periodsPerSec: 10},
	} {
		series = append(series, c.series()...)
	}
	series = append(series, ksmLimits("shop", "billing-4b3a2d1c0-ccccc", "app", from, to, 1, 512*mib)...)
	prom.Write(t, series)

	// The specs as the cluster shows them at analysis time.
	r, err := Analyze(context.Background(), prom.API(t), Input{Experiment: "w", TestID: "none", Start: start, End: end, Scenarios: []string{"main"},
		Workloads: []Workload{
			{Kind: perfexpv1alpha1.WorkloadKindDeployment, Namespace: "shop", Name: "inventory", Listed: true, Containers: []Container{{Name: "app", MemoryLimit: ptr(1024 * mib)}}},
			{Kind: perfexpv1alpha1.WorkloadKindDeployment, Namespace: "shop", Name: "orders", Listed: true, Containers: []Container{{Name: "app", CPULimit: ptr(2), MemoryLimit: ptr(1024 * mib)}}},
			{Kind: perfexpv1alpha1.WorkloadKindDeployment, Namespace: "shop", Name: "billing", Containers: []Container{{Name: "app", CPULimit: ptr(4), MemoryLimit: ptr(512 * mib)}}},
			{Kind: perfexpv1alpha1.WorkloadKindDeployment, Namespace: "shop", Name: "legacy", Containers: []Container{{Name: "app", CPULimit: ptr(1), MemoryLimit: ptr(200 * mib)}}},
		}})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]result.WorkloadResult{}
	for _, w := range r.Workloads {
		got[w.Name] = w
	}
	near := func(p *float64, want, tol float64) bool { return p != nil && math.Abs(*p-want) <= tol }
	var specNote string
	for _, n := range r.Notes {
		if strings.Contains(n, "specs at analysis time") {
			specNote = n
		}
	}
	tests := []struct {
		name string
		ok   bool
		got  any
	}{
		{"inventory: 0.5 cores of limit, as it ran", near(got["inventory"].CPULimit, 0.5, 1e-9) && got["inventory"].CPULimitNote == "", []any{deref(got["inventory"].CPULimit), got["inventory"].CPULimitNote}},
		{"inventory: at 50% of its CPU limit", near(got["inventory"].CPUPercentOfLimit, 50, 1e-4), deref(got["inventory"].CPUPercentOfLimit)},
		{"inventory: at 50% of its 256 MiB, not 12.5% of 1 GiB", near(got["inventory"].MemoryPercentOfLimit, 50, 1e-6), deref(got["inventory"].MemoryPercentOfLimit)},
		{"inventory: the container row has the limits it ran with", len(got["inventory"].Containers) == 1 && near(got["inventory"].Containers[0].CPUPercentOfLimit, 50, 1e-4) &&
			near(got["inventory"].Containers[0].MemoryLimit, 256*mib, 1), got["inventory"].Containers},
		{"orders: ran without a CPU limit", got["orders"].CPULimitNote == "no limit" && got["orders"].CPUPercentOfLimit == nil, []any{got["orders"].CPULimitNote, deref(got["orders"].CPUPercentOfLimit)}},
		{"orders: ran without a memory limit", got["orders"].MemoryLimitNote == "no limit" && got["orders"].MemoryPercentOfLimit == nil, []any{got["orders"].MemoryLimitNote, deref(got["orders"].MemoryPercentOfLimit)}},
		{"billing: kube-state-metrics' 1 core, not the spec's 4", near(got["billing"].CPUPercentOfLimit, 80, 1e-4) && near(got["billing"].CPULimit, 1, 1e-9),
			[]any{deref(got["billing"].CPUPercentOfLimit), deref(got["billing"].CPULimit)}},
		{"billing: 50% of its 512 MiB", near(got["billing"].MemoryPercentOfLimit, 50, 1e-6), deref(got["billing"].MemoryPercentOfLimit)},
		{"legacy: the spec's limit, for want of another", near(got["legacy"].CPUPercentOfLimit, 30, 1e-4) && near(got["legacy"].MemoryPercentOfLimit, 50, 1e-6),
			[]any{deref(got["legacy"].CPUPercentOfLimit), deref(got["legacy"].MemoryPercentOfLimit)}},
		{"the report names legacy alone as read from its spec", strings.Contains(specNote, "legacy") && !strings.Contains(specNote, "inventory") && !strings.Contains(specNote, "billing"), specNote},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if !tc.ok {
				t.Errorf("got %v", tc.got)
			}
		})
	}
}
