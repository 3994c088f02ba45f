package analyzer

import (
	"time"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/analysis"
)

// podAgeOf reads from the experiment what it did to its pods' age before the load: the
// workloads it rolled, when their rollout finished, and the settle it waited (from the end of
// the rollout, or from the start of Preparing when nothing rolled, to the end of Preparing).
func podAgeOf(exp *perfexpv1alpha1.PerfExperiment) *analysis.PodAge {
	p := &analysis.PodAge{Variant: exp.Spec.Variant != nil}
	if fp := exp.Spec.FreshPods; fp != nil {
		p.FreshPods = len(fp.Workloads)
	}
	if env := exp.Status.Environment; env != nil && env.RolledOutAt != nil {
		p.RolledOutAt = env.RolledOutAt.Time
	}
	if exp.Spec.Settle != nil {
		p.Settle = exp.Spec.Settle.Duration
	}
	var prepStart, prepEnd time.Time
	h := exp.Status.PhaseHistory
	for i, t := range h {
		if t.Phase == perfexpv1alpha1.PhasePreparing {
			prepStart = t.Time.Time
			if i+1 < len(h) {
				prepEnd = h[i+1].Time.Time
			}
		}
	}
	since := prepStart
	if !p.RolledOutAt.IsZero() {
		since = p.RolledOutAt
	}
	if !since.IsZero() && !prepEnd.IsZero() {
		p.Settled = max(0, prepEnd.Sub(since))
	}
	return p
}
