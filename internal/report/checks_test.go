package report

import (
	"strings"
	"testing"

	"github.com/perfexp/perfexp/internal/result"
)

// Story: a reader sees each scenario's iteration duration, which checks failed (marked, never
// rounded up to 100 %), and the script's Counters and Rates; none of it when the run has none.
func TestMarkdownIterationsChecksAndCounters(t *testing.T) {
	with := func() *result.Result {
		r := sample()
		s := &r.Scenarios[0]
		s.IterationDuration = &result.Latency{Avg: f(2030.5), P50: f(2000), P75: f(2100), P90: f(2500), P95: f(2700), Max: f(4000)}
		s.Checks = []result.CheckResult{
			{Name: "status is 200", PassPercent: f(100), Series: 2},
			{Name: "body has id", PassPercent: f(66.67), Series: 2},
			{Name: "nearly | always", PassPercent: f(99.9996), Series: 1},
		}
		s.Counters = []result.CounterResult{{Name: "list_refresh_stuck", Metric: "k6_list_refresh_stuck_total", Total: f(3), Rate: f(0.005)}}
		s.Rates = []result.RateResult{{Name: "heavy_basket", Metric: "k6_heavy_basket_rate", Percent: f(30.125)}}
		s.Gauges = []result.GaugeResult{
			{Name: "queue_depth", Metric: "k6_queue_depth", Last: f(15), Min: f(11), Max: f(33.5), Series: 1},
			{Name: "lag", Metric: "k6_lag", Min: f(1), Max: f(2), Series: 3},
		}
		return r
	}
	tests := []struct {
		name    string
		result  *result.Result
		want    []string
		notWant []string
	}{
		{
			name:   "all parts",
			result: with(),
			want: []string{
				"## Iterations and checks\n",
				"| checkinout | 24000 | 2030.500 | 2000.000 | 2100.000 | 2500.000 | 2700.000 | 4000.000 |",
				"| checkinout | status is 200 | 100.00 |  |",
				"| checkinout | body has id | 66.67 | **failing** |",
				`| checkinout | nearly \| always | <100.00 | **failing** |`,
				"| checkinout | list_refresh_stuck | Counter | 3 | 0.01 | - | - |",
				"| checkinout | heavy_basket | Rate | 30.125% | - | - | - |",
				"| checkinout | queue_depth | Gauge | 15 | - | 11 | 33.5 |",
				"| checkinout | lag | Gauge | - | - | 1 | 2 |",
			},
		},
		{
			name:    "none",
			result:  sample(),
			notWant: []string{"## Iterations and checks", "| Check |"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			md := Markdown(tc.result)
			for _, w := range tc.want {
				if !strings.Contains(md, w) {
					t.Errorf("the report lacks %q", w)
				}
			}
			for _, w := range tc.notWant {
				if strings.Contains(md, w) {
					t.Errorf("the report has %q", w)
				}
			}
			if t.Failed() {
				t.Log(md)
			}
		})
	}
}
