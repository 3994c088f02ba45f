package sweep

import (
	"fmt"
	"reflect"
	"slices"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
)

// DefaultSettle is every run's spec.settle when the sweep rolls its pods (spec.podAge Equal)
// and its template sets none: the new pods' start and the old pods' shutdown are left out of
// the warm-up.
const DefaultSettle = 30 * time.Second

// maxFreshSelectors bounds spec.freshPods.workloads (the API's MaxItems).
const maxFreshSelectors = 32

// maxNames bounds the names of one workload selector (the API's MaxItems).
const maxNames = 128

// PodAgeEqual reports whether the sweep's runs start on pods of equal age (the default).
func PodAgeEqual(s *perfexpv1alpha1.PerfSweep) bool {
	return s.Spec.PodAge != perfexpv1alpha1.SweepPodAgeAsFound
}

// FreshPods is what every run of the sweep rolls before its load when spec.podAge is Equal:
// the union of the workloads the arms' variants change (their workload changes, the Kafka
// bootstrap switch's workloads, and the Deployments and StatefulSets their patches name), the
// baseline's included. nil when the sweep keeps the pods as found or no arm changes a workload.
// Workloads named by name are gathered into one selector per kind; selectors by label are kept
// as they are, each once.
func (p *Plan) FreshPods(s *perfexpv1alpha1.PerfSweep) (*perfexpv1alpha1.FreshPods, error) {
	if !PodAgeEqual(s) {
		return nil, nil
	}
	names := map[perfexpv1alpha1.WorkloadKind][]string{}
	var bySelector []perfexpv1alpha1.WorkloadSelector
	add := func(sel perfexpv1alpha1.WorkloadSelector) {
		kind := sel.Kind
		if kind == "" {
			kind = perfexpv1alpha1.WorkloadKindDeployment
		}
		if len(sel.Names) > 0 {
			for _, n := range sel.Names {
				if !slices.Contains(names[kind], n) {
					names[kind] = append(names[kind], n)
				}
			}
			return
		}
		if sel.Selector == nil {
			return
		}
		c := perfexpv1alpha1.WorkloadSelector{Kind: kind, Selector: sel.Selector.DeepCopy()}
		if !slices.ContainsFunc(bySelector, func(o perfexpv1alpha1.WorkloadSelector) bool { return reflect.DeepEqual(o, c) }) {
			bySelector = append(bySelector, c)
		}
	}
	for _, a := range p.Arms {
		v := a.Variant
		if v == nil {
			continue
		}
		for _, w := range v.Workloads {
			add(w.WorkloadSelector)
		}
		if v.Kafka != nil && v.Kafka.Bootstrap != nil {
			add(v.Kafka.Bootstrap.Workloads)
		}
		for _, pt := range v.Patches {
			gv, err := schema.ParseGroupVersion(pt.Target.APIVersion)
			kind := perfexpv1alpha1.WorkloadKind(pt.Target.Kind)
			if err == nil && gv.Group == appsv1.GroupName && (kind == perfexpv1alpha1.WorkloadKindDeployment || kind == perfexpv1alpha1.WorkloadKindStatefulSet) {
				add(perfexpv1alpha1.WorkloadSelector{Kind: kind, Names: []string{pt.Target.Name}})
			}
		}
	}
	var out []perfexpv1alpha1.WorkloadSelector
	for _, kind := range []perfexpv1alpha1.WorkloadKind{perfexpv1alpha1.WorkloadKindDeployment, perfexpv1alpha1.WorkloadKindStatefulSet} {
		ns := slices.Sorted(slices.Values(names[kind]))
		for len(ns) > 0 {
			n := min(len(ns), maxNames)
			out = append(out, perfexpv1alpha1.WorkloadSelector{Kind: kind, Names: ns[:n]})
			ns = ns[n:]
		}
	}
	out = append(out, bySelector...)
	if len(out) == 0 {
		return nil, nil
	}
	if len(out) > maxFreshSelectors {
		return nil, fmt.Errorf("podAge Equal would roll the workloads of %d selectors, more than the %d one run may roll; name the workloads, or set podAge: AsFound", len(out), maxFreshSelectors)
	}
	return &perfexpv1alpha1.FreshPods{Workloads: out}, nil
}

// settle is every run's spec.settle: the template's, or DefaultSettle when the runs roll
// their pods.
func settle(s *perfexpv1alpha1.PerfSweep, fresh *perfexpv1alpha1.FreshPods) *metav1.Duration {
	if t := s.Spec.Template.Settle; t != nil {
		return t.DeepCopy()
	}
	if fresh != nil {
		return &metav1.Duration{Duration: DefaultSettle}
	}
	return nil
}
