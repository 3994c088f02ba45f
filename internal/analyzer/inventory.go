package analyzer

import (
	"context"
	"fmt"
	"slices"
	"sort"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/analysis"
	"github.com/perfexp/perfexp/internal/text"
	"github.com/perfexp/perfexp/internal/variant"
)

// Inventory reads what the touched and observed workloads (and the target namespace's, as the
// report lists them) run with now: their images, replicas, resources, env (a Secret's or
// ConfigMap's value by reference only) and the nodes of their running pods, with the fields
// the variant changed on each. The controller calls it once the measured window began, after
// the variant was applied and rolled out; the analysis compares it with the baseline's.
func (a *PrometheusAnalyzer) Inventory(ctx context.Context, exp *perfexpv1alpha1.PerfExperiment, now metav1.Time) (*perfexpv1alpha1.Inventory, error) {
	touched := touchedWorkloads(exp.Status.Environment)
	queries := workloadQueries(exp)
	found := make([][]analysis.Workload, len(queries))
	for i, q := range queries {
		ws, err := a.observed(ctx, q.kind, q.ns, q.selector)
		if err != nil {
			return nil, err
		}
		found[i] = ws
	}
	declared := map[workloadKey][]string{}
	if env := exp.Status.Environment; env != nil {
		for _, t := range env.Touched {
			k := workloadKey{perfexpv1alpha1.WorkloadKind(t.Kind), t.Namespace, t.Name}
			declared[k] = append(declared[k], variant.DeclaredFields(t)...)
		}
	}
	inv := &perfexpv1alpha1.Inventory{RecordedAt: now}
	for _, wl := range mergeWorkloads(touched, queries, found) {
		if len(inv.Workloads) == perfexpv1alpha1.MaxInventoryWorkloads {
			inv.Dropped++
			continue
		}
		w, err := a.inventoryOf(ctx, wl.Kind, wl.Namespace, wl.Name)
		if err != nil {
			return nil, err
		}
		w.Declared = declared[workloadKey{wl.Kind, wl.Namespace, wl.Name}]
		if len(w.Declared) > 64 {
			w.Declared = append(w.Declared[:63], "*")
		}
		inv.Workloads = append(inv.Workloads, w)
	}
	inv.Bound()
	return inv, nil
}

// inventoryOf reads one Deployment or StatefulSet and the nodes of its running pods.
func (a *PrometheusAnalyzer) inventoryOf(ctx context.Context, kind perfexpv1alpha1.WorkloadKind, ns, name string) (perfexpv1alpha1.WorkloadInventory, error) {
	out := perfexpv1alpha1.WorkloadInventory{Kind: string(kind), Namespace: ns, Name: name}
	key := client.ObjectKey{Namespace: ns, Name: name}
	var (
		replicas *int32
		sel      *metav1.LabelSelector
		tmpl     *corev1.PodTemplateSpec
		err      error
	)
	if kind == perfexpv1alpha1.WorkloadKindStatefulSet {
		s := &appsv1.StatefulSet{}
		err = a.Client.Get(ctx, key, s)
		replicas, sel, tmpl = s.Spec.Replicas, s.Spec.Selector, &s.Spec.Template
	} else {
		d := &appsv1.Deployment{}
		err = a.Client.Get(ctx, key, d)
		replicas, sel, tmpl = d.Spec.Replicas, d.Spec.Selector, &d.Spec.Template
	}
	if apierrors.IsNotFound(err) {
		out.Missing = "not found"
		return out, nil
	}
	if err != nil {
		return out, err
	}
	out.Replicas = replicas
	for i, c := range tmpl.Spec.Containers {
		if i == perfexpv1alpha1.MaxInventoryContainers {
			break
		}
		out.Containers = append(out.Containers, containerInventory(c))
	}
	if sel == nil {
		return out, nil
	}
	s, err := metav1.LabelSelectorAsSelector(sel)
	if err != nil {
		return out, nil //nolint:nilerr // a selector the API server accepted; no nodes then
	}
	// The manager caches only perfexp's own pods: the workloads' are read past the cache.
	var reader client.Reader = a.Client
	if a.APIReader != nil {
		reader = a.APIReader
	}
	pods := &corev1.PodList{}
	if err := reader.List(ctx, pods, client.InNamespace(ns), client.MatchingLabelsSelector{Selector: s}); err != nil {
		return out, err
	}
	for _, p := range pods.Items {
		if p.Spec.NodeName != "" && p.Status.Phase == corev1.PodRunning && p.DeletionTimestamp == nil && !slices.Contains(out.Nodes, p.Spec.NodeName) {
			out.Nodes = append(out.Nodes, p.Spec.NodeName)
		}
	}
	sort.Strings(out.Nodes)
	if len(out.Nodes) > 64 {
		out.Nodes = out.Nodes[:64]
	}
	return out, nil
}

func containerInventory(c corev1.Container) perfexpv1alpha1.ContainerInventory {
	out := perfexpv1alpha1.ContainerInventory{Name: c.Name, Image: c.Image, Requests: quantities(c.Resources.Requests), Limits: quantities(c.Resources.Limits)}
	for _, e := range c.Env {
		if len(out.Env) == perfexpv1alpha1.MaxInventoryEnv {
			out.EnvDropped++
			continue
		}
		out.Env = append(out.Env, envInventory(e))
	}
	return out
}

func quantities(l corev1.ResourceList) map[string]string {
	if len(l) == 0 {
		return nil
	}
	m := make(map[string]string, len(l))
	for k, q := range l {
		m[string(k)] = q.String()
	}
	return m
}

// envInventory keeps an env var's literal value (cut to MaxInventoryValue characters) or, for a
// valueFrom, only where the value comes from: a Secret's value never enters the status.
func envInventory(e corev1.EnvVar) perfexpv1alpha1.EnvVarInventory {
	out := perfexpv1alpha1.EnvVarInventory{Name: e.Name, Value: text.Truncate(e.Value, perfexpv1alpha1.MaxInventoryValue)}
	f := e.ValueFrom
	switch {
	case f == nil:
	case f.SecretKeyRef != nil:
		out.From = fmt.Sprintf("secret %s/%s", f.SecretKeyRef.Name, f.SecretKeyRef.Key)
	case f.ConfigMapKeyRef != nil:
		out.From = fmt.Sprintf("configMap %s/%s", f.ConfigMapKeyRef.Name, f.ConfigMapKeyRef.Key)
	case f.FieldRef != nil:
		out.From = "field " + f.FieldRef.FieldPath
	case f.ResourceFieldRef != nil:
		out.From = "resource " + f.ResourceFieldRef.Resource
	default:
		out.From = "other source"
	}
	return out
}
