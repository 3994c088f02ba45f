package sweep_test

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
)

// newSweep builds a sweep over one vus-with-duration scenario and one arrival-rate scenario,
// with no arms; options add them.
func newSweep(opts ...func(*perfexpv1alpha1.PerfSweep)) *perfexpv1alpha1.PerfSweep {
	s := &perfexpv1alpha1.PerfSweep{ObjectMeta: metav1.ObjectMeta{Namespace: "perf", Name: "pool",
		CreationTimestamp: metav1.NewTime(time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC))}}
	s.Spec.Repeats = 1
	s.Spec.Template.Load.Scenarios = []perfexpv1alpha1.Scenario{
		{Name: "checkinout", Script: perfexpv1alpha1.ScriptSource{Inline: "x"}, VUs: ptr(int32(5)), Duration: &metav1.Duration{Duration: time.Minute}},
		{Name: "import", Script: perfexpv1alpha1.ScriptSource{Inline: "y"},
			ArrivalRate: &perfexpv1alpha1.ArrivalRate{Rate: 10, Duration: metav1.Duration{Duration: time.Minute}, PreAllocatedVUs: 2}},
	}
	for _, o := range opts {
		o(s)
	}
	return s
}

func ptr[T any](v T) *T { return &v }

func envArm(name, value string) perfexpv1alpha1.SweepArm {
	return perfexpv1alpha1.SweepArm{Name: name, Variant: envVariant(value)}
}

func envVariant(value string) *perfexpv1alpha1.Variant {
	return &perfexpv1alpha1.Variant{Workloads: []perfexpv1alpha1.WorkloadChange{{
		WorkloadSelector: perfexpv1alpha1.WorkloadSelector{Kind: perfexpv1alpha1.WorkloadKindDeployment, Names: []string{"circulation"}},
		Containers:       []string{"circulation"},
		Env:              &perfexpv1alpha1.EnvChange{Set: []perfexpv1alpha1.EnvVar{{Name: "HTTP_MAXPOOLSIZE", Value: value}}},
	}}}
}

func withArms(arms ...perfexpv1alpha1.SweepArm) func(*perfexpv1alpha1.PerfSweep) {
	return func(s *perfexpv1alpha1.PerfSweep) { s.Spec.Arms = append(s.Spec.Arms, arms...) }
}

func withMatrix(dims ...perfexpv1alpha1.SweepDimension) func(*perfexpv1alpha1.PerfSweep) {
	return func(s *perfexpv1alpha1.PerfSweep) { s.Spec.Matrix = append(s.Spec.Matrix, dims...) }
}

func withOrder(o perfexpv1alpha1.SweepOrder) func(*perfexpv1alpha1.PerfSweep) {
	return func(s *perfexpv1alpha1.PerfSweep) { s.Spec.Order = o }
}

func withRepeats(n int32) func(*perfexpv1alpha1.PerfSweep) {
	return func(s *perfexpv1alpha1.PerfSweep) { s.Spec.Repeats = n }
}

var circulation = perfexpv1alpha1.WorkloadSelector{Kind: perfexpv1alpha1.WorkloadKindDeployment, Names: []string{"circulation"}}
