package controllers_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/testenv"
	"github.com/perfexp/perfexp/internal/variant"
)

// The operator's namespace gate as a user meets it: the real reconciler with the real variant
// package. An experiment aimed at a namespace that has not opted in, or at the operator's own
// namespace, ends Failed with a condition saying why, and its Deployment is never patched; one
// aimed at an opted-in namespace is patched.
func TestOperatorNamespaceGate(t *testing.T) {
	env := testenv.Start(t)
	env.Namespace(t, leaseNamespace)
	team := env.Namespace(t, "team")
	plain := env.PlainNamespace(t, "not-opted-in")
	opted := env.Namespace(t, "opted-in")
	for _, ns := range []string{plain, opted, leaseNamespace} {
		if err := env.Client.Create(t.Context(), webDeployment(ns)); err != nil {
			t.Fatal(err)
		}
	}
	lab := newLab()
	startOperatorWith(t, env, variant.New(env.Client, variant.Options{OperatorNamespaces: []string{leaseNamespace}}), lab, lab)

	tests := []struct {
		target string
		says   string // empty: accepted
	}{
		{target: plain, says: "perfexp may not patch or read namespace not-opted-in: the namespace has not opted in; its administrator can label it perfexp.dev/allow-experiments=true"},
		{target: leaseNamespace, says: "it is the operator's own namespace"},
		{target: opted},
	}
	for i, tt := range tests {
		t.Run(tt.target, func(t *testing.T) {
			exp := experiment(team, fmt.Sprintf("scale-%d", i), tt.target, 0)
			exp.Spec.TargetNamespace = tt.target
			exp.Spec.Variant = &perfexpv1alpha1.Variant{Workloads: []perfexpv1alpha1.WorkloadChange{{
				WorkloadSelector: perfexpv1alpha1.WorkloadSelector{Names: []string{"web"}}, Replicas: ptr.To[int32](0)}}}
			if err := env.Client.Create(t.Context(), exp); err != nil {
				t.Fatal(err)
			}
			if tt.says == "" {
				eventually(t, 30*time.Second, "the opted-in Deployment is patched", func() error {
					if r := replicas(t, env.Client, tt.target); r != 0 {
						return fmt.Errorf("replicas %d", r)
					}
					return nil
				})
				return
			}
			got := waitPhase(t, env.Client, team, exp.Name, perfexpv1alpha1.PhaseFailed)
			c := condition(got, perfexpv1alpha1.ConditionEnvironmentReady)
			if c == nil || c.Status != metav1.ConditionFalse || c.Reason != perfexpv1alpha1.ReasonNamespaceNotAllowed || !strings.Contains(c.Message, tt.says) {
				t.Fatalf("EnvironmentReady = %+v; want False, %s, saying %q", c, perfexpv1alpha1.ReasonNamespaceNotAllowed, tt.says)
			}
			d := &appsv1.Deployment{}
			if err := env.Client.Get(t.Context(), client.ObjectKey{Namespace: tt.target, Name: "web"}, d); err != nil {
				t.Fatal(err)
			}
			if *d.Spec.Replicas != 2 || d.Labels[perfexpv1alpha1.LabelPatchedBy] != "" || d.Generation != 1 {
				t.Fatalf("the refused namespace's Deployment was written: replicas %d, labels %v, generation %d", *d.Spec.Replicas, d.Labels, d.Generation)
			}
		})
	}
}

func webDeployment(ns string) *appsv1.Deployment {
	labels := map[string]string{"app": "web"}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](2),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "web:1"}}},
			},
		},
	}
}

func replicas(t *testing.T, c client.Client, ns string) int32 {
	t.Helper()
	d := &appsv1.Deployment{}
	if err := c.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: "web"}, d); err != nil {
		t.Fatal(err)
	}
	return *d.Spec.Replicas
}
