package main

import (
	"encoding/json"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/load"
	"github.com/perfexp/perfexp/internal/sweep"
)

// What a run costs, before it runs. The load's own times (warm-up, start delays, load shapes)
// are the spec's; what the operator does around them (patching and rolling out the variant,
// starting the setup and teardown Jobs and the load pods, restoring the workloads) takes as
// long as the cluster needs, so it is estimated with the allowances below, which the user can
// change, and bounded by the timeouts the operator enforces.

// allowances are the estimates of the steps a spec does not time.
type allowances struct {
	// Rollout is one rollout of the variant's workloads: once when it is applied, once when
	// the workloads are restored. Runs without a variant patch nothing.
	Rollout planDuration `json:"rollout"`
	// Job is one setup or teardown Job, from creation to its end.
	Job planDuration `json:"job"`
	// Pods is the start of one set of load pods (the warm-up's, the scenarios').
	Pods planDuration `json:"pods"`
	// DefaultOverall is the operator's --default-overall-timeout, which bounds a run that sets
	// no spec.timeouts.overall.
	DefaultOverall planDuration `json:"defaultOverall"`
}

// Set from the wall times of the five studies' short forms on the local 2-core cluster
// (docs/platform.md): with these the planner's environment time is within -7 % to +27 % of
// each study's wall time there (docs/plugin.md, plan). A bisect step's run there (10 s warm-up,
// 20 s load, its image rollouts) held the environment 35-40 s (docs/bisect.md).
func defaultAllowances() allowances {
	return allowances{Rollout: planDuration(10 * time.Second), Job: planDuration(5 * time.Second),
		Pods: planDuration(5 * time.Second), DefaultOverall: planDuration(48 * time.Hour)}
}

// runCost is what one run (one PerfExperiment) costs.
type runCost struct {
	// WarmUp and Load are the spec's: the warm-up, and the longest start delay plus load shape
	// of the scenarios (the measured window).
	WarmUp planDuration `json:"warmUp"`
	Load   planDuration `json:"load"`
	// LoadKnown is false when a fromScript scenario gives no scriptDuration: only the overall
	// timeout bounds it, and Load counts it as nothing.
	LoadKnown bool `json:"loadKnown"`
	// Environment is the estimated time the run holds its environment (queue left to
	// environment restored): Load, WarmUp and the allowances of what it does around them.
	Environment planDuration `json:"environment"`
	// Bound is the longest it may hold it before the operator fails it: the timeouts of every
	// step it has, the load within timeouts.overall.
	Bound planDuration `json:"bound"`
	// Phases are the estimated phases Environment is counted over, as sweep.EnvironmentTime
	// counts a run's status.
	Phases []phaseEstimate `json:"phases"`
}

// costOf is one run's cost. exp has its CRD defaults (timeouts included).
func costOf(exp *perfexpv1alpha1.PerfExperiment, a allowances) (runCost, error) {
	c := runCost{LoadKnown: true}
	var longest time.Duration
	for i := range exp.Spec.Load.Scenarios {
		sc := &exp.Spec.Load.Scenarios[i]
		d := load.ShapeDuration(sc)
		if sc.FromScript && sc.ScriptDuration == nil {
			c.LoadKnown = false
		}
		if sc.StartDelay != nil {
			d += sc.StartDelay.Duration
		}
		longest = max(longest, d)
	}
	c.Load = planDuration(longest)
	if w := exp.Spec.Load.WarmUp; w != nil {
		c.WarmUp = planDuration(w.Duration.Duration)
	}
	t := timeoutsOf(exp, a)
	overall := t.Overall
	if c.WarmUp+c.Load >= overall {
		return c, fmt.Errorf("the load is planned to take %s (warm-up, start delays and load shapes), as long as or longer than its overall timeout of %s: the operator refuses it before it joins its queue; raise timeouts.overall or shorten the load",
			(c.WarmUp + c.Load).String(), overall.String())
	}
	bound := c.WarmUp + c.Load + t.LoadGrace
	if !c.LoadKnown {
		bound = overall
	}
	variant := patches(exp.Spec.Variant) || exp.Spec.FreshPods != nil
	if variant {
		bound += t.Rollout
	}
	bound += settleOf(exp)
	if exp.Spec.Setup != nil {
		bound += t.Setup
	}
	// Up to the end of the load the overall timeout bounds the run; the restore and the
	// teardown come after.
	bound = min(bound, overall)
	if variant {
		bound += t.Rollout
	}
	if exp.Spec.Teardown != nil {
		bound += t.Teardown
	}
	c.Phases = estimatePhases(exp, c, a)
	c.Bound = bound
	c.Environment = planDuration(sweep.EnvironmentTime(simulated(c.Phases)))
	return c, nil
}

// phaseEstimate is how long a run is expected to spend in one phase.
type phaseEstimate struct {
	Phase    perfexpv1alpha1.Phase `json:"phase"`
	Duration planDuration          `json:"duration"`
}

// estimatePhases lays out a run's phases from leaving the queue to Analyzing: the variant
// applied and rolled out (Preparing), the setup Job, the warm-up and the scenarios (each with
// its pods' start), the restore's rollout and the teardown Job (Restoring).
func estimatePhases(exp *perfexpv1alpha1.PerfExperiment, c runCost, a allowances) []phaseEstimate {
	variant := patches(exp.Spec.Variant) || exp.Spec.FreshPods != nil
	var out []phaseEstimate
	add := func(p perfexpv1alpha1.Phase, d planDuration, on bool) {
		if on {
			out = append(out, phaseEstimate{Phase: p, Duration: d})
		}
	}
	restore := planDuration(0)
	if variant {
		restore += a.Rollout
	}
	if exp.Spec.Teardown != nil {
		restore += a.Job
	}
	prepare := settleOf(exp)
	if variant {
		prepare += a.Rollout
	}
	add(perfexpv1alpha1.PhasePreparing, prepare, prepare > 0)
	add(perfexpv1alpha1.PhaseSettingUp, a.Job, exp.Spec.Setup != nil)
	add(perfexpv1alpha1.PhaseWarmingUp, a.Pods+c.WarmUp, exp.Spec.Load.WarmUp != nil)
	add(perfexpv1alpha1.PhaseRunning, a.Pods+c.Load, true)
	add(perfexpv1alpha1.PhaseRestoring, restore, restore > 0)
	return out
}

// simulated is a run that went through the phases as estimated, as its status would record
// them, so that its environment time is counted as the operator counts a run's.
func simulated(phases []phaseEstimate) *perfexpv1alpha1.PerfExperiment {
	exp := &perfexpv1alpha1.PerfExperiment{}
	at := time.Unix(0, 0).UTC()
	exp.Status.StartTime = &metav1.Time{Time: at}
	for _, p := range phases {
		exp.Status.PhaseHistory = append(exp.Status.PhaseHistory, perfexpv1alpha1.PhaseTransition{Phase: p.Phase, Time: metav1.Time{Time: at}})
		at = at.Add(time.Duration(p.Duration))
	}
	exp.Status.PhaseHistory = append(exp.Status.PhaseHistory, perfexpv1alpha1.PhaseTransition{Phase: perfexpv1alpha1.PhaseAnalyzing, Time: metav1.Time{Time: at}})
	return exp
}

// patches says whether a variant changes anything the operator must roll out and restore.
func patches(v *perfexpv1alpha1.Variant) bool {
	return v != nil && (len(v.Workloads) > 0 || len(v.Patches) > 0 || v.Kafka != nil)
}

// stepTimeouts are a run's timeouts with their CRD defaults (the planner admits every spec with
// a timeouts object, so the schema fills in what it leaves out) and the operator's default
// overall timeout.
type stepTimeouts struct {
	Rollout, Setup, Teardown, LoadGrace, Overall planDuration
}

func timeoutsOf(exp *perfexpv1alpha1.PerfExperiment, a allowances) stepTimeouts {
	t := stepTimeouts{Overall: a.DefaultOverall}
	tt := exp.Spec.Timeouts
	if tt == nil {
		return t
	}
	get := func(d *metav1.Duration) planDuration {
		if d == nil {
			return 0
		}
		return planDuration(d.Duration)
	}
	t.Rollout, t.Setup, t.Teardown, t.LoadGrace = get(tt.Rollout), get(tt.Setup), get(tt.Teardown), get(tt.LoadGrace)
	if o := get(tt.Overall); o > 0 {
		t.Overall = o
	}
	return t
}

// planDuration is a duration that reads as one ("1m30s") in JSON and YAML.
type planDuration time.Duration

func (d planDuration) String() string { return time.Duration(d).Round(time.Second).String() }

func (d planDuration) MarshalJSON() ([]byte, error) { return json.Marshal(d.String()) }

func (d *planDuration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	v, err := time.ParseDuration(s)
	*d = planDuration(v)
	return err
}

// Type and Set make a planDuration a flag value.
func (d *planDuration) Type() string { return "duration" }

func (d *planDuration) Set(s string) error {
	v, err := time.ParseDuration(s)
	if err != nil {
		return err
	}
	if v < 0 {
		return fmt.Errorf("%s is negative", s)
	}
	*d = planDuration(v)
	return nil
}

// settleOf is spec.settle: the run waits that long in Preparing after its rollout (or after
// Preparing began when nothing rolls), whatever the estimate of the rollout.
func settleOf(exp *perfexpv1alpha1.PerfExperiment) planDuration {
	if exp.Spec.Settle == nil || exp.Spec.Settle.Duration < 0 {
		return 0
	}
	return planDuration(exp.Spec.Settle.Duration)
}
