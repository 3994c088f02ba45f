package analysis

import (
	"context"
	"fmt"
	"time"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/result"
)

// readListedWorkloads reads the workloads' use over [ms, end] and keeps the listed ones within
// the cap; the notes say which were left out and whose limits could only come from their specs.
func readListedWorkloads(ctx context.Context, q Querier, in Input, ms time.Time) (*workloadData, []string, error) {
	wd, err := readWorkloads(ctx, q, in.cadvisorMatchers(), in.CAdvisorMaxAge, in.Workloads, ms, in.End)
	if err != nil {
		return nil, nil, err
	}
	var notes []string
	if note := wd.capListed(ms, in.End, in.MaxListedWorkloads); note != "" {
		notes = append(notes, note)
	}
	if note := wd.specLimitsNote(); note != "" {
		notes = append(notes, note)
	}
	return wd, notes, nil
}

// reads is everything read from Prometheus for a run, before it is folded into the result.
type reads struct {
	k6       *k6Data
	trends   *trendData
	custom   *customData
	iterDur  *iterationData
	spans    map[string]activeSpan
	wd       *workloadData
	wdNotes  []string
	nodeLoad *result.NodeLoad
	nlNote   string
	runners  []result.RunnerUse
	queries  []result.QueryResult
	routes   *routeData
	sliceQs  [][]result.QueryResult
}

// readAll reads everything at once: each read is independent of the others, and the bounded
// querier keeps the number in flight small.
func readAll(ctx context.Context, q Querier, in Input, w *window) (*reads, error) {
	d := &reads{sliceQs: make([][]result.QueryResult, len(w.slices))}
	parallel := []func() error{
		func() (err error) {
			if d.k6, d.trends, err = readK6WithTrends(ctx, q, in, w.lookFrom, w.edges); err != nil {
				return err
			}
			d.iterDur, err = readIterationDurations(ctx, q, in.TestID, w.lookFrom, w.edges, d.k6)
			return err
		},
		func() (err error) {
			d.custom, err = readCustom(ctx, q, in.TestID, in.Scenarios, w.lookFrom, w.edges)
			return err
		},
		func() (err error) {
			d.spans, err = readActiveSpans(ctx, q, in.TestID, in.Scenarios, w.ms, in.End.Add(in.EndGrace))
			return err
		},
		func() (err error) { d.wd, d.wdNotes, err = readListedWorkloads(ctx, q, in, w.ms); return err },
		func() (err error) { d.nodeLoad, d.nlNote, err = readNodeLoad(ctx, q, in, w.ms, in.End); return err },
		func() (err error) { d.runners, err = readRunners(ctx, q, in, w.ms, in.End); return err },
		func() (err error) { d.routes, err = readRoutes(ctx, q, in.Routes, w.ms, in.End, w.step); return err },
		func() (err error) {
			d.queries, err = runQueries(ctx, q, in.Analysis.Queries, templateData(in.TargetNamespace, in.TestID, in.Start, w.ms, in.End), in.queryScope(), in.End)
			return err
		},
	}
	for i, sl := range w.slices {
		if len(in.Analysis.Queries) == 0 {
			break
		}
		parallel = append(parallel, func() (err error) {
			d.sliceQs[i], err = runQueries(ctx, q, in.Analysis.Queries, templateData(in.TargetNamespace, in.TestID, sl.start, sl.start, sl.end), in.queryScope(), sl.end)
			return err
		})
	}
	if err := together(parallel...); err != nil {
		return nil, err
	}
	return d, nil
}

// activeIn is the seconds each scenario (all of them for "") was active within [a, b].
func (d *reads) activeIn(in Input, a, b time.Time) func(string) float64 {
	return func(scenario string) float64 {
		if scenario == "" {
			return union(d.spans, in.Scenarios).seconds(a, b)
		}
		return d.spans[scenario].seconds(a, b)
	}
}

// fillRequests folds the k6 reads into the measured window's totals and scenarios, with their
// groups, Trends, custom metrics and iterations, and says where latencies came from. Without
// native histograms it reads k6's trend-stat gauges instead.
func fillRequests(ctx context.Context, q Querier, in Input, w *window, d *reads, r *result.Result) error {
	k6 := d.k6
	if k6.resets > 0 {
		r.Notes = append(r.Notes, fmt.Sprintf("%d k6 series were reset mid-run (a restarted runner); they were read sample by sample", k6.resets))
	}
	if k6.mismatched > 0 {
		r.Notes = append(r.Notes, fmt.Sprintf("%d k6 latency histograms were hidden at the window's edges (k6 stale markers?); they were read sample by sample", k6.mismatched))
	}
	active := d.activeIn(in, w.ms, in.End)
	var notes []string
	r.Total, r.Scenarios, notes = k6.k6Window(w.startIdx, w.endIdx, active, in.Scenarios)
	r.Notes = append(r.Notes, notes...)
	r.Notes = append(r.Notes, d.trends.fill(w.startIdx, w.endIdx, active, r.Scenarios)...)
	r.Notes = append(r.Notes, d.trends.notes()...)
	d.custom.fill(w.startIdx, w.endIdx, active, r.Scenarios)
	r.Notes = append(r.Notes, d.custom.notes()...)
	r.Notes = append(r.Notes, d.iterDur.fill(w.startIdx, w.endIdx, r.Scenarios)...)
	r.Notes = append(r.Notes, d.iterDur.notes()...)
	if !k6.hasHistograms() {
		r.LatencySource = perfexpv1alpha1.LatencyNone
		return fillTrendStats(ctx, q, in, w, k6, r)
	}
	r.LatencySource = perfexpv1alpha1.LatencyFromNativeHistogram
	g := 1.0
	for _, h := range k6.hists[w.endIdx] {
		g = max(g, h.BucketGrowth())
	}
	r.LatencyErrorBound = result.Num(g - 1)
	return nil
}

// fillTrendStats takes latencies from k6's trend-stat gauges, when no native histograms were
// written.
func fillTrendStats(ctx context.Context, q Querier, in Input, w *window, k6 *k6Data, r *result.Result) error {
	stats, err := readTrendStats(ctx, q, in.TestID, w.lookFrom, w.edges[w.endIdx], k6.labels)
	if err != nil {
		return err
	}
	declared := map[string]bool{}
	for _, s := range in.Scenarios {
		declared[s] = true
	}
	if found, bounded := applyTrendStats(r, stats, k6.labels, k6.reqs[w.endIdx], declared); found {
		r.LatencySource = perfexpv1alpha1.LatencyFromTrendStats
		note := "latencies come from k6's trend-stat gauges (no native histograms were written): each runner's own statistics over its whole run, so the warm-up is not removed from them and slices have none"
		if bounded {
			note += "; where several runners or series make up a row, its percentiles are the largest of theirs, an upper bound, not a merged percentile"
		}
		r.Notes = append(r.Notes, note)
	}
	return nil
}

// fillResources sets the workloads, node load, runners and custom queries of the measured
// window.
func fillResources(in Input, w *window, d *reads, r *result.Result) {
	r.Notes = append(r.Notes, d.wdNotes...)
	if d.nlNote != "" {
		r.Notes = append(r.Notes, d.nlNote)
	}
	r.NodeLoad, r.Runners = d.nodeLoad, d.runners
	r.Notes = append(r.Notes, saturationNotes(d.runners, d.nodeLoad)...)
	r.Workloads = d.wd.results(w.ms, in.End, true)
	r.Queries = d.queries
	r.Routes = d.routes.results
	r.Notes = append(r.Notes, d.routes.notes...)
}

// fillSlices folds the reads into each time slice's results.
func fillSlices(in Input, w *window, d *reads, r *result.Result) {
	for i, sl := range w.slices {
		sr := result.SliceResult{Name: sl.spec.Name, Start: sl.start, End: sl.end}
		active := d.activeIn(in, sl.start, sl.end)
		sr.Total, sr.Scenarios, _ = d.k6.k6Window(sl.startEdge, sl.endEdge, active, in.Scenarios)
		d.trends.fill(sl.startEdge, sl.endEdge, active, sr.Scenarios)
		d.custom.fill(sl.startEdge, sl.endEdge, active, sr.Scenarios)
		d.iterDur.fill(sl.startEdge, sl.endEdge, sr.Scenarios)
		sr.Workloads = d.wd.results(sl.start, sl.end, false)
		sr.Queries = d.sliceQs[i]
		if len(in.Analysis.Queries) == 0 {
			sr.Queries = []result.QueryResult{}
		}
		r.Slices = append(r.Slices, sr)
	}
}
