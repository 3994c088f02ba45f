//go:build e2e

package faults

import (
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/perfexp/perfexp/test/e2e/framework"
)

// Faults aimed at the restore itself: the experiment or its target goes away mid-run, the
// restore write is refused for a while, the manager dies while restoring or aborting, and
// analyses that never get an answer fill the operator beside a restore.

// waitGone waits for the experiment to be deleted (its finalizer done) and says whether it was.
func waitGone(t *testing.T, ns, name string, timeout time.Duration) bool {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		out, err := framework.KubectlErr("-n", ns, "get", "pexp", name, "--ignore-not-found", "-o", "name")
		if err == nil && strings.TrimSpace(out) == "" {
			return true
		}
		time.Sleep(time.Second)
	}
	t.Errorf("%s still exists %s after its deletion", name, timeout)
	return false
}

// waitNewManager waits until a manager pod is ready again after a kill.
func waitNewManager(t *testing.T) {
	t.Helper()
	framework.Eventually(t, 3*time.Minute, time.Second, "a new manager runs", func() error {
		_, err := framework.KubectlErr("-n", "perfexp-system", "wait", "pod", "-l", "app.kubernetes.io/name=perfexp", "--for=condition=Ready", "--timeout=5s")
		return err
	})
}

func TestExperimentDeletedMidRun(t *testing.T) { repeat(t, testExperimentDeletedMidRun) }

func testExperimentDeletedMidRun(t *testing.T) {
	en := environment(t)
	name := "deleted-" + framework.RandomSuffix()
	apply(t, en.ns, experimentYAML(name))
	waitPhase(t, en.ns, name, "Running")
	start := time.Now()
	framework.Kubectl(t, "-n", en.ns, "delete", "pexp", name, "--wait=false")
	gone := waitGone(t, en.ns, name, 5*time.Minute)
	restored := en.restored(t, name, 2*time.Minute)
	t.Logf("deleted while Running: gone after %s, restored %v", time.Since(start).Round(time.Second), restored)
	record("experiment deleted mid-run", restored, gone)
}

// The finalizer is removed by force and the experiment deleted while its variant is in place:
// nothing of the experiment restores anything, and the orphan janitor (every --orphan-interval,
// 15 s in this suite) must put every object back from the snapshot it carries.
func TestFinalizerForceRemovedMidRun(t *testing.T) { repeat(t, testFinalizerForceRemovedMidRun) }

func testFinalizerForceRemovedMidRun(t *testing.T) {
	en := environment(t)
	name := "orphaned-" + framework.RandomSuffix()
	apply(t, en.ns, experimentYAML(name))
	waitPhase(t, en.ns, name, "Running")
	if diff := differences(en.before, objects(t, en.ns)); len(diff) == 0 {
		t.Fatalf("%s is Running but nothing is patched: the janitor would have nothing to do", name)
	}
	start := time.Now()
	framework.Kubectl(t, "-n", en.ns, "patch", "pexp", name, "--type=merge", "-p", `{"metadata":{"finalizers":null}}`)
	framework.Kubectl(t, "-n", en.ns, "delete", "pexp", name, "--wait=false")
	gone := waitGone(t, en.ns, name, time.Minute)
	restored := en.restored(t, name, 3*time.Minute)
	t.Logf("finalizer removed while Running: environment restored %v after %s", restored, time.Since(start).Round(time.Second))
	if out, _ := framework.KubectlErr("-n", en.ns, "get", "events", "--field-selector", "reason=OrphanRestored", "-o", "name"); strings.TrimSpace(out) == "" {
		t.Errorf("no OrphanRestored event in %s: was the environment restored by the janitor?", en.ns)
	} else {
		t.Logf("OrphanRestored events: %d", len(strings.Fields(out)))
	}
	record("finalizer force-removed mid-run (orphan janitor)", restored, gone)
}

// The finalizer is removed by force while the restore of one Deployment is refused: the
// janitor restores what it can, reports the Deployment (Event OrphanNotRestored), and the next
// experiment of the queue says so in its UnrestoredOrphans condition (it then fails: the
// Deployment still carries the gone experiment's snapshot). Once the refusal ends, the janitor
// restores the Deployment too.
func TestUnrestorableOrphanReportedOnTheNextExperiment(t *testing.T) {
	longInCI(t)
	repeat(t, testUnrestorableOrphanReportedOnTheNextExperiment)
}

func testUnrestorableOrphanReportedOnTheNextExperiment(t *testing.T) {
	en := environment(t)
	suffix := framework.RandomSuffix()
	gone, next := "orphan-gone-"+suffix, "orphan-next-"+suffix
	apply(t, en.ns, experimentYAML(gone))
	waitPhase(t, en.ns, gone, "Running")
	remove := refuse(t, en.ns, "inventory")
	framework.Kubectl(t, "-n", en.ns, "patch", "pexp", gone, "--type=merge", "-p", `{"metadata":{"finalizers":null}}`)
	framework.Kubectl(t, "-n", en.ns, "delete", "pexp", gone, "--wait=false")
	waitGone(t, en.ns, gone, time.Minute)
	framework.Eventually(t, 2*time.Minute, 2*time.Second, "the janitor reports inventory", func() error {
		out, err := framework.KubectlErr("-n", en.ns, "get", "events", "--field-selector", "reason=OrphanNotRestored,involvedObject.name=inventory",
			"-o", "jsonpath={range .items[*]}{.message}{\"\\n\"}{end}")
		if err != nil {
			return fmt.Errorf("reading events: %w", err)
		}
		if !strings.Contains(out, gone+" ") {
			return fmt.Errorf("no OrphanNotRestored event for inventory naming %s yet", gone)
		}
		return nil
	})
	apply(t, en.ns, experimentYAML(next))
	e := waitTerminal(t, en.ns, next, 5*time.Minute)
	status, reason, msg := e.condition("UnrestoredOrphans")
	t.Logf("%s ended %s (%s); UnrestoredOrphans=%s %s: %s", next, e.Status.Phase, e.Status.Message, status, reason, msg)
	reported := status == "True" && reason == "OrphanNotRestored" && strings.Contains(msg, "Deployment "+en.ns+"/inventory") && strings.Contains(msg, gone)
	if !reported {
		t.Errorf("%s's UnrestoredOrphans is %s/%s %q, want True/OrphanNotRestored naming Deployment %s/inventory and %s", next, status, reason, msg, en.ns, gone)
	}
	if diff := differences(en.before, objects(t, en.ns)); len(diff) != 1 || !strings.HasPrefix(diff[0], "Deployment/inventory ") {
		t.Errorf("while inventory's restore is refused, want only it patched; differences: %v", diff)
	}
	remove()
	restored := en.restored(t, gone, 3*time.Minute)
	record("finalizer force-removed, restore refused for a while (reported on the next experiment)", restored, e.terminal())
	framework.Kubectl(t, "-n", en.ns, "delete", "pexp", next, "--wait=true", "--timeout=2m")
}

// A target Deployment is deleted by someone while the load runs. The experiment must still end,
// put every other object back, and not bring the deleted one back (patched or not).
func TestTargetDeploymentDeletedMidRun(t *testing.T) {
	longInCI(t)
	repeat(t, testTargetDeploymentDeletedMidRun)
}

func testTargetDeploymentDeletedMidRun(t *testing.T) {
	en := environment(t)
	name := "target-gone-" + framework.RandomSuffix()
	apply(t, en.ns, experimentYAML(name))
	waitPhase(t, en.ns, name, "Running")
	framework.Kubectl(t, "-n", en.ns, "delete", "deploy", "inventory", "--wait=true", "--timeout=2m")
	e := waitTerminal(t, en.ns, name, 10*time.Minute)
	_, reason, msg := e.condition("EnvironmentRestored")
	t.Logf("ended %s (%s); EnvironmentRestored %s: %s", e.Status.Phase, e.Status.Message, reason, msg)
	restored := en.restored(t, name, 2*time.Minute, "Deployment/inventory")
	if out, _ := framework.KubectlErr("-n", en.ns, "get", "deploy", "inventory", "--ignore-not-found", "-o", "name"); strings.TrimSpace(out) != "" {
		t.Errorf("the deleted Deployment inventory exists again after %s", name)
		restored = false
	}
	record("target Deployment deleted mid-run", restored, e.terminal())
	framework.Kubectl(t, "-n", en.ns, "delete", "pexp", name, "--wait=true", "--timeout=2m")
	// Back as the demo declares it, for the next fault.
	framework.Kubectl(t, "apply", "-n", en.ns, "-k", "test/demoapp/deploy/base")
	if !en.restored(t, "re-creating inventory", 2*time.Minute) {
		t.Fatal("the environment could not be brought back for the next fault")
	}
}

// refuseUpdatesYAML is a ValidatingAdmissionPolicy and its binding that refuse every update of
// one Deployment of one namespace, as a misbehaving webhook or a policy engine would.
func refuseUpdatesYAML(name, ns, deployment string) string {
	return `
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata:
  name: ` + name + `
spec:
  failurePolicy: Fail
  matchConstraints:
    resourceRules:
    - apiGroups: [apps]
      apiVersions: [v1]
      operations: [UPDATE]
      resources: [deployments]
  matchConditions:
  - name: the-target
    expression: "object.metadata.name == '` + deployment + `'"
  validations:
  - expression: "false"
    message: the fault suite refuses every update of this Deployment for a while
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata:
  name: ` + name + `
spec:
  policyName: ` + name + `
  validationActions: [Deny]
  matchResources:
    namespaceSelector:
      matchLabels: {kubernetes.io/metadata.name: ` + ns + `}
`
}

// refuse applies refuseUpdatesYAML and waits until the API server refuses an update of the
// Deployment (a policy takes a moment to load); the returned func removes it (also at cleanup).
func refuse(t *testing.T, ns, deployment string) func() {
	t.Helper()
	policy := "e2e-faults-refuse-" + framework.RandomSuffix()
	framework.KubectlStdin(t, refuseUpdatesYAML(policy, ns, deployment), "apply", "-f", "-")
	removed := false
	remove := func() {
		if !removed {
			_, _ = framework.KubectlErr("delete", "validatingadmissionpolicybinding,validatingadmissionpolicy", policy, "--ignore-not-found")
			removed = true
		}
	}
	t.Cleanup(remove)
	framework.Eventually(t, time.Minute, time.Second, "the policy refuses updates of "+deployment, func() error {
		_, err := framework.KubectlErr("-n", ns, "annotate", "deploy", deployment, "faults.perfexp.dev/probe=1", "--dry-run=server")
		if err == nil {
			return fmt.Errorf("an update of %s was accepted", deployment)
		}
		return nil
	})
	return remove
}

// The restore's write of a patched Deployment is refused by admission for a while (30 s, 90 s
// in the long form), then accepted again: the experiment must keep trying, not end with the
// environment patched, and restore once the refusal ends.
func TestRestoreRefusedForAWhile(t *testing.T) {
	longInCI(t)
	repeat(t, testRestoreRefusedForAWhile)
}

func testRestoreRefusedForAWhile(t *testing.T) {
	en := environment(t)
	hold := 30 * time.Second
	if long() {
		hold = 90 * time.Second
	}
	name := "refused-" + framework.RandomSuffix()
	apply(t, en.ns, experimentYAML(name))
	waitPhase(t, en.ns, name, "Running")
	remove := refuse(t, en.ns, "inventory")
	waitPhase(t, en.ns, name, "Restoring")
	time.Sleep(hold)
	e := get(t, en.ns, name)
	status, reason, msg := e.condition("EnvironmentRestored")
	t.Logf("%s after %s of refusals: phase %s, EnvironmentRestored %s/%s: %s", name, hold, e.Status.Phase, status, reason, msg)
	if diff := differences(en.before, objects(t, en.ns)); !strings.Contains(strings.Join(diff, "\n"), "Deployment/inventory") {
		t.Errorf("Deployment/inventory is as before while its updates were refused: the refusal did not bite (differences %v)", diff)
	}
	if e.terminal() {
		t.Errorf("%s ended %s while its restore was refused", name, e.Status.Phase)
	}
	remove()
	e = waitTerminal(t, en.ns, name, 10*time.Minute)
	t.Logf("ended %s (%s)", e.Status.Phase, e.Status.Message)
	en.promise(t, "restore refused by admission for a while", name, e)
}

// pollPhase waits for the experiment to be in one of phases, polling fast (a restore lasts
// seconds); it returns false when the experiment passed them.
func pollPhase(t *testing.T, ns, name string, phases ...string) bool {
	t.Helper()
	deadline := time.Now().Add(5 * time.Minute)
	for time.Now().Before(deadline) {
		e := get(t, ns, name)
		for _, p := range phases {
			if e.Status.Phase == p {
				return true
			}
		}
		if e.terminal() || e.Status.Phase == "Analyzing" {
			return false
		}
		time.Sleep(200 * time.Millisecond)
	}
	return false
}

func TestManagerKilledDuringRestore(t *testing.T) { repeat(t, testManagerKilledDuringRestore) }

func testManagerKilledDuringRestore(t *testing.T) {
	en := environment(t)
	name := "killed-restoring-" + framework.RandomSuffix()
	apply(t, en.ns, experimentYAML(name))
	if !pollPhase(t, en.ns, name, "Restoring") {
		t.Fatalf("%s passed Restoring between two looks; it was not killed there", name)
	}
	killManager(t)
	waitNewManager(t)
	e := waitTerminal(t, en.ns, name, 10*time.Minute)
	t.Logf("killed in Restoring; ended %s (%s)", e.Status.Phase, e.Status.Message)
	if e.Status.Phase != "Succeeded" {
		t.Errorf("ended %s, want Succeeded: a restart must not lose the experiment", e.Status.Phase)
	}
	en.promise(t, "manager killed during restore", name, e)
}

func TestManagerKilledDuringAbort(t *testing.T) {
	longInCI(t)
	repeat(t, testManagerKilledDuringAbort)
}

func testManagerKilledDuringAbort(t *testing.T) {
	en := environment(t)
	name := "killed-aborting-" + framework.RandomSuffix()
	apply(t, en.ns, experimentYAML(name))
	waitPhase(t, en.ns, name, "Running")
	framework.Kubectl(t, "-n", en.ns, "patch", "pexp", name, "--type=merge", "-p", `{"spec":{"abort":true}}`)
	killManager(t)
	waitNewManager(t)
	e := waitTerminal(t, en.ns, name, 10*time.Minute)
	t.Logf("killed right after the abort; ended %s (%s)", e.Status.Phase, e.Status.Message)
	if e.Status.Phase != "Aborted" {
		t.Errorf("ended %s, want Aborted", e.Status.Phase)
	}
	en.promise(t, "manager killed during abort", name, e)
}

// hungExperimentYAML is a baseline run (nothing patched) on a queue of its own whose analysis
// reads a Prometheus that accepts connections and never answers; timeouts.analysis ends it.
func hungExperimentYAML(name, queue, prometheusURL, analysisTimeout string) string {
	return `
apiVersion: perfexp.dev/v1alpha1
kind: PerfExperiment
metadata:
  name: ` + name + `
spec:
  queue: ` + queue + `
  timeouts: {analysis: ` + analysisTimeout + `}
  analysis: {prometheusURL: "` + prometheusURL + `"}
  load:
    scenarios:
    - name: checkinout
      script:
        configMap: {name: checkinout-script}
      arrivalRate: {rate: 2, timeUnit: 1s, duration: 5s, preAllocatedVUs: 1, maxVUs: 2}
      env:
      - {name: BASE_URL, value: "http://circulation:8080"}
`
}

// Five experiments on five queues analyse against a Prometheus URL that accepts connections
// and never answers; a sixth, on its own queue, must run, restore and end in its normal time
// beside them (issue 22 item 8 on the real cluster).
func TestFiveHungAnalysesBesideARestore(t *testing.T) {
	longInCI(t)
	repeat(t, testFiveHungAnalysesBesideARestore)
}

func testFiveHungAnalysesBesideARestore(t *testing.T) {
	en := environment(t)
	ln, err := net.Listen("tcp", ":0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	srv := &http.Server{ReadHeaderTimeout: time.Minute, Handler: http.HandlerFunc(func(http.ResponseWriter, *http.Request) { <-done })}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() {
		close(done)
		_ = srv.Close()
	})
	hung := fmt.Sprintf("http://%s:%d", nodeFromPods, ln.Addr().(*net.TCPAddr).Port)

	// The hung analyses must outlast the sixth experiment's run (about 30 s on a quiet node).
	analysisTimeout := "90s"
	if long() {
		analysisTimeout = "3m"
	}
	suffix := framework.RandomSuffix()
	var hungNames []string
	for i := range 5 {
		n := fmt.Sprintf("hung-%d-%s", i+1, suffix)
		hungNames = append(hungNames, n)
		apply(t, en.ns, hungExperimentYAML(n, "e2e-faults-"+n, hung, analysisTimeout))
	}
	for _, n := range hungNames {
		waitPhase(t, en.ns, n, "Analyzing")
	}
	name := "beside-hung-" + suffix
	created := time.Now()
	apply(t, en.ns, experimentWith(name, "10s", ""))
	var restoredAfter time.Duration
	framework.Eventually(t, 10*time.Minute, time.Second, name+" restores beside five hung analyses", func() error {
		e := get(t, en.ns, name)
		if status, _, _ := e.condition("EnvironmentRestored"); status == "True" {
			restoredAfter = time.Since(created)
			return nil
		}
		if e.terminal() {
			return nil
		}
		return fmt.Errorf("phase %s: %s", e.Status.Phase, e.Status.Message)
	})
	e := waitTerminal(t, en.ns, name, 10*time.Minute)
	endedAfter := time.Since(created)
	// Alone on a quiet node this experiment (5 s warm-up, 10 s load, rollouts both ways)
	// restores within about a minute; starved by hung analyses it took minutes.
	const bound = 3 * time.Minute
	t.Logf("%s: EnvironmentRestored %s and %s ended after creation, beside five hung analyses", name, restoredAfter.Round(time.Second), endedAfter.Round(time.Second))
	if restoredAfter == 0 || restoredAfter > bound {
		t.Errorf("%s restored after %s, want within %s: a hung analysis held it back", name, restoredAfter.Round(time.Second), bound)
	}
	onTime := restoredAfter > 0 && restoredAfter <= bound
	// The hung analyses end by their own timeouts.analysis while the server still hangs.
	terminal := e.terminal()
	for _, n := range hungNames {
		h := waitTerminal(t, en.ns, n, 5*time.Minute)
		t.Logf("%s ended %s (%s)", n, h.Status.Phase, h.Status.Message)
		terminal = terminal && h.terminal()
		framework.Kubectl(t, "-n", en.ns, "delete", "pexp", n, "--wait=true", "--timeout=2m")
	}
	restored := en.restored(t, name, 3*time.Minute)
	if e.Status.Environment != nil && !e.Status.Environment.Restored {
		restored = false
	}
	record("five hung analyses beside a restore", restored && onTime, terminal)
	framework.Kubectl(t, "-n", en.ns, "delete", "pexp", name, "--wait=true", "--timeout=2m")
}
