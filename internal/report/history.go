package report

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/types"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/history"
)

// KeyHistory is the report ConfigMap's key for the history section on its own.
const KeyHistory = "history.md"

// historyHeading starts the history section in report.md, so writing it again replaces it.
const historyHeading = "## History"

// DefaultHistoryRuns is how many earlier comparable runs the report's history section shows.
const DefaultHistoryRuns = 10

var sparks = []rune("▁▂▃▄▅▆▇█")

// Sparkline draws xs as one block character per value, from the lowest (▁) to the highest
// (█); a flat series is drawn at the middle.
func Sparkline(xs []float64) string {
	if len(xs) == 0 {
		return ""
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, x := range xs {
		lo, hi = math.Min(lo, x), math.Max(hi, x)
	}
	out := make([]rune, len(xs))
	for i, x := range xs {
		k := len(sparks) / 2
		if hi > lo {
			k = int(math.Round((x - lo) / (hi - lo) * float64(len(sparks)-1)))
		}
		out[i] = sparks[k]
	}
	return string(out)
}

// reportedMetrics are the series the report's section shows, per scenario.
var reportedMetrics = map[string]bool{"avg": true, "p95": true, "p99": true, "errorPercent": true, "rate": true}

// HistorySection is the "History" section of an experiment's report: the run against the
// last n comparable runs before it (the median of their values, the change, a sparkline of
// all of them), and the change points found among them. A change is found only once runs at
// the new level follow it (three by default), so the run itself is never marked as starting a
// change on the day it ran; a later run's report, and `kubectl perfexp history`, show it.
func HistorySection(h *perfexpv1alpha1.PerfHistory, uid types.UID, n int) string {
	idx := -1
	for i, r := range h.Status.Records {
		if r.UID == uid {
			idx = i
		}
	}
	if idx < 0 {
		return ""
	}
	if n <= 0 {
		n = DefaultHistoryRuns
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s\n\n", historyHeading)
	from := max(0, idx-n)
	fmt.Fprintf(&b, "Run %d of %d in history `%s` (comparable runs: same target, scenarios, scripts, load shape and variant). ",
		idx+1+int(h.Status.Dropped), len(h.Status.Records)+int(h.Status.Dropped), h.Name)
	if idx == from {
		b.WriteString("It is the first run of its kind: nothing to compare with yet.\n\n")
		return b.String()
	}
	fmt.Fprintf(&b, "Compared with the %d runs before it.\n\n", idx-from)
	b.WriteString("| Series | This run | Median before | Change | Trend |\n|---|---:|---:|---:|---|\n")
	for _, s := range history.SeriesOf(h.Status.Records[:idx+1]) {
		if !reportedMetrics[s.Metric] || strings.Count(s.Key, "/") != 1 || s.Records[len(s.Records)-1] != idx {
			continue
		}
		var before []float64
		for j, ri := range s.Records {
			if ri >= from && ri < idx {
				before = append(before, s.Values[j])
			}
		}
		if len(before) == 0 {
			continue
		}
		this, med := s.Values[len(s.Values)-1], median(before)
		change := "–"
		if med != 0 {
			change = fmt.Sprintf("%+.1f %%", 100*(this-med)/med)
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s |\n", cell(s.Key), fmtValue(this, s.Unit), fmtValue(med, s.Unit), change,
			Sparkline(append(before, this)))
	}
	var changes []history.Change
	for _, c := range history.Changes(&perfexpv1alpha1.PerfHistory{ObjectMeta: h.ObjectMeta, Spec: h.Spec,
		Status: perfexpv1alpha1.PerfHistoryStatus{Records: h.Status.Records[:idx+1]}}) {
		if c.Record >= from {
			changes = append(changes, c)
		}
	}
	b.WriteString("\n")
	if len(changes) == 0 {
		b.WriteString("No change point among these runs.\n")
		return b.String()
	}
	b.WriteString("Change points among these runs:\n\n| Starts at | Series | Before | After | Change | p | Verdict |\n|---|---|---:|---:|---:|---:|---|\n")
	for _, c := range changes {
		verdict := string(c.Verdict)
		if c.Confirmed {
			verdict += " (confirmed)"
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %+.1f %% | %.2g | %s |\n", cell(c.Experiment), cell(c.Series),
			fmtValue(c.Before, c.Unit), fmtValue(c.After, c.Unit), 100*c.Change, c.PValue, orDash(verdict))
	}
	return b.String()
}

// WithHistory puts section into a report's Markdown, replacing an earlier history section: with
// the answers, before "How this was decided".
func WithHistory(md, section string) string {
	if i := strings.Index(md, "\n"+historyHeading+"\n"); i >= 0 {
		rest := md[i+1+len(historyHeading):]
		end := strings.Index(rest, "\n## ")
		if end < 0 {
			md = md[:i+1]
		} else {
			md = md[:i+1] + rest[end+1:]
		}
	}
	return beforeDecided(md, section)
}

func median(xs []float64) float64 {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func fmtValue(v float64, unit string) string {
	switch unit {
	case "ms":
		return fmt.Sprintf("%.1f ms", v)
	case "%":
		return fmt.Sprintf("%.2f %%", v)
	case unitPerSecond:
		return fmt.Sprintf("%.1f/s", v)
	case "bytes":
		return fmt.Sprintf("%.0f MiB", v/(1<<20))
	case "cores":
		return fmt.Sprintf("%.3f cores", v)
	}
	return fmt.Sprintf("%.4g", v)
}
