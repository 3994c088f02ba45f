package analyzer

import (
	corev1 "k8s.io/api/core/v1"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/analysis"
)

// workloadQueries are the lists to read besides the touched workloads: each observe entry
// (its namespace and kind defaulted), then every Deployment and StatefulSet of the target
// namespace, as a performance report shows every service.
func workloadQueries(exp *perfexpv1alpha1.PerfExperiment) []workloadQuery {
	target := exp.TargetNamespace()
	var out []workloadQuery
	if exp.Spec.Analysis != nil {
		for _, o := range exp.Spec.Analysis.Observe {
			q := workloadQuery{kind: o.Kind, ns: o.Namespace, selector: o.WorkloadSelector, routes: o.Routes}
			if q.ns == "" {
				q.ns = target
			}
			if q.kind == "" {
				q.kind = perfexpv1alpha1.WorkloadKindDeployment
			}
			out = append(out, q)
		}
	}
	for _, kind := range []perfexpv1alpha1.WorkloadKind{perfexpv1alpha1.WorkloadKindDeployment, perfexpv1alpha1.WorkloadKindStatefulSet} {
		out = append(out, workloadQuery{kind: kind, ns: target, listed: true})
	}
	return out
}

// mergeWorkloads appends to the touched workloads those each query found that no earlier
// source named, in order; Listed marks those reported only because they run in the target
// namespace (the analysis keeps the largest of them when there are many). found[i] is what
// queries[i] found.
func mergeWorkloads(touched []analysis.Workload, queries []workloadQuery, found [][]analysis.Workload) []analysis.Workload {
	seen := map[workloadKey]bool{}
	out := append([]analysis.Workload(nil), touched...)
	for _, wl := range touched {
		seen[workloadKey{wl.Kind, wl.Namespace, wl.Name}] = true
	}
	for i, q := range queries {
		for _, wl := range found[i] {
			k := workloadKey{q.kind, q.ns, wl.Name}
			if seen[k] {
				continue
			}
			seen[k] = true
			wl.Listed = q.listed
			out = append(out, wl)
		}
	}
	return out
}

// routeSources are the workloads whose routes are read: each one an observe entry with routes
// found, once (the first entry naming it decides its histogram).
func routeSources(queries []workloadQuery, found [][]analysis.Workload) []analysis.RouteSource {
	seen := map[workloadKey]bool{}
	var out []analysis.RouteSource
	for i, q := range queries {
		if q.routes == nil {
			continue
		}
		for _, wl := range found[i] {
			k := workloadKey{q.kind, q.ns, wl.Name}
			if seen[k] {
				continue
			}
			seen[k] = true
			out = append(out, analysis.RouteSource{Kind: q.kind, Namespace: q.ns, Name: wl.Name, Spec: *q.routes})
		}
	}
	return out
}

func containersOf(spec *corev1.PodSpec) []analysis.Container {
	if spec == nil {
		return nil
	}
	out := make([]analysis.Container, 0, len(spec.Containers))
	for _, c := range spec.Containers {
		out = append(out, containerFrom(c.Name, c.Resources.Requests, c.Resources.Limits))
	}
	return out
}

func containerFrom(name string, requests, limits corev1.ResourceList) analysis.Container {
	get := func(l corev1.ResourceList, r corev1.ResourceName) *float64 {
		q, ok := l[r]
		if !ok {
			return nil
		}
		v := q.AsApproximateFloat64()
		return &v
	}
	return analysis.Container{Name: name,
		CPURequest: get(requests, corev1.ResourceCPU), CPULimit: get(limits, corev1.ResourceCPU),
		MemoryRequest: get(requests, corev1.ResourceMemory), MemoryLimit: get(limits, corev1.ResourceMemory)}
}
