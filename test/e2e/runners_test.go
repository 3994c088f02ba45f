//go:build e2e

package e2e

import (
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/testr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/analyzer"
	"github.com/perfexp/perfexp/internal/load"
	"github.com/perfexp/perfexp/internal/report"
	"github.com/perfexp/perfexp/internal/step"
	"github.com/perfexp/perfexp/test/e2e/framework"
)

// sizingScript is one cheap GET per VU per second: k6's own cost per VU, not the service's.
const sizingScript = `
import http from 'k6/http';
import { sleep } from 'k6';
export default function () {
  http.get(__ENV.BASE_URL + '/healthz', { tags: { name: 'healthz' } });
  sleep(1);
}
`

// A performance engineer sizes the runner pods: one scenario spread over 8 k6 pods, and the
// report lists each pod's CPU and memory. The short form (CI) runs 160 VUs for 40 s; the long
// form, `make bench-runners` (RUNNER_VUS=1000, RUNNER_DURATION=2m), gives k6's CPU and memory
// per 1,000 VUs for docs/benchmarks.md.
func TestRunnerPodsAcrossTheNodeAreSized(t *testing.T) {
	framework.RequireCluster(t)
	vus, duration := int32(160), 40*time.Second
	if v, err := strconv.Atoi(os.Getenv("RUNNER_VUS")); err == nil && v >= 8 {
		vus = int32(v)
	}
	if d, err := time.ParseDuration(os.Getenv("RUNNER_DURATION")); err == nil && d > 0 {
		duration = d
	}
	const pods = 8
	ns := demoNamespace(t, "e2e-runners")
	c, cs := loadClients(t)
	exp := loadExperiment(t, c, ns, "sizing", []perfexpv1alpha1.Scenario{{
		Name: "get", Script: perfexpv1alpha1.ScriptSource{Inline: sizingScript},
		VUs: ptr.To(vus), Duration: &metav1.Duration{Duration: duration}, Parallelism: pods,
		Env:       []perfexpv1alpha1.EnvVar{{Name: "BASE_URL", Value: "http://inventory:8080"}},
		Resources: &corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("10m"), corev1.ResourceMemory: resource.MustParse("32Mi")}},
	}})
	r := load.New(c, load.Options{K6Image: loadK6Image, RemoteWriteURL: loadRemoteWrite, Logs: load.NewPodLogs(cs), PollInterval: time.Second})
	ctx := logr.NewContext(t.Context(), testr.New(t))
	drive(t, "Run", func() (step.Result, error) { return r.Run(ctx, exp) }, duration+4*time.Minute)
	an := &analyzer.PrometheusAnalyzer{Client: c, PrometheusURL: framework.PrometheusURL(), Clock: clock.RealClock{}}
	drive(t, "Analyze", func() (step.Result, error) { return an.Analyze(ctx, exp, nil) }, 3*time.Minute)

	cm := &corev1.ConfigMap{}
	if err := c.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: exp.Status.ReportRef.Name}, cm); err != nil {
		t.Fatal(err)
	}
	res, err := report.ParseJSON([]byte(cm.Data[report.KeyJSON]))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Runners) != pods {
		t.Fatalf("the results list %d k6 pods, want %d: %+v", len(res.Runners), pods, res.Runners)
	}
	var cpu, mem float64
	for _, u := range res.Runners {
		if u.CPUAvg <= 0 || u.MemoryMax <= 0 {
			t.Errorf("k6 pod %s: CPU %.3f cores, memory %.0f bytes: want both measured", u.Pod, u.CPUAvg, u.MemoryMax)
		}
		cpu += u.CPUAvg
		mem += u.MemoryMax
	}
	rate := 0.0
	if res.Total.Rate != nil {
		rate = *res.Total.Rate
	}
	per := 1000 / float64(vus)
	t.Logf("%d VUs over %d k6 pods for %s, %.0f requests/s: k6 used %.3f cores and %.0f MiB in all; per 1,000 VUs %.3f cores and %.0f MiB (%.0f requests/s)",
		vus, pods, duration, rate, cpu, mem/(1<<20), cpu*per, mem/(1<<20)*per, rate*per)
	if res.NodeLoad != nil {
		t.Logf("node %s: %.2f cores outside the experiment, %.2f for it", res.NodeLoad.Node, res.NodeLoad.OtherCores, res.NodeLoad.OwnCores)
	}
	for _, n := range res.Notes {
		t.Logf("note: %s", n)
	}
}
