package access_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/testenv"
)

// These tests run the admission policy config/policy/no_escalation.yaml in a real
// kube-apiserver (envtest runs it with RBAC authorization) and send requests as ordinary users
// through impersonation. Each case has a user of its own, holding only the rights it lists.

// right is one RBAC rule granted to a case's user in one namespace.
type right struct {
	ns, group, resource string
	verbs               []string
}

// admissionCase is one request and the answer the policy must give.
type admissionCase struct {
	name   string
	admin  bool // send as the envtest admin (system:masters) instead of the case's user
	rights []right
	obj    func(user string) client.Object
	// refused is a part of the refusal's message; empty means the request must be accepted.
	refused string
}

const (
	teamNS = "team-a" // where users create their experiments
	envB   = "env-b"  // the environment under test
	envC   = "env-c"  // another namespace that is only read
)

// One API server serves the four stories.
func TestAdmissionPolicy(t *testing.T) {
	env := testenv.Start(t)
	for _, ns := range []string{teamNS, envB, envC} {
		env.Namespace(t, ns)
	}
	t.Run("experiments", func(t *testing.T) { storyRefusesEscalation(t, env) })
	t.Run("only spec updates are checked", func(t *testing.T) { storyChecksOnlySpecUpdates(t, env) })
	t.Run("sweeps", func(t *testing.T) { storyChecksSweeps(t, env) })
	t.Run("a fixed order warns", func(t *testing.T) { storyWarnsOfAFixedOrder(t, env) })
}

func storyRefusesEscalation(t *testing.T, env *testenv.Env) {
	patchDeployments := right{envB, "apps", "deployments", []string{"get", "patch"}}
	tests := []admissionCase{
		{name: "no variant in the own namespace needs nothing but create",
			obj: experiment(nil)},
		{name: "no variant, another namespace, without the right to run experiments there",
			obj:     experiment(func(e *perfexpv1alpha1.PerfExperiment) { e.Spec.TargetNamespace = envB; e.Spec.Priority = 1000 }),
			refused: "may not create perfexperiments.perfexp.dev in namespace env-b, the right to run experiments against that environment"},
		{name: "no variant, another namespace, with the right to run experiments there",
			rights: []right{runInEnvB},
			obj:    experiment(func(e *perfexpv1alpha1.PerfExperiment) { e.Spec.TargetNamespace = envB })},
		{name: "observe without a namespace reads the target namespace",
			rights:  []right{runInEnvB},
			obj:     experiment(func(e *perfexpv1alpha1.PerfExperiment) { e.Spec.TargetNamespace = envB; e.Spec.Analysis = observe("") }),
			refused: "may not list deployments.apps in namespace env-b"},
		{name: "observe without a namespace, own namespace, without the right to read it",
			obj:     experiment(func(e *perfexpv1alpha1.PerfExperiment) { e.Spec.Analysis = observe("") }),
			refused: "may not list deployments.apps in namespace team-a"},
		{name: "observe without a namespace with the right to read the target",
			rights: []right{runInEnvB, {envB, "apps", "deployments", []string{"get", "list"}}},
			obj:    experiment(func(e *perfexpv1alpha1.PerfExperiment) { e.Spec.TargetNamespace = envB; e.Spec.Analysis = observe("") })},
		{name: "patch of deployments in another namespace without the right",
			rights: []right{runInEnvB},
			obj: experiment(func(e *perfexpv1alpha1.PerfExperiment) {
				e.Spec.TargetNamespace = envB
				e.Spec.Variant = scaleTo0(perfexpv1alpha1.WorkloadKindDeployment)
			}),
			refused: "may not patch deployments.apps in namespace env-b; perfexp would do it on your behalf"},
		{name: "patch of deployments in another namespace with the right",
			rights: []right{runInEnvB, patchDeployments},
			obj: experiment(func(e *perfexpv1alpha1.PerfExperiment) {
				e.Spec.TargetNamespace = envB
				e.Spec.Variant = scaleTo0(perfexpv1alpha1.WorkloadKindDeployment)
			})},
		{name: "patch of deployments in the own namespace without the right",
			obj: experiment(func(e *perfexpv1alpha1.PerfExperiment) {
				e.Spec.Variant = scaleTo0(perfexpv1alpha1.WorkloadKindDeployment)
			}),
			refused: "may not patch deployments.apps in namespace team-a"},
		{name: "statefulsets need their own right",
			rights: []right{runInEnvB, patchDeployments},
			obj: experiment(func(e *perfexpv1alpha1.PerfExperiment) {
				e.Spec.TargetNamespace = envB
				e.Spec.Variant = scaleTo0(perfexpv1alpha1.WorkloadKindStatefulSet)
			}),
			refused: "may not patch statefulsets.apps in namespace env-b"},
		{name: "a baseline rolling another namespace's Deployments without the right",
			rights: []right{runInEnvB},
			obj: experiment(func(e *perfexpv1alpha1.PerfExperiment) {
				e.Spec.TargetNamespace = envB
				e.Spec.FreshPods = &perfexpv1alpha1.FreshPods{Workloads: []perfexpv1alpha1.WorkloadSelector{{Names: []string{"api"}}}}
			}),
			refused: "may not patch deployments.apps in namespace env-b"},
		{name: "a baseline rolling another namespace's Deployments with the right",
			rights: []right{runInEnvB, patchDeployments},
			obj: experiment(func(e *perfexpv1alpha1.PerfExperiment) {
				e.Spec.TargetNamespace = envB
				e.Spec.FreshPods = &perfexpv1alpha1.FreshPods{Workloads: []perfexpv1alpha1.WorkloadSelector{{Names: []string{"api"}}}}
			})},
		{name: "kube-system is refused even for cluster-admin", admin: true,
			obj: experiment(func(e *perfexpv1alpha1.PerfExperiment) {
				e.Spec.TargetNamespace = "kube-system"
				e.Spec.Variant = scaleTo0(perfexpv1alpha1.WorkloadKindDeployment)
			}),
			refused: "perfexp never changes anything in kube-system"},
		{name: "kube-system is refused for a user with the rights there",
			rights:  []right{{"kube-system", "apps", "deployments", []string{"patch"}}},
			obj:     experiment(func(e *perfexpv1alpha1.PerfExperiment) { e.Spec.TargetNamespace = "kube-system" }),
			refused: "perfexp never changes anything in kube-system"},
		{name: "generic patch of a ConfigMap without the right",
			rights: []right{runInEnvB},
			obj: experiment(func(e *perfexpv1alpha1.PerfExperiment) {
				e.Spec.TargetNamespace = envB
				e.Spec.Variant = &perfexpv1alpha1.Variant{Patches: []perfexpv1alpha1.ObjectPatch{configMapPatch()}}
			}),
			refused: "may not patch configmaps in namespace env-b"},
		{name: "generic patch of a ConfigMap without get",
			rights: []right{runInEnvB, {envB, "", "configmaps", []string{"patch"}}},
			obj: experiment(func(e *perfexpv1alpha1.PerfExperiment) {
				e.Spec.TargetNamespace = envB
				e.Spec.Variant = &perfexpv1alpha1.Variant{Patches: []perfexpv1alpha1.ObjectPatch{configMapPatch()}}
			}),
			refused: "may not get configmaps in namespace env-b"},
		{name: "generic patch of a ConfigMap with the right",
			rights: []right{runInEnvB, {envB, "", "configmaps", []string{"get", "patch"}}},
			obj: experiment(func(e *perfexpv1alpha1.PerfExperiment) {
				e.Spec.TargetNamespace = envB
				e.Spec.Variant = &perfexpv1alpha1.Variant{Patches: []perfexpv1alpha1.ObjectPatch{configMapPatch()}}
			})},
		{name: "generic patch of a kind the policy does not know", admin: true,
			obj: experiment(func(e *perfexpv1alpha1.PerfExperiment) {
				e.Spec.Variant = &perfexpv1alpha1.Variant{Patches: []perfexpv1alpha1.ObjectPatch{{
					Target: perfexpv1alpha1.ObjectTarget{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRoleBinding", Name: "x"}, Patch: "{}"}}}
			}),
			refused: "a variant patch targets rbac.authorization.k8s.io/ClusterRoleBinding (as group/Kind), a kind the admission policy of perfexp does not know"},
		{name: "Strimzi mode without the right on kafkas",
			rights: []right{runInEnvB, patchDeployments},
			obj: experiment(func(e *perfexpv1alpha1.PerfExperiment) {
				e.Spec.TargetNamespace = envB
				e.Spec.Variant = &perfexpv1alpha1.Variant{Kafka: &perfexpv1alpha1.KafkaVariant{StrimziMode: &perfexpv1alpha1.StrimziModeSwitch{Name: "main", KRaft: "enabled"}}}
			}),
			refused: "may not patch kafkas.kafka.strimzi.io in namespace env-b"},
		{name: "observe in a namespace the user may not read",
			obj:     experiment(func(e *perfexpv1alpha1.PerfExperiment) { e.Spec.Analysis = observe(envC) }),
			refused: "may not list deployments.apps in namespace env-c"},
		{name: "observe in a namespace the user may list but not get",
			rights:  []right{{envC, "apps", "deployments", []string{"list"}}},
			obj:     experiment(func(e *perfexpv1alpha1.PerfExperiment) { e.Spec.Analysis = observe(envC) }),
			refused: "may not get deployments.apps in namespace env-c"},
		{name: "observe in a namespace the user may read",
			rights: []right{{envC, "apps", "deployments", []string{"get", "list"}}},
			obj:    experiment(func(e *perfexpv1alpha1.PerfExperiment) { e.Spec.Analysis = observe(envC) })},
		{name: "observe in kube-system is refused even for cluster-admin", admin: true,
			obj:     experiment(func(e *perfexpv1alpha1.PerfExperiment) { e.Spec.Analysis = observe("kube-system") }),
			refused: "perfexp never reads workloads in kube-system"},
		{name: "fromKafka in a namespace the user may not read",
			rights: []right{{teamNS, "apps", "deployments", []string{"get", "patch"}}},
			obj: experiment(func(e *perfexpv1alpha1.PerfExperiment) {
				e.Spec.Variant = &perfexpv1alpha1.Variant{Kafka: &perfexpv1alpha1.KafkaVariant{Bootstrap: &perfexpv1alpha1.KafkaBootstrapSwitch{
					Workloads: perfexpv1alpha1.WorkloadSelector{Names: []string{"web"}}, FromKafka: &perfexpv1alpha1.StrimziKafkaRef{Name: "other", Namespace: envC}}}}
			}),
			refused: "may not get kafkas.kafka.strimzi.io in namespace env-c"},
		{name: "a Secret in a load scenario's env without get on secrets",
			obj:     experiment(func(e *perfexpv1alpha1.PerfExperiment) { e.Spec.Load.Scenarios[0].Env = secretEnv() }),
			refused: "may not get secrets in namespace team-a"},
		{name: "backend credentials from a Secret without get on secrets",
			obj: experiment(func(e *perfexpv1alpha1.PerfExperiment) {
				e.Spec.Analysis = &perfexpv1alpha1.Analysis{PrometheusURL: "https://mimir.example/prometheus",
					PrometheusAuth: &perfexpv1alpha1.PrometheusAuth{BearerToken: &perfexpv1alpha1.SecretKey{Name: "db", Key: "password"}}}
			}),
			refused: "may not get secrets in namespace team-a"},
		{name: "a Secret in the teardown's env without get on secrets",
			obj: experiment(func(e *perfexpv1alpha1.PerfExperiment) {
				e.Spec.Teardown = &perfexpv1alpha1.Setup{Image: "registry.example.com/reset:1", Env: secretEnv()}
			}),
			refused: "may not get secrets in namespace team-a"},
		{name: "a Secret in the setup's env with get on secrets",
			rights: []right{{teamNS, "", "secrets", []string{"get"}}},
			obj: experiment(func(e *perfexpv1alpha1.PerfExperiment) {
				e.Spec.Setup = &perfexpv1alpha1.Setup{Image: "registry.example.com/datagen:1", Env: secretEnv()}
			})},
		{name: "a script ConfigMap without get on configmaps",
			obj: experiment(func(e *perfexpv1alpha1.PerfExperiment) {
				e.Spec.Load.Scenarios[0].Script = perfexpv1alpha1.ScriptSource{ConfigMap: &perfexpv1alpha1.ConfigMapScript{Name: "checkout"}}
			}),
			refused: "may not get configmaps in namespace team-a"},
		{name: "twenty rights are checked within the API server's cost budget", admin: true,
			obj: experiment(func(e *perfexpv1alpha1.PerfExperiment) { e.Spec.Analysis = observe(namespaces(10)...) })},
		{name: "more than twenty rights are refused", admin: true,
			rights:  []right{runInEnvB},
			obj:     experiment(func(e *perfexpv1alpha1.PerfExperiment) { e.Spec.Analysis = observe(namespaces(11)...) }),
			refused: "this experiment needs 22 different rights checked"},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			runAdmissionCase(t, env, fmt.Sprintf("user-%d", i), tt)
		})
	}
}

// The operator writes metadata (its finalizer) on experiments whose targets its service
// account may not patch in the namespaced RBAC setup: updates that leave the spec alone are
// not checked, updates of the spec are.
func storyChecksOnlySpecUpdates(t *testing.T, env *testenv.Env) {
	exp := experiment(func(e *perfexpv1alpha1.PerfExperiment) {
		e.Spec.TargetNamespace = envB
		e.Spec.Variant = scaleTo0(perfexpv1alpha1.WorkloadKindDeployment)
	})("admin").(*perfexpv1alpha1.PerfExperiment)
	if err := env.Client.Create(t.Context(), exp); err != nil {
		t.Fatal(err)
	}
	user := "operator-like"
	c := as(t, env, user, []right{runInEnvB, {teamNS, "perfexp.dev", "perfexperiments", []string{"get", "update", "patch"}}})

	eventually(t, func() error {
		got := &perfexpv1alpha1.PerfExperiment{}
		if err := c.Get(t.Context(), client.ObjectKeyFromObject(exp), got); err != nil {
			return err
		}
		got.Finalizers = append(got.Finalizers, "perfexp.dev/restore")
		return c.Update(t.Context(), got, client.DryRunAll)
	}, "")
	eventually(t, func() error {
		got := &perfexpv1alpha1.PerfExperiment{}
		if err := c.Get(t.Context(), client.ObjectKeyFromObject(exp), got); err != nil {
			return err
		}
		got.Spec.Variant.Workloads[0].Replicas = ptr.To[int32](1)
		return c.Update(t.Context(), got, client.DryRunAll)
	}, "you (user operator-like) may not patch deployments.apps in namespace env-b")
	// An on-call person who may update the experiment, and nothing on its target, may abort it.
	eventually(t, func() error {
		got := &perfexpv1alpha1.PerfExperiment{}
		if err := c.Get(t.Context(), client.ObjectKeyFromObject(exp), got); err != nil {
			return err
		}
		got.Spec.Abort = true
		return c.Update(t.Context(), got, client.DryRunAll)
	}, "")
	eventually(t, func() error {
		got := &perfexpv1alpha1.PerfExperiment{}
		if err := c.Get(t.Context(), client.ObjectKeyFromObject(exp), got); err != nil {
			return err
		}
		got.Spec.Abort = true
		got.Spec.Variant.Workloads[0].Replicas = ptr.To[int32](1)
		return c.Update(t.Context(), got, client.DryRunAll)
	}, "you (user operator-like) may not patch deployments.apps in namespace env-b")
}

// PerfSweeps are checked on spec.template (target namespace, observe), on the variants of
// spec.baseline, spec.arms[] and spec.capacity, and on the workloads of spec.matrix[]
// dimensions and spec.bisect's services, with sweeps
// the real PerfSweep CRD accepts.
func storyChecksSweeps(t *testing.T, env *testenv.Env) {
	deploymentVariant := map[string]any{"workloads": []any{map[string]any{"kind": "Deployment", "names": []any{"web"}, "replicas": int64(0)}}}
	otherDeploymentVariant := map[string]any{"workloads": []any{map[string]any{"kind": "Deployment", "names": []any{"web"}, "replicas": int64(1)}}}
	configMapVariant := map[string]any{"patches": []any{map[string]any{"target": map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "name": "settings"}, "patch": "{}"}}}
	statefulSetMatrix := []any{map[string]any{"name": "pool", "env": map[string]any{"kind": "StatefulSet", "names": []any{"db"}, "variable": "POOL", "values": []any{"1", "2"}}}}
	arm := func(name string, variant map[string]any) map[string]any {
		return map[string]any{"name": name, "variant": variant}
	}
	tests := []admissionCase{
		{name: "baseline variant without the right",
			rights:  []right{runInEnvB},
			obj:     sweep(map[string]any{"template": template(envB, nil), "baseline": map[string]any{"variant": deploymentVariant}, "arms": []any{arm("a", otherDeploymentVariant)}}),
			refused: "may not patch deployments.apps in namespace env-b; perfexp would do it on your behalf, so the sweep is refused"},
		{name: "an arm's generic patch without the right",
			rights:  []right{runInEnvB, {envB, "apps", "deployments", []string{"get", "patch"}}},
			obj:     sweep(map[string]any{"template": template(envB, nil), "baseline": map[string]any{"variant": deploymentVariant}, "arms": []any{arm("b", configMapVariant)}}),
			refused: "may not patch configmaps in namespace env-b"},
		{name: "a matrix over a StatefulSet without the right",
			rights:  []right{runInEnvB},
			obj:     sweep(map[string]any{"template": template(envB, nil), "matrix": statefulSetMatrix}),
			refused: "may not patch statefulsets.apps in namespace env-b"},
		{name: "a capacity search's variant without the right",
			rights: []right{runInEnvB},
			obj: sweep(map[string]any{"template": template(envB, map[string]any{"objectives": []any{map[string]any{"name": "p95", "scenario": "s", "metric": "P95", "max": "300"}}}),
				"capacity": map[string]any{"parameter": "VUs", "min": int64(1), "max": int64(10), "variant": deploymentVariant}}),
			refused: "may not patch deployments.apps in namespace env-b"},
		{name: "a bisect's images on a StatefulSet without the right",
			rights: []right{runInEnvB, {envB, "apps", "deployments", []string{"get", "patch"}}},
			obj: sweep(map[string]any{"template": template(envB, nil), "bisect": map[string]any{"services": []any{
				map[string]any{"name": "web", "container": "web", "baseline": "registry.example.com/web:1", "candidate": "registry.example.com/web:2"},
				map[string]any{"name": "db", "kind": "StatefulSet", "container": "db", "baseline": "registry.example.com/db:1", "candidate": "registry.example.com/db:2"}}}}),
			refused: "may not patch statefulsets.apps in namespace env-b"},
		{name: "template targets the sweep's own namespace by default",
			obj:     sweep(map[string]any{"template": template("", nil), "arms": []any{arm("a", deploymentVariant)}}),
			refused: "may not patch deployments.apps in namespace team-a"},
		{name: "template observes a namespace the user may not read",
			rights:  []right{{teamNS, "apps", "deployments", []string{"get", "patch"}}},
			obj:     sweep(map[string]any{"template": template("", map[string]any{"observe": []any{map[string]any{"kind": "StatefulSet", "namespace": envC, "selector": map[string]any{}}}}), "arms": []any{arm("a", deploymentVariant)}}),
			refused: "may not list statefulsets.apps in namespace env-c"},
		{name: "template targets kube-system", admin: true,
			obj:     sweep(map[string]any{"template": template("kube-system", nil), "arms": []any{arm("a", deploymentVariant)}}),
			refused: "perfexp never changes anything in kube-system"},
		{name: "a Secret in the template's setup env without get on secrets",
			rights: []right{runInEnvB, {envB, "apps", "deployments", []string{"get", "patch"}}},
			obj: sweep(map[string]any{"template": func() map[string]any {
				t := template(envB, nil)
				t["setup"] = map[string]any{"image": "registry.example.com/datagen:1", "env": []any{map[string]any{"name": "DB_PASSWORD",
					"valueFrom": map[string]any{"secretKeyRef": map[string]any{"name": "db", "key": "password"}}}}}
				return t
			}(), "arms": []any{arm("a", deploymentVariant)}}),
			refused: "may not get secrets in namespace team-a"},
		{name: "a load-only sweep against another namespace without the right to run experiments there",
			obj:     sweep(map[string]any{"template": template(envB, nil), "matrix": []any{map[string]any{"name": "vus", "load": map[string]any{"parameter": "VUs", "values": []any{int64(1), int64(2)}}}}}),
			refused: "may not create perfexperiments.perfexp.dev in namespace env-b, the right to run experiments against that environment, so this sweep"},
		{name: "a capacity search without a variant against another namespace without the right",
			obj: sweep(map[string]any{"template": template(envB, map[string]any{"objectives": []any{map[string]any{"name": "p95", "scenario": "s", "metric": "P95", "max": "300"}}}),
				"capacity": map[string]any{"parameter": "VUs", "min": int64(1), "max": int64(10)}}),
			refused: "may not create perfexperiments.perfexp.dev in namespace env-b"},
		{name: "every right held",
			rights: []right{runInEnvB, {envB, "apps", "deployments", []string{"get", "patch"}}, {envB, "", "configmaps", []string{"get", "patch"}}, {envB, "apps", "statefulsets", []string{"get", "patch"}}},
			obj:    sweep(map[string]any{"template": template(envB, nil), "baseline": map[string]any{"variant": deploymentVariant}, "arms": []any{arm("a", configMapVariant)}, "matrix": statefulSetMatrix})},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			runAdmissionCase(t, env, fmt.Sprintf("sweeper-%d", i), tt)
		})
	}
}

// template is a sweep's template with a small valid load, targeting ns ("" for the sweep's own
// namespace), with analysis when not nil.
func template(ns string, analysis map[string]any) map[string]any {
	t := map[string]any{"load": map[string]any{"scenarios": []any{map[string]any{
		"name": "s", "script": map[string]any{"inline": "export default function () {}"}, "vus": int64(1), "duration": "10s"}}}}
	if ns != "" {
		t["targetNamespace"] = ns
	}
	if analysis != nil {
		t["analysis"] = analysis
	}
	return t
}

func runAdmissionCase(t *testing.T, env *testenv.Env, user string, tt admissionCase) {
	t.Helper()
	c := env.Client
	if !tt.admin {
		c = as(t, env, user, tt.rights)
	} else {
		user = "admin"
	}
	want := tt.refused
	if want != "" && !tt.admin && strings.HasPrefix(want, "may not") {
		want = "you (user " + user + ") " + want
	}
	eventually(t, func() error { return c.Create(t.Context(), tt.obj(user), client.DryRunAll) }, want)
}

// eventually retries call until it succeeds (want empty) or fails with a Forbidden error
// containing want: RBAC grants reach the authorizer a moment after they are created.
func eventually(t *testing.T, call func() error, want string) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		err := call()
		switch {
		case want == "" && err == nil:
			return
		case want != "" && err != nil && apierrors.IsForbidden(err) && strings.Contains(err.Error(), want):
			return
		case time.Now().After(deadline):
			if want == "" {
				t.Fatalf("refused, want accepted: %v", err)
			}
			t.Fatalf("got %v, want a refusal saying %q", err, want)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// as returns a client that impersonates user, who holds rights plus the right to create
// experiments and sweeps in teamNS.
func as(t *testing.T, env *testenv.Env, user string, rights []right) client.Client {
	t.Helper()
	all := append([]right{{teamNS, "perfexp.dev", "perfexperiments", []string{"create"}}, {teamNS, "perfexp.dev", "perfsweeps", []string{"create"}}}, rights...)
	for i, r := range all {
		name := fmt.Sprintf("%s-%d", user, i)
		role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: r.ns, Name: name},
			Rules: []rbacv1.PolicyRule{{APIGroups: []string{r.group}, Resources: []string{r.resource}, Verbs: r.verbs}}}
		binding := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: r.ns, Name: name},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: name},
			Subjects: []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: user}}}
		for _, o := range []client.Object{role, binding} {
			if err := env.Client.Create(t.Context(), o); err != nil {
				t.Fatalf("granting %s: %v", user, err)
			}
		}
	}
	cfg := rest.CopyConfig(env.Config)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: user}
	c, err := client.New(cfg, client.Options{Scheme: env.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func experiment(edit func(*perfexpv1alpha1.PerfExperiment)) func(user string) client.Object {
	return func(user string) client.Object {
		e := &perfexpv1alpha1.PerfExperiment{ObjectMeta: metav1.ObjectMeta{Namespace: teamNS, Name: "exp-" + user}}
		e.Spec.Load.Scenarios = []perfexpv1alpha1.Scenario{{
			Name: "s", Script: perfexpv1alpha1.ScriptSource{Inline: "export default function () {}"},
			Stages: []perfexpv1alpha1.Stage{{Duration: metav1.Duration{Duration: time.Minute}, Target: 1}},
		}}
		if edit != nil {
			edit(e)
		}
		return e
	}
}

// runInEnvB is the right to run experiments against env-b from another namespace.
var runInEnvB = right{envB, "perfexp.dev", "perfexperiments", []string{"create"}}

func scaleTo0(kind perfexpv1alpha1.WorkloadKind) *perfexpv1alpha1.Variant {
	return &perfexpv1alpha1.Variant{Workloads: []perfexpv1alpha1.WorkloadChange{{
		WorkloadSelector: perfexpv1alpha1.WorkloadSelector{Kind: kind, Selector: &metav1.LabelSelector{}}, Replicas: ptr.To[int32](0)}}}
}

func configMapPatch() perfexpv1alpha1.ObjectPatch {
	return perfexpv1alpha1.ObjectPatch{Target: perfexpv1alpha1.ObjectTarget{APIVersion: "v1", Kind: "ConfigMap", Name: "settings"}, Patch: `{"data":{"pool":"50"}}`}
}

func observe(namespaces ...string) *perfexpv1alpha1.Analysis {
	a := &perfexpv1alpha1.Analysis{}
	for _, ns := range namespaces {
		a.Observe = append(a.Observe, perfexpv1alpha1.ObservedWorkloads{
			WorkloadSelector: perfexpv1alpha1.WorkloadSelector{Selector: &metav1.LabelSelector{}}, Namespace: ns})
	}
	return a
}

// namespaces returns n namespace names (they need not exist: rights are checked by name).
func namespaces(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("observed-%d", i)
	}
	return out
}

var sweepGVK = perfexpv1alpha1.GroupVersion.WithKind("PerfSweep")

func sweep(spec map[string]any) func(user string) client.Object {
	return func(user string) client.Object {
		u := &unstructured.Unstructured{Object: map[string]any{"spec": spec}}
		u.SetGroupVersionKind(sweepGVK)
		u.SetNamespace(teamNS)
		u.SetName("sweep-" + user)
		return u
	}
}

// secretEnv is an env var whose value comes from a Secret of the experiment's namespace.
func secretEnv() []perfexpv1alpha1.EnvVar {
	return []perfexpv1alpha1.EnvVar{{Name: "DB_PASSWORD", ValueFrom: &perfexpv1alpha1.EnvVarSource{
		SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "db"}, Key: "password"}}}}
}
