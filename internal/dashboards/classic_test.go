package dashboards_test

import (
	"context"
	"math"
	"strings"
	"testing"

	"github.com/perfexp/perfexp/internal/analysis"
	"github.com/perfexp/perfexp/internal/analysis/promtest"
	"github.com/perfexp/perfexp/internal/dashboards"
	"github.com/perfexp/perfexp/internal/load"
)

// Story: a team whose Prometheus takes no native histograms runs k6 with
// K6_PROMETHEUS_RW_TREND_AS_NATIVE_HISTOGRAM=false, as docs/load.md says; k6 then writes its
// Trends as trend-stat gauges (the stats perfexp's runner asks for). Every panel of the run's
// dashboard still shows the run, the latency ones from those gauges, and its p95 over the run
// is the report's, which reads the same gauges (one runner: k6's own p95).
func TestDashboardOnClassicK6Run(t *testing.T) {
	if testing.Short() {
		t.Skip("runs k6")
	}
	prom := promtest.Start(t)
	srv := service(t)
	run := k6Run(t, prom, srv.URL, variantID, false, true, map[string]string{
		"K6_PROMETHEUS_RW_TREND_AS_NATIVE_HISTOGRAM": "false",
		"K6_PROMETHEUS_RW_TREND_STATS":               strings.Join(load.DefaultTrendStats, ","),
	})
	api := prom.API(t)
	report, err := analysis.Analyze(context.Background(), api, analysis.Input{Experiment: "pool-v1-1", Namespace: ns,
		TestID: variantID, Start: run.Start, End: run.End, Scenarios: []string{"default"}})
	if err != nil {
		t.Fatal(err)
	}
	if report.Total.P95 == nil {
		t.Fatalf("the report has no p95 from the trend stats: %+v", report.Total)
	}
	d := dashboards.Experiment(dashboards.ExperimentInput{Namespace: ns, Name: "pool-v1-1", Run: run})
	if err := dashboards.Validate(d); err != nil {
		t.Fatal(err)
	}
	g := grafanaFor(t, d, api)
	answers := map[string]float64{}
	for _, p := range d.Panels {
		for _, tg := range p.Targets {
			if strings.Contains(tg.LegendFormat, "baseline") || tg.Expr == "vector(${baseline_offset})" {
				continue // no baseline here
			}
			a := g.run(t, tg)
			if a.numbers() == 0 {
				t.Errorf("%s/%s: %q returned no number (Grafana would show %q)", p.Title, tg.RefID, a.expr, "No data")
				continue
			}
			if tg.Instant {
				answers[p.Title] = a.only(t)
			}
		}
	}
	if got := answers["p95 over the run"] * 1000; math.Abs(got / *report.Total.P95 - 1) > 1e-9 {
		t.Errorf("dashboard p95 %.4f ms, report %.4f ms", got, *report.Total.P95)
	}
	if got := answers["Requests over the run"]; got != float64(*report.Total.Requests) {
		t.Errorf("dashboard requests %v, report %d", got, *report.Total.Requests)
	}
	t.Logf("p95 over the run: dashboard %.4f ms, report %.4f ms; requests %v; error rate %.2f%%", answers["p95 over the run"]*1000, *report.Total.P95,
		answers["Requests over the run"], answers["Error rate over the run"])
}
