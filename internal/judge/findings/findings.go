package findings

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/result"
)

// The bounds of a hot spot.
const (
	// HotPercent is the share of its CPU request (or, for the busiest pod, of its limit) or of
	// its memory limit above which a workload is a hot spot.
	HotPercent = 80.0
	// ThrottledPercent is the share of CFS periods throttled above which a workload is a hot
	// spot: above it the limit, not the load, sets its latency.
	ThrottledPercent = 5.0
	// UnevenRatio is how far the busiest pod's share of its limit may exceed the workload's mean
	// share before its load is called uneven.
	UnevenRatio = 1.5
	// HotSpotsNamed is how many hot spots are named with their figures, the most severe first
	// (the largest multiple of its bound); the others are listed in one line.
	HotSpotsNamed = 3
	// MoversPerKind is how many rows of each kind (CPU, memory, latency) the movers name.
	MoversPerKind = 2
)

// Source adds findings of its own (a route-latency table, a node-load source): it is called
// with the run's result and its baseline's (nil when none) after the built-in ones.
type Source func(r, baseline *result.Result) []result.Finding

// Sources are the extra sources Run consults, in order. Empty by default.
var Sources []Source

// Run decides the findings of a run's report from its result and, for the cost per request,
// its baseline's result (nil when none or not read): the environment differences first (they
// qualify everything else), then the hot spots, the largest movers, the routes that moved most
// (server-side p95), the CPU per 1,000 requests, uneven load, and the warm-up's latency beside
// the measured window's with a cold start the window still held.
func Run(r, baseline *result.Result) []result.Finding {
	out := environment(r.Comparison)
	out = append(out, hotSpots(r.Workloads)...)
	out = append(out, movers(r.Comparison)...)
	out = append(out, routeMovers(r.Comparison)...)
	out = append(out, costPerRequests(r, baseline)...)
	out = append(out, uneven(r.Workloads)...)
	out = append(out, warmUp(r)...)
	for _, s := range Sources {
		out = append(out, s(r, baseline)...)
	}
	return out
}

// environment names the confounds of a comparison, or says they could not be checked.
func environment(c *result.Comparison) []result.Finding {
	if c == nil {
		return nil
	}
	if c.ConfoundsUnknown != "" {
		return []result.Finding{{Kind: result.FindingEnvironment, Row: "Environment",
			Text: "The environment beyond the variant could not be compared with the baseline's: " + strings.TrimSuffix(c.ConfoundsUnknown, ".") + "."}}
	}
	var out []result.Finding
	for _, cf := range c.Confounds {
		out = append(out, result.Finding{Kind: result.FindingEnvironment, Row: "Environment / " + cf.Workload,
			Text: fmt.Sprintf("The baseline and this run also differ in %s beyond the declared variant: %s. Any change below may come from it as well.",
				confoundWhat(cf), confoundValues(cf))})
	}
	return out
}

func confoundWhat(c result.Confound) string {
	name := workloadShort(c.Workload)
	parts := strings.SplitN(c.Field, "/", 3)
	switch parts[0] {
	case "image":
		return fmt.Sprintf("%s's image (container %s)", name, parts[1])
	case "env":
		return fmt.Sprintf("%s's env var %s (container %s)", name, parts[len(parts)-1], parts[1])
	case "resources":
		return fmt.Sprintf("%s's %s (container %s)", name, parts[len(parts)-1], parts[1])
	case "container":
		return fmt.Sprintf("%s's container %s", name, parts[1])
	case fieldWorkload:
		return fmt.Sprintf("which workloads ran (%s)", name)
	}
	return fmt.Sprintf("%s's %s", name, c.Field)
}

func confoundValues(c result.Confound) string {
	return fmt.Sprintf("%s in the baseline, %s here", orAbsent(c.Baseline), orAbsent(c.Run))
}

// workloadShort is "namespace/name" of "Kind/namespace/name".
func workloadShort(ref string) string {
	if _, rest, ok := strings.Cut(ref, "/"); ok {
		return rest
	}
	return ref
}

func workloadRef(w result.WorkloadResult) string { return w.Kind + "/" + w.Namespace + "/" + w.Name }

// hotSpot is one workload above a hot-spot bound: why, and how far (the largest multiple of a
// bound it exceeds; a restart or an OOM kill is the most severe).
type hotSpot struct {
	name, why string
	severity  float64
}

// rankHotSpots finds the workloads above HotPercent of their CPU request, their busiest pod's
// limit or their memory limit, throttled above ThrottledPercent, or restarted, the most
// severe first.
func rankHotSpots(ws []result.WorkloadResult) []hotSpot {
	var all []hotSpot
	for _, w := range ws {
		var why []string
		severity := 0.0
		add := func(p *float64, bound float64, format string) {
			if over(p, bound) {
				why = append(why, fmt.Sprintf(format, *p))
				severity = math.Max(severity, *p/bound)
			}
		}
		add(w.CPUPercentOfRequest, HotPercent, "its CPU at %.0f %% of its request")
		add(w.CPUPercentOfLimit, HotPercent, "its busiest pod at %.0f %% of its CPU limit")
		add(w.CPUThrottledPercent, ThrottledPercent, "%.1f %% of its CPU periods throttled")
		add(w.MemoryPercentOfLimit, HotPercent, "its memory peaking at %.0f %% of its limit")
		if w.Restarts != nil && *w.Restarts > 0 {
			why = append(why, fmt.Sprintf("%d container restart(s)", *w.Restarts))
			severity = math.Inf(1)
		}
		if w.OOMKills != nil && *w.OOMKills > 0 {
			why = append(why, fmt.Sprintf("%d OOM kill(s)", *w.OOMKills))
			severity = math.Inf(1)
		}
		if len(why) > 0 {
			all = append(all, hotSpot{name: w.Namespace + "/" + w.Name, why: join(why), severity: severity})
		}
	}
	slices.SortStableFunc(all, func(a, b hotSpot) int { return cmp.Compare(b.severity, a.severity) })
	return all
}

// hotSpots names the HotSpotsNamed most severe hot spots with their figures and the others in
// one line. A platform whose services all run far above tiny requests (CPU units of a few
// millicores) would otherwise fill the section with a line per service; a report's own reading
// is "X at 138 %, the rest under 50 %".
func hotSpots(ws []result.WorkloadResult) []result.Finding {
	all := rankHotSpots(ws)
	out := make([]result.Finding, 0, min(len(all), HotSpotsNamed+1))
	var rest []string
	for i, h := range all {
		if i >= HotSpotsNamed {
			rest = append(rest, h.name)
			continue
		}
		out = append(out, result.Finding{Kind: result.FindingHotSpot, Row: "Services: CPU / " + h.name,
			Text: fmt.Sprintf("Hot spot: %s ran with %s.", h.name, h.why)})
	}
	if len(rest) > 0 {
		out = append(out, result.Finding{Kind: result.FindingHotSpot, Row: "Services: CPU",
			Text: fmt.Sprintf("Also above the hot-spot bounds, less so: %s.", join(rest))})
	}
	return out
}

func over(p *float64, bound float64) bool { return p != nil && *p > bound }

func join(parts []string) string {
	if len(parts) < 2 {
		return strings.Join(parts, "")
	}
	return strings.Join(parts[:len(parts)-1], ", ") + " and " + parts[len(parts)-1]
}

// movers names, for each of CPU, memory and p95 latency, the rows with the largest estimated
// change, each as its verdict allows: a change only where the row's verdict claims one.
func movers(c *result.Comparison) []result.Finding {
	if c == nil {
		return nil
	}
	groups := map[string][]result.MetricComparison{}
	for _, mc := range c.Metrics {
		if mc.Estimate == nil || mc.Low == nil || mc.High == nil || mc.Scale != result.ScalePercent || mc.Constant || !moved(mc, c.MinChangePercent) {
			continue
		}
		switch {
		case mc.Workload != "" && (mc.Kind == result.MetricCPU || mc.Kind == result.MetricMemory):
			groups[string(mc.Kind)] = append(groups[string(mc.Kind)], mc)
		case mc.Workload == "" && mc.Kind == perfexpv1alpha1.MetricP95 && mc.Scenario != "":
			groups["latency"] = append(groups["latency"], mc)
		}
	}
	var out []result.Finding
	for _, kind := range []string{string(result.MetricCPU), string(result.MetricMemory), "latency"} {
		rows := groups[kind]
		slices.SortStableFunc(rows, func(a, b result.MetricComparison) int {
			return cmp.Compare(math.Abs(*b.Estimate), math.Abs(*a.Estimate))
		})
		for _, mc := range rows[:min(len(rows), MoversPerKind)] {
			out = append(out, result.Finding{Kind: result.FindingMover, Row: moverRow(mc), Text: MoverText(mc, c.MinChangePercent)})
		}
	}
	return out
}

// moved reports whether a row is a candidate mover: its verdict claims a change, or its
// estimate is at least δ while its interval cannot say (a possible mover, named as "no clear
// change"). A row whose interval lies within ±δ did not move.
func moved(mc result.MetricComparison, delta float64) bool {
	switch mc.Change {
	case perfexpv1alpha1.ChangeRegressed, perfexpv1alpha1.ChangeImproved:
		return true
	case perfexpv1alpha1.ChangeInconclusive:
		return math.Abs(*mc.Estimate) >= delta
	}
	return false
}

func moverRow(mc result.MetricComparison) string {
	if mc.Workload != "" {
		if mc.Kind == result.MetricMemory {
			return "Services: memory / " + workloadShort(mc.Workload)
		}
		return "Services: CPU / " + workloadShort(mc.Workload)
	}
	return "Compared metrics / " + mc.Metric
}

// MoverText is one compared row as a sentence no stronger than its verdict: "rose"/"fell" only
// for a Regressed or Improved row; "no meaningful change" for one whose interval lies within ±δ;
// "no clear change" for the rest.
func MoverText(mc result.MetricComparison, delta float64) string {
	label := moverLabel(mc)
	interval := fmt.Sprintf("%+.1f %% [%+.1f, %+.1f]", *mc.Estimate, *mc.Low, *mc.High)
	switch mc.Change {
	case perfexpv1alpha1.ChangeRegressed, perfexpv1alpha1.ChangeImproved:
		verb := "rose"
		if *mc.Estimate < 0 {
			verb = "fell"
		}
		return fmt.Sprintf("Mover: %s %s by %s against the baseline (%s).", label, verb, interval, mc.Change)
	case perfexpv1alpha1.ChangeNoMeaningfulChange:
		return fmt.Sprintf("No meaningful change in %s: %s, within ±%g %%.", label, interval, delta)
	}
	return fmt.Sprintf("No clear change in %s: %s (%s).", label, interval, orDash(string(mc.Change)))
}

func moverLabel(mc result.MetricComparison) string {
	if mc.Workload != "" {
		what := "CPU"
		if mc.Kind == result.MetricMemory {
			what = "memory"
		}
		return workloadShort(mc.Workload) + "'s " + what
	}
	return mc.Metric
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// CPUPer1000 is a workload's CPU-seconds per 1,000 requests of the run: its mean cores over the
// measured window times the window, over the requests of all scenarios. nil without the numbers.
func CPUPer1000(w result.WorkloadResult, r *result.Result) *float64 {
	if w.CPUAvg == nil || r.Total.Requests == nil || *r.Total.Requests <= 0 || r.Window.MeasuredSeconds <= 0 {
		return nil
	}
	return result.Num(*w.CPUAvg * r.Window.MeasuredSeconds / float64(*r.Total.Requests) * 1000)
}

// costPerRequests gives each workload's CPU-seconds per 1,000 requests, beside the baseline's
// where it has the workload: a ratio of two totals, with no interval, so it is stated as a
// figure and not judged.
func costPerRequests(r, baseline *result.Result) []result.Finding {
	base := map[string]*float64{}
	if baseline != nil {
		for _, w := range baseline.Workloads {
			base[workloadRef(w)] = CPUPer1000(w, baseline)
		}
	}
	var parts []string
	for _, w := range r.Workloads {
		v := CPUPer1000(w, r)
		if v == nil {
			continue
		}
		s := fmt.Sprintf("%s %.3g s", w.Name, *v)
		if b := base[workloadRef(w)]; b != nil && *b > 0 {
			s += fmt.Sprintf(" (baseline %.3g s, %s)", *b, percent(100*(*v / *b - 1)))
		}
		parts = append(parts, s)
	}
	if len(parts) == 0 {
		return nil
	}
	text := "CPU-seconds per 1,000 requests: " + strings.Join(parts, "; ") + "."
	if baseline != nil {
		text += " A ratio of totals with no interval of its own: the CPU rows' verdicts say whether CPU changed."
	}
	return []result.Finding{{Kind: result.FindingCostPerLoad, Row: "Services: CPU and Summary", Text: text}}
}

// uneven names the workloads of several pods whose busiest pod's share of its CPU limit exceeds
// the workload's mean share by UnevenRatio or more (the pods' limits taken as equal).
func uneven(ws []result.WorkloadResult) []result.Finding {
	var out []result.Finding
	for _, w := range ws {
		if w.Pods < 2 || w.CPUPercentOfLimit == nil || w.CPUAvg == nil || w.CPULimit == nil || *w.CPULimit <= 0 {
			continue
		}
		mean := 100 * *w.CPUAvg / *w.CPULimit
		if mean <= 0 || *w.CPUPercentOfLimit < UnevenRatio*mean {
			continue
		}
		out = append(out, result.Finding{Kind: result.FindingUneven, Row: "Services: CPU / " + w.Namespace + "/" + w.Name,
			Text: fmt.Sprintf("Uneven load across %s's %d pods: the busiest ran at %.0f %% of its CPU limit, the pods' mean at %.0f %%.", w.Namespace+"/"+w.Name, w.Pods, *w.CPUPercentOfLimit, mean)})
	}
	return out
}

// percent is a relative difference rounded to whole percent, "±0 %" when it rounds to zero.
func percent(p float64) string {
	if math.Abs(p) < 0.5 {
		return "±0 %"
	}
	return fmt.Sprintf("%+.0f %%", p)
}
