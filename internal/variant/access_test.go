package variant

import (
	"context"
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/testenv"
)

// kindsOfInvalidVariants lets the operator try the kinds of storyInvalidVariants' patches, so
// that story sees what the operator does with them past its kind allow-list.
var kindsOfInvalidVariants = []string{"ConfigMap", "Kafka.kafka.strimzi.io", "Widget.example.com", "Namespace"}

// experimentPastAdmission creates an experiment with v. When the admission policy refuses v
// (a kind it does not know), the experiment is created without the patches and given them in
// memory only: the operator's own checks must hold even where the policy is not installed.
func experimentPastAdmission(t testing.TB, c client.Client, ns, name string, v *perfexpv1alpha1.Variant) *perfexpv1alpha1.PerfExperiment {
	t.Helper()
	exp := newExperiment(ns, name, v)
	err := c.Create(t.Context(), exp)
	if err == nil {
		return exp
	}
	if !strings.Contains(err.Error(), "a kind the admission policy of perfexp does not know") {
		t.Fatalf("creating %s: %v", name, err)
	}
	admitted := exp.DeepCopy()
	admitted.ResourceVersion = ""
	admitted.Spec.Variant = v.DeepCopy()
	admitted.Spec.Variant.Patches = nil
	create(t, c, admitted)
	admitted.Spec.Variant = v
	return admitted
}

// optOut removes the opt-in label testenv gives every namespace.
func optOut(t testing.TB, c client.Client, ns string) {
	t.Helper()
	n := &corev1.Namespace{}
	if err := c.Get(t.Context(), client.ObjectKey{Name: ns}, n); err != nil {
		t.Fatal(err)
	}
	delete(n.Labels, perfexpv1alpha1.LabelAllowExperiments)
	if err := c.Update(t.Context(), n); err != nil {
		t.Fatal(err)
	}
}

// The operator's namespace gate, before anything is patched: a namespace that has not opted in,
// a system namespace, the operator's own namespace, a namespace read by observe or fromKafka,
// a generic patch kind outside the allow-list, a refused Prometheus URL, runner pods outside
// the allow-lists. Each is refused with its reason and leaves every object as it was; an
// opted-in namespace is accepted.
func storyNamespaceGate(t *testing.T, te *testenv.Env, labelled string) {
	c := te.Client
	ctx := context.Background()
	plain := te.PlainNamespace(t, "gate-plain")
	listed := te.PlainNamespace(t, "gate-listed")
	operator := te.Namespace(t, "gate-operator")
	for _, ns := range []string{plain, labelled, listed, operator} {
		create(t, c, deployment(ns, "web", nil, service("app")))
	}
	rollOut(t, c, plain)
	rollOut(t, c, labelled)
	rollOut(t, c, listed)
	rollOut(t, c, operator)
	scale := &perfexpv1alpha1.Variant{Workloads: []perfexpv1alpha1.WorkloadChange{{
		WorkloadSelector: perfexpv1alpha1.WorkloadSelector{Names: []string{"web"}}, Replicas: ptr.To[int32](0)}}}
	opts := Options{AllowedNamespaces: []string{listed}, OperatorNamespaces: []string{operator},
		PrometheusURLs:        []string{"http://prometheus.monitoring:9090"},
		RunnerServiceAccounts: []string{"k6"}, RunnerImages: []string{"registry.example.com/k6:*"}, DefaultImage: "grafana/k6:1.8.1"}

	tests := []struct {
		name   string
		ns     string
		target string
		edit   func(*perfexpv1alpha1.PerfExperiment)
		reason string // empty: accepted
		says   string
	}{
		{name: "not opted in", ns: plain, reason: perfexpv1alpha1.ReasonNamespaceNotAllowed, says: "namespace gate-plain: the namespace has not opted in"},
		{name: "opted in by label", ns: labelled},
		{name: "listed by the operator", ns: listed},
		{name: "the operator's own namespace", ns: operator, reason: perfexpv1alpha1.ReasonNamespaceNotAllowed, says: "it is the operator's own namespace"},
		{name: "observe reads a namespace that has not opted in", ns: labelled, edit: func(e *perfexpv1alpha1.PerfExperiment) {
			e.Spec.Analysis = &perfexpv1alpha1.Analysis{Observe: []perfexpv1alpha1.ObservedWorkloads{{
				WorkloadSelector: perfexpv1alpha1.WorkloadSelector{Selector: selectAll()}, Namespace: plain}}}
		}, reason: perfexpv1alpha1.ReasonNamespaceNotAllowed, says: "read workloads (analysis.observe) in namespace gate-plain"},
		{name: "observe reads an opted-in namespace", ns: labelled, edit: func(e *perfexpv1alpha1.PerfExperiment) {
			e.Spec.Analysis = &perfexpv1alpha1.Analysis{Observe: []perfexpv1alpha1.ObservedWorkloads{{
				WorkloadSelector: perfexpv1alpha1.WorkloadSelector{Selector: selectAll()}, Namespace: listed}}}
		}},
		{name: "fromKafka reads a namespace that has not opted in", ns: labelled, edit: func(e *perfexpv1alpha1.PerfExperiment) {
			e.Spec.Variant.Kafka = &perfexpv1alpha1.KafkaVariant{Bootstrap: &perfexpv1alpha1.KafkaBootstrapSwitch{
				Workloads: perfexpv1alpha1.WorkloadSelector{Names: []string{"web"}}, FromKafka: &perfexpv1alpha1.StrimziKafkaRef{Name: "k", Namespace: plain}}}
		}, reason: perfexpv1alpha1.ReasonNamespaceNotAllowed, says: "read the Kafka resource (kafka.bootstrap.fromKafka) in namespace gate-plain"},
		{name: "generic patch of a kind outside the allow-list", ns: labelled, edit: func(e *perfexpv1alpha1.PerfExperiment) {
			e.Spec.Variant.Patches = []perfexpv1alpha1.ObjectPatch{{Target: perfexpv1alpha1.ObjectTarget{APIVersion: "policy/v1", Kind: "PodDisruptionBudget", Name: "web"}, Patch: `{"spec":{"maxUnavailable":1}}`}}
		}, reason: perfexpv1alpha1.ReasonPatchKindNotAllowed, says: "targets PodDisruptionBudget.policy, a kind the operator does not patch"},
		{name: "prometheusURL not allowed", ns: labelled, edit: func(e *perfexpv1alpha1.PerfExperiment) {
			e.Spec.Analysis = &perfexpv1alpha1.Analysis{PrometheusURL: "http://169.254.169.254/latest/meta-data/"}
		}, reason: perfexpv1alpha1.ReasonPrometheusURLNotAllowed, says: "http://169.254.169.254/latest/meta-data/ is not one the operator may query"},
		{name: "prometheusURL allowed", ns: labelled, edit: func(e *perfexpv1alpha1.PerfExperiment) {
			e.Spec.Analysis = &perfexpv1alpha1.Analysis{PrometheusURL: "http://prometheus.monitoring:9090/"}
		}},
		{name: "runner service account not allowed", ns: labelled, edit: func(e *perfexpv1alpha1.PerfExperiment) {
			e.Spec.Load.Pod = &perfexpv1alpha1.RunnerPod{ServiceAccountName: "cluster-admin-sa"}
		}, reason: perfexpv1alpha1.ReasonPodNotAllowed, says: "may not run as service account cluster-admin-sa"},
		{name: "runner image not allowed", ns: labelled, edit: func(e *perfexpv1alpha1.PerfExperiment) {
			e.Spec.Load.Image = "evil.example.com/miner:1"
		}, reason: perfexpv1alpha1.ReasonPodNotAllowed, says: "may not run image evil.example.com/miner:1"},
		{name: "runner pods tolerate a taint the operator does not allow", ns: labelled, edit: func(e *perfexpv1alpha1.PerfExperiment) {
			e.Spec.Load.Pod = &perfexpv1alpha1.RunnerPod{Tolerations: []corev1.Toleration{{Key: "node-role.kubernetes.io/control-plane", Operator: corev1.TolerationOpExists}}}
		}, reason: perfexpv1alpha1.ReasonPodNotAllowed, says: `may not tolerate "node-role.kubernetes.io/control-plane"`},
		{name: "runner image and account allowed", ns: labelled, edit: func(e *perfexpv1alpha1.PerfExperiment) {
			e.Spec.Load.Image = "registry.example.com/k6:1.8.1"
			e.Spec.Load.Pod = &perfexpv1alpha1.RunnerPod{ServiceAccountName: "k6"}
		}},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rvs := resourceVersions(t, c, tt.ns)
			exp := &perfexpv1alpha1.PerfExperiment{ObjectMeta: metav1.ObjectMeta{Namespace: tt.ns, Name: fmt.Sprintf("gate-%d", i)}}
			exp.Spec.Variant = scale.DeepCopy()
			exp.Spec.Load.Scenarios = []perfexpv1alpha1.Scenario{{
				Name: "s", Script: perfexpv1alpha1.ScriptSource{Inline: "export default function () {}"},
				Stages: []perfexpv1alpha1.Stage{{Duration: metav1.Duration{Duration: 60e9}, Target: 1}},
			}}
			if tt.edit != nil {
				tt.edit(exp)
			}
			create(t, c, exp)
			e := New(c, opts)
			res, err := e.Prepare(ctx, exp)
			if err != nil {
				t.Fatal(err)
			}
			if tt.reason == "" {
				if res.Failure != nil {
					t.Fatalf("Prepare refused an allowed experiment: %+v", res.Failure)
				}
				if _, err := e.Restore(ctx, exp); err != nil {
					t.Fatal(err)
				}
				return
			}
			if res.Failure == nil || res.Failure.Reason != tt.reason || !strings.Contains(res.Failure.Message, tt.says) {
				t.Fatalf("Prepare: %+v %+v; want %s saying %q", res, res.Failure, tt.reason, tt.says)
			}
			if got := resourceVersions(t, c, tt.ns); !mapsEqual(got, rvs) {
				t.Fatal("an object was written although the experiment was refused")
			}
			if exp.Status.Environment != nil && len(exp.Status.Environment.Touched) > 0 {
				t.Fatalf("the status records touched objects: %+v", exp.Status.Environment.Touched)
			}
		})
	}
}
