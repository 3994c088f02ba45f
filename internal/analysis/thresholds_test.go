package analysis

import (
	"reflect"
	"testing"

	"github.com/perfexp/perfexp/internal/result"
)

func TestParseThresholds(t *testing.T) {
	sums := map[string]string{
		// --summary-export: expression -> failed
		"browse-0.json": `{"metrics":{"http_req_duration":{"avg":12,"p(95)":620,"thresholds":{"p(95)<500":true}},"http_req_failed":{"value":0,"thresholds":{"rate<0.01":false}}}}`,
		"browse-1.json": `{"metrics":{"http_req_duration":{"avg":12,"thresholds":{"p(95)<500":false}}}}`,
		// handleSummary's data: expression -> {ok}
		"check-out-0.json": `{"metrics":{"http_req_duration":{"values":{},"thresholds":{"p(95)<500":{"ok":false}}}}}`,
		// warm-up is not measured
		"warm-up-0.json": `{"metrics":{"checks":{"thresholds":{"rate>0.99":true}}}}`,
		"broken-0.json":  `{`,
	}
	got := ParseThresholds(sums)
	want := []result.ThresholdResult{
		{Metric: "http_req_duration", Expression: "p(95)<500", Crossed: true, Scenarios: []string{"browse", "check-out"}},
		{Metric: "http_req_failed", Expression: "rate<0.01"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v\nwant %+v", got, want)
	}
	if ParseThresholds(map[string]string{"a-0.json": `{"metrics":{"iterations":{"count":3}}}`}) != nil {
		t.Error("a summary without thresholds gave thresholds")
	}
}
