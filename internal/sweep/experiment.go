package sweep

import (
	"fmt"
	"slices"
	"strconv"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/queue"
)

const (
	annotationEnqueuedAt = queue.AnnotationEnqueuedAt
	annotationSequence   = queue.AnnotationSequence
)

// Experiment is the PerfExperiment of one run: the template with the arm's variant and load,
// in the sweep's queue, compared with the baseline run of the same repeat. The caller sets the
// owner reference.
func (p *Plan) Experiment(s *perfexpv1alpha1.PerfSweep, run Run) (*perfexpv1alpha1.PerfExperiment, error) {
	arm := p.Arm(run.Arm)
	if arm == nil {
		return nil, fmt.Errorf("run %s names arm %s, which the sweep does not have", run.Name, run.Arm)
	}
	t := s.Spec.Template.DeepCopy()
	fresh, err := p.FreshPods(s)
	if err != nil {
		return nil, err
	}
	exp := &perfexpv1alpha1.PerfExperiment{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: s.Namespace,
			Name:      run.Name,
			Labels: map[string]string{
				perfexpv1alpha1.LabelSweep:  LabelValue(s.Name),
				perfexpv1alpha1.LabelArm:    LabelValue(arm.Name),
				perfexpv1alpha1.LabelRepeat: strconv.Itoa(run.Repeat),
			},
			Annotations: orderAnnotations(s, run.Sequence),
		},
		Spec: perfexpv1alpha1.PerfExperimentSpec{
			Queue:           s.Spec.Queue,
			Priority:        s.Spec.Priority,
			TargetNamespace: t.TargetNamespace,
			Setup:           t.Setup,
			Teardown:        t.Teardown,
			Load:            t.Load,
			Analysis:        t.Analysis,
			Timeouts:        t.Timeouts,
			FreshPods:       fresh,
			Settle:          settle(s, fresh),
		},
	}
	if arm.Variant != nil {
		exp.Spec.Variant = arm.Variant.DeepCopy()
		if exp.Spec.Variant.Description == "" {
			exp.Spec.Variant.Description = clip(fmt.Sprintf("sweep %s, arm %s: %s = %s", s.Name, arm.Name, arm.Parameter, arm.Value))
		}
	}
	if arm.Load != nil {
		if _, err := applyLoad(&exp.Spec.Load, arm.Load); err != nil {
			return nil, fmt.Errorf("arm %s: %w", arm.Name, err)
		}
	}
	if run.Baseline != "" {
		exp.Spec.Baseline = &perfexpv1alpha1.BaselineRef{Name: run.Baseline}
	}
	keepApplicableObjectives(exp)
	return exp, nil
}

// applyLoad changes load as the override says and reports whether vus, rate or stages changed
// any scenario (a scenarios-only override always applies).
func applyLoad(load *perfexpv1alpha1.Load, lo *perfexpv1alpha1.LoadOverride) (bool, error) {
	if len(lo.Scenarios) > 0 {
		var kept []perfexpv1alpha1.Scenario
		for _, sc := range load.Scenarios {
			if slices.Contains(lo.Scenarios, sc.Name) {
				kept = append(kept, sc)
			}
		}
		for _, n := range lo.Scenarios {
			if !slices.ContainsFunc(kept, func(sc perfexpv1alpha1.Scenario) bool { return sc.Name == n }) {
				return false, fmt.Errorf("load.scenarios names %s, which is not one of template.load.scenarios", n)
			}
		}
		load.Scenarios = kept
		// A warm-up on a scenario that no longer runs warms up with the first that does.
		if w := load.WarmUp; w != nil && w.Scenario != "" && !slices.Contains(lo.Scenarios, w.Scenario) {
			w.Scenario = ""
		}
	}
	if lo.VUs == nil && lo.Rate == nil && len(lo.Stages) == 0 {
		return true, nil
	}
	applied := false
	for i := range load.Scenarios {
		sc := &load.Scenarios[i]
		switch {
		case lo.VUs != nil && sc.VUs != nil:
			v := *lo.VUs
			sc.VUs = &v
			applied = true
		case lo.Rate != nil && sc.ArrivalRate != nil:
			sc.ArrivalRate.Rate = *lo.Rate
			applied = true
		case len(lo.Stages) > 0 && (sc.VUs != nil || len(sc.Stages) > 0):
			sc.VUs, sc.Duration = nil, nil
			sc.Stages = slices.Clone(lo.Stages)
			applied = true
		}
	}
	return applied, nil
}

// keepApplicableObjectives drops objectives a run cannot judge: relative ones on a baseline run
// (it has no baseline of its own) and those naming a scenario the arm does not run; and the
// primary metrics naming a scenario the arm does not run (the sweep's comparison says which
// primary metrics did not apply to an arm). The PerfExperiment's validation would otherwise
// refuse the run.
func keepApplicableObjectives(exp *perfexpv1alpha1.PerfExperiment) {
	a := exp.Spec.Analysis
	if a == nil {
		return
	}
	// A fromScript scenario's k6 scenarios are named only by its script: keep what names one then.
	fromScript := slices.ContainsFunc(exp.Spec.Load.Scenarios, func(sc perfexpv1alpha1.Scenario) bool { return sc.FromScript })
	runs := func(scenario string) bool {
		return scenario == "" || fromScript || slices.ContainsFunc(exp.Spec.Load.Scenarios, func(sc perfexpv1alpha1.Scenario) bool { return sc.Name == scenario })
	}
	if len(a.Objectives) > 0 {
		var kept []perfexpv1alpha1.Objective
		for _, o := range a.Objectives {
			relative := o.MaxIncreasePercent != nil || o.MaxDecreasePercent != nil
			if relative && exp.Spec.Baseline == nil || !runs(o.Scenario) {
				continue
			}
			kept = append(kept, o)
		}
		a.Objectives = kept
	}
	if len(a.PrimaryMetrics) > 0 {
		var kept []perfexpv1alpha1.PrimaryMetric
		for _, p := range a.PrimaryMetrics {
			if runs(p.Scenario) {
				kept = append(kept, p)
			}
		}
		a.PrimaryMetrics = kept
	}
}
