package analyzer

import (
	"context"
	"sort"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/client"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/analysis"
	"github.com/perfexp/perfexp/internal/history"
	"github.com/perfexp/perfexp/internal/judge"
	"github.com/perfexp/perfexp/internal/load"
	"github.com/perfexp/perfexp/internal/report"
	"github.com/perfexp/perfexp/internal/result"
)

// The reads of the analysis: what the cluster says about the run, gathered for the pure
// decisions of decide.go and for internal/analysis.

// input gathers what the analysis needs from the experiment and the cluster.
func (a *PrometheusAnalyzer) input(ctx context.Context, exp, baseline *perfexpv1alpha1.PerfExperiment) (analysis.Input, error) {
	in, err := inputFrom(exp, settings{cAdvisorMatchers: a.CAdvisorMatchers, cAdvisorMaxAge: a.CAdvisorMaxAge, maxListedWorkloads: a.MaxListedWorkloads, unboundQueries: a.queriesUnbound(exp)})
	if err != nil {
		return in, err
	}
	// The results record the load shape with a hash of each script, so a later run can
	// check it ran the same; a ConfigMap script that is gone has an unknown hash, not a
	// different one.
	scripts, err := load.ScenarioScripts(ctx, a.Client, exp)
	if err != nil {
		return in, err
	}
	in.LoadShape = result.LoadShape(exp.Spec.Load, scripts)
	if in.Workloads, in.Routes, err = a.workloads(ctx, exp); err != nil {
		return in, err
	}
	if exp.Spec.Baseline != nil {
		if in.Baseline, err = a.baseline(ctx, exp, baseline); err != nil {
			return in, err
		}
		if in.History, err = a.historyNoise(ctx, exp, baseline, scripts); err != nil {
			return in, err
		}
	}
	return in, nil
}

// historyNoise reads the PerfHistory of the baseline's configuration and of the experiment's
// own (same namespace, history.Key) and estimates the between-run noise from their latest
// segments. Also beside spec.analysis.betweenRun: a calibration is a floor, and a row whose
// history varies more takes the history's (judge's noiseFor). A history that does not exist
// yet gives nothing.
func (a *PrometheusAnalyzer) historyNoise(ctx context.Context, exp, baseline *perfexpv1alpha1.PerfExperiment, scripts map[string]string) (*judge.HistoryNoise, error) {
	if baseline == nil {
		return nil, nil
	}
	var reader client.Reader = a.Client
	if a.APIReader != nil {
		reader = a.APIReader
	}
	// The baseline ran the same load shape, scripts included (else it is refused), so the
	// experiment's scripts key its history too.
	return history.ReadNoise(ctx, reader, exp.Namespace, scripts, a.clock().Now(), baseline, exp)
}

// workloads lists the touched workloads with the resources in force during the run, the
// observed ones with their specs' resources, and the target namespace's other workloads.
// The observe entries with routes also name the workloads whose routes are read.
func (a *PrometheusAnalyzer) workloads(ctx context.Context, exp *perfexpv1alpha1.PerfExperiment) ([]analysis.Workload, []analysis.RouteSource, error) {
	touched := touchedWorkloads(exp.Status.Environment)
	for i := range touched {
		if touched[i].Containers != nil {
			continue
		}
		spec, err := a.podSpec(ctx, touched[i].Kind, touched[i].Namespace, touched[i].Name)
		if err != nil {
			return nil, nil, err
		}
		touched[i].Containers = containersOf(spec)
	}
	queries := workloadQueries(exp)
	found := make([][]analysis.Workload, len(queries))
	for i, q := range queries {
		var err error
		if found[i], err = a.observed(ctx, q.kind, q.ns, q.selector); err != nil {
			return nil, nil, err
		}
	}
	return mergeWorkloads(touched, queries, found), routeSources(queries, found), nil
}

// observed lists the workloads an observe entry chooses. A named workload that is gone is
// kept without containers: it may have been deleted since the run, and its numbers are still
// in Prometheus under its name, but without its spec there are no requests or limits to
// compare with.
func (a *PrometheusAnalyzer) observed(ctx context.Context, kind perfexpv1alpha1.WorkloadKind, ns string, sel perfexpv1alpha1.WorkloadSelector) ([]analysis.Workload, error) {
	var out []analysis.Workload
	if len(sel.Names) > 0 {
		for _, name := range sel.Names {
			spec, err := a.podSpec(ctx, kind, ns, name)
			if apierrors.IsNotFound(err) {
				out = append(out, analysis.Workload{Kind: kind, Namespace: ns, Name: name})
				continue
			}
			if err != nil {
				return nil, err
			}
			out = append(out, analysis.Workload{Kind: kind, Namespace: ns, Name: name, Containers: containersOf(spec)})
		}
		return out, nil
	}
	selector := labels.Everything()
	if sel.Selector != nil {
		s, err := metav1.LabelSelectorAsSelector(sel.Selector)
		if err != nil {
			return nil, err
		}
		selector = s
	}
	opts := []client.ListOption{client.InNamespace(ns), client.MatchingLabelsSelector{Selector: selector}}
	switch kind {
	case perfexpv1alpha1.WorkloadKindStatefulSet:
		list := &appsv1.StatefulSetList{}
		if err := a.Client.List(ctx, list, opts...); err != nil {
			return nil, err
		}
		for i := range list.Items {
			out = append(out, analysis.Workload{Kind: kind, Namespace: ns, Name: list.Items[i].Name, Containers: containersOf(&list.Items[i].Spec.Template.Spec)})
		}
	default:
		list := &appsv1.DeploymentList{}
		if err := a.Client.List(ctx, list, opts...); err != nil {
			return nil, err
		}
		for i := range list.Items {
			out = append(out, analysis.Workload{Kind: kind, Namespace: ns, Name: list.Items[i].Name, Containers: containersOf(&list.Items[i].Spec.Template.Spec)})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

func (a *PrometheusAnalyzer) podSpec(ctx context.Context, kind perfexpv1alpha1.WorkloadKind, ns, name string) (*corev1.PodSpec, error) {
	key := client.ObjectKey{Namespace: ns, Name: name}
	if kind == perfexpv1alpha1.WorkloadKindStatefulSet {
		s := &appsv1.StatefulSet{}
		if err := a.Client.Get(ctx, key, s); err != nil {
			return nil, err
		}
		return &s.Spec.Template.Spec, nil
	}
	d := &appsv1.Deployment{}
	if err := a.Client.Get(ctx, key, d); err != nil {
		return nil, err
	}
	return &d.Spec.Template.Spec, nil
}

// baseline describes the baseline run, or why it cannot be used, with its full results from
// its report when that is still there.
func (a *PrometheusAnalyzer) baseline(ctx context.Context, exp, b *perfexpv1alpha1.PerfExperiment) (*judge.Baseline, error) {
	out := describeBaseline(exp, b)
	if out.Problem != "" {
		return out, nil
	}
	var doc string
	found := false
	if ref := b.Status.ReportRef; ref != nil {
		cm := &corev1.ConfigMap{}
		err := a.Client.Get(ctx, client.ObjectKey{Namespace: b.Namespace, Name: ref.Name}, cm)
		switch {
		case err == nil:
			doc, found = cm.Data[report.KeyJSON], true
		case !apierrors.IsNotFound(err):
			return nil, err
		}
	}
	out.Result = baselineResult(b.Status.Results, doc, found)
	return out, nil
}

// summaries reads the k6 runners' own end-of-test summaries, when the load runner kept them.
func (a *PrometheusAnalyzer) summaries(ctx context.Context, exp *perfexpv1alpha1.PerfExperiment) summaryData {
	if exp.Status.Load == nil || exp.Status.Load.SummariesRef == nil {
		return summaryData{}
	}
	s := summaryData{name: exp.Status.Load.SummariesRef.Name, kept: true}
	cm := &corev1.ConfigMap{}
	if s.err = a.Client.Get(ctx, client.ObjectKey{Namespace: exp.Namespace, Name: s.name}, cm); s.err == nil {
		s.data = cm.Data
	}
	return s
}
