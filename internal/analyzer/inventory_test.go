package analyzer_test

import (
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/analyzer"
	"github.com/perfexp/perfexp/internal/judge/findings"
	"github.com/perfexp/perfexp/internal/result"
	"github.com/perfexp/perfexp/internal/testenv"
)

// The inventory is read from a real API server: the touched and observed workloads' images,
// replicas, resources, env (a Secret by reference, its value never read) and the nodes of their
// running pods. Between a baseline and a variant that declared only api's CPU limit, someone
// also rolled out a new image of api: the findings name the image, and not the limit.
func TestInventoryNamesAnUndeclaredImage(t *testing.T) {
	env := testenv.Start(t)
	ctx := t.Context()
	ns := env.Namespace(t, "inventory")
	two := int32(2)
	api := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "api"},
		Spec: appsv1.DeploymentSpec{Replicas: &two, Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "api"}},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "api"}},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "shop/api:1.4",
					Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m")},
						Limits: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}},
					Env: []corev1.EnvVar{{Name: "LOG_LEVEL", Value: "info"}, {Name: "DB_PASSWORD", ValueFrom: &corev1.EnvVarSource{
						SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "db"}, Key: "password"}}}}}}}}}}
	mustCreate(t, env.Client, api)
	for i, node := range []string{"node-b", "node-a", "node-b"} {
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "api-" + string(rune('x'+i)), Labels: map[string]string{"app": "api"}},
			Spec: corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "app", Image: "shop/api:1.4"}}}}
		mustCreate(t, env.Client, pod)
		pod.Status.Phase = corev1.PodRunning
		if err := env.Client.Status().Update(ctx, pod); err != nil {
			t.Fatal(err)
		}
	}
	an := &analyzer.PrometheusAnalyzer{Client: env.Client}
	record := func(exp *perfexpv1alpha1.PerfExperiment) []result.WorkloadInventory {
		t.Helper()
		inv, err := an.Inventory(ctx, exp, metav1.Now())
		if err != nil {
			t.Fatal(err)
		}
		return result.InventoryFrom(inv)
	}

	baseline := record(experiment(ns, "baseline"))
	if len(baseline) != 1 {
		t.Fatalf("inventory = %+v, want api only", baseline)
	}
	w := baseline[0]
	if w.Ref() != "Deployment/"+ns+"/api" || w.Replicas == nil || *w.Replicas != 2 || strings.Join(w.Nodes, ",") != "node-a,node-b" || len(w.Containers) != 1 {
		t.Fatalf("api = %+v", w)
	}
	c := w.Containers[0]
	if c.Image != "shop/api:1.4" || c.Requests["cpu"] != "500m" || c.Limits["cpu"] != "1" || len(c.Env) != 2 ||
		c.Env[0] != (result.EnvVar{Name: "LOG_LEVEL", Value: "info"}) || c.Env[1] != (result.EnvVar{Name: "DB_PASSWORD", From: "secret db/password"}) {
		t.Fatalf("container = %+v", c)
	}

	// The variant removes the CPU limit (declared in its snapshot); the image changes too.
	api = api.DeepCopy()
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "api"}, api); err != nil {
		t.Fatal(err)
	}
	api.Spec.Template.Spec.Containers[0].Resources.Limits = nil
	api.Spec.Template.Spec.Containers[0].Image = "shop/api:1.5"
	if err := env.Client.Update(ctx, api); err != nil {
		t.Fatal(err)
	}
	variant := experiment(ns, "no-limit")
	variant.Status.Environment = &perfexpv1alpha1.EnvironmentStatus{Touched: []perfexpv1alpha1.TouchedObject{{APIVersion: "apps/v1", Kind: "Deployment", Namespace: ns, Name: "api", Patched: true,
		Snapshot: `{"v":1,"experiment":"x/no-limit","uid":"u","changes":[{"source":"workloads[0]","path":["spec","template","spec","containers",{"name":"app"},"resources","limits","cpu"],"before":"\"1\""}]}`}}}
	run := record(variant)
	if got := strings.Join(run[0].Declared, ","); got != "resources/app/limits.cpu" {
		t.Fatalf("declared = %q", got)
	}

	cmp := &result.Comparison{Baseline: "baseline"}
	findings.Mark(cmp, run, &result.Result{Inventory: baseline})
	if len(cmp.Confounds) != 1 || cmp.Confounds[0].Field != "image/app" {
		t.Fatalf("confounds = %+v, want the image only", cmp.Confounds)
	}
	fs := findings.Run(&result.Result{Comparison: cmp}, nil)
	if len(fs) == 0 || !strings.Contains(fs[0].Text, "image") || !strings.Contains(fs[0].Text, "shop/api:1.4") || !strings.Contains(fs[0].Text, "shop/api:1.5") {
		t.Fatalf("findings = %+v", fs)
	}
	// The experiment's Confounded condition says it too.
	cond, ok := findings.Condition(cmp)
	if !ok || cond.Type != perfexpv1alpha1.ConditionConfounded || cond.Status != metav1.ConditionTrue || cond.Reason != perfexpv1alpha1.ReasonEnvironmentDiffers ||
		!strings.Contains(cond.Message, "Deployment/"+ns+"/api image/app: shop/api:1.4 in the baseline, shop/api:1.5 in this run") {
		t.Fatalf("Confounded = %+v", cond)
	}
}
