package judge

import (
	"fmt"
	"math"
	"slices"
	"strings"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/result"
)

// routeMetrics are compared for every route a run reports, in the report's order. Routes are
// secondary rows (under the Benjamini-Hochberg control of the secondary rows, never deciding
// the headline) unless a primary metric names one (workload and route).
var routeMetrics = []perfexpv1alpha1.ObjectiveMetric{perfexpv1alpha1.MetricAvg, perfexpv1alpha1.MetricP95, perfexpv1alpha1.MetricErrorRate}

// noRouteInBaseline is why a route of this run has no comparison.
const noRouteInBaseline = "the baseline reports no such route (its service's histogram was not read, or the route was not among its slowest kept by routes.top)"

// routeLabel names a route's row: "shop/api GET /items p95 (server)".
func routeLabel(workload, route string, m perfexpv1alpha1.ObjectiveMetric) string {
	short := workload
	if parts := strings.SplitN(workload, "/", 3); len(parts) == 3 {
		short = parts[1] + "/" + parts[2]
	}
	what := strings.ToLower(string(m))
	if m == perfexpv1alpha1.MetricErrorRate {
		what = "errors"
	}
	return fmt.Sprintf("%s %s %s (server)", short, route, what)
}

// routeStat is a route's statistic in the unit comparisons show.
func routeStat(rr *result.RouteResult, m perfexpv1alpha1.ObjectiveMetric) *float64 {
	if rr == nil {
		return nil
	}
	switch m {
	case perfexpv1alpha1.MetricAvg:
		return rr.Avg
	case perfexpv1alpha1.MetricP95:
		return rr.P95
	case perfexpv1alpha1.MetricErrorRate:
		return rr.ErrorPercent
	}
	return nil
}

func newRouteComparison(rr, br *result.RouteResult, m perfexpv1alpha1.ObjectiveMetric, o CompareOptions) result.MetricComparison {
	mc := result.MetricComparison{Metric: routeLabel(rr.Workload, rr.Route, m), Kind: m, Unit: metricUnit(m), Route: rr.Route, RouteWorkload: rr.Workload,
		Primary: o.primaryRoute(rr.Workload, rr.Route, m).ok}
	mc.Value, mc.Baseline = routeStat(rr, m), routeStat(br, m)
	fillDelta(&mc)
	return mc
}

// routeRows compare every route of a single run with the baseline's on their per-interval
// histograms, with the moving-block bootstrap of the latencies: the same rule, and the same
// widening by the between-run noise, as a request's rows.
func routeRows(r, base *result.Result, cur, baseIv *result.IntervalData, o CompareOptions, widen func(string, *effect) *effect, seed ...string) []result.MetricComparison {
	out := make([]result.MetricComparison, 0, len(routeMetrics)*len(r.Routes))
	for i := range r.Routes {
		rr := &r.Routes[i]
		br := base.FindRoute(rr.Workload, rr.Route)
		ci, bi := cur.FindRoute(rr.Workload, rr.Route), baseIv.FindRoute(rr.Workload, rr.Route)
		var effects map[perfexpv1alpha1.ObjectiveMetric]*effect
		if br != nil && ci != nil && bi != nil {
			effects = blockBootstrap(&ci.Series, &bi.Series, cur.StepSeconds, baseIv.StepSeconds, o.MinChangePercent, o.Resamples,
				seedOf(append(append([]string(nil), seed...), "route", rr.Workload, rr.Route)...))
		}
		for _, m := range routeMetrics {
			mc := newRouteComparison(rr, br, m, o)
			switch {
			case br == nil:
				setUnknown(&mc, noRouteInBaseline)
			case ci == nil || bi == nil:
				setUnknown(&mc, "no per-interval data for the route in one of the runs (analysed by an older perfexp?)")
			case effects[m] == nil:
				setUnknown(&mc, "no data for it in one of the runs")
			default:
				e := effects[m]
				if m != perfexpv1alpha1.MetricErrorRate && mc.Value != nil && mc.Baseline != nil && *mc.Value > 0 && *mc.Baseline > 0 {
					e = e.centredOn(math.Log(*mc.Value / *mc.Baseline))
				}
				fill(&mc, widen("", e), result.MethodBlockBootstrap, "intervals")
				o.orientRoute(&mc)
			}
			out = append(out, mc)
		}
	}
	return append(out, missingRouteRows(out, []*result.Result{r}, []*result.Result{base}, o)...)
}

// orientRoute turns a primary route row's verdict (lower is better) to its direction.
func (o CompareOptions) orientRoute(mc *result.MetricComparison) {
	if p := o.primaryRoute(mc.RouteWorkload, mc.Route, mc.Kind); p.ok {
		reorient(mc, betterLower, p.dir)
	}
}

// missingRouteRows are the Unknown rows of the primary metrics naming a route that no row of
// out is: one the runs did not report (or not on both sides), with the name it looked for.
func missingRouteRows(out []result.MetricComparison, cur, base []*result.Result, o CompareOptions) []result.MetricComparison {
	var missing []result.MetricComparison
	for _, p := range o.Primary {
		if p.Route == "" || p.Workload == nil {
			continue
		}
		pw := *p.Workload
		names := func(workload, route string) bool {
			parts := strings.SplitN(workload, "/", 3)
			return route == p.Route && len(parts) == 3 && namesWorkload(pw, parts[0], parts[1], parts[2])
		}
		if slices.ContainsFunc(out, func(mc result.MetricComparison) bool { return mc.Kind == p.Metric && names(mc.RouteWorkload, mc.Route) }) {
			continue
		}
		has := func(rs []*result.Result) bool {
			return slices.ContainsFunc(rs, func(r *result.Result) bool {
				return slices.ContainsFunc(r.Routes, func(rr result.RouteResult) bool { return names(rr.Workload, rr.Route) })
			})
		}
		kind := pw.Kind
		if kind == "" {
			kind = perfexpv1alpha1.WorkloadKindDeployment
		}
		ref := string(kind) + "/" + pw.Name
		if pw.Namespace != "" {
			ref = workloadRef(string(kind), pw.Namespace, pw.Name)
		}
		mc := result.MetricComparison{Metric: routeLabel(ref, p.Route, p.Metric), Kind: p.Metric, Unit: metricUnit(p.Metric), Route: p.Route, RouteWorkload: ref, Primary: true}
		setUnknown(&mc, missingWhy("route "+p.Route+" of "+ref, has(cur), has(base), len(cur) > 1 || len(base) > 1))
		missing = append(missing, mc)
	}
	return missing
}

// routeRunRows compare every route of the first run of each side on the runs' values, as the
// runs' latencies are: Welch's t on their logs (error rates in points).
func routeRunRows(cur, base []*result.Result, o CompareOptions) []result.MetricComparison {
	out := make([]result.MetricComparison, 0, len(routeMetrics)*len(cur[0].Routes))
	for i := range cur[0].Routes {
		rr := &cur[0].Routes[i]
		br := base[0].FindRoute(rr.Workload, rr.Route)
		for _, m := range routeMetrics {
			mc := newRouteComparison(rr, br, m, o)
			vc, vb := routeRunValues(cur, rr, m), routeRunValues(base, rr, m)
			mc.Value, mc.Baseline, mc.Delta, mc.DeltaPercent = mean(vc), mean(vb), nil, nil
			fillDelta(&mc)
			switch {
			case br == nil:
				setUnknown(&mc, noRouteInBaseline)
			case len(vc) < len(cur) || len(vb) < len(base):
				setUnknown(&mc, fmt.Sprintf("only %d of %d runs and %d of %d baseline runs have it", len(vc), len(cur), len(vb), len(base)))
			default:
				fill(&mc, runEffect(vc, vb, m, o.MinChangePercent).atLevel(o.alpha()), result.MethodRuns, "runs")
				o.orientRoute(&mc)
			}
			out = append(out, mc)
		}
	}
	return append(out, missingRouteRows(out, cur, base, o)...)
}

// routeRunValues is the route's statistic in each run that has it.
func routeRunValues(rs []*result.Result, rr *result.RouteResult, m perfexpv1alpha1.ObjectiveMetric) []float64 {
	var out []float64
	for _, r := range rs {
		if v := routeStat(r.FindRoute(rr.Workload, rr.Route), m); v != nil && result.Finite(*v) {
			out = append(out, *v)
		}
	}
	return out
}
