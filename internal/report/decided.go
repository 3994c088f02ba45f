// The report's "How this was decided": the comparison's method, the noise sources and guards
// that widened its intervals, the reasons its rows give (each once, numbered), the run's notes
// and where the numbers came from. It follows the answer and the detail tables, so a reader
// meets the answer first and the method once.

package report

import (
	"fmt"
	"strings"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/result"
)

// decided writes the section.
func (m *markdown) decided(r *result.Result) {
	m.printf("## %s\n\n", decidedHeading)
	if c := r.Comparison; c != nil && len(c.Metrics) > 0 {
		m.printf("%s\n\n", method(c))
		if c.NodeLoad != nil || c.BaselineNodeLoad != nil {
			m.printf("Node load outside the experiment: this run %s; baseline %s%s.", c.NodeLoad.Figure(), c.BaselineNodeLoad.Figure(), notSeen(c))
			if c.Disturbed != "" {
				m.printf(" **Intervals widened:** %s.", strings.TrimSuffix(c.Disturbed, "."))
			}
			m.printf("\n\n")
		}
		if workloadRows(c) > 0 {
			m.printf("Each workload's CPU and memory are compared by the same rule in the Services tables; they are secondary: they never decide the headline.\n\n")
		}
	}
	m.rowReasons()
	if len(r.Notes) > 0 {
		m.printf("### Notes\n\n")
		for _, n := range r.Notes {
			m.printf("- %s\n", n)
		}
		m.printf("\n")
	}
	m.numbersRead(r.PrometheusQueries, r.LatencySource, r.CountsInexact)
}

// notSeen is the clause that says which side's node load could not see processes outside
// pods, "" when both could.
func notSeen(c *result.Comparison) string {
	cur, base := c.NodeLoad.SeesOutsidePods(), c.BaselineNodeLoad.SeesOutsidePods()
	switch {
	case !cur && !base:
		return " (" + result.NotSeenOutsidePods + ")"
	case !cur:
		return " (this run: " + result.NotSeenOutsidePods + ")"
	case !base:
		return " (the baseline: " + result.NotSeenOutsidePods + ")"
	}
	return ""
}

// beforeDecided puts a section written after the analysis (a confirmation's answer, the history)
// before "How this was decided", so that it reads with the answers the report opens with; at the
// end of a report without that section.
func beforeDecided(md, section string) string {
	if section == "" {
		return md
	}
	section = strings.TrimRight(section, "\n")
	if i := strings.Index(md, "\n## "+decidedHeading+"\n"); i >= 0 {
		return md[:i+1] + section + "\n\n" + md[i+1:]
	}
	return strings.TrimRight(md, "\n") + "\n\n" + section + "\n"
}

// rowReasons lists the reasons the tables' verdicts refer to by number.
func (m *markdown) rowReasons() {
	if m.notes.empty() {
		return
	}
	m.printf("Why a row reads as it does, for the verdicts marked with a number:\n\n")
	m.notes.write(m)
}

// method is the paragraph that explains the comparison's method, δ and multiplicity control.
func method(c *result.Comparison) string {
	var b strings.Builder
	switch c.Method {
	case result.MethodRuns:
		fmt.Fprintf(&b, "Method: the run is the unit (%d runs against %d baseline runs): each run gives one value per metric, and the "+
			"change is the ratio of the runs' geometric means with Welch's t interval on the logs; error rates are compared as the "+
			"difference of the runs' mean rates in percentage points.", c.Runs, c.BaselineRuns)
	default:
		b.WriteString("Method: one run per side, a moving-block bootstrap over the runs' per-interval histograms and counts " +
			"(blocks of neighbouring intervals keep their correlation; a resampled p95 is the p95 of the merged histograms), " +
			"widened by the noise between runs of one configuration, which one run per side cannot see: ")
		if c.Noise != "" {
			b.WriteString(c.Noise + ".")
		} else {
			b.WriteString("none was added (analysed by an older perfexp).")
		}
	}
	fmt.Fprintf(&b, " A metric is Regressed or Improved only when its whole 95 %% interval lies beyond ±%g %% (the minimum meaningful change), "+
		"NoMeaningfulChange when it lies inside ±%g %%, otherwise Inconclusive; error rates use ±%g %% of the baseline's rate but at least 0.1 "+
		"percentage points. The adjusted p is that of a change beyond ±δ after the multiplicity control: Holm for the primary metrics, Benjamini-Hochberg across the other rows, whose claims it holds to a 5 %% false discovery rate.", c.MinChangePercent, c.MinChangePercent, c.MinChangePercent)
	if customCompared(c) {
		b.WriteString(" Check pass rates and custom Rates are shares in percent, compared in points like error rates (δ of the rarer side: " +
			"a check's fails); k6 writes them without counts, so one run per side cannot decide them. Custom Gauges are compared as ratios " +
			"across repeated runs. A Rate's or Gauge's direction (is higher better?) is taken from an objective that bounds it.")
	}
	if c.Multiplicity != "" {
		fmt.Fprintf(&b, " The headline is decided on the primary metrics with %s (a primary metric without errors on either side cannot change and is not counted); other metrics never change it.", c.Multiplicity)
	}
	for _, n := range c.Notes {
		// The single-run note restates the noise above; the guards' notes are the widening below.
		if !strings.HasPrefix(n, "one run per side") && !disturbedBy(c, n) {
			fmt.Fprintf(&b, " %s.", strings.TrimSuffix(n, "."))
		}
	}
	return b.String()
}

// disturbedBy is true when note is one of the reasons the comparison's intervals were widened
// for (Disturbed joins them with "; ").
func disturbedBy(c *result.Comparison, note string) bool {
	return c.Disturbed != "" && strings.Contains("; "+c.Disturbed+"; ", "; "+note+"; ")
}

// customCompared is true when a comparison has check, custom Rate or Gauge rows.
func customCompared(c *result.Comparison) bool {
	for _, mc := range c.Metrics {
		switch mc.Kind {
		case perfexpv1alpha1.MetricPassRate, perfexpv1alpha1.MetricPercent, perfexpv1alpha1.MetricMin, perfexpv1alpha1.MetricLast:
			return true
		}
		if mc.Kind == perfexpv1alpha1.MetricMax && strings.Contains(mc.Metric, " gauge ") {
			return true
		}
	}
	return false
}

// numbersRead says where the numbers came from.
func (m *markdown) numbersRead(queries int, source perfexpv1alpha1.LatencySource, inexact bool) {
	m.printf("### How these numbers were read\n\n")
	if inexact {
		// The backend warned (a partial answer, a store that did not answer): the same reading
		// is no longer exact, and the report must not say it is.
		m.printf("Request and error counts are k6's counters read at the edges of the measured window, from answers the metrics backend sent with warnings (see Notes): **not exact**, they may be short. ")
	} else {
		m.printf("Request and error counts are k6's counters read at the edges of the measured window (exact; no `increase()` extrapolation). ")
	}
	switch source {
	case perfexpv1alpha1.LatencyFromTrendStats:
		m.printf("Latencies come from k6's trend-stat gauges (no native histograms were written): each runner's own statistics over its whole run, warm-up included; ")
		m.printf("where several runners or series make up a row its percentiles are the largest of theirs, an upper bound, and objectives on them are Met only below a maximum, else Unknown. ")
	case perfexpv1alpha1.LatencyFromNativeHistogram:
		m.printf("Percentiles come from k6's native histograms summed over every runner, with the histogram at the window's start subtracted; ")
		m.printf("they are never averaged; max is the top of the highest non-empty bucket, an upper bound. ")
	default:
		m.printf("No latencies were found. ")
	}
	m.printf("Workload numbers come from cAdvisor; a container counts at a step only while its newest sample is fresh, ")
	m.printf("so a pod replaced by a rollout is not carried forward by Prometheus' five-minute lookback. %d Prometheus queries.\n", queries)
}
