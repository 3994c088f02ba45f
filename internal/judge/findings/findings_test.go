package findings

import (
	"fmt"
	"strings"
	"testing"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/result"
)

func i32(v int32) *int32 { return &v }

func api(image string, env ...result.EnvVar) result.WorkloadInventory {
	return result.WorkloadInventory{Kind: "Deployment", Namespace: "shop", Name: "api", Replicas: i32(2), Nodes: []string{"node-a"},
		Containers: []result.ContainerInventory{{Name: "api", Image: image, Requests: map[string]string{"cpu": "500m"}, Limits: map[string]string{"cpu": "1"}, Env: env}}}
}

// The required case: the baseline and the variant differ in an image the variant did not
// declare (it declared only the CPU limit), and the findings name it and the comparison is marked.
func TestUndeclaredImageIsNamed(t *testing.T) {
	base := api("shop/api:1.4")
	run := api("shop/api:1.5")
	run.Containers[0].Limits = nil
	run.Declared = []string{"resources/api/limits.cpu"}
	cs := Confounds([]result.WorkloadInventory{base}, []result.WorkloadInventory{run})
	if len(cs) != 1 || cs[0].Field != "image/api" || cs[0].Baseline != "shop/api:1.4" || cs[0].Run != "shop/api:1.5" {
		t.Fatalf("confounds = %+v, want only the image", cs)
	}
	r := &result.Result{Comparison: &result.Comparison{Baseline: "b", Confounds: cs}}
	fs := Run(r, nil)
	if len(fs) == 0 || fs[0].Kind != result.FindingEnvironment || !strings.Contains(fs[0].Text, "shop/api:1.4") ||
		!strings.Contains(fs[0].Text, "shop/api:1.5") || !strings.Contains(fs[0].Text, "image") {
		t.Fatalf("findings = %+v, want the image named first", fs)
	}
}

func TestConfounds(t *testing.T) {
	secret := result.EnvVar{Name: "DB_PASSWORD", From: "secret db/password"}
	other := result.WorkloadInventory{Kind: "StatefulSet", Namespace: "shop", Name: "db", Replicas: i32(1)}
	cases := []struct {
		name       string
		base, run  []result.WorkloadInventory
		wantFields []string
	}{
		{"identical", []result.WorkloadInventory{api("a:1", secret)}, []result.WorkloadInventory{api("a:1", secret)}, nil},
		{"declared image", []result.WorkloadInventory{api("a:1")}, []result.WorkloadInventory{withDeclared(api("a:2"), "image/api")}, nil},
		{"declared by the baseline's own variant", []result.WorkloadInventory{withDeclared(api("a:2"), "container/api")}, []result.WorkloadInventory{api("a:1")}, nil},
		{"whole template declared", []result.WorkloadInventory{api("a:1")}, []result.WorkloadInventory{withDeclared(withReplicas(api("a:2"), 3), "*")}, nil},
		{"env value", []result.WorkloadInventory{api("a:1", result.EnvVar{Name: "LOG", Value: "info"})},
			[]result.WorkloadInventory{api("a:1", result.EnvVar{Name: "LOG", Value: "debug"})}, []string{"env/api/LOG"}},
		{"env declared, another env var not", []result.WorkloadInventory{api("a:1", result.EnvVar{Name: "GOGC", Value: "100"}, result.EnvVar{Name: "LOG", Value: "info"})},
			[]result.WorkloadInventory{withDeclared(api("a:1", result.EnvVar{Name: "GOGC", Value: "400"}, result.EnvVar{Name: "LOG", Value: "debug"}), "env/api/GOGC")}, []string{"env/api/LOG"}},
		{"secret reference changed", []result.WorkloadInventory{api("a:1", secret)},
			[]result.WorkloadInventory{api("a:1", result.EnvVar{Name: "DB_PASSWORD", From: "secret db2/password"})}, []string{"env/api/DB_PASSWORD"}},
		{"replicas and nodes", []result.WorkloadInventory{api("a:1")}, []result.WorkloadInventory{withNodes(withReplicas(api("a:1"), 3), "node-b")}, []string{"replicas", "nodes"}},
		{"observed in one run only", []result.WorkloadInventory{api("a:1"), other}, []result.WorkloadInventory{api("a:1")}, []string{"workload"}},
		{"missing on one side is not compared", []result.WorkloadInventory{api("a:1")}, []result.WorkloadInventory{{Kind: "Deployment", Namespace: "shop", Name: "api", Missing: "not found"}}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, c := range Confounds(tc.base, tc.run) {
				got = append(got, c.Field)
			}
			if strings.Join(got, ",") != strings.Join(tc.wantFields, ",") {
				t.Fatalf("fields = %v, want %v", got, tc.wantFields)
			}
		})
	}
}

func withDeclared(w result.WorkloadInventory, d ...string) result.WorkloadInventory {
	w.Declared = d
	return w
}

func withReplicas(w result.WorkloadInventory, n int32) result.WorkloadInventory {
	w.Replicas = i32(n)
	return w
}

func withNodes(w result.WorkloadInventory, nodes ...string) result.WorkloadInventory {
	w.Nodes = nodes
	return w
}

func f(v float64) *float64 { return &v }

func row(workload string, kind perfexpv1alpha1.ObjectiveMetric, est, lo, hi float64, change perfexpv1alpha1.Change) result.MetricComparison {
	return result.MetricComparison{Metric: workload + " " + string(kind), Workload: workload, Kind: kind, Estimate: f(est), Low: f(lo), High: f(hi), Scale: result.ScalePercent, Change: change}
}

// A mover is named a change only when its row's verdict is one: an estimate of +40 % with an
// interval reaching below zero reads "no clear change".
func TestMoversNeverStrongerThanTheirInterval(t *testing.T) {
	c := &result.Comparison{MinChangePercent: 5, Metrics: []result.MetricComparison{
		row("Deployment/shop/api", result.MetricCPU, 26, 18, 34, perfexpv1alpha1.ChangeRegressed),
		row("Deployment/shop/web", result.MetricCPU, 40, -3, 90, perfexpv1alpha1.ChangeInconclusive),
		row("Deployment/shop/db", result.MetricCPU, 1, -2, 4, perfexpv1alpha1.ChangeNoMeaningfulChange),
		row("Deployment/shop/api", result.MetricMemory, -12, -15, -9, perfexpv1alpha1.ChangeImproved),
		{Metric: "checkout p95", Scenario: "checkout", Kind: perfexpv1alpha1.MetricP95, Estimate: f(-30), Low: f(-40), High: f(-20), Scale: result.ScalePercent, Change: perfexpv1alpha1.ChangeImproved},
		{Metric: "all p95", Kind: perfexpv1alpha1.MetricP95, Estimate: f(-30), Low: f(-40), High: f(-20), Scale: result.ScalePercent, Change: perfexpv1alpha1.ChangeImproved},
	}}
	fs := movers(c)
	want := []string{
		"No clear change in shop/web's CPU: +40.0 % [-3.0, +90.0] (Inconclusive).",
		"Mover: shop/api's CPU rose by +26.0 % [+18.0, +34.0] against the baseline (Regressed).",
		"Mover: shop/api's memory fell by -12.0 % [-15.0, -9.0] against the baseline (Improved).",
		"Mover: checkout p95 fell by -30.0 % [-40.0, -20.0] against the baseline (Improved).",
	}
	if len(fs) != len(want) {
		t.Fatalf("movers = %+v", fs)
	}
	for i := range want {
		if fs[i].Text != want[i] {
			t.Errorf("mover %d = %q, want %q", i, fs[i].Text, want[i])
		}
	}
}

func TestHotSpotsUnevenAndCost(t *testing.T) {
	restarts := int64(2)
	r := &result.Result{
		Window: result.WindowInfo{MeasuredSeconds: 600},
		Total:  result.RequestStats{Requests: result.Count(60000)},
		Workloads: []result.WorkloadResult{
			{Kind: "Deployment", Namespace: "shop", Name: "api", Pods: 3, CPUAvg: f(1.5), CPULimit: f(3), CPUPercentOfRequest: f(138), CPUPercentOfLimit: f(90), CPUThrottledPercent: f(12)},
			{Kind: "Deployment", Namespace: "shop", Name: "web", Pods: 1, CPUAvg: f(0.1), CPUPercentOfRequest: f(40), Restarts: &restarts},
			{Kind: "Deployment", Namespace: "shop", Name: "quiet", Pods: 2, CPUAvg: f(0.2), CPULimit: f(2), CPUPercentOfRequest: f(20), CPUPercentOfLimit: f(11)},
		},
	}
	base := &result.Result{Window: result.WindowInfo{MeasuredSeconds: 600}, Total: result.RequestStats{Requests: result.Count(30000)},
		Workloads: []result.WorkloadResult{{Kind: "Deployment", Namespace: "shop", Name: "api", CPUAvg: f(1.0)}}}
	fs := Run(r, base)
	kinds := map[string][]string{}
	for _, x := range fs {
		kinds[x.Kind] = append(kinds[x.Kind], x.Text)
	}
	// The most severe first: a restart before anything a bound measures.
	if len(kinds[result.FindingHotSpot]) != 2 || !strings.Contains(kinds[result.FindingHotSpot][1], "138 % of its request") ||
		!strings.Contains(kinds[result.FindingHotSpot][1], "12.0 % of its CPU periods throttled") || !strings.Contains(kinds[result.FindingHotSpot][0], "2 container restart(s)") {
		t.Errorf("hot spots = %q", kinds[result.FindingHotSpot])
	}
	// api: 1.5 cores x 600 s / 60,000 requests = 15 ms per request, 15 s per 1,000; the
	// baseline's 1.0 x 600 / 30,000 = 20 s: -25 %.
	if c := kinds[result.FindingCostPerLoad]; len(c) != 1 || !strings.Contains(c[0], "api 15 s (baseline 20 s, -25 %)") {
		t.Errorf("cost = %q", c)
	}
	// api: the busiest pod at 90 % against a mean of 50 %; quiet: 11 % against 10 %.
	if u := kinds[result.FindingUneven]; len(u) != 1 || !strings.Contains(u[0], "shop/api's 3 pods") {
		t.Errorf("uneven = %q", u)
	}
}

func TestUnknownInventoryIsSaid(t *testing.T) {
	fs := Run(&result.Result{Comparison: &result.Comparison{ConfoundsUnknown: "the baseline recorded no inventory"}}, nil)
	if len(fs) != 1 || !strings.Contains(fs[0].Text, "could not be compared") {
		t.Fatalf("findings = %+v", fs)
	}
}

// TestHotSpotsNameTheWorstAndListTheRest: eleven services all far above tiny CPU requests (the
// platform's, whose requests stand for CPU units): the three most severe are named with their
// figures, the rest in one line; a sweep names each of those three once with its arms.
func TestHotSpotsNameTheWorstAndListTheRest(t *testing.T) {
	var ws []result.WorkloadResult
	for i, pct := range []float64{699, 418, 154, 678, 225, 436, 170, 609, 97, 129, 336} {
		ws = append(ws, result.WorkloadResult{Kind: "Deployment", Namespace: "p", Name: fmt.Sprintf("s%02d", i), CPUPercentOfRequest: f(pct)})
	}
	fs := hotSpots(ws)
	if len(fs) != HotSpotsNamed+1 {
		t.Fatalf("findings %q", fs)
	}
	for i, want := range []string{"p/s00 ran with its CPU at 699 %", "p/s03 ran with its CPU at 678 %", "p/s07 ran with its CPU at 609 %"} {
		if !strings.Contains(fs[i].Text, want) {
			t.Errorf("finding %d = %q, want %q", i, fs[i].Text, want)
		}
	}
	if last := fs[HotSpotsNamed].Text; !strings.Contains(last, "p/s05") || strings.Contains(last, "p/s00") || !strings.Contains(last, " and ") {
		t.Errorf("the rest = %q", last)
	}
	arms := []Arm{{Name: "baseline", Runs: []*result.Result{{Workloads: ws}}}, {Name: "kraft", Runs: []*result.Result{{Workloads: ws}}}}
	sf := sweepHotSpots(arms)
	if len(sf) != HotSpotsNamed+1 || !strings.Contains(sf[0].Text, "Hot spot in 2 of 2 arms (baseline, kraft); in baseline, p/s00 ran with its CPU at 699 %") {
		t.Errorf("sweep findings %q", sf)
	}
}
