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
	// fromScript runs the script's own execution options instead of executor.
	fromScript bool
	// exec is the function of the script the executor runs; empty for the default function.
	exec string
}

func scenarioUnits(exp *perfexpv1alpha1.PerfExperiment) []unit {
	units := make([]unit, 0, len(exp.Spec.Load.Scenarios))
	for i := range exp.Spec.Load.Scenarios {
		sc := &exp.Spec.Load.Scenarios[i]
		u := unit{name: sc.Name, sc: sc, executor: Executor(sc), parallelism: max(sc.Parallelism, 1), fromScript: sc.FromScript, exec: sc.Exec}
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
		name: WarmUpName, sc: sc, parallelism: 1, exec: orDefault(w.Exec, sc.Exec),
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
// script exports (default function, setup, teardown, named exec functions) and replaces only the
// script's execution options with one k6 scenario named after the unit, so k6's own scenario tag
// carries the perfexp scenario name; with fromScript it keeps the script's own execution options
// instead. When segmented is true it picks the pod's execution segment from
// JOB_COMPLETION_INDEX, which the Indexed Job sets in each pod.
//
// A wrapper is used rather than k6's --vus/--duration/--stage flags because those flags run
// the script's default scenario, named "default", whose system tag would overwrite the
// scenario tag on every sample; and because arrival rates have no flag at all.
//
// The wrapper's handleSummary runs the script's own and adds perfexp's summary to what it
// prints, as framed lines (see SummaryFrame) the script's output cannot be mistaken for.
func EntryScript(u unit, scriptKey string, segmented bool) (string, error) {
	var shape []byte
	if u.fromScript {
		shape = []byte("null")
	} else {
		executor := u.executor
		if u.exec != "" {
			executor = withExec(executor, u.exec)
		}
		var err error
		if shape, err = json.MarshalIndent(map[string]any{u.name: executor}, "", "  "); err != nil {
			return "", err
		}
	}
	keys, _ := json.Marshal(executionKeys)
	path, _ := json.Marshal("./" + scriptKey)
	var segs, seq []byte
	segs, seq = []byte("[]"), []byte(`""`)
	if s, q := ExecutionSegments(int(u.parallelism)); segmented && len(s) > 1 {
		segs, _ = json.Marshal(s)
		seq, _ = json.Marshal(q)
	}
	what := "only its\n// execution options are replaced by the experiment's load shape."
	if u.fromScript {
		what = "its own\n// execution options run as declared, split over the runner pods."
	}
	var b strings.Builder
	fmt.Fprintf(&b, `// Generated by perfexp for scenario %q. The script beside it runs unchanged: %s
import * as script from %s;
export * from %s;

// A function, not a re-export, so that a script with only named exec functions loads too.
export default function (data) {
  if (typeof script.default !== 'function') {
    throw new Error('the script exports no default function; name the function to run with exec');
  }
  return script.default(data);
}

const shape = %s;
const segments = %s;
const sequence = %s;

const own = Object.assign({}, script.options);
delete own.executionSegment;
delete own.executionSegmentSequence;
if (shape !== null) {
  for (const key of %s) {
    delete own[key];
  }
  own.scenarios = shape;
} else {
  // Every k6 scenario's counts in the summary, as thresholds without conditions declare them.
  own.thresholds = Object.assign({}, own.thresholds);
  for (const name of Object.keys(own.scenarios || { default: {} })) {
    for (const metric of %s) {
      const key = metric + '{scenario:' + name + '}';
      own.thresholds[key] = own.thresholds[key] || [];
    }
  }
}
const index = __ENV.JOB_COMPLETION_INDEX;
if (segments.length > 1 && index !== undefined && index !== '') {
  own.executionSegment = segments[Number(index)];
  own.executionSegmentSequence = sequence;
}
export const options = own;
%s`, u.name, what, path, path, shape, segs, seq, keys, perScenarioMetrics, summaryWrapper)
	return b.String(), nil
}

// perScenarioMetrics are the metrics whose per-k6-scenario counts the summary of a script that
// runs its own scenarios carries.
const perScenarioMetrics = `["http_reqs", "http_req_failed", "iterations"]`

// withExec is a copy of a k6 scenario configuration that runs the named function.
func withExec(executor map[string]any, fn string) map[string]any {
	out := make(map[string]any, len(executor)+1)
	for k, v := range executor {
		out[k] = v
	}
	out["exec"] = fn
	return out
}

// SummaryFrame starts every line of perfexp's own summary in a k6 log. The entry script's
// handleSummary prints the summary as compact JSON cut into chunks, one a line:
// "perfexp-summary/v1 <run> <i> <n> <chunk>". Lines are short, so a container runtime never
// splits them; every line says where it belongs, so the script's own output (its handleSummary's
// stdout and stderr, console lines) may come before, after or between them.
const SummaryFrame = "perfexp-summary/v1"

// summaryWrapper is the entry script's handleSummary. Without a handleSummary of the script's
// own, or when it returns nothing or throws, it returns nothing: k6 prints its text summary and
// writes the --summary-export JSON, and nothing of the script reaches standard output. With one, it adds perfexp's summary (the
// --summary-export format) after the script's own output.
const summaryWrapper = `
function perfexpSummary(data) {
  const metrics = {};
  for (const [name, metric] of Object.entries(data.metrics || {})) {
    const m = Object.assign({}, metric.values);
    if (metric.type === 'rate' && m.rate !== undefined) {
      m.value = m.rate;
      delete m.rate;
    }
    if (metric.thresholds && Object.keys(metric.thresholds).length > 0) {
      m.thresholds = {};
      for (const [t, v] of Object.entries(metric.thresholds)) {
        m.thresholds[t] = !v.ok;
      }
    }
    metrics[name] = m;
  }
  const text = JSON.stringify({ metrics: metrics });
  const size = 2000;
  const n = Math.max(1, Math.ceil(text.length / size));
  const run = Date.now().toString(36) + Math.random().toString(36).slice(2, 8);
  let out = '\n';
  for (let i = 0; i < n; i++) {
    out += '` + SummaryFrame + ` ' + run + ' ' + i + ' ' + n + ' ' + text.slice(i * size, (i + 1) * size) + '\n';
  }
  return out;
}

export function handleSummary(data) {
  if (typeof script.handleSummary !== 'function') {
    return undefined;
  }
  let result;
  try {
    result = script.handleSummary(data);
  } catch (e) {
    console.error('handleSummary of the script failed: ' + e);
  }
  if (result === undefined || result === null) {
    // As when the script has none: k6's own text summary, and the --summary-export JSON.
    return undefined;
  }
  result = Object.assign({}, result);
  // One string for each stream, so its parts reach the log in this order.
  for (const stream of ['stdout', 'stderr']) {
    if (result[stream] === undefined || typeof result[stream] === 'string') {
      result[stream] = (result[stream] || '') + perfexpSummary(data);
      return result;
    }
  }
  console.error('perfexp could not add its summary: handleSummary wrote bytes to both stdout and stderr');
  return result;
}
`
