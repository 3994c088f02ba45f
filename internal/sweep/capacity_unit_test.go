package sweep

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
)

// The answer of a rate search names the rate's unit: the demo's search read "74-80
// iterations/timeUnit" before, for scenarios at the default 1s.
func TestCapacityUnit(t *testing.T) {
	search := func(param perfexpv1alpha1.LoadParameter, units ...*time.Duration) *perfexpv1alpha1.PerfSweep {
		s := &perfexpv1alpha1.PerfSweep{}
		s.Spec.Capacity = &perfexpv1alpha1.SweepCapacity{Parameter: param}
		s.Spec.Template.Load.Scenarios = append(s.Spec.Template.Load.Scenarios, perfexpv1alpha1.Scenario{Name: "vus"})
		for _, u := range units {
			a := &perfexpv1alpha1.ArrivalRate{Rate: 10}
			if u != nil {
				a.TimeUnit = &metav1.Duration{Duration: *u}
			}
			s.Spec.Template.Load.Scenarios = append(s.Spec.Template.Load.Scenarios, perfexpv1alpha1.Scenario{Name: "rate", ArrivalRate: a})
		}
		return s
	}
	d := func(v time.Duration) *time.Duration { return &v }
	held, broke := int32(74), int32(80)
	for _, c := range []struct {
		s    *perfexpv1alpha1.PerfSweep
		want string
	}{
		{search(perfexpv1alpha1.LoadVUs), "74-80 VUs"},
		{search(perfexpv1alpha1.LoadRate, nil), "74-80 iterations/s"},
		{search(perfexpv1alpha1.LoadRate, d(time.Second), nil), "74-80 iterations/s"},
		{search(perfexpv1alpha1.LoadRate, d(time.Minute)), "74-80 iterations/min"},
		{search(perfexpv1alpha1.LoadRate, d(2*time.Minute)), "74-80 iterations/2m"},
		{search(perfexpv1alpha1.LoadRate, d(10*time.Second)), "74-80 iterations/10s"},
		{search(perfexpv1alpha1.LoadRate, d(90*time.Second)), "74-80 iterations/1m30s"},
		{search(perfexpv1alpha1.LoadRate, d(time.Hour)), "74-80 iterations/h"},
		{search(perfexpv1alpha1.LoadRate, d(time.Second), d(time.Minute)), "74-80 iterations/timeUnit"},
	} {
		if got := capacitySummary(capacityUnit(c.s), &held, &broke); got != c.want {
			t.Errorf("%q, want %q", got, c.want)
		}
	}
}
