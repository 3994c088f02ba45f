package analyzer

import (
	"context"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/dashboards"
	"github.com/perfexp/perfexp/internal/publish"
	"github.com/perfexp/perfexp/internal/report"
	"github.com/perfexp/perfexp/internal/result"
)

// +kubebuilder:rbac:groups="",resources=configmaps,verbs=get;list;watch;create;update;patch;delete

// Labels of a delivered dashboard ConfigMap in another namespace than its experiment's: an
// owner reference cannot cross namespaces, so these find it again when the experiment is gone.
const (
	LabelDashboardOf          = "perfexp.dev/dashboard-of"
	LabelDashboardOfNamespace = "perfexp.dev/dashboard-of-namespace"
)

// Defaults of GrafanaDashboards: the label kube-prometheus-stack's Grafana sidecar looks for.
const (
	DefaultDashboardLabelKey   = "grafana_dashboard"
	DefaultDashboardLabelValue = "1"
)

// GrafanaDashboards delivers each analysed experiment's dashboard as a ConfigMap that Grafana's
// dashboard sidecar (kube-prometheus-stack: grafana.sidecar.dashboards) loads, and links it
// from status.dashboardURL. A nil *GrafanaDashboards or one not Enabled delivers nothing.
type GrafanaDashboards struct {
	Enabled bool
	// Namespace receives the ConfigMaps; empty means each experiment's own namespace, where an
	// owner reference removes the ConfigMap with the experiment. In another namespace the
	// operator deletes it when it finds the experiment gone.
	Namespace string
	// LabelKey and LabelValue mark the ConfigMaps for the sidecar (its label and labelValue);
	// empty means grafana_dashboard: "1".
	LabelKey, LabelValue string
	// FolderAnnotation, when set, is the annotation the sidecar reads a folder from
	// (grafana.sidecar.dashboards.folderAnnotation); Folder is its value.
	FolderAnnotation, Folder string
	// BaseURL is Grafana's external URL; status.dashboardURL is <BaseURL>/d/<uid>. Empty leaves
	// status.dashboardURL unset.
	BaseURL string
	// CAdvisorMatchers are the analysis's, so the dashboard counts the same containers.
	CAdvisorMatchers string
}

func (g *GrafanaDashboards) enabled() bool { return g != nil && g.Enabled }

func (g *GrafanaDashboards) label() (string, string) {
	k, v := g.LabelKey, g.LabelValue
	if k == "" {
		k = DefaultDashboardLabelKey
	}
	if v == "" && g.LabelKey == "" {
		v = DefaultDashboardLabelValue
	}
	return k, v
}

// options are the dashboard options of an experiment compared with baseline (may be nil).
func (g *GrafanaDashboards) options(baseline *perfexpv1alpha1.PerfExperiment) report.DashboardOptions {
	var o report.DashboardOptions
	if g != nil {
		o.CAdvisorMatchers = g.CAdvisorMatchers
	}
	o.Baseline = baselineRun(baseline)
	return o
}

// baselineRun locates a baseline's samples from its status; nil when it has none.
func baselineRun(b *perfexpv1alpha1.PerfExperiment) *dashboards.Run {
	if b == nil || b.Status.TestID == "" || b.Status.Window == nil || b.Status.Window.Start == nil || b.Status.Window.End == nil {
		return nil
	}
	w := b.Status.Window
	r := &dashboards.Run{TestID: b.Status.TestID, Start: w.Start.Time, MeasuredStart: w.Start.Time, End: w.End.Time}
	if w.WarmUpEnd != nil {
		r.MeasuredStart = w.WarmUpEnd.Time
	}
	return r
}

// dashboardConfigMap is where an experiment's dashboard goes.
func (g *GrafanaDashboards) dashboardConfigMap(exp *perfexpv1alpha1.PerfExperiment) types.NamespacedName {
	if g.Namespace == "" || g.Namespace == exp.Namespace {
		return types.NamespacedName{Namespace: exp.Namespace, Name: exp.DashboardName()}
	}
	return types.NamespacedName{Namespace: g.Namespace, Name: perfexpv1alpha1.ChildName("perfexp-"+exp.Namespace, exp.Status.TestID, 253)}
}

// publish writes the experiment's dashboard ConfigMap and returns status.dashboardURL.
func (g *GrafanaDashboards) publish(ctx context.Context, c client.Client, exp *perfexpv1alpha1.PerfExperiment, baseline *perfexpv1alpha1.PerfExperiment, r *result.Result) (string, error) {
	if !g.enabled() {
		return "", nil
	}
	d := dashboards.Experiment(report.DashboardInput(r, g.options(baseline)))
	body, err := d.JSON()
	if err != nil {
		return "", err
	}
	key := g.dashboardConfigMap(exp)
	lk, lv := g.label()
	target := publish.Target{Key: key, For: "the Grafana dashboard of experiment " + exp.Namespace + "/" + exp.Name}
	if key.Namespace == exp.Namespace {
		target.Owner = exp
	} else {
		// No owner reference crosses namespaces: the labels say whose dashboard it is, and
		// Forget finds it by them. Label values hold 63 characters; a longer name is found by
		// its test id instead.
		target.Marks = map[string]string{LabelDashboardOfNamespace: exp.Namespace, perfexpv1alpha1.LabelTestID: exp.Status.TestID}
		if len(exp.Name) <= 63 {
			target.Marks[LabelDashboardOf] = exp.Name
		}
	}
	if _, err := publish.ConfigMap(ctx, c, target, func(cm *corev1.ConfigMap) error {
		cm.Labels[lk] = lv
		cm.Labels[perfexpv1alpha1.LabelTestID] = exp.Status.TestID
		if g.FolderAnnotation != "" {
			if cm.Annotations == nil {
				cm.Annotations = map[string]string{}
			}
			cm.Annotations[g.FolderAnnotation] = g.Folder
		}
		cm.Data = map[string]string{d.UID + ".json": string(body)}
		return nil
	}); err != nil {
		return "", err
	}
	if g.BaseURL == "" {
		return "", nil
	}
	return strings.TrimRight(g.BaseURL, "/") + "/d/" + d.UID, nil
}

// Forget deletes the dashboards delivered to another namespace for an experiment that is gone
// (its reconcile found it NotFound). Dashboards in the experiment's namespace go with it by
// their owner reference.
func (g *GrafanaDashboards) Forget(ctx context.Context, c client.Client, key types.NamespacedName) error {
	if !g.enabled() || g.Namespace == "" || g.Namespace == key.Namespace || len(key.Name) > 63 {
		return nil
	}
	lk, lv := g.label()
	var list corev1.ConfigMapList
	if err := c.List(ctx, &list, client.InNamespace(g.Namespace), client.MatchingLabels{
		lk: lv, LabelDashboardOf: key.Name, LabelDashboardOfNamespace: key.Namespace,
	}); err != nil {
		return fmt.Errorf("listing the dashboards of %s: %w", key, err)
	}
	for i := range list.Items {
		cm := &list.Items[i]
		if err := client.IgnoreNotFound(c.Delete(ctx, cm, client.Preconditions{UID: &cm.UID})); err != nil {
			return fmt.Errorf("deleting the dashboard %s/%s: %w", cm.Namespace, cm.Name, err)
		}
		log.FromContext(ctx).Info("Deleted the dashboard of a deleted experiment", "experiment", key, "configMap", client.ObjectKeyFromObject(cm))
	}
	return nil
}
