//go:build e2e

// Package faults breaks the real local cluster under running experiments and checks perfexp's
// promise after each break: the experiment ends (terminal, or is gone when it was deleted), every
// object of the environment it may patch (Deployments, a StatefulSet, ConfigMaps, Services and a
// HorizontalPodAutoscaler) is exactly as before, and nothing of perfexp's is left on them. The
// faults are real: the manager's pod is force-deleted (in every phase, during a restore and
// during an abort), the Debian Prometheus is stopped or frozen with SIGSTOP (its port then
// accepts connections and never answers), a workload is reverted the way Argo CD self-heals, a k6
// pod is held Terminating by a finalizer, the kubelet is stopped, the experiment is deleted or
// its finalizer removed by force mid-run, the target Deployment is deleted mid-run, an admission
// policy refuses the restore for a while, and five analyses hang beside a restore.
//
// Each fault is run FAULTS_RUNS times (1 unless set; 3 in the long form) and the suite prints a
// table of runs, restored and terminal per fault at the end (also written to FAULTS_TABLE when
// set). `make test-e2e` runs the short form; `make test-faults` the long form: FAULTS_LONG=1
// adds more kills per phase, the stuck k6 pod, the kubelet, and longer refusals.
package faults

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/perfexp/perfexp/test/e2e/framework"
)

func long() bool { return os.Getenv("FAULTS_LONG") == "1" }

// longInCI skips a fault in CI's short form (FAULTS_CI_SHORT=1, set by .ci/run; FAULTS_LONG
// unset): the suite's short form
// must stay short, and these faults' code paths are also covered by envtest tests (the orphan
// condition, the refused restore, the abort, the hung analyses). Run by hand and by
// `make test-faults` they count in the table like every other fault.
func longInCI(t *testing.T) {
	t.Helper()
	if os.Getenv("FAULTS_CI_SHORT") == "1" && !long() {
		t.Skip("long form only in CI (FAULTS_LONG=1, make test-faults): keeps CI's fault suite short")
	}
}

// runs is how many times each fault is injected: FAULTS_RUNS, else 3 in the long form and 1
// in the short one (CI).
func runs() int {
	if n, err := strconv.Atoi(os.Getenv("FAULTS_RUNS")); err == nil && n > 0 {
		return n
	}
	if long() {
		return 3
	}
	return 1
}

// tally counts, per fault, the runs and how many ended restored and terminal.
type tally struct{ runs, restored, terminal int }

var (
	tallyMu sync.Mutex
	tallies = map[string]*tally{}
	faults  []string
)

// record counts one run of a fault.
func record(fault string, restored, terminal bool) {
	tallyMu.Lock()
	defer tallyMu.Unlock()
	c := tallies[fault]
	if c == nil {
		c = &tally{}
		tallies[fault] = c
		faults = append(faults, fault)
	}
	c.runs++
	if restored {
		c.restored++
	}
	if terminal {
		c.terminal++
	}
}

// table renders the tallies as Markdown, in the order the faults first ran.
func table() string {
	tallyMu.Lock()
	defer tallyMu.Unlock()
	if len(faults) == 0 {
		return ""
	}
	pct := func(n, of int) string { return fmt.Sprintf("%d (%d %%)", n, 100*n/of) }
	var b strings.Builder
	b.WriteString("| fault | runs | restored | terminal |\n| --- | --- | --- | --- |\n")
	for _, f := range faults {
		c := tallies[f]
		fmt.Fprintf(&b, "| %s | %d | %s | %s |\n", f, c.runs, pct(c.restored, c.runs), pct(c.terminal, c.runs))
	}
	return b.String()
}

// experimentYAML is a variant that touches every kind the fault suite checks: every Deployment
// and the StatefulSet (no CPU limits; an env var on the StatefulSet), and, through generic
// patches, a ConfigMap, a Service and the HorizontalPodAutoscaler. Its short load lets each
// fault meet every phase within about two minutes.
func experimentYAML(name string) string { return experimentWith(name, "25s", "") }

// experimentWith is experimentYAML with the load's duration and extra spec lines (indented by
// two spaces, under spec).
func experimentWith(name, duration, extra string) string {
	return `
apiVersion: perfexp.dev/v1alpha1
kind: PerfExperiment
metadata:
  name: ` + name + `
spec:
  variant:
    description: no CPU limits on any service; the suite's ConfigMap, Service and autoscaler changed
    workloads:
    - selector: {}
      resources:
        removeLimits: [cpu]
    - kind: StatefulSet
      selector: {}
      resources:
        removeLimits: [cpu]
      env:
        set: [{name: FAULTS_VARIANT, value: "on"}]
    patches:
    - target: {apiVersion: v1, kind: ConfigMap, name: faults-settings}
      type: Merge
      patch: '{"data":{"LOG_LEVEL":"debug","ADDED_BY_VARIANT":"yes"}}'
    - target: {apiVersion: v1, kind: Service, name: inventory}
      patch: '{"metadata":{"annotations":{"faults.perfexp.dev/variant":"on"}},"spec":{"publishNotReadyAddresses":true}}'
    - target: {apiVersion: autoscaling/v2, kind: HorizontalPodAutoscaler, name: ledger}
      type: Merge
      patch: '{"spec":{"maxReplicas":3}}'
  load:
    warmUp: {vus: 1, duration: 5s}
    scenarios:
    - name: checkinout
      script:
        configMap: {name: checkinout-script}
      arrivalRate: {rate: 10, timeUnit: 1s, duration: ` + duration + `, preAllocatedVUs: 5, maxVUs: 10}
      env:
      - {name: BASE_URL, value: "http://circulation:8080"}
` + extra
}

// fixturesYAML are the suite's own objects beside the demo's Deployments: a StatefulSet with
// its headless Service, the ConfigMap it reads and an autoscaler on it, so that every kind the
// variant patches is restored under every fault. The autoscaler has no metrics to act on (no
// metrics server), so it never changes the StatefulSet's replicas.
const fixturesYAML = `
apiVersion: v1
kind: ConfigMap
metadata:
  name: faults-settings
data:
  LOG_LEVEL: info
---
apiVersion: v1
kind: Service
metadata:
  name: ledger
  labels: {app.kubernetes.io/name: ledger}
spec:
  clusterIP: None
  selector: {app.kubernetes.io/name: ledger}
  ports:
  - {name: http, port: 8080, targetPort: http}
---
apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: ledger
  labels: {app.kubernetes.io/name: ledger}
spec:
  serviceName: ledger
  replicas: 1
  selector:
    matchLabels: {app.kubernetes.io/name: ledger}
  template:
    metadata:
      labels: {app.kubernetes.io/name: ledger}
    spec:
      terminationGracePeriodSeconds: 2
      containers:
      - name: ledger
        image: perfexp/demo-inventory:dev
        imagePullPolicy: IfNotPresent
        ports:
        - {name: http, containerPort: 8080}
        env:
        - {name: WORK_ROUNDS, value: "1000"}
        - name: LOG_LEVEL
          valueFrom:
            configMapKeyRef: {name: faults-settings, key: LOG_LEVEL}
        resources:
          requests: {cpu: 20m, memory: 32Mi}
          limits: {cpu: 100m, memory: 96Mi}
        readinessProbe:
          httpGet: {path: /healthz, port: http}
          periodSeconds: 2
        securityContext:
          runAsNonRoot: true
          allowPrivilegeEscalation: false
          readOnlyRootFilesystem: true
          capabilities: {drop: [ALL]}
---
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata:
  name: ledger
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: StatefulSet, name: ledger}
  minReplicas: 1
  maxReplicas: 1
  metrics:
  - type: Resource
    resource:
      name: cpu
      target: {type: Utilization, averageUtilization: 80}
`

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
	before map[string]string
}

var (
	shared     *env
	sharedOnce sync.Once
)

// managerFlags are added to the operator's Deployment for the suite: the orphan janitor looks
// every 15 s (not 5 min), and analyses may name a Prometheus URL on the node (the hung server of
// TestFiveHungAnalysesBesideARestore).
var managerFlags = []string{"--orphan-interval=15s", "--allowed-prometheus-urls=" + framework.InClusterPrometheusURL() + ",http://" + nodeFromPods + ":*"}

// nodeFromPods is the node's address as pods reach it: the CNI bridge gateway.
const nodeFromPods = "10.244.0.1"

func environment(t *testing.T) *env {
	t.Helper()
	framework.RequireCluster(t)
	sharedOnce.Do(func() {
		ns := "e2e-faults-" + framework.RandomSuffix()
		framework.Kubectl(t, "create", "namespace", ns)
		framework.Kubectl(t, "label", "namespace", ns, "perfexp.dev/allow-experiments=true")
		framework.Kubectl(t, "apply", "-n", ns, "-k", "test/demoapp/deploy/base")
		framework.KubectlStdin(t, fixturesYAML, "apply", "-n", ns, "-f", "-")
		framework.Kubectl(t, "-n", ns, "rollout", "status", "deploy", "--timeout=180s")
		framework.Kubectl(t, "-n", ns, "rollout", "status", "statefulset", "--timeout=180s")
		framework.Kubectl(t, "-n", ns, "create", "configmap", "checkinout-script",
			"--from-file=script.js="+filepath.Join(framework.RepoRoot(), "scenarios", "demo", "checkinout.js"))
		framework.DeployOperator(t)
		var ops []string
		for _, f := range managerFlags {
			ops = append(ops, `{"op":"add","path":"/spec/template/spec/containers/0/args/-","value":"`+f+`"}`)
		}
		framework.Kubectl(t, "-n", "perfexp-system", "patch", "deploy", "perfexp-manager", "--type=json", "-p", "["+strings.Join(ops, ",")+"]")
		framework.Kubectl(t, "-n", "perfexp-system", "rollout", "status", "deploy/perfexp-manager", "--timeout=180s")
		shared = &env{ns: ns, before: objects(t, ns)}
	})
	if shared == nil {
		t.Fatal("the shared environment could not be set up (see the first test)")
	}
	return shared
}

func TestMain(m *testing.M) {
	code := m.Run()
	if tbl := table(); tbl != "" {
		fmt.Printf("\nFault suite (%d run(s) per fault):\n\n%s\n", runs(), tbl)
		if path := os.Getenv("FAULTS_TABLE"); path != "" {
			if err := os.WriteFile(path, []byte(tbl), 0o644); err != nil {
				fmt.Fprintln(os.Stderr, err)
			}
		}
	}
	if shared != nil && os.Getenv("E2E_KEEP") != "1" {
		_, _ = framework.KubectlErr("delete", "namespace", shared.ns, "--wait=false")
	}
	os.Exit(code)
}

// checkedKinds are the kinds whose objects the suite compares before and after each fault:
// every kind the variant patches (internal/variant: workloads, and the default generic patch
// kinds but Strimzi's Kafka, which the local cluster does not serve).
const checkedKinds = "deployments.apps,statefulsets.apps,configmaps,services,horizontalpodautoscalers.autoscaling"

// checkedObject is one object of checkedKinds as the comparison reads it.
type checkedObject struct {
	Kind     string `json:"kind"`
	Metadata struct {
		Name            string            `json:"name"`
		Labels          map[string]string `json:"labels"`
		Annotations     map[string]string `json:"annotations"`
		OwnerReferences []struct {
			APIVersion string `json:"apiVersion"`
		} `json:"ownerReferences"`
	} `json:"metadata"`
	Spec       any `json:"spec"`
	Data       any `json:"data"`
	BinaryData any `json:"binaryData"`
}

// checked lists the namespace's objects of checkedKinds but perfexp's own children (report
// and dashboard ConfigMaps, which go with their experiment).
func checked(t *testing.T, ns string) []checkedObject {
	t.Helper()
	out, err := framework.KubectlErr("-n", ns, "get", checkedKinds, "-o", "json")
	if err != nil {
		// The API server may be briefly unreachable while a fault is injected.
		time.Sleep(2 * time.Second)
		out = framework.Kubectl(t, "-n", ns, "get", checkedKinds, "-o", "json")
	}
	var list struct {
		Items []checkedObject `json:"items"`
	}
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		t.Fatal(err)
	}
	kept := list.Items[:0]
	for _, o := range list.Items {
		if len(o.Metadata.OwnerReferences) > 0 && strings.HasPrefix(o.Metadata.OwnerReferences[0].APIVersion, "perfexp.dev/") {
			continue
		}
		kept = append(kept, o)
	}
	return kept
}

// objects is every checked object's labels, annotations and spec (data for ConfigMaps), by
// Kind/name, each as one comparable string.
func objects(t *testing.T, ns string) map[string]string {
	t.Helper()
	got := map[string]string{}
	for _, o := range checked(t, ns) {
		delete(o.Metadata.Annotations, "deployment.kubernetes.io/revision")
		b, _ := json.Marshal([]any{o.Metadata.Labels, o.Metadata.Annotations, o.Spec, o.Data, o.BinaryData})
		got[o.Kind+"/"+o.Metadata.Name] = string(b)
	}
	return got
}

// marks lists the perfexp labels and annotations left on the checked objects.
func marks(t *testing.T, ns string) []string {
	t.Helper()
	var found []string
	for _, o := range checked(t, ns) {
		for _, m := range []map[string]string{o.Metadata.Labels, o.Metadata.Annotations} {
			for k := range m {
				if strings.HasPrefix(k, "perfexp.dev/") {
					found = append(found, o.Kind+"/"+o.Metadata.Name+" "+k)
				}
			}
		}
	}
	sort.Strings(found)
	return found
}

// differences names the objects whose state differs between two snapshots, leaving out skip.
func differences(before, after map[string]string, skip ...string) []string {
	var out []string
	for k, v := range before {
		if contains(skip, k) {
			continue
		}
		if w, ok := after[k]; !ok {
			out = append(out, k+" is gone")
		} else if w != v {
			out = append(out, fmt.Sprintf("%s differs:\n  before %s\n  after  %s", k, v, w))
		}
	}
	for k := range after {
		if _, ok := before[k]; !ok && !contains(skip, k) {
			out = append(out, k+" is new")
		}
	}
	sort.Strings(out)
	return out
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
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

// promise checks what every fault must leave, and counts the run for the fault's row of the
// table: the experiment ended and the environment is as it was before, without perfexp's
// marks. The experiment is deleted afterwards.
func (en *env) promise(t *testing.T, fault, name string, e experiment) {
	t.Helper()
	terminal := e.terminal()
	if !terminal {
		t.Errorf("%s is %s, want terminal", name, e.Status.Phase)
	}
	restored := en.restored(t, name, 3*time.Minute)
	if e.Status.Environment != nil && !e.Status.Environment.Restored {
		t.Errorf("%s ended with status.environment.restored false", name)
		restored = false
	}
	record(fault, restored, terminal)
	framework.Kubectl(t, "-n", en.ns, "delete", "pexp", name, "--wait=true", "--timeout=2m")
}

// restored waits up to timeout for every checked object to be as before with no perfexp mark
// (skip names objects left out of the comparison), then for the rollouts to finish; it reports
// an error and returns false when they are not.
func (en *env) restored(t *testing.T, name string, timeout time.Duration, skip ...string) bool {
	t.Helper()
	var diff, left []string
	deadline := time.Now().Add(timeout)
	for {
		diff, left = differences(en.before, objects(t, en.ns), skip...), marks(t, en.ns)
		if len(diff) == 0 && len(left) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Errorf("after %s, %s's environment is not as before:\n%s\nperfexp marks left: %v", timeout, name, strings.Join(diff, "\n"), left)
			return false
		}
		time.Sleep(2 * time.Second)
	}
	if _, err := framework.KubectlErr("-n", en.ns, "rollout", "status", "deploy", "--timeout=180s"); err != nil {
		t.Errorf("after %s: %v", name, err)
		return false
	}
	if _, err := framework.KubectlErr("-n", en.ns, "rollout", "status", "statefulset", "--timeout=180s"); err != nil {
		t.Errorf("after %s: %v", name, err)
		return false
	}
	return true
}

// repeat runs one fault runs() times, each run a subtest.
func repeat(t *testing.T, run func(t *testing.T)) {
	for i := range runs() {
		t.Run(fmt.Sprintf("run %d", i+1), run)
	}
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
	repeat(t, testManagerKilledAtEveryPhaseBoundary)
}

func testManagerKilledAtEveryPhaseBoundary(t *testing.T) {
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
	en.promise(t, "manager killed at every phase boundary", name, e)
}

func TestPrometheusStoppedThroughTheAnalysis(t *testing.T) {
	repeat(t, testPrometheusStoppedThroughTheAnalysis)
}

func testPrometheusStoppedThroughTheAnalysis(t *testing.T) {
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
	en.promise(t, "Prometheus stopped through the analysis", name, e)
}

func TestHungPrometheusKeepsNoOtherExperimentFromRestoring(t *testing.T) {
	repeat(t, testHungPrometheusKeepsNoOtherExperimentFromRestoring)
}

func testHungPrometheusKeepsNoOtherExperimentFromRestoring(t *testing.T) {
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
	for _, c := range []struct{ name, fault string }{
		{first, "Prometheus frozen (accepts, never answers): the experiment analysing"},
		{second, "Prometheus frozen (accepts, never answers): an experiment running and restoring meanwhile"},
	} {
		n, fault := c.name, c.fault
		e := waitTerminal(t, en.ns, n, 10*time.Minute)
		t.Logf("%s ended %s (%s)", n, e.Status.Phase, e.Status.Message)
		en.promise(t, fault, n, e)
	}
}

func TestRevertDuringTheLoadMakesTheResultsInvalid(t *testing.T) {
	repeat(t, testRevertDuringTheLoadMakesTheResultsInvalid)
}

func testRevertDuringTheLoadMakesTheResultsInvalid(t *testing.T) {
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
	en.promise(t, "Argo-CD-style revert during the load", name, e)
}

func TestK6PodStuckTerminating(t *testing.T) { repeat(t, testK6PodStuckTerminating) }

func testK6PodStuckTerminating(t *testing.T) {
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
	en.promise(t, "k6 pod stuck Terminating, then abort", name, e)
}

func TestKubeletStoppedMidRun(t *testing.T) { repeat(t, testKubeletStoppedMidRun) }

func testKubeletStoppedMidRun(t *testing.T) {
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
	en.promise(t, "kubelet stopped 45 s mid-run", name, e)
}

// Guard against a test that silently compares nothing: every kind the variant patches is in
// the comparison.
func TestEveryPatchedKindIsCompared(t *testing.T) {
	en := environment(t)
	kinds := map[string]int{}
	for k := range en.before {
		kind, _, _ := strings.Cut(k, "/")
		kinds[kind]++
	}
	if kinds["Deployment"] < 3 {
		t.Errorf("the environment has %d Deployments, want the demo's services", kinds["Deployment"])
	}
	for _, k := range []string{"StatefulSet", "ConfigMap", "Service", "HorizontalPodAutoscaler"} {
		if kinds[k] == 0 {
			t.Errorf("no %s is compared (%v)", k, kinds)
		}
	}
}
