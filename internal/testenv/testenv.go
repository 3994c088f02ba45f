// Package testenv starts a real kube-apiserver and etcd (controller-runtime's envtest) with
// perfexp's CRDs installed, for integration tests. The binaries are built and cached under
// bin/k8s by `make envtest-binaries`; tests fail with a clear message when they are missing.
package testenv

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/yaml"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
)

// KubeVersion is the version of the kube-apiserver the tests run against.
const KubeVersion = "v1.36.3"

// Env is a running API server with perfexp's CRDs.
type Env struct {
	Config *rest.Config
	Client client.Client
	Scheme *k8sruntime.Scheme

	env *envtest.Environment
}

// Root is the module's root directory.
func Root() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// Scheme knows the built-in kinds and perfexp's.
func Scheme() *k8sruntime.Scheme {
	s := k8sruntime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		panic(err)
	}
	if err := perfexpv1alpha1.AddToScheme(s); err != nil {
		panic(err)
	}
	return s
}

// Start starts the API server and stops it when the test ends. extraCRDDirs are installed too
// (for example the CRDs of kinds perfexp patches, written for the tests).
func Start(t testing.TB, extraCRDDirs ...string) *Env {
	t.Helper()
	assets := os.Getenv("KUBEBUILDER_ASSETS")
	if assets == "" {
		assets = filepath.Join(Root(), "bin", "k8s", KubeVersion)
	}
	for _, b := range []string{"kube-apiserver", "etcd"} {
		if _, err := os.Stat(filepath.Join(assets, b)); err != nil {
			t.Fatalf("integration tests need %s in %s: run `make envtest-binaries` (or `make test`)", b, assets)
		}
	}
	env := &envtest.Environment{
		BinaryAssetsDirectory: assets,
		CRDDirectoryPaths:     append([]string{filepath.Join(Root(), "config", "crd", "bases")}, extraCRDDirs...),
		ErrorIfCRDPathMissing: true,
		Scheme:                Scheme(),
	}
	cfg, err := env.Start()
	if err != nil {
		t.Fatalf("starting kube-apiserver and etcd: %v", err)
	}
	t.Cleanup(func() {
		if err := env.Stop(); err != nil {
			t.Logf("stopping envtest: %v", err)
		}
	})
	c, err := client.New(cfg, client.Options{Scheme: env.Scheme})
	if err != nil {
		t.Fatalf("creating client: %v", err)
	}
	e := &Env{Config: cfg, Client: c, Scheme: env.Scheme, env: env}
	e.installPolicies(t)
	return e
}

// installPolicies installs the admission policies perfexp ships (config/policy), so tests see
// the API a user's cluster would enforce, and waits until they are in force.
func (e *Env) installPolicies(t testing.TB) {
	t.Helper()
	for _, doc := range policyDocuments(t) {
		obj := &unstructured.Unstructured{}
		if err := yaml.Unmarshal([]byte(doc), &obj.Object); err != nil {
			t.Fatalf("reading policy: %v", err)
		}
		if len(obj.Object) == 0 {
			continue
		}
		if err := e.Client.Create(t.Context(), obj); err != nil {
			t.Fatalf("installing %s %s: %v", obj.GetKind(), obj.GetName(), err)
		}
	}
	waitForPolicy(t, e.Client)
	waitForNoEscalationPolicy(t, e.Client)
}

// policyDocuments reads every manifest config/policy/kustomization.yaml lists, so a policy
// added there is in force in the tests too.
func policyDocuments(t testing.TB) []string {
	t.Helper()
	dir := filepath.Join(Root(), "config", "policy")
	data, err := os.ReadFile(filepath.Join(dir, "kustomization.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var k struct {
		Resources []string `json:"resources"`
	}
	if err := yaml.Unmarshal(data, &k); err != nil {
		t.Fatalf("reading config/policy/kustomization.yaml: %v", err)
	}
	docs := make([]string, 0, 2*len(k.Resources))
	for _, r := range k.Resources {
		data, err := os.ReadFile(filepath.Join(dir, r))
		if err != nil {
			t.Fatal(err)
		}
		docs = append(docs, strings.Split(string(data), "\n---\n")...)
	}
	return docs
}

// waitForNoEscalationPolicy waits until the API server refuses an experiment aimed at
// kube-system, which the no-escalation policy refuses for everyone.
func waitForNoEscalationPolicy(t testing.TB, c client.Client) {
	t.Helper()
	probe := &perfexpv1alpha1.PerfExperiment{}
	probe.Namespace, probe.Name = "default", "escalation-probe"
	probe.Spec.TargetNamespace = "kube-system"
	probe.Spec.Load.Scenarios = []perfexpv1alpha1.Scenario{{
		Name: "s", Script: perfexpv1alpha1.ScriptSource{Inline: "x"},
		Stages: []perfexpv1alpha1.Stage{{Duration: metav1.Duration{Duration: time.Minute}, Target: 1}},
	}}
	deadline := time.Now().Add(30 * time.Second)
	for {
		err := c.Create(t.Context(), probe.DeepCopy(), client.DryRunAll)
		if err != nil && strings.Contains(err.Error(), "perfexp never changes anything in kube-system") {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the no-escalation admission policy did not take effect within 30s (last: %v)", err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// waitForPolicy waits until the API server enforces the frozen-spec policy: admission policies
// take effect asynchronously after they are created.
func waitForPolicy(t testing.TB, c client.Client) {
	t.Helper()
	ctx := t.Context()
	probe := &perfexpv1alpha1.PerfExperiment{}
	probe.Namespace, probe.Name = "default", "policy-probe"
	probe.Spec.Load.Scenarios = []perfexpv1alpha1.Scenario{{
		Name: "s", Script: perfexpv1alpha1.ScriptSource{Inline: "x"},
		Stages: []perfexpv1alpha1.Stage{{Duration: metav1.Duration{Duration: time.Minute}, Target: 1}},
	}}
	if err := c.Create(ctx, probe); err != nil {
		t.Fatalf("creating policy probe: %v", err)
	}
	probe.Status.Phase = perfexpv1alpha1.PhaseRunning
	if err := c.Status().Update(ctx, probe); err != nil {
		t.Fatalf("updating policy probe: %v", err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		changed := probe.DeepCopy()
		changed.Spec.Priority++
		err := c.Update(ctx, changed, client.DryRunAll)
		if err != nil && strings.Contains(err.Error(), "the spec cannot change") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the frozen-spec admission policy did not take effect within 30s (last: %v)", err)
		}
		time.Sleep(200 * time.Millisecond)
	}
	if err := c.Delete(ctx, probe); err != nil {
		t.Fatalf("deleting policy probe: %v", err)
	}
}

// User returns a client configuration authenticated as the user name in groups, who holds
// only the rights RBAC grants that user: code run with it meets the API server's authorizer.
// A service account is the user system:serviceaccount:<namespace>:<name> in the groups
// system:serviceaccounts and system:serviceaccounts:<namespace>.
func (e *Env) User(t testing.TB, name string, groups ...string) *rest.Config {
	t.Helper()
	u, err := e.env.AddUser(envtest.User{Name: name, Groups: groups}, e.Config)
	if err != nil {
		t.Fatalf("adding user %s: %v", name, err)
	}
	return u.Config()
}

// Namespace creates a namespace for one test, opted in to experiments with the
// perfexp.dev/allow-experiments=true label, as an administrator would label a namespace under
// test.
func (e *Env) Namespace(t testing.TB, name string) string {
	t.Helper()
	return e.namespace(t, name, map[string]string{perfexpv1alpha1.LabelAllowExperiments: "true"})
}

// PlainNamespace creates a namespace for one test without the opt-in label.
func (e *Env) PlainNamespace(t testing.TB, name string) string {
	t.Helper()
	return e.namespace(t, name, nil)
}

func (e *Env) namespace(t testing.TB, name string, labels map[string]string) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}
	if err := e.Client.Create(t.Context(), ns); err != nil {
		t.Fatalf("creating namespace %s: %v", name, err)
	}
	return name
}

// Eventually retries check every 100 ms until it returns nil, and fails the test with the
// last error once timeout has passed.
func Eventually(t testing.TB, timeout time.Duration, what string, check func() error) {
	t.Helper()
	EventuallyEvery(t, timeout, 100*time.Millisecond, what, check)
}

// EventuallyEvery is Eventually retrying every every.
func EventuallyEvery(t testing.TB, timeout, every time.Duration, what string, check func() error) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		err := check()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %s: %v", what, timeout, err)
		}
		time.Sleep(every)
	}
}
