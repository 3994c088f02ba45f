// The report's "Slowest APIs" section: each observed service's routes from its own request
// histogram, slowest by p95 first, with their change against the baseline.

package report

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/result"
)

// routeDeltas are a comparison's route rows by service, route and kind.
type routeDeltas map[string]int

func newRouteDeltas(c *result.Comparison) routeDeltas {
	d := routeDeltas{}
	if c == nil {
		return d
	}
	for i, mc := range c.Metrics {
		if mc.Route != "" {
			d[routeKey(mc.RouteWorkload, mc.Route, mc.Kind)] = i
		}
	}
	return d
}

func routeKey(workload, route string, kind perfexpv1alpha1.ObjectiveMetric) string {
	return workload + "\x00" + route + "\x00" + string(kind)
}

// shortWorkload is "shop/api" for "Deployment/shop/api".
func shortWorkload(ref string) string {
	if parts := strings.SplitN(ref, "/", 3); len(parts) == 3 {
		return parts[1] + "/" + parts[2]
	}
	return ref
}

// routes writes the section; nothing when no service's routes were read.
func (m *markdown) routes(routes []result.RouteResult, c *result.Comparison) {
	if len(routes) == 0 {
		return
	}
	d := newRouteDeltas(c)
	m.printf("## Slowest APIs\n\nEach route as the service's own request histogram saw it (server-side: no network, no load generator), slowest by p95 first. ")
	m.printf("Latencies (ms) are of the successful requests; errors are the requests whose status the histogram's errorStatus matches.")
	if len(d) > 0 {
		m.printf(" Δ is the change against baseline %s with its 95 %% interval, judged by the comparison's rule (±%g %%); these rows are secondary (Benjamini-Hochberg), they never change the headline.",
			c.Baseline, c.MinChangePercent)
	}
	m.printf("\n\n| Service | Route | Requests | req/s | Errors %% | Avg | p50 | p75 | p95 | p99 |")
	rule := "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|"
	if len(d) > 0 {
		m.printf(" Baseline p95 | p95 Δ [95 %% interval] | Avg Δ [95 %% interval] | Errors Δ | Verdict |")
		rule += "---:|---|---|---|---|"
	}
	m.printf("\n%s\n", rule)
	for _, rr := range routes {
		m.printf("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |", cell(shortWorkload(rr.Workload)), cell(rr.Route), intOr(rr.Requests), num(rr.Rate, 1),
			num(rr.ErrorPercent, 2), num(rr.Avg, 2), num(rr.P50, 2), num(rr.P75, 2), num(rr.P95, 2), num(rr.P99, 2))
		if len(d) > 0 {
			m.printf("%s", m.routeCells(c, d, rr))
		}
		m.printf("\n")
	}
	m.printf("\n")
}

// routeCells are the comparison's cells of a route: the baseline's p95, the changes of p95,
// average and error share, and the verdict (p95's; the average's or the error share's when
// p95 is not a claim and they are).
func (m *markdown) routeCells(c *result.Comparison, d routeDeltas, rr result.RouteResult) string {
	get := func(kind perfexpv1alpha1.ObjectiveMetric) (result.MetricComparison, int, bool) {
		i, ok := d[routeKey(rr.Workload, rr.Route, kind)]
		if !ok {
			return result.MetricComparison{}, -1, false
		}
		return c.Metrics[i], i, true
	}
	p95, ip, ok := get(perfexpv1alpha1.MetricP95)
	if !ok {
		return " - | - | - | - | not in the baseline |"
	}
	avg, ia, _ := get(perfexpv1alpha1.MetricAvg)
	errs, ie, _ := get(perfexpv1alpha1.MetricErrorRate)
	verdict := fmt.Sprintf("p95 %s%s", p95.Change, m.notes.mark(ip))
	for _, o := range []struct {
		mc result.MetricComparison
		i  int
	}{{avg, ia}, {errs, ie}} {
		what := strings.ToLower(string(o.mc.Kind))
		if o.mc.Kind == perfexpv1alpha1.MetricErrorRate {
			what = "errors"
		}
		if o.i >= 0 && claimed(o.mc.Change) {
			verdict += fmt.Sprintf("; %s %s%s", what, o.mc.Change, m.notes.mark(o.i))
		}
	}
	return fmt.Sprintf(" %s | %s | %s | %s | %s |", num(p95.Baseline, 2), changeCell(p95), changeCell(avg), changeCell(errs), cell(verdict))
}

// claimed is a verdict that says the metric moved.
func claimed(c perfexpv1alpha1.Change) bool {
	return c == perfexpv1alpha1.ChangeRegressed || c == perfexpv1alpha1.ChangeImproved
}

// maxRouteTables is how many routes get a table of their own in a sweep's report: those that
// moved the most, then the slowest in the baseline; the others are counted below the last.
const maxRouteTables = 12

// routeQuantities are the sweep report's Slowest APIs tables, one per route of an observed
// service, a row per arm.
func routeQuantities(r *SweepResult) []sweepQuantity {
	type key struct{ workload, route string }
	var keys []key
	seen := map[key]bool{}
	for _, a := range r.Arms {
		for _, s := range a.Routes {
			if k := (key{s.Workload, s.Route}); !seen[k] {
				seen[k] = true
				keys = append(keys, k)
			}
		}
	}
	out := make([]sweepQuantity, 0, len(keys))
	for _, k := range keys {
		field := func(f func(s *SweepRouteStats) *float64) func(a *SweepArmResult) *float64 {
			return func(a *SweepArmResult) *float64 {
				for i := range a.Routes {
					if s := &a.Routes[i]; s.Workload == k.workload && s.Route == k.route {
						return f(s)
					}
				}
				return nil
			}
		}
		row := func(kind perfexpv1alpha1.ObjectiveMetric) func(mc result.MetricComparison) bool {
			return func(mc result.MetricComparison) bool {
				return mc.Route == k.route && mc.RouteWorkload == k.workload && mc.Kind == kind
			}
		}
		out = append(out, sweepQuantity{section: perfexpv1alpha1.SweepSectionRoutes, ref: k.workload + " " + k.route,
			title: shortWorkload(k.workload) + " " + k.route + " (server)", columns: []sweepColumn{
				{label: "req/s", show: showValue, value: field(func(s *SweepRouteStats) *float64 { return s.Rate })},
				{label: "Avg (ms)", show: showChange, value: field(func(s *SweepRouteStats) *float64 { return s.Avg }), metric: row(perfexpv1alpha1.MetricAvg)},
				{label: "p95 (ms)", show: showInterval, value: field(func(s *SweepRouteStats) *float64 { return s.P95 }), metric: row(perfexpv1alpha1.MetricP95)},
				{label: "p99 (ms)", show: showValue, value: field(func(s *SweepRouteStats) *float64 { return s.P99 })},
				{label: "Errors %", show: showChange, points: true, value: field(func(s *SweepRouteStats) *float64 { return s.ErrorPercent }), metric: row(perfexpv1alpha1.MetricErrorRate)},
			}})
	}
	baseP95 := make([]float64, 0, len(out))
	for i := range out {
		out[i].moved, out[i].spread = movement(r, out[i])
		v := 0.0
		if len(r.Arms) > 0 {
			v = orZero(out[i].columns[2].value(&r.Arms[0]))
		}
		baseP95 = append(baseP95, v)
	}
	order := make([]int, len(out))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		if c := cmp.Compare(out[b].moved, out[a].moved); c != 0 {
			return c
		}
		return cmp.Compare(baseP95[b], baseP95[a])
	})
	sorted := make([]sweepQuantity, len(out))
	for i, j := range order {
		sorted[i] = out[j]
	}
	if len(sorted) > maxRouteTables {
		left := len(sorted) - maxRouteTables
		sorted = sorted[:maxRouteTables]
		sorted[maxRouteTables-1].footer = fmt.Sprintf("%d more routes moved less and were faster in the baseline; each arm's comparison in results.json holds their changes.", left)
	}
	return sorted
}

// routeSectionIntro says what the sweep report's Slowest APIs tables hold.
func routeSectionIntro(r *SweepResult, tables int) string {
	return fmt.Sprintf("One table per route of the services whose own request histogram is read (analysis.observe[].routes; %d), those that moved the most first, then the slowest in the baseline; a row per arm. "+
		"Latencies are the service's own (server-side), of its successful requests, geometric means over the arm's runs; errors are the share of requests whose status errorStatus matches. "+
		"The Δ column is the change of p95 against the baseline with its 95 %% interval and verdict (±%g %%); the rows are secondary (Benjamini-Hochberg in each arm's comparison) and never decide an arm.",
		tables, r.MinMeaningfulChangePercent)
}
