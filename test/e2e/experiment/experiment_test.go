//go:build e2e

// Package experiment is perfexp's promise told end to end on the real local cluster, through
// the deployed operator only: a baseline and a "no CPU limits" variant are applied at once, the
// queue runs the baseline first, the variant's rollouts land on the node, k6 runs, every
// Deployment is put back exactly as it was, and the results are read from Prometheus and
// compared with the baseline.
package experiment

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/perfexp/perfexp/test/e2e/framework"
)

// load is the same for both experiments, so their results compare.
const load = `
  load:
    warmUp: {vus: 1, duration: 5s}
    scenarios:
    - name: checkinout
      script:
        configMap: {name: checkinout-script}
      arrivalRate: {rate: 20, timeUnit: 1s, duration: 20s, preAllocatedVUs: 5, maxVUs: 20}
      env:
      - {name: BASE_URL, value: "http://circulation:8080"}
  analysis:
    objectives:
    - {metric: ErrorRate, max: "5"}
`

const experiments = `
apiVersion: perfexp.dev/v1alpha1
kind: PerfExperiment
metadata:
  name: nolimits
spec:
  priority: 10          # outranks its baseline, which must still run first
  variant:
    description: no CPU limits on any service
    workloads:
    - selector: {}
      resources:
        removeLimits: [cpu]
  baseline:
    name: base` + load + `---
apiVersion: perfexp.dev/v1alpha1
kind: PerfExperiment
metadata:
  name: base
spec:` + load

type experiment struct {
	Status struct {
		Phase        string `json:"phase"`
		Verdict      string `json:"verdict"`
		Message      string `json:"message"`
		PhaseHistory []struct {
			Phase string    `json:"phase"`
			Time  time.Time `json:"time"`
		} `json:"phaseHistory"`
		Conditions []struct {
			Type   string `json:"type"`
			Status string `json:"status"`
			Reason string `json:"reason"`
		} `json:"conditions"`
		Environment struct {
			Restored bool `json:"restored"`
			Touched  []struct {
				Kind, Name string
			} `json:"touched"`
		} `json:"environment"`
		Results struct {
			Validity      string `json:"validity"`
			LatencySource string `json:"latencySource"`
			P95           string `json:"p95"`
			Scenarios     []struct {
				Name     string `json:"name"`
				Requests *int64 `json:"requests"`
				P95      string `json:"p95"`
			} `json:"scenarios"`
			Workloads []struct {
				Kind      string `json:"kind"`
				Name      string `json:"name"`
				Pods      *int32 `json:"pods"`
				MemoryAvg string `json:"memoryAvg"`
			} `json:"workloads"`
		} `json:"results"`
		Comparison struct {
			Baseline string `json:"baseline"`
			Metrics  []struct {
				Metric string `json:"metric"`
			} `json:"metrics"`
		} `json:"comparison"`
		ReportRef struct {
			Name string `json:"name"`
		} `json:"reportRef"`
	} `json:"status"`
}

func TestOperatorRunsAQueueAndRestoresTheEnvironment(t *testing.T) {
	framework.RequireCluster(t)
	framework.DeployOperator(t)

	ns := "e2e-exp-" + framework.RandomSuffix()
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
	deployments := strings.Fields(framework.Kubectl(t, "-n", ns, "get", "deploy", "-o", "jsonpath={.items[*].metadata.name}"))
	for _, d := range deployments {
		framework.Kubectl(t, "-n", ns, "rollout", "status", "deploy/"+d, "--timeout=180s")
	}
	before := specs(t, ns)
	framework.Kubectl(t, "-n", ns, "create", "configmap", "checkinout-script",
		"--from-file=script.js="+filepath.Join(framework.RepoRoot(), "scenarios", "demo", "checkinout.js"))

	t.Log("Applying a baseline and a variant at once")
	framework.KubectlStdin(t, experiments, "apply", "-n", ns, "-f", "-")

	var base, variant experiment
	framework.Eventually(t, 12*time.Minute, 5*time.Second, "both experiments finish", func() error {
		base, variant = get(t, ns, "base"), get(t, ns, "nolimits")
		for name, e := range map[string]experiment{"base": base, "nolimits": variant} {
			switch e.Status.Phase {
			case "Succeeded":
			case "Failed", "Aborted":
				t.Fatalf("%s ended %s: %s", name, e.Status.Phase, e.Status.Message)
			default:
				return fmt.Errorf("%s is %s: %s", name, e.Status.Phase, e.Status.Message)
			}
		}
		return nil
	})

	t.Run("the queue ran the baseline first and never both at once", func(t *testing.T) {
		baseRestored := entered(base, "Analyzing")
		variantPrepared := entered(variant, "Preparing")
		if baseRestored.IsZero() || variantPrepared.IsZero() || variantPrepared.Before(baseRestored) {
			t.Errorf("the variant started preparing at %s, before the baseline restored at %s", variantPrepared, baseRestored)
		}
	})

	t.Run("every Deployment is back exactly as it was", func(t *testing.T) {
		if !variant.Status.Environment.Restored || len(variant.Status.Environment.Touched) != len(deployments) {
			t.Errorf("restored=%v, touched %d objects, want %d Deployments", variant.Status.Environment.Restored,
				len(variant.Status.Environment.Touched), len(deployments))
		}
		after := specs(t, ns)
		for name, spec := range before {
			if !reflect.DeepEqual(spec, after[name]) {
				t.Errorf("deployment %s differs after the experiment:\nbefore %v\nafter  %v", name, spec, after[name])
			}
		}
		out := framework.Kubectl(t, "-n", ns, "get", "deploy", "-o", "jsonpath={.items[*].metadata.annotations}")
		if strings.Contains(out, "perfexp.dev/") {
			t.Errorf("perfexp's annotations remain on the Deployments: %s", out)
		}
	})

	// The variant rolled every Deployment out just before its load: the old pods' cAdvisor series
	// linger in Prometheus for minutes, and counting them doubled the pods and the memory.
	t.Run("after the variant's rollouts, pods equal replicas and memory is the baseline's within 10 %", func(t *testing.T) {
		// The demo services hold a steady 48 MiB (MEMORY_BALLAST_BYTES), as a real service's
		// footprint is steady: without it their few-MiB working sets swung by up to 90 %
		// between a fresh pod and an older one with the garbage collector's timing.
		replicas := map[string]int32{}
		for name, spec := range before {
			r := int32(1)
			if m, ok := spec.(map[string]any); ok {
				if v, ok := m["replicas"].(float64); ok {
					r = int32(v)
				}
			}
			replicas[name] = r
		}
		baseMemory := map[string]float64{}
		for _, w := range base.Status.Results.Workloads {
			var m float64
			if _, err := fmt.Sscan(w.MemoryAvg, &m); err == nil {
				baseMemory[w.Name] = m
			}
		}
		seen := 0
		for _, w := range variant.Status.Results.Workloads {
			want, ok := replicas[w.Name]
			if w.Kind != "Deployment" || !ok {
				continue
			}
			seen++
			if w.Pods == nil || *w.Pods != want {
				t.Errorf("%s: %s pods during the variant's load, want its %d replicas", w.Name, podsOf(w.Pods), want)
			}
			var m float64
			if _, err := fmt.Sscan(w.MemoryAvg, &m); err != nil || baseMemory[w.Name] == 0 {
				t.Errorf("%s: memory %q, baseline %v: want both measured", w.Name, w.MemoryAvg, baseMemory[w.Name])
				continue
			}
			if ratio := m / baseMemory[w.Name]; ratio < 0.9 || ratio > 1.1 {
				t.Errorf("%s: memory %.0f bytes in the variant, %.0f in the baseline (%.0f %%): want within 10 %%", w.Name, m, baseMemory[w.Name], 100*(ratio-1))
			} else {
				t.Logf("%s: %d pods, memory %.1f MiB (baseline %.1f MiB, %+.1f %%)", w.Name, *w.Pods, m/(1<<20), baseMemory[w.Name]/(1<<20), 100*(ratio-1))
			}
		}
		if seen != len(deployments) {
			t.Errorf("the variant's results list %d of the %d Deployments", seen, len(deployments))
		}
	})

	t.Run("results come from Prometheus and are compared with the baseline", func(t *testing.T) {
		for name, e := range map[string]experiment{"base": base, "nolimits": variant} {
			r := e.Status.Results
			if r.Validity != "Valid" || r.LatencySource != "NativeHistogram" || r.P95 == "" ||
				len(r.Scenarios) != 1 || r.Scenarios[0].Requests == nil || *r.Scenarios[0].Requests < 100 {
				t.Errorf("%s results: %+v", name, r)
			}
			if e.Status.Verdict != "Pass" {
				t.Errorf("%s verdict %q, want Pass (error rate under 5%%)", name, e.Status.Verdict)
			}
		}
		if c := variant.Status.Comparison; c.Baseline != "base" || len(c.Metrics) == 0 {
			t.Errorf("comparison %+v, want metrics compared with base", c)
		}
		report := framework.Kubectl(t, "-n", ns, "get", "configmap", variant.Status.ReportRef.Name, "-o", "jsonpath={.data.report\\.md}")
		if !strings.Contains(report, "nolimits") || !strings.Contains(report, "checkinout") {
			t.Errorf("report.md does not describe the run:\n%s", report)
		}
	})
}

func get(t *testing.T, ns, name string) experiment {
	t.Helper()
	var e experiment
	if err := json.Unmarshal([]byte(framework.Kubectl(t, "-n", ns, "get", "pexp", name, "-o", "json")), &e); err != nil {
		t.Fatal(err)
	}
	return e
}

// specs returns every Deployment's spec by name.
func specs(t *testing.T, ns string) map[string]any {
	t.Helper()
	var list struct {
		Items []struct {
			Metadata struct {
				Name string `json:"name"`
			} `json:"metadata"`
			Spec any `json:"spec"`
		} `json:"items"`
	}
	if err := json.Unmarshal([]byte(framework.Kubectl(t, "-n", ns, "get", "deploy", "-o", "json")), &list); err != nil {
		t.Fatal(err)
	}
	out := map[string]any{}
	for _, d := range list.Items {
		out[d.Metadata.Name] = d.Spec
	}
	return out
}

func entered(e experiment, phase string) time.Time {
	for _, h := range e.Status.PhaseHistory {
		if h.Phase == phase {
			return h.Time
		}
	}
	return time.Time{}
}

func podsOf(p *int32) string {
	if p == nil {
		return "no"
	}
	return fmt.Sprint(*p)
}
