package result

import (
	"fmt"
	"testing"
)

// Story: a script with many groups and Trends still leaves a small status, within the CRD's
// bounds (10 groups, 8 Trends per scenario): the most frequent groups, the Trends by name.
func TestStatusKeepsTheTopGroupsAndTrends(t *testing.T) {
	tests := []struct {
		name               string
		groups, trends     int
		wantGroups, wantTr int
	}{
		{"few", 2, 1, 2, 1},
		{"capped", 25, 12, statusTopGroups, statusTopTrends},
		{"none", 0, 0, 0, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sr := ScenarioResult{Name: "desk"}
			for i := range tc.groups {
				avg := 1.5 + float64(i)
				sr.Groups = append(sr.Groups, GroupResult{Name: fmt.Sprintf("g%02d", i), Count: Count(int64(100 - i)), Latency: Latency{Avg: &avg}})
			}
			for i := range tc.trends {
				sr.Trends = append(sr.Trends, TrendResult{Name: fmt.Sprintf("t%02d", i), Unit: "ms", Count: Count(7)})
			}
			r := &Result{Scenarios: []ScenarioResult{sr}}
			st, _ := r.Status()
			got := st.Scenarios[0]
			if len(got.Groups) != tc.wantGroups || len(got.Trends) != tc.wantTr {
				t.Fatalf("%d groups and %d Trends in status, want %d and %d", len(got.Groups), len(got.Trends), tc.wantGroups, tc.wantTr)
			}
			if tc.groups > 0 && (got.Groups[0].Name != "g00" || *got.Groups[0].Count != 100 || got.Groups[0].Avg != "1.5") {
				t.Errorf("first group %+v, want g00 with 100 executions, avg 1.5", got.Groups[0])
			}
			if tc.trends > 0 && (got.Trends[0].Unit != "ms" || got.Trends[0].P95 != "") {
				t.Errorf("first Trend %+v: unit ms, absent p95 stays empty", got.Trends[0])
			}
		})
	}
}
