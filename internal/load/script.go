package load

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
)

// WarmUpName names the warm-up's runner, its status entry and its samples' scenario tag.
const WarmUpName = "warm-up"

// EntryKey is the ConfigMap key of the generated entry script k6 runs. It wraps the user's
// script, which is copied unchanged beside it.
const EntryKey = "perfexp-run.js"

// InlineScriptKey is the key under which an inline script is stored.
const InlineScriptKey = "script.js"

// executionKeys are the script options that decide how much load k6 makes. The experiment's
// load shape replaces them; every other option of the script (thresholds, tags, http settings)
// is kept.
var executionKeys = []string{"vus", "duration", "stages", "iterations", "scenarios", "executionSegment", "executionSegmentSequence"}

// Keys of a k6 scenario's configuration that more than one load shape sets.
const (
	keyExecutor = "executor"
	keyVUs      = "vus"
	keyDuration = "duration"
	keyStages   = "stages"
)

// unit is one k6 run: a scenario, or the warm-up.
type unit struct {
	// name is the scenario's name, or WarmUpName.
	name string
	// sc is the scenario whose script, env, args, image and resources the unit uses.
	sc *perfexpv1alpha1.Scenario
	// executor is the k6 scenario configuration of the load shape.
	executor map[string]any
	// parallelism is the number of k6 pods.
	parallelism int32
	// startDelay is how long after the load's start the unit begins.
	startDelay time.Duration
}

func scenarioUnits(exp *perfexpv1alpha1.PerfExperiment) []unit {
	units := make([]unit, 0, len(exp.Spec.Load.Scenarios))
	for i := range exp.Spec.Load.Scenarios {
		sc := &exp.Spec.Load.Scenarios[i]
		u := unit{name: sc.Name, sc: sc, executor: Executor(sc), parallelism: max(sc.Parallelism, 1)}
		if sc.StartDelay != nil {
			u.startDelay = sc.StartDelay.Duration
		}
		units = append(units, u)
	}
	return units
}

// warmUpUnit is the warm-up as one k6 pod running the chosen scenario's script with the
// warm-up's VUs and duration.
func warmUpUnit(exp *perfexpv1alpha1.PerfExperiment) (unit, bool) {
	w := exp.Spec.Load.WarmUp
	if w == nil || len(exp.Spec.Load.Scenarios) == 0 {
		return unit{}, false
	}
	sc := &exp.Spec.Load.Scenarios[0]
	for i := range exp.Spec.Load.Scenarios {
		if exp.Spec.Load.Scenarios[i].Name == w.Scenario {
			sc = &exp.Spec.Load.Scenarios[i]
		}
	}
	return unit{
		name: WarmUpName, sc: sc, parallelism: 1,
		executor: map[string]any{keyExecutor: "constant-vus", keyVUs: max(w.VUs, 1), keyDuration: k6Duration(w.Duration.Duration)},
	}, true
}

// Executor is the k6 scenario configuration of a scenario's load shape: constant-vus for vus
// with duration, ramping-vus for stages, constant-arrival-rate for arrivalRate.
func Executor(sc *perfexpv1alpha1.Scenario) map[string]any {
	switch {
	case sc.ArrivalRate != nil:
		a := sc.ArrivalRate
		timeUnit := time.Second
		if a.TimeUnit != nil && a.TimeUnit.Duration > 0 {
			timeUnit = a.TimeUnit.Duration
		}
		e := map[string]any{
			keyExecutor: "constant-arrival-rate", "rate": a.Rate, "timeUnit": k6Duration(timeUnit),
			keyDuration: k6Duration(a.Duration.Duration), "preAllocatedVUs": a.PreAllocatedVUs,
		}
		if a.MaxVUs != nil {
			e["maxVUs"] = *a.MaxVUs
		}
		return e
	case len(sc.Stages) > 0:
		stages := make([]map[string]any, 0, len(sc.Stages))
		for _, st := range sc.Stages {
			stages = append(stages, map[string]any{keyDuration: k6Duration(st.Duration.Duration), "target": st.Target})
		}
		return map[string]any{keyExecutor: "ramping-vus", keyStages: stages}
	default:
		var vus int32 = 1
		if sc.VUs != nil {
			vus = *sc.VUs
		}
		var d time.Duration
		if sc.Duration != nil {
			d = sc.Duration.Duration
		}
		return map[string]any{keyExecutor: "constant-vus", keyVUs: vus, keyDuration: k6Duration(d)}
	}
}

// k6Duration writes a duration the way k6 reads it; Go's form ("1m30s") is one of them.
func k6Duration(d time.Duration) string { return d.String() }

// ExecutionSegments splits a test into n equal k6 execution segments: the segment of each
// pod index and the sequence that names all of them. With the same sequence, k6 hands every
// VU and every iteration of the whole test to exactly one segment, so n pods together make
// exactly the declared load.
func ExecutionSegments(n int) (segments []string, sequence string) {
	if n <= 1 {
		return nil, ""
	}
	points := make([]string, n+1)
	for i := 0; i <= n; i++ {
		points[i] = fraction(i, n)
	}
	for i := 0; i < n; i++ {
		segments = append(segments, points[i]+":"+points[i+1])
	}
	return segments, strings.Join(points, ",")
}

func fraction(i, n int) string {
	switch i {
	case 0:
		return "0"
	case n:
		return "1"
	}
	return fmt.Sprintf("%d/%d", i, n)
}

// EntryScript is the generated entry script of a unit. It re-exports everything the user's
// script exports (default function, setup, teardown, handleSummary, named exec functions) and
// replaces only the script's execution options with one k6 scenario named after the unit, so
// k6's own scenario tag carries the perfexp scenario name. When segmented is true it picks the
// pod's execution segment from JOB_COMPLETION_INDEX, which the Indexed Job sets in each pod.
//
// A wrapper is used rather than k6's --vus/--duration/--stage flags because those flags run
// the script's default scenario, named "default", whose system tag would overwrite the
// scenario tag on every sample; and because arrival rates have no flag at all.
func EntryScript(u unit, scriptKey string, segmented bool) (string, error) {
	scenarios := map[string]any{u.name: u.executor}
	spec, err := json.MarshalIndent(scenarios, "", "  ")
	if err != nil {
		return "", err
	}
	keys, _ := json.Marshal(executionKeys)
	path, _ := json.Marshal("./" + scriptKey)
	var segs, seq []byte
	segs, seq = []byte("[]"), []byte(`""`)
	if s, q := ExecutionSegments(int(u.parallelism)); segmented && len(s) > 1 {
		segs, _ = json.Marshal(s)
		seq, _ = json.Marshal(q)
	}
	var b strings.Builder
	fmt.Fprintf(&b, `// Generated by perfexp for scenario %q. The script beside it runs unchanged: only its
// execution options are replaced by the experiment's load shape.
import * as script from %s;
export * from %s;
export { default } from %s;

const shape = %s;
const segments = %s;
const sequence = %s;

const own = Object.assign({}, script.options);
for (const key of %s) {
  delete own[key];
}
own.scenarios = shape;
const index = __ENV.JOB_COMPLETION_INDEX;
if (segments.length > 1 && index !== undefined && index !== '') {
  own.executionSegment = segments[Number(index)];
  own.executionSegmentSequence = sequence;
}
export const options = own;
`, u.name, path, path, path, spec, segs, seq, keys)
	return b.String(), nil
}
