package dashboards_test

import (
	"context"
	"fmt"
	"math"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	promv1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"

	"github.com/perfexp/perfexp/internal/dashboards"
)

// grafana stands in for Grafana: it substitutes a dashboard's variables the way Grafana's
// Prometheus data source does and runs its queries against a real Prometheus.
type grafana struct {
	api promv1.API
	// from and to are the dashboard's time range.
	from, to time.Time
	// vars are the variables' values; a variable with several values is formatted as a
	// regular expression alternative, as Grafana does for multi-value variables.
	vars map[string][]string
}

// Grafana's defaults: the Prometheus data source's scrape interval (15 s) bounds $__interval
// from below, and $__rate_interval is max($__interval + scrape interval, 4 * scrape interval).
const (
	scrapeInterval = 15 * time.Second
	maxDataPoints  = 1000
)

func (g *grafana) interval() time.Duration {
	return max(g.to.Sub(g.from)/maxDataPoints, scrapeInterval).Round(time.Second)
}

func (g *grafana) rateInterval() time.Duration {
	return max(g.interval()+scrapeInterval, 4*scrapeInterval)
}

var refPattern = regexp.MustCompile(`\$(?:\{([A-Za-z0-9_]+)(?::[A-Za-z]+)?\}|([A-Za-z0-9_]+))`)

// expand substitutes every variable of expr; it fails on one it does not know.
func (g *grafana) expand(t *testing.T, expr string) string {
	t.Helper()
	builtin := map[string]string{
		"__range":         fmt.Sprintf("%ds", int64(g.to.Sub(g.from).Seconds())),
		"__range_s":       fmt.Sprint(int64(g.to.Sub(g.from).Seconds())),
		"__rate_interval": fmt.Sprintf("%ds", int64(g.rateInterval().Seconds())),
		"__interval":      fmt.Sprintf("%ds", int64(g.interval().Seconds())),
	}
	return refPattern.ReplaceAllStringFunc(expr, func(ref string) string {
		m := refPattern.FindStringSubmatch(ref)
		name := m[1] + m[2]
		if v, ok := builtin[name]; ok {
			return v
		}
		vs, ok := g.vars[name]
		if !ok {
			t.Fatalf("%s: variable $%s has no value", expr, name)
		}
		if len(vs) == 1 {
			return vs[0]
		}
		quoted := make([]string, len(vs))
		for i, v := range vs {
			quoted[i] = regexp.QuoteMeta(v)
		}
		return "(" + strings.Join(quoted, "|") + ")"
	})
}

// answer is what one query returned: its series and how many had a real number.
type answer struct {
	expr   string
	series []labelledValues
}

type labelledValues struct {
	labels model.Metric
	values []float64
}

// numbers counts the values that are numbers (not NaN or infinite).
func (a answer) numbers() int {
	n := 0
	for _, s := range a.series {
		for _, v := range s.values {
			if !math.IsNaN(v) && !math.IsInf(v, 0) {
				n++
			}
		}
	}
	return n
}

// only returns the single value of a one-series instant answer.
func (a answer) only(t *testing.T) float64 {
	t.Helper()
	if len(a.series) != 1 || len(a.series[0].values) != 1 {
		t.Fatalf("%s: want one value, got %+v", a.expr, a.series)
	}
	return a.series[0].values[0]
}

// run executes a target as Grafana would: an instant query at the end of the range, or a range
// query over it with a step of $__interval.
func (g *grafana) run(t *testing.T, tg *dashboards.Target) answer {
	t.Helper()
	if tg.Instant {
		return g.instant(t, tg.Expr)
	}
	return g.rangeQuery(t, tg.Expr, g.interval())
}

func (g *grafana) instant(t *testing.T, expr string) answer {
	t.Helper()
	q := g.expand(t, expr)
	v, warnings, err := g.api.Query(context.Background(), q, g.to)
	if err != nil {
		t.Fatalf("instant query %s: %v", q, err)
	}
	if len(warnings) > 0 {
		t.Errorf("instant query %s: warnings %v", q, warnings)
	}
	a := answer{expr: q}
	switch v := v.(type) {
	case model.Vector:
		for _, s := range v {
			val := float64(s.Value)
			if s.Histogram != nil {
				val = math.NaN() // a histogram is not a number a panel can show
			}
			a.series = append(a.series, labelledValues{labels: s.Metric, values: []float64{val}})
		}
	case *model.Scalar:
		a.series = append(a.series, labelledValues{values: []float64{float64(v.Value)}})
	default:
		t.Fatalf("instant query %s returned a %T", q, v)
	}
	return a
}

func (g *grafana) rangeQuery(t *testing.T, expr string, step time.Duration) answer {
	t.Helper()
	q := g.expand(t, expr)
	v, warnings, err := g.api.QueryRange(context.Background(), q, promv1.Range{Start: g.from, End: g.to, Step: step})
	if err != nil {
		t.Fatalf("range query %s: %v", q, err)
	}
	if len(warnings) > 0 {
		t.Errorf("range query %s: warnings %v", q, warnings)
	}
	a := answer{expr: q}
	m, ok := v.(model.Matrix)
	if !ok {
		t.Fatalf("range query %s returned a %T", q, v)
	}
	for _, s := range m {
		lv := labelledValues{labels: s.Metric}
		for _, p := range s.Values {
			lv.values = append(lv.values, float64(p.Value))
		}
		for range s.Histograms {
			lv.values = append(lv.values, math.NaN())
		}
		a.series = append(a.series, lv)
	}
	return a
}

// labelValues runs a query variable's label_values(selector, label) as Grafana does: the
// series API over the dashboard's range.
func (g *grafana) labelValues(t *testing.T, query string) []string {
	t.Helper()
	m := regexp.MustCompile(`^label_values\((.*),\s*([A-Za-z_]+)\)$`).FindStringSubmatch(g.expand(t, query))
	if m == nil {
		t.Fatalf("variable query %q is not label_values(selector, label)", query)
	}
	sets, _, err := g.api.Series(context.Background(), []string{m[1]}, g.from, g.to)
	if err != nil {
		t.Fatalf("series %s: %v", m[1], err)
	}
	seen := map[string]bool{}
	for _, s := range sets {
		if v := string(s[model.LabelName(m[2])]); v != "" {
			seen[v] = true
		}
	}
	out := make([]string, 0, len(seen))
	for v := range seen {
		out = append(out, v)
	}
	sort.Strings(out)
	return out
}

// executeAll runs every target and annotation of d, fails on an empty answer unless allowed
// names its panel title, and returns the answers by panel title and refId.
func (g *grafana) executeAll(t *testing.T, d *dashboards.Dashboard) map[string]answer {
	t.Helper()
	out := map[string]answer{}
	for _, p := range d.Panels {
		for _, tg := range p.Targets {
			a := g.run(t, tg)
			key := p.Title + "/" + tg.RefID
			out[key] = a
			if a.numbers() == 0 {
				t.Errorf("%s: %q returned no number (Grafana would show %q)", key, a.expr, "No data")
			}
		}
	}
	for _, an := range d.Annotations.List {
		step, err := time.ParseDuration(an.Step)
		if err != nil {
			t.Fatalf("annotation %s: step %q: %v", an.Name, an.Step, err)
		}
		a := g.rangeQuery(t, an.Expr, step)
		out["annotation/"+an.Name] = a
		if a.numbers() == 0 {
			t.Errorf("annotation %s: %q returned no series", an.Name, a.expr)
		}
	}
	return out
}
