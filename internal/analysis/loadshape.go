package analysis

import (
	"fmt"
	"strings"

	"github.com/perfexp/perfexp/internal/analysis/result"
)

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
