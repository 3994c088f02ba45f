package analysis

import (
	"strings"
	"testing"

	"github.com/perfexp/perfexp/internal/analysis/result"
)

// Story: only the script's own Counters and Rates are custom; k6's built-ins (requests,
// iterations, data, failed requests) are read elsewhere or not at all.
func TestCheckAndCounterKinds(t *testing.T) {
	tests := []struct{ metric, kind, name string }{
		{"k6_checks_rate", "check", ""},
		{"k6_baskets_total", "counter", "baskets"},
		{"k6_heavy_basket_rate", "rate", "heavy_basket"},
		{"k6_http_reqs_total", "", ""},
		{"k6_http_req_failed_rate", "", ""},
		{"k6_iterations_total", "", ""},
		{"k6_dropped_iterations_total", "", ""},
		{"k6_data_sent_total", "", ""},
		{"k6_ws_msgs_sent_total", "", ""},
		{"k6_basket_weight", "", ""},
		{"other_total", "", ""},
	}
	for _, tc := range tests {
		t.Run(tc.metric, func(t *testing.T) {
			if got := customKind(tc.metric); got != tc.kind {
				t.Errorf("kind %q, want %q", got, tc.kind)
			}
			if tc.name != "" && customName(tc.metric) != tc.name {
				t.Errorf("name %q, want %q", customName(tc.metric), tc.name)
			}
		})
	}
}

// Story: the experiment's status names only the failing checks, lowest first, at most eight,
// and never shows a failing check as 100.
func TestStatusFailingChecks(t *testing.T) {
	pct := func(v float64) *float64 { return &v }
	var many []result.CheckResult
	for i := range 12 {
		many = append(many, result.CheckResult{Name: "c" + string(rune('a'+i)), PassPercent: pct(50 + float64(i))})
	}
	tests := []struct {
		name   string
		checks []result.CheckResult
		want   []string
	}{
		{"all pass", []result.CheckResult{{Name: "ok", PassPercent: pct(100)}}, nil},
		{"lowest first", []result.CheckResult{{Name: "ok", PassPercent: pct(100)}, {Name: "b", PassPercent: pct(90)}, {Name: "a", PassPercent: pct(66.666)}, {Name: "n", PassPercent: pct(99.9999)}},
			[]string{"a=66.66", "b=90", "n=99.99"}},
		{"bounded", many, []string{"ca=50", "cb=51", "cc=52", "cd=53", "ce=54", "cf=55", "cg=56", "ch=57"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := &result.Result{Scenarios: []result.ScenarioResult{{Name: "desk", Checks: tc.checks}}}
			st, _ := r.Status()
			var got []string
			for _, c := range st.Scenarios[0].FailingChecks {
				got = append(got, c.Name+"="+c.PassPercent)
			}
			if strings.Join(got, " ") != strings.Join(tc.want, " ") {
				t.Errorf("failing checks %v, want %v", got, tc.want)
			}
		})
	}
}
