//go:build e2e

package helm

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/perfexp/perfexp/test/e2e/framework"
)

// A namespaced release: the operator watches only its namespaces and holds RoleBindings there.
type namespacedRelease struct {
	name, namespace, watches string
}

func (r namespacedRelease) serviceAccount() string {
	return "system:serviceaccount:" + r.namespace + ":" + r.name + "-manager"
}

// Two namespaced releases side by side (docs/install.md#namespaced-install), as a platform
// team installs perfexp for two teams on a shared cluster: each runs an experiment in its own
// namespace; an experiment that targets a namespace outside its release is refused with a
// condition; one in a namespace no release watches is left alone; neither manager may write
// anywhere else (kubectl auth can-i as its service account); helm test reads each release's
// metrics over HTTPS with a token. A running cluster-wide operator (make demo's) would see
// the same experiments, so it is scaled to zero for the test and back afterwards.
//
// Each experiment's load reads the node's Prometheus health endpoint, so its results are
// measured requests: the release's analysis found them by the run's testid in the Prometheus
// the release was given.
func TestHelmNamespacedReleasesSideBySide(t *testing.T) {
	framework.RequireCluster(t)
	chart := filepath.Join(framework.RepoRoot(), "charts", "perfexp")
	releases := []namespacedRelease{
		{name: "perf-a", namespace: "perf-a-system", watches: "team-a"},
		{name: "perf-b", namespace: "perf-b-system", watches: "team-b"},
	}
	const outside = "shop"

	if exists("-n", namespace, "deployment", "perfexp-manager") {
		replicas := framework.Kubectl(t, "-n", namespace, "get", "deployment", "perfexp-manager", "-o", "jsonpath={.spec.replicas}")
		t.Logf("Scaling the cluster-wide operator in %s to 0 for the test (back to %s at the end)", namespace, replicas)
		framework.Kubectl(t, "-n", namespace, "scale", "deployment", "perfexp-manager", "--replicas=0")
		t.Cleanup(func() {
			_, _ = framework.KubectlErr("-n", namespace, "scale", "deployment", "perfexp-manager", "--replicas="+replicas)
		})
	}
	for _, ns := range []string{"team-a", "team-b", outside} {
		if !exists("namespace", ns) {
			framework.Kubectl(t, "create", "namespace", ns)
			t.Cleanup(func() { _, _ = framework.KubectlErr("delete", "namespace", ns, "--wait=false") })
		}
	}
	// Opted in, yet outside both releases: the label does not widen a namespaced install.
	framework.Kubectl(t, "label", "--overwrite", "namespace", outside, "perfexp.dev/allow-experiments=true")

	for _, r := range releases {
		args := append([]string{"install", r.name, chart, "-n", r.namespace, "--create-namespace", "--wait", "--timeout", "5m",
			"--set", "scope=namespaced", "--set", "watchNamespaces={" + r.watches + "}", "--set", "fullnameOverride=" + r.name}, localValues...)
		_, took := helm(t, args...)
		t.Cleanup(func() {
			_, _ = framework.Run(context.Background(), nil, helmBin(t), "uninstall", r.name, "-n", r.namespace, "--wait", "--kubeconfig", framework.Kubeconfig())
			_, _ = framework.KubectlErr("delete", "namespace", r.namespace, "--wait=false")
		})
		t.Logf("helm install %s (namespaced, watching %s) took %s", r.name, r.watches, took)
		framework.Kubectl(t, "-n", r.namespace, "rollout", "status", "deployment/"+r.name+"-manager", "--timeout=180s")
	}

	t.Run("no cluster-wide write", func(t *testing.T) {
		for _, r := range releases {
			other := releases[0].watches
			if other == r.watches {
				other = releases[1].watches
			}
			for _, c := range []struct {
				args []string
				want string
			}{
				{args: []string{"create", "configmaps", "-n", r.watches}, want: "yes"},
				{args: []string{"create", "jobs.batch", "-n", r.watches}, want: "yes"},
				{args: []string{"patch", "deployments.apps", "-n", r.watches}, want: "yes"},
				{args: []string{"create", "leases.coordination.k8s.io", "-n", r.namespace}, want: "yes"},
				{args: []string{"create", "configmaps", "--all-namespaces"}, want: "no"},
				{args: []string{"delete", "pods", "-n", "kube-system"}, want: "no"},
				{args: []string{"create", "configmaps", "-n", other}, want: "no"},
				{args: []string{"patch", "deployments.apps", "-n", outside}, want: "no"},
				{args: []string{"create", "serviceaccounts", "-n", outside}, want: "no"},
				{args: []string{"get", "namespaces"}, want: "yes"},
			} {
				out, _ := framework.KubectlErr(append(append([]string{"auth", "can-i"}, c.args...), "--as", r.serviceAccount())...)
				if got := strings.TrimSpace(out); got != c.want {
					t.Errorf("%s: can-i %s = %q, want %q", r.name, strings.Join(c.args, " "), got, c.want)
				}
			}
		}
	})

	t.Run("helm test reads the secured metrics", func(t *testing.T) {
		for _, r := range releases {
			out, took := helm(t, "test", r.name, "-n", r.namespace, "--logs", "--timeout", "3m")
			if !strings.Contains(out, "Succeeded") {
				t.Errorf("helm test %s:\n%s", r.name, out)
			}
			t.Logf("helm test %s took %s", r.name, took)
		}
	})

	experiment := func(ns, name, target string) string {
		return fmt.Sprintf(`apiVersion: perfexp.dev/v1alpha1
kind: PerfExperiment
metadata:
  name: %s
  namespace: %s
spec:
  targetNamespace: %s
  load:
    scenarios:
      - name: health
        script:
          inline: |
            import http from 'k6/http';
            import { sleep } from 'k6';
            export default function () { http.get('%s/-/healthy'); sleep(0.1); }
        vus: 1
        duration: 10s
`, name, ns, target, prometheusURL)
	}
	manifests := []string{
		experiment("team-a", "ns-smoke", "team-a"),
		experiment("team-b", "ns-smoke", "team-b"),
		experiment("team-a", "ns-to-shop", outside),
		experiment(outside, "ns-unwatched", outside),
	}
	framework.KubectlStdin(t, strings.Join(manifests, "---\n"), "apply", "-f", "-")
	t.Cleanup(func() {
		_, _ = framework.KubectlErr("delete", "--wait=false", "-n", "team-a", "perfexperiment", "ns-smoke", "ns-to-shop")
		_, _ = framework.KubectlErr("delete", "--wait=false", "-n", "team-b", "perfexperiment", "ns-smoke")
		_, _ = framework.KubectlErr("delete", "--wait=false", "-n", outside, "perfexperiment", "ns-unwatched")
	})

	field := func(ns, name, path string) string {
		out, _ := framework.KubectlErr("-n", ns, "get", "perfexperiment", name, "-o", "jsonpath="+path)
		return out
	}
	framework.Eventually(t, 2*time.Minute, 2*time.Second, "the experiment targeting "+outside+" refused", func() error {
		reason := field("team-a", "ns-to-shop", `{.status.conditions[?(@.type=="Ready")].reason}`)
		if reason != "NamespaceNotAllowed" {
			return fmt.Errorf("phase %q, Ready reason %q", field("team-a", "ns-to-shop", "{.status.phase}"), reason)
		}
		return nil
	})
	t.Logf("Refused: %s", field("team-a", "ns-to-shop", `{.status.conditions[?(@.type=="Ready")].message}`))

	start := time.Now()
	for _, ns := range []string{"team-a", "team-b"} {
		framework.Eventually(t, 10*time.Minute, 5*time.Second, "the experiment in "+ns+" ended", func() error {
			switch phase := field(ns, "ns-smoke", "{.status.phase}"); phase {
			case "Succeeded":
				validity := field(ns, "ns-smoke", "{.status.results.validity}")
				requests := field(ns, "ns-smoke", "{.status.results.scenarios[0].requests}")
				if validity != "Valid" || requests == "" || requests == "0" {
					t.Fatalf("the experiment in %s succeeded with results %s (%s requests): %s", ns, validity, requests,
						field(ns, "ns-smoke", "{.status.results.invalidReason}"))
				}
				t.Logf("%s/ns-smoke: Succeeded, results %s, %s requests, p95 %s ms, verdict %s", ns, validity, requests,
					field(ns, "ns-smoke", "{.status.results.p95}"), field(ns, "ns-smoke", "{.status.verdict}"))
				return nil
			case "Failed", "Aborted":
				t.Fatalf("the experiment in %s ended %s: %s", ns, phase, field(ns, "ns-smoke", "{.status.conditions}"))
			default:
				return fmt.Errorf("phase %q", phase)
			}
			return nil
		})
	}
	t.Logf("Both releases' experiments succeeded within %s", time.Since(start).Round(time.Second))

	if got := field(outside, "ns-unwatched", "{.metadata.finalizers}{.status.phase}"); got != "" {
		t.Errorf("the experiment in %s, which no release watches, was touched: %q", outside, got)
	}
}
