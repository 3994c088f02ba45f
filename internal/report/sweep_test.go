package report

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/result"
)

func sweepSample() *SweepResult {
	stats := func(p95, rate float64) []SweepScenarioStats {
		return []SweepScenarioStats{{Name: "checkinout", Runs: 2, Avg: f(p95 / 2), P95: f(p95), Rate: f(rate)}}
	}
	cmp := func(change perfexpv1alpha1.Change, delta float64) *result.Comparison {
		c := &result.Comparison{Baseline: "s-baseline-1", Change: change, Message: "judged on p95", Metrics: []result.MetricComparison{
			{Metric: "checkinout p95", Scenario: "checkinout", Kind: perfexpv1alpha1.MetricP95, DeltaPercent: f(delta), Why: "why " + string(change)},
		}}
		if change == perfexpv1alpha1.ChangeRegressed {
			c.Message = "" // the reason then comes from the metrics
		}
		return c
	}
	return &SweepResult{Sweep: "s", Namespace: "perf", Repeats: 2, MinMeaningfulChangePercent: 5, LoadParameter: perfexpv1alpha1.LoadVUs, BestArm: "users-1",
		Arms: []SweepArmResult{
			{Name: "baseline", Parameter: "vus", Value: "5", LoadValue: f(5), Experiments: []string{"s-baseline-1", "s-baseline-2"}, Succeeded: 2, Scenarios: stats(110, 50)},
			{Name: "users-20", Parameter: "vus", Value: "20", LoadValue: f(20), Experiments: []string{"s-users-20-1", "s-users-20-2"}, Succeeded: 2, Scenarios: stats(300, 150), Comparison: cmp(perfexpv1alpha1.ChangeRegressed, 172.7)},
			{Name: "users-1", Parameter: "vus", Value: "1", LoadValue: f(1), Experiments: []string{"s-users-1-1", "s-users-1-2"}, Succeeded: 2, Scenarios: stats(40, 10), Comparison: cmp(perfexpv1alpha1.ChangeImproved, -63.6)},
		}}
}

func TestSweepMarkdown(t *testing.T) {
	md := SweepMarkdown(sweepSample())
	for _, want := range []string{
		"| Arm | Parameter | Value | Scenario | Runs | Avg (geo. mean) | p95 (geo. mean) | Δ p95 vs baseline [interval, 95 % unless stated] | Verdict |",
		"| baseline | vus | 5 | checkinout | 2 | 55 ms | 110 ms | - | baseline |",
		"| users-20 | vus | 20 | checkinout | 2 | 150 ms | 300 ms | +172.7 % | Regressed ¹ |",
		"| users-1 | vus | 1 | checkinout | 2 | 20 ms | 40 ms | -63.6 % | Improved ² |",
		"Best arm: **users-1**",
		// An arm's reason: its comparison's message, else its scenario's p95's.
		"¹ why Regressed.",
		"² judged on p95.",
		"## Capacity",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("the sweep report lacks %q:\n%s", want, md)
		}
	}
	// The capacity table is ordered by load, whatever the order of the arms.
	capacity := md[strings.Index(md, "## Capacity"):]
	if i1, i5, i20 := strings.Index(capacity, "| 1 | checkinout"), strings.Index(capacity, "| 5 | checkinout"), strings.Index(capacity, "| 20 | checkinout"); i1 < 0 || i1 > i5 || i5 > i20 {
		t.Errorf("capacity rows not ordered by load (%d, %d, %d):\n%s", i1, i5, i20, capacity)
	}
}

func TestSweepMarkdownSaysWhereOneRunNoiseCameFrom(t *testing.T) {
	r := sweepSample()
	r.Arms[2].Comparison.Noise = "between-run sd from PerfHistory runs-a, runs-b, latest segment (15 runs, newest 1 h old, oldest 8 h; Student's t): checkinout/p95 0.802 %"
	want := []string{"| users-20 | vus | 20 | checkinout | 2 | 150 ms | 300 ms | +172.7 % | Regressed ¹ |", "| -63.6 % | Improved ² |",
		"² judged on p95; one run per side, with between-run sd from PerfHistory runs-a, runs-b, latest segment (15 runs"}
	md := SweepMarkdown(r)
	for _, w := range want {
		if !strings.Contains(md, w) {
			t.Errorf("the sweep report should say where the one-run arm's noise came from, and only for it (%q):\n%s", w, md)
		}
	}
	if strings.Count(md, "one run per side") != 1 {
		t.Errorf("the one-run noise should be stated once:\n%s", md)
	}
}

// A sweep with repeats measured the environment's run-to-run noise: the report gives it, from the
// comparison resting on the most runs, as the betweenRun to paste; a sweep without it says nothing.
func TestSweepMarkdownGivesTheCalibration(t *testing.T) {
	r := sweepSample()
	if md := SweepMarkdown(r); strings.Contains(md, "## Calibration") {
		t.Errorf("no arm measured a calibration, yet the report has the section:\n%s", md)
	}
	r.Arms[1].Comparison.Calibration = &result.Calibration{Metric: "checkinout p95", SDPercent: 9.51, Runs: 6}
	r.Arms[2].Comparison.Calibration = &result.Calibration{Metric: "checkinout p95", SDPercent: 6.96, Runs: 21}
	md := SweepMarkdown(r)
	for _, want := range []string{
		"## Calibration",
		"Run-to-run sd of checkinout p95 measured over this sweep's runs, after the arm and block effects: **6.96 %** (worth a calibration of 21 runs)",
		`betweenRun: {sdPercent: "6.96", runs: 21, source: "sweep perf/s"}`,
	} {
		if !strings.Contains(md, want) {
			t.Errorf("the sweep report lacks %q:\n%s", want, md)
		}
	}
	if strings.Contains(md, "9.51") {
		t.Errorf("the calibration should come from the comparison over the most runs:\n%s", md)
	}
	// A calibration ages with the environment: its source names the day its last run ended, so
	// the comparisons that take it say how old it is.
	ended := time.Date(2026, 11, 29, 3, 48, 12, 0, time.UTC)
	r.Arms[2].Comparison.Calibration.Newest = &ended
	md = SweepMarkdown(r)
	for _, want := range []string{
		"(worth a calibration of 21 runs, the last run ended 2026-11-29 03:48 UTC)",
		`betweenRun: {sdPercent: "6.96", runs: 21, source: "sweep perf/s, 2026-11-29"}`,
	} {
		if !strings.Contains(md, want) {
			t.Errorf("the sweep report lacks %q:\n%s", want, md)
		}
	}
}

// A sequential sweep's arm was judged at its look's level: the interval beside its verdict says
// which (it was always read as 95 %).
func TestSweepRowsStateASequentialLooksLevel(t *testing.T) {
	r := sweepSample()
	m := &r.Arms[1].Comparison.Metrics[0]
	m.Low, m.High, m.Scale = f(120), f(230), result.ScalePercent
	r.Arms[1].Decision = &SweepDecision{Decided: true, Change: perfexpv1alpha1.ChangeRegressed, Repeats: 10, Look: 8, Alpha: 0.0731}
	rows := SweepRows(r)
	if got, want := rows[1].Delta, "+172.7 % [+120.0, +230.0] at 92.7 %"; got != want {
		t.Errorf("sequential arm's delta %q, want %q", got, want)
	}
	if got := rows[2].Delta; strings.Contains(got, " at ") {
		t.Errorf("a fixed design's delta states no other level: %q", got)
	}
}

func TestSweepJSONRoundTrip(t *testing.T) {
	in := sweepSample()
	b, err := SweepJSON(in)
	if err != nil {
		t.Fatal(err)
	}
	out, err := ParseSweepJSON(b)
	if err != nil {
		t.Fatal(err)
	}
	if out.BestArm != "users-1" || len(out.Arms) != 3 || out.Arms[1].Comparison.Change != perfexpv1alpha1.ChangeRegressed || *out.Arms[2].LoadValue != 1 {
		t.Errorf("round trip lost data: %+v", out)
	}
}

func TestInterval(t *testing.T) {
	// The interval is read from the comparison's JSON form; a metric without one has none.
	if _, _, _, ok := Interval(result.MetricComparison{DeltaPercent: f(3)}); ok {
		t.Error("an interval was found where the comparison gives none")
	}
}

func TestIntervalFromTheComparison(t *testing.T) {
	tests := []struct {
		name     string
		js       string
		lo, hi   float64
		wantUnit string
	}{
		{"a relative change", `{"metric":"s p95","deltaPercent":12,"low":4.5,"high":19.5,"scale":"percent"}`, 4.5, 19.5, "%"},
		{"an error rate in points", `{"metric":"s errors","low":-0.2,"high":1.1,"scale":"points"}`, -0.2, 1.1, "pp"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var m result.MetricComparison
			if err := json.Unmarshal([]byte(tt.js), &m); err != nil {
				t.Fatal(err)
			}
			if b, _ := json.Marshal(m); !strings.Contains(string(b), `"low"`) {
				t.Skip("result.MetricComparison carries no interval yet (the statistics change adds low/high/scale)")
			}
			lo, hi, unit, ok := Interval(m)
			if !ok || lo != tt.lo || hi != tt.hi || unit != tt.wantUnit {
				t.Errorf("Interval = %v, %v, %q, %v; want %v, %v, %q", lo, hi, unit, ok, tt.lo, tt.hi, tt.wantUnit)
			}
		})
	}
}

// An arm whose interval lies beyond ±δ but which Holm across the arms left Inconclusive says,
// on its row, the level a claim needs: the interval shown is not the one that decided.
func TestSweepRowSaysTheLevelThatDecides(t *testing.T) {
	r := sweepSample()
	c := r.Arms[1].Comparison
	c.Change = perfexpv1alpha1.ChangeInconclusive
	m := &c.Metrics[0]
	m.Change, m.Low, m.High, m.Scale, m.ClaimLevel = perfexpv1alpha1.ChangeInconclusive, f(8.9), f(76.2), result.ScalePercent, f(0.9875)
	want := "+172.7 % [+8.9, +76.2]; a claim needs it beyond ±δ at 98.8 % (Holm across the arms)"
	if md := SweepMarkdown(r); !strings.Contains(md, want) {
		t.Errorf("the row should say the level that decides (%q):\n%s", want, md)
	}
}
