package variant

import (
	"fmt"
	"strings"
	"testing"
	"time"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/testenv"
)

// The Kafka-mode study's kraft run: kafka.bootstrap points two Deployments, first written by
// kubectl apply, at another cluster, and a workload change adds an env var. The first Restore
// call writes both objects back and removes perfexp's annotations, but its status write is
// lost to a conflict, so the next call finds the annotations gone and restores from the status
// copy. The values it finds there are the ones perfexp put back itself: no drift. When
// somebody else really did put the old values back (and dropped perfexp's marks) during the
// run, it is drift, named after that writer, not after kubectl, which still owns the env
// var's name but no longer its value.
func storyLostRestoreStatus(t *testing.T, te *testenv.Env, ns string) {
	c := te.Client
	e := New(c, Options{})
	const zk, kraft = "kafka-zk:9092", "kafka-kraft:9092"
	setUp := func(prefix string) (*perfexpv1alpha1.PerfExperiment, map[string]map[string]any) {
		t.Helper()
		names := []string{prefix + "-circulation", prefix + "-import"}
		for _, n := range names {
			if err := c.Create(t.Context(), deployment(ns, n, nil, service("app")), client.FieldOwner("kubectl-client-side-apply")); err != nil {
				t.Fatal(err)
			}
		}
		rollOut(t, c, ns)
		// managedFields times are whole seconds: the experiment is created in a later one
		// than the Deployments, as it is on a cluster.
		time.Sleep(1100 * time.Millisecond)
		before := state(t, c, ns)
		exp := experiment(t, c, ns, prefix, &perfexpv1alpha1.Variant{
			Kafka: &perfexpv1alpha1.KafkaVariant{Bootstrap: &perfexpv1alpha1.KafkaBootstrapSwitch{
				Workloads: perfexpv1alpha1.WorkloadSelector{Kind: perfexpv1alpha1.WorkloadKindDeployment, Names: names}, Address: kraft}},
			Workloads: []perfexpv1alpha1.WorkloadChange{{WorkloadSelector: perfexpv1alpha1.WorkloadSelector{Names: names[1:]},
				Env: &perfexpv1alpha1.EnvChange{Set: []perfexpv1alpha1.EnvVar{{Name: "POOL", Value: "200"}}}}},
		})
		prepare(t, e, c, exp)
		for _, n := range names {
			if v, _ := envValue(containerOf(t, getDeployment(t, c, ns, n).Spec.Template.Spec, "app"), defaultBootstrapEnv); v != kraft {
				t.Fatalf("%s: %s is %q after Prepare, want %q", n, defaultBootstrapEnv, v, kraft)
			}
		}
		return exp, before
	}

	t.Run("the first restore's status write was lost", func(t *testing.T) {
		exp, before := setUp("lost")
		lost := exp.DeepCopy()
		if _, err := e.Restore(t.Context(), exp); err != nil {
			t.Fatal(err)
		}
		if exp.Status.Environment.Touched[0].Restored != true {
			t.Fatal("the first Restore call did not write the objects back")
		}
		rollOut(t, c, ns)
		restore(t, e, c, lost)
		if cond := apimeta.FindStatusCondition(lost.Status.Conditions, perfexpv1alpha1.ConditionDrifted); cond != nil {
			t.Fatalf("Drifted %s: %s; perfexp's own restore is not drift", cond.Status, cond.Message)
		}
		requireSameState(t, before, state(t, c, ns))
	})

	t.Run("someone else put the old values back", func(t *testing.T) {
		exp, before := setUp("reverted")
		d := getDeployment(t, c, ns, "reverted-import")
		for _, k := range ourAnnotations {
			delete(d.Annotations, k)
		}
		delete(d.Labels, LabelPatchedBy)
		spec := &d.Spec.Template.Spec.Containers[0]
		spec.Env = env("HTTP_MAXPOOLSIZE", "10", "LOG_LEVEL", "info", defaultBootstrapEnv, zk)
		if err := c.Update(t.Context(), d, client.FieldOwner("argocd-application-controller")); err != nil {
			t.Fatal(err)
		}
		restore(t, e, c, exp)
		cond := apimeta.FindStatusCondition(exp.Status.Conditions, perfexpv1alpha1.ConditionDrifted)
		if cond == nil || cond.Status != metav1.ConditionTrue {
			t.Fatalf("Drifted = %+v; want True", cond)
		}
		for _, want := range []string{
			fmt.Sprintf(`containers[app].env[%s] is {"name":%q,"value":%q}, not {"name":%q,"value":%q} as kafka.bootstrap set it; changed by "argocd-application-controller" (Update at`,
				defaultBootstrapEnv, defaultBootstrapEnv, zk, defaultBootstrapEnv, kraft),
			"containers[app].env[POOL] is absent",
		} {
			if !strings.Contains(cond.Message, want) {
				t.Fatalf("Drifted message %q does not say %q", cond.Message, want)
			}
		}
		if strings.Contains(cond.Message, "kubectl-client-side-apply") || strings.Contains(cond.Message, "reverted-circulation") {
			t.Fatalf("Drifted message %q names a writer or an object that did not change", cond.Message)
		}
		requireSameState(t, before, state(t, c, ns))
	})
}
