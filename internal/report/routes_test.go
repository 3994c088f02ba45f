package report

import (
	"strings"
	"testing"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/result"
)

// sectionOf is the Markdown from heading to the next heading of its level.
func sectionOf(t *testing.T, md, heading string) string {
	t.Helper()
	i := strings.Index(md, heading+"\n")
	if i < 0 {
		t.Fatalf("no %q in the report", heading)
	}
	level := heading[:strings.Index(heading, " ")+1]
	rest := md[i+len(heading):]
	if j := strings.Index(rest, "\n"+level); j >= 0 {
		rest = rest[:j+1]
	}
	return heading + rest
}

// The fixtures are the real analysis' results of internal/analysis' crafted routes (a real
// Prometheus: circulation's check-out 150 % slower in the second run, the other routes alike;
// ROUTES_FIXTURES=1 go test ./internal/analysis -run TestCraftedRoutes writes them).
func TestSlowestAPIsTable(t *testing.T) {
	run, base := fixture(t, "routes.run.results.json"), fixture(t, "routes.baseline.results.json")
	t.Run("run report", func(t *testing.T) {
		got := sectionOf(t, Markdown(run), "## Slowest APIs")
		golden(t, "routes.report.md.golden", []byte(got))
		var checkout string
		for _, l := range strings.Split(got, "\n") {
			if strings.HasPrefix(l, "| shop/circulation | check-out |") {
				checkout = l
			}
		}
		if !strings.Contains(checkout, "p95 Regressed") || !strings.Contains(checkout, "avg Regressed") || !strings.Contains(checkout, "+14") {
			t.Errorf("check-out's row does not name it Regressed by about +150 %%: %q", checkout)
		}
		if n := strings.Count(got, "p95 NoMeaningfulChange"); n != 2 {
			t.Errorf("%d routes read no meaningful change, want 2:\n%s", n, got)
		}
		// The routes' rows are in their own table, not among the other compared metrics.
		if other := Markdown(run); strings.Contains(other, "| shop/circulation check-out p95 (server) |") {
			t.Error("a route's row is in Other compared metrics too")
		}
	})
	t.Run("a run without a baseline has no change columns", func(t *testing.T) {
		got := sectionOf(t, Markdown(base), "## Slowest APIs")
		if strings.Contains(got, "Δ") || !strings.Contains(got, "| shop/circulation | check-out |") {
			t.Errorf("%s", got)
		}
	})
	t.Run("sweep report: a table per route, a row per arm", func(t *testing.T) {
		sw := &SweepResult{Sweep: "release", Namespace: "shop", Repeats: 1, MinMeaningfulChangePercent: 5, Arms: []SweepArmResult{
			{Name: perfexpv1alpha1.BaselineArm, Experiments: []string{"release-1"}, Succeeded: 1, Routes: sweepRoutes(base)},
			{Name: "release-2", Parameter: "image", Value: "2", Baseline: perfexpv1alpha1.BaselineArm, Experiments: []string{"release-2"}, Succeeded: 1,
				Routes: sweepRoutes(run), Comparison: run.Comparison},
		}}
		md := SweepMarkdown(sw)
		got := sectionOf(t, md, "## Slowest APIs")
		golden(t, "routes.sweep.md.golden", []byte(got))
		first := got[strings.Index(got, "\n### ")+1:]
		if !strings.HasPrefix(first, "### shop/circulation check-out (server)") || !strings.Contains(sectionOf(t, first, "### shop/circulation check-out (server)"), "Regressed") {
			t.Errorf("the route that moved is not first, or not Regressed:\n%s", got)
		}
		sw.Report = &perfexpv1alpha1.SweepReport{Sections: []perfexpv1alpha1.SweepReportSection{perfexpv1alpha1.SweepSectionServices}}
		if strings.Contains(SweepMarkdown(sw), "## Slowest APIs") {
			t.Error("spec.report.sections without Routes still shows them")
		}
	})
}

// sweepRoutes is a run's routes as a sweep arm of one run holds them.
func sweepRoutes(r *result.Result) []SweepRouteStats {
	var out []SweepRouteStats
	for _, rr := range r.Routes {
		out = append(out, SweepRouteStats{Workload: rr.Workload, Route: rr.Route, Runs: 1, Rate: rr.Rate, ErrorPercent: rr.ErrorPercent,
			Avg: rr.Avg, P50: rr.P50, P75: rr.P75, P95: rr.P95, P99: rr.P99})
	}
	return out
}
