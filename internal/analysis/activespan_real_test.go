package analysis

import (
	"context"
	"math"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/perfexp/perfexp/internal/analysis/promtest"
	"github.com/perfexp/perfexp/internal/result"
)

// spanScript is the shape of the course script: browse at 20 requests a second for the
// whole 30 s, burst at 50 a second for 10 s from 10 s on.
const spanScript = `import http from 'k6/http';
export const options = { scenarios: {
  browse: { executor: 'constant-arrival-rate', rate: 20, timeUnit: '1s', duration: '30s', preAllocatedVUs: 5 },
  burst: { executor: 'constant-arrival-rate', rate: 50, timeUnit: '1s', duration: '10s', startTime: '10s', preAllocatedVUs: 5, exec: 'burst' },
} };
export default function () { http.get(__ENV.BASE); }
export function burst() { http.get(__ENV.BASE); }
`

// Story: a real k6 pushing at its default 5 s interval into a real Prometheus. Each k6
// scenario's rate is over its own active span: burst's 500 requests over about 10 s, not over
// the 31 s of the whole test (which read 16/s, a third of its rate).
func TestRealK6ScenarioActiveSpans(t *testing.T) {
	prom := promtest.Start(t)
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	defer srv.Close()
	const id = "span-real"
	start := time.Now().Truncate(time.Second)
	prom.RunK6(t, promtest.K6Run{Script: spanScript, TestID: id, Env: map[string]string{"BASE": srv.URL},
		OutputEnv: map[string]string{"K6_PROMETHEUS_RW_PUSH_INTERVAL": "5s"}})
	end := time.Now().Add(time.Second).Truncate(time.Second)
	res, err := Analyze(context.Background(), prom.API(t), Input{Experiment: id, TestID: id, Start: start, End: end, Scenarios: []string{"browse", "burst"}})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]result.ScenarioResult{}
	for _, s := range res.Scenarios {
		got[s.Name] = s
		t.Logf("%s: %v requests, %v/s over %v s (window %s)", s.Name, deref(s.RequestStats.Requests), deref(s.Rate), deref(s.ActiveSeconds), end.Sub(start))
	}
	near := func(p *float64, want, tol float64) bool { return p != nil && math.Abs(*p-want) <= tol }
	if b := got["burst"]; !near(b.ActiveSeconds, 10, 2.5) || !near(b.Rate, 50, 12) {
		t.Errorf("burst: %v/s over %v s, want about 50/s over about 10 s", deref(b.Rate), deref(b.ActiveSeconds))
	}
	if b := got["browse"]; !near(b.ActiveSeconds, 30, 2.5) || !near(b.Rate, 20, 3) {
		t.Errorf("browse: %v/s over %v s, want about 20/s over about 30 s", deref(b.Rate), deref(b.ActiveSeconds))
	}
}
