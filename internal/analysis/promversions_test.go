package analysis

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/prometheus/common/model"

	"github.com/perfexp/perfexp/internal/analysis/promtest"
)

// render is a query's answer in a few words: "empty", "float 2", "histogram count 6".
func render(v model.Value) string {
	vec, ok := v.(model.Vector)
	if !ok {
		return "not a vector: " + v.Type().String()
	}
	if len(vec) == 0 {
		return "empty"
	}
	if len(vec) > 1 {
		return fmt.Sprintf("%d series", len(vec))
	}
	if h := vec[0].Histogram; h != nil {
		return fmt.Sprintf("histogram count %g", float64(h.Count))
	}
	return fmt.Sprintf("float %g", float64(vec[0].Value))
}

// Story: the PromQL behaviours that changed between Prometheus 2.42 (Debian) and 3.x (what
// kube-prometheus-stack runs), pinned on crafted series so a new release that changes one again
// shows up here first. Each row says what the analysis does about it; docs/install.md
// ("Prometheus versions") lists the same facts.
func TestPrometheusVersionDifferencesTheQueriesAreWrittenFor(t *testing.T) {
	prom := promtest.Start(t)
	t.Logf("Prometheus %s", prom.Version)
	at := time.Now().Add(-10 * time.Minute).Truncate(time.Minute)
	h := promtest.NewNativeHistogram()
	var hs []promtest.HistogramSample
	for i := 2; i >= 0; i-- { // counts 2, 4, 6 at at-2m, at-1m, at
		h.Observe(0.01, 0.02)
		hs = append(hs, promtest.HistogramSample{T: at.Add(-time.Duration(i) * time.Minute), H: h.Snapshot()})
	}
	prom.Write(t, []promtest.Series{
		{Labels: map[string]string{"__name__": "probe_counter"}, Floats: []promtest.Float{{T: at.Add(-2 * time.Minute), V: 1}, {T: at.Add(-time.Minute), V: 2}, {T: at, V: 3}}},
		{Labels: map[string]string{"__name__": "probe_hist"}, Histograms: hs},
		{Labels: map[string]string{"__name__": "probe_quiet"}, Floats: []promtest.Float{{T: at.Add(-5 * time.Minute), V: 7}}},
		{Labels: map[string]string{"__name__": "probe_newline", "v": "a\nb"}, Floats: []promtest.Float{{T: at, V: 1}}},
	})
	v3 := prom.Version.Major >= 3
	tests := []struct {
		name, query string
		v2, v3      string
	}{
		// Edges are read with ranges that start long before the run (lookBefore) and end at the
		// edge, which is right-closed in both: a sample exactly at an edge counts before it.
		{"a range no longer holds a sample exactly at its start", "count_over_time(probe_counter[1m])", "float 2", "float 1"},
		// The edge reading's instant and offset queries and its 4-minute subquery cover every
		// last sample under either rule (TestCraftedEdgesOnLookbackAndSubqueryBoundaries).
		{"the lookback no longer sees a sample exactly 5m old", "probe_quiet", "float 7", "empty"},
		// Histograms are therefore subtracted and picked in Go (histogram.go, edges.go): 2.42
		// answers a float 0 without a warning.
		{"last_over_time of a native histogram", "last_over_time(probe_hist[3m])", "float 0", "histogram count 6"},
		{"subtracting native histograms", "probe_hist - probe_hist offset 1m", "float 0", "histogram count 2"},
		// floatsAt reads counters with max_over_time and skips any histogram in the answer.
		{"max_over_time of a native histogram", "max_over_time(probe_hist[3m])", "float 0", "empty"},
		// Label values are matched with anyOf and PodPattern, which quote every value, so a
		// "." never stands for a newline; users' own queries may (docs/install.md).
		{"a regex dot matches a newline", `probe_newline{v=~"a.b"}`, "empty", "float 1"},
		// Not used by perfexp; users' own queries may (docs/install.md).
		{"holt_winters is gone (double_exponential_smoothing, experimental)", "holt_winters(probe_counter[3m], 0.5, 0.5)", "float 3", "refused"},
		// Unchanged, and what the analysis relies on.
		{"an instant query of a native histogram", "probe_hist offset 1m", "histogram count 4", "histogram count 4"},
		{"sum of native histograms", "sum(probe_hist)", "histogram count 6", "histogram count 6"},
	}
	api := prom.API(t)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			want := tc.v2
			if v3 {
				want = tc.v3
			}
			v, _, err := api.Query(context.Background(), tc.query, at)
			got := "refused"
			if err == nil {
				got = render(v)
			} else if want != got {
				t.Fatal(err)
			}
			if got != want {
				t.Errorf("Prometheus %s: %s = %s, want %s", prom.Version, tc.query, got, want)
			}
		})
	}
}
