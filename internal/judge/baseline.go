package judge

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/result"
)

// Baseline is a baseline run as the controller found it.
type Baseline struct {
	// Name of the baseline experiment.
	Name string
	// Problem, when set, says why the baseline cannot be used (not found, not succeeded, ...).
	Problem string
	// TestID, Start, WarmUpEnd and End locate its samples.
	TestID                string
	Start, WarmUpEnd, End time.Time
	// Scenarios are its declared scenario names.
	Scenarios []string
	// LoadShape is its load shape from its spec, for a baseline whose results do not record
	// one (older than this field).
	LoadShape []result.ScenarioShape
	// Result is its full result (from its report) or what its status holds.
	Result *result.Result
}

// shapeDifference says how two load shapes differ, "" when they match. Scenario names are
// checked elsewhere; a script hash counts only when both runs know theirs.
func shapeDifference(mine, theirs []result.ScenarioShape) string {
	if len(mine) == 0 || len(theirs) == 0 {
		return ""
	}
	byName := map[string]result.ScenarioShape{}
	for _, s := range theirs {
		byName[s.Name] = s
	}
	var diffs []string
	for _, m := range mine {
		t, ok := byName[m.Name]
		if !ok {
			continue
		}
		field := func(name string, a, b any) {
			if a != b {
				diffs = append(diffs, fmt.Sprintf("scenario %s: %s %v here, %v in the baseline", m.Name, name, orDash(a), orDash(b)))
			}
		}
		field("executor", m.Executor, t.Executor)
		field("vus", m.VUs, t.VUs)
		field("duration", m.Duration, t.Duration)
		field("stages", m.Stages, t.Stages)
		field("arrival rate", m.Rate, t.Rate)
		field("time unit", m.TimeUnit, t.TimeUnit)
		field("preAllocatedVUs", m.PreAllocatedVUs, t.PreAllocatedVUs)
		field("maxVUs", m.MaxVUs, t.MaxVUs)
		field("parallelism", m.Parallelism, t.Parallelism)
		field("start delay", m.StartDelay, t.StartDelay)
		if m.ScriptHash != "" && t.ScriptHash != "" && m.ScriptHash != t.ScriptHash {
			diffs = append(diffs, fmt.Sprintf("scenario %s: the script differs (sha256 %.12s here, %.12s in the baseline)", m.Name, m.ScriptHash, t.ScriptHash))
		}
	}
	return strings.Join(diffs, "; ")
}

func orDash(v any) any {
	switch x := v.(type) {
	case string:
		if x == "" {
			return "-"
		}
	case int32:
		if x == 0 {
			return "-"
		}
	}
	return v
}

// BaselineProblem says why a baseline cannot be compared with, or "": it is not there, it is
// not Valid (fast 404s are not fast responses), it ran other scenarios, or it ran them with
// another load shape.
func BaselineProblem(r *result.Result, b *Baseline) string {
	switch {
	case b.Problem != "":
		return b.Problem
	case b.Result == nil:
		return fmt.Sprintf("baseline %s has no results", b.Name)
	case b.Result.Validity != perfexpv1alpha1.Valid:
		why := ""
		if len(b.Result.InvalidReasons) > 0 {
			why = ": " + strings.Join(b.Result.InvalidReasons, "; ")
		}
		return fmt.Sprintf("baseline %s is not valid (%s)%s", b.Name, orNone(string(b.Result.Validity)), why)
	}
	mine, theirs := scenarioNames(r.Scenarios), slices.Clone(b.Scenarios)
	if len(theirs) == 0 {
		theirs = scenarioNames(b.Result.Scenarios)
	}
	sort.Strings(theirs)
	if !slices.Equal(mine, theirs) {
		return fmt.Sprintf("baseline %s ran the scenarios [%s], this experiment [%s]", b.Name, strings.Join(theirs, ", "), strings.Join(mine, ", "))
	}
	shape := b.Result.LoadShape
	if len(shape) == 0 {
		shape = b.LoadShape
	}
	if d := shapeDifference(r.LoadShape, shape); d != "" {
		return fmt.Sprintf("baseline %s ran another load shape: %s", b.Name, d)
	}
	return ""
}

func orNone(s string) string {
	if s == "" {
		return "no validity recorded"
	}
	return s
}

func scenarioNames(ss []result.ScenarioResult) []string {
	out := make([]string, 0, len(ss))
	for _, s := range ss {
		out = append(out, s.Name)
	}
	sort.Strings(out)
	return out
}
