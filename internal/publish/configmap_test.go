package publish_test

import (
	"maps"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/publish"
	"github.com/perfexp/perfexp/internal/testenv"
)

// Every ConfigMap perfexp publishes goes through publish.ConfigMap: it creates its own, updates
// its own, and leaves alone, with an error naming it, one that is someone else's.
func TestConfigMap(t *testing.T) {
	exp := &perfexpv1alpha1.PerfExperiment{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "billing", UID: "exp-uid"}}
	sw := &perfexpv1alpha1.PerfSweep{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "pool-size", UID: "sweep-uid"}}
	theirs := map[string]string{"owner": "the billing team"}
	foreign := func(ns, name string, owners ...metav1.OwnerReference) *corev1.ConfigMap {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, OwnerReferences: owners}, Data: theirs}
	}
	otherOwner := metav1.OwnerReference{APIVersion: "v1", Kind: "Pod", Name: "x", UID: "other", Controller: new(true)}
	dashboard := publish.Target{Key: types.NamespacedName{Namespace: "grafana", Name: "perfexp-team-a-billing-abc"}, For: "a dashboard",
		Marks: map[string]string{"perfexp.dev/dashboard-of-namespace": "team-a", perfexpv1alpha1.LabelTestID: "billing-abc"}}
	write := func(cm *corev1.ConfigMap) error { cm.Data = map[string]string{"report.md": "# billing"}; return nil }

	tests := []struct {
		name     string
		existing []client.Object
		target   publish.Target
		refused  string // the ConfigMap named in the refusal; empty: written
	}{
		{name: "an experiment's report is created, owned by it", target: publish.Report(exp)},
		{name: "someone's billing-report is not taken over", existing: []client.Object{foreign("team-a", "billing-report")},
			target: publish.Report(exp), refused: "team-a/billing-report"},
		{name: "nor one controlled by something else", existing: []client.Object{foreign("team-a", "billing-report", otherOwner)},
			target: publish.Report(exp), refused: "team-a/billing-report"},
		{name: "a sweep's report is not taken over either", existing: []client.Object{foreign("team-a", "pool-size-report")},
			target: publish.SweepReport(sw), refused: "team-a/pool-size-report"},
		{name: "a dashboard in another namespace is created with its marks", target: dashboard},
		{name: "a ConfigMap there without the marks is not taken over", existing: []client.Object{foreign("grafana", "perfexp-team-a-billing-abc")},
			target: dashboard, refused: "grafana/perfexp-team-a-billing-abc"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := fake.NewClientBuilder().WithScheme(testenv.Scheme()).WithObjects(tt.existing...).Build()
			cm, err := publish.ConfigMap(t.Context(), c, tt.target, write)
			got := &corev1.ConfigMap{}
			if gerr := c.Get(t.Context(), tt.target.Key, got); gerr != nil {
				t.Fatal(gerr)
			}
			if tt.refused != "" {
				n, ok := publish.IsNotOwned(err)
				if !ok || !strings.Contains(n.Error(), tt.refused) {
					t.Fatalf("err %v; want a NotOwnedError naming %s", err, tt.refused)
				}
				if !maps.Equal(got.Data, theirs) || len(got.OwnerReferences) != len(tt.existing[0].GetOwnerReferences()) {
					t.Errorf("the ConfigMap was changed: data %v, owners %v", got.Data, got.OwnerReferences)
				}
				return
			}
			if err != nil || cm == nil || got.Data["report.md"] != "# billing" {
				t.Fatalf("not written: %v, %v", err, got.Data)
			}
			if owner := tt.target.Owner; owner != nil {
				if ref := metav1.GetControllerOf(got); ref == nil || ref.UID != owner.GetUID() {
					t.Errorf("owner %v, want %s", ref, owner.GetName())
				}
			}
			for k, v := range tt.target.Marks {
				if got.Labels[k] != v {
					t.Errorf("label %s=%q, want %q", k, got.Labels[k], v)
				}
			}
			// Written again: its own ConfigMap is updated.
			if _, err := publish.ConfigMap(t.Context(), c, tt.target, func(cm *corev1.ConfigMap) error { cm.Data["more"] = "x"; return nil }); err != nil {
				t.Errorf("updating its own ConfigMap: %v", err)
			}
		})
	}

	t.Run("a section is added only to a report that exists", func(t *testing.T) {
		c := fake.NewClientBuilder().WithScheme(testenv.Scheme()).Build()
		target := publish.Report(exp)
		target.ExistingOnly = true
		if cm, err := publish.ConfigMap(t.Context(), c, target, write); cm != nil || err != nil {
			t.Fatalf("got %v, %v; want nothing written", cm, err)
		}
		if err := c.Get(t.Context(), target.Key, &corev1.ConfigMap{}); err == nil {
			t.Error("a report was created")
		}
	})
}
