// The report's "Slowest APIs" section: each observed service's routes from its own request
// histogram, slowest by p95 first, with their change against the baseline.

package report

import (
	"fmt"
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
		mc   result.MetricComparison
		i    int
		what string
	}{{avg, ia, "avg"}, {errs, ie, "errors"}} {
		if o.i >= 0 && claimed(o.mc.Change) {
			verdict += fmt.Sprintf("; %s %s%s", o.what, o.mc.Change, m.notes.mark(o.i))
		}
	}
	return fmt.Sprintf(" %s | %s | %s | %s | %s |", num(p95.Baseline, 2), changeCell(p95), changeCell(avg), changeCell(errs), cell(verdict))
}

// claimed is a verdict that says the metric moved.
func claimed(c perfexpv1alpha1.Change) bool {
	return c == perfexpv1alpha1.ChangeRegressed || c == perfexpv1alpha1.ChangeImproved
}
