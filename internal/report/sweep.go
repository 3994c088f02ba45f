package report

import (
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/result"
)

// SweepResult is what a sweep found: every arm's runs, their statistics and the comparison of
// each arm with the baseline. It is what the sweep report's results.json holds.
type SweepResult struct {
	Sweep     string `json:"sweep"`
	Namespace string `json:"namespace"`
	// Repeats is the number of runs per arm.
	Repeats int `json:"repeats"`
	// MinMeaningfulChangePercent is the change below which a difference does not matter.
	MinMeaningfulChangePercent float64 `json:"minMeaningfulChangePercent"`
	// LoadParameter is "VUs" or "Rate" for a sweep over load (a capacity curve).
	LoadParameter perfexpv1alpha1.LoadParameter `json:"loadParameter,omitempty"`
	// Arms, the baseline first.
	Arms []SweepArmResult `json:"arms"`
	// BestArm is the Improved arm with the largest improvement of its primary latency.
	BestArm string `json:"bestArm,omitempty"`
	// Findings are the report's conclusions in sentences, each backed by a row
	// (internal/judge/findings).
	Findings []result.Finding `json:"findings,omitempty"`
	// Notes are caveats a reader should know (runs left out, how the arms were compared).
	Notes []string `json:"notes,omitempty"`
	// Report is the sweep's spec.report: which per-arm tables the report shows; nil for all of
	// them with their default columns.
	Report *perfexpv1alpha1.SweepReport `json:"report,omitempty"`
}

// SweepArmResult is one arm of a sweep.
type SweepArmResult struct {
	Name      string `json:"name"`
	Parameter string `json:"parameter"`
	Value     string `json:"value"`
	// LoadValue is the arm's VUs or rate in a sweep over load.
	LoadValue *float64 `json:"loadValue,omitempty"`
	// Baseline names the arm this one was compared with; absent for a baseline.
	Baseline string `json:"baseline,omitempty"`
	// Experiments names the arm's runs, by repeat; Succeeded counts those whose results are used.
	Experiments []string `json:"experiments"`
	Succeeded   int      `json:"succeeded"`
	// Scenarios holds each scenario's statistics, the mean over the arm's runs.
	Scenarios []SweepScenarioStats `json:"scenarios,omitempty"`
	// Transactions, Workloads and Queries are the arm's statistics behind the report's per-arm
	// tables: each scenario, request name, group, Trend, iteration duration and Counter; each
	// observed workload's CPU and memory; each custom query. Means over the arm's runs.
	Transactions []SweepTransactionStats `json:"transactions,omitempty"`
	Workloads    []SweepWorkloadStats    `json:"workloads,omitempty"`
	Queries      []SweepQueryStats       `json:"queries,omitempty"`
	// Routes are the observed services' routes (server-side latency), means over the arm's runs.
	Routes []SweepRouteStats `json:"routes,omitempty"`
	// Comparison of the arm's runs with the baseline's runs; absent for the baseline.
	Comparison *result.Comparison `json:"comparison,omitempty"`
	// Decision is how a sequential sweep decided the arm; absent for a fixed sweep.
	Decision *SweepDecision `json:"decision,omitempty"`
}

// SweepDecision is how a sequential sweep reached an arm's verdict: at which look, on how many
// repeats, and what that cost.
type SweepDecision struct {
	// Decided is true when the verdict was decisive at that look and the arm stopped there;
	// false when the budget ran out first.
	Decided bool `json:"decided"`
	// Change is the verdict.
	Change perfexpv1alpha1.Change `json:"change,omitempty"`
	// Repeats is how many repeats (blocks) the verdict rests on; Look is the look it was drawn
	// at (from 1) and Alpha the error rate that look spent.
	Repeats int     `json:"repeats"`
	Look    int     `json:"look"`
	Alpha   float64 `json:"alpha"`
	// Runs is how many runs of the arm the decision took, BaselineRuns how many of the
	// baseline's (those of the same blocks, shared with the other arms).
	Runs         int `json:"runs"`
	BaselineRuns int `json:"baselineRuns"`
	// EnvironmentSeconds is how long those runs (the arm's and the baseline's of the same
	// blocks) held the environment.
	EnvironmentSeconds float64 `json:"environmentSeconds"`
}

// SweepScenarioStats are one scenario's statistics in one arm: means over the arm's runs;
// latencies in milliseconds, rate in requests per second.
type SweepScenarioStats struct {
	Name         string   `json:"name"`
	Runs         int      `json:"runs"`
	Avg          *float64 `json:"avg,omitempty"`
	P95          *float64 `json:"p95,omitempty"`
	Rate         *float64 `json:"rate,omitempty"`
	ErrorPercent *float64 `json:"errorPercent,omitempty"`
}

// Keys of the sweep report ConfigMap: report.md and results.json as an experiment's, plus the
// HTML page.
const (
	KeySweepMarkdown = KeyMarkdown
	KeySweepJSON     = KeyJSON
	KeySweepHTML     = "report.html"
)

// SweepJSON renders a sweep's results.
func SweepJSON(r *SweepResult) ([]byte, error) { return json.MarshalIndent(r, "", "  ") }

// ParseSweepJSON reads results rendered by SweepJSON.
func ParseSweepJSON(b []byte) (*SweepResult, error) {
	r := &SweepResult{}
	if err := json.Unmarshal(b, r); err != nil {
		return nil, fmt.Errorf("reading sweep results: %w", err)
	}
	return r, nil
}

// sequentialResult reports whether the results are a sequential sweep's.
func sequentialResult(r *SweepResult) bool {
	for _, a := range r.Arms {
		if a.Decision != nil {
			return true
		}
	}
	return false
}

// SweepRow is one line of the sweep table: one arm and one scenario.
type SweepRow struct {
	Arm, Parameter, Value, Scenario string
	Runs                            int
	Avg, P95                        string
	// Delta is the change of the scenario's p95 against the baseline, with its interval.
	Delta string
	// Verdict is the arm's verdict (the same on each of its rows).
	Verdict string
}

// SweepRows lays out the sweep table: one row per arm and scenario, the baseline first.
func SweepRows(r *SweepResult) []SweepRow {
	var rows []SweepRow
	for _, a := range r.Arms {
		verdict := "baseline"
		if a.Comparison != nil {
			verdict = orDash(string(a.Comparison.Change))
		}
		if len(a.Scenarios) == 0 {
			rows = append(rows, SweepRow{Arm: a.Name, Parameter: a.Parameter, Value: a.Value, Scenario: "-", Avg: "-", P95: "-", Delta: "-", Verdict: verdict})
			continue
		}
		for _, s := range a.Scenarios {
			row := SweepRow{Arm: a.Name, Parameter: a.Parameter, Value: a.Value, Scenario: s.Name, Runs: s.Runs,
				Avg: withUnit(s.Avg, "ms"), P95: withUnit(s.P95, "ms"), Delta: "-", Verdict: verdict}
			if a.Comparison != nil {
				row.Delta = scenarioDelta(a.Comparison, s.Name)
				if d := a.Decision; d != nil && d.Alpha > 0 && strings.HasSuffix(row.Delta, "]") {
					// A sequential look draws its interval at its own level: state it.
					row.Delta += fmt.Sprintf(" at %.3g %%", 100*(1-d.Alpha))
				}
				if l := claimLevel(a.Comparison, s.Name); l != nil {
					// The interval shown is not the one that decided: the multiplicity
					// control across the arms held the claim to a stricter level.
					row.Delta += fmt.Sprintf("; a claim needs it beyond ±δ at %.3g %% (Holm across the arms)", 100**l)
				}
			}
			rows = append(rows, row)
		}
	}
	return rows
}

// claimLevel is the level a scenario's p95 interval would need to lie beyond ±δ at to be
// claimed, when the multiplicity control withheld a claim its own interval made; else nil.
func claimLevel(c *result.Comparison, scenario string) *float64 {
	for _, m := range c.Metrics {
		if m.Scenario == scenario && m.Request == "" && m.Kind == perfexpv1alpha1.MetricP95 && m.Change == perfexpv1alpha1.ChangeInconclusive {
			return m.ClaimLevel
		}
	}
	return nil
}

// scenarioDelta is the change of a scenario's p95 as the comparison states it: the relative
// change, and the 95 % interval when the comparison gives one.
func scenarioDelta(c *result.Comparison, scenario string) string {
	for _, m := range c.Metrics {
		if m.Scenario != scenario || m.Request != "" || m.Kind != perfexpv1alpha1.MetricP95 {
			continue
		}
		s := signed(m.DeltaPercent, 1)
		if s == "-" {
			return s
		}
		s += " %"
		if lo, hi, unit, ok := Interval(m); ok {
			s += fmt.Sprintf(" [%+.1f, %+.1f]", lo, hi)
			if unit != "%" {
				s += " " + unit
			}
		}
		return s
	}
	return "-"
}

// Interval returns the 95 % interval of a metric's change and its unit: "%" for a change
// relative to the baseline, "pp" for percentage points (error rates). The statistics live in
// internal/analysis; this reads the interval from the metric's JSON form (low, high and scale,
// as the run-level comparison writes them), so the sweep report does not depend on how the
// comparison's Go fields are arranged around it.
func Interval(m result.MetricComparison) (lo, hi float64, unit string, ok bool) {
	b, err := json.Marshal(m)
	if err != nil {
		return 0, 0, "", false
	}
	var fields struct {
		Low   *float64 `json:"low"`
		High  *float64 `json:"high"`
		Scale string   `json:"scale"`
	}
	if json.Unmarshal(b, &fields) != nil || fields.Low == nil || fields.High == nil {
		return 0, 0, "", false
	}
	unit = "%"
	if strings.EqualFold(fields.Scale, "points") || strings.EqualFold(fields.Scale, "pp") {
		unit = "pp"
	}
	return *fields.Low, *fields.High, unit, true
}

// SweepCalibration is the run-to-run sd the sweep's blocked design measured, from the arm
// comparison that rests on the most runs (a sequential sweep's arms stop at different looks;
// the latest look pools the most residuals); nil when the sweep had no repeats to measure it.
func SweepCalibration(r *SweepResult) *result.Calibration {
	var best *result.Calibration
	for _, a := range r.Arms {
		if a.Comparison == nil || a.Comparison.Calibration == nil {
			continue
		}
		if c := a.Comparison.Calibration; best == nil || c.Runs > best.Runs {
			best = c
		}
	}
	return best
}

// calibrationText says what a sweep's calibration is and how to use it.
func calibrationText(r *SweepResult, c *result.Calibration) string {
	return fmt.Sprintf("Run-to-run sd of %s measured over this sweep's runs, after the arm and block effects: **%.2f %%** "+
		"(worth a calibration of %d runs%s). One-run comparisons with this load in this environment take it as their between-run noise "+
		"when it is set in their `spec.analysis`:\n\n"+
		"```yaml\nbetweenRun: {sdPercent: \"%.2f\", runs: %d, source: \"%s\"}\n```\n\n"+
		"It holds for runs of this load shape and ages with the environment (docs/comparison.md, \"How to calibrate\")%s.",
		c.Metric, c.SDPercent, c.Runs, calibrationEnded(c), c.SDPercent, c.Runs, CalibrationSource(r, c), calibrationAge(c))
}

// calibrationAge tells the reader why the source carries a date, when it does.
func calibrationAge(c *result.Calibration) string {
	if c.Newest == nil {
		return ""
	}
	return ": the source names the day it was measured, so a later comparison that takes it says how old it is"
}

// calibrationEnded says when a calibration's last run ended: ", the last run ended 2026-11-29
// 03:48 UTC"; "" when its runs did not say.
func calibrationEnded(c *result.Calibration) string {
	if c.Newest == nil {
		return ""
	}
	return ", the last run ended " + c.Newest.UTC().Format("2006-01-02 15:04 MST")
}

// CalibrationSource is the source a sweep's calibration line suggests for
// spec.analysis.betweenRun: the sweep, and the day its last run ended, which the comparisons
// that use it then show.
func CalibrationSource(r *SweepResult, c *result.Calibration) string {
	s := fmt.Sprintf("sweep %s/%s", r.Namespace, r.Sweep)
	if c.Newest != nil {
		s += ", " + c.Newest.UTC().Format("2006-01-02")
	}
	return s
}

// SweepDecisionRow is one arm's line of the table of what a sequential sweep's decisions took.
type SweepDecisionRow struct {
	Arm, Verdict, Decided, Look, Runs, Time string
	Repeats                                 int
}

// SweepDecisionRows lays out, per arm of a sequential sweep, what its decision took; nil for a
// fixed sweep.
func SweepDecisionRows(r *SweepResult) []SweepDecisionRow {
	var rows []SweepDecisionRow
	for _, a := range r.Arms {
		d := a.Decision
		if d == nil {
			continue
		}
		decided := "yes, stopped"
		if !d.Decided {
			decided = "no: budget spent"
		}
		rows = append(rows, SweepDecisionRow{
			Arm: a.Name, Verdict: orDash(string(d.Change)), Decided: decided, Repeats: d.Repeats,
			Look: fmt.Sprintf("%d (%.3g)", d.Look, d.Alpha), Runs: fmt.Sprintf("%d + %d", d.Runs, d.BaselineRuns),
			Time: (time.Duration(d.EnvironmentSeconds) * time.Second).String(),
		})
	}
	return rows
}

// VerdictReason is the comparison's own message or, when it has none, the reasons its scenarios'
// p95 give (why a change is Inconclusive: too few runs, too noisy).
func VerdictReason(c *result.Comparison) string {
	if c.Message != "" {
		return c.Message
	}
	var whys []string
	for _, m := range c.Metrics {
		if m.Request == "" && m.Kind == perfexpv1alpha1.MetricP95 && m.Why != "" {
			whys = append(whys, m.Metric+": "+m.Why)
		}
	}
	return strings.Join(whys, "; ")
}

// CapacityPoint is one point of a capacity curve: a load level and what one scenario did at it.
type CapacityPoint struct {
	Load      float64
	Scenario  string
	Rate, P95 *float64
}

// CapacityPoints lists a sweep over load's points, by scenario and then by load.
func CapacityPoints(r *SweepResult) []CapacityPoint {
	out := make([]CapacityPoint, 0, len(r.Arms))
	for _, name := range sweepScenarios(r) {
		var pts []CapacityPoint
		for _, a := range r.Arms {
			if a.LoadValue == nil {
				continue
			}
			for _, s := range a.Scenarios {
				if s.Name == name {
					pts = append(pts, CapacityPoint{Load: *a.LoadValue, Scenario: name, Rate: s.Rate, P95: s.P95})
				}
			}
		}
		slices.SortStableFunc(pts, func(a, b CapacityPoint) int { return cmp.Compare(a.Load, b.Load) })
		out = append(out, pts...)
	}
	return out
}

func sweepScenarios(r *SweepResult) []string {
	var names []string
	seen := map[string]bool{}
	for _, a := range r.Arms {
		for _, s := range a.Scenarios {
			if !seen[s.Name] {
				seen[s.Name] = true
				names = append(names, s.Name)
			}
		}
	}
	return names
}
