package access_test

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/access"
	"github.com/perfexp/perfexp/internal/testenv"
)

// The operator's rules on their own, with namespaces served by a fake client: what each
// field of an experiment is checked against and what the refusal says.
func TestRulesExperiment(t *testing.T) {
	reader := fake.NewClientBuilder().WithScheme(testenv.Scheme()).WithObjects(
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "library", Labels: map[string]string{perfexpv1alpha1.LabelAllowExperiments: "true"}}},
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "db", Labels: map[string]string{perfexpv1alpha1.LabelAllowExperiments: "yes"}}},
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "kafka"}},
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "perf"}},
	).Build()
	rules := &access.Rules{
		Reader:             reader,
		AllowedNamespaces:  []string{"kafka", "kube-system"},
		OperatorNamespaces: []string{"perfexp-system"},
		GenericPatchKinds:  access.DefaultGenericPatchKinds,
		RunnerImages:       []string{"registry.example.com/perf/*"},
		DefaultImage:       "grafana/k6:1.8.1",
		PrometheusURLs:     []string{"http://prometheus.monitoring:9090"},
	}
	tests := []struct {
		name   string
		edit   func(e *perfexpv1alpha1.PerfExperiment)
		reason string // empty: allowed
		says   string
	}{
		{name: "labelled target", edit: func(e *perfexpv1alpha1.PerfExperiment) { e.Spec.TargetNamespace = "library" }},
		{name: "the experiment's own namespace has not opted in", reason: perfexpv1alpha1.ReasonNamespaceNotAllowed, says: "namespace perf: the namespace has not opted in"},
		{name: "a label value other than true", edit: func(e *perfexpv1alpha1.PerfExperiment) { e.Spec.TargetNamespace = "db" },
			reason: perfexpv1alpha1.ReasonNamespaceNotAllowed, says: "namespace db: the namespace has not opted in"},
		{name: "listed without a label", edit: func(e *perfexpv1alpha1.PerfExperiment) { e.Spec.TargetNamespace = "kafka" }},
		{name: "kube-system even when listed", edit: func(e *perfexpv1alpha1.PerfExperiment) { e.Spec.TargetNamespace = "kube-system" },
			reason: perfexpv1alpha1.ReasonNamespaceNotAllowed, says: "kube-system, kube-public and kube-node-lease are never used"},
		{name: "a namespace that does not exist", edit: func(e *perfexpv1alpha1.PerfExperiment) { e.Spec.TargetNamespace = "gone" },
			reason: perfexpv1alpha1.ReasonNamespaceNotAllowed, says: "namespace gone: it does not exist"},
		{name: "observe in the operator's namespace", edit: func(e *perfexpv1alpha1.PerfExperiment) {
			e.Spec.TargetNamespace = "library"
			e.Spec.Analysis = &perfexpv1alpha1.Analysis{Observe: []perfexpv1alpha1.ObservedWorkloads{{Namespace: "perfexp-system"}}}
		}, reason: perfexpv1alpha1.ReasonNamespaceNotAllowed, says: "read workloads (analysis.observe) in namespace perfexp-system: it is the operator's own namespace"},
		{name: "generic patch with a malformed apiVersion", edit: func(e *perfexpv1alpha1.PerfExperiment) {
			e.Spec.TargetNamespace = "library"
			e.Spec.Variant = &perfexpv1alpha1.Variant{Patches: []perfexpv1alpha1.ObjectPatch{{Target: perfexpv1alpha1.ObjectTarget{APIVersion: "a/b/c", Kind: "ConfigMap", Name: "x"}}}}
		}, reason: perfexpv1alpha1.ReasonInvalidVariant, says: "variant.patches[0]: apiVersion \"a/b/c\""},
		{name: "generic patch of a Secret", edit: func(e *perfexpv1alpha1.PerfExperiment) {
			e.Spec.TargetNamespace = "library"
			e.Spec.Variant = &perfexpv1alpha1.Variant{Patches: []perfexpv1alpha1.ObjectPatch{{Target: perfexpv1alpha1.ObjectTarget{APIVersion: "v1", Kind: "Secret", Name: "x"}}}}
		}, reason: perfexpv1alpha1.ReasonPatchKindNotAllowed, says: "targets Secret, a kind the operator does not patch"},
		{name: "generic patch of a Kafka", edit: func(e *perfexpv1alpha1.PerfExperiment) {
			e.Spec.TargetNamespace = "library"
			e.Spec.Variant = &perfexpv1alpha1.Variant{Patches: []perfexpv1alpha1.ObjectPatch{{Target: perfexpv1alpha1.ObjectTarget{APIVersion: "kafka.strimzi.io/v1beta2", Kind: "Kafka", Name: "x"}}}}
		}},
		{name: "setup image outside the list", edit: func(e *perfexpv1alpha1.PerfExperiment) {
			e.Spec.TargetNamespace = "library"
			e.Spec.Setup = &perfexpv1alpha1.Setup{Image: "busybox"}
		}, reason: perfexpv1alpha1.ReasonPodNotAllowed, says: "the setup Job may not run image busybox"},
		{name: "the operator's k6 image and a listed one", edit: func(e *perfexpv1alpha1.PerfExperiment) {
			e.Spec.TargetNamespace = "library"
			e.Spec.Load.Image = "grafana/k6:1.8.1"
			e.Spec.Setup = &perfexpv1alpha1.Setup{Image: "registry.example.com/perf/loader:3"}
		}},
		{name: "no service account but the runner's when none are listed", edit: func(e *perfexpv1alpha1.PerfExperiment) {
			e.Spec.TargetNamespace = "library"
			e.Spec.Load.Pod = &perfexpv1alpha1.RunnerPod{ServiceAccountName: "anything"}
		}, reason: perfexpv1alpha1.ReasonPodNotAllowed, says: "the load's pods may not run as service account anything; allowed: perfexp-runner"},
		{name: "the teardown as the namespace's default account", edit: func(e *perfexpv1alpha1.PerfExperiment) {
			e.Spec.TargetNamespace = "library"
			e.Spec.Teardown = &perfexpv1alpha1.Setup{Image: "registry.example.com/perf/loader:3", ServiceAccountName: "default"}
		}, reason: perfexpv1alpha1.ReasonPodNotAllowed, says: "the teardown Job may not run as service account default"},
		{name: "the runner account named explicitly", edit: func(e *perfexpv1alpha1.PerfExperiment) {
			e.Spec.TargetNamespace = "library"
			e.Spec.Setup = &perfexpv1alpha1.Setup{Image: "registry.example.com/perf/loader:3", ServiceAccountName: access.DefaultRunnerServiceAccount}
		}},
		{name: "prometheusURL elsewhere", edit: func(e *perfexpv1alpha1.PerfExperiment) {
			e.Spec.TargetNamespace = "library"
			e.Spec.Analysis = &perfexpv1alpha1.Analysis{PrometheusURL: "http://kubernetes.default.svc/api"}
		}, reason: perfexpv1alpha1.ReasonPrometheusURLNotAllowed, says: "http://kubernetes.default.svc/api is not one the operator may query"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			exp := &perfexpv1alpha1.PerfExperiment{ObjectMeta: metav1.ObjectMeta{Namespace: "perf", Name: "e"}}
			if tt.edit != nil {
				tt.edit(exp)
			}
			got, err := rules.Experiment(t.Context(), exp)
			if err != nil {
				t.Fatal(err)
			}
			if tt.reason == "" {
				if got != nil {
					t.Fatalf("refused: %s: %s", got.Reason, got.Message)
				}
				return
			}
			if got == nil || got.Reason != tt.reason || !strings.Contains(got.Message, tt.says) {
				t.Fatalf("got %+v; want %s saying %q", got, tt.reason, tt.says)
			}
		})
	}
}

// Restoring uses Reserved without reading anything: the cluster's and the operator's
// namespaces only.
func TestRulesReserved(t *testing.T) {
	rules := &access.Rules{OperatorNamespaces: []string{"perfexp-system"}, AllowedNamespaces: []string{"kube-public"}}
	for ns, want := range map[string]bool{"kube-system": true, "kube-public": true, "kube-node-lease": true, "perfexp-system": true, "library": false, "default": false} {
		if got := rules.Reserved(ns); got != want {
			t.Errorf("Reserved(%s) = %v, want %v", ns, got, want)
		}
	}
}

// A namespaced install (--watch-namespaces): the listed namespaces are the only ones an
// experiment may use, without the opt-in label and without reading any Namespace (the
// operator holds no cluster-wide read of them); every other namespace is refused, opted in or
// not, and the cluster's and the operator's own stay refused even when listed.
func TestRulesWatchedNamespaces(t *testing.T) {
	rules := &access.Rules{
		Reader:             noReads{t},
		WatchedNamespaces:  []string{"team-a", "team-b", "kube-system", "perfexp-system"},
		AllowedNamespaces:  []string{"library"},
		OperatorNamespaces: []string{"perfexp-system"},
		GenericPatchKinds:  access.DefaultGenericPatchKinds,
	}
	tests := []struct {
		name   string
		ns     string
		target string
		observ string
		says   string // empty: allowed
	}{
		{name: "its own namespace, watched, no label", ns: "team-a"},
		{name: "a target in another watched namespace", ns: "team-a", target: "team-b"},
		{name: "a target outside the watched set", ns: "team-a", target: "shop",
			says: "may not patch or read namespace shop: this operator is installed for namespaces team-a, team-b, kube-system, perfexp-system only"},
		{name: "allowed-namespaces does not widen the set", ns: "team-a", target: "library", says: "namespace library: this operator is installed for"},
		{name: "observe outside the watched set", ns: "team-a", observ: "db", says: "read workloads (analysis.observe) in namespace db: this operator is installed for"},
		{name: "kube-system even when watched", ns: "team-a", target: "kube-system", says: "never used for experiments"},
		{name: "the operator's namespace even when watched", ns: "team-a", target: "perfexp-system", says: "it is the operator's own namespace"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			exp := &perfexpv1alpha1.PerfExperiment{ObjectMeta: metav1.ObjectMeta{Namespace: tt.ns, Name: "e"}}
			exp.Spec.TargetNamespace = tt.target
			if tt.observ != "" {
				exp.Spec.Analysis = &perfexpv1alpha1.Analysis{Observe: []perfexpv1alpha1.ObservedWorkloads{{Namespace: tt.observ}}}
			}
			got, err := rules.Experiment(t.Context(), exp)
			if err != nil {
				t.Fatal(err)
			}
			if tt.says == "" {
				if got != nil {
					t.Fatalf("refused: %s: %s", got.Reason, got.Message)
				}
				return
			}
			if got == nil || got.Reason != perfexpv1alpha1.ReasonNamespaceNotAllowed || !strings.Contains(got.Message, tt.says) {
				t.Fatalf("got %+v; want %s saying %q", got, perfexpv1alpha1.ReasonNamespaceNotAllowed, tt.says)
			}
		})
	}
}

// noReads is a reader that fails the test on any read.
type noReads struct{ t *testing.T }

func (r noReads) Get(_ context.Context, key client.ObjectKey, obj client.Object, _ ...client.GetOption) error {
	r.t.Errorf("read %T %s: a namespaced install reads no Namespace", obj, key)
	return nil
}

func (r noReads) List(_ context.Context, list client.ObjectList, _ ...client.ListOption) error {
	r.t.Errorf("listed %T: a namespaced install lists nothing here", list)
	return nil
}
