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
	"github.com/perfexp/perfexp/internal/result"
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
	if !PodAgeEqual(s) || s.Spec.Bisect != nil || s.Spec.Capacity != nil {
		// A capacity search has no baseline; a bisect's steps and old releases both roll
		// what they change (images), and its budget of short runs is its design.
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

// podAgeNote states the sweep's choice of pod age and what the runs' results recorded of it:
// the range of time from the end of the rollouts to the load's start, per side.
func podAgeNote(s *perfexpv1alpha1.PerfSweep, p *Plan, results map[string][]*result.Result) string {
	fresh, err := p.FreshPods(s)
	if err != nil {
		return ""
	}
	var base, arms []float64
	asFound := 0
	for _, a := range p.Arms {
		for _, r := range results[a.Name] {
			switch {
			case r.PodAge == nil:
			case r.PodAge.RolledSecondsBeforeLoad == nil:
				asFound++
			case a.IsBaseline():
				base = append(base, *r.PodAge.RolledSecondsBeforeLoad)
			default:
				arms = append(arms, *r.PodAge.RolledSecondsBeforeLoad)
			}
		}
	}
	span := func(vs []float64) string {
		if len(vs) == 0 {
			return "no run recorded it"
		}
		lo, hi := slices.Min(vs), slices.Max(vs)
		if fmt.Sprintf("%.0f", lo) == fmt.Sprintf("%.0f", hi) {
			return fmt.Sprintf("%.0f s", lo)
		}
		return fmt.Sprintf("%.0f-%.0f s", lo, hi)
	}
	switch {
	case fresh != nil:
		return fmt.Sprintf("pod age: Equal: before its load every run, the baseline's included, rolled the workloads the arms change (%d selectors); "+
			"the rollouts finished %s before the load on the baseline's runs and %s on the arms' (settle %s)",
			len(fresh.Workloads), span(base), span(arms), settle(s, fresh).Duration)
	case PodAgeEqual(s):
		return ""
	default:
		return fmt.Sprintf("pod age: AsFound: the baseline ran on the pods as found (runs that recorded no rollout: %d); an arm's changed workloads ran on pods its own rollout created %s before its load, "+
			"so a comparison holds the difference in pod age; podAge: Equal rolls the baseline's the same way", asFound, span(arms))
	}
}
