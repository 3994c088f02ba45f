package load

import (
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
)

func dur(d time.Duration) metav1.Duration { return metav1.Duration{Duration: d} }

func TestExecutionSegments(t *testing.T) {
	tests := []struct {
		n            int
		wantSegments []string
		wantSequence string
	}{
		{n: 1},
		{n: 2, wantSegments: []string{"0:1/2", "1/2:1"}, wantSequence: "0,1/2,1"},
		{n: 3, wantSegments: []string{"0:1/3", "1/3:2/3", "2/3:1"}, wantSequence: "0,1/3,2/3,1"},
		{n: 4, wantSegments: []string{"0:1/4", "1/4:2/4", "2/4:3/4", "3/4:1"}, wantSequence: "0,1/4,2/4,3/4,1"},
	}
	for _, tt := range tests {
		t.Run(strconv.Itoa(tt.n), func(t *testing.T) {
			segs, seq := ExecutionSegments(tt.n)
			if !reflect.DeepEqual(segs, tt.wantSegments) || seq != tt.wantSequence {
				t.Fatalf("ExecutionSegments(%d) = %v, %q; want %v, %q", tt.n, segs, seq, tt.wantSegments, tt.wantSequence)
			}
		})
	}
}

func TestExecutor(t *testing.T) {
	tests := []struct {
		name string
		sc   perfexpv1alpha1.Scenario
		want map[string]any
	}{
		{
			name: "vus and duration become constant-vus",
			sc:   perfexpv1alpha1.Scenario{VUs: ptr.To[int32](8), Duration: ptr.To(dur(30 * time.Minute))},
			want: map[string]any{"executor": "constant-vus", "vus": int32(8), "duration": "30m0s"},
		},
		{
			name: "stages become ramping-vus",
			sc: perfexpv1alpha1.Scenario{Stages: []perfexpv1alpha1.Stage{
				{Duration: dur(time.Minute), Target: 20}, {Duration: dur(24 * time.Hour), Target: 20}, {Duration: dur(30 * time.Second), Target: 0},
			}},
			want: map[string]any{"executor": "ramping-vus", "stages": []map[string]any{
				{"duration": "1m0s", "target": int32(20)}, {"duration": "24h0m0s", "target": int32(20)}, {"duration": "30s", "target": int32(0)},
			}},
		},
		{
			name: "arrival rate becomes constant-arrival-rate",
			sc: perfexpv1alpha1.Scenario{ArrivalRate: &perfexpv1alpha1.ArrivalRate{
				Rate: 50, TimeUnit: ptr.To(dur(time.Second)), Duration: dur(10 * time.Minute), PreAllocatedVUs: 10, MaxVUs: ptr.To[int32](40),
			}},
			want: map[string]any{
				"executor": "constant-arrival-rate", "rate": int32(50), "timeUnit": "1s", "duration": "10m0s",
				"preAllocatedVUs": int32(10), "maxVUs": int32(40),
			},
		},
		{
			name: "arrival rate without a time unit counts per second",
			sc:   perfexpv1alpha1.Scenario{ArrivalRate: &perfexpv1alpha1.ArrivalRate{Rate: 5, Duration: dur(time.Minute), PreAllocatedVUs: 2}},
			want: map[string]any{"executor": "constant-arrival-rate", "rate": int32(5), "timeUnit": "1s", "duration": "1m0s", "preAllocatedVUs": int32(2)},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Executor(&tt.sc); !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("Executor() = %#v\nwant %#v", got, tt.want)
			}
		})
	}
}

func TestPlannedDuration(t *testing.T) {
	scenario := func(name string, delay time.Duration, sc perfexpv1alpha1.Scenario) perfexpv1alpha1.Scenario {
		sc.Name = name
		if delay > 0 {
			sc.StartDelay = ptr.To(dur(delay))
		}
		return sc
	}
	vus := perfexpv1alpha1.Scenario{VUs: ptr.To[int32](5), Duration: ptr.To(dur(30 * time.Minute))}
	stages := perfexpv1alpha1.Scenario{Stages: []perfexpv1alpha1.Stage{{Duration: dur(time.Minute), Target: 5}, {Duration: dur(9 * time.Minute), Target: 5}}}
	rate := perfexpv1alpha1.Scenario{ArrivalRate: &perfexpv1alpha1.ArrivalRate{Rate: 1, Duration: dur(25 * time.Minute), PreAllocatedVUs: 1}}
	tests := []struct {
		name      string
		scenarios []perfexpv1alpha1.Scenario
		warmUp    *perfexpv1alpha1.WarmUp
		want      time.Duration
	}{
		{name: "one scenario", scenarios: []perfexpv1alpha1.Scenario{scenario("a", 0, vus)}, want: 30 * time.Minute},
		{name: "stages are summed", scenarios: []perfexpv1alpha1.Scenario{scenario("a", 0, stages)}, want: 10 * time.Minute},
		{
			name:      "a delayed import outlasts the main scenario",
			scenarios: []perfexpv1alpha1.Scenario{scenario("checkout", 0, vus), scenario("import", 10*time.Minute, rate)},
			want:      35 * time.Minute,
		},
		{
			name:      "the warm-up is not included",
			scenarios: []perfexpv1alpha1.Scenario{scenario("a", 0, stages)},
			warmUp:    &perfexpv1alpha1.WarmUp{VUs: 1, Duration: dur(5 * time.Minute)},
			want:      10 * time.Minute,
		},
		{
			name:      "a script that runs its own scenarios for the duration k6 inspect gives",
			scenarios: []perfexpv1alpha1.Scenario{scenario("docs", time.Minute, perfexpv1alpha1.Scenario{FromScript: true, ScriptDuration: ptr.To(dur(2 * time.Minute))})},
			want:      3 * time.Minute,
		},
		{
			name:      "a script of unknown duration leaves only the overall timeout",
			scenarios: []perfexpv1alpha1.Scenario{scenario("a", 0, vus), scenario("docs", 0, perfexpv1alpha1.Scenario{FromScript: true})},
			want:      168 * time.Hour,
		},
	}
	r := New(nil, Options{})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			exp := &perfexpv1alpha1.PerfExperiment{}
			exp.Spec.Load.Scenarios = tt.scenarios
			exp.Spec.Load.WarmUp = tt.warmUp
			if got := r.PlannedDuration(exp); got != tt.want {
				t.Fatalf("PlannedDuration() = %s, want %s", got, tt.want)
			}
		})
	}
}

func TestK6Args(t *testing.T) {
	tests := []struct {
		name     string
		userArgs []string
		want     []string
	}{
		{
			name: "tags, remote write and the summary on stdout",
			want: []string{"run", "--quiet", "--tag", "testid=checkout-1a2b3c4d", "--tag", "scenario=checkout",
				"--out", "experimental-prometheus-rw", "--summary-export", "/dev/stdout",
				"--tag", "instance_id=$(JOB_COMPLETION_INDEX)", "/scripts/perfexp-run.js"},
		},
		{
			name:     "user arguments come before perfexp's, so perfexp's win",
			userArgs: []string{"--http-debug", "--tag", "team=circulation"},
			want: []string{"run", "--http-debug", "--tag", "team=circulation", "--quiet", "--tag", "testid=checkout-1a2b3c4d", "--tag", "scenario=checkout",
				"--out", "experimental-prometheus-rw", "--summary-export", "/dev/stdout",
				"--tag", "instance_id=$(JOB_COMPLETION_INDEX)", "/scripts/perfexp-run.js"},
		},
		{
			// Admitted before the API refused it: k6 keeps the last --tag testid, perfexp's.
			name:     "a forged test id is overridden by the experiment's",
			userArgs: []string{"--tag", "testid=victim-00000000"},
			want: []string{"run", "--tag", "testid=victim-00000000", "--quiet", "--tag", "testid=checkout-1a2b3c4d", "--tag", "scenario=checkout",
				"--out", "experimental-prometheus-rw", "--summary-export", "/dev/stdout",
				"--tag", "instance_id=$(JOB_COMPLETION_INDEX)", "/scripts/perfexp-run.js"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := K6Args("checkout-1a2b3c4d", "checkout", tt.userArgs, "/scripts/perfexp-run.js")
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("K6Args() =\n%q\nwant\n%q", got, tt.want)
			}
		})
	}
}

func TestK6EnvKeepsPerfexpsRemoteWrite(t *testing.T) {
	user := []perfexpv1alpha1.EnvVar{
		{Name: "K6_PROMETHEUS_RW_SERVER_URL", Value: "http://prometheus.other-team:9090/api/v1/write"},
		{Name: "K6_OUT", Value: "json=/tmp/x"},
		{Name: "K6_PROMETHEUS_RW_TREND_AS_NATIVE_HISTOGRAM", Value: "false"},
		{Name: "BASE_URL", Value: "http://circulation:8080"},
	}
	env := map[string]string{}
	for _, e := range K6Env("http://prometheus.monitoring:9090/api/v1/write", user) {
		if _, dup := env[e.Name]; dup {
			t.Fatalf("%s set twice", e.Name)
		}
		env[e.Name] = e.Value
	}
	if got := env["K6_PROMETHEUS_RW_SERVER_URL"]; got != "http://prometheus.monitoring:9090/api/v1/write" {
		t.Errorf("remote write goes to %q, want perfexp's", got)
	}
	if _, ok := env["K6_OUT"]; ok {
		t.Errorf("K6_OUT kept")
	}
	if env["K6_PROMETHEUS_RW_TREND_AS_NATIVE_HISTOGRAM"] != "false" || env["BASE_URL"] == "" {
		t.Errorf("the scenario's own settings must stay: %v", env)
	}
}

func TestEntryScript(t *testing.T) {
	u := unit{name: "import", parallelism: 3, executor: map[string]any{"executor": "constant-vus", "vus": 3, "duration": "1m0s"}}
	tests := []struct {
		name      string
		segmented bool
		unit      unit
		want      []string
	}{
		{
			name:      "an Indexed Job pod picks its segment by completion index",
			segmented: true,
			want: []string{
				`import * as script from "./import.js";`,
				`export * from "./import.js";`,
				// A function rather than a re-export, so that scripts without one load too.
				`export default function (data) {`,
				`const segments = ["0:1/3","1/3:2/3","2/3:1"];`,
				`const sequence = "0,1/3,2/3,1";`,
				`"import": {`,
				`own.executionSegment = segments[Number(index)];`,
			},
		},
		{
			name: "k6-operator passes segments itself",
			want: []string{`const segments = [];`, `const sequence = "";`},
		},
		{
			name: "exec names the function the scenario runs",
			unit: unit{name: "import", parallelism: 1, exec: "checkout", executor: u.executor},
			want: []string{`"exec": "checkout"`, `"executor": "constant-vus"`},
		},
		{
			name:      "fromScript keeps the script's scenarios and counts each one",
			segmented: true,
			unit:      unit{name: "import", parallelism: 2, fromScript: true},
			want: []string{
				`const shape = null;`, `const segments = ["0:1/2","1/2:1"];`,
				`for (const name of Object.keys(own.scenarios || { default: {} })) {`,
				`["http_reqs", "http_req_failed", "iterations"]`,
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			unit := u
			if tt.unit.name != "" {
				unit = tt.unit
			}
			got, err := EntryScript(unit, "import.js", tt.segmented)
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range tt.want {
				if !strings.Contains(got, w) {
					t.Errorf("entry script lacks %s:\n%s", w, got)
				}
			}
		})
	}
}

func TestChildName(t *testing.T) {
	long := strings.Repeat("checkout-soak-", 6)
	tests := []struct {
		name, exp, suffix string
		limit             int
		want              string
	}{
		{name: "short names are kept", exp: "baseline", suffix: "k6-checkout", limit: 63, want: "baseline-k6-checkout"},
		{name: "long names are cut and hashed", exp: long, suffix: "k6-import", limit: 63},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := childName(tt.exp, tt.suffix, tt.limit)
			if len(got) > tt.limit {
				t.Fatalf("childName() = %q, %d characters, over %d", got, len(got), tt.limit)
			}
			if tt.want != "" && got != tt.want {
				t.Fatalf("childName() = %q, want %q", got, tt.want)
			}
			if other := childName(tt.exp, tt.suffix+"x", tt.limit); other == got {
				t.Fatalf("two suffixes gave the same name %q", got)
			}
		})
	}
}
