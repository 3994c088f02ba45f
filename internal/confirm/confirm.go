// Package confirm turns an experiment's spec.analysis.confirm into the PerfSweep that runs its
// baseline and its variant again, and reads that sweep's answer back into the experiment's
// status. It is pure: no client, no clock. The sweep itself (blocks in a random order, one run
// at a time through the queue, the sequential looks and their stopping rule) is the
// sequential PerfSweep's, unchanged: a confirmation is a sequential sweep of one arm.
package confirm

import (
	"errors"
	"fmt"
	"math"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/judge"
	"github.com/perfexp/perfexp/internal/result"
	"github.com/perfexp/perfexp/internal/sweep"
)

// Arm is the name of the confirmation sweep's arm that runs the experiment's variant; the
// other arm is the sweep's baseline, which runs the baseline experiment's variant.
const Arm = "variant"

// DefaultMaxRepeats is the budget in blocks when confirm.maxRepeats is not set (the CRD
// defaults it too): the design docs/comparison.md's simulation table measures.
const DefaultMaxRepeats = 10

// firstLook is the blocks run before the first look, as in the simulated design.
const firstLook = 3

// Wanted reports whether the experiment asks for confirmation.
func Wanted(exp *perfexpv1alpha1.PerfExperiment) bool {
	a := exp.Spec.Analysis
	return a != nil && a.Confirm != nil && exp.Spec.Baseline != nil
}

// Decisive reports whether a comparison headline settles the question (Regressed, Improved or
// NoMeaningfulChange), by the sequential sweep's own test.
func Decisive(c perfexpv1alpha1.Change) bool {
	return judge.Decisive(&result.Comparison{Change: c})
}

// Needed reports whether an analysed experiment that asks for confirmation must run again:
// mode Auto, and its single run's headline is not decisive (or there is none).
func Needed(exp *perfexpv1alpha1.PerfExperiment) bool {
	if !Wanted(exp) {
		return false
	}
	c := exp.Status.Comparison
	return c == nil || !Decisive(c.Change)
}

// Refusal says why an experiment that needs a confirmation cannot have one, before anything is
// created; empty when it can. A run whose own results are Invalid is not confirmed: its
// repeats would most likely be Invalid too, and the budget would be spent on runs that compare
// nothing. An experiment without a variant has no arm to run against the baseline.
func Refusal(exp *perfexpv1alpha1.PerfExperiment) string {
	switch {
	case exp.Status.Verdict == perfexpv1alpha1.VerdictInvalid:
		return "the run's own results are Invalid (see ObjectivesMet and the report), so running it again would most likely compare nothing; " +
			"fix what made it invalid and apply it again"
	case exp.Spec.Variant == nil:
		return "the experiment has no spec.variant, so there is no arm to run against the baseline; " +
			"swap the two (the changed configuration as the experiment, the environment as it is as its baseline) to confirm"
	}
	return ""
}

// SweepName is the name of the experiment's confirmation sweep, <experiment>-confirm.
func SweepName(exp *perfexpv1alpha1.PerfExperiment) string {
	return perfexpv1alpha1.ChildName(exp.Name, "confirm", 48)
}

// Sweep is the sequential PerfSweep that confirms exp against baseline: the experiment's
// template (target, setup, teardown, load, analysis without confirm, timeouts) in its queue at
// its priority, the baseline experiment's variant as the sweep's baseline and exp's variant as
// its one arm, 3 blocks before the first look and one block per look after, within
// confirm.maxRepeats and confirm.maxDuration. The note says what had to be adapted (δ rounded
// to a whole percent); the error why no confirmation can be run. The caller sets the owner.
func Sweep(exp, baseline *perfexpv1alpha1.PerfExperiment) (*perfexpv1alpha1.PerfSweep, string, error) {
	if !Wanted(exp) {
		return nil, "", errors.New("the experiment does not ask for confirmation (spec.analysis.confirm with spec.baseline)")
	}
	if why := Refusal(exp); why != "" {
		return nil, "", errors.New(why)
	}
	if baseline.TargetNamespace() != exp.TargetNamespace() {
		return nil, "", fmt.Errorf("the baseline %s ran against namespace %s and the experiment against %s; a confirmation runs both in one environment",
			baseline.Name, baseline.TargetNamespace(), exp.TargetNamespace())
	}
	if why := rightsProblem(exp, baseline); why != "" {
		return nil, "", errors.New(why)
	}
	c := exp.Spec.Analysis.Confirm
	budget := int32(DefaultMaxRepeats)
	if c.MaxRepeats > 0 {
		budget = c.MaxRepeats
	}
	analysis := exp.Spec.Analysis.DeepCopy()
	analysis.Confirm = nil
	delta, note := wholePercent(*analysis)

	sw := &perfexpv1alpha1.PerfSweep{
		ObjectMeta: metav1.ObjectMeta{Namespace: exp.Namespace, Name: SweepName(exp)},
		Spec: perfexpv1alpha1.PerfSweepSpec{
			Queue:    exp.QueueName(),
			Priority: exp.Spec.Priority,
			Template: perfexpv1alpha1.SweepTemplate{
				TargetNamespace: exp.Spec.TargetNamespace,
				Setup:           exp.Spec.Setup.DeepCopy(),
				Teardown:        exp.Spec.Teardown.DeepCopy(),
				Load:            *exp.Spec.Load.DeepCopy(),
				Analysis:        analysis,
				Timeouts:        exp.Spec.Timeouts.DeepCopy(),
				Settle:          exp.Spec.Settle.DeepCopy(),
			},
			Baseline:                   &perfexpv1alpha1.SweepBaseline{Variant: baseline.Spec.Variant.DeepCopy()},
			Arms:                       []perfexpv1alpha1.SweepArm{{Name: Arm, Variant: exp.Spec.Variant.DeepCopy()}},
			Repeats:                    min(firstLook, budget),
			Order:                      perfexpv1alpha1.SweepOrderRandomized,
			Sequential:                 &perfexpv1alpha1.SweepSequential{MaxRepeats: budget, MaxDuration: c.MaxDuration.DeepCopy()},
			MinMeaningfulChangePercent: delta,
		},
	}
	return sw, note, nil
}

// Note says what the confirmation of exp had to adapt (δ rounded to a whole percent); empty when
// nothing.
func Note(exp *perfexpv1alpha1.PerfExperiment) string {
	if exp.Spec.Analysis == nil {
		return ""
	}
	_, note := wholePercent(*exp.Spec.Analysis)
	return note
}

// wholePercent is the experiment's δ as a sweep takes it, a whole percent from 1 to 99, with a
// note when it had to be rounded.
func wholePercent(a perfexpv1alpha1.Analysis) (int32, string) {
	o, _ := judge.OptionsFor(a)
	v := o.MinChangePercent
	r := min(max(math.Round(v), 1), 99)
	if r != v {
		return int32(r), fmt.Sprintf("the minimum meaningful change %g%% was rounded to %g%% (a sweep takes whole percents)", v, r)
	}
	return int32(r), ""
}

// Outcome is what an ended confirmation sweep says about the experiment.
type Outcome struct {
	// Confirmation is the experiment's status.confirmation.
	Confirmation perfexpv1alpha1.Confirmation
	// Status, Reason and Message are the experiment's Confirmed condition.
	Status  metav1.ConditionStatus
	Reason  string
	Message string
	// FailVerdict is set when the sweep's verdict is Fail: its arm Regressed and
	// failOnRegression is in force, as it would fail the experiment's own verdict.
	FailVerdict bool
}

// Read reads an ended confirmation sweep (its status and its runs) at now.
func Read(sw *perfexpv1alpha1.PerfSweep, runs []perfexpv1alpha1.PerfExperiment, now time.Time) Outcome {
	c := Progress(sw, runs)
	c.Elapsed = &metav1.Duration{Duration: now.Sub(sw.CreationTimestamp.Time).Round(time.Second)}
	for _, a := range sw.Status.Arms {
		if a.Name == Arm {
			c.Change, c.Message = a.Change, a.Message
		}
	}
	c.ReportRef = sw.Status.ReportRef.DeepCopy()
	o := Outcome{Confirmation: c, FailVerdict: sw.Status.Verdict == perfexpv1alpha1.VerdictFail}
	took := fmt.Sprintf("%d blocks, %d runs, %s of environment time", c.Repeats, c.Runs, c.EnvironmentTime.Duration)
	switch {
	case sw.Status.Phase != perfexpv1alpha1.SweepSucceeded:
		o.Status, o.Reason = metav1.ConditionFalse, perfexpv1alpha1.ReasonConfirmationFailed
		o.Message = fmt.Sprintf("the confirmation sweep %s ended %s (%s): %s", sw.Name, sw.Status.Phase, took, sw.Status.Message)
	case Decisive(c.Change):
		o.Status, o.Reason = metav1.ConditionTrue, perfexpv1alpha1.ReasonDecisive
		o.Message = fmt.Sprintf("%s after %s; %s", c.Change, took, c.Message)
	default:
		o.Status, o.Reason = metav1.ConditionFalse, perfexpv1alpha1.ReasonBudgetSpent
		o.Message = fmt.Sprintf("still %s after %s: %s", orUnknown(c.Change), took, c.StopReason)
	}
	return o
}

// Progress is the confirmation so far: the blocks planned, the runs ended and the environment
// time they took.
func Progress(sw *perfexpv1alpha1.PerfSweep, runs []perfexpv1alpha1.PerfExperiment) perfexpv1alpha1.Confirmation {
	c := perfexpv1alpha1.Confirmation{Sweep: sw.Name, Runs: sw.Status.Done, EnvironmentTime: &metav1.Duration{Duration: EnvironmentTime(runs)}}
	c.Repeats = sw.Spec.Repeats
	if st := sw.Status.Sequential; st != nil {
		c.Repeats, c.StopReason = st.Repeats, st.StopReason
	}
	return c
}

// EnvironmentTime sums the time each run held the environment (sweep.EnvironmentTime: from
// leaving the queue to the restored environment), to the second.
func EnvironmentTime(runs []perfexpv1alpha1.PerfExperiment) time.Duration {
	var total time.Duration
	for i := range runs {
		total += sweep.EnvironmentTime(&runs[i])
	}
	return total.Round(time.Second)
}

// LabelValue is the value of the perfexp.dev/sweep label on the confirmation sweep's runs.
func LabelValue(sw *perfexpv1alpha1.PerfSweep) string { return sweep.LabelValue(sw.Name) }

func orUnknown(c perfexpv1alpha1.Change) perfexpv1alpha1.Change {
	if c == "" {
		return perfexpv1alpha1.ChangeUnknown
	}
	return c
}
