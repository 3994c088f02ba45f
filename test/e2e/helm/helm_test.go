//go:build e2e

// Package helm installs perfexp on the local cluster with its Helm chart, the way a user of
// kube-prometheus-stack would: helm install, then helm upgrade to the shared-cluster RBAC form,
// then helm uninstall. The helm binary is the one `make helm` builds (HELM overrides it).
//
// The chart names its cluster-scoped objects as config/ does, so it cannot sit beside a
// kustomize install (make demo's). When one is found, the test lets helm adopt it (the
// ownership annotations helm checks), and after the uninstall it puts config/local back with
// kubectl apply, so the cluster ends as it started. CRDs and experiments are never deleted:
// helm installs crds/ but leaves them on uninstall.
//
// E2E_HELM_DEMO=1 also runs the demo experiments (scenarios/demo, as `make demo` does) on the
// helm-installed operator and waits for them to end (up to DEMO_TIMEOUT seconds, default 1500).
package helm

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/perfexp/perfexp/test/e2e/framework"
)

const (
	release   = "perfexp"
	namespace = "perfexp-system"
	demoNS    = "perfexp-demo"
)

// prometheusURL is the node's Prometheus as pods reach it.
const prometheusURL = "http://10.244.0.1:9090"

// localValues are config/local's settings: images built on the node, the node's Prometheus.
var localValues = []string{
	"--set", "image.tag=dev", "--set", "image.pullPolicy=Never",
	"--set", "k6Image=perfexp/k6:v1.8.1",
	"--set", "prometheusURL=" + prometheusURL,
}

func helmBin(t *testing.T) string {
	t.Helper()
	if h := os.Getenv("HELM"); h != "" {
		return h
	}
	matches, _ := filepath.Glob(filepath.Join(framework.RepoRoot(), "bin", "tools", "helm-*", "helm"))
	if len(matches) == 0 {
		t.Fatal("no helm binary: run `make helm` (or set HELM)")
	}
	return matches[len(matches)-1]
}

// helm runs helm against the local cluster and returns its output and how long it took.
func helm(t *testing.T, args ...string) (string, time.Duration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Minute)
	defer cancel()
	start := time.Now()
	out, err := framework.Run(ctx, nil, helmBin(t), append(args, "--kubeconfig", framework.Kubeconfig())...)
	took := time.Since(start).Round(100 * time.Millisecond)
	if err != nil {
		t.Fatalf("helm %s: %v", strings.Join(args, " "), err)
	}
	t.Logf("$ helm %s   # %s", strings.Join(args, " "), took)
	return out, took
}

// kustomizeObjects are the non-CRD objects of config/local that the chart also renders.
var kustomizeObjects = [][]string{
	{"-n", namespace, "deployment", "perfexp-manager"},
	{"-n", namespace, "serviceaccount", "perfexp-manager"},
	{"clusterrole", "perfexp-manager"}, {"clusterrole", "perfexp-environment-patch"},
	{"clusterrolebinding", "perfexp-manager"}, {"clusterrolebinding", "perfexp-environment-patch"},
	{"clusterrole", "perfexp-metrics-auth"}, {"clusterrolebinding", "perfexp-metrics-auth"}, {"clusterrole", "perfexp-metrics-reader"},
	{"clusterrole", "perfexp-edit"}, {"clusterrole", "perfexp-view"},
	{"validatingadmissionpolicy", "perfexp-no-escalation"}, {"validatingadmissionpolicybinding", "perfexp-no-escalation"},
	{"validatingadmissionpolicy", "perfexp-spec-frozen"}, {"validatingadmissionpolicybinding", "perfexp-spec-frozen"},
	{"validatingadmissionpolicy", "perfexp-interleaved-order"}, {"validatingadmissionpolicybinding", "perfexp-interleaved-order"},
	{"clusterrole", "perfexp-snapshot-key"}, {"-n", namespace, "rolebinding", "perfexp-snapshot-key"},
}

// adoptKustomizeInstall marks an existing kustomize install as the release's, so helm install
// takes it over instead of refusing; it reports whether there was one.
func adoptKustomizeInstall(t *testing.T) bool {
	t.Helper()
	if _, err := framework.KubectlErr("-n", namespace, "get", "deployment", "perfexp-manager"); err != nil {
		return false
	}
	if out, _ := framework.KubectlErr("-n", namespace, "get", "deployment", "perfexp-manager", "-o", "jsonpath={.metadata.labels.app\\.kubernetes\\.io/managed-by}"); out == "Helm" {
		t.Fatalf("perfexp is already installed with helm in %s: helm uninstall it first", namespace)
	}
	t.Log("Found a kustomize install of perfexp (make demo's): helm adopts it and config/local is applied again at the end")
	for _, o := range kustomizeObjects {
		if _, err := framework.KubectlErr(append([]string{"get"}, o...)...); err != nil {
			continue
		}
		framework.Kubectl(t, append(append([]string{"annotate", "--overwrite"}, o...),
			"meta.helm.sh/release-name="+release, "meta.helm.sh/release-namespace="+namespace)...)
		framework.Kubectl(t, append(append([]string{"label", "--overwrite"}, o...), "app.kubernetes.io/managed-by=Helm")...)
	}
	return true
}

func exists(args ...string) bool {
	_, err := framework.KubectlErr(append([]string{"get"}, args...)...)
	return err == nil
}

func TestHelmInstallUpgradeUninstall(t *testing.T) {
	framework.RequireCluster(t)
	chart := filepath.Join(framework.RepoRoot(), "charts", "perfexp")
	adopted := adoptKustomizeInstall(t)
	uninstalled := false
	t.Cleanup(func() {
		if !uninstalled {
			_, _ = framework.Run(context.Background(), nil, helmBin(t), "uninstall", release, "-n", namespace, "--wait", "--kubeconfig", framework.Kubeconfig())
		}
		if adopted {
			t.Log("Putting the kustomize install (config/local) back")
			if _, err := framework.KubectlErr("apply", "--server-side", "--force-conflicts", "-k", "config/local"); err != nil {
				t.Errorf("re-applying config/local: %v", err)
			}
		}
	})

	t.Log("helm install")
	install := append([]string{"install", release, chart, "-n", namespace, "--create-namespace", "--wait", "--timeout", "5m"}, localValues...)
	out, took := helm(t, install...)
	if !strings.Contains(out, "rollout status deployment/perfexp-manager") {
		t.Errorf("NOTES.txt does not give the next command:\n%s", out)
	}
	framework.Kubectl(t, "-n", namespace, "rollout", "status", "deployment/perfexp-manager", "--timeout=180s")
	for _, o := range [][]string{{"crd", "perfexperiments.perfexp.dev"}, {"crd", "perfsweeps.perfexp.dev"},
		{"clusterrolebinding", "perfexp-environment-patch"}, {"validatingadmissionpolicybinding", "perfexp-no-escalation"},
		{"-n", namespace, "service", "perfexp-manager-metrics"}} {
		if !exists(o...) {
			t.Errorf("after helm install: %v missing", o)
		}
	}
	t.Logf("helm install took %s", took)

	// The operator serves its own metrics (docs/metrics.md) on the Service the chart made, over
	// HTTPS to authorized callers only: helm test reads them with a reader's token and checks
	// that a request without one is refused. (The API server's service proxy passes no token,
	// so it cannot read them any more.)
	out, took = helm(t, "test", release, "-n", namespace, "--logs", "--timeout", "3m")
	if !strings.Contains(out, "Succeeded") {
		t.Errorf("helm test:\n%s", out)
	}
	t.Logf("helm test took %s", took)
	// The cluster's Prometheus scrapes them over HTTPS with its own token.
	framework.Eventually(t, 2*time.Minute, 5*time.Second, "the manager scraped over HTTPS", func() error {
		s, err := framework.Query(`up{job="perfexp-manager-metrics",namespace="` + namespace + `"}`)
		if err != nil {
			return err
		}
		if len(s) == 0 || s[0].Float() != 1 {
			return fmt.Errorf("up: %v", s)
		}
		return nil
	})

	if framework.PrometheusSetup() == framework.PrometheusProm3 {
		t.Run("a stuck restore alerts", func(t *testing.T) { restoreStuckAlerts(t, chart) })
	}

	if os.Getenv("E2E_HELM_DEMO") == "1" {
		runDemo(t)
		// perfexp's own series (docs/metrics.md) exist once the operator reconciled experiments,
		// and perfexp_experiment_info keeps the experiment's namespace (honorLabels).
		framework.Eventually(t, 2*time.Minute, 5*time.Second, "perfexp's series scraped", func() error {
			for _, q := range []string{"perfexp_experiments", "perfexp_experiment_phase_duration_seconds_count", "perfexp_restores_total",
				`last_over_time(perfexp_experiment_info{namespace="` + demoNS + `"}[3h])`} {
				s, err := framework.Query(q)
				if err != nil {
					return err
				}
				if len(s) == 0 {
					return fmt.Errorf("no %s series after the demo", q)
				}
			}
			return nil
		})
	}

	// The upgrade binds patch rights in the demo's namespace, which a fresh cluster (CI) may not
	// have yet: helm does not create the namespaces of a values list.
	if !exists("namespace", demoNS) {
		framework.Kubectl(t, "create", "namespace", demoNS)
		t.Cleanup(func() { _, _ = framework.KubectlErr("delete", "namespace", demoNS, "--wait=false") })
	}
	t.Log("helm upgrade to the shared-cluster form: patch rights only in " + demoNS)
	upgrade := append([]string{"upgrade", release, chart, "-n", namespace, "--wait", "--timeout", "5m"}, localValues...)
	upgrade = append(upgrade, "--set", "rbac.environmentPatch.clusterWide=false",
		"--set", "rbac.environmentPatch.namespaces={"+demoNS+"}", "--set", "access.allowedNamespaces={"+demoNS+"}")
	_, took = helm(t, upgrade...)
	if exists("clusterrolebinding", "perfexp-environment-patch") {
		t.Error("after the upgrade the cluster-wide patch binding is still there")
	}
	if !exists("-n", demoNS, "rolebinding", "perfexp-environment-patch") {
		t.Errorf("after the upgrade there is no RoleBinding in %s", demoNS)
	}
	args := framework.Kubectl(t, "-n", namespace, "get", "deployment", "perfexp-manager", "-o", "jsonpath={.spec.template.spec.containers[0].args}")
	if !strings.Contains(args, "--allowed-namespaces="+demoNS) {
		t.Errorf("the manager's args after the upgrade: %s", args)
	}
	framework.Kubectl(t, "-n", namespace, "rollout", "status", "deployment/perfexp-manager", "--timeout=180s")
	t.Logf("helm upgrade took %s", took)

	t.Log("helm uninstall")
	_, took = helm(t, "uninstall", release, "-n", namespace, "--wait", "--timeout", "5m")
	uninstalled = true
	for _, o := range [][]string{{"-n", namespace, "deployment", "perfexp-manager"}, {"clusterrole", "perfexp-manager"},
		{"-n", demoNS, "rolebinding", "perfexp-environment-patch"}, {"validatingadmissionpolicy", "perfexp-no-escalation"}} {
		if exists(o...) {
			t.Errorf("after helm uninstall: %v still there", o)
		}
	}
	if !exists("crd", "perfexperiments.perfexp.dev") {
		t.Error("helm uninstall deleted the CRD (and with it every experiment)")
	}
	t.Logf("helm uninstall took %s", took)
}

// runDemo applies the demo experiments, as `make demo` does, and waits for every one to end.
func runDemo(t *testing.T) {
	t.Helper()
	timeout := 1500 * time.Second
	if s, err := strconv.Atoi(os.Getenv("DEMO_TIMEOUT")); err == nil {
		timeout = time.Duration(s) * time.Second
	}
	start := time.Now()
	framework.Kubectl(t, "apply", "-k", "test/demoapp/deploy")
	framework.Kubectl(t, "-n", demoNS, "rollout", "status", "deploy", "--timeout=180s")
	framework.Kubectl(t, "apply", "-k", "scenarios/demo")
	framework.Eventually(t, timeout, 15*time.Second, "every demo experiment ended", func() error {
		out, err := framework.KubectlErr("-n", demoNS, "get", "perfexperiments", "-o", "jsonpath={range .items[*]}{.metadata.name}={.status.phase}{\"\\n\"}{end}")
		if err != nil {
			return err
		}
		var running []string
		for _, line := range strings.Fields(out) {
			name, phase, _ := strings.Cut(line, "=")
			if phase != "Succeeded" && phase != "Failed" && phase != "Aborted" {
				running = append(running, name+"="+phase)
			}
		}
		if len(running) > 0 {
			return fmt.Errorf("not ended: %v", running)
		}
		return nil
	})
	t.Logf("The demo experiments ended after %s:\n%s", time.Since(start).Round(time.Second),
		framework.Kubectl(t, "-n", demoNS, "get", "perfexperiments"))
}
