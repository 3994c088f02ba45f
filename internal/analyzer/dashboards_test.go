package analyzer_test

import (
	"encoding/json"
	"maps"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/analysis/promtest"
	"github.com/perfexp/perfexp/internal/analyzer"
	"github.com/perfexp/perfexp/internal/dashboards"
	"github.com/perfexp/perfexp/internal/report"
	"github.com/perfexp/perfexp/internal/testenv"
)

// Story: the operator runs with --grafana-dashboards. Each analysed experiment's dashboard
// lands in a ConfigMap labelled for Grafana's sidecar and status.dashboardURL links to it; the
// ConfigMap goes with the experiment: by owner reference in the experiment's namespace, by the
// operator when it was written to Grafana's namespace.
func TestDashboardDelivery(t *testing.T) {
	env := testenv.Start(t)
	prom := promtest.Start(t)
	ctx := t.Context()
	ns := env.Namespace(t, "dash")
	grafanaNS := env.Namespace(t, "grafana")

	end := time.Now().Add(-10 * time.Minute).Truncate(time.Second)
	start := end.Add(-2 * time.Minute)
	s := promtest.NewK6Series(promtest.K6Labels("dash-run", "checkinout", "get", "0", true))
	for i := 1; i <= 24; i++ {
		s.Flush(start.Add(time.Duration(i)*5*time.Second), 0.010, 0.020)
	}
	prom.Write(t, s.Series())

	analysed := func(t *testing.T, name string, g *analyzer.GrafanaDashboards) *perfexpv1alpha1.PerfExperiment {
		t.Helper()
		exp := experiment(ns, name)
		mustCreate(t, env.Client, exp)
		exp.Status = perfexpv1alpha1.PerfExperimentStatus{Phase: perfexpv1alpha1.PhaseAnalyzing, TestID: "dash-run",
			Window: &perfexpv1alpha1.Window{Start: &metav1.Time{Time: start}, End: &metav1.Time{Time: end}}}
		a := &analyzer.PrometheusAnalyzer{Client: env.Client, PrometheusURL: prom.URL, Clock: clocktesting.NewFakePassiveClock(end.Add(time.Minute)), Dashboards: g}
		if res, err := a.Analyze(ctx, exp, nil); err != nil || !res.Done {
			t.Fatalf("analysis: %+v %v", res, err)
		}
		if err := env.Client.Status().Update(ctx, exp); err != nil {
			t.Fatal(err)
		}
		return exp
	}
	dashboardIn := func(t *testing.T, cm *corev1.ConfigMap) *dashboards.Dashboard {
		t.Helper()
		if len(cm.Data) != 1 {
			t.Fatalf("ConfigMap %s holds %d files, want one dashboard", cm.Name, len(cm.Data))
		}
		for key, body := range cm.Data {
			var d dashboards.Dashboard
			if err := json.Unmarshal([]byte(body), &d); err != nil {
				t.Fatal(err)
			}
			if key != d.UID+".json" {
				t.Errorf("file %s holds dashboard %s", key, d.UID)
			}
			return &d
		}
		return nil
	}

	t.Run("in the experiment's namespace, owned by it, linked from its status", func(t *testing.T) {
		exp := analysed(t, "same-ns", &analyzer.GrafanaDashboards{Enabled: true, BaseURL: "https://grafana.example.com/"})
		cm := &corev1.ConfigMap{}
		if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "same-ns-dashboard"}, cm); err != nil {
			t.Fatal(err)
		}
		if cm.Labels["grafana_dashboard"] != "1" {
			t.Errorf("labels %v lack the sidecar's grafana_dashboard=1", cm.Labels)
		}
		if owner := metav1.GetControllerOf(cm); owner == nil || owner.UID != exp.UID {
			t.Errorf("owner %+v, want the experiment: the garbage collector removes it with the experiment", owner)
		}
		d := dashboardIn(t, cm)
		if want := "https://grafana.example.com/d/" + d.UID; exp.Status.DashboardURL != want {
			t.Errorf("dashboardURL %q, want %q", exp.Status.DashboardURL, want)
		}
		rep := &corev1.ConfigMap{}
		if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: exp.ReportName()}, rep); err != nil {
			t.Fatal(err)
		}
		if got := rep.Data[report.KeyDashboard]; got != cm.Data[d.UID+".json"] {
			t.Errorf("the report's dashboard.json differs from the delivered dashboard")
		}
	})

	t.Run("in Grafana's namespace with the configured label, deleted when the experiment is gone", func(t *testing.T) {
		g := &analyzer.GrafanaDashboards{Enabled: true, Namespace: grafanaNS, LabelKey: "team_dashboard", LabelValue: "perf",
			FolderAnnotation: "grafana_folder", Folder: "Performance"}
		exp := analysed(t, "other-ns", g)
		if exp.Status.DashboardURL != "" {
			t.Errorf("dashboardURL %q without a Grafana URL", exp.Status.DashboardURL)
		}
		var list corev1.ConfigMapList
		if err := env.Client.List(ctx, &list, client.InNamespace(grafanaNS), client.MatchingLabels{"team_dashboard": "perf"}); err != nil || len(list.Items) != 1 {
			t.Fatalf("%d dashboards in %s: %v", len(list.Items), grafanaNS, err)
		}
		cm := list.Items[0]
		if cm.Annotations["grafana_folder"] != "Performance" || len(cm.OwnerReferences) != 0 {
			t.Errorf("annotations %v, owners %v", cm.Annotations, cm.OwnerReferences)
		}
		dashboardIn(t, &cm)

		if err := env.Client.Delete(ctx, exp); err != nil {
			t.Fatal(err)
		}
		eventually(t, 10*time.Second, "the experiment to be gone", func() error {
			return client.IgnoreNotFound(env.Client.Get(ctx, client.ObjectKeyFromObject(exp), &perfexpv1alpha1.PerfExperiment{}))
		})
		// As the reconciler calls it when it finds the experiment gone.
		if err := g.Forget(ctx, env.Client, types.NamespacedName{Namespace: ns, Name: "other-ns"}); err != nil {
			t.Fatal(err)
		}
		err := env.Client.Get(ctx, client.ObjectKeyFromObject(&cm), &corev1.ConfigMap{})
		if !apierrors.IsNotFound(err) {
			t.Errorf("the dashboard of the deleted experiment is still there: %v", err)
		}
	})

	t.Run("a report or dashboard name taken by someone else's ConfigMap is left alone, and the results are kept", func(t *testing.T) {
		theirs := map[string]string{"owner": "the billing team"}
		for _, name := range []string{"billing-report", "billing-dashboard"} {
			mustCreate(t, env.Client, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Data: theirs})
		}
		exp := analysed(t, "billing", &analyzer.GrafanaDashboards{Enabled: true})
		if exp.Status.Results == nil || exp.Status.ReportRef != nil {
			t.Errorf("results %v, reportRef %v; want the results in status and no report named", exp.Status.Results, exp.Status.ReportRef)
		}
		c := meta.FindStatusCondition(exp.Status.Conditions, perfexpv1alpha1.ConditionReported)
		if c == nil || c.Status != metav1.ConditionFalse || c.Reason != perfexpv1alpha1.ReasonConfigMapNotOwned ||
			!strings.Contains(c.Message, ns+"/billing-report") || !strings.Contains(c.Message, ns+"/billing-dashboard") {
			t.Fatalf("Reported condition %+v; want False/%s naming both ConfigMaps", c, perfexpv1alpha1.ReasonConfigMapNotOwned)
		}
		for _, name := range []string{"billing-report", "billing-dashboard"} {
			cm := &corev1.ConfigMap{}
			if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, cm); err != nil {
				t.Fatal(err)
			}
			if !maps.Equal(cm.Data, theirs) || len(cm.OwnerReferences) != 0 {
				t.Errorf("%s was taken over: data %v, owners %v", name, cm.Data, cm.OwnerReferences)
			}
		}
	})

	t.Run("an experiment with a 250-character name gets a dashboard the API server accepts", func(t *testing.T) {
		name := strings.Repeat("long-name-", 25)[:249] + "x"
		exp := analysed(t, name, &analyzer.GrafanaDashboards{Enabled: true})
		cm := &corev1.ConfigMap{}
		if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: exp.DashboardName()}, cm); err != nil {
			t.Fatalf("no dashboard %s: %v", exp.DashboardName(), err)
		}
		if len(cm.Name) > 63 || !strings.HasPrefix(cm.Name, "long-name-") {
			t.Errorf("dashboard name %q, want a shortened one of at most 63 characters", cm.Name)
		}
	})

	t.Run("disabled, nothing is delivered", func(t *testing.T) {
		exp := analysed(t, "off", nil)
		err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "off-dashboard"}, &corev1.ConfigMap{})
		if !apierrors.IsNotFound(err) || exp.Status.DashboardURL != "" {
			t.Errorf("a dashboard without --grafana-dashboards: %v, %q", err, exp.Status.DashboardURL)
		}
	})
}
