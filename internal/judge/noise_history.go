package judge

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/judge/stats"
	"github.com/perfexp/perfexp/internal/result"
)

// Between-run noise learned from a PerfHistory: the runs of one configuration between two
// change points are repeats of it in this environment (a random-effects view: each run's level
// is the configuration's plus a run effect), so the spread of their log values estimates the
// run effect's sd, per metric, with no calibration run at all.
//
// What the spread holds: a history's runs are whole runs of the same load shape as the two
// compared, so the variance of their log values, τ² = σ²(between) + v(within), is already the
// whole noise of one run, and the difference of two new runs has variance 2τ². The bootstrap's
// within-run variance vw of the compared pair is part of that, so the interval adds
// max(0, 2s² − vw) to it (BetweenRun.WithinIncluded, the random-effects decomposition, truncated
// at zero) rather than 2s² on top, which would count the within-run noise twice.
//
// Small samples: s² from n runs carries n-1 degrees of freedom, and the interval uses Student's
// t on them. With the total variance 2s² that is the exact prediction interval for the
// difference of two new runs of the segment's distribution (s²(n-1)/τ² ~ χ²(n-1)), so a 3-run
// segment gives a wide interval (t with 2 df: 4.3 instead of 1.96), not an overconfident one;
// plugging s in as if it were τ would not (docs/comparison.md, "Between-run noise from the
// history", measures both). An upper confidence bound for τ with the normal quantile was the
// other choice: it over-covers at every n and costs power the t interval keeps.

// Defaults of HistoryNoiseSettings.
const (
	// DefaultHistoryNoiseMinRuns is the fewest runs of a segment that give an estimate: the
	// change-point search's own shortest segment (a shorter one cannot be told from a change).
	// Student's t keeps even a 3-run estimate's intervals at their coverage (t with 2 degrees
	// of freedom is 4.3); more runs buy power, not validity.
	DefaultHistoryNoiseMinRuns = stats.DefaultMinSegment
	// DefaultHistoryNoiseMaxAge is how old a run may be and still count: an environment's
	// noise changes with its nodes, neighbours and data, so a month-old spread says little of
	// today's.
	DefaultHistoryNoiseMaxAge = 30 * 24 * time.Hour
)

// HistoryNoiseSettings say which runs of a history may estimate the between-run noise.
type HistoryNoiseSettings struct {
	// MinRuns is the fewest runs of a segment (within MaxAge) that give an estimate.
	MinRuns int
	// MaxAge leaves out runs older than this.
	MaxAge time.Duration
}

// WithDefaults fills unset settings.
func (s HistoryNoiseSettings) WithDefaults() HistoryNoiseSettings {
	if s.MinRuns < 2 {
		s.MinRuns = DefaultHistoryNoiseMinRuns
	}
	if s.MaxAge <= 0 {
		s.MaxAge = DefaultHistoryNoiseMaxAge
	}
	return s
}

// SegmentVariance is the sum of squared deviations of the logs of values from their mean and
// its degrees of freedom (n-1), the parts that pool across segments. ok is false when a value is
// not positive (no log) or there are fewer than two.
func SegmentVariance(values []float64) (ss float64, df int, ok bool) {
	if len(values) < 2 {
		return 0, 0, false
	}
	logs := make([]float64, len(values))
	mean := 0.0
	for i, v := range values {
		if v <= 0 || math.IsNaN(v) || math.IsInf(v, 0) {
			return 0, 0, false
		}
		logs[i] = math.Log(v)
		mean += logs[i] / float64(len(values))
	}
	for _, l := range logs {
		ss += (l - mean) * (l - mean)
	}
	return ss, len(values) - 1, true
}

// SegmentNoise is one series' estimate: its pooled sum of squares and degrees of freedom over
// the segments it came from, and the age of their runs.
type SegmentNoise struct {
	SS             float64
	DF             int
	Oldest, Newest time.Time
}

// BetweenRun is the estimate as the comparison uses it: sd in percent on the log scale, with
// its runs (degrees of freedom + 1) so the interval uses Student's t.
func (s SegmentNoise) BetweenRun(source string) BetweenRun {
	if s.DF < 1 {
		return BetweenRun{}
	}
	return BetweenRun{SDPercent: 100 * math.Sqrt(s.SS/float64(s.DF)), Runs: s.DF + 1, Source: source, WithinIncluded: true}
}

// HistoryNoise is the between-run noise learned from PerfHistory segments, per series. It is
// used when spec.analysis.betweenRun is not set, and beside one when it adds more noise than
// the explicit value (a calibration is a floor, noise.go); a row without an estimate of its
// own takes the explicit value or the assumed default.
type HistoryNoise struct {
	// Series maps a series key (NoiseKey, WorkloadNoiseKey) to its estimate.
	Series map[string]SegmentNoise
	// Histories name the PerfHistory objects the segments came from.
	Histories []string
	// Now is when the estimate was made, for the age of its runs.
	Now time.Time
	// Settings are the minimum runs and maximum age used.
	Settings HistoryNoiseSettings
}

// source is what a history estimate says of itself in a row's reason and in the comparison.
func (h *HistoryNoise) source() string {
	return "PerfHistory " + strings.Join(h.Histories, ", ") + ", latest segment"
}

// For is the estimate of one series, ok false when the history has none for it.
func (h *HistoryNoise) For(key string) (BetweenRun, bool) {
	if h == nil || key == "" {
		return BetweenRun{}, false
	}
	s, ok := h.Series[key]
	if !ok || s.DF < 1 || s.SS <= 0 {
		return BetweenRun{}, false
	}
	return s.BetweenRun(h.source()), true
}

// historyMetricNames name a request metric in a PerfHistory's series keys.
var historyMetricNames = map[perfexpv1alpha1.ObjectiveMetric]string{
	perfexpv1alpha1.MetricAvg: "avg", perfexpv1alpha1.MetricP50: "p50", perfexpv1alpha1.MetricP95: "p95",
	perfexpv1alpha1.MetricP99: "p99", perfexpv1alpha1.MetricRate: "rate",
}

// NoiseKey is the key of a scenario's (or one of its request names') metric in a PerfHistory
// (history.SeriesOf): "checkout/p95", "checkout/GET /items/p95"; "" for a metric a history does
// not keep on the log scale.
func NoiseKey(scenario, request string, m perfexpv1alpha1.ObjectiveMetric) string {
	name, ok := historyMetricNames[m]
	if !ok || scenario == "" {
		return ""
	}
	if request != "" {
		return scenario + "/" + request + "/" + name
	}
	return scenario + "/" + name
}

// WorkloadNoiseKey is the key of a workload's CPU or memory in a PerfHistory:
// "service:Deployment/shop/api/cpu".
func WorkloadNoiseKey(workload string, m perfexpv1alpha1.ObjectiveMetric) string {
	switch m {
	case result.MetricCPU:
		return "service:" + workload + "/cpu"
	case result.MetricMemory:
		return "service:" + workload + "/memory"
	}
	return ""
}

// noiseKey is a row's key in a history, "" for groups, Trends, iterations and counters (a
// history does not keep them).
func (w row) noiseKey() string {
	if w.group != "" || w.trend != "" || w.iteration || w.counter != "" {
		return ""
	}
	return NoiseKey(w.scenario, w.request, w.kind)
}

// age says how long ago t was, in days or hours.
func age(now, t time.Time) string {
	d := now.Sub(t)
	switch {
	case d >= 48*time.Hour:
		return fmt.Sprintf("%.0f days", d.Hours()/24)
	case d >= time.Hour:
		return fmt.Sprintf("%.0f h", d.Hours())
	default:
		return fmt.Sprintf("%.0f min", math.Max(0, d.Minutes()))
	}
}

// summary says, for the comparison's noise, which rows took their sd from the history (their
// keys and sd, the fewest and most runs, and how old the runs are), within limit characters.
func (h *HistoryNoise) summary(used map[string]BetweenRun, fallback BetweenRun, others bool, limit int) string {
	keys := make([]string, 0, len(used))
	for k := range used {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var oldest, newest time.Time
	minRuns, maxRuns := 0, 0
	for i, k := range keys {
		s := h.Series[k]
		if i == 0 || s.Oldest.Before(oldest) {
			oldest = s.Oldest
		}
		if i == 0 || s.Newest.After(newest) {
			newest = s.Newest
		}
		if r := s.DF + 1; i == 0 || r < minRuns {
			minRuns = r
		}
		if r := s.DF + 1; r > maxRuns {
			maxRuns = r
		}
	}
	runs := fmt.Sprint(minRuns)
	if maxRuns != minRuns {
		runs = fmt.Sprintf("%d-%d", minRuns, maxRuns)
	}
	head := fmt.Sprintf("between-run sd from %s (%s runs, newest %s old, oldest %s; Student's t): ",
		h.source(), runs, age(h.Now, newest), age(h.Now, oldest))
	tail := ""
	if others {
		tail = "; other rows: " + fallback.String()
	}
	list := make([]string, 0, len(keys))
	for _, k := range keys {
		list = append(list, fmt.Sprintf("%s %.3g %%", k, used[k].SDPercent))
	}
	body := strings.Join(list, ", ")
	if len(head)+len(body)+len(tail) > limit {
		// Say the range instead of every row.
		lo, hi := math.Inf(1), 0.0
		for _, b := range used {
			lo, hi = math.Min(lo, b.SDPercent), math.Max(hi, b.SDPercent)
		}
		body = fmt.Sprintf("%d rows, %.3g-%.3g %%", len(keys), lo, hi)
	}
	return head + body + tail
}
