package analyzer

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/analysis/result"
	"github.com/perfexp/perfexp/internal/report"
)

// publish writes the report ConfigMap, owned by the experiment so it goes with it; the report
// is trimmed to fit one (report.ConfigMapData).
func (a *PrometheusAnalyzer) publish(ctx context.Context, exp *perfexpv1alpha1.PerfExperiment, r *result.Result, dash report.DashboardOptions, page report.HTMLOptions) (*corev1.ConfigMap, error) {
	data, err := report.ConfigMapData(r, dash, page)
	if err != nil {
		return nil, err
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: exp.Namespace, Name: exp.ReportName()}}
	_, err = controllerutil.CreateOrUpdate(ctx, a.Client, cm, func() error {
		if cm.Labels == nil {
			cm.Labels = map[string]string{}
		}
		if len(exp.Name) <= 63 { // a label value holds at most 63 characters; the test id selects it too
			cm.Labels[perfexpv1alpha1.LabelExperiment] = exp.Name
		}
		cm.Labels[perfexpv1alpha1.LabelTestID] = r.TestID
		cm.Data = data
		return controllerutil.SetControllerReference(exp, cm, a.Client.Scheme())
	})
	if err != nil {
		return nil, fmt.Errorf("writing the report ConfigMap %s: %w", cm.Name, err)
	}
	return cm, nil
}
