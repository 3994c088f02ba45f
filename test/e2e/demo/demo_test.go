//go:build e2e

// Package demo is the end-to-end story perfexp is built on, done by hand on the real local
// cluster: deploy the demo system under test, change a CPU limit and see the rollout land on
// the node, run a real k6 pod against it that remote-writes to Prometheus, and find both the
// load's samples (by testid) and the pods' cAdvisor series there.
package demo

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/perfexp/perfexp/test/e2e/framework"
)

const (
	k6Image     = "perfexp/k6:v1.8.1"
	remoteWrite = "http://prometheus.monitoring.svc:9090/api/v1/write"
	// newCPULimit is the limit the test patches onto circulation; the node must enforce it as
	// a CFS quota of 40000us per 100000us period.
	newCPULimit   = "400m"
	newCFSQuotaUs = 40000
)

func TestDemoUnderLoad(t *testing.T) {
	framework.RequireCluster(t)
	ns := "e2e-demo-" + framework.RandomSuffix()
	testID := "e2e-" + framework.RandomSuffix()
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

	t.Log("Deploying the demo system under test")
	framework.Kubectl(t, "apply", "-n", ns, "-k", "test/demoapp/deploy/base")
	for _, d := range []string{"circulation", "inventory", "kafka-zookeeper", "kafka-kraft"} {
		framework.Kubectl(t, "-n", ns, "rollout", "status", "deploy/"+d, "--timeout=180s")
	}

	t.Log("Patching circulation's CPU limit and waiting for the rollout")
	oldPods := podNames(t, ns, "app.kubernetes.io/name=circulation")
	framework.Kubectl(t, "-n", ns, "patch", "deploy/circulation", "--type=strategic", "-p",
		`{"spec":{"template":{"spec":{"containers":[{"name":"circulation","resources":{"limits":{"cpu":"`+newCPULimit+`"}}}]}}}}`)
	framework.Kubectl(t, "-n", ns, "rollout", "status", "deploy/circulation", "--timeout=180s")
	var pod string
	framework.Eventually(t, 90*time.Second, time.Second, "old circulation pods gone", func() error {
		pods := podNames(t, ns, "app.kubernetes.io/name=circulation")
		if len(pods) != 1 {
			return fmt.Errorf("circulation pods: %v", pods)
		}
		if contains(oldPods, pods[0]) {
			return fmt.Errorf("pod %s is the one from before the patch", pods[0])
		}
		pod = pods[0]
		return nil
	})
	checkPodOnNode(t, ns, pod)

	t.Logf("Running k6 against the demo with testid=%s", testID)
	summary := runK6(t, ns, testID)
	k6Requests := parseK6Count(t, summary)

	t.Log("Finding the k6 samples in Prometheus by testid")
	var promRequests float64
	framework.Eventually(t, 90*time.Second, 3*time.Second, "k6 request count in Prometheus", func() error {
		// The counter starts with the run, so its maximum over the run is the exact count.
		res, err := framework.Query(fmt.Sprintf(`sum(max_over_time(k6_http_reqs_total{testid=%q}[15m]))`, testID))
		if err != nil {
			return err
		}
		if len(res) == 0 {
			return fmt.Errorf("no k6_http_reqs_total series with testid=%s", testID)
		}
		promRequests = res[0].Float()
		if promRequests != float64(k6Requests) {
			return fmt.Errorf("Prometheus counted %v requests, k6 reported %d", promRequests, k6Requests)
		}
		return nil
	})
	t.Logf("Prometheus holds all %v requests k6 made", promRequests)

	framework.Eventually(t, 60*time.Second, 3*time.Second, "k6 duration as a native histogram", func() error {
		res, err := framework.Query(fmt.Sprintf(`k6_http_req_duration_seconds{testid=%q,name="check-out"}`, testID))
		if err != nil {
			return err
		}
		if len(res) == 0 {
			return fmt.Errorf("no k6_http_req_duration_seconds series for check-out")
		}
		if res[0].Histogram == nil {
			return fmt.Errorf("k6_http_req_duration_seconds is not a native histogram: %+v", res[0])
		}
		p95, err := framework.Query(fmt.Sprintf(`histogram_quantile(0.95, sum(k6_http_req_duration_seconds{testid=%q,name="check-out"}))`, testID))
		if err != nil {
			return err
		}
		if len(p95) == 0 || !(p95[0].Float() > 0) {
			return fmt.Errorf("no p95 from the native histogram: %+v", p95)
		}
		t.Logf("check-out p95 from the native histogram: %.1f ms", p95[0].Float()*1000)
		return nil
	})

	t.Log("Finding the demo pods' cAdvisor series")
	for _, metric := range []string{"container_cpu_usage_seconds_total", "container_memory_working_set_bytes"} {
		for _, container := range []string{"circulation", "inventory"} {
			q := fmt.Sprintf(`%s{job="kubelet",metrics_path="/metrics/cadvisor",namespace=%q,container=%q}`, metric, ns, container)
			framework.Eventually(t, 60*time.Second, 3*time.Second, q, func() error {
				res, err := framework.Query(q)
				if err != nil {
					return err
				}
				if len(res) == 0 {
					return fmt.Errorf("no series")
				}
				if res[0].Metric["pod"] == "" {
					return fmt.Errorf("series without a pod label: %v", res[0].Metric)
				}
				return nil
			})
		}
	}
	// cAdvisor reports the quota the node enforces: the patched limit, on the new pod.
	q := fmt.Sprintf(`container_spec_cpu_quota{job="kubelet",namespace=%q,pod=%q,container="circulation"}`, ns, pod)
	framework.Eventually(t, 60*time.Second, 3*time.Second, q, func() error {
		res, err := framework.Query(q)
		if err != nil {
			return err
		}
		if len(res) == 0 || res[0].Float() != newCFSQuotaUs {
			return fmt.Errorf("want quota %d, got %+v", newCFSQuotaUs, res)
		}
		return nil
	})
}

func podNames(t *testing.T, ns, selector string) []string {
	t.Helper()
	out := framework.Kubectl(t, "-n", ns, "get", "pods", "-l", selector,
		"--field-selector=status.phase!=Failed,status.phase!=Succeeded",
		"-o", `jsonpath={range .items[*]}{.metadata.name} {.metadata.deletionTimestamp}{"\n"}{end}`)
	var names []string
	for _, line := range strings.Split(out, "\n") {
		// A pod being deleted has a deletion timestamp after its name; it no longer counts.
		if f := strings.Fields(line); len(f) == 1 {
			names = append(names, f[0])
		}
	}
	return names
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// checkPodOnNode verifies that the new pod runs on this machine's node with the patched limit
// in force: the kubelet wrote it into the container's cgroup as a CFS quota.
func checkPodOnNode(t *testing.T, ns, pod string) {
	t.Helper()
	get := func(path string) string {
		return framework.Kubectl(t, "-n", ns, "get", "pod", pod, "-o", "jsonpath="+path)
	}
	if limit := get(`{.spec.containers[0].resources.limits.cpu}`); limit != newCPULimit {
		t.Fatalf("pod %s has CPU limit %q, want %s", pod, limit, newCPULimit)
	}
	if ready := get(`{.status.containerStatuses[0].ready}`); ready != "true" {
		t.Fatalf("pod %s is not ready", pod)
	}
	node := get(`{.spec.nodeName}`)
	nodes := framework.Kubectl(t, "get", "nodes", "-o", "jsonpath={.items[*].metadata.name}")
	if node == "" || !contains(strings.Fields(nodes), node) {
		t.Fatalf("pod %s is on node %q, not one of %q", pod, node, nodes)
	}
	uid := get(`{.metadata.uid}`)
	qos := strings.ToLower(get(`{.status.qosClass}`))
	cid := strings.TrimPrefix(get(`{.status.containerStatuses[0].containerID}`), "containerd://")
	// cgroup v1 with the cgroupfs driver, as hack/local-cluster configures the kubelet.
	quotaFile := filepath.Join("/sys/fs/cgroup/cpu/kubepods", qos, "pod"+uid, cid, "cpu.cfs_quota_us")
	data, err := os.ReadFile(quotaFile)
	if err != nil {
		t.Fatalf("reading the container's CPU quota on the node: %v", err)
	}
	if got := strings.TrimSpace(string(data)); got != strconv.Itoa(newCFSQuotaUs) {
		t.Fatalf("%s = %s, want %d", quotaFile, got, newCFSQuotaUs)
	}
	t.Logf("Pod %s runs on node %s with cpu.cfs_quota_us=%d", pod, node, newCFSQuotaUs)
}

// runK6 runs the demo's k6 script as a Job and returns the pod's output (k6's summary).
func runK6(t *testing.T, ns, testID string) string {
	t.Helper()
	script := filepath.Join(framework.RepoRoot(), "scenarios", "demo", "checkinout.js")
	framework.Kubectl(t, "-n", ns, "create", "configmap", "k6-script", "--from-file=script.js="+script)
	job := fmt.Sprintf(`apiVersion: batch/v1
kind: Job
metadata:
  name: k6
spec:
  backoffLimit: 0
  activeDeadlineSeconds: 300
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: k6
        image: %s
        imagePullPolicy: IfNotPresent
        args: [run, --vus, "4", --duration, 20s, --tag, testid=%s, -o, experimental-prometheus-rw, /scripts/script.js]
        env:
        - {name: BASE_URL, value: "http://circulation:8080"}
        - {name: K6_PROMETHEUS_RW_SERVER_URL, value: %q}
        - {name: K6_PROMETHEUS_RW_TREND_AS_NATIVE_HISTOGRAM, value: "true"}
        resources:
          requests: {cpu: 100m, memory: 64Mi}
          limits: {memory: 256Mi}
        volumeMounts:
        - {name: scripts, mountPath: /scripts}
      volumes:
      - name: scripts
        configMap: {name: k6-script}
`, k6Image, testID, remoteWrite)
	framework.KubectlStdin(t, job, "-n", ns, "apply", "-f", "-")
	framework.Eventually(t, 4*time.Minute, 2*time.Second, "k6 Job to finish", func() error {
		status := framework.Kubectl(t, "-n", ns, "get", "job", "k6", "-o",
			`jsonpath={.status.succeeded}/{.status.failed}`)
		switch {
		case strings.HasPrefix(status, "1/"):
			return nil
		case strings.HasSuffix(status, "/1"):
			logs, _ := framework.KubectlErr("-n", ns, "logs", "job/k6", "--tail=50")
			t.Fatalf("k6 Job failed:\n%s", logs)
		}
		return fmt.Errorf("k6 Job status %q", status)
	})
	logs := framework.Kubectl(t, "-n", ns, "logs", "job/k6")
	if !checksPassed.MatchString(logs) {
		t.Errorf("k6 reported failed checks:\n%s", tail(logs, 40))
	}
	return logs
}

var (
	httpReqsLine = regexp.MustCompile(`http_reqs\.*:\s*(\d+)`)
	checksPassed = regexp.MustCompile(`checks_failed\.*:\s*0\.00%`)
)

// parseK6Count reads the number of HTTP requests from k6's end-of-test summary.
func parseK6Count(t *testing.T, summary string) int {
	t.Helper()
	m := httpReqsLine.FindStringSubmatch(summary)
	if m == nil {
		t.Fatalf("no http_reqs line in k6's summary:\n%s", tail(summary, 40))
	}
	n, _ := strconv.Atoi(m[1])
	if n == 0 {
		t.Fatalf("k6 made no requests:\n%s", tail(summary, 40))
	}
	return n
}

func tail(s string, n int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
