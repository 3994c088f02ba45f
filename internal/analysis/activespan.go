package analysis

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/perfexp/perfexp/internal/result"
)

// activeSpan is when a scenario's requests were counted: the times of its first and last
// request-counter samples, and the resolution they were read at. Rates are divided by the part
// of a window a scenario was active, so a scenario with a start delay (or one that ends early)
// is not diluted by the time it was not running.
type activeSpan struct {
	first, last time.Time
	// res is the subquery step the times were read at: each is exact to within it.
	res time.Duration
}

// k6PushInterval is how often k6's remote write pushes (K6_PROMETHEUS_RW_PUSH_INTERVAL's
// default). A push carries the time of the last sample it holds, so a scenario's first sample
// counts what it did in the push interval before it.
const k6PushInterval = 5 * time.Second

// readActiveSpans reads each scenario's first and last sample times in [from, to]. timestamp()
// of a plain selector is a sample's own time, so a subquery finds the earliest and latest
// sample that was current at any step; the step (at least 5 s, k6's default push interval;
// about 720 steps per window) bounds the error. The iterations counter is read first: it has one series per scenario and
// runner, where the request counter has one per request name and status too, and the subquery
// costs steps times series. Scenarios without iteration samples are read from the request
// counter.
func readActiveSpans(ctx context.Context, q Querier, testID string, scenarios []string, from, to time.Time) (map[string]activeSpan, error) {
	out := map[string]activeSpan{}
	if err := spansOf(ctx, q, metricIterations, testID, nil, from, to, out); err != nil {
		return nil, err
	}
	var missing []string
	for _, s := range scenarios {
		if _, ok := out[s]; !ok {
			missing = append(missing, s)
		}
	}
	if len(missing) == 0 {
		return out, nil
	}
	if err := spansOf(ctx, q, metricRequests, testID, missing, from, to, out); err != nil {
		return nil, err
	}
	return out, nil
}

func spansOf(ctx context.Context, q Querier, metric, testID string, scenarios []string, from, to time.Time, out map[string]activeSpan) error {
	w := to.Sub(from)
	step := max(5*time.Second, (w / 720).Round(time.Second))
	sel := fmt.Sprintf("%s{testid=%s}", metric, quote(testID))
	if len(scenarios) > 0 {
		sel = fmt.Sprintf("%s{testid=%s,%s=~%s}", metric, quote(testID), tagScenario, quote(anyOf(scenarios)))
	}
	for _, agg := range []string{"min", "max"} {
		query := fmt.Sprintf("%s by (%s) (%s_over_time(timestamp(%s)[%s:%s]))", agg, tagScenario, agg, sel, promDuration(w), promDuration(step))
		vec, err := vector(ctx, q, query, to)
		if err != nil {
			return err
		}
		for _, s := range vec {
			v := float64(s.Value)
			if !result.Finite(v) {
				continue
			}
			sec, frac := math.Modf(v)
			t := time.Unix(int64(sec), int64(frac*1e9))
			name := string(s.Metric[tagScenario])
			sp := out[name]
			sp.res = step
			if agg == "min" {
				sp.first = t
			} else {
				sp.last = t
			}
			out[name] = sp
		}
	}
	return nil
}

// seconds is how long the scenario was active within [a, b]; the whole window when its span is
// unknown. It began one push interval before its first sample (whose count covers that
// interval) and ended at its last; within one push interval or subquery step of an edge it
// ran across that edge. (A fixed 30 s slack took a 10 s scenario of a 30 s test for one that
// ran the whole window.)
func (sp activeSpan) seconds(a, b time.Time) float64 {
	if sp.first.IsZero() || sp.last.IsZero() {
		return b.Sub(a).Seconds()
	}
	slack := max(k6PushInterval, sp.res)
	start, stop := a, b
	if begin := sp.first.Add(-k6PushInterval); begin.Sub(a) > slack-k6PushInterval {
		start = begin
	}
	if b.Sub(sp.last) > slack {
		stop = sp.last
	}
	if !stop.After(start) {
		return 0
	}
	return stop.Sub(start).Seconds()
}

// union is the span of several scenarios together.
func union(spans map[string]activeSpan, scenarios []string) activeSpan {
	var u activeSpan
	for _, s := range scenarios {
		sp, ok := spans[s]
		if !ok || sp.first.IsZero() || sp.last.IsZero() {
			return activeSpan{}
		}
		if u.first.IsZero() || sp.first.Before(u.first) {
			u.first = sp.first
		}
		if sp.last.After(u.last) {
			u.last = sp.last
		}
		u.res = max(u.res, sp.res)
	}
	return u
}
