package findings

import (
	"cmp"
	"math"
	"slices"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/result"
)

// RouteMovers is how many routes (server-side p95, from a service's own request histogram) a
// run's findings name as movers: the API that moved is the one a reader looks for first.
const RouteMovers = 3

// routeMoverRows are a comparison's route p95 rows that are candidate movers (see moved), the
// largest estimated change first.
func routeMoverRows(c *result.Comparison) []result.MetricComparison {
	if c == nil {
		return nil
	}
	var rows []result.MetricComparison
	for _, mc := range c.Metrics {
		if mc.Route == "" || mc.Kind != perfexpv1alpha1.MetricP95 || mc.Estimate == nil || mc.Low == nil || mc.High == nil ||
			mc.Scale != result.ScalePercent || mc.Constant || !moved(mc, c.MinChangePercent) {
			continue
		}
		rows = append(rows, mc)
	}
	slices.SortStableFunc(rows, func(a, b result.MetricComparison) int {
		return cmp.Compare(math.Abs(*b.Estimate), math.Abs(*a.Estimate))
	})
	return rows
}

// routeMovers names the RouteMovers routes whose server-side p95 moved most against the
// baseline, each no stronger than its verdict ("which API moved"), backed by the Slowest APIs
// table's row.
func routeMovers(c *result.Comparison) []result.Finding {
	rows := routeMoverRows(c)
	out := make([]result.Finding, 0, min(len(rows), RouteMovers))
	for _, mc := range rows[:min(len(rows), RouteMovers)] {
		out = append(out, result.Finding{Kind: result.FindingRoute, Row: routeRow(mc), Text: MoverText(mc, c.MinChangePercent)})
	}
	return out
}

// routeRow is the Slowest APIs row of a route comparison: "Slowest APIs / shop/api GET /items".
func routeRow(mc result.MetricComparison) string {
	return "Slowest APIs / " + workloadShort(mc.RouteWorkload) + " " + mc.Route
}

// sweepRouteMovers names the routes whose p95 changed most in any arm, as the arms' verdicts
// claim (Regressed or Improved only: a sweep's findings name claimed changes).
func sweepRouteMovers(arms []Arm) []result.Finding {
	type mover struct {
		arm   string
		mc    result.MetricComparison
		delta float64
	}
	var ms []mover
	for _, a := range arms {
		for _, mc := range routeMoverRows(a.Comparison) {
			if mc.Change == perfexpv1alpha1.ChangeRegressed || mc.Change == perfexpv1alpha1.ChangeImproved {
				ms = append(ms, mover{a.Name, mc, a.Comparison.MinChangePercent})
			}
		}
	}
	slices.SortStableFunc(ms, func(x, y mover) int { return cmp.Compare(math.Abs(*y.mc.Estimate), math.Abs(*x.mc.Estimate)) })
	out := make([]result.Finding, 0, min(len(ms), RouteMovers))
	for _, m := range ms[:min(len(ms), RouteMovers)] {
		out = append(out, result.Finding{Kind: result.FindingRoute, Row: "Arm " + m.arm + " / " + routeRow(m.mc), Text: "Arm " + m.arm + ": " + MoverText(m.mc, m.delta)})
	}
	return out
}
