package analysis

import (
	"context"
	"fmt"
	"sort"
	"time"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/analysis/result"
	"github.com/perfexp/perfexp/internal/judge"
)

// Input is everything the analysis needs to know about the experiment. The controller fills it
// from the experiment's status and the cluster.
type Input struct {
	// Experiment and Namespace name the experiment; TargetNamespace is where the workloads run.
	Experiment, Namespace, TargetNamespace string
	// TestID is the testid tag of the run's k6 samples.
	TestID string
	// Variant describes the variant, for the report.
	Variant string
	// Start, WarmUpEnd (zero when there was no warm-up) and End are the recorded window.
	Start, WarmUpEnd, End time.Time
	// Scenarios are the declared scenario names.
	Scenarios []string
	// LoadShape is the load shape of every scenario (LoadShape(spec.load, scripts)), recorded
	// in the results so later runs can check they ran the same.
	LoadShape []result.ScenarioShape
	// Analysis is spec.analysis.
	Analysis perfexpv1alpha1.Analysis
	// Workloads are the touched and observed workloads with their containers' resources.
	Workloads []Workload
	// Baseline is the baseline run, nil when none is set.
	Baseline *judge.Baseline
	// Phases is the experiment's timeline, for the report.
	Phases []result.PhaseAt
	// RunnerPods matches the names of the run's k6 pods in Namespace (load.RunnerPodPattern),
	// whose CPU and memory the report lists; empty: not read.
	RunnerPods string
	// CAdvisorMatchers select cAdvisor's series; defaults to DefaultCAdvisorMatchers.
	CAdvisorMatchers string
	// Drifted, when not empty, says which field of the variant someone else changed during
	// the run and who (the experiment's Drifted condition): the load then measured something
	// other than the variant, so the results are Invalid.
	Drifted string
	// CAdvisorMaxAge is how old a container's newest cAdvisor sample may be for the container
	// to count as running at an evaluation; defaults to DefaultCAdvisorMaxAge. It must exceed
	// the scrape interval plus cAdvisor's housekeeping delay.
	CAdvisorMaxAge time.Duration
	// MaxListedWorkloads caps the workloads listed by default (Workload.Listed); the largest
	// by CPU or memory are kept. Defaults to DefaultMaxListedWorkloads.
	MaxListedWorkloads int
	// EndGrace is how far past End k6 series are read. The recorded end has whole-second
	// precision and samples carry the time of their last request, so a few may be stamped
	// just after it; nothing of this test ID arrives later. Defaults to DefaultEndGrace.
	EndGrace time.Duration
}

// DefaultEndGrace is the default Input.EndGrace.
const DefaultEndGrace = time.Minute

// lookBefore is how far before the window's start ranges reach, so the first samples of a
// run are always inside them. Only samples of this test ID are selected, so reaching back
// costs nothing.
const lookBefore = 10 * time.Minute

// edgeSet collects distinct evaluation times.
type edgeSet struct {
	times []time.Time
	index map[int64]int
}

func (e *edgeSet) add(t time.Time) int {
	if e.index == nil {
		e.index = map[int64]int{}
	}
	k := t.UnixMilli()
	if i, ok := e.index[k]; ok {
		return i
	}
	e.times = append(e.times, time.UnixMilli(k).UTC())
	e.index[k] = len(e.times) - 1
	return len(e.times) - 1
}

// sortedTimes returns the edges in time order with a map from old to new index.
func (e *edgeSet) sorted() ([]time.Time, func(int) int) {
	order := make([]int, len(e.times))
	for i := range order {
		order[i] = i
	}
	sort.Slice(order, func(a, b int) bool { return e.times[order[a]].Before(e.times[order[b]]) })
	pos := make([]int, len(order))
	out := make([]time.Time, len(order))
	for newIdx, old := range order {
		pos[old] = newIdx
		out[newIdx] = e.times[old]
	}
	return out, func(i int) int { return pos[i] }
}

// sliceSpan is a resolved time slice.
type sliceSpan struct {
	spec       perfexpv1alpha1.TimeSlice
	start, end time.Time
	// startEdge and endEdge index the k6 edges.
	startEdge, endEdge int
	// cut says how the slice was shortened to fit the measured window, "" when it fits.
	cut string
}

// Analyze reads the experiment's results from Prometheus and judges them. It returns an
// *UnavailableError when Prometheus could not answer a query the results depend on; the
// caller retries later.
func Analyze(ctx context.Context, q Querier, in Input) (*result.Result, error) {
	if in.EndGrace <= 0 {
		in.EndGrace = DefaultEndGrace
	}
	cq := &CountingQuerier{Querier: newBoundedQuerier(q, maxConcurrentQueries)}
	r := &result.Result{
		Experiment: in.Experiment,
		Namespace:  in.Namespace,
		TestID:     in.TestID,
		Variant:    in.Variant,
		Validity:   perfexpv1alpha1.Valid,
		Phases:     in.Phases,
	}
	ms := in.Start
	if !in.WarmUpEnd.IsZero() {
		ms = in.WarmUpEnd
		w := in.WarmUpEnd
		r.Window.WarmUpEnd = &w
	}
	r.Window.Start, r.Window.End, r.Window.MeasuredStart = in.Start, in.End, ms
	seconds := in.End.Sub(ms).Seconds()
	r.Window.MeasuredSeconds = seconds
	if seconds <= 0 {
		r.LatencySource = perfexpv1alpha1.LatencyNone
		judge.MarkInvalid(r, fmt.Sprintf("the measured window is empty: it starts at %s and ends at %s", ms.Format(time.RFC3339), in.End.Format(time.RFC3339)))
		r.Verdict = perfexpv1alpha1.VerdictInvalid
		return r, nil
	}

	// Edges: the measured window's start and end, and every slice's.
	var es edgeSet
	startIdx := es.add(ms)
	endIdx := es.add(in.End.Add(in.EndGrace))
	slices := resolveSlices(in.Analysis.Slices, ms, in.End)
	for _, sl := range slices {
		if sl.cut != "" {
			r.Notes = append(r.Notes, fmt.Sprintf("slice %q %s", sl.spec.Name, sl.cut))
		}
	}
	for i := range slices {
		slices[i].startEdge = es.add(slices[i].start)
		if slices[i].end.Equal(in.End) {
			slices[i].endEdge = endIdx
		} else {
			slices[i].endEdge = es.add(slices[i].end)
		}
	}
	edges, pos := es.sorted()
	startIdx, endIdx = pos(startIdx), pos(endIdx)
	for i := range slices {
		slices[i].startEdge, slices[i].endEdge = pos(slices[i].startEdge), pos(slices[i].endEdge)
	}

	lookFrom := in.Start.Add(-lookBefore)
	// Everything read here is independent of everything else; the bounded querier keeps the
	// number in flight small.
	var (
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
		sliceQs  = make([][]result.QueryResult, len(slices))
		step     = intervalLength(in.End.Sub(ms))
		parallel []func() error
	)
	parallel = append(parallel,
		func() (err error) {
			if k6, trends, err = readK6WithTrends(ctx, cq, in, lookFrom, edges); err != nil {
				return err
			}
			iterDur, err = readIterationDurations(ctx, cq, in.TestID, lookFrom, edges, k6)
			return err
		},
		func() (err error) {
			custom, err = readCustom(ctx, cq, in.TestID, in.Scenarios, lookFrom, edges)
			return err
		},
		func() (err error) {
			spans, err = readActiveSpans(ctx, cq, in.TestID, in.Scenarios, ms, in.End.Add(in.EndGrace))
			return err
		},
		func() (err error) { wd, wdNotes, err = readListedWorkloads(ctx, cq, in, ms); return err },
		func() (err error) { nodeLoad, nlNote, err = readNodeLoad(ctx, cq, in, ms, in.End); return err },
		func() (err error) { runners, err = readRunners(ctx, cq, in, ms, in.End); return err },
		func() (err error) {
			queries, err = runQueries(ctx, cq, in.Analysis.Queries, templateData(in.TargetNamespace, in.TestID, in.Start, ms, in.End), in.End)
			return err
		},
	)
	for i, sl := range slices {
		if len(in.Analysis.Queries) == 0 {
			break
		}
		parallel = append(parallel, func() (err error) {
			sliceQs[i], err = runQueries(ctx, cq, in.Analysis.Queries, templateData(in.TargetNamespace, in.TestID, sl.start, sl.start, sl.end), sl.end)
			return err
		})
	}
	if err := together(parallel...); err != nil {
		return nil, err
	}
	if k6.resets > 0 {
		r.Notes = append(r.Notes, fmt.Sprintf("%d k6 series were reset mid-run (a restarted runner); they were read sample by sample", k6.resets))
	}
	if k6.mismatched > 0 {
		r.Notes = append(r.Notes, fmt.Sprintf("%d k6 latency histograms were hidden at the window's edges (k6 stale markers?); they were read sample by sample", k6.mismatched))
	}
	activeIn := func(a, b time.Time) func(string) float64 {
		return func(scenario string) float64 {
			if scenario == "" {
				return union(spans, in.Scenarios).seconds(a, b)
			}
			return spans[scenario].seconds(a, b)
		}
	}
	var notes []string
	r.Total, r.Scenarios, notes = k6.k6Window(startIdx, endIdx, activeIn(ms, in.End), in.Scenarios)
	r.Notes = append(r.Notes, notes...)
	r.Notes = append(r.Notes, trends.fill(startIdx, endIdx, activeIn(ms, in.End), r.Scenarios)...)
	r.Notes = append(r.Notes, trends.notes()...)
	custom.fill(startIdx, endIdx, activeIn(ms, in.End), r.Scenarios)
	r.Notes = append(r.Notes, custom.notes()...)
	r.Notes = append(r.Notes, iterDur.fill(startIdx, endIdx, r.Scenarios)...)
	r.Notes = append(r.Notes, iterDur.notes()...)
	switch {
	case k6.hasHistograms():
		r.LatencySource = perfexpv1alpha1.LatencyFromNativeHistogram
	default:
		r.LatencySource = perfexpv1alpha1.LatencyNone
		stats, err := readTrendStats(ctx, cq, in.TestID, lookFrom, edges[endIdx], k6.labels)
		if err != nil {
			return nil, err
		}
		declared := map[string]bool{}
		for _, s := range in.Scenarios {
			declared[s] = true
		}
		if found, bounded := applyTrendStats(r, stats, k6.labels, k6.reqs[endIdx], declared); found {
			r.LatencySource = perfexpv1alpha1.LatencyFromTrendStats
			note := "latencies come from k6's trend-stat gauges (no native histograms were written): each runner's own statistics over its whole run, so the warm-up is not removed from them and slices have none"
			if bounded {
				note += "; where several runners or series make up a row, its percentiles are the largest of theirs, an upper bound, not a merged percentile"
			}
			r.Notes = append(r.Notes, note)
		}
	}
	if r.LatencySource == perfexpv1alpha1.LatencyFromNativeHistogram {
		g := 1.0
		for _, h := range k6.hists[endIdx] {
			g = max(g, h.BucketGrowth())
		}
		r.LatencyErrorBound = result.Num(g - 1)
	}

	r.Notes = append(r.Notes, wdNotes...)
	if nlNote != "" {
		r.Notes = append(r.Notes, nlNote)
	}
	r.NodeLoad, r.Runners = nodeLoad, runners
	r.Notes = append(r.Notes, saturationNotes(runners, nodeLoad)...)
	r.Workloads = wd.results(ms, in.End, true)
	r.Queries = queries

	for i, sl := range slices {
		sr := result.SliceResult{Name: sl.spec.Name, Start: sl.start, End: sl.end}
		sr.Total, sr.Scenarios, _ = k6.k6Window(sl.startEdge, sl.endEdge, activeIn(sl.start, sl.end), in.Scenarios)
		trends.fill(sl.startEdge, sl.endEdge, activeIn(sl.start, sl.end), sr.Scenarios)
		custom.fill(sl.startEdge, sl.endEdge, activeIn(sl.start, sl.end), sr.Scenarios)
		iterDur.fill(sl.startEdge, sl.endEdge, sr.Scenarios)
		sr.Workloads = wd.results(sl.start, sl.end, false)
		sr.Queries = sliceQs[i]
		if len(in.Analysis.Queries) == 0 {
			sr.Queries = []result.QueryResult{}
		}
		r.Slices = append(r.Slices, sr)
	}

	judge.Validity(r, judge.MaxErrorRate(in.Analysis))
	judge.Drift(r, in.Drifted)

	r.LoadShape = in.LoadShape
	// The request names whose latency per interval anyone reads: the stored ones and the
	// compared ones. They are known only now, from the counts at the window's edges.
	keep := intervalNames(r, in.Baseline, in.Analysis)
	cur, err := readIntervals(ctx, cq, in.TestID, in.Scenarios, ms, in.End, step, keep, true)
	if err != nil {
		return nil, err
	}
	cur.Workloads = wd.intervals(ms, step, int(in.End.Sub(ms)/step))
	r.Timeline = timeline(cur, ms, in.Scenarios)
	r.Intervals = stored(cur, r)
	if in.Baseline != nil {
		if r.Comparison, err = compareWithBaseline(ctx, cq, in, r, cur, ms, step, keep); err != nil {
			return nil, err
		}
	}
	r.Objectives = judge.Objectives(r, in.Analysis.Objectives)
	r.Verdict = judge.Verdict(r)
	r.PrometheusQueries = cq.Count()
	return r, nil
}

// compareWithBaseline compares the run with in.Baseline on the per-interval data cur (read
// from ms, step apart).
func compareWithBaseline(ctx context.Context, q Querier, in Input, r *result.Result, cur *result.IntervalData, ms time.Time, step time.Duration, keep map[result.IntervalKey]bool) (*result.Comparison, error) {
	b := in.Baseline
	opts, note := judge.OptionsFor(in.Analysis)
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
		}
	}
	c := judge.Compare(r, compared, b, base, opts)
	if note != "" {
		c.Notes = append(c.Notes, note)
	}
	return c, nil
}

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

// resolveSlices turns slice specs into times within [ms, end]. A slice that reaches outside
// the measured window is cut to it, and its cut says so: the report must not show "the last
// 12 hours" for what were the last 10.
func resolveSlices(specs []perfexpv1alpha1.TimeSlice, ms, end time.Time) []sliceSpan {
	out := make([]sliceSpan, 0, len(specs))
	for _, s := range specs {
		from, to := ms, end
		if s.Last != nil {
			from = end.Add(-s.Last.Duration)
		} else {
			if s.From != nil {
				from = ms.Add(s.From.Duration)
			}
			if s.To != nil {
				to = ms.Add(s.To.Duration)
			}
		}
		asked := fmt.Sprintf("asked for %s to %s of the measured window", from.Sub(ms), to.Sub(ms))
		startsAfter := fmt.Sprintf("starts at %s of the measured window", from.Sub(ms))
		cut := from.Before(ms) || to.After(end)
		if from.Before(ms) {
			from = ms
		}
		if to.After(end) {
			to = end
		}
		if !to.After(from) {
			to = from
		}
		sp := sliceSpan{spec: s, start: from, end: to}
		switch {
		case !to.After(from):
			sp.cut = fmt.Sprintf("%s, which lasted %s: it is empty", startsAfter, end.Sub(ms))
		case cut:
			sp.cut = fmt.Sprintf("%s, which lasted %s: it covers %s to %s", asked, end.Sub(ms), from.Sub(ms), to.Sub(ms))
		}
		out = append(out, sp)
	}
	return out
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
