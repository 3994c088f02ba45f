package analyzer

import (
	"context"
	"errors"
	"slices"
	"strings"

	"sigs.k8s.io/controller-runtime/pkg/log"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/analysis"
	"github.com/perfexp/perfexp/internal/step"
)

// CheckQueries tries an experiment's custom queries before its run (the reconciler's
// QueryChecker): it renders every custom query for the experiment and
// runs it once against the experiment's Prometheus.
func (a *PrometheusAnalyzer) CheckQueries(ctx context.Context, exp *perfexpv1alpha1.PerfExperiment) (step.Result, error) {
	if exp.Spec.Analysis == nil || len(exp.Spec.Analysis.Queries) == 0 && exp.Spec.Analysis.PrometheusAuth == nil {
		return step.Done(), nil
	}
	url, refused := prometheusURL(exp, a.PrometheusURL, a.AllowedPrometheusURLs)
	if refused != nil {
		return *refused, nil // never send a query to a Prometheus the operator may not use
	}
	if url == "" {
		return step.Done(), nil // analysis reports the missing Prometheus
	}
	promAPI, failed, err := a.prometheusAPI(ctx, exp, url)
	switch {
	case err != nil:
		return step.Result{}, err
	case failed != nil && failed.Failure != nil && failed.Failure.Reason == perfexpv1alpha1.ReasonPrometheusAuthInvalid:
		return *failed, nil // a Secret that is missing fails now, before anything is patched
	case failed != nil:
		return step.Done(), nil // analysis reports the bad URL
	}
	if exp.Spec.Analysis.PrometheusAuth != nil {
		if r := probeCredentials(ctx, promAPI, url); r != nil {
			return *r, nil
		}
	}
	now := a.clock().Now()
	data := analysis.PrecheckData(exp.TargetNamespace(), exp.Status.TestID, now)
	scope := analysis.PrecheckScope(exp.TargetNamespace(), exp.Status.TestID, a.queriesUnbound(exp))
	problems, err := analysis.CheckQueries(ctx, promAPI, exp.Spec.Analysis.Queries, data, scope, now)
	var unavailable *analysis.UnavailableError
	var unauthorized *analysis.UnauthorizedError
	switch {
	case errors.As(err, &unauthorized):
		return step.Fail(perfexpv1alpha1.ReasonPrometheusUnauthorized, "the metrics backend at %s refused the credentials before the run: %v", url, unauthorized.Err), nil
	case errors.As(err, &unavailable):
		log.FromContext(ctx).Info("Could not try the custom queries before the run; analysis will report them", "prometheus", url, "error", unavailable.Err.Error())
	case err != nil:
		return step.Result{}, err
	}
	if len(problems) == 0 {
		return step.Done(), nil
	}
	msgs := make([]string, len(problems))
	for i, p := range problems {
		msgs[i] = p.String()
	}
	return step.Fail(perfexpv1alpha1.ReasonQueryInvalid, "custom queries that cannot run (tried against %s before the load): %s", url, strings.Join(msgs, "; ")), nil
}

// queriesUnbound says whether exp's custom queries may read any namespace: its own namespace,
// where its author creates it, is one the operator's admin trusts.
func (a *PrometheusAnalyzer) queriesUnbound(exp *perfexpv1alpha1.PerfExperiment) bool {
	return slices.Contains(a.UnboundQueryNamespaces, exp.Namespace)
}
