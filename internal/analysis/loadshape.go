package analysis

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/analysis/result"
)

// ScriptHash is the hex SHA-256 of a script's text.
func ScriptHash(text string) string {
	sum := sha256.Sum256([]byte(text))
	return hex.EncodeToString(sum[:])
}

// LoadShape is the load shape of every scenario of a load, in the declared order. scripts
// maps a scenario name to its script's text where the caller could read it; inline scripts
// are hashed from the spec.
func LoadShape(l perfexpv1alpha1.Load, scripts map[string]string) []result.ScenarioShape {
	out := make([]result.ScenarioShape, 0, len(l.Scenarios))
	for _, s := range l.Scenarios {
		sh := result.ScenarioShape{Name: s.Name, Parallelism: max(s.Parallelism, 1)}
		switch {
		case s.ArrivalRate != nil:
			a := s.ArrivalRate
			sh.Executor, sh.Rate, sh.Duration, sh.PreAllocatedVUs = "constant-arrival-rate", a.Rate, a.Duration.Duration.String(), a.PreAllocatedVUs
			sh.TimeUnit = "1s"
			if a.TimeUnit != nil {
				sh.TimeUnit = a.TimeUnit.Duration.String()
			}
			if a.MaxVUs != nil {
				sh.MaxVUs = *a.MaxVUs
			}
		case len(s.Stages) > 0:
			sh.Executor = "ramping-vus"
			parts := make([]string, 0, len(s.Stages))
			for _, st := range s.Stages {
				parts = append(parts, fmt.Sprintf("%s:%d", st.Duration.Duration, st.Target))
			}
			sh.Stages = strings.Join(parts, ",")
		default:
			sh.Executor = "constant-vus"
			if s.VUs != nil {
				sh.VUs = *s.VUs
			}
			if s.Duration != nil {
				sh.Duration = s.Duration.Duration.String()
			}
		}
		if s.StartDelay != nil && s.StartDelay.Duration > 0 {
			sh.StartDelay = s.StartDelay.Duration.String()
		}
		switch {
		case s.Script.Inline != "":
			sh.ScriptHash = ScriptHash(s.Script.Inline)
		case scripts != nil:
			if text, ok := scripts[s.Name]; ok {
				sh.ScriptHash = ScriptHash(text)
			}
		}
		out = append(out, sh)
	}
	return out
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
