package controllers_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/testenv"
	"github.com/perfexp/perfexp/internal/variant"
)

// TestRandomSpecsAreRefusedOrEndWithTheEnvironmentUnchanged is the API's property test: random
// PerfExperiment specs, built from the fields of the API with values chosen to be valid, invalid
// and hostile, are sent to the real API server. Each one is either refused there with a clear
// error (Invalid or Forbidden, with a message), or accepted and then ends terminal, with every
// Deployment, StatefulSet and ConfigMap of the target namespaces exactly as before. After all
// of them, a plain experiment still runs to the end: nothing wedged the manager.
//
// The reconciler runs with the real variant package (the patches and restores are real); the
// Deployment controller is played by the test (rollouts finish at once), the load and the
// analysis are the lab's. PERFEXP_PROPERTY_SPECS sets how many specs (default 40) and
// PERFEXP_PROPERTY_SEED the seed (default: a fixed one, so a failure repeats); `make
// test-property` runs a long form with a random seed.
func TestRandomSpecsAreRefusedOrEndWithTheEnvironmentUnchanged(t *testing.T) {
	n := envInt(t, "PERFEXP_PROPERTY_SPECS", 40)
	seed := uint64(envInt(t, "PERFEXP_PROPERTY_SEED", 20261122))
	t.Logf("%d specs, seed %d (PERFEXP_PROPERTY_SEED=%d repeats this run)", n, seed, seed)

	env := testenv.Start(t)
	c := env.Client
	env.Namespace(t, leaseNamespace)
	team := env.Namespace(t, "team")
	targets := []string{env.Namespace(t, "env-a"), env.Namespace(t, "env-b"), env.Namespace(t, "env-c")}
	plain := env.PlainNamespace(t, "not-opted-in")
	for _, ns := range append(copyOf(targets), plain) {
		for _, o := range environmentObjects(ns) {
			if err := c.Create(t.Context(), o); err != nil {
				t.Fatal(err)
			}
		}
	}
	watched := append(copyOf(targets), plain, "kube-system")
	before := map[string]string{}
	for _, ns := range watched {
		before[ns] = environmentState(t, c, ns)
	}

	ctx, stop := context.WithCancel(t.Context())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); playRolloutController(ctx, c, watched) }()
	t.Cleanup(func() { stop(); wg.Wait() })

	lab := newLab()
	startOperatorWith(t, env, variant.New(c, variant.Options{OperatorNamespaces: []string{leaseNamespace}}), lab, lab)

	gen := &specGenerator{rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)), team: team, targets: targets, plain: plain}
	refusals := map[string]int{}
	var accepted []string
	for i := 0; i < n; i++ {
		name := fmt.Sprintf("r%03d", i)
		obj := gen.experiment(name)
		err := c.Create(t.Context(), obj)
		if err == nil {
			accepted = append(accepted, name)
			lab.finishLoad(name)
			continue
		}
		spec, _ := json.Marshal(obj.Object["spec"])
		switch {
		case apierrors.IsInvalid(err), apierrors.IsForbidden(err), apierrors.IsBadRequest(err):
			msg := err.Error()
			if len(msg) < 20 {
				t.Errorf("%s was refused with an unclear message %q\nspec %s", name, msg, spec)
			}
			refusals[refusalKind(err)]++
			if os.Getenv("PERFEXP_PROPERTY_VERBOSE") != "" {
				t.Logf("%s refused: %v", name, err)
			}
		default:
			t.Errorf("%s was refused with a server error, not a validation error: %v\nspec %s", name, err, spec)
		}
	}
	t.Logf("%d of %d specs accepted; refusals by kind: %v", len(accepted), n, refusals)

	ends := map[perfexpv1alpha1.Phase]int{}
	reasons := map[string]int{}
	for _, name := range accepted {
		var got *perfexpv1alpha1.PerfExperiment
		eventually(t, 3*time.Minute, name+" ends", func() error {
			got = get(t, c, team, name)
			if got == nil {
				return fmt.Errorf("%s is gone", name)
			}
			if !got.Status.Phase.IsTerminal() {
				return fmt.Errorf("phase %q: %s", got.Status.Phase, got.Status.Message)
			}
			return nil
		})
		ends[got.Status.Phase]++
		if got.Status.Phase == perfexpv1alpha1.PhaseFailed {
			reasons[failureReason(got)]++
		}
		if e := got.Status.Environment; e != nil && len(e.Touched) > 0 && !e.Restored {
			t.Errorf("%s ended %s with its environment not restored: %+v", name, got.Status.Phase, e)
		}
		if got.Status.Phase == perfexpv1alpha1.PhaseFailed && got.Status.Message == "" {
			t.Errorf("%s failed without a message", name)
		}
	}
	t.Logf("accepted specs ended: %v; failure reasons: %v", ends, reasons)

	// Rollouts the restores started are finished by the stand-in controller; compare specs only.
	for _, ns := range watched {
		eventually(t, 30*time.Second, "namespace "+ns+" is as before", func() error {
			if after := environmentState(t, c, ns); after != before[ns] {
				return fmt.Errorf("differs:\nbefore %s\nafter  %s", before[ns], after)
			}
			return nil
		})
	}

	t.Log("A plain experiment still runs to the end")
	sentinel := experiment(team, "sentinel", "", 0)
	sentinel.Spec.TargetNamespace = targets[0]
	sentinel.Spec.Variant = &perfexpv1alpha1.Variant{Workloads: []perfexpv1alpha1.WorkloadChange{{
		WorkloadSelector: perfexpv1alpha1.WorkloadSelector{Names: []string{"web"}}, Replicas: ptr.To[int32](3)}}}
	mustCreate(t, c, sentinel)
	lab.finishLoad("sentinel")
	eventually(t, 2*time.Minute, "the sentinel succeeds", func() error {
		if p := get(t, c, team, "sentinel").Status.Phase; p != perfexpv1alpha1.PhaseSucceeded {
			return fmt.Errorf("phase %q", p)
		}
		return nil
	})
	if after := environmentState(t, c, targets[0]); after != before[targets[0]] {
		t.Errorf("the sentinel left %s changed:\nbefore %s\nafter  %s", targets[0], before[targets[0]], after)
	}
}

func copyOf(s []string) []string { return append([]string(nil), s...) }

func mustQuantity(s string) resource.Quantity { return resource.MustParse(s) }

func envInt(t *testing.T, name string, def int) int {
	t.Helper()
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		t.Fatalf("%s=%q: want a non-negative integer", name, v)
	}
	return n
}

func refusalKind(err error) string {
	var status apierrors.APIStatus
	if s, ok := err.(apierrors.APIStatus); ok {
		status = s
	}
	if status == nil {
		return "other"
	}
	d := status.Status().Details
	if d == nil || len(d.Causes) == 0 || d.Causes[0].Type == "" {
		return string(status.Status().Reason)
	}
	return string(d.Causes[0].Type) + " " + firstPathElements(d.Causes[0].Field, 2)
}

func firstPathElements(field string, n int) string {
	parts := strings.Split(field, ".")
	if len(parts) > n {
		parts = parts[:n]
	}
	return strings.Join(parts, ".")
}

func failureReason(exp *perfexpv1alpha1.PerfExperiment) string {
	for _, c := range exp.Status.Conditions {
		if c.Status == metav1.ConditionFalse && c.Reason != "" && c.Type != perfexpv1alpha1.ConditionQueued {
			return c.Type + "/" + c.Reason
		}
	}
	return "?"
}

// environmentObjects is a small environment: two Deployments, a StatefulSet and a ConfigMap.
func environmentObjects(ns string) []client.Object {
	workload := func(name string) (metav1.ObjectMeta, *metav1.LabelSelector, corev1.PodTemplateSpec) {
		labels := map[string]string{"app": name}
		return metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels, Annotations: map[string]string{"owner": "team"}},
			&metav1.LabelSelector{MatchLabels: labels},
			corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{
					Name: "app", Image: name + ":1",
					Env: []corev1.EnvVar{{Name: "HTTP_MAXPOOLSIZE", Value: "10"}},
					Resources: corev1.ResourceRequirements{
						Requests: corev1.ResourceList{corev1.ResourceCPU: mustQuantity("100m")},
						Limits:   corev1.ResourceList{corev1.ResourceCPU: mustQuantity("500m"), corev1.ResourceMemory: mustQuantity("256Mi")},
					},
				}}},
			}
	}
	var objs []client.Object
	for _, name := range []string{"web", "api"} {
		meta, sel, tmpl := workload(name)
		objs = append(objs, &appsv1.Deployment{ObjectMeta: meta, Spec: appsv1.DeploymentSpec{Replicas: ptr.To[int32](2), Selector: sel, Template: tmpl}})
	}
	meta, sel, tmpl := workload("db")
	objs = append(objs, &appsv1.StatefulSet{ObjectMeta: meta, Spec: appsv1.StatefulSetSpec{Replicas: ptr.To[int32](1), Selector: sel, Template: tmpl, ServiceName: "db"}})
	objs = append(objs, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "cfg"}, Data: map[string]string{"mode": "a"}})
	return objs
}

// environmentState is what a user would call the environment of ns: the workloads' and
// ConfigMaps' labels, annotations, specs and data (no status, no server-managed fields).
func environmentState(t *testing.T, c client.Client, ns string) string {
	t.Helper()
	type entry struct {
		Labels, Annotations map[string]string
		Spec                any
	}
	out := map[string]entry{}
	var deps appsv1.DeploymentList
	var stss appsv1.StatefulSetList
	var cms corev1.ConfigMapList
	for _, l := range []client.ObjectList{&deps, &stss, &cms} {
		if err := c.List(t.Context(), l, client.InNamespace(ns)); err != nil {
			t.Fatal(err)
		}
	}
	for _, d := range deps.Items {
		out["Deployment/"+d.Name] = entry{d.Labels, d.Annotations, d.Spec}
	}
	for _, s := range stss.Items {
		out["StatefulSet/"+s.Name] = entry{s.Labels, s.Annotations, s.Spec}
	}
	for _, cm := range cms.Items {
		if cm.Name == "kube-root-ca.crt" {
			continue
		}
		out["ConfigMap/"+cm.Name] = entry{cm.Labels, cm.Annotations, cm.Data}
	}
	b, err := json.Marshal(out)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// playRolloutController stands in for the Deployment and StatefulSet controllers, which envtest
// does not run, until ctx ends (testenv.RollOut every 200 ms; an error is retried).
func playRolloutController(ctx context.Context, c client.Client, namespaces []string) {
	for ctx.Err() == nil {
		for _, ns := range namespaces {
			_ = testenv.RollOut(ctx, c, ns)
		}
		select {
		case <-ctx.Done():
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// specGenerator builds random PerfExperiments as untyped objects, so that values of the wrong
// type, unknown enum values and out-of-range numbers reach the API server as a user's YAML would.
// Each field is left out or set; a set field takes a valid value, or (with probability bad) an
// invalid or hostile one. Half the specs are careful (bad 0.02, most are accepted and run), half
// careless (bad 0.3, most are refused).
type specGenerator struct {
	rng     *rand.Rand
	team    string
	targets []string
	plain   string
	bad     float64
}

func (g *specGenerator) pick(vs ...any) any    { return vs[g.rng.IntN(len(vs))] }
func (g *specGenerator) chance(p float64) bool { return g.rng.Float64() < p }

// either returns one of good, or one of evil with probability g.bad.
func (g *specGenerator) either(good []any, evil ...any) any {
	if len(evil) > 0 && g.chance(g.bad) {
		return g.pick(evil...)
	}
	return g.pick(good...)
}

func good(vs ...any) []any { return vs }

func (g *specGenerator) experiment(name string) *unstructured.Unstructured {
	g.bad = 0.02
	if g.chance(0.5) {
		g.bad = 0.3
	}
	spec := map[string]any{}
	if g.chance(0.2) {
		spec["queue"] = g.either(good("q-one", "q-two"), "Not_A_Name!", strings.Repeat("q", 70))
	}
	if g.chance(0.2) {
		spec["priority"] = g.either(good(int64(5), int64(-1000), int64(1000)), int64(1001), int64(2147483647), "high")
	}
	spec["targetNamespace"] = g.either(good(g.targets[0], g.targets[1], g.targets[2]),
		g.plain, "kube-system", leaseNamespace, "does-not-exist", "UPPER")
	if g.chance(0.85) {
		if v := g.variant(); len(v) > 1 || v["description"] == nil && len(v) > 0 || g.chance(g.bad) {
			spec["variant"] = v
		}
	}
	spec["load"] = g.load()
	if g.chance(0.3) {
		spec["analysis"] = g.analysis()
	}
	if g.chance(0.2) {
		spec["baseline"] = map[string]any{"name": g.either(good("r000", "r001", "r002"), name, "missing", "")}
	}
	if g.chance(0.3) {
		spec["timeouts"] = g.timeouts()
	}
	if g.chance(0.1) {
		spec["abort"] = true
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": perfexpv1alpha1.GroupVersion.String(),
		"kind":       "PerfExperiment",
		"metadata":   map[string]any{"name": name, "namespace": g.team},
		"spec":       spec,
	}}
}

func (g *specGenerator) variant() map[string]any {
	v := map[string]any{}
	if g.chance(0.3) {
		v["description"] = g.either(good("no CPU limits", ""), strings.Repeat("d", 2000))
	}
	var workloads []any
	for i := g.rng.IntN(3); i > 0; i-- {
		workloads = append(workloads, g.workloadChange())
	}
	if workloads != nil || g.chance(g.bad) {
		v["workloads"] = workloads
	}
	if g.chance(0.1) {
		v["kafka"] = map[string]any{"strimziMode": map[string]any{"name": "kafka", "kraft": g.either(good("enabled", "disabled"), "Enabled", "Maybe")}}
	}
	if g.chance(0.25) {
		v["patches"] = []any{map[string]any{
			"target": map[string]any{
				"apiVersion": g.either(good("v1"), "apps/v1", "rbac.authorization.k8s.io/v1", ""),
				"kind":       g.either(good("ConfigMap"), "Deployment", "Secret", "ClusterRole", "Node"),
				"name":       g.either(good("cfg"), "web", "missing", ""),
			},
			"type":  g.either(good("Merge", "StrategicMerge"), "merge", "bogus"),
			"patch": g.either(good(`{"data":{"mode":"b"}}`), "not json", `[{"op":"replace","path":"/data/mode","value":"b"}]`, `{"spec":{"replicas":0}}`, ""),
		}}
	}
	return v
}

func (g *specGenerator) workloadChange() map[string]any {
	w := map[string]any{}
	if g.chance(0.4) {
		w["kind"] = g.either(good("Deployment", "StatefulSet"), "Pod", "deployment")
	}
	switch g.rng.IntN(3) {
	case 0:
		w["names"] = g.either(good([]any{"web"}, []any{"web", "db"}, []any{"api"}), []any{"missing"}, []any{}, []any{"Bad Name"})
	case 1:
		w["selector"] = g.either(good(
			map[string]any{"matchLabels": map[string]any{"app": "api"}},
			map[string]any{"matchExpressions": []any{map[string]any{"key": "app", "operator": "In", "values": []any{"web", "db"}}}},
		), map[string]any{}, map[string]any{"matchExpressions": []any{map[string]any{"key": "app", "operator": "Bogus"}}})
	default:
		if g.chance(g.bad) { // both, or neither
			w["names"] = []any{"web"}
			w["selector"] = map[string]any{"matchLabels": map[string]any{"app": "web"}}
		} else {
			w["selector"] = map[string]any{}
		}
	}
	if g.chance(0.2) {
		w["containers"] = g.either(good([]any{"app"}), []any{"sidecar"}, []any{""})
	}
	changed := false
	if g.chance(0.4) {
		changed = true
		r := map[string]any{}
		if g.chance(0.5) {
			r["limits"] = map[string]any{"cpu": g.either(good("1", "250m"), "0", "-1", "abc", "1e3"), "memory": g.either(good("512Mi"), "1Ki", "lots")}
		}
		if g.chance(0.3) {
			r["requests"] = map[string]any{"cpu": g.either(good("50m", "200m"), "2", "-5m")}
		}
		if g.chance(0.4) {
			r["removeLimits"] = g.either(good([]any{"cpu"}, []any{"cpu", "memory"}), []any{"gpu"}, []any{""})
		}
		w["resources"] = r
	}
	if g.chance(0.4) {
		changed = true
		set := map[string]any{"name": g.either(good("HTTP_MAXPOOLSIZE", "NEW_VAR"), "", "1BAD", "A=B", strings.Repeat("V", 300))}
		switch g.rng.IntN(3) {
		case 0:
			set["value"] = g.either(good("50", ""), strings.Repeat("x", 5000))
		case 1:
			set["valueFrom"] = map[string]any{"configMapKeyRef": map[string]any{"name": g.either(good("cfg"), "missing"), "key": "mode"}}
		}
		env := map[string]any{"set": []any{set}}
		if g.chance(0.3) {
			env["remove"] = g.either(good([]any{"HTTP_MAXPOOLSIZE"}, []any{"NOT_THERE"}), []any{""})
		}
		w["env"] = env
	}
	if g.chance(0.3) {
		changed = true
		w["replicas"] = g.either(good(int64(0), int64(1), int64(3)), int64(-1), int64(100000), "two")
	}
	if g.chance(0.2) || !changed && !g.chance(g.bad) {
		w["image"] = g.either(good("web:2", "registry.example/app:1.2"), "", "Not An Image!!")
		w["containers"] = g.either(good([]any{"app"}), []any{"sidecar"})
	}
	return w
}

func (g *specGenerator) duration() any {
	return g.either(good("30s", "1m", "1h30m"), "0s", "-1s", "abc", "25h", "", int64(30))
}

func (g *specGenerator) load() map[string]any {
	l := map[string]any{}
	var scenarios []any
	names := []any{"checkinout", "import"}
	for i := g.rng.IntN(2); i >= 0; i-- {
		s := map[string]any{"name": g.either(good(names[i]), "S!", "", strings.Repeat("s", 80))}
		switch g.rng.IntN(4) {
		case 0, 1:
			s["script"] = map[string]any{"inline": "export default function () {}"}
		case 2:
			s["script"] = map[string]any{"configMap": map[string]any{"name": g.either(good("script", "missing"), ""), "key": "script.js"}}
		default:
			s["script"] = g.either(good(map[string]any{"inline": "x"}), map[string]any{}, map[string]any{"inline": "x", "configMap": map[string]any{"name": "script"}})
		}
		switch g.rng.IntN(3) {
		case 0:
			s["vus"], s["duration"] = g.either(good(int64(1), int64(10)), int64(0), int64(-1), int64(100000)), g.duration()
		case 1:
			s["stages"] = []any{map[string]any{"duration": g.duration(), "target": g.either(good(int64(5)), int64(-2))}}
		case 2:
			s["arrivalRate"] = map[string]any{"rate": g.either(good(int64(10)), int64(0)), "duration": g.duration(), "preAllocatedVUs": int64(2)}
		}
		if g.chance(0.2) {
			s["parallelism"] = g.either(good(int64(1), int64(2)), int64(0), int64(1000))
		}
		scenarios = append(scenarios, s)
	}
	l["scenarios"] = g.either(good(scenarios), []any{}, nil)
	if g.chance(0.15) {
		l["runner"] = g.either(good("Job"), "K6Operator", "Bogus")
	}
	if g.chance(0.15) {
		l["warmUp"] = map[string]any{"duration": g.duration(), "scenario": g.either(good("checkinout"), "nope")}
	}
	if g.chance(0.1) {
		l["image"] = g.either(good("grafana/k6:1.8.1"), "evil/miner:latest", "")
	}
	return l
}

func (g *specGenerator) analysis() map[string]any {
	a := map[string]any{}
	if g.chance(0.4) {
		a["minMeaningfulChangePercent"] = g.either(good("5", "2.5"), "0", "101", "-3", "x")
	}
	if g.chance(0.3) {
		a["prometheusURL"] = g.either(good("http://prometheus:9090"), "http://evil.example:9090", "not a url")
	}
	if g.chance(0.4) {
		o := map[string]any{"metric": g.either(good("P95", "ErrorRate"), "Query", "Bogus")}
		if g.chance(1 - g.bad) {
			o["max"] = g.either(good("500m", "2"), "-1", "x")
		}
		if g.chance(g.bad) { // relative: needs spec.baseline
			o["maxIncreasePercent"] = g.either(good(int64(10)), int64(-5))
		}
		if g.chance(0.3) {
			o["scenario"] = g.either(good("checkinout"), "nope")
		}
		a["objectives"] = []any{o}
	}
	if g.chance(0.2) {
		a["queries"] = []any{map[string]any{"name": g.either(good("q"), ""), "query": g.either(good("up"), "sum(", "")}}
	}
	return a
}

func (g *specGenerator) timeouts() map[string]any {
	t := map[string]any{}
	for _, k := range []string{"rollout", "setup", "loadGrace", "analysis", "overall"} {
		if g.chance(0.3) {
			t[k] = g.duration()
		}
	}
	return t
}
