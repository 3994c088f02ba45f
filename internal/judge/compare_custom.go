package judge

import (
	"fmt"
	"slices"
	"strings"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/judge/stats"
	"github.com/perfexp/perfexp/internal/result"
)

// maxCustomCompared is how many checks, and how many Rates and Gauges, are compared per
// scenario (the first by name of those in both runs); the report lists up to result.MaxCustomNames.
const maxCustomCompared = 10

// customRow names one compared check, Rate or Gauge statistic of a scenario.
type customRow struct {
	scenario string
	// kind is result.KindCheck, KindRate or KindGauge; name the check's or metric's name.
	kind, name string
	metric     perfexpv1alpha1.ObjectiveMetric
}

func (w customRow) label() string {
	name := w.name
	if w.kind == result.KindCheck {
		// A check's name is free text, spaces included.
		name = fmt.Sprintf("%q", w.name)
	}
	return fmt.Sprintf("%s %s %s %s", w.scenario, w.kind, name, strings.ToLower(string(w.metric)))
}

// value is the row's value in a run, nil when the run has none.
func (w customRow) value(r *result.Result) *float64 {
	var v *float64
	switch w.kind {
	case result.KindCheck:
		v, _ = checkPassRate(r, w.scenario, w.name)
	case result.KindRate:
		v, _ = ratePercent(r, w.scenario, w.name)
	case result.KindGauge:
		v, _ = gaugeValue(r, w.scenario, w.name, w.metric)
	}
	return v
}

func (w customRow) unit() string {
	if w.kind == result.KindGauge {
		return "" // the script's own
	}
	return "%"
}

// singleRunWhy is why a single run cannot decide the row.
func (w customRow) singleRunWhy() string {
	switch w.kind {
	case result.KindCheck:
		return "k6 writes a check's pass rate as a ratio since each runner began, without counts: nothing per interval to decide on; repeated runs compare it run by run"
	case result.KindRate:
		return "k6 writes a Rate as a ratio since each runner began, without counts: nothing per interval to decide on; repeated runs compare it run by run"
	}
	return fmt.Sprintf("a Gauge's %s is one value per run: no interval to decide on; repeated runs compare it run by run", strings.ToLower(string(w.metric)))
}

// customRows are the checks, Rates and Gauges of r found in base too, the first
// maxCustomCompared of each kind per scenario, then the Rates primary metrics name that those
// lack (found or not: a missing one reads Unknown), and a note naming what the cap left out.
func customRows(r, base *result.Result, o CompareOptions) ([]customRow, string) {
	var out []customRow
	var left []string
	both := func(w customRow) bool { return w.value(r) != nil && w.value(base) != nil }
	for _, s := range r.Scenarios {
		take := func(kind string, names []string, metrics ...perfexpv1alpha1.ObjectiveMetric) {
			n := 0
			for _, name := range names {
				var ws []customRow
				for _, m := range metrics {
					if w := (customRow{scenario: s.Name, kind: kind, name: name, metric: m}); both(w) {
						ws = append(ws, w)
					}
				}
				if len(ws) == 0 {
					continue
				}
				if n == maxCustomCompared {
					left = append(left, fmt.Sprintf("%s %s %s", s.Name, kind, name))
					continue
				}
				n++
				out = append(out, ws...)
			}
		}
		var checks, rates, gauges []string
		for _, c := range s.Checks {
			checks = append(checks, c.Name)
		}
		for _, c := range s.Rates {
			rates = append(rates, c.Name)
		}
		for _, g := range s.Gauges {
			gauges = append(gauges, g.Name)
		}
		take(result.KindCheck, checks, perfexpv1alpha1.MetricPassRate)
		take(result.KindRate, rates, perfexpv1alpha1.MetricPercent)
		take(result.KindGauge, gauges, perfexpv1alpha1.MetricMin, perfexpv1alpha1.MetricMax, perfexpv1alpha1.MetricLast)
	}
	for _, p := range o.Primary {
		w := customRow{scenario: p.Scenario, kind: result.KindRate, name: p.Rate, metric: perfexpv1alpha1.MetricPercent}
		if p.Rate != "" && !slices.Contains(out, w) {
			out = append(out, w)
		}
	}
	if len(left) == 0 {
		return out, ""
	}
	return out, fmt.Sprintf("checks, custom Rates and Gauges: the first %d of each kind per scenario (by name) are compared; not compared: %s",
		maxCustomCompared, result.ShortList(left, 5))
}

func newCustomComparison(w customRow, o CompareOptions) result.MetricComparison {
	return result.MetricComparison{Metric: w.label(), Scenario: w.scenario, Kind: w.metric, Unit: w.unit(), Primary: o.primaryCustom(w).ok}
}

// missing is why a custom row has no value on one side or both, "" when both have it.
func (w customRow) missing(cur, base []*result.Result) string {
	has := func(rs []*result.Result) bool {
		return slices.ContainsFunc(rs, func(r *result.Result) bool { return w.value(r) != nil })
	}
	inCur, inBase := has(cur), has(base)
	if inCur && inBase {
		return ""
	}
	return missingWhy(fmt.Sprintf("%s %s of scenario %s", w.kind, w.name, w.scenario), inCur, inBase, len(cur) > 1 || len(base) > 1)
}

// orientCustom turns a custom row's verdict, decided as "lower is better", to its direction: a
// primary metric's, else the one the row's kind or the objectives give (direction).
func (o CompareOptions) orientCustom(w customRow, mc *result.MetricComparison) {
	if p := o.primaryCustom(w); p.ok {
		reorient(mc, betterLower, p.dir)
		return
	}
	orient(mc, direction(w, o.Objectives))
}

// compareCustom adds the single-run rows of checks, Rates and Gauges to a comparison.
func compareCustom(c *result.Comparison, r, base *result.Result, o CompareOptions) {
	ws, note := customRows(r, base, o)
	for _, w := range ws {
		mc := newCustomComparison(w, o)
		mc.Value, mc.Baseline = w.value(r), w.value(base)
		fillDelta(&mc)
		if missing := w.missing([]*result.Result{r}, []*result.Result{base}); missing != "" {
			setUnknown(&mc, missing)
		} else {
			setUnknown(&mc, w.singleRunWhy())
		}
		c.Metrics = append(c.Metrics, mc)
	}
	if note != "" {
		c.Notes = append(c.Notes, note)
	}
}

// compareCustomRuns adds the rows of checks, Rates and Gauges of repeated runs, decided run by
// run, to a comparison; the first run of each side names them.
func compareCustomRuns(c *result.Comparison, cur, base []*result.Result, o CompareOptions) {
	ws, note := customRows(cur[0], base[0], o)
	for _, w := range ws {
		mc := newCustomComparison(w, o)
		vc, vb := customRunValues(cur, w), customRunValues(base, w)
		mc.Value, mc.Baseline = mean(vc), mean(vb)
		fillDelta(&mc)
		switch missing := w.missing(cur, base); {
		case missing != "":
			setUnknown(&mc, missing)
		case len(vc) < len(cur) || len(vb) < len(base):
			setUnknown(&mc, fmt.Sprintf("only %d of %d runs and %d of %d baseline runs have it", len(vc), len(cur), len(vb), len(base)))
		case w.kind == result.KindGauge && (stats.Logs(vc) == nil || stats.Logs(vb) == nil):
			setUnknown(&mc, "a run's value is zero or negative: a Gauge is compared as a ratio, which needs positive values")
		case w.kind == result.KindGauge:
			fill(&mc, runEffect(vc, vb, w.metric, o.MinChangePercent).atLevel(o.alpha()), result.MethodRuns, "runs")
			o.orientCustom(w, &mc)
		default:
			fill(&mc, shareEffect(vc, vb, o.MinChangePercent), result.MethodRuns, "runs")
			o.orientCustom(w, &mc)
		}
		c.Metrics = append(c.Metrics, mc)
	}
	if note != "" {
		c.Notes = append(c.Notes, note)
	}
}

func customRunValues(rs []*result.Result, w customRow) []float64 {
	var out []float64
	for _, r := range rs {
		if v := w.value(r); v != nil && result.Finite(*v) {
			out = append(out, *v)
		}
	}
	return out
}

// shareEffect compares per-run shares in percent (pass rates, Rates) as a difference in points,
// as error rates are: δ is taken of the rarer side's share (a check passing 99 % is judged on
// its 1 % of fails, so a fall to 98 % is a doubling of the fails, not a 1 % change).
func shareEffect(cur, base []float64, minChange float64) *effect {
	flip := *mean(base) > 50
	if flip {
		cur, base = complement(cur), complement(base)
	}
	e := runEffect(cur, base, perfexpv1alpha1.MetricErrorRate, minChange)
	if flip {
		// The p-values and the symmetric ±δ are unchanged by turning the axis round.
		e.point, e.low, e.high = -e.point, -e.high, -e.low
	}
	return e
}

func complement(vs []float64) []float64 {
	out := make([]float64, len(vs))
	for i, v := range vs {
		out[i] = 100 - v
	}
	return out
}

// Directions of a compared value.
const (
	betterLower   = -1
	betterUnknown = 0
	betterHigher  = 1
)

// direction says whether higher is better for a row: always for a pass rate; for a Rate or a
// Gauge as the experiment's objectives on it say (boundDirection).
func direction(w customRow, objectives []perfexpv1alpha1.Objective) int {
	if w.kind == result.KindCheck {
		return betterHigher
	}
	return boundDirection(objectives, func(o perfexpv1alpha1.Objective) bool {
		return o.Scenario == w.scenario && (w.kind == result.KindRate && o.Rate == w.name || w.kind == result.KindGauge && o.Gauge == w.name)
	})
}

// boundDirection is which way the objectives that match bound a value: lower is better when
// they bound it from above only (max, maxIncreasePercent), higher when from below only (min,
// maxDecreasePercent), unknown when none does or they disagree.
func boundDirection(objectives []perfexpv1alpha1.Objective, match func(perfexpv1alpha1.Objective) bool) int {
	d, seen := betterUnknown, false
	for _, o := range objectives {
		if !match(o) {
			continue
		}
		lower, higher := o.Max != nil || o.MaxIncreasePercent != nil, o.Min != nil || o.MaxDecreasePercent != nil
		od := betterUnknown
		switch {
		case lower && !higher:
			od = betterLower
		case higher && !lower:
			od = betterHigher
		}
		if seen && od != d {
			return betterUnknown
		}
		d, seen = od, true
	}
	return d
}

// orient turns a verdict decided as "lower is better" (how decide reads every kind here) to
// the row's direction.
func orient(mc *result.MetricComparison, dir int) {
	switch dir {
	case betterHigher:
		mc.Change, mc.Unadjusted = swapClaim(mc.Change), swapClaim(mc.Unadjusted)
	case betterUnknown:
		if mc.Change != perfexpv1alpha1.ChangeRegressed && mc.Change != perfexpv1alpha1.ChangeImproved {
			return
		}
		unit := scaleUnit(mc.Scale)
		mc.Change = perfexpv1alpha1.ChangeInconclusive
		if mc.Low == nil {
			// A rise from 0 (zeroBaseEffect) has no interval; its reason has the counts.
			mc.Why = mc.Why + ", but whether higher is better is the script's to say: a primary metric naming it with a direction, or an objective with max or min on it, gives the direction"
			mc.Unadjusted, mc.UnadjustedWhy = mc.Change, mc.Why
			return
		}
		mc.Why = fmt.Sprintf("changed beyond ±%.3g%s (95%% interval [%+.1f, %+.1f]%s), but whether higher is better is the script's to say (or the query's): a primary metric naming it with a direction, or an objective with max (lower is better) or min (higher is better) on it, gives the direction",
			result.OrZero(mc.Threshold), unit, result.OrZero(mc.Low), result.OrZero(mc.High), unit)
		mc.Unadjusted, mc.UnadjustedWhy = mc.Change, mc.Why
	}
}

// scaleUnit is how a change on a scale is written after its number.
func scaleUnit(scale string) string {
	if scale == result.ScalePoints {
		return " points"
	}
	return "%"
}
