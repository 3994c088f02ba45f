//go:build e2e

// Package faults breaks the real local cluster under running experiments and checks perfexp's
// promise after each break: the experiment ends (terminal), every Deployment of the environment
// is exactly as before, and nothing of perfexp's is left on them. The faults are real: the
// manager's pod is force-deleted, the Debian Prometheus is stopped or frozen with SIGSTOP (its
// port then accepts connections and never answers), a workload is reverted the way Argo CD
// self-heals, a k6 pod is held Terminating by a finalizer, and the kubelet is stopped.
//
// `make test-e2e` runs the short form (one manager kill per phase; Prometheus stopped and hung;
// the revert). `make test-faults` runs the long form: FAULTS_LONG=1 adds more kills per phase,
// the stuck k6 pod and the kubelet.
package faults

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/perfexp/perfexp/test/e2e/framework"
)

func long() bool { return os.Getenv("FAULTS_LONG") == "1" }

// experimentYAML is a variant that touches every Deployment (no CPU limits) with a short load,
// so each fault meets every phase within about two minutes.
func experimentYAML(name string) string {
	return `
apiVersion: perfexp.dev/v1alpha1
kind: PerfExperiment
metadata:
  name: ` + name + `
spec:
  variant:
    description: no CPU limits on any service
    workloads:
    - selector: {}
      resources:
        removeLimits: [cpu]
  load:
    warmUp: {vus: 1, duration: 5s}
    scenarios:
    - name: checkinout
      script:
        configMap: {name: checkinout-script}
      arrivalRate: {rate: 10, timeUnit: 1s, duration: 25s, preAllocatedVUs: 5, maxVUs: 10}
      env:
      - {name: BASE_URL, value: "http://circulation:8080"}
`
}

type experiment struct {
	Status struct {
		Phase        string `json:"phase"`
		Verdict      string `json:"verdict"`
		Message      string `json:"message"`
		PhaseHistory []struct {
			Phase string    `json:"phase"`
			Time  time.Time `json:"time"`
		} `json:"phaseHistory"`
		Conditions []struct {
			Type    string `json:"type"`
			Status  string `json:"status"`
			Reason  string `json:"reason"`
			Message string `json:"message"`
		} `json:"conditions"`
		Environment *struct {
			Restored bool `json:"restored"`
		} `json:"environment"`
		Results *struct {
			Validity  string `json:"validity"`
			Scenarios []struct {
				Requests *int64 `json:"requests"`
			} `json:"scenarios"`
		} `json:"results"`
	} `json:"status"`
}

func (e experiment) terminal() bool {
	switch e.Status.Phase {
	case "Succeeded", "Failed", "Aborted":
		return true
	}
	return false
}

func (e experiment) condition(typ string) (status, reason, message string) {
	for _, c := range e.Status.Conditions {
		if c.Type == typ {
			return c.Status, c.Reason, c.Message
		}
	}
	return "", "", ""
}

// env is one demo environment shared by the suite's tests, which run one after another.
type env struct {
	ns     string
	before string
}

var (
	shared     *env
	sharedOnce sync.Once
)

func environment(t *testing.T) *env {
	t.Helper()
	framework.RequireCluster(t)
	sharedOnce.Do(func() {
		ns := "e2e-faults-" + framework.RandomSuffix()
		framework.Kubectl(t, "create", "namespace", ns)
		framework.Kubectl(t, "label", "namespace", ns, "perfexp.dev/allow-experiments=true")
		framework.Kubectl(t, "apply", "-n", ns, "-k", "test/demoapp/deploy/base")
		framework.Kubectl(t, "-n", ns, "rollout", "status", "deploy", "--timeout=180s")
		framework.Kubectl(t, "-n", ns, "create", "configmap", "checkinout-script",
			"--from-file=script.js="+filepath.Join(framework.RepoRoot(), "scenarios", "demo", "checkinout.js"))
		framework.DeployOperator(t)
		shared = &env{ns: ns, before: deployments(t, ns)}
	})
	if shared == nil {
		t.Fatal("the shared environment could not be set up (see the first test)")
	}
	return shared
}

func TestMain(m *testing.M) {
	code := m.Run()
	if shared != nil && os.Getenv("E2E_KEEP") != "1" {
		_, _ = framework.KubectlErr("delete", "namespace", shared.ns, "--wait=false")
	}
	os.Exit(code)
}

// deployments is every Deployment's labels, annotations and spec, as one comparable string.
func deployments(t *testing.T, ns string) string {
	t.Helper()
	var list struct {
		Items []struct {
			Metadata struct {
				Name        string            `json:"name"`
				Labels      map[string]string `json:"labels"`
				Annotations map[string]string `json:"annotations"`
			} `json:"metadata"`
			Spec any `json:"spec"`
		} `json:"items"`
	}
	if err := json.Unmarshal([]byte(framework.Kubectl(t, "-n", ns, "get", "deploy", "-o", "json")), &list); err != nil {
		t.Fatal(err)
	}
	out := map[string]any{}
	for _, d := range list.Items {
		delete(d.Metadata.Annotations, "deployment.kubernetes.io/revision")
		out[d.Metadata.Name] = []any{d.Metadata.Labels, d.Metadata.Annotations, d.Spec}
	}
	b, _ := json.Marshal(out)
	return string(b)
}

func get(t *testing.T, ns, name string) experiment {
	t.Helper()
	var e experiment
	out, err := framework.KubectlErr("-n", ns, "get", "pexp", name, "-o", "json")
	if err != nil {
		// The API server may be briefly unreachable while a fault is injected.
		time.Sleep(time.Second)
		out = framework.Kubectl(t, "-n", ns, "get", "pexp", name, "-o", "json")
	}
	if err := json.Unmarshal([]byte(out), &e); err != nil {
		t.Fatal(err)
	}
	return e
}

func apply(t *testing.T, ns, yaml string) {
	t.Helper()
	framework.KubectlStdin(t, yaml, "apply", "-n", ns, "-f", "-")
}

// waitTerminal waits for the experiment to end and returns it.
func waitTerminal(t *testing.T, ns, name string, timeout time.Duration) experiment {
	t.Helper()
	var e experiment
	framework.Eventually(t, timeout, 2*time.Second, name+" ends", func() error {
		e = get(t, ns, name)
		if !e.terminal() {
			return fmt.Errorf("phase %s: %s", e.Status.Phase, e.Status.Message)
		}
		return nil
	})
	return e
}

func waitPhase(t *testing.T, ns, name string, phases ...string) {
	t.Helper()
	framework.Eventually(t, 5*time.Minute, time.Second, fmt.Sprintf("%s reaches %v", name, phases), func() error {
		e := get(t, ns, name)
		for _, p := range phases {
			if e.Status.Phase == p {
				return nil
			}
		}
		if e.terminal() {
			t.Fatalf("%s ended %s (%s) before reaching %v", name, e.Status.Phase, e.Status.Message, phases)
		}
		return fmt.Errorf("phase %s", e.Status.Phase)
	})
}

// promise checks what every fault must leave: the experiment ended and the environment is as
// it was before, without perfexp's marks.
func (en *env) promise(t *testing.T, name string, e experiment) {
	t.Helper()
	if !e.terminal() {
		t.Errorf("%s is %s, want terminal", name, e.Status.Phase)
	}
	if e.Status.Environment != nil && !e.Status.Environment.Restored {
		t.Errorf("%s ended with its environment not restored", name)
	}
	framework.Eventually(t, 3*time.Minute, 2*time.Second, "every Deployment is as before", func() error {
		if after := deployments(t, en.ns); after != en.before {
			return fmt.Errorf("differs:\nbefore %s\nafter  %s", en.before, after)
		}
		return nil
	})
	if out := framework.Kubectl(t, "-n", en.ns, "get", "deploy", "-o", "jsonpath={.items[*].metadata.annotations}"); strings.Contains(out, "perfexp.dev/") {
		t.Errorf("perfexp's annotations remain on the Deployments: %s", out)
	}
	framework.Kubectl(t, "-n", en.ns, "rollout", "status", "deploy", "--timeout=180s")
	framework.Kubectl(t, "-n", en.ns, "delete", "pexp", name, "--wait=true", "--timeout=2m")
}

func cluster(t *testing.T, args ...string) {
	t.Helper()
	if _, err := framework.Run(t.Context(), nil, filepath.Join(framework.RepoRoot(), "hack", "local-cluster"), args...); err != nil {
		t.Fatal(err)
	}
}

func killManager(t *testing.T) {
	t.Helper()
	framework.Kubectl(t, "-n", "perfexp-system", "delete", "pod", "-l", "app.kubernetes.io/name=perfexp",
		"--grace-period=0", "--force", "--wait=false")
}

func TestManagerKilledAtEveryPhaseBoundary(t *testing.T) {
	en := environment(t)
	kills := 1
	if long() {
		kills = 3
	}
	name := "killed-" + framework.RandomSuffix()
	apply(t, en.ns, experimentYAML(name))
	seen := map[string]int{}
	var order []string
	deadline := time.Now().Add(15 * time.Minute)
	for time.Now().Before(deadline) {
		e := get(t, en.ns, name)
		if e.terminal() {
			break
		}
		p := e.Status.Phase
		if p == "" || seen[p] >= kills {
			time.Sleep(300 * time.Millisecond)
			continue
		}
		seen[p]++
		order = append(order, p)
		killManager(t)
		// The next kill waits for a new manager to have taken over (lease expiry included).
		framework.Eventually(t, 3*time.Minute, time.Second, "a new manager runs", func() error {
			_, err := framework.KubectlErr("-n", "perfexp-system", "wait", "pod", "-l", "app.kubernetes.io/name=perfexp", "--for=condition=Ready", "--timeout=5s")
			return err
		})
	}
	e := waitTerminal(t, en.ns, name, 10*time.Minute)
	t.Logf("manager killed in phases %v; ended %s (%s)", order, e.Status.Phase, e.Status.Message)
	for _, p := range []string{"Preparing", "Running", "Restoring", "Analyzing"} {
		if seen[p] == 0 {
			t.Logf("note: the experiment passed %s between two looks (phases are seconds long); it was not killed there", p)
		}
	}
	if len(order) < 3 {
		t.Errorf("the manager was killed in only %d phases (%v): the test did not exercise restarts", len(order), order)
	}
	if e.Status.Phase != "Succeeded" {
		t.Errorf("ended %s (%s), want Succeeded: a restart must not lose the experiment", e.Status.Phase, e.Status.Message)
	}
	if r := e.Status.Results; r == nil || len(r.Scenarios) == 0 || r.Scenarios[0].Requests == nil || *r.Scenarios[0].Requests < 100 {
		t.Errorf("results %+v, want the load's requests counted", r)
	}
	en.promise(t, name, e)
}

func TestPrometheusStoppedThroughTheAnalysis(t *testing.T) {
	en := environment(t)
	name := "promdown-" + framework.RandomSuffix()
	apply(t, en.ns, experimentYAML(name))
	waitPhase(t, en.ns, name, "Restoring", "Analyzing")
	cluster(t, "fault", "stop", "prometheus")
	restarted := false
	t.Cleanup(func() {
		if !restarted {
			cluster(t, "up")
		}
	})
	waitPhase(t, en.ns, name, "Analyzing")
	framework.Eventually(t, 3*time.Minute, 2*time.Second, "analysis says it waits for Prometheus", func() error {
		e := get(t, en.ns, name)
		if _, reason, msg := e.condition("Analyzed"); reason != "WaitingForPrometheus" {
			return fmt.Errorf("Analyzed reason %q (%s)", reason, msg)
		}
		return nil
	})
	time.Sleep(20 * time.Second)
	if e := get(t, en.ns, name); e.terminal() {
		t.Fatalf("ended %s while Prometheus was down: %s", e.Status.Phase, e.Status.Message)
	}
	cluster(t, "up")
	restarted = true
	e := waitTerminal(t, en.ns, name, 10*time.Minute)
	if e.Status.Phase != "Succeeded" || e.Status.Results == nil || e.Status.Results.Validity != "Valid" {
		t.Errorf("ended %s, results %+v, want Succeeded with valid results once Prometheus is back", e.Status.Phase, e.Status.Results)
	} else if r := e.Status.Results.Scenarios; len(r) == 0 || r[0].Requests == nil || *r[0].Requests < 200 {
		t.Errorf("results %+v, want the whole load counted (about 250 requests)", r)
	}
	en.promise(t, name, e)
}

func TestHungPrometheusKeepsNoOtherExperimentFromRestoring(t *testing.T) {
	en := environment(t)
	first, second := "hung-a-"+framework.RandomSuffix(), "hung-b-"+framework.RandomSuffix()
	apply(t, en.ns, experimentYAML(first))
	// Frozen from the first's load on: its analysis starts as soon as Prometheus's counts equal
	// the k6 summaries, within a second of Analyzing, so freezing Prometheus only then would
	// race the analysis. k6's remote writes of the rest of the load are lost to the freeze, as
	// they would be to a real hang; the first's analysis must wait for Prometheus.
	waitPhase(t, en.ns, first, "Running")
	apply(t, en.ns, experimentYAML(second))
	// Frozen: its port still accepts connections (the kernel completes the handshake) and no
	// request is ever answered, the worst a Prometheus can do to a client.
	cluster(t, "fault", "pause", "prometheus")
	resumed := false
	resume := func() {
		if !resumed {
			cluster(t, "fault", "resume", "prometheus")
			resumed = true
		}
	}
	t.Cleanup(resume)
	framework.Eventually(t, 8*time.Minute, 2*time.Second, second+" runs and restores while Prometheus hangs", func() error {
		e := get(t, en.ns, second)
		if status, _, _ := e.condition("EnvironmentRestored"); status == "True" {
			return nil
		}
		if e.terminal() {
			return nil
		}
		return fmt.Errorf("phase %s: %s", e.Status.Phase, e.Status.Message)
	})
	if e := get(t, en.ns, first); e.terminal() && e.Status.Phase == "Succeeded" {
		t.Errorf("%s succeeded while Prometheus hung", first)
	}
	resume()
	for _, n := range []string{first, second} {
		e := waitTerminal(t, en.ns, n, 10*time.Minute)
		t.Logf("%s ended %s (%s)", n, e.Status.Phase, e.Status.Message)
		en.promise(t, n, e)
	}
}

func TestRevertDuringTheLoadMakesTheResultsInvalid(t *testing.T) {
	en := environment(t)
	name := "reverted-" + framework.RandomSuffix()
	apply(t, en.ns, experimentYAML(name))
	waitPhase(t, en.ns, name, "Running")
	// Argo CD's self-heal re-applies the manifest from Git (client-side apply, its default)
	// under its own field manager.
	framework.Kubectl(t, "apply", "-n", en.ns, "-k", "test/demoapp/deploy/base", "--field-manager=argocd-controller")
	e := waitTerminal(t, en.ns, name, 10*time.Minute)
	status, reason, msg := e.condition("Drifted")
	t.Logf("ended %s; Drifted=%s %s: %s", e.Status.Phase, status, reason, msg)
	if status != "True" || !strings.Contains(msg, "argocd-controller") {
		t.Errorf("Drifted condition %s/%s %q, want True naming the field manager argocd-controller", status, reason, msg)
	}
	if e.Status.Results != nil && e.Status.Results.Validity != "Invalid" {
		t.Errorf("results validity %q, want Invalid: the variant was not in place for the whole load", e.Status.Results.Validity)
	}
	en.promise(t, name, e)
}

func TestK6PodStuckTerminating(t *testing.T) {
	if !long() {
		t.Skip("long form only (FAULTS_LONG=1, make test-faults): waits out the 2-minute stuck-pod bound")
	}
	en := environment(t)
	name := "stuck-" + framework.RandomSuffix()
	apply(t, en.ns, experimentYAML(name))
	waitPhase(t, en.ns, name, "Running")
	var pod string
	framework.Eventually(t, 2*time.Minute, time.Second, "a k6 pod runs", func() error {
		out, err := framework.KubectlErr("-n", en.ns, "get", "pod", "-l", "perfexp.dev/experiment="+name+",app.kubernetes.io/component=load",
			"-o", "jsonpath={.items[0].metadata.name}")
		if err != nil || out == "" {
			return fmt.Errorf("none yet: %w", err)
		}
		pod = out
		return nil
	})
	framework.Kubectl(t, "-n", en.ns, "patch", "pod", pod, "--type=merge", "-p", `{"metadata":{"finalizers":["perfexp.dev/e2e-hold"]}}`)
	t.Cleanup(func() {
		_, _ = framework.KubectlErr("-n", en.ns, "patch", "pod", pod, "--type=merge", "-p", `{"metadata":{"finalizers":null}}`)
	})
	framework.Kubectl(t, "-n", en.ns, "patch", "pexp", name, "--type=merge", "-p", `{"spec":{"abort":true}}`)
	e := waitTerminal(t, en.ns, name, 8*time.Minute)
	if e.Status.Phase != "Aborted" {
		t.Errorf("ended %s (%s), want Aborted", e.Status.Phase, e.Status.Message)
	}
	en.promise(t, name, e)
}

func TestKubeletStoppedMidRun(t *testing.T) {
	if !long() {
		t.Skip("long form only (FAULTS_LONG=1, make test-faults)")
	}
	en := environment(t)
	name := "kubelet-" + framework.RandomSuffix()
	apply(t, en.ns, experimentYAML(name))
	waitPhase(t, en.ns, name, "Running")
	cluster(t, "fault", "stop", "kubelet")
	started := false
	t.Cleanup(func() {
		if !started {
			cluster(t, "up")
		}
	})
	time.Sleep(45 * time.Second)
	cluster(t, "up")
	started = true
	e := waitTerminal(t, en.ns, name, 15*time.Minute)
	t.Logf("ended %s (%s)", e.Status.Phase, e.Status.Message)
	en.promise(t, name, e)
}

// Guard against a test that silently compares nothing.
func TestDeploymentsCompared(t *testing.T) {
	en := environment(t)
	var m map[string]any
	if err := json.Unmarshal([]byte(en.before), &m); err != nil || len(m) < 3 {
		t.Fatalf("the demo environment has %d Deployments (%v), want its services", len(m), err)
	}
}
