package judge

import (
	"fmt"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/result"
)

// queryNames are the custom queries a comparison shows: those of the first run, then those a
// primary metric names that it lacks (they read Unknown, with the name looked for).
func queryNames(r *result.Result, o CompareOptions) []string {
	var out []string
	seen := map[string]bool{}
	for _, q := range r.Queries {
		if !seen[q.Name] {
			seen[q.Name] = true
			out = append(out, q.Name)
		}
	}
	for _, p := range o.Primary {
		if p.Query != "" && !seen[p.Query] {
			seen[p.Query] = true
			out = append(out, p.Query)
		}
	}
	return out
}

// queryRows compare two single runs' custom queries on their value alone: one value per run
// has no interval, so each row says how many runs per side would decide it.
func queryRows(r, base *result.Result, o CompareOptions) []result.MetricComparison {
	names := queryNames(r, o)
	out := make([]result.MetricComparison, 0, len(names))
	for _, name := range names {
		w := row{query: name, kind: perfexpv1alpha1.MetricQuery}
		mc := newMetricComparison(w, o)
		mc.Unit = w.unit(r)
		mc.Value, mc.Baseline = w.compared(r, false), w.compared(base, false)
		fillDelta(&mc)
		if missing := w.missing([]*result.Result{r}, []*result.Result{base}); missing != "" {
			setUnknown(&mc, missing)
		} else {
			setUnknown(&mc, oneValueWhy("a custom query", mc.Value, mc.Baseline, o))
		}
		out = append(out, mc)
	}
	return out
}

// queryRunRows compare repeated runs' custom queries with the run as the unit, as the
// latencies of repeated runs are: the ratio of the runs' geometric means with Welch's t, or
// paired within the design's blocks. Whether higher is better is the query's to say: a
// primary metric's direction, else the objectives' bounds on it; without either a change
// beyond ±δ is Inconclusive.
func queryRunRows(cur, base []*result.Result, o CompareOptions, paired *int, unpaired *string) []result.MetricComparison {
	names := queryNames(cur[0], o)
	out := make([]result.MetricComparison, 0, len(names))
	for _, name := range names {
		w := row{query: name, kind: perfexpv1alpha1.MetricQuery}
		mc := newMetricComparison(w, o)
		mc.Unit = w.unit(cur[0])
		vc, vb := runValues(cur, w), runValues(base, w)
		mc.Value, mc.Baseline = mean(vc), mean(vb)
		fillDelta(&mc)
		switch missing := w.missing(cur, base); {
		case missing != "":
			setUnknown(&mc, missing)
		case len(vc) < len(cur) || len(vb) < len(base):
			setUnknown(&mc, fmt.Sprintf("only %d of %d runs and %d of %d baseline runs have a value of it", len(vc), len(cur), len(vb), len(base)))
		default:
			e, method := pairedOrNot(cur, base, w, o, unpaired)
			if e == nil {
				e = runEffect(vc, vb, w.kind, o.MinChangePercent)
			} else {
				*paired++
			}
			fill(&mc, e.atLevel(o.alpha()), method, "runs")
			o.orientRow(w, &mc)
		}
		out = append(out, mc)
	}
	return out
}

// orientRow turns a row's verdict, decided by its kind's natural direction, to the direction a
// primary metric naming it gives; a secondary Counter's or query's takes the objectives' bounds
// on it (orientCounter, boundDirection).
func (o CompareOptions) orientRow(w row, mc *result.MetricComparison) {
	if p := o.primaryRow(w); p.ok {
		reorient(mc, naturalDirection(mc.Kind), p.dir)
		return
	}
	if w.query != "" {
		orient(mc, boundDirection(o.Objectives, func(ob perfexpv1alpha1.Objective) bool {
			return ob.Metric == perfexpv1alpha1.MetricQuery && ob.Query == w.query
		}))
		return
	}
	w.orientCounter(mc, o.Objectives)
}
