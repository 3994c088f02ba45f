//go:build e2e

package faults

import (
	"strings"
	"testing"
	"time"

	"github.com/perfexp/perfexp/test/e2e/framework"
)

// forgedSnapshot is a perfexp.dev/snapshot annotation written by hand, for an experiment that
// never existed: put back, it would give the Deployment another image and service account.
const forgedSnapshot = `{"v":1,"experiment":"nowhere/never","uid":"0b5e55ed-0000-4000-8000-00000000f00d","changes":[` +
	`{"source":"workloads[0]","path":["spec","template","spec","serviceAccountName"],"before":"\"default\""},` +
	`{"source":"workloads[0]","path":["spec","template","spec","containers",{"name":"pause"},"image"],"before":"\"registry.example/evil:1\""}]}`

// A tenant who may annotate Deployments in a namespace that never opted in writes a snapshot
// annotation by hand (issue 36, item 5). The janitor (every 15 s in this suite) refuses it with
// an OrphanRefused Event and writes nothing: image and service account stay.
func TestForgedSnapshotIsRefused(t *testing.T) {
	framework.RequireCluster(t)
	environment(t) // the suite's manager flags (a 15 s janitor)
	ns := "e2e-forged-" + framework.RandomSuffix()
	framework.Kubectl(t, "create", "namespace", ns)
	t.Cleanup(func() { framework.Kubectl(t, "delete", "namespace", ns, "--wait=false") })
	framework.Kubectl(t, "-n", ns, "create", "deployment", "pause", "--image=registry.k8s.io/pause:3.10")
	framework.Kubectl(t, "-n", ns, "label", "deployment", "pause", "perfexp.dev/patched-by=0b5e55ed-0000-4000-8000-00000000f00d")
	framework.Kubectl(t, "-n", ns, "annotate", "deployment", "pause", "perfexp.dev/snapshot="+forgedSnapshot)
	spec := func() string {
		return framework.Kubectl(t, "-n", ns, "get", "deployment", "pause", "-o",
			"jsonpath={.spec.template.spec.serviceAccountName} {.spec.template.spec.containers[0].image}")
	}
	before := spec()

	deadline := time.Now().Add(2 * time.Minute)
	var events string
	for time.Now().Before(deadline) {
		events, _ = framework.KubectlErr("-n", ns, "get", "events", "--field-selector", "reason=OrphanRefused",
			"-o", "jsonpath={.items[*].note}{.items[*].message}")
		if strings.Contains(events, "refused: not recorded by perfexp") {
			break
		}
		time.Sleep(5 * time.Second)
	}
	if !strings.Contains(events, "refused: not recorded by perfexp") {
		t.Errorf("no OrphanRefused event saying \"refused: not recorded by perfexp\" in %s within 2m (got %q)", ns, events)
	}
	if after := spec(); after != before {
		t.Errorf("the janitor wrote the forged snapshot: %q, was %q", after, before)
	}
	t.Logf("forged snapshot: %s; Deployment still %q", events, before)
	record("forged snapshot annotation (janitor refuses)", spec() == before, true)
}
