//go:build e2e

// Package ci runs the pipeline examples' gate (examples/ci/perfexp-gate.sh, which both the
// GitHub Actions and the GitLab CI example call) against the local cluster and the deployed
// operator: a real experiment, a real k6 run whose threshold is crossed, the plugin built from
// this tree. cmd/kubectl-perfexp's TestPipelineExamples runs the same steps against an API
// server with the status written by the test; this one has the operator write it.
package ci

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/perfexp/perfexp/test/e2e/framework"
)

// script declares a threshold no real service meets: the run must end with verdict Fail.
const script = `import http from 'k6/http';

export const options = {
  thresholds: { http_req_duration: ['p(95)<0.001'] },
};

export default function () {
  http.get(__ENV.BASE_URL + '/healthz');
}
`

// experiment is what a pipeline would apply: generateName, as examples/ci/experiment.yaml.
const experiment = `apiVersion: perfexp.dev/v1alpha1
kind: PerfExperiment
metadata:
  generateName: ci-threshold-
spec:
  load:
    scenarios:
    - name: health
      script:
        configMap:
          name: health-script
      vus: 2
      duration: 15s
      env:
      - name: BASE_URL
        value: http://circulation:8080
  timeouts:
    overall: 5m
`

// Story: a pipeline's gate on the real cluster. The gate creates the experiment, the operator
// runs it, k6 crosses the script's threshold, the verdict is Fail; watch --fail-on fail makes
// the gate exit 3, and the JUnit report the pipeline publishes holds the failure.
func TestGateFailsOnACrossedThreshold(t *testing.T) {
	framework.RequireCluster(t)
	framework.DeployOperator(t)
	ctx, cancel := context.WithTimeout(t.Context(), 6*time.Minute)
	defer cancel()

	ns := "e2e-ci-" + framework.RandomSuffix()
	framework.Kubectl(t, "create", "namespace", ns)
	framework.Kubectl(t, "label", "namespace", ns, "perfexp.dev/allow-experiments=true")
	t.Cleanup(func() {
		if os.Getenv("E2E_KEEP") == "1" {
			t.Logf("E2E_KEEP=1: keeping namespace %s", ns)
			return
		}
		_, _ = framework.KubectlErr("delete", "namespace", ns, "--wait=false")
	})
	framework.Kubectl(t, "apply", "-n", ns, "-k", "test/demoapp/deploy/base")
	for _, d := range strings.Fields(framework.Kubectl(t, "-n", ns, "get", "deploy", "-o", "jsonpath={.items[*].metadata.name}")) {
		framework.Kubectl(t, "-n", ns, "rollout", "status", "deploy/"+d, "--timeout=180s")
	}
	framework.KubectlStdin(t, script, "-n", ns, "create", "configmap", "health-script", "--from-file=script.js=/dev/stdin")

	// The plugin from this tree, first on the PATH, as the examples install it.
	bin := t.TempDir()
	if out, err := framework.Run(ctx, nil, "go", "build", "-o", filepath.Join(bin, "kubectl-perfexp"), "./cmd/kubectl-perfexp"); err != nil {
		t.Fatalf("building the plugin: %v\n%s", err, out)
	}
	manifest := filepath.Join(t.TempDir(), "experiment.yaml")
	if err := os.WriteFile(manifest, []byte(experiment), 0o644); err != nil {
		t.Fatal(err)
	}
	reports := t.TempDir()

	gate := exec.CommandContext(ctx, "bash", filepath.Join("examples", "ci", "perfexp-gate.sh"))
	gate.Dir = framework.RepoRoot()
	gate.Env = append(os.Environ(),
		"KUBECONFIG="+framework.Kubeconfig(),
		"PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"),
		"PERFEXP_EXPERIMENT="+manifest,
		"PERFEXP_NAMESPACE="+ns,
		"PERFEXP_TIMEOUT=4m",
		"PERFEXP_FAIL_ON=fail",
		"PERFEXP_REPORTS="+reports,
	)
	start := time.Now()
	out, err := gate.CombinedOutput()
	t.Logf("the gate took %s:\n%s", time.Since(start).Round(time.Second), out)
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 3 {
		t.Fatalf("the gate ended with %v, want exit code 3 (verdict Fail)", err)
	}
	if !strings.Contains(string(out), "verdict Fail") {
		t.Errorf("the gate's output does not say verdict Fail")
	}

	junit, err := os.ReadFile(filepath.Join(reports, "perfexp-junit.xml"))
	if err != nil {
		t.Fatalf("no JUnit report: %v", err)
	}
	for _, want := range []string{"<failure", "http_req_duration", "p(95)&lt;0.001"} {
		if !strings.Contains(string(junit), want) {
			t.Errorf("the JUnit report lacks %q:\n%s", want, junit)
		}
	}
	if fi, err := os.Stat(filepath.Join(reports, "perfexp-report.html")); err != nil || fi.Size() == 0 {
		t.Errorf("no HTML report: %v", err)
	}
}
