//go:build e2e

package e2e

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/perfexp/perfexp/internal/step"
	"github.com/perfexp/perfexp/test/e2e/framework"
)

// A performance engineer removes the CPU limit of every demo service, sees the services roll
// out without it, and afterwards finds every Deployment as it was: `kubectl get deploy -o
// yaml` differs only in what the API server and the Deployment controller manage.
func TestVariantRemovesCPULimitsAndRestores(t *testing.T) {
	framework.RequireCluster(t)
	ns := demoNamespace(t, "e2e-variant")
	var reqs requests
	c := clusterClient(t, &reqs)
	before := deployments(t, ns)
	podsBefore := map[string]map[string]string{}
	for _, d := range demoDeployments {
		podsBefore[d] = podCPULimits(t, ns, d)
		for pod, limit := range podsBefore[d] {
			if limit == "" {
				t.Fatalf("%s: pod %s has no CPU limit before the experiment; the story needs one", d, pod)
			}
		}
	}

	exp := noCPULimits(ns)
	e := newEnvironment(c)
	ctx := t.Context()
	prep := untilDone(t, "Prepare", func() (step.Result, error) { return e.Prepare(ctx, exp) }, 5*time.Minute)
	t.Logf("Prepare: %d calls, %d API requests, %s inside perfexp (first call %s), %s in all (rollouts included)", prep.calls, reqs.n.Swap(0), prep.inside, prep.first, prep.wall)

	for _, d := range demoDeployments {
		framework.Eventually(t, 2*time.Minute, time.Second, d+" pods without a CPU limit", func() error {
			return podsWithout(t, ns, d, podsBefore[d])
		})
	}
	if n := len(exp.Status.Environment.Touched); n != len(demoDeployments) {
		t.Fatalf("status names %d touched objects, want %d", n, len(demoDeployments))
	}

	rest := untilDone(t, "Restore", func() (step.Result, error) { return e.Restore(ctx, exp) }, 5*time.Minute)
	t.Logf("Restore: %d calls, %d API requests, %s inside perfexp (first call %s), %s in all (rollouts included)", rest.calls, reqs.n.Swap(0), rest.inside, rest.first, rest.wall)

	after := deployments(t, ns)
	for _, d := range demoDeployments {
		b, a := withoutManaged(before[d]), withoutManaged(after[d])
		if !reflect.DeepEqual(b, a) {
			bj, _ := json.MarshalIndent(b, "", "  ")
			aj, _ := json.MarshalIndent(a, "", "  ")
			t.Fatalf("Deployment %s differs in more than managed fields:\nbefore:\n%s\nafter:\n%s", d, bj, aj)
		}
		if before[d]["metadata"].(map[string]any)["generation"] == after[d]["metadata"].(map[string]any)["generation"] {
			t.Errorf("Deployment %s: generation unchanged; the story expects two real rollouts", d)
		}
		framework.Eventually(t, 2*time.Minute, time.Second, d+" pods with their CPU limit back", func() error {
			return podsWith(t, ns, d, podsBefore[d])
		})
	}
}
