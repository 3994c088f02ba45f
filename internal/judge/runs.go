package judge

import (
	"fmt"
	"math"
	"slices"
	"strings"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/judge/stats"
	"github.com/perfexp/perfexp/internal/result"
)

// CompareRuns compares the repeated runs of an arm with the repeated runs of its baseline,
// with the run as the unit of replication. base and cur hold one Result per run (from each
// experiment's report). The sweep controller calls it once per arm; AdjustArms then applies
// the multiplicity control across the arms of a sweep.
//
// Each run contributes one statistic per metric (its p95, its average, ...). Latencies and
// throughput are compared as the ratio of the geometric means of the runs, with Welch's t
// interval on the logs (the way benchstat compares benchmark runs), so the interval holds
// the noise between runs, which the intervals of one run cannot show. Error rates are
// compared as the difference of the runs' mean error rates, in percentage points. Runs that
// are not Valid are left out (and the comparison says so). With one run left on each side the
// comparison falls back to the single-run block bootstrap over the runs' stored intervals.
func CompareRuns(base, cur []*result.Result, opts CompareOptions) *result.Comparison {
	o := opts.withDefaults()
	c := &result.Comparison{Change: perfexpv1alpha1.ChangeUnknown, Method: result.MethodRuns, MinChangePercent: o.MinChangePercent}
	base, droppedBase := validRuns(base)
	cur, droppedCur := validRuns(cur)
	if len(base) > 0 {
		c.Baseline = base[0].Experiment
	}
	var notes []string
	if droppedBase+droppedCur > 0 {
		notes = append(notes, fmt.Sprintf("%d baseline and %d arm runs were left out: their results are not Valid", droppedBase, droppedCur))
	}
	switch {
	case len(base) == 0:
		c.Message = "no valid baseline run to compare with"
		return c
	case len(cur) == 0:
		c.Message = "no valid run to compare"
		return c
	}
	ref := cur[0]
	for _, r := range cur[1:] {
		if d := runDifference(ref, r); d != "" {
			c.Message = fmt.Sprintf("the runs of %s differ among themselves: %s", ref.Experiment, d)
			return c
		}
	}
	for _, r := range base {
		b := &Baseline{Name: r.Experiment, TestID: r.TestID, Result: r}
		if msg := BaselineProblem(ref, b); msg != "" {
			c.Message = msg
			return c
		}
	}
	if len(base) == 1 && len(cur) == 1 {
		if base[0].Intervals == nil || cur[0].Intervals == nil {
			c.Message = "one valid run per side, and its results hold no per-interval data to compare (analysed by an older perfexp); repeat the runs"
			return c
		}
		b := &Baseline{Name: base[0].Experiment, TestID: base[0].TestID, Result: base[0]}
		single := Compare(cur[0], cur[0].Intervals, b, base[0].Intervals, o)
		single.Notes = append(single.Notes, notes...)
		return single
	}
	if failedIn(append(slices.Clone(cur), base...)...) {
		notes = append(notes, SuccessfulLatencyNote)
	}
	c.Runs, c.BaselineRuns, c.Notes = len(cur), len(base), notes
	paired, unpaired := 0, ""
	var noiseNotes []string
	for _, w := range rows(ref, base[0], o) {
		w.zeroIfAbsent = w.counter != "" && counterSeen(append(slices.Clone(cur), base...), w)
		mc := newMetricComparison(w, o)
		vc, vb := runValues(cur, w), runValues(base, w)
		mc.Unit = w.unit(ref)
		mc.Value, mc.Baseline = mean(vc), mean(vb)
		fillDelta(&mc)
		missing := w.missing(cur, base)
		switch {
		case w.kind == perfexpv1alpha1.MetricMax:
			setUnknown(&mc, "a maximum is one request's latency: it has no interval to decide on")
		case missing != "":
			setUnknown(&mc, missing)
		case len(vc) < len(cur) || len(vb) < len(base):
			setUnknown(&mc, fmt.Sprintf("only %d of %d runs and %d of %d baseline runs have it", len(vc), len(cur), len(vb), len(base)))
		case w.counter != "" && allZero(vb):
			// Counts from none: no ratio, so no pairing either; the counts themselves decide.
			fill(&mc, zeroBaseEffect(runCounts(cur, w), runCounts(base, w)).atLevel(o.alpha()), result.MethodRuns, "runs")
			o.orientRow(w, &mc)
		default:
			e, method := pairedOrNot(cur, base, w, o, &unpaired)
			if e == nil {
				e = runEffect(vc, vb, w.kind, o.MinChangePercent)
			} else {
				paired++
				if mc.Primary {
					noiseNotes = append(noiseNotes, pairedNoiseNotes(w.label(), e)...)
				}
			}
			fill(&mc, e.atLevel(o.alpha()), method, "runs")
			o.orientRow(w, &mc)
		}
		c.Metrics = append(c.Metrics, mc)
	}
	c.Metrics = append(c.Metrics, workloadRunRows(cur, base, o, &paired, &unpaired)...)
	c.Metrics = append(c.Metrics, routeRunRows(cur, base, o)...)
	c.Metrics = append(c.Metrics, queryRunRows(cur, base, o, &paired, &unpaired)...)
	notes, cal := designNotes(o.Design, ref, paired, unpaired)
	c.Notes, c.Calibration = append(c.Notes, notes...), cal
	c.Notes = append(c.Notes, noiseNotes...)
	c.Method = methodOf(c.Method, paired)
	c.Notes = append(c.Notes, notRunNotes(ref, base[0], o)...)
	c.Notes = append(c.Notes, saturationCompareNotes(cur, base)...)
	compareCustomRuns(c, cur, base, o)
	finishLevel(c, o.level)
	return c
}

// AdjustArms applies Holm's multiplicity control across the primary metrics of all arms of one
// sweep together, and re-decides each arm's headline, in place: with 4 arms of 2 primary
// metrics each, a claim needs its p-value to survive a family of 8, so the chance that any
// arm of an A/A sweep is called changed stays at 5 %.
func AdjustArms(arms []*result.Comparison) { adjust(arms, alpha) }

// AdjustArmsAt is AdjustArms at the error rate a: a sequential sweep's look (sequential.go).
func AdjustArmsAt(arms []*result.Comparison, a float64) { adjust(arms, a) }

// AdjustArmsLook is AdjustArms at a sequential look: Holm across the family at the look's level
// for its size (stats.Look.AlphaFor), the hypotheses held from earlier looks (stats.Look.Held) included.
func AdjustArmsLook(arms []*result.Comparison, look stats.Look) {
	adjustLevel(arms, look.AlphaFor, look.Held)
}

func validRuns(rs []*result.Result) ([]*result.Result, int) {
	out := make([]*result.Result, 0, len(rs))
	for _, r := range rs {
		if r != nil && r.Validity == perfexpv1alpha1.Valid {
			out = append(out, r)
		}
	}
	return out, len(rs) - len(out)
}

// runDifference says how two runs of one arm differ in scenarios or load shape, or "".
func runDifference(a, b *result.Result) string {
	msg := BaselineProblem(a, &Baseline{Name: b.Experiment, Result: b})
	return strings.TrimPrefix(msg, "baseline ")
}

// runValues is the metric of each run that has it.
func runValues(rs []*result.Result, w row) []float64 {
	var out []float64
	for _, r := range rs {
		if v := w.compared(r, true); v != nil && result.Finite(*v) {
			out = append(out, *v)
		}
	}
	return out
}

// counterSeen is whether any of the runs has the row's Counter.
func counterSeen(rs []*result.Result, w row) bool {
	for _, r := range rs {
		if r.CounterStats(w.scenario, w.counter) != nil {
			return true
		}
	}
	return false
}

// relativeEffect compares counts of which some run saw none (a k6 Counter never incremented,
// a query counting failures that did not happen), where the ratio of geometric means has no
// logarithm: the change is the ratio of the arithmetic means less one, its standard error
// sqrt(Vc/nc + max(1, R²)·Vb/nb)/mb with R = mc/mb, and its degrees of freedom
// Welch-Satterthwaite's over the two terms. Above R = 1 that is the delta method's; below it the
// baseline's term is the difference's, not the delta method's R²·Vb/nb, which vanishes as R goes
// to 0 and made an arm without a failure beside a baseline with 26 and 27 read -100 % with an
// interval of width 0. A count cannot fall below zero, so neither can the interval's lower end
// fall below -100 %. The rule's thresholds are ±δ on that scale.
func relativeEffect(cur, base []float64, minChange float64) *effect {
	e := &effect{relative: true, up: minChange / 100, down: -minChange / 100, n: len(cur), baseN: len(base)}
	if len(cur)+len(base) < 3 {
		e.few = fmtFew(len(cur), len(base), 2, "runs")
		return e
	}
	mc, mb := *mean(cur), *mean(base)
	ratio := mc / mb
	e.point = ratio - 1
	nc, nb := float64(len(cur)), float64(len(base))
	vc, vb := stats.Variance(cur, mc), stats.Variance(base, mb)
	if len(cur) < 2 || len(base) < 2 {
		// One run on a side: its variance is the other side's, as for the pooled t.
		pooled := ((nc-1)*vc + (nb-1)*vb) / (nc + nb - 2)
		vc, vb = pooled, pooled
	}
	a, b := vc/nc/(mb*mb), math.Max(1, ratio*ratio)*vb/nb/(mb*mb)
	se := math.Sqrt(a + b)
	df := nc + nb - 2
	if len(cur) >= 2 && len(base) >= 2 && a+b > 0 {
		df = (a + b) * (a + b) / (a*a/(nc-1) + b*b/(nb-1))
	}
	e.tInterval(se, df)
	e.low = math.Max(e.low, -1)
	return e
}

func nonNegative(vs []float64) bool {
	for _, v := range vs {
		if v < 0 {
			return false
		}
	}
	return true
}

func mean(vs []float64) *float64 {
	if len(vs) == 0 {
		return nil
	}
	var s float64
	for _, v := range vs {
		s += v
	}
	return result.Num(s / float64(len(vs)))
}

// runEffect estimates the change from per-run values: the difference of mean logs (the log of
// the ratio of geometric means), or for error rates of means, with Welch's t interval. With a
// single run on one side its variance cannot be estimated, so both sides share one (the
// pooled two-sample t).
func runEffect(cur, base []float64, kind perfexpv1alpha1.ObjectiveMetric, minChange float64) *effect {
	bm := *mean(base)
	up, down, logScale := thresholds(kind, minChange, bm)
	e := &effect{logScale: logScale, up: up, down: down, n: len(cur), baseN: len(base)}
	xc, xb := cur, base
	if logScale {
		xc, xb = stats.Logs(cur), stats.Logs(base)
		if xc == nil || xb == nil {
			if nonNegative(cur) && nonNegative(base) && bm > 0 {
				return relativeEffect(cur, base, minChange)
			}
			e.few = "a run has a zero value: no ratio"
			if bm == 0 {
				e.few = "every baseline run has 0 of it: a change relative to the baseline is not defined"
			}
			return e
		}
	}
	if len(cur)+len(base) < 3 {
		e.few = fmtFew(len(cur), len(base), 2, "runs")
		return e
	}
	mc, mb := *mean(xc), *mean(xb)
	vc, vb := stats.Variance(xc, mc), stats.Variance(xb, mb)
	e.point = mc - mb
	var se, df float64
	nc, nb := float64(len(xc)), float64(len(xb))
	if len(xc) < 2 || len(xb) < 2 {
		pooled := ((nc-1)*vc + (nb-1)*vb) / (nc + nb - 2)
		se, df = math.Sqrt(pooled*(1/nc+1/nb)), nc+nb-2
	} else {
		a, b := vc/nc, vb/nb
		se = math.Sqrt(a + b)
		df = (a + b) * (a + b) / (a*a/(nc-1) + b*b/(nb-1))
	}
	e.tInterval(se, df)
	return e
}

func allZero(vs []float64) bool {
	for _, v := range vs {
		if v != 0 {
			return false
		}
	}
	return true
}

// runCounts is the row's Counter total in each run: 0 in a run of the scenario without it
// (row.zeroIfAbsent), so one value per run as runValues has.
func runCounts(rs []*result.Result, w row) []float64 {
	out := make([]float64, 0, len(rs))
	for _, r := range rs {
		n := 0.0
		if sc, _ := r.ScenarioNamed(w.scenario); sc != nil {
			for _, c := range sc.Counters {
				if c.Name == w.counter && c.Total != nil {
					n = *c.Total
				}
			}
		}
		out = append(out, n)
	}
	return out
}

// zeroBaseEffect decides a Counter of which every baseline run counted 0, where a change
// relative to the baseline has no value: whether the arm's count rose above none, on the counts
// of the runs (cur, base), with no interval. Runs of one comparison have one load shape
// (BaselineProblem), so under no change each run's count has one mean, and given the total S
// the arm's share of it is binomial with p = nc/(nc+nb) (the exact conditional test of two
// Poisson rates): all S in the arm has probability p^S. Counts between runs vary more than
// Poisson's (a slow node fails a burst of requests), and a baseline of zeros shows none of
// that, so the dispersion φ = variance/mean is the arm's runs' own, never below Poisson's 1,
// and the test runs on S/φ counts' worth of evidence (quasi-Poisson). One arm run has no
// spread to estimate φ from, and Poisson's alone would call a burst of failures in a single
// run a change, so it is not claimed. The p-value is doubled, as every two-sided p-value a
// claim is held to here; a count cannot fall below 0, so the only claim is a rise.
func zeroBaseEffect(cur, base []float64) *effect {
	e := &effect{n: len(cur), baseN: len(base), relative: true}
	mc := *mean(cur)
	switch {
	case mc == 0:
		e.few = fmt.Sprintf("0 in every run of both sides (%d and %d runs): nothing to compare", len(cur), len(base))
		return e
	case len(cur) < 2:
		e.few = fmt.Sprintf("every baseline run has 0 of it and the one run %g: a single run shows no spread between runs to test a rise from 0 against; repeat the runs", mc)
		return e
	}
	phi := math.Max(1, stats.Variance(cur, mc)/mc)
	s := mc * float64(len(cur))
	p := float64(len(cur)) / float64(len(cur)+len(base))
	e.pNoChange = math.Min(1, 2*math.Pow(p, s/phi))
	e.pBeyond = e.pNoChange
	e.zeroBase = fmt.Sprintf("0 in each of %d baseline runs, %.3g per run in the arm's %d (%s)", len(base), mc, len(cur), countsText(cur))
	return e
}

func countsText(vs []float64) string {
	parts := make([]string, len(vs))
	for i, v := range vs {
		parts[i] = fmt.Sprintf("%g", v)
	}
	return strings.Join(parts, ", ")
}
