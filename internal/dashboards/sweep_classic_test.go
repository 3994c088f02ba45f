package dashboards_test

import (
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/perfexp/perfexp/internal/analysis/promtest"
	"github.com/perfexp/perfexp/internal/dashboards"
)

// Story: a sweep's runs went to a Prometheus without native histograms, so k6 wrote only its
// trend-stat gauges (K6_PROMETHEUS_RW_TREND_AS_NATIVE_HISTOGRAM=false). The sweep dashboard's
// latency panels still show every run, each with the largest of its runners' last p95, as
// trendStatNote promises. The series are written directly: the panels only read the gauges,
// and TestDashboardOnClassicK6Run already shows k6 writes them so.
func TestSweepDashboardOnClassicK6Runs(t *testing.T) {
	prom := promtest.Start(t)
	now := time.Now().Truncate(time.Second)
	from := now.Add(-10 * time.Minute)
	// Two runs of two runners each; the runners' p95 grows over the run, and the second
	// runner ends higher, so the panel must take the largest of the last values.
	runs := []struct {
		testID, arm string
		last        [2]float64 // each runner's last p95, in seconds
	}{{baselineID, "baseline", [2]float64{0.012, 0.015}}, {variantID, "v1", [2]float64{0.031, 0.027}}}
	var series []promtest.Series
	for i, r := range runs {
		start := from.Add(time.Duration(1+4*i) * time.Minute)
		end := start.Add(3 * time.Minute)
		for j, last := range r.last {
			s := promtest.Series{Labels: map[string]string{"__name__": "k6_http_req_duration_p95", "testid": r.testID,
				"scenario": "default", "instance": fmt.Sprint("runner-", j)}}
			for ts := start; !ts.After(end); ts = ts.Add(5 * time.Second) {
				s.Floats = append(s.Floats, promtest.Float{T: ts, V: last * ts.Sub(start).Seconds() / end.Sub(start).Seconds()})
			}
			series = append(series, s)
		}
		info := promtest.Series{Labels: map[string]string{"__name__": "perfexp_sweep_run_info", "job": "perfexp-manager",
			"namespace": ns, "sweep": sweepName, "name": "pool-" + r.arm + "-1", "testid": r.testID, "arm": r.arm, "repeat": "1"}}
		for ts := start.Add(-30 * time.Second); !ts.After(now); ts = ts.Add(5 * time.Second) {
			info.Floats = append(info.Floats, promtest.Float{T: ts, V: 1})
		}
		series = append(series, info)
	}
	prom.Write(t, series)

	d := dashboards.Sweep()
	g := &grafana{api: prom.API(t), from: from, to: now, vars: map[string][]string{
		"datasource": {"prometheus"}, "namespace": {ns}, "sweep": {sweepName}, "testid": {baselineID, variantID}}}
	want := map[string]float64{}
	for _, r := range runs {
		want[r.arm] = math.Max(r.last[0], r.last[1])
	}
	checked := 0
	for _, p := range d.Panels {
		if p.Title != "p95 of every run, by arm" && p.Title != "p95 latency per run" {
			continue
		}
		for _, tg := range p.Targets {
			checked++
			a := g.run(t, tg)
			got := map[string]float64{}
			for _, s := range a.series {
				last := math.NaN()
				for _, v := range s.values {
					if !math.IsNaN(v) {
						last = v
					}
				}
				got[string(s.labels["arm"])] = last
			}
			if len(got) != len(want) {
				t.Errorf("%s/%s: runs %v, want one for each arm of %v (%s)", p.Title, tg.RefID, got, want, a.expr)
				continue
			}
			for arm, w := range want {
				if math.Abs(got[arm]-w) > 1e-12 {
					t.Errorf("%s/%s: arm %s p95 %v s, want the largest runner's last %v s", p.Title, tg.RefID, arm, got[arm], w)
				}
			}
			t.Logf("%s/%s: %v", p.Title, tg.RefID, got)
		}
	}
	if checked != 2 {
		t.Errorf("checked %d latency targets, want 2: the sweep dashboard's latency panels were renamed", checked)
	}
}
