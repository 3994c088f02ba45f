package analysis

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
)

// ThresholdResult is one k6 threshold of the script as the runners' end-of-test summaries
// report it: crossed when it failed in at least one runner of the measured load.
type ThresholdResult struct {
	// Metric is the k6 metric the threshold is declared on (http_req_duration, or with tags
	// http_req_duration{scenario:browse}).
	Metric string `json:"metric"`
	// Expression is the threshold as the script declares it (p(95)<500).
	Expression string `json:"expression"`
	// Crossed is true when the threshold failed in a runner.
	Crossed bool `json:"crossed"`
	// Scenarios are the scenarios whose runners reported it crossed.
	Scenarios []string `json:"scenarios,omitempty"`
}

// Name is the threshold as people write it: metric, then expression.
func (t ThresholdResult) Name() string { return t.Metric + " " + t.Expression }

// GateInput is what decides a verdict beside the objectives: k6's thresholds, and the
// comparison's headline when regressions fail.
type GateInput struct {
	// ThresholdsCrossed is true when a runner of the measured load exited with k6's code 99.
	ThresholdsCrossed bool
	// Thresholds are the thresholds the runners' summaries name (nil when none were kept).
	Thresholds []ThresholdResult
	// Headline is the comparison's headline change; empty without a baseline.
	Headline perfexpv1alpha1.Change
	// FailOnRegression makes a Regressed headline fail the verdict.
	FailOnRegression bool
}

// Gate is the verdict once k6's thresholds and, when asked for, the comparison's headline
// have had their say, with a reason per cause of a failure. A crossed threshold fails a run
// as k6's own exit code 99 fails it; a Regressed headline fails it only with
// FailOnRegression. Invalid results stay Invalid (nothing measured can be trusted, and a
// pipeline fails on Invalid too); an objective's Fail stays Fail, with the gate's reasons
// added.
func Gate(v perfexpv1alpha1.Verdict, in GateInput) (perfexpv1alpha1.Verdict, []string) {
	var reasons []string
	named := 0
	for _, t := range in.Thresholds {
		if !t.Crossed {
			continue
		}
		named++
		where := ""
		if len(t.Scenarios) > 0 {
			where = " (scenario " + strings.Join(t.Scenarios, ", ") + ")"
		}
		reasons = append(reasons, fmt.Sprintf("k6 threshold crossed: %s%s", t.Name(), where))
	}
	if in.ThresholdsCrossed && named == 0 {
		reasons = append(reasons, "k6 reported crossed thresholds (exit code 99); the runners' summaries do not say which")
	}
	if in.FailOnRegression && in.Headline == perfexpv1alpha1.ChangeRegressed {
		reasons = append(reasons, "the comparison's headline is Regressed and failOnRegression is set")
	}
	if len(reasons) > 0 && (v == perfexpv1alpha1.VerdictPass || v == perfexpv1alpha1.VerdictInconclusive || v == "") {
		v = perfexpv1alpha1.VerdictFail
	}
	return v, reasons
}

// ApplyGate sets the result's thresholds, verdict and verdict reasons from Gate.
func ApplyGate(r *Result, in GateInput) {
	r.Thresholds = in.Thresholds
	if r.Comparison != nil && in.Headline == "" {
		in.Headline = r.Comparison.Change
	}
	r.Verdict, r.VerdictReasons = Gate(r.Verdict, in)
}

// FailOnRegression is the effective "regression fails" setting: the analysis's own when set,
// else the operator's default.
func FailOnRegression(a *perfexpv1alpha1.Analysis, operatorDefault bool) bool {
	if a != nil && a.FailOnRegression != nil {
		return *a.FailOnRegression
	}
	return operatorDefault
}

// ParseThresholds reads the thresholds of the runners' k6 summaries, keyed
// <scenario>-<runner index>.json, and merges them per metric and expression. Summaries of the
// warm-up (scenario "warm-up") are left out: warm-up is not measured. A summary holds a
// metric's thresholds either as --summary-export writes them (expression: failed) or as
// handleSummary's data does (expression: {"ok": passed}).
func ParseThresholds(summaries map[string]string) []ThresholdResult {
	type key struct{ metric, expr string }
	merged := map[key]*ThresholdResult{}
	for name, doc := range summaries {
		scenario := strings.TrimSuffix(name, ".json")
		if i := strings.LastIndex(scenario, "-"); i > 0 {
			scenario = scenario[:i]
		}
		if scenario == "warm-up" {
			continue
		}
		var s struct {
			Metrics map[string]struct {
				Thresholds map[string]json.RawMessage `json:"thresholds"`
			} `json:"metrics"`
		}
		if json.Unmarshal([]byte(doc), &s) != nil {
			continue
		}
		for metric, m := range s.Metrics {
			for expr, raw := range m.Thresholds {
				crossed, ok := thresholdFailed(raw)
				if !ok {
					continue
				}
				k := key{metric, expr}
				t := merged[k]
				if t == nil {
					t = &ThresholdResult{Metric: metric, Expression: expr}
					merged[k] = t
				}
				if crossed {
					t.Crossed = true
					if !slices.Contains(t.Scenarios, scenario) {
						t.Scenarios = append(t.Scenarios, scenario)
					}
				}
			}
		}
	}
	out := make([]ThresholdResult, 0, len(merged))
	for _, t := range merged {
		sort.Strings(t.Scenarios)
		out = append(out, *t)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Metric != out[j].Metric {
			return out[i].Metric < out[j].Metric
		}
		return out[i].Expression < out[j].Expression
	})
	if len(out) == 0 {
		return nil
	}
	return out
}

// thresholdFailed reads one threshold's outcome in either summary format.
func thresholdFailed(raw json.RawMessage) (failed, ok bool) {
	var b bool
	if json.Unmarshal(raw, &b) == nil {
		return b, true
	}
	var o struct {
		OK *bool `json:"ok"`
	}
	if json.Unmarshal(raw, &o) == nil && o.OK != nil {
		return !*o.OK, true
	}
	return false, false
}
