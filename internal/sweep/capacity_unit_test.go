package sweep

import (
	"slices"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/result"
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

// A database or broker without a CPU limit never shows in a limit's share; its CPU rising from
// the last load that held to the first that broke names it. Small rises, limited workloads and
// workloads seen at one load only are not named.
func TestRisingWorkload(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	run := func(ws ...result.WorkloadResult) *result.Result { return &result.Result{Workloads: ws} }
	w := func(kind, name string, cpu float64, limit *float64) result.WorkloadResult {
		return result.WorkloadResult{Kind: kind, Name: name, CPUAvg: f(cpu), CPULimit: limit}
	}
	held := []*result.Result{
		run(w("StatefulSet", "postgres", 0.30, nil), w("Deployment", "circulation", 0.20, f(1)), w("StatefulSet", "kafka", 0.40, nil), w("Deployment", "quiet", 0.01, nil)),
		run(w("StatefulSet", "postgres", 0.32, nil), w("Deployment", "circulation", 0.22, f(1)), w("StatefulSet", "kafka", 0.42, nil), w("Deployment", "quiet", 0.01, nil)),
	}
	broke := []*result.Result{
		run(w("StatefulSet", "postgres", 0.90, nil), w("Deployment", "circulation", 0.95, f(1)), w("StatefulSet", "kafka", 0.45, nil), w("Deployment", "quiet", 0.05, nil), w("Deployment", "new", 1.5, nil)),
		run(w("StatefulSet", "postgres", 0.94, nil), w("Deployment", "circulation", 0.97, f(1)), w("StatefulSet", "kafka", 0.47, nil), w("Deployment", "quiet", 0.05, nil)),
	}
	want := "StatefulSet/postgres: CPU 0.31 -> 0.92 cores from 40 to 60 VUs (no CPU limit)"
	if got := risingWorkload(held, broke, 40, 60, "VUs"); got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	// Without the database's rise, nothing rose markedly: kafka +0.05 cores, quiet +0.04.
	for _, rs := range [][]*result.Result{held, broke} {
		for _, r := range rs {
			r.Workloads = slices.DeleteFunc(r.Workloads, func(w result.WorkloadResult) bool { return w.Name == "postgres" })
		}
	}
	if got := risingWorkload(held, broke, 40, 60, "VUs"); got != "" {
		t.Errorf("got %q, want none", got)
	}
}
