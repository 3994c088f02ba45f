package report

import (
	"strings"
	"testing"

	"github.com/perfexp/perfexp/internal/result"
)

// Story: a reader finds the transactions of each scenario and the script's own Trends in
// tables of their own, and no empty sections when the script has neither.
func TestMarkdownTransactionsAndCustomMetrics(t *testing.T) {
	dist := func(avg, p95 float64) result.Latency {
		return result.Latency{Avg: f(avg), P50: f(avg * 0.9), P75: f(avg * 1.1), P90: f(p95 * 0.9), P95: f(p95), P99: f(p95 * 1.5), Max: f(p95 * 3)}
	}
	withGroups := func() *result.Result {
		r := sample()
		r.Scenarios[0].Groups = []result.GroupResult{
			{Name: "check-out", Count: n(24000), Rate: f(40), Latency: dist(1989.25, 3120.5)},
			{Name: "check-in", Count: n(24000), Rate: f(40), Latency: dist(967.125, 1500)},
			{Name: "outer::a|b", Count: n(3), Latency: dist(10, 12)},
		}
		r.Scenarios[0].Trends = []result.TrendResult{
			{Name: "basket_items", Metric: "k6_basket_items", Count: n(24000), Latency: dist(3, 5)},
			{Name: "checkout_transaction", Metric: "k6_checkout_transaction_seconds", Unit: "ms", Count: n(23990), Latency: dist(1900.5, 3000)},
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
			name:   "groups and Trends",
			result: withGroups(),
			want: []string{
				"## Transactions\n",
				"### Scenario checkinout\n\n| Transaction | Count | Rate (/s) | Avg | p50 | p75 | p90 | p95 | Max |",
				"| check-out | 24000 | 40.00 | 1989.250 | 1790.325 | 2188.175 | 2808.450 | 3120.500 | 9361.500 |",
				"| check-in | 24000 | 40.00 | 967.125 |",
				`| outer::a\|b | 3 | - | 10.000 |`,
				"## Custom metrics\n",
				"| checkinout | basket_items | - | 24000 | 3.000 |",
				"| checkinout | checkout_transaction | ms | 23990 | 1900.500 |",
			},
		},
		{
			name:    "neither",
			result:  sample(),
			notWant: []string{"## Transactions", "## Custom metrics"},
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
			// The sections sit after the response times and before the comparison.
			if i, j := strings.Index(md, "## Transactions"), strings.Index(md, "## Response times"); i >= 0 && i < j {
				t.Errorf("Transactions come before Response times")
			}
			if t.Failed() {
				t.Log(md)
			}
		})
	}
}
