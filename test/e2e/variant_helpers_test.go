//go:build e2e

// Package e2e holds end-to-end tests of perfexp's parts on the local cluster that need no
// operator deployment: the variant package is driven directly, the way the reconciler drives
// it, against real Deployments with real rollouts.
package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/google/uuid"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/step"
	"github.com/perfexp/perfexp/internal/testenv"
	"github.com/perfexp/perfexp/internal/variant"
	"github.com/perfexp/perfexp/test/e2e/framework"
)

func init() {
	// The variant package logs through controller-runtime's logger; the tests report what
	// matters themselves.
	log.SetLogger(logr.Discard())
}

// demoDeployments are the demo system's services.
var demoDeployments = []string{"circulation", "inventory", "kafka-kraft", "kafka-zookeeper"}

// requests counts the API requests a client made.
type requests struct{ n atomic.Int64 }

func (r *requests) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripper(func(req *http.Request) (*http.Response, error) {
		r.n.Add(1)
		return rt.RoundTrip(req)
	})
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// clusterClient is a client for the local cluster that reads from the API server (no cache),
// configured as the manager's: no client-side rate limit (controller-runtime's GetConfig
// sets QPS -1 and leaves fairness to the API server).
func clusterClient(t testing.TB, counter *requests) client.Client {
	t.Helper()
	cfg, err := clientcmd.BuildConfigFromFlags("", framework.Kubeconfig())
	if err != nil {
		t.Fatalf("reading %s: %v", framework.Kubeconfig(), err)
	}
	cfg.QPS = -1
	if counter != nil {
		cfg.WrapTransport = counter.wrap
	}
	c, err := client.New(cfg, client.Options{Scheme: testenv.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	warmUp(t, c)
	if counter != nil {
		counter.n.Store(0)
	}
	return c
}

// warmUp lets the client discover the kinds perfexp reads, as a running manager's client has
// long done, so the measurements do not include API discovery.
func warmUp(t testing.TB, c client.Client) {
	t.Helper()
	for _, l := range []client.ObjectList{&appsv1.DeploymentList{}, &appsv1.StatefulSetList{}, &appsv1.ReplicaSetList{}, &corev1.PodList{}} {
		if err := c.List(t.Context(), l, client.InNamespace("default"), client.Limit(1)); err != nil {
			t.Fatal(err)
		}
	}
	for _, kind := range []string{"DeploymentList", "StatefulSetList"} {
		u := &unstructured.UnstructuredList{}
		u.SetAPIVersion("apps/v1")
		u.SetKind(kind)
		if err := c.List(t.Context(), u, client.InNamespace("default"), client.Limit(1)); err != nil {
			t.Fatal(err)
		}
	}
}

// demoNamespace deploys the demo system into a namespace of its own and waits for it.
func demoNamespace(t testing.TB, prefix string) string {
	t.Helper()
	ns := prefix + "-" + framework.RandomSuffix()
	framework.Kubectl(t, "create", "namespace", ns)
	// Experiments may only patch and read namespaces that opt in (docs/security.md).
	framework.Kubectl(t, "label", "namespace", ns, "perfexp.dev/allow-experiments=true")
	t.Cleanup(func() {
		if os.Getenv("E2E_KEEP") == "1" {
			t.Logf("E2E_KEEP=1: keeping namespace %s", ns)
			return
		}
		_, _ = framework.KubectlErr("delete", "namespace", ns, "--wait=false")
	})
	framework.Kubectl(t, "apply", "-n", ns, "-k", "test/demoapp/deploy/base")
	for _, d := range demoDeployments {
		framework.Kubectl(t, "-n", ns, "rollout", "status", "deploy/"+d, "--timeout=180s")
	}
	return ns
}

// noCPULimits is the experiment "every demo service without a CPU limit". It exists only in
// memory: the variant package needs the experiment's identity and spec, not the object.
func noCPULimits(ns string) *perfexpv1alpha1.PerfExperiment {
	return &perfexpv1alpha1.PerfExperiment{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "no-cpu-limits", UID: types.UID(uuid.NewString()), Generation: 1},
		Spec: perfexpv1alpha1.PerfExperimentSpec{Variant: &perfexpv1alpha1.Variant{
			Description: "no CPU limits",
			Workloads: []perfexpv1alpha1.WorkloadChange{{
				WorkloadSelector: perfexpv1alpha1.WorkloadSelector{Kind: perfexpv1alpha1.WorkloadKindDeployment, Selector: &metav1.LabelSelector{}},
				Resources:        &perfexpv1alpha1.ResourcesChange{RemoveLimits: []corev1.ResourceName{corev1.ResourceCPU}},
			}},
		}},
	}
}

// timing is how long a Prepare or Restore took: in perfexp's own calls, and in all.
type timing struct {
	calls  int
	inside time.Duration
	first  time.Duration
	wall   time.Duration
}

// untilDone calls step until it is done, sleeping between calls as the reconciler would
// requeue, and measures the time spent inside the calls apart from the waiting. In a
// benchmark, the timer runs only inside the calls.
func untilDone(t testing.TB, what string, f func() (step.Result, error), timeout time.Duration) timing {
	t.Helper()
	var tm timing
	start := time.Now()
	b, isBench := t.(*testing.B)
	for {
		callStart := time.Now()
		if isBench {
			b.StartTimer()
		}
		res, err := f()
		if isBench {
			b.StopTimer()
		}
		took := time.Since(callStart)
		if tm.calls == 0 {
			tm.first = took
		}
		tm.inside += took
		tm.calls++
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if res.Failure != nil {
			t.Fatalf("%s failed: %s: %s", what, res.Failure.Reason, res.Failure.Message)
		}
		if res.Done {
			tm.wall = time.Since(start)
			return tm
		}
		if time.Since(start) > timeout {
			t.Fatalf("%s not done after %s: waiting for %s", what, timeout, res.Waiting)
		}
		time.Sleep(pollInterval)
	}
}

// pollInterval is how often the tests call again while a rollout runs: short, so the wall
// time is close to the rollouts' own time.
const pollInterval = 250 * time.Millisecond

// deployments returns `kubectl get deploy -o json` for ns, by name.
func deployments(t testing.TB, ns string) map[string]map[string]any {
	t.Helper()
	var list struct {
		Items []map[string]any `json:"items"`
	}
	if err := json.Unmarshal([]byte(framework.Kubectl(t, "-n", ns, "get", "deploy", "-o", "json")), &list); err != nil {
		t.Fatal(err)
	}
	out := map[string]map[string]any{}
	for _, d := range list.Items {
		out[d["metadata"].(map[string]any)["name"].(string)] = d
	}
	return out
}

// withoutManaged removes what the API server and the Deployment controller manage: the
// resourceVersion, generation, managedFields, status and the controller's revision counter.
func withoutManaged(d map[string]any) map[string]any {
	b, _ := json.Marshal(d)
	var c map[string]any
	_ = json.Unmarshal(b, &c)
	md := c["metadata"].(map[string]any)
	for _, k := range []string{"resourceVersion", "generation", "managedFields"} {
		delete(md, k)
	}
	if a, ok := md["annotations"].(map[string]any); ok {
		delete(a, "deployment.kubernetes.io/revision")
		if len(a) == 0 {
			delete(md, "annotations")
		}
	}
	delete(c, "status")
	return c
}

// podCPULimits returns, for every running pod of the Deployment, its containers' CPU limits.
func podCPULimits(t testing.TB, ns, app string) map[string]string {
	t.Helper()
	var pods struct {
		Items []struct {
			Metadata struct {
				Name              string  `json:"name"`
				DeletionTimestamp *string `json:"deletionTimestamp"`
			} `json:"metadata"`
			Spec struct {
				Containers []struct {
					Resources struct {
						Limits map[string]string `json:"limits"`
					} `json:"resources"`
				} `json:"containers"`
			} `json:"spec"`
		} `json:"items"`
	}
	out := framework.Kubectl(t, "-n", ns, "get", "pods", "-l", "app.kubernetes.io/name="+app, "-o", "json")
	if err := json.Unmarshal([]byte(out), &pods); err != nil {
		t.Fatal(err)
	}
	limits := map[string]string{}
	for _, p := range pods.Items {
		if p.Metadata.DeletionTimestamp != nil {
			continue
		}
		var l []string
		for _, c := range p.Spec.Containers {
			l = append(l, c.Resources.Limits["cpu"])
		}
		limits[p.Metadata.Name] = strings.Join(l, ",")
	}
	return limits
}

func newEnvironment(c client.Client) *variant.Environment {
	return variant.New(c, variant.Options{PollInterval: pollInterval})
}

// podsWithout checks that every running pod of app is new (none of before) and has no CPU
// limit: the rollout really happened.
func podsWithout(t testing.TB, ns, app string, before map[string]string) error {
	now := podCPULimits(t, ns, app)
	if len(now) == 0 {
		return fmt.Errorf("no running pods")
	}
	for pod, limit := range now {
		if _, old := before[pod]; old {
			return fmt.Errorf("pod %s from before the experiment still runs", pod)
		}
		if limit != "" {
			return fmt.Errorf("pod %s has the CPU limit %s", pod, limit)
		}
	}
	return nil
}

// podsWith checks that every running pod of app is new and has the CPU limit the pods had
// before the experiment.
func podsWith(t testing.TB, ns, app string, before map[string]string) error {
	var want string
	for _, l := range before {
		want = l
	}
	now := podCPULimits(t, ns, app)
	if len(now) == 0 {
		return fmt.Errorf("no running pods")
	}
	for pod, limit := range now {
		if _, old := before[pod]; old {
			return fmt.Errorf("pod %s from before the experiment still runs", pod)
		}
		if limit != want {
			return fmt.Errorf("pod %s has the CPU limit %q, want %q", pod, limit, want)
		}
	}
	return nil
}
