package analyzer

import (
	"context"

	corev1 "k8s.io/api/core/v1"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/publish"
	"github.com/perfexp/perfexp/internal/report"
	"github.com/perfexp/perfexp/internal/result"
)

// publish writes the report ConfigMap, owned by the experiment so it goes with it; the report
// is trimmed to fit one (report.ConfigMapData). A ConfigMap of that name that is not the
// experiment's is left alone (publish.NotOwnedError).
func (a *PrometheusAnalyzer) publish(ctx context.Context, exp *perfexpv1alpha1.PerfExperiment, r *result.Result, dash report.DashboardOptions, page report.HTMLOptions) (*corev1.ConfigMap, error) {
	data, err := report.ConfigMapData(r, dash, page)
	if err != nil {
		return nil, err
	}
	return publish.ConfigMap(ctx, a.Client, publish.Report(exp), func(cm *corev1.ConfigMap) error {
		if len(exp.Name) <= 63 { // a label value holds at most 63 characters; the test id selects it too
			cm.Labels[perfexpv1alpha1.LabelExperiment] = exp.Name
		}
		cm.Labels[perfexpv1alpha1.LabelTestID] = r.TestID
		cm.Data = data
		return nil
	})
}
