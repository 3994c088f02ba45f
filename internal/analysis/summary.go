package analysis

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/perfexp/perfexp/internal/result"
)

// K6Summary is what the cross-check reads from a k6 runner's end-of-test summary (the JSON of
// k6 --summary-export).
type K6Summary struct {
	// Requests and Failed count http_reqs and the failed ones (http_req_failed's passes).
	Requests, Failed int64
	// Iterations counts iterations.
	Iterations int64
	// Duration holds http_req_duration's stats in milliseconds, keyed as k6 names them
	// (avg, max, p(95), ...).
	Duration map[string]float64
	// Scenarios are the counts per k6 scenario, from the submetrics http_reqs{scenario:NAME} and
	// http_req_failed{scenario:NAME} that the entry script declares for a script running its own
	// scenarios (fromScript); empty otherwise.
	Scenarios map[string]K6ScenarioCounts
}

// K6ScenarioCounts are one k6 scenario's requests and failed requests in a summary.
type K6ScenarioCounts struct{ Requests, Failed int64 }

// ParseK6Summary reads a --summary-export document.
func ParseK6Summary(b []byte) (K6Summary, error) {
	// Statistics are numbers; other members (a metric's "thresholds") are skipped.
	var doc struct {
		Metrics map[string]map[string]json.RawMessage `json:"metrics"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		return K6Summary{}, fmt.Errorf("reading a k6 summary: %w", err)
	}
	stat := func(metric, name string) float64 {
		var v float64
		_ = json.Unmarshal(doc.Metrics[metric][name], &v)
		return v
	}
	d := map[string]float64{}
	for k, raw := range doc.Metrics["http_req_duration"] {
		var v float64
		if json.Unmarshal(raw, &v) == nil {
			d[k] = v
		}
	}
	sc := map[string]K6ScenarioCounts{}
	for key := range doc.Metrics {
		if name, ok := strings.CutPrefix(key, "http_reqs{scenario:"); ok && strings.HasSuffix(name, "}") {
			name = strings.TrimSuffix(name, "}")
			sc[name] = K6ScenarioCounts{Requests: int64(stat(key, "count")), Failed: int64(stat("http_req_failed{scenario:"+name+"}", "passes"))}
		}
	}
	return K6Summary{
		Requests:   int64(stat("http_reqs", "count")),
		Failed:     int64(stat("http_req_failed", "passes")),
		Iterations: int64(stat("iterations", "count")),
		Duration:   d,
		Scenarios:  sc,
	}, nil
}

// CrossCheck compares the results with the runners' own summaries, keyed <scenario>-<pod
// index>.json, and returns a note for every scenario whose counts differ, and how many
// summaries of declared scenarios were compared. The summaries cover the whole scenario; the
// scenarios' series start after the warm-up, so the counts must be equal.
//
// A summary with counts per k6 scenario (a script running its own scenarios) is compared per k6
// scenario; compared counts each summary once however many of its scenarios were compared.
func CrossCheck(r *result.Result, summaries map[string]K6Summary) (notes []string, compared int) {
	type sums struct {
		reqs, failed int64
		keys         []string
	}
	per := map[string]*sums{}
	add := func(scenario, key string, reqs, failed int64) {
		if per[scenario] == nil {
			per[scenario] = &sums{}
		}
		per[scenario].reqs += reqs
		per[scenario].failed += failed
		per[scenario].keys = append(per[scenario].keys, key)
	}
	for key, s := range summaries {
		if len(s.Scenarios) == 0 {
			add(scenarioOfSummaryKey(key), key, s.Requests, s.Failed)
		}
		for name, c := range s.Scenarios {
			add(name, key, c.Requests, c.Failed)
		}
	}
	seen := map[string]bool{}
	for _, sc := range r.Scenarios {
		want := per[sc.Name]
		if want == nil || sc.RequestStats.Requests == nil {
			continue
		}
		for _, k := range want.keys {
			if !seen[k] {
				seen[k] = true
				compared++
			}
		}
		if *sc.RequestStats.Requests != want.reqs || (sc.Errors != nil && *sc.Errors != want.failed) {
			errs := "absent"
			if sc.Errors != nil {
				errs = fmt.Sprint(*sc.Errors)
			}
			notes = append(notes, fmt.Sprintf("scenario %s: Prometheus holds %d requests (%s failed), the k6 runners' summaries %d (%d failed)",
				sc.Name, *sc.RequestStats.Requests, errs, want.reqs, want.failed))
		}
	}
	sort.Strings(notes)
	return notes, compared
}

// scenarioOfSummaryKey strips "-<index>.json".
func scenarioOfSummaryKey(key string) string {
	k := strings.TrimSuffix(key, ".json")
	if i := strings.LastIndex(k, "-"); i > 0 {
		return k[:i]
	}
	return k
}
