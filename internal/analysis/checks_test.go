package analysis

import (
	"testing"
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
