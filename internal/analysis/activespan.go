package analysis

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/perfexp/perfexp/internal/result"
)

// activeSpan is when a scenario's requests were counted: the times of its first and last
// request-counter samples. Rates are divided by the part of a window a scenario was active, so
// a scenario with a start delay (or one that ends early) is not diluted by the time it was not
// running.
type activeSpan struct{ first, last time.Time }

// spanSlack is how far from a window's edge the first or last sample may be and still count
// as running across the edge: k6 pushes every few seconds, so a running scenario's nearest
// sample is always that close.
const spanSlack = 30 * time.Second

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
// unknown or it ran across both edges. A first sample before a, or within spanSlack of it,
// means it was running at a; likewise at b.
func (sp activeSpan) seconds(a, b time.Time) float64 {
	if sp.first.IsZero() || sp.last.IsZero() {
		return b.Sub(a).Seconds()
	}
	start, stop := a, b
	if sp.first.Sub(a) > spanSlack {
		start = sp.first
	}
	if b.Sub(sp.last) > spanSlack {
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
	}
	return u
}
