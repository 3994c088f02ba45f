package analysis

import (
	"fmt"
	"sort"
	"time"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/result"
)

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

// window is where a run's results are read: the measured window, the edges the k6 counters
// are read at (the window's and every slice's), and the length of the comparison intervals.
type window struct {
	// ms is the measured window's start (the warm-up's end); lookFrom is where ranges start.
	ms, lookFrom time.Time
	// edges are the evaluation times in order; startIdx and endIdx index the measured
	// window's.
	edges            []time.Time
	startIdx, endIdx int
	slices           []sliceSpan
	step             time.Duration
}

// newResult is a valid result with the run's names and window and nothing read yet.
func newResult(in Input) *result.Result {
	r := &result.Result{
		Experiment: in.Experiment,
		Namespace:  in.Namespace,
		TestID:     in.TestID,
		Variant:    in.Variant,
		Validity:   perfexpv1alpha1.Valid,
		Phases:     in.Phases,
		Inventory:  in.Inventory,
	}
	ms := in.Start
	if !in.WarmUpEnd.IsZero() {
		ms = in.WarmUpEnd
		w := in.WarmUpEnd
		r.Window.WarmUpEnd = &w
	}
	r.Window.Start, r.Window.End, r.Window.MeasuredStart = in.Start, in.End, ms
	r.Window.MeasuredSeconds = in.End.Sub(ms).Seconds()
	if in.PodAge != nil {
		r.PodAge = podAgeResult(*in.PodAge, in.Start)
		r.Notes = append(r.Notes, podAgeNote(*in.PodAge, in.Start))
		if in.Baseline != nil && in.Baseline.Result != nil {
			if n := podAgeMismatch(r.PodAge, in.Baseline.Result.PodAge); n != "" {
				r.Notes = append(r.Notes, n)
			}
		}
	}
	return r
}

// planWindow resolves the slices (noting in r the ones cut to the window) and the edges: the
// measured window's start and end, and every slice's.
func planWindow(in Input, r *result.Result) *window {
	ms := r.Window.MeasuredStart
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
	return &window{ms: ms, lookFrom: in.Start.Add(-lookBefore), edges: edges, startIdx: startIdx, endIdx: endIdx,
		slices: slices, step: intervalLength(in.End.Sub(ms))}
}
