//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/testr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/load"
	"github.com/perfexp/perfexp/internal/step"
	"github.com/perfexp/perfexp/test/e2e/framework"
)

// The load runner on the local cluster, driven the way the reconciler drives it: Run is called
// again and again until it is done. The experiment object exists in the cluster so that the
// owner references of the Jobs and ConfigMaps are real (the cluster's garbage collector would
// delete children of a missing owner at once); it is created with spec.abort so that an
// operator deployed in the cluster leaves it alone while the test runs its load.

// loadRemoteWrite follows PERFEXP_E2E_PROMETHEUS (framework.RemoteWriteURL).
var loadRemoteWrite = framework.RemoteWriteURL()

const (
	loadK6Image = "perfexp/k6:v1.8.1"
	// loadPoll is how often the test calls Run: as soon as a watch on the Jobs would.
	loadPoll = 250 * time.Millisecond
)

// timingScript looks items up in the demo's inventory and logs, in milliseconds, when its
// first request was sent and when teardown ran (right after the last iteration ended).
const timingScript = `import http from 'k6/http';
import exec from 'k6/execution';
export default function () {
  const sent = Date.now();
  http.get(__ENV.BASE_URL + '/inventory/items/item-' + (exec.scenario.iterationInTest % 50), { tags: { name: 'get item' } });
  if (exec.vu.iterationInInstance === 0) {
    console.log('first-request ' + sent);
  }
}
export function teardown() {
  console.log('teardown ' + Date.now());
}
`

func loadClients(t *testing.T) (client.Client, kubernetes.Interface) {
	t.Helper()
	cfg, err := clientcmd.BuildConfigFromFlags("", framework.Kubeconfig())
	if err != nil {
		t.Fatal(err)
	}
	cfg.QPS = -1
	// The CRD first: the client learns the kinds the API server serves when it is made.
	framework.Kubectl(t, "apply", "--server-side", "--force-conflicts", "-f", filepath.Join(framework.RepoRoot(), "config", "crd", "bases"))
	framework.WaitEstablished(t, "perfexperiments.perfexp.dev")
	c := clusterClient(t, nil)
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c, cs
}

// loadExperiment creates the experiment in the cluster and returns the copy the test drives.
func loadExperiment(t *testing.T, c client.Client, ns, name string, scenarios []perfexpv1alpha1.Scenario) *perfexpv1alpha1.PerfExperiment {
	t.Helper()
	exp := &perfexpv1alpha1.PerfExperiment{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}}
	exp.Spec.Abort = true
	exp.Spec.Load.Scenarios = scenarios
	if err := c.Create(t.Context(), exp); err != nil {
		t.Fatalf("creating the experiment: %v", err)
	}
	exp.Status = perfexpv1alpha1.PerfExperimentStatus{TestID: name + "-" + framework.RandomSuffix()}
	return exp
}

// drive calls f every loadPoll until it is done, and returns when it was done.
func drive(t *testing.T, what string, f func() (step.Result, error), timeout time.Duration) time.Time {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		res, err := f()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if res.Failure != nil {
			t.Fatalf("%s failed: %s: %s", what, res.Failure.Reason, res.Failure.Message)
		}
		if res.Done {
			return time.Now()
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s not done after %s: %s", what, timeout, res.Waiting)
		}
		time.Sleep(loadPoll)
	}
}

var logTime = regexp.MustCompile(`(first-request|teardown) (\d{13})`)

// loggedTimes reads the first-request and teardown times the timing script logged in a pod.
func loggedTimes(t *testing.T, cs kubernetes.Interface, ns, pod string) (first, teardown time.Time) {
	t.Helper()
	data, err := load.NewPodLogs(cs).Tail(t.Context(), ns, pod, "k6", 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range logTime.FindAllStringSubmatch(string(data), -1) {
		ms, _ := strconv.ParseInt(m[2], 10, 64)
		at := time.UnixMilli(ms)
		switch {
		case m[1] == "first-request" && (first.IsZero() || at.Before(first)):
			first = at
		case m[1] == "teardown":
			teardown = at
		}
	}
	if first.IsZero() || teardown.IsZero() {
		t.Fatalf("pod %s logged no first-request or teardown time:\n%s", pod, data)
	}
	return first, teardown
}

// A performance engineer runs two scenarios against the demo at once: item lookups from the
// start, and the demo's unchanged check-out/check-in script 5 seconds later, split over two k6
// pods at a fixed arrival rate. Afterwards each pod's k6 summary shows the declared load was
// made, the window in status is what happened, and Prometheus holds the samples by testid.
func TestLoadTwoConcurrentScenarios(t *testing.T) {
	framework.RequireCluster(t)
	ns := demoNamespace(t, "e2e-load")
	c, cs := loadClients(t)
	framework.Kubectl(t, "-n", ns, "create", "configmap", "demo-checkinout", "--from-file=script.js="+filepath.Join(framework.RepoRoot(), "scenarios", "demo", "checkinout.js"))

	const (
		lookupVUs     = 3
		lookupFor     = 20 * time.Second
		rate          = 30
		checkoutFor   = 10 * time.Second
		checkoutDelay = 5 * time.Second
	)
	scenarios := []perfexpv1alpha1.Scenario{
		{
			Name: "lookup", Script: perfexpv1alpha1.ScriptSource{Inline: timingScript},
			VUs: ptr.To[int32](lookupVUs), Duration: &metav1.Duration{Duration: lookupFor},
			Env: []perfexpv1alpha1.EnvVar{{Name: "BASE_URL", Value: "http://inventory:8080"}},
		},
		{
			Name: "checkinout", Script: perfexpv1alpha1.ScriptSource{ConfigMap: &perfexpv1alpha1.ConfigMapScript{Name: "demo-checkinout", Key: "script.js"}},
			ArrivalRate: &perfexpv1alpha1.ArrivalRate{Rate: rate, Duration: metav1.Duration{Duration: checkoutFor}, PreAllocatedVUs: 10, MaxVUs: ptr.To[int32](20)},
			Parallelism: 2, StartDelay: &metav1.Duration{Duration: checkoutDelay},
			Env: []perfexpv1alpha1.EnvVar{{Name: "BASE_URL", Value: "http://circulation:8080"}},
		},
	}
	exp := loadExperiment(t, c, ns, "two-scenarios", scenarios)
	r := load.New(c, load.Options{K6Image: loadK6Image, RemoteWriteURL: loadRemoteWrite, Logs: load.NewPodLogs(cs), PollInterval: time.Second})
	ctx := logr.NewContext(t.Context(), testr.New(t))

	running := time.Now()
	done := drive(t, "Run", func() (step.Result, error) { return r.Run(ctx, exp) }, 3*time.Minute)
	t.Cleanup(func() { _, _ = r.Stop(context.Background(), exp) })

	// Every runner pod ended with exit code 0.
	for _, name := range []string{"lookup", "checkinout"} {
		var st *perfexpv1alpha1.ScenarioStatus
		for i := range exp.Status.Load.Scenarios {
			if exp.Status.Load.Scenarios[i].Name == name {
				st = &exp.Status.Load.Scenarios[i]
			}
		}
		if st == nil || st.State != perfexpv1alpha1.ScenarioSucceeded || slices.ContainsFunc(st.ExitCodes, func(c int32) bool { return c != 0 }) {
			t.Fatalf("scenario %s: %+v", name, st)
		}
		t.Logf("scenario %s: %s from %s to %s, exit codes %v", name, st.State, st.StartTime.Format(time.RFC3339), st.CompletionTime.Format(time.RFC3339), st.ExitCodes)
	}

	// The per-pod summaries show the declared load.
	summaries, err := load.ReadSummaries(t.Context(), c, exp)
	if err != nil {
		t.Fatal(err)
	}
	value := func(key, metric, stat string) float64 {
		s, ok := summaries[key]
		if !ok {
			t.Fatalf("no summary %s (have %v)", key, keys(summaries))
		}
		v, _ := s.Metrics[metric].Value(stat)
		return v
	}
	if vus := value("lookup-0.json", "vus_max", "value"); vus != lookupVUs {
		t.Errorf("lookup ran %v VUs, declared %d", vus, lookupVUs)
	}
	var started, vus float64
	for i := 0; i < 2; i++ {
		key := fmt.Sprintf("checkinout-%d.json", i)
		n := value(key, "iterations", "count") + value(key, "dropped_iterations", "count")
		t.Logf("checkinout pod %d: %v iterations (%v dropped), %v VUs", i, value(key, "iterations", "count"), value(key, "dropped_iterations", "count"), value(key, "vus_max", "value"))
		started += n
		vus += value(key, "vus_max", "value")
	}
	// An arrival-rate executor may start one iteration on its segment's closing boundary, so
	// each of the two pods can start one more than its share.
	declared := float64(rate) * checkoutFor.Seconds()
	if started < declared || started > declared+2 {
		t.Errorf("the two checkinout pods started %v iterations; declared %v", started, declared)
	}
	if vus != 10 {
		t.Errorf("the two checkinout pods pre-allocated %v VUs together; declared 10", vus)
	}

	// The window is what happened: from the first pod's start to the last pod's end, and the
	// first and last requests inside it.
	pods := &corev1.PodList{}
	if err := c.List(t.Context(), pods, client.InNamespace(ns), client.MatchingLabels{perfexpv1alpha1.LabelTestID: exp.Status.TestID}); err != nil {
		t.Fatal(err)
	}
	var firstStart, lastEnd, firstRequest, lastTeardown time.Time
	for _, p := range pods.Items {
		term := p.Status.ContainerStatuses[0].State.Terminated
		if term == nil {
			t.Fatalf("pod %s has not terminated", p.Name)
		}
		if firstStart.IsZero() || term.StartedAt.Time.Before(firstStart) {
			firstStart = term.StartedAt.Time
		}
		if term.FinishedAt.After(lastEnd) {
			lastEnd = term.FinishedAt.Time
		}
		if p.Labels[perfexpv1alpha1.LabelScenario] == "lookup" {
			firstRequest, lastTeardown = loggedTimes(t, cs, ns, p.Name)
		}
	}
	w := exp.Status.Window
	// Container times are whole seconds, cut down; the window's end is rounded up.
	if !w.Start.Time.Equal(firstStart) || !w.End.Time.Equal(lastEnd.Add(time.Second)) {
		t.Errorf("window %s..%s; the pods ran %s..%s", w.Start, w.End, firstStart, lastEnd)
	}
	startGap, endGap := firstRequest.Sub(w.Start.Time), w.End.Sub(lastTeardown)
	t.Logf("window %s..%s; first request %s after its start, last iteration ended %s before its end",
		w.Start.Format(time.RFC3339), w.End.Format(time.RFC3339), startGap, endGap)
	// The window holds the load, and is off it by less than Kubernetes' one-second resolution
	// plus k6's own start-up (script init) and shut-down (teardown, summary, last push).
	if startGap < 0 || startGap > 2*time.Second || endGap < 0 || endGap > 2*time.Second {
		t.Errorf("the window is off what happened: first request %s after its start, last iteration %s before its end", startGap, endGap)
	}

	// The overhead perfexp adds around the load.
	t.Logf("OVERHEAD Running -> first k6 request: %s", firstRequest.Sub(running).Round(time.Millisecond))
	t.Logf("OVERHEAD last request -> load done: %s (k6 teardown, summary and exit, pod status, Run noticing)", done.Sub(lastTeardown).Round(time.Millisecond))
	t.Logf("OVERHEAD Running -> load done: %s for %s of planned load", done.Sub(running).Round(time.Millisecond), r.PlannedDuration(exp))

	// Prometheus holds every iteration, tagged with the test id and the scenario.
	query := fmt.Sprintf(`sum by (scenario) (max_over_time(k6_iterations_total{testid=%q}[15m]))`, exp.Status.TestID)
	framework.Eventually(t, time.Minute, 2*time.Second, "k6 samples in Prometheus", func() error {
		samples, err := framework.Query(query)
		if err != nil {
			return err
		}
		got := map[string]float64{}
		for _, s := range samples {
			got[s.Metric["scenario"]] = s.Float()
		}
		want := map[string]float64{
			"lookup":     value("lookup-0.json", "iterations", "count"),
			"checkinout": value("checkinout-0.json", "iterations", "count") + value("checkinout-1.json", "iterations", "count"),
		}
		for k, v := range want {
			if got[k] != v {
				return fmt.Errorf("Prometheus has %v, the summaries count %v", got, want)
			}
		}
		return nil
	})
}

// An engineer aborts a long run: every k6 pod is gone within seconds.
func TestLoadAbortStopsPromptly(t *testing.T) {
	framework.RequireCluster(t)
	ns := demoNamespace(t, "e2e-load-abort")
	c, cs := loadClients(t)
	exp := loadExperiment(t, c, ns, "abort", []perfexpv1alpha1.Scenario{{
		Name: "lookup", Script: perfexpv1alpha1.ScriptSource{Inline: timingScript},
		VUs: ptr.To[int32](2), Duration: &metav1.Duration{Duration: time.Hour}, Parallelism: 2,
		Env: []perfexpv1alpha1.EnvVar{{Name: "BASE_URL", Value: "http://inventory:8080"}},
	}})
	r := load.New(c, load.Options{K6Image: loadK6Image, RemoteWriteURL: loadRemoteWrite, Logs: load.NewPodLogs(cs)})
	ctx := logr.NewContext(t.Context(), testr.New(t))
	framework.Eventually(t, 2*time.Minute, loadPoll, "both k6 pods running", func() error {
		res, err := r.Run(ctx, exp)
		if err != nil || res.Failure != nil {
			t.Fatalf("Run() = %+v, %v", res, err)
		}
		if exp.Status.Window == nil || exp.Status.Window.Start == nil || !strings.Contains(res.Waiting, "2/2 pods running") {
			return fmt.Errorf("waiting for %s", res.Waiting)
		}
		return nil
	})
	aborted := time.Now()
	stopped := drive(t, "Stop", func() (step.Result, error) { return r.Stop(ctx, exp) }, time.Minute)
	t.Logf("OVERHEAD abort -> no k6 pod running: %s", stopped.Sub(aborted).Round(time.Millisecond))
	pods := &corev1.PodList{}
	if err := c.List(t.Context(), pods, client.InNamespace(ns), client.MatchingLabels{perfexpv1alpha1.LabelTestID: exp.Status.TestID}); err != nil {
		t.Fatal(err)
	}
	for _, p := range pods.Items {
		if p.Status.Phase == corev1.PodRunning || p.Status.Phase == corev1.PodPending {
			t.Errorf("pod %s is still %s", p.Name, p.Status.Phase)
		}
	}
	if st := exp.Status.Load.Scenarios[0]; st.State != perfexpv1alpha1.ScenarioStopped {
		t.Errorf("scenario state %s, want Stopped", st.State)
	}
}

func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
