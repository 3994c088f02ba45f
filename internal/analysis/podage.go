package analysis

import (
	"fmt"
	"time"

	"github.com/perfexp/perfexp/internal/result"
)

// PodAge is what the run did to the age of its pods before its load: the report states it, so
// a comparison of a run on fresh pods with one on pods as found is seen as such.
type PodAge struct {
	// FreshPods is the number of workload selectors of spec.freshPods: the run rolled them
	// whether or not its variant changes them.
	FreshPods int
	// Variant is true when the run has a variant.
	Variant bool
	// RolledOutAt is when every rollout of the run (variant and freshPods) was found finished;
	// zero when nothing rolled.
	RolledOutAt time.Time
	// Settle is spec.settle, and Settled how long the run actually left the environment alone
	// before its setup or load (from the rollout's end, or from the start of Preparing).
	Settle, Settled time.Duration
}

// podAgeNote says in one sentence on what pods the run ran, counted from the load's start.
func podAgeNote(p PodAge, loadStart time.Time) string {
	var s string
	switch {
	case !p.RolledOutAt.IsZero() && p.FreshPods > 0:
		s = fmt.Sprintf("pod age: the workloads of spec.freshPods (and any the variant changes) ran on pods created by a rollout that finished %s before the load began; a baseline rolled the same way runs on pods of the same age",
			seconds(loadStart.Sub(p.RolledOutAt)))
	case !p.RolledOutAt.IsZero():
		s = fmt.Sprintf("pod age: the workloads the variant changes ran on pods created by its rollout, which finished %s before the load began; the others ran on the pods as found",
			seconds(loadStart.Sub(p.RolledOutAt)))
	case p.FreshPods > 0:
		s = "pod age: spec.freshPods chose workloads, but no rollout was recorded; the run may have run on the pods as found"
	default:
		s = "pod age: the run ran on the pods as found (nothing rolled them; spec.freshPods, or a sweep's podAge: Equal, rolls them as a variant's rollout does)"
	}
	if p.Settle > 0 {
		s += fmt.Sprintf("; the environment was left alone for %s before it (spec.settle %s)", seconds(p.Settled), seconds(p.Settle))
	}
	return s
}

func seconds(d time.Duration) string {
	return fmt.Sprintf("%.0f s", max(0, d.Seconds()))
}

// podAgeResult is the result's record of the pods' age, counted from the load's start.
func podAgeResult(p PodAge, loadStart time.Time) *result.PodAge {
	out := &result.PodAge{FreshPods: p.FreshPods > 0}
	if !p.RolledOutAt.IsZero() {
		s := max(0, loadStart.Sub(p.RolledOutAt).Seconds())
		out.RolledSecondsBeforeLoad = &s
	}
	if p.Settle > 0 {
		out.SettledSeconds = p.Settled.Seconds()
	}
	return out
}

// podAgeMismatch says, for a comparison, when one side ran on freshly rolled pods and the other
// on pods as found: the comparison then holds the difference in pod age. "" when both sides
// match or the baseline recorded nothing (a result older than the record).
func podAgeMismatch(mine, baseline *result.PodAge) string {
	if mine == nil || baseline == nil {
		return ""
	}
	rolled, baseRolled := mine.RolledSecondsBeforeLoad != nil, baseline.RolledSecondsBeforeLoad != nil
	switch {
	case rolled && !baseRolled:
		return "pod age differs: this run's rolled workloads ran on fresh pods and its baseline on the pods as found, so the comparison holds the difference in pod age; give the baseline spec.freshPods naming the workloads this variant changes (docs/variants.md)"
	case !rolled && baseRolled:
		return "pod age differs: the baseline ran on freshly rolled pods and this run on the pods as found, so the comparison holds the difference in pod age"
	}
	return ""
}
