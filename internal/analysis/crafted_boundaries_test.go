package analysis

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/perfexp/perfexp/internal/analysis/promtest"
)

// Story: a request name went quiet, and its last sample lies exactly on a boundary of the
// selectors that read the window's edges. Prometheus 3 made range selectors and the lookback
// left-open (a sample exactly lookback-delta, or a range's length, before the evaluation time is
// no longer seen); 2.x saw it. The edge reading (edges.go) combines an instant query (lookback
// 5m), the same 4m earlier, and a subquery stepping every 4m: each case puts the last sample on
// one of their boundaries, with the edges on multiples of 4 minutes so the subquery's steps
// coincide with them. Whichever side of each boundary the running Prometheus counts a sample
// on, every request is counted once and the latencies are those of the window, found by the
// edge queries themselves (not by the sample-by-sample fallback). Run against
// 2.42 (`go test`) and 3.x (`make test-prometheus3`).
func TestCraftedEdgesOnLookbackAndSubqueryBoundaries(t *testing.T) {
	const step = 4 * time.Minute // subqueryStep; the cases are placed relative to it
	if subqueryStep != step {
		t.Fatalf("subqueryStep is %s: place the cases on its boundaries again", subqueryStep)
	}
	// Time.Truncate counts from year 1, which is a multiple of 4 minutes before the Unix epoch,
	// so the edges fall on the subquery's steps (Prometheus aligns them to the epoch).
	base := time.Now().Add(-58 * time.Minute).Truncate(step)
	warmUpEnd := base.Add(6 * step) // the start edge
	endEdge := base.Add(12 * step)  // End + EndGrace
	const grace = time.Minute

	type tc struct {
		name string
		// last is the name's last sample before the edge the case is about; backAt, when set,
		// is when the name comes back (after the start edge).
		last, backAt time.Time
		in           Input
		from         time.Time // the truth is what was observed in (from, endEdge]
	}
	var tests []tc
	// The end edge: the name's last sample is d before it, and the window has no warm-up.
	for _, d := range []time.Duration{0, time.Second, 4 * time.Minute, 5*time.Minute - time.Millisecond, 5 * time.Minute, 5*time.Minute + time.Millisecond,
		8 * time.Minute, 9 * time.Minute, 9*time.Minute + time.Millisecond, 12 * time.Minute, 13 * time.Minute, 17 * time.Minute, 21 * time.Minute} {
		tests = append(tests, tc{
			name: fmt.Sprintf("end edge, last sample %s before it", d),
			last: endEdge.Add(-d),
			in:   Input{Start: base, End: endEdge.Add(-grace), EndGrace: grace, Scenarios: []string{"main"}},
			from: base,
		})
	}
	// The start edge (the warm-up's end): the name's last warm-up sample is d before it, and it
	// comes back a minute into the measured window. What it held at the start edge is removed.
	for _, d := range []time.Duration{0, 4 * time.Minute, 5 * time.Minute, 8 * time.Minute, 9 * time.Minute, 13 * time.Minute, 17 * time.Minute} {
		tests = append(tests, tc{
			name:   fmt.Sprintf("start edge, last warm-up sample %s before it", d),
			last:   warmUpEnd.Add(-d),
			backAt: warmUpEnd.Add(time.Minute),
			in:     Input{Start: base, WarmUpEnd: warmUpEnd, End: endEdge.Add(-grace), EndGrace: grace, Scenarios: []string{"main"}},
			from:   warmUpEnd,
		})
	}

	prom := promtest.Start(t)
	t.Logf("Prometheus %s", prom.Version)
	all := make([]*promtest.K6Series, len(tests))
	var write []promtest.Series
	for i, c := range tests {
		id := fmt.Sprintf("boundary-%02d", i)
		s := promtest.NewK6Series(promtest.K6Labels(id, "main", "quiet", "0", true))
		// Flushes every 5 s, counted back from the last one so that it lands on the boundary.
		var at []time.Time
		for ts := c.last; ts.After(base); ts = ts.Add(-5 * time.Second) {
			at = append([]time.Time{ts}, at...)
		}
		if !c.backAt.IsZero() {
			for ts := c.backAt; !ts.After(endEdge.Add(-30 * time.Second)); ts = ts.Add(5 * time.Second) {
				at = append(at, ts)
			}
		}
		for j, ts := range at {
			s.Flush(ts, latencies(3, 0.001, 0.2, i*1000+j)...)
		}
		all[i] = s
		write = append(write, s.Series()...)
	}
	prom.Write(t, write)
	api := prom.API(t)
	for i, c := range tests {
		t.Run(c.name, func(t *testing.T) {
			in := c.in
			in.TestID = fmt.Sprintf("boundary-%02d", i)
			in.Experiment = in.TestID
			r, err := Analyze(context.Background(), api, in)
			if err != nil {
				t.Fatal(err)
			}
			want := truth([]*promtest.K6Series{all[i]}, c.from, endEdge)
			if len(r.Scenarios) != 1 || len(r.Scenarios[0].Requests) != 1 {
				t.Fatalf("scenarios %+v", r.Scenarios)
			}
			assertStats(t, "quiet", r.Scenarios[0].Requests[0].RequestStats, want, 0)
			// A histogram the edge queries missed is read again sample by sample, which is exact
			// too: the counts alone would not show a boundary the queries fall short of.
			for _, n := range r.Notes {
				if strings.Contains(n, "sample by sample") {
					t.Errorf("the edge queries missed the last sample: %s", n)
				}
			}
		})
	}
}
