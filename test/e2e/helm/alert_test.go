//go:build e2e

package helm

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/perfexp/perfexp/test/e2e/framework"
)

// stuckRestoreNS is where restoreStuckAlerts runs its experiment.
const stuckRestoreNS = "perfexp-restore-stuck"

// restoreStuckAlerts forces a restore that cannot finish and waits for the chart's
// PerfexpRestoreStuck alert to fire in Prometheus 3 (prometheus-operator): an admission policy
// refuses the manager's writes to the patched Deployment from the moment the load runs, so the
// experiment stays Restoring, retrying; once the policy is gone it restores and ends.
//
// prom3's operator watches only its own namespace, so the chart's PrometheusRule is rendered for
// it there (as prom3's stand-in ServiceMonitor stands in for the chart's), with restoringFor 1m
// so the alert fires within minutes.
func restoreStuckAlerts(t *testing.T, chart string) {
	t.Helper()
	rule, _ := helm(t, "template", release, chart, "-n", "prom3", "--show-only", "templates/prometheusrule.yaml",
		"--set", "prometheusRule.enabled=true", "--set", "prometheusRule.labels.release=prom3", "--set", "prometheusRule.restoringFor=1m")
	framework.KubectlStdin(t, rule, "apply", "-f", "-")
	t.Cleanup(func() {
		_, _ = framework.KubectlErr("-n", "prom3", "delete", "prometheusrule", release+"-manager", "--ignore-not-found")
	})

	manager := "system:serviceaccount:" + namespace + ":" + release + "-manager"
	framework.KubectlStdin(t, fmt.Sprintf(`apiVersion: v1
kind: Namespace
metadata:
  name: %[1]s
  labels:
    perfexp.dev/allow-experiments: "true"
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: %[1]s
spec:
  replicas: 1
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: web
        image: perfexp/demo-circulation:dev
        imagePullPolicy: IfNotPresent
        ports: [{name: http, containerPort: 8080}]
        env: [{name: MODE, value: before}]
        readinessProbe:
          httpGet: {path: /healthz, port: http}
          periodSeconds: 2
---
apiVersion: v1
kind: Service
metadata:
  name: web
  namespace: %[1]s
spec:
  selector: {app: web}
  ports: [{name: http, port: 8080, targetPort: http}]
`, stuckRestoreNS), "apply", "-f", "-")
	t.Cleanup(func() {
		_, _ = framework.KubectlErr("delete", "validatingadmissionpolicybinding", "perfexp-e2e-refuse-restore", "--ignore-not-found")
		_, _ = framework.KubectlErr("delete", "validatingadmissionpolicy", "perfexp-e2e-refuse-restore", "--ignore-not-found")
		_, _ = framework.KubectlErr("delete", "namespace", stuckRestoreNS, "--wait=false")
	})
	framework.Kubectl(t, "-n", stuckRestoreNS, "rollout", "status", "deployment/web", "--timeout=180s")

	framework.KubectlStdin(t, fmt.Sprintf(`apiVersion: perfexp.dev/v1alpha1
kind: PerfExperiment
metadata:
  name: stuck-restore
  namespace: %s
spec:
  variant:
    description: MODE=after
    workloads:
    - names: [web]
      env:
        set: [{name: MODE, value: after}]
  load:
    scenarios:
    - name: health
      script:
        inline: |
          import http from 'k6/http';
          import { sleep } from 'k6';
          export default function () { http.get('http://web:8080/healthz'); sleep(0.1); }
      vus: 1
      duration: 20s
`, stuckRestoreNS), "apply", "-f", "-")
	field := func(path string) string {
		out, _ := framework.KubectlErr("-n", stuckRestoreNS, "get", "perfexperiment", "stuck-restore", "-o", "jsonpath="+path)
		return out
	}
	framework.Eventually(t, 5*time.Minute, 2*time.Second, "the experiment running", func() error {
		if p := field("{.status.phase}"); p != "Running" {
			return fmt.Errorf("phase %q", p)
		}
		return nil
	})
	// From now on the manager may not write the Deployment: the restore is refused.
	framework.KubectlStdin(t, fmt.Sprintf(`apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata:
  name: perfexp-e2e-refuse-restore
spec:
  failurePolicy: Fail
  matchConstraints:
    resourceRules:
    - apiGroups: [apps]
      apiVersions: [v1]
      operations: [UPDATE]
      resources: [deployments]
  validations:
  - expression: request.userInfo.username != %q
    message: the e2e test refuses perfexp's restore for a while
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata:
  name: perfexp-e2e-refuse-restore
spec:
  policyName: perfexp-e2e-refuse-restore
  validationActions: [Deny]
  matchResources:
    namespaceSelector:
      matchLabels: {kubernetes.io/metadata.name: %s}
`, manager, stuckRestoreNS), "apply", "-f", "-")
	refusedAt := time.Now()

	framework.Eventually(t, 3*time.Minute, 2*time.Second, "the restore refused", func() error {
		msg := field(`{.status.conditions[?(@.type=="EnvironmentRestored")].message}`)
		if p := field("{.status.phase}"); p != "Restoring" || !strings.Contains(msg, "refuses perfexp's restore") {
			return fmt.Errorf("phase %q, EnvironmentRestored %q", p, msg)
		}
		return nil
	})
	t.Logf("Restore refused: %s", field(`{.status.conditions[?(@.type=="EnvironmentRestored")].message}`))

	var firing map[string]string
	framework.Eventually(t, 6*time.Minute, 10*time.Second, "PerfexpRestoreStuck firing in Prometheus 3", func() error {
		s, err := framework.Query(`ALERTS{alertname="PerfexpRestoreStuck",alertstate="firing",name="stuck-restore"}`)
		if err != nil {
			return err
		}
		if len(s) == 0 {
			return fmt.Errorf("not firing (phase %s)", field("{.status.phase}"))
		}
		firing = s[0].Metric
		return nil
	})
	t.Logf("PerfexpRestoreStuck fired %s after the restore was first refused: %s", time.Since(refusedAt).Round(time.Second), firing)
	if firing["namespace"] != stuckRestoreNS {
		t.Errorf("the alert does not carry the experiment's namespace %s: %s", stuckRestoreNS, firing)
	}

	// The ServiceMonitor honours perfexp's labels: the experiment's own namespace, not the
	// operator's and not exported_namespace.
	info, err := framework.Query(`perfexp_experiment_info{name="stuck-restore"}`)
	if err != nil || len(info) == 0 {
		t.Errorf("perfexp_experiment_info of stuck-restore: %v, %v", info, err)
	} else {
		t.Logf("perfexp_experiment_info in Prometheus 3: %v", info[0].Metric)
		if info[0].Metric["namespace"] != stuckRestoreNS || info[0].Metric["exported_namespace"] != "" {
			t.Errorf("perfexp_experiment_info labels %v: want namespace=%s and no exported_namespace", info[0].Metric, stuckRestoreNS)
		}
	}

	framework.Kubectl(t, "delete", "validatingadmissionpolicybinding", "perfexp-e2e-refuse-restore")
	framework.Eventually(t, 5*time.Minute, 2*time.Second, "the experiment ended once the restore was allowed", func() error {
		switch p := field("{.status.phase}"); p {
		case "Succeeded", "Failed", "Aborted":
			return nil
		default:
			return fmt.Errorf("phase %q", p)
		}
	})
	if env := framework.Kubectl(t, "-n", stuckRestoreNS, "get", "deployment", "web", "-o", "jsonpath={.spec.template.spec.containers[0].env}"); !strings.Contains(env, "before") || strings.Contains(env, "after") {
		t.Errorf("the Deployment after the restore: env %s", env)
	}
	t.Logf("Restored once allowed: phase %s, %s", field("{.status.phase}"), field(`{.status.conditions[?(@.type=="EnvironmentRestored")].message}`))
}
