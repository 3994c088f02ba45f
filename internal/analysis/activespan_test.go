package analysis

import (
	"context"
	"math"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/analysis/promtest"
	"github.com/perfexp/perfexp/internal/result"
)

// Story: two scenarios in one 10-minute window, each at 2 requests per second while it runs.
// "late" has a 5-minute start delay and "short" stops after 3 minutes: their rates are over
// their own active spans, not diluted by the whole window; a slice over the last 4 minutes
// sees "late" at its rate and "short" not at all.
func TestCraftedActiveSpanRate(t *testing.T) {
	prom := promtest.Start(t)
	start := time.Now().Add(-20 * time.Minute).Truncate(time.Minute)
	end := start.Add(10 * time.Minute)
	const testID = "span"
	type run struct {
		scenario string
		from, to time.Duration
	}
	var series []promtest.Series
	for _, r := range []run{{"steady", 0, 10 * time.Minute}, {"late", 5 * time.Minute, 10 * time.Minute}, {"short", 0, 3 * time.Minute}} {
		s := promtest.NewK6Series(promtest.K6Labels(testID, r.scenario, "get", "0", true))
		for at := r.from + 5*time.Second; at <= r.to; at += 5 * time.Second {
			s.Flush(start.Add(at), 0.01, 0.01, 0.01, 0.01, 0.01, 0.01, 0.01, 0.01, 0.01, 0.01)
		}
		series = append(series, s.Series()...)
	}
	prom.Write(t, series)
	res, err := Analyze(context.Background(), prom.API(t), Input{Experiment: "span", TestID: testID, Start: start, End: end,
		Scenarios: []string{"steady", "late", "short"},
		Analysis:  perfexpv1alpha1.Analysis{Slices: []perfexpv1alpha1.TimeSlice{{Name: "last-4m", Last: &metav1.Duration{Duration: 4 * time.Minute}}}}})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]result.ScenarioResult{}
	for _, s := range res.Scenarios {
		got[s.Name] = s
	}
	sl := map[string]result.ScenarioResult{}
	for _, s := range res.Slices[0].Scenarios {
		sl[s.Name] = s
	}
	near := func(p *float64, want, tol float64) bool { return p != nil && math.Abs(*p-want) <= tol }
	tests := []struct {
		name string
		ok   bool
		got  any
	}{
		{"steady: 2/s over the whole window", near(got["steady"].Rate, 2, 0.02), deref(got["steady"].Rate)},
		{"late: 2/s over its 5 minutes, not 1/s over 10", near(got["late"].Rate, 2, 0.05), deref(got["late"].Rate)},
		{"late: active about 300 s", near(got["late"].ActiveSeconds, 300, 6), deref(got["late"].ActiveSeconds)},
		{"short: 2/s over its 3 minutes", near(got["short"].Rate, 2, 0.05), deref(got["short"].Rate)},
		{"all together: 2160 requests over the 600 s the run was active", near(res.Total.Rate, 2160.0/600, 0.05), deref(res.Total.Rate)},
		{"slice: late at 2/s", near(sl["late"].Rate, 2, 0.05), deref(sl["late"].Rate)},
		{"slice: short not active, no rate", sl["short"].Rate == nil, deref(sl["short"].Rate)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if !tc.ok {
				t.Errorf("got %v", tc.got)
			}
		})
	}
}

func TestActiveSpanSeconds(t *testing.T) {
	a := time.Unix(1_700_000_000, 0)
	b := a.Add(10 * time.Minute)
	tests := []struct {
		name string
		sp   activeSpan
		want float64
	}{
		{"unknown: the whole window", activeSpan{}, 600},
		{"running across both edges", activeSpan{first: a.Add(-time.Minute), last: b.Add(time.Minute)}, 600},
		{"first sample a few seconds in: still running at the start", activeSpan{first: a.Add(5 * time.Second), last: b}, 600},
		{"a 5-minute start delay: its first push 5 s later", activeSpan{a.Add(5*time.Minute + 5*time.Second), b, 5 * time.Second}, 300},
		{"10 s from 10 s on, pushed at 15 s and 20 s", activeSpan{a.Add(15 * time.Second), a.Add(20 * time.Second), 5 * time.Second}, 10},
		{"a 2-minute subquery step: within a step of the start is from the start", activeSpan{a.Add(90 * time.Second), b, 2 * time.Minute}, 600},
		{"stopped after 3 minutes", activeSpan{first: a, last: a.Add(3 * time.Minute)}, 180},
		{"entirely before the window", activeSpan{first: a.Add(-5 * time.Minute), last: a.Add(-4 * time.Minute)}, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.sp.seconds(a, b); math.Abs(got-tc.want) > 1e-9 {
				t.Errorf("seconds = %g, want %g", got, tc.want)
			}
		})
	}
}
