package result

import (
	"math"
	"sort"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/text"
)

// statusFailing bounds the failing checks in the experiment's status.
const statusFailing = 8

// CheckResult is one k6 check of a scenario (`check(res, {'status is 200': ...})`).
type CheckResult struct {
	Name string `json:"name"`
	// PassPercent is the lowest pass rate, in percent, among the runners and tag sets that ran
	// the check, each counted since its runner began (k6 writes the rate without counts, so
	// the warm-up is not subtracted and runners are not summed). 100 means no check failed.
	PassPercent *float64 `json:"passPercent,omitempty"`
	// Series is how many runner and tag-set series the check has.
	Series int `json:"series"`
}

// CounterResult is one custom k6 Counter of a scenario (`new Counter('name')`).
type CounterResult struct {
	Name   string `json:"name"`
	Metric string `json:"metric"`
	// Total is what the script added in the window (exact: the edges' difference, summed over
	// runners and tag sets); Rate is Total per second of the scenario's active span.
	Total *float64 `json:"total,omitempty"`
	Rate  *float64 `json:"rate,omitempty"`
}

// RateResult is one custom k6 Rate of a scenario (`new Rate('name')`).
type RateResult struct {
	Name   string `json:"name"`
	Metric string `json:"metric"`
	// Percent is the lowest share of non-zero values, in percent, among runners and tag sets,
	// each since its runner began (as CheckResult.PassPercent).
	Percent *float64 `json:"percent,omitempty"`
}

// GaugeResult is one custom k6 Gauge of a scenario (`new Gauge('name')`, written as k6_<name>).
type GaugeResult struct {
	Name   string `json:"name"`
	Metric string `json:"metric"`
	// Min and Max are the lowest and highest values k6 wrote in the window, over every runner
	// and tag set (every sample read, the window (start, end] as a range selector's). k6 writes a
	// Gauge's current value once per push interval, so a value set and replaced between two
	// pushes is not among them: they lie within k6's own min and max.
	Min *float64 `json:"min,omitempty"`
	Max *float64 `json:"max,omitempty"`
	// Last is the last value written in the window when one series (one runner, one tag set)
	// wrote the Gauge; with several there is no single last value.
	Last *float64 `json:"last,omitempty"`
	// Series is how many runner and tag-set series wrote it.
	Series int `json:"series"`
}

// statusFailingChecks are the checks below 100 %, lowest first, bounded for the status: the
// status stays small, and a passing check is not news.
func statusFailingChecks(cs []CheckResult) []perfexpv1alpha1.CheckResult {
	var failing []CheckResult
	for _, c := range cs {
		if c.PassPercent != nil && *c.PassPercent < 100 {
			failing = append(failing, c)
		}
	}
	sort.SliceStable(failing, func(i, j int) bool { return *failing[i].PassPercent < *failing[j].PassPercent })
	var out []perfexpv1alpha1.CheckResult
	for i, c := range failing {
		if i == statusFailing {
			break
		}
		// Two decimals, never rounded up to a passing 100.
		p := math.Floor(*c.PassPercent*100) / 100
		out = append(out, perfexpv1alpha1.CheckResult{Name: text.Truncate(c.Name, 256), PassPercent: fixed(&p, 2)})
	}
	return out
}

// GaugeStat picks Min, Max or Last of a Gauge.
func GaugeStat(g *GaugeResult, m perfexpv1alpha1.ObjectiveMetric) *float64 {
	switch m {
	case perfexpv1alpha1.MetricMin:
		return g.Min
	case perfexpv1alpha1.MetricMax:
		return g.Max
	case perfexpv1alpha1.MetricLast:
		return g.Last
	}
	return nil
}

// MaxCustomNames bounds the custom Counters and Rates reported per scenario; the notes say
// which were left out.
const MaxCustomNames = 32

// The kinds of customKind.
const (
	KindCheck   = "check"
	KindCounter = "counter"
	KindRate    = "rate"
	KindGauge   = "gauge"
)
