//go:build e2e

// Package framework holds what the end-to-end tests share: kubectl against the local cluster,
// polling with deadlines, and Prometheus queries. The tests drive the cluster the way a user
// does (kubectl, the cluster's Prometheus), so they exercise the real parts and nothing else.
package framework

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// DefaultStateDir is where hack/local-cluster keeps the cluster's state.
const DefaultStateDir = "/var/lib/perfexp-local"

// StateDir is the local cluster's state directory (PERFEXP_LOCAL_DIR overrides it).
func StateDir() string {
	if d := os.Getenv("PERFEXP_LOCAL_DIR"); d != "" {
		return d
	}
	return DefaultStateDir
}

// Kubeconfig is the kubeconfig the tests use: KUBECONFIG, else the local cluster's.
func Kubeconfig() string {
	if k := os.Getenv("KUBECONFIG"); k != "" {
		return k
	}
	return filepath.Join(StateDir(), "kubeconfig")
}

// The Prometheus setups of the local cluster the tests can run against, chosen with
// PERFEXP_E2E_PROMETHEUS (docs/install.md, "Prometheus 3 under prometheus-operator"):
//   - debian (the default, also when unset): the host's Prometheus 2.42 that hack/local-cluster
//     starts, reached by pods through the bridge gateway or the monitoring/prometheus Service;
//   - prom3: Prometheus 3 run by prometheus-operator in namespace prom3 (make cluster-prom3),
//     scraping the kubelet the way kube-prometheus-stack does, at a fixed ClusterIP.
const (
	PrometheusDebian = "debian"
	PrometheusProm3  = "prom3"
)

// prom3ClusterIP is the fixed ClusterIP of prom3/prometheus (hack/local-cluster.d/prom3.sh).
const prom3ClusterIP = "10.96.0.90"

// PrometheusSetup is the setup PERFEXP_E2E_PROMETHEUS names. An unknown name panics: a typo
// must not run the suite against the other Prometheus and report it as this one.
func PrometheusSetup() string {
	switch v := os.Getenv("PERFEXP_E2E_PROMETHEUS"); v {
	case "", PrometheusDebian:
		return PrometheusDebian
	case PrometheusProm3:
		return PrometheusProm3
	default:
		panic(fmt.Sprintf("PERFEXP_E2E_PROMETHEUS=%q: want %q or %q", v, PrometheusDebian, PrometheusProm3))
	}
}

// PrometheusURL is the cluster's Prometheus as seen from the host (PROMETHEUS_URL overrides it).
func PrometheusURL() string {
	if u := os.Getenv("PROMETHEUS_URL"); u != "" {
		return strings.TrimRight(u, "/")
	}
	if PrometheusSetup() == PrometheusProm3 {
		return "http://" + prom3ClusterIP + ":9090"
	}
	return "http://127.0.0.1:9090"
}

// InClusterPrometheusURL is the same Prometheus as seen from pods: what the manager's
// --prometheus-url is set to.
func InClusterPrometheusURL() string {
	if PrometheusSetup() == PrometheusProm3 {
		return "http://prometheus.prom3.svc:9090"
	}
	return debianInClusterURL
}

// debianInClusterURL is config/local's --prometheus-url: the host's Prometheus through the
// CNI bridge gateway.
const debianInClusterURL = "http://10.244.0.1:9090"

// RemoteWriteURL is where k6 pods started by the tests push their samples.
func RemoteWriteURL() string {
	if PrometheusSetup() == PrometheusProm3 {
		return InClusterPrometheusURL() + "/api/v1/write"
	}
	return "http://prometheus.monitoring.svc:9090/api/v1/write"
}

// RepoRoot is the root of the repository, found from this file's location.
func RepoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", "..", ".."))
}

// RandomSuffix returns a short random hex string for unique names.
func RandomSuffix() string {
	b := make([]byte, 3)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// Run runs a command from the repository root and returns its stdout; stderr is included in
// the error so a failure explains itself.
func Run(ctx context.Context, stdin []byte, name string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = RepoRoot()
	cmd.Env = append(os.Environ(), "KUBECONFIG="+Kubeconfig())
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.String(), fmt.Errorf("%s %s: %w\n%s%s", name, strings.Join(args, " "), err, stdout.String(), stderr.String())
	}
	return stdout.String(), nil
}

// Kubectl runs kubectl against the local cluster and fails the test on error.
func Kubectl(t testing.TB, args ...string) string {
	t.Helper()
	out, err := KubectlErr(args...)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// KubectlErr runs kubectl against the local cluster.
func KubectlErr(args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	return Run(ctx, nil, "kubectl", args...)
}

// KubectlStdin runs kubectl with stdin and fails the test on error.
func KubectlStdin(t testing.TB, stdin string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	out, err := Run(ctx, []byte(stdin), "kubectl", args...)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// Eventually calls f until it returns nil or the timeout passes, then fails with f's last error.
func Eventually(t testing.TB, timeout, every time.Duration, what string, f func() error) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		err := f()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: still failing after %s: %v", what, timeout, err)
		}
		time.Sleep(every)
	}
}

// RequireCluster skips the test with instructions when the local cluster is not reachable.
func RequireCluster(t testing.TB) {
	t.Helper()
	if _, err := os.Stat(Kubeconfig()); err != nil {
		t.Fatalf("no kubeconfig at %s: start the cluster with `make cluster-up` (make test-e2e does)", Kubeconfig())
	}
	if _, err := KubectlErr("get", "--raw", "/readyz"); err != nil {
		t.Fatalf("the local cluster is not ready: %v", err)
	}
	if PrometheusSetup() == PrometheusProm3 {
		resp, err := http.Get(PrometheusURL() + "/-/ready")
		if err == nil {
			_ = resp.Body.Close()
		}
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("PERFEXP_E2E_PROMETHEUS=prom3 but Prometheus 3 at %s is not ready (%v): start it with `make cluster-prom3`", PrometheusURL(), err)
		}
	}
}

// Sample is one series of a Prometheus instant-query result.
type Sample struct {
	Metric    map[string]string `json:"metric"`
	Value     []any             `json:"value"`
	Histogram []any             `json:"histogram"`
}

// Float is the sample's value (for float samples).
func (s Sample) Float() float64 {
	if len(s.Value) != 2 {
		return 0
	}
	str, _ := s.Value[1].(string)
	var f float64
	_, _ = fmt.Sscan(str, &f)
	return f
}

// Query runs an instant PromQL query on the cluster's Prometheus.
func Query(query string) ([]Sample, error) {
	resp, err := http.Get(PrometheusURL() + "/api/v1/query?" + url.Values{"query": {query}}.Encode())
	if err != nil {
		return nil, err
	}
	defer func() { _ = resp.Body.Close() }()
	var body struct {
		Status string `json:"status"`
		Error  string `json:"error"`
		Data   struct {
			ResultType string   `json:"resultType"`
			Result     []Sample `json:"result"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		return nil, fmt.Errorf("decoding the answer to %q: %w", query, err)
	}
	if body.Status != "success" {
		return nil, fmt.Errorf("query %q: %s", query, body.Error)
	}
	return body.Data.Result, nil
}

// WaitEstablished waits until the named CRD is served. `kubectl wait` alone fails at once on a
// CRD created a moment ago whose status has no conditions yet, so it is retried.
func WaitEstablished(t testing.TB, crd string) {
	t.Helper()
	Eventually(t, 60*time.Second, time.Second, "CRD "+crd+" established", func() error {
		_, err := KubectlErr("wait", "--for", "condition=established", "crd/"+crd, "--timeout=10s")
		return err
	})
}

// DeployOperator installs the operator from config/local, restarting it when it was already
// there so it runs the image `make images` just built under the same tag.
func DeployOperator(t testing.TB) {
	t.Helper()
	_, err := KubectlErr("-n", "perfexp-system", "get", "deploy/perfexp-manager")
	existed := err == nil
	if PrometheusSetup() == PrometheusDebian {
		Kubectl(t, "apply", "--server-side", "--force-conflicts", "-k", "config/local")
	} else {
		// config/local names the Debian Prometheus; the manager's remote-write URL follows
		// its --prometheus-url, so this one flag points both at the chosen Prometheus.
		manifests := Kubectl(t, "kustomize", "config/local")
		flag := "--prometheus-url=" + debianInClusterURL
		if !strings.Contains(manifests, flag) {
			t.Fatalf("config/local no longer sets %s: update framework.DeployOperator", flag)
		}
		manifests = strings.ReplaceAll(manifests, flag, "--prometheus-url="+InClusterPrometheusURL())
		KubectlStdin(t, manifests, "apply", "--server-side", "--force-conflicts", "-f", "-")
	}
	if existed {
		Kubectl(t, "-n", "perfexp-system", "rollout", "restart", "deploy/perfexp-manager")
	}
	Kubectl(t, "-n", "perfexp-system", "rollout", "status", "deploy/perfexp-manager", "--timeout=180s")
}
