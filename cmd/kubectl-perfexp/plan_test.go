package main

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	judgesearch "github.com/perfexp/perfexp/internal/judge/search"
	"github.com/perfexp/perfexp/internal/sweep"
	"github.com/perfexp/perfexp/internal/testenv"
)

// The template every small manifest below shares: 10 s of warm-up, one scenario of 1 minute
// after a 15 s start delay, so 1m15s of load.
const planTemplate = `
    load:
      warmUp: {duration: 10s}
      scenarios:
      - name: s
        script: {inline: "export default function () {}"}
        vus: 5
        duration: 1m
        startDelay: 15s
    analysis:
      objectives:
      - {name: p95, metric: P95, max: 200}`

const planVariant = `
      variant:
        workloads:
        - kind: Deployment
          names: [app]
          env: {set: [{name: POOL, value: "10"}]}`

func planSweepManifest(spec string) string {
	return `apiVersion: perfexp.dev/v1alpha1
kind: PerfSweep
metadata: {name: s, namespace: ns}
spec:
  template:` + planTemplate + "\n" + spec + "\n"
}

// planJSON runs plan -o json on a manifest and reads what it printed.
func planJSON(t *testing.T, manifest string, args ...string) (*planDoc, error) {
	t.Helper()
	file := filepath.Join(t.TempDir(), "m.yaml")
	if err := os.WriteFile(file, []byte(manifest), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := run(t, &connection{}, append([]string{"plan", "-f", file, "-o", "json"}, args...)...)
	if err != nil {
		return nil, err
	}
	doc := &planDoc{}
	if err := json.Unmarshal([]byte(out), doc); err != nil {
		t.Fatalf("plan -o json printed what is not its document: %v\n%s", err, out)
	}
	return doc, nil
}

func TestPlanForms(t *testing.T) {
	// With the default allowances: 10 s a rollout, 5 s a Job, 5 s a set of load pods.
	const (
		load     = 75 * time.Second
		baseline = 10*time.Second + load + 2*5*time.Second // warm-up, load, two sets of pods
		armed    = baseline + 2*10*time.Second             // and the variant applied, then restored
		// Every run of a sweep, the baseline's included, rolls the arms' workloads and
		// settles (podAge Equal): each costs an armed run and the settle.
		fresh = armed + sweep.DefaultSettle
	)
	// The CRD's default timeouts: rollout 10m (applied and restored), loadGrace 5m.
	const armedBound = 10*time.Second + load + 5*time.Minute + 2*10*time.Minute

	tests := []struct {
		name        string
		manifest    string
		form        string
		arms        int
		runs        intRange
		environment durationRange
		bound       time.Duration // of the first row with a variant; 0 not checked
	}{
		{name: "a fixed sweep runs arms x repeats", form: "fixed sweep", arms: 2, runs: intRange{4, 4},
			environment: durationRange{planDuration(4 * fresh), planDuration(4 * fresh)}, bound: armedBound + sweep.DefaultSettle,
			manifest: planSweepManifest(`  repeats: 2
  arms:
  - name: pool` + strings.ReplaceAll(planVariant, "\n      ", "\n    "))},
		{name: "a sweep without repeats is sequential by default: 3 repeats at the first look, up to 10", form: "sequential sweep", arms: 2,
			runs:        intRange{6, 20},
			environment: durationRange{planDuration(3 * 2 * fresh), planDuration(10 * 2 * fresh)},
			manifest: planSweepManifest(`  arms:
  - name: pool` + strings.ReplaceAll(planVariant, "\n      ", "\n    "))},
		{name: "a sequential sweep from its repeats to its maxRepeats", form: "sequential sweep", arms: 2, runs: intRange{4, 8},
			environment: durationRange{planDuration(2 * 2 * fresh), planDuration(4 * 2 * fresh)},
			manifest: planSweepManifest(`  repeats: 2
  sequential: {maxRepeats: 4}
  arms:
  - name: pool` + strings.ReplaceAll(planVariant, "\n      ", "\n    "))},
		{name: "a capacity search from one run to its longest path x maxRepeats", form: "capacity search", arms: 1,
			// 10 to 80 VUs at 10 %: doubling to 80, then bisecting 40-80 down to the
			// resolution, at most 9 probes (TestMostProbesIsTheLongestPath checks the path).
			runs:        intRange{1, 9 * 3},
			environment: durationRange{planDuration(baseline), planDuration(27 * baseline)},
			manifest: planSweepManifest(`  capacity:
    parameter: VUs
    min: 10
    max: 80`)},
		{name: "a bisect from its first step to its budget", form: "bisect", arms: 2, runs: intRange{6, 2 * 10 * 10},
			environment: durationRange{planDuration(6 * armed), planDuration(200 * armed)},
			manifest: planSweepManifest(`  bisect:
    services:
    - {name: a, container: a, baseline: "a:1", candidate: "a:2"}
    - {name: b, container: b, baseline: "b:1", candidate: "b:2"}`)},
		{name: "an experiment is one run", form: "experiment", arms: 1, runs: intRange{1, 1},
			environment: durationRange{planDuration(armed), planDuration(armed)}, bound: armedBound,
			manifest: `apiVersion: perfexp.dev/v1alpha1
kind: PerfExperiment
metadata: {name: e, namespace: ns}
spec:` + strings.ReplaceAll(planTemplate, "\n    ", "\n  ") + strings.ReplaceAll(planVariant, "\n      ", "\n  ") + "\n"},
		{name: "an experiment with confirm may add 2 x maxRepeats runs", form: "experiment", arms: 3, runs: intRange{1, 1 + 2*4},
			// The confirming sweep's runs, its baseline's included, roll and settle (podAge Equal).
			environment: durationRange{planDuration(armed), planDuration(armed + 8*fresh)},
			manifest: `apiVersion: perfexp.dev/v1alpha1
kind: PerfExperiment
metadata: {name: e, namespace: ns}
spec:
  baseline: {name: b}` + strings.ReplaceAll(planTemplate, "\n    ", "\n  ") + `
    confirm: {maxRepeats: 4}` + strings.ReplaceAll(planVariant, "\n      ", "\n  ") + "\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc, err := planJSON(t, tt.manifest)
			if err != nil {
				t.Fatalf("plan: %v\n%s", err, tt.manifest)
			}
			if len(doc.Plans) != 1 {
				t.Fatalf("%d plans, want 1", len(doc.Plans))
			}
			p := doc.Plans[0]
			if p.Form != tt.form || len(p.Arms) != tt.arms || p.Runs != tt.runs || p.Environment != tt.environment {
				t.Errorf("form %q, %d arms, runs %s, environment %s; want %q, %d arms, runs %s, environment %s",
					p.Form, len(p.Arms), p.Runs, p.Environment, tt.form, tt.arms, tt.runs, tt.environment)
			}
			if p.Queue != "ns" {
				t.Errorf("queue %q, want the namespace ns", p.Queue)
			}
			for _, a := range p.Arms {
				if a.Load != planDuration(load) || a.WarmUp != planDuration(10*time.Second) {
					t.Errorf("arm %s: load %s, warm-up %s; want %s and 10s", a.Name, a.Load, a.WarmUp, planDuration(load))
				}
				if tt.bound > 0 && (a.Environment == planDuration(armed) || a.Environment == planDuration(fresh)) && a.Bound != planDuration(tt.bound) {
					t.Errorf("arm %s: bound %s, want %s (the CRD's default timeouts)", a.Name, a.Bound, planDuration(tt.bound))
				}
			}
			if want := planDuration(tt.runs.Max) * planDuration(load); p.Measured.Max != want {
				t.Errorf("measured at most %s, want %s", p.Measured.Max, want)
			}
		})
	}
}

// The allowances are the user's to change, and the human table says which it assumed.
func TestPlanAllowancesAndTable(t *testing.T) {
	manifest := planSweepManifest(`  repeats: 1
  arms:
  - name: pool` + strings.ReplaceAll(planVariant, "\n      ", "\n    "))
	doc, err := planJSON(t, manifest, "--rollout-time", "1m", "--pod-time", "0s")
	if err != nil {
		t.Fatal(err)
	}
	// baseline 10s + 1m15s; each run that, 2 x 1m of rollouts and the 30 s settle (podAge Equal).
	if got, want := doc.Plans[0].Environment.Max, planDuration(2*(85*time.Second+2*time.Minute+sweep.DefaultSettle)); got != want {
		t.Errorf("environment %s, want %s", got, want)
	}
	file := filepath.Join(t.TempDir(), "m.yaml")
	if err := os.WriteFile(file, []byte(manifest), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := run(t, &connection{}, "plan", "-f", file, "--job-time", "7s")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"PerfSweep ns/s: fixed sweep, 2 arms x 1 repeat", "queue ns, priority 0, deadline 168h0m0s",
		"ARM", "ENVIRONMENT/RUN", "pool", "POOL = 10", "runs 2, measured 2m30s", "a setup or teardown Job 7s,"} {
		if !strings.Contains(out, want) {
			t.Errorf("the table does not say %q:\n%s", want, out)
		}
	}
}

func TestPlanRefuses(t *testing.T) {
	tests := []struct {
		name, manifest, want string
	}{
		{name: "an unknown kind of perfexp", want: "unknown kind PerfThing",
			manifest: "apiVersion: perfexp.dev/v1alpha1\nkind: PerfThing\nmetadata: {name: x}\nspec: {}\n"},
		{name: "another version of perfexp", want: "perfexp serves perfexp.dev/v1alpha1, not perfexp.dev/v1",
			manifest: "apiVersion: perfexp.dev/v1\nkind: PerfSweep\nmetadata: {name: x}\nspec: {}\n"},
		{name: "nothing to plan", want: "no PerfExperiment or PerfSweep in the input",
			manifest: "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n"},
		{name: "a sweep the API server refuses (CEL)", want: "the API server would refuse it",
			manifest: planSweepManifest("  repeats: 2")},
		{name: "a sweep the API server refuses (schema)", want: "spec.repeats: Invalid value: 11",
			manifest: planSweepManifest("  repeats: 11\n  arms:\n  - name: pool" + strings.ReplaceAll(planVariant, "\n      ", "\n    "))},
		{name: "a sweep the operator refuses", want: "arm a changes no scenario's load",
			manifest: planSweepManifest("  arms:\n  - name: a\n    load: {rate: 10}")},
		{name: "a load longer than its overall timeout", want: "longer than its overall timeout of 1m0s",
			manifest: strings.Replace(planSweepManifest("  repeats: 1\n  arms:\n  - name: pool"+strings.ReplaceAll(planVariant, "\n      ", "\n    ")),
				"    analysis:", "    timeouts: {overall: 1m}\n    analysis:", 1)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := planJSON(t, tt.manifest)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v, want one with %q", err, tt.want)
			}
		})
	}
}

// The most probes is the longest path of the search, checked here against every whole load at
// which the objectives could stop holding.
func TestMostProbesIsTheLongestPath(t *testing.T) {
	for _, c := range []judgesearch.CapacitySearch{
		{Min: 10, Max: 80, ResolutionPercent: 10, MaxProbes: 12, MaxRepeats: 3},
		{Min: 20, Max: 160, ResolutionPercent: 20, MaxProbes: 6, MaxRepeats: 2},
		{Min: 1, Max: 1000, ResolutionPercent: 5, MaxProbes: 20, MaxRepeats: 3},
		{Min: 50, Max: 50, ResolutionPercent: 10, MaxProbes: 12, MaxRepeats: 3},
	} {
		t.Run(fmt.Sprintf("%d-%d", c.Min, c.Max), func(t *testing.T) {
			longest := 0
			for breaks := c.Min - 1; breaks <= c.Max; breaks++ {
				var ps []judgesearch.Probe
				for {
					st := c.Next(ps)
					if st.Done {
						break
					}
					o := judgesearch.ProbeHeld
					if st.Next > breaks {
						o = judgesearch.ProbeBroke
					}
					ps = append(ps, judgesearch.Probe{Load: st.Next, Outcome: o})
				}
				longest = max(longest, len(ps))
			}
			if got := mostProbes(c); got != longest {
				t.Errorf("mostProbes %d, the longest path over every threshold %d", got, longest)
			}
		})
	}
}

// The demo bisect's comments give what it took: 2 services 3 steps, 4 services 5 steps.
func TestOneCulpritSteps(t *testing.T) {
	if got := oneCulpritSteps([]string{"circulation", "inventory"}, 8); got != 3 {
		t.Errorf("2 services: %d steps, want 3", got)
	}
	if got := oneCulpritSteps([]string{"circulation", "inventory", "kafka-kraft", "kafka-zookeeper"}, 8); got != 5 {
		t.Errorf("4 services: %d steps, want 5", got)
	}
}

// Every experiment and sweep the project ships plans: each kustomization with -k, each other
// manifest with -f.
func TestPlanEveryScenario(t *testing.T) {
	root := testenv.Root()
	var ks, files []string
	for _, dir := range []string{"scenarios", "examples"} {
		err := filepath.WalkDir(filepath.Join(root, dir), func(path string, d fs.DirEntry, err error) error {
			switch {
			case err != nil || d.IsDir():
				return err
			case d.Name() == "kustomization.yaml":
				data, err := os.ReadFile(path)
				if err != nil {
					return err
				}
				// A kustomize Component (the studies' observe/ pieces) is only a part of others.
				if !strings.Contains(string(data), "\nkind: Component") {
					ks = append(ks, filepath.Dir(path))
				}
			case strings.HasSuffix(path, ".yaml"):
				data, err := os.ReadFile(path)
				if err != nil {
					return err
				}
				if strings.Contains(string(data), "apiVersion: perfexp.dev/") {
					files = append(files, path)
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if len(ks) < 20 || len(files) < 20 {
		t.Fatalf("found %d kustomizations and %d manifests: the walk missed the scenarios", len(ks), len(files))
	}
	for _, k := range ks {
		rel, _ := filepath.Rel(root, k)
		t.Run("-k "+rel, func(t *testing.T) {
			out, err := run(t, &connection{}, "plan", "-k", k)
			if rel == filepath.Join("scenarios", "studies", "scripts") {
				// The studies' k6 scripts only.
				if err == nil || !strings.Contains(err.Error(), "nothing to plan") {
					t.Fatalf("want nothing to plan, got %v", err)
				}
				return
			}
			if err != nil || !strings.Contains(out, "runs ") {
				t.Fatalf("%v\n%s", err, out)
			}
		})
	}
	for _, f := range files {
		rel, _ := filepath.Rel(root, f)
		t.Run("-f "+rel, func(t *testing.T) {
			if out, err := run(t, &connection{}, "plan", "-f", f, "-o", "yaml"); err != nil || !strings.Contains(out, "environmentBound:") {
				t.Fatalf("%v\n%s", err, out)
			}
		})
	}
}

// A run's phases and bound, from what its spec has.
func TestCostOfPhases(t *testing.T) {
	sec := func(n int) planDuration { return planDuration(time.Duration(n) * time.Second) }
	tests := []struct {
		name     string
		manifest string
		phases   string
		env      planDuration
	}{
		{name: "a run without variant or setup or warm-up only runs its load", phases: "Running 1m5s", env: sec(65),
			manifest: `apiVersion: perfexp.dev/v1alpha1
kind: PerfExperiment
metadata: {name: e, namespace: ns}
spec:
  load:
    scenarios:
    - {name: s, script: {inline: "x"}, vus: 1, duration: 1m}`},
		{name: "every phase", phases: "Preparing 10s, SettingUp 5s, WarmingUp 15s, Running 1m5s, Restoring 15s", env: sec(110),
			manifest: `apiVersion: perfexp.dev/v1alpha1
kind: PerfExperiment
metadata: {name: e, namespace: ns}
spec:
  setup: {image: busybox}
  teardown: {image: busybox}
  variant:
    workloads:
    - {kind: Deployment, names: [app], replicas: 2}
  load:
    warmUp: {duration: 10s}
    scenarios:
    - {name: s, script: {inline: "x"}, vus: 1, duration: 1m}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc, err := planJSON(t, tt.manifest)
			if err != nil {
				t.Fatal(err)
			}
			a := doc.Plans[0].Arms[0]
			var got []string
			for _, p := range a.Phases {
				got = append(got, fmt.Sprintf("%s %s", p.Phase, p.Duration))
			}
			if strings.Join(got, ", ") != tt.phases || a.Environment != tt.env {
				t.Errorf("phases %s, environment %s; want %s, %s", strings.Join(got, ", "), a.Environment, tt.phases, tt.env)
			}
		})
	}
	// A fromScript scenario without scriptDuration: only its overall timeout bounds it.
	doc, err := planJSON(t, `apiVersion: perfexp.dev/v1alpha1
kind: PerfExperiment
metadata: {name: e, namespace: ns}
spec:
  timeouts: {overall: 2h}
  load:
    scenarios:
    - {name: s, script: {inline: "x"}, fromScript: true}`)
	if err != nil {
		t.Fatal(err)
	}
	p := doc.Plans[0]
	if a := p.Arms[0]; a.LoadKnown || a.Bound != planDuration(2*time.Hour) || len(p.Notes) == 0 || !strings.Contains(p.Notes[0], "scriptDuration") {
		t.Errorf("load known %v, bound %s, notes %q; want unknown, 2h, a note", a.LoadKnown, a.Bound, p.Notes)
	}
}
