package result

import (
	"strings"
	"testing"
)

// Story: the experiment's status names only the failing checks, lowest first, at most eight,
// and never shows a failing check as 100.
func TestStatusFailingChecks(t *testing.T) {
	pct := func(v float64) *float64 { return &v }
	var many []CheckResult
	for i := range 12 {
		many = append(many, CheckResult{Name: "c" + string(rune('a'+i)), PassPercent: pct(50 + float64(i))})
	}
	tests := []struct {
		name   string
		checks []CheckResult
		want   []string
	}{
		{"all pass", []CheckResult{{Name: "ok", PassPercent: pct(100)}}, nil},
		{"lowest first", []CheckResult{{Name: "ok", PassPercent: pct(100)}, {Name: "b", PassPercent: pct(90)}, {Name: "a", PassPercent: pct(66.666)}, {Name: "n", PassPercent: pct(99.9999)}},
			[]string{"a=66.66", "b=90", "n=99.99"}},
		{"bounded", many, []string{"ca=50", "cb=51", "cc=52", "cd=53", "ce=54", "cf=55", "cg=56", "ch=57"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := &Result{Scenarios: []ScenarioResult{{Name: "desk", Checks: tc.checks}}}
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
