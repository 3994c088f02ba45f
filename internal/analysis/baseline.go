package analysis

import (
	"context"
	"time"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/judge"
	"github.com/perfexp/perfexp/internal/result"
)

// compareWithBaseline compares the run with in.Baseline on the per-interval data cur (read
// from ms, step apart).
func compareWithBaseline(ctx context.Context, q Querier, in Input, r *result.Result, cur *result.IntervalData, ms time.Time, step time.Duration, keep map[result.IntervalKey]bool) (*result.Comparison, error) {
	b := in.Baseline
	opts, note := judge.OptionsFor(in.Analysis)
	opts.History = in.History
	var base *result.IntervalData
	compared := cur
	if judge.BaselineProblem(r, b) == "" {
		var err error
		// A baseline's own stored intervals are used when it has them: Prometheus may no
		// longer hold its samples.
		switch base = b.Result.Intervals; {
		case base == nil:
			bms := b.Start
			if !b.WarmUpEnd.IsZero() {
				bms = b.WarmUpEnd
			}
			if base, err = readIntervals(ctx, q, b.TestID, in.Scenarios, bms, b.End, step, keep, true); err != nil {
				return nil, err
			}
		case !judge.SuccessfulIntervals(base, b.Result):
			// The baseline kept all its requests' latency: compare like with like.
			if compared, err = readIntervals(ctx, q, in.TestID, in.Scenarios, ms, in.End, step, keep, false); err != nil {
				return nil, err
			}
			compared.Workloads = cur.Workloads
			compared.Routes = cur.Routes
		}
	}
	c := judge.Compare(r, compared, b, base, opts)
	if note != "" {
		c.Notes = append(c.Notes, note)
	}
	return c, nil
}

// intervalNames are the request names, groups and custom Trends whose per-interval latencies
// are read: each scenario's most frequent request names and all its groups and Trends (what
// results.json may keep for later comparisons) and every one a comparison with the baseline
// would show.
func intervalNames(r *result.Result, b *judge.Baseline, a perfexpv1alpha1.Analysis) map[result.IntervalKey]bool {
	keep := map[result.IntervalKey]bool{}
	for _, s := range r.Scenarios {
		for i, rr := range s.Requests {
			if i == judge.TopRequestsCompared {
				break
			}
			keep[result.IntervalKey{Scenario: s.Name, Request: rr.Name}] = true
		}
		// Every group and Trend reported: a range query reads them all at once, and stored()
		// bounds what results.json keeps.
		for _, g := range s.Groups {
			keep[result.IntervalKey{Scenario: s.Name, Group: g.Name}] = true
		}
		for _, t := range s.Trends {
			keep[result.IntervalKey{Scenario: s.Name, Trend: t.Name}] = true
		}
	}
	for _, k := range scriptIntervalKeys(r) {
		keep[k] = true
	}
	if b != nil && b.Result != nil {
		for _, k := range judge.ComparedIntervals(r, b.Result, a) {
			keep[k] = true
		}
	}
	return keep
}
