// Package testexp builds PerfExperiments for tests: New gives the smallest experiment the API
// server accepts, and options change only what a test is about, so a test reads as the
// difference it makes. Every package's tests use it instead of a builder of their own; it
// imports only the API types and the result model (RunResult builds a run's results), so any
// test (unit or envtest) may use it.
package testexp

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
)

// NoopScript is the inline k6 script of the scenarios built here: it sends nothing.
const NoopScript = "export default function () {}"

// Option changes an experiment being built. It is a plain function type, so a test's own
// mutators (func(*PerfExperiment)) are options too.
type Option = func(*perfexpv1alpha1.PerfExperiment)

// New builds the experiment name in namespace ns with one scenario, "s": NoopScript run by one
// VU for a minute. The options apply in order.
func New(ns, name string, opts ...Option) *perfexpv1alpha1.PerfExperiment {
	exp := &perfexpv1alpha1.PerfExperiment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	exp.Spec.Load.Scenarios = []perfexpv1alpha1.Scenario{Constant("s", 1, time.Minute)}
	for _, o := range opts {
		o(exp)
	}
	return exp
}

// Constant is a scenario that runs NoopScript with vus VUs for d.
func Constant(name string, vus int32, d time.Duration) perfexpv1alpha1.Scenario {
	return perfexpv1alpha1.Scenario{
		Name:     name,
		Script:   perfexpv1alpha1.ScriptSource{Inline: NoopScript},
		VUs:      ptr.To(vus),
		Duration: &metav1.Duration{Duration: d},
	}
}

// Ramping is a scenario that runs NoopScript through stages.
func Ramping(name string, stages ...perfexpv1alpha1.Stage) perfexpv1alpha1.Scenario {
	return perfexpv1alpha1.Scenario{
		Name:   name,
		Script: perfexpv1alpha1.ScriptSource{Inline: NoopScript},
		Stages: stages,
	}
}

// WithScenarios replaces the scenarios; with none, the experiment has no scenario (enough for
// tests that never send it to the API server).
func WithScenarios(scenarios ...perfexpv1alpha1.Scenario) Option {
	return func(e *perfexpv1alpha1.PerfExperiment) { e.Spec.Load.Scenarios = scenarios }
}

// WithQueue sets spec.queue.
func WithQueue(name string) Option {
	return func(e *perfexpv1alpha1.PerfExperiment) { e.Spec.Queue = name }
}

// WithPriority sets spec.priority.
func WithPriority(p int32) Option {
	return func(e *perfexpv1alpha1.PerfExperiment) { e.Spec.Priority = p }
}

// WithVariant sets spec.variant.
func WithVariant(v *perfexpv1alpha1.Variant) Option {
	return func(e *perfexpv1alpha1.PerfExperiment) { e.Spec.Variant = v }
}

// WithUID sets metadata.uid, as the API server would on create.
func WithUID(uid types.UID) Option {
	return func(e *perfexpv1alpha1.PerfExperiment) { e.UID = uid }
}

// WithTestID sets status.testID.
func WithTestID(id string) Option {
	return func(e *perfexpv1alpha1.PerfExperiment) { e.Status.TestID = id }
}

// InPhase moves the experiment to phase p, entered at at, as the reconciler records it.
func InPhase(p perfexpv1alpha1.Phase, at time.Time) Option {
	return func(e *perfexpv1alpha1.PerfExperiment) {
		e.Status.Phase = p
		e.Status.PhaseHistory = append(e.Status.PhaseHistory, perfexpv1alpha1.PhaseTransition{Phase: p, Time: metav1.NewTime(at)})
	}
}
