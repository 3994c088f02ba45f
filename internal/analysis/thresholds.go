package analysis

import (
	"encoding/json"
	"slices"
	"sort"
	"strings"

	"github.com/perfexp/perfexp/internal/result"
)

// ParseThresholds reads the thresholds of the runners' k6 summaries, keyed
// <scenario>-<runner index>.json, and merges them per metric and expression. Summaries of the
// warm-up (scenario "warm-up") are left out: warm-up is not measured. A summary holds a
// metric's thresholds either as --summary-export writes them (expression: failed) or as
// handleSummary's data does (expression: {"ok": passed}).
func ParseThresholds(summaries map[string]string) []result.ThresholdResult {
	type key struct{ metric, expr string }
	merged := map[key]*result.ThresholdResult{}
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
					t = &result.ThresholdResult{Metric: metric, Expression: expr}
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
	out := make([]result.ThresholdResult, 0, len(merged))
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
