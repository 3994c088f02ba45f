// Server-side latency per route: a service's own request-duration histogram (classic buckets or
// native), read for the pods of each workload an observe entry with routes names.

package analysis

import (
	"context"
	"fmt"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	promv1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/result"
)

// RouteSource is a workload whose own request histogram is read per route.
type RouteSource struct {
	Kind      perfexpv1alpha1.WorkloadKind
	Namespace string
	Name      string
	Spec      perfexpv1alpha1.RouteHistogram
}

// ref names the workload as results do: "Deployment/shop/api".
func (s RouteSource) ref() string { return string(s.Kind) + "/" + s.Namespace + "/" + s.Name }

// routeLeSum is the le the route query gives the _sum series, so that one range query reads
// the buckets, their sum and the native histogram (the series without le: Prometheus 2.42's
// label_replace drops a native histogram's value, `or` keeps it); it parses as no bound.
const routeLeSum = "sum"

// routeData is what was read of every route.
type routeData struct {
	results   []result.RouteResult
	intervals []result.RouteIntervals
	notes     []string
}

// routeGroup is the sources one query reads: same namespace and histogram.
type routeGroup struct {
	ns      string
	spec    perfexpv1alpha1.RouteHistogram
	sources []RouteSource
}

func groupRouteSources(sources []RouteSource) []*routeGroup {
	var out []*routeGroup
	for _, s := range sources {
		var g *routeGroup
		for _, o := range out {
			if o.ns == s.Namespace && o.spec.Metric == s.Spec.Metric && o.spec.Label() == s.Spec.Label() &&
				o.spec.Status() == s.Spec.Status() && o.spec.Errors() == s.Spec.Errors() && o.spec.Keep() == s.Spec.Keep() {
				g = o
			}
		}
		if g == nil {
			g = &routeGroup{ns: s.Namespace, spec: s.Spec}
			out = append(out, g)
		}
		g.sources = append(g.sources, s)
	}
	return out
}

// query is the one range query of a group: the classic buckets by le, their _sum (le "sum")
// and the native histogram (no le), each summed per pod, route and status, at
// every interval boundary. Increments are taken here, per pod, as for k6's series: exact, and
// cheap where rate() over native histograms is slow on Prometheus 2.42.
func (g *routeGroup) query() string {
	pats := make([]string, 0, len(g.sources))
	for _, s := range g.sources {
		pats = append(pats, PodPattern(s.Kind, s.Name))
	}
	sort.Strings(pats)
	sel := fmt.Sprintf("{%s=%s,pod=~%s}", labelNamespace, quote(g.ns), quote(strings.Join(pats, "|")))
	by := "pod, " + g.spec.Label() + ", " + g.spec.Status()
	m := g.spec.Metric
	return fmt.Sprintf(`sum by (%s, le) (%s_bucket%s) or label_replace(sum by (%s) (%s_sum%s), "le", %q, "", "") or sum by (%s) (%s%s)`,
		by, m, sel, by, m, sel, routeLeSum, by, m, sel)
}

// routeAcc gathers one route's per-interval increments, summed over pods.
type routeAcc struct {
	// buckets[status][le] and sums[status] are the classic series' increments.
	buckets map[string]map[float64][]float64
	sums    map[string][]float64
	// native[status] are the native histograms' increments.
	native map[string][]*result.Histogram
}

// readRoutes reads every source's routes over the n intervals of length step from ms.
func readRoutes(ctx context.Context, q Querier, sources []RouteSource, ms, end time.Time, step time.Duration) (*routeData, error) {
	d := &routeData{}
	g := intervalGrid{start: ms, step: step, steps: int(end.Sub(ms)/step) + 1}
	if len(sources) == 0 || g.steps < 2 {
		return d, nil
	}
	groups := groupRouteSources(sources)
	answers := make([]model.Matrix, len(groups))
	fns := make([]func() error, len(groups))
	for i, grp := range groups {
		fns[i] = func() (err error) {
			answers[i], err = rangeMatrix(ctx, q, grp.query(), promv1.Range{Start: ms, End: ms.Add(time.Duration(g.steps-1) * step), Step: step})
			return err
		}
	}
	if err := together(fns...); err != nil {
		return nil, err
	}
	for i, grp := range groups {
		d.fold(grp, answers[i], g)
	}
	return d, nil
}

// fold turns one group's answer into its sources' routes.
func (d *routeData) fold(grp *routeGroup, m model.Matrix, g intervalGrid) {
	n := g.steps - 1
	errRe, err := regexp.Compile("^(?:" + grp.spec.Errors() + ")$")
	if err != nil {
		d.notes = append(d.notes, fmt.Sprintf("routes of %s: errorStatus %q is not a regular expression (%v); no request was counted as failed", grp.spec.Metric, grp.spec.Errors(), err))
		errRe = regexp.MustCompile("^$.")
	}
	pods := make([]*regexp.Regexp, len(grp.sources))
	for i, s := range grp.sources {
		pods[i] = regexp.MustCompile("^(?:" + PodPattern(s.Kind, s.Name) + ")$")
	}
	accs := make([]map[string]*routeAcc, len(grp.sources))
	for i := range accs {
		accs[i] = map[string]*routeAcc{}
	}
	for _, ss := range m {
		src := -1
		for i, re := range pods {
			if re.MatchString(string(ss.Metric["pod"])) {
				src = i
				break
			}
		}
		if src < 0 {
			continue
		}
		route, status := string(ss.Metric[model.LabelName(grp.spec.Label())]), string(ss.Metric[model.LabelName(grp.spec.Status())])
		a := accs[src][route]
		if a == nil {
			a = &routeAcc{buckets: map[string]map[float64][]float64{}, sums: map[string][]float64{}, native: map[string][]*result.Histogram{}}
			accs[src][route] = a
		}
		le := string(ss.Metric["le"])
		if le == "" {
			a.native[status] = addNativeIncrements(a.native[status], ss, g, n)
			continue
		}
		incs := floatIncrements(ss, g)
		if le == routeLeSum {
			a.sums[status] = addFloats(a.sums[status], incs)
			continue
		}
		bound, err := strconv.ParseFloat(le, 64)
		if err != nil {
			continue
		}
		if a.buckets[status] == nil {
			a.buckets[status] = map[float64][]float64{}
		}
		a.buckets[status][bound] = addFloats(a.buckets[status][bound], incs)
	}
	for i, s := range grp.sources {
		if len(accs[i]) == 0 {
			d.notes = append(d.notes, fmt.Sprintf("no series of %s (classic _bucket or native) for the pods of %s in the measured window: it has no routes in the report", grp.spec.Metric, s.ref()))
			continue
		}
		var rs []result.RouteResult
		ivs := map[string]result.RouteIntervals{}
		for route, a := range accs[i] {
			series := a.series(n, errRe)
			rr := routeResult(s.ref(), route, grp.spec.Metric, series, g.step.Seconds())
			rs = append(rs, rr)
			ivs[route] = result.RouteIntervals{Workload: s.ref(), Route: route, Series: series}
		}
		sort.Slice(rs, func(a, b int) bool { return slowerRoute(rs[a], rs[b]) })
		if len(rs) > grp.spec.Keep() {
			d.notes = append(d.notes, fmt.Sprintf("%s has %d routes in %s; the %d slowest by p95 are kept (routes.top)", s.ref(), len(rs), grp.spec.Metric, grp.spec.Keep()))
			rs = rs[:grp.spec.Keep()]
		}
		for _, rr := range rs {
			d.results = append(d.results, rr)
			d.intervals = append(d.intervals, ivs[rr.Route])
		}
	}
}

// slowerRoute orders routes by p95, highest first, then by name; routes without latency last.
func slowerRoute(a, b result.RouteResult) bool {
	switch {
	case (a.P95 == nil) != (b.P95 == nil):
		return a.P95 != nil
	case a.P95 != nil && *a.P95 != *b.P95:
		return *a.P95 > *b.P95
	}
	return a.Route < b.Route
}

// floatIncrements is a float series' per-interval increments on the grid.
func floatIncrements(ss *model.SampleStream, g intervalGrid) []float64 {
	at, seen := make([]float64, g.steps), make([]bool, g.steps)
	for _, p := range ss.Values {
		if i, ok := g.boundary(p.Timestamp); ok && result.Finite(float64(p.Value)) {
			at[i], seen[i] = float64(p.Value), true
		}
	}
	return increments(at, seen, func(a, b float64) (float64, bool) { return b - a, b < a })
}

func addFloats(to, v []float64) []float64 {
	if to == nil {
		to = make([]float64, len(v))
	}
	for i := range v {
		to[i] += v[i]
	}
	return to
}

// addNativeIncrements adds a cumulative native histogram series' per-interval increments into
// to (n intervals), as increasesOf gives them (a boundary without a sample carries the last
// one; a count below the previous one is a reset, so all of it is new), straight from the
// answer's buckets: no histogram per boundary and no copy per interval, which with a pod per
// series were most of the fold's time.
func addNativeIncrements(to []*result.Histogram, ss *model.SampleStream, g intervalGrid, n int) []*result.Histogram {
	if to == nil {
		to = make([]*result.Histogram, n)
	}
	at := make([]*model.SampleHistogram, g.steps)
	for _, p := range ss.Histograms {
		if i, ok := g.boundary(p.Timestamp); ok {
			at[i] = p.Histogram
		}
	}
	var prev *model.SampleHistogram
	for i, cur := range at {
		if cur == nil {
			cur = prev
		}
		if i > 0 && i-1 < n && cur != nil {
			if to[i-1] == nil {
				to[i-1] = result.NewHistogram()
			}
			addModel(to[i-1], cur, 1)
			if prev != nil && cur.Count >= prev.Count {
				addModel(to[i-1], prev, -1)
			}
		}
		prev = cur
	}
	return to
}

// addModel adds sign times an answer's histogram to h.
func addModel(h *result.Histogram, m *model.SampleHistogram, sign float64) {
	h.Count += sign * float64(m.Count)
	h.Sum += sign * float64(m.Sum)
	for _, b := range m.Buckets {
		if b != nil {
			h.AddBucket(float64(b.Lower), float64(b.Upper), b.Boundaries, sign*float64(b.Count))
		}
	}
}

// series is the route's per-interval data: every request counted, the failed ones (status
// matching errRe) in Failed, the successful ones' latency in the histograms. A native histogram
// is used where the route has one; else the classic buckets, each [previous le, le] (from 0;
// the +Inf bucket is put at the highest finite bound, as histogram_quantile does).
func (a *routeAcc) series(n int, errRe *regexp.Regexp) result.IntervalSeries {
	c := &requestCounts{all: make([]float64, n), failed: make([]float64, n)}
	hs := make([]*result.Histogram, n)
	// The first histogram of an interval is taken as it is, and the others added into it: each
	// is the accumulator's own, not read again.
	add := func(i int, h *result.Histogram) {
		if hs[i] == nil {
			hs[i] = h
			return
		}
		hs[i].Add(h)
	}
	if len(a.native) > 0 {
		for status, ivs := range a.native {
			failed := errRe.MatchString(status)
			for i, h := range ivs {
				if h == nil {
					continue
				}
				c.all[i] += h.Count
				if failed {
					c.failed[i] += h.Count
				} else {
					add(i, h)
				}
			}
		}
		return newIntervalSeries(result.IntervalKey{}, n, c, hs)
	}
	for status, byLe := range a.buckets {
		failed := errRe.MatchString(status)
		les := make([]float64, 0, len(byLe))
		for le := range byLe {
			les = append(les, le)
		}
		sort.Float64s(les)
		for i := 0; i < n; i++ {
			h := result.NewHistogram()
			lower, below := 0.0, 0.0
			for _, le := range les {
				cum := byLe[le][i]
				upper := le
				if math.IsInf(le, 1) {
					upper = lower
				}
				if cum > below {
					h.AddBucket(lower, upper, 0, cum-below)
				}
				h.Count = max(h.Count, cum)
				below = max(below, cum)
				if !math.IsInf(le, 1) {
					lower = le
				}
			}
			if s := a.sums[status]; s != nil {
				h.Sum = s[i]
			}
			c.all[i] += h.Count
			if failed {
				c.failed[i] += h.Count
			} else if h.Count > 0 {
				add(i, h)
			}
		}
	}
	return newIntervalSeries(result.IntervalKey{}, n, c, hs)
}

// routeResult is a route's totals over all its intervals.
func routeResult(workload, route, metric string, s result.IntervalSeries, step float64) result.RouteResult {
	rr := result.RouteResult{Workload: workload, Route: route, Metric: metric}
	// The intervals' bucket counts are summed by position (they share Bounds), then made one
	// histogram.
	counts := make([]float64, len(s.Bounds))
	var all, failed, sum float64
	for i := range s.Requests {
		all += s.Requests[i]
		failed += s.Failed[i]
		if i < len(s.Counts) {
			for j, c := range s.Counts[i] {
				counts[j] += c
			}
		}
		if i < len(s.Sums) {
			sum += s.Sums[i]
		}
	}
	h := result.NewHistogram()
	for j, c := range counts {
		if c != 0 {
			h.AddBucket(s.Bounds[j][0], s.Bounds[j][1], 0, c)
			h.Count += c
		}
	}
	h.Sum = sum
	rr.Requests, rr.Errors = result.Count(int64(math.Round(all))), result.Count(int64(math.Round(failed)))
	if len(s.Requests) > 0 && step > 0 {
		rr.Rate = result.Num(all / (float64(len(s.Requests)) * step))
	}
	if all > 0 {
		rr.ErrorPercent = result.Num(100 * failed / all)
	}
	ms := func(v float64, ok bool) *float64 {
		if !ok {
			return nil
		}
		return result.Num(1000 * v)
	}
	rr.Avg = ms(h.Mean())
	rr.P50, rr.P75, rr.P90 = ms(h.Quantile(0.5)), ms(h.Quantile(0.75)), ms(h.Quantile(0.9))
	rr.P95, rr.P99 = ms(h.Quantile(0.95)), ms(h.Quantile(0.99))
	return rr
}
