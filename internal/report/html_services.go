package report

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/perfexp/perfexp/internal/result"
)

// The results keep each service's CPU and memory over the window as an average and a peak, not
// as series over time (a ConfigMap could not hold them for dozens of services), so the page
// draws what exists: per service a bar of the average, its extension to the peak, the limit as
// a red line, and the baseline's bars beneath for comparison. The Grafana dashboard has them
// over time.

// serviceMeasure picks one resource of a workload.
type serviceMeasure struct {
	title, axis, unit string
	divisor           float64
	// format prints a value of the measure as the tables do.
	format           func(float64) string
	avg, peak, limit func(result.WorkloadResult) *float64
	limitNote        func(result.WorkloadResult) string
}

var (
	cpuMeasure = serviceMeasure{title: "CPU per service", axis: "CPU (cores, summed over the service's pods)", unit: "cores", divisor: 1,
		format:    func(v float64) string { return fixed(v, 2) },
		avg:       func(w result.WorkloadResult) *float64 { return w.CPUAvg },
		peak:      func(w result.WorkloadResult) *float64 { return w.CPUMax },
		limit:     func(w result.WorkloadResult) *float64 { return w.CPULimit },
		limitNote: func(w result.WorkloadResult) string { return w.CPULimitNote }}
	memoryMeasure = serviceMeasure{title: "memory per service", axis: "memory working set (MiB, summed over the service's pods)", unit: "MiB", divisor: 1 << 20,
		format:    func(v float64) string { return fixed(v, 0) },
		avg:       func(w result.WorkloadResult) *float64 { return w.MemoryAvg },
		peak:      func(w result.WorkloadResult) *float64 { return w.MemoryMax },
		limit:     func(w result.WorkloadResult) *float64 { return w.MemoryLimit },
		limitNote: func(w result.WorkloadResult) string { return w.MemoryLimitNote }}
)

// maxServiceRows bounds a chart's height; the tables list every service.
const maxServiceRows = 30

func sameWorkload(a, b result.WorkloadResult) bool {
	return a.Kind == b.Kind && a.Namespace == b.Namespace && a.Name == b.Name
}

// baselineWorkload finds a workload among the baseline's, nil when it was not reported there.
func baselineWorkload(base *result.Result, w result.WorkloadResult) *result.WorkloadResult {
	if base == nil {
		return nil
	}
	for i := range base.Workloads {
		if sameWorkload(base.Workloads[i], w) {
			return &base.Workloads[i]
		}
	}
	return nil
}

// serviceChart draws one measure for every workload.
func serviceChart(m serviceMeasure, ws []result.WorkloadResult, base *result.Result) string {
	val := func(v *float64) float64 {
		if v == nil {
			return nan
		}
		return *v / m.divisor
	}
	hi := 0.0
	anyValue := false
	grow := func(w result.WorkloadResult) {
		for _, v := range []*float64{m.avg(w), m.peak(w), m.limit(w)} {
			if v != nil {
				hi = math.Max(hi, *v/m.divisor)
			}
		}
	}
	for _, w := range ws {
		anyValue = anyValue || m.avg(w) != nil || m.peak(w) != nil
		grow(w)
		if bw := baselineWorkload(base, w); bw != nil {
			grow(*bw)
		}
	}
	if !anyValue {
		return noData(esc(fmt.Sprintf("No %s: cAdvisor had no samples of the reported services in the window.", m.title)))
	}
	top := niceMax(hi*1.05, 6)
	const left, right, top0, bottom = 250.0, 230.0, 48.0, 56.0
	rowH := 30.0
	if base != nil {
		rowH = 42
	}
	h := top0 + bottom + rowH*float64(len(ws))
	p := newPlot(m.title, h, left, right, top0, bottom, scale{lo: 0, hi: top}, scale{lo: 0, hi: 1})
	p.xGrid(niceTicks(0, top, 6), tickLabel(niceStep(top, 6)))
	p.frame(m.axis, "")
	for i, w := range ws {
		y0 := top0 + rowH*float64(i)
		if i%2 == 1 {
			p.printf(`<rect x="0" y="%s" width="%s" height="%s" fill="#f6f8fa" fill-opacity="0.6"/>`, coord(y0), coord(chartWidth), coord(rowH))
		}
		name := clipText(strings.ToLower(w.Kind)+" "+w.Name, 32)
		weight := ""
		if w.Touched {
			name, weight = clipText(w.Name, 22)+" (changed)", "600"
		}
		p.text(left-12, y0+rowH/2+4, "end", colorText, weight, name)
		bar := func(r result.WorkloadResult, y, height float64, color, class string) {
			avg, peak := val(m.avg(r)), val(m.peak(r))
			if !math.IsNaN(peak) {
				p.printf(`<rect class="%s-peak" x="%s" y="%s" width="%s" height="%s" fill="%s" fill-opacity="0.3"><title>peak %s %s</title></rect>`,
					class, coord(p.px(0)), coord(y), coord(p.px(peak)-p.px(0)), coord(height), color, trimFloat(peak), m.unit)
			}
			if !math.IsNaN(avg) {
				p.printf(`<rect class="%s-avg" x="%s" y="%s" width="%s" height="%s" fill="%s"><title>average %s %s</title></rect>`,
					class, coord(p.px(0)), coord(y), coord(p.px(avg)-p.px(0)), coord(height), color, trimFloat(avg), m.unit)
			}
			if l := val(m.limit(r)); !math.IsNaN(l) {
				p.printf(`<line class="%s-limit" x1="%s" y1="%s" x2="%s" y2="%s" stroke="%s" stroke-width="3"><title>limit %s %s</title></line>`,
					class, coord(p.px(l)), coord(y-3), coord(p.px(l)), coord(y+height+3), colorLimit, trimFloat(l), m.unit)
			}
		}
		bw := baselineWorkload(base, w)
		bar(w, y0+6, 16, colorRun, "run")
		if bw != nil {
			bar(*bw, y0+26, 10, colorBaseline, labelBaseline)
		}
		detail := fmt.Sprintf("avg %s · peak %s", m.format(val(m.avg(w))), m.format(val(m.peak(w))))
		limit := noLimit
		if l := val(m.limit(w)); !math.IsNaN(l) {
			limit = "limit " + m.format(l)
		} else if note := m.limitNote(w); note != "" {
			limit = note
		}
		p.text(chartWidth-right+12, y0+18, "start", colorText, "", detail)
		lc := colorLimit
		if limit == noLimit {
			lc = colorAxis
		}
		p.text(chartWidth-6, y0+18, "end", lc, "", limit)
		if base != nil && bw == nil {
			p.text(p.px(0)+4, y0+36, "start", colorAxis, "", "not in the baseline's report")
		}
	}
	items := []legendItem{{label: labelRun + ": average", color: colorRun, square: true}, {label: "peak", color: "#9cc3f0", square: true}}
	if base != nil {
		items = append(items, legendItem{label: labelBaseline, color: colorBaseline, square: true})
	}
	items = append(items, legendItem{label: "limit", color: colorLimit})
	p.legend(items)
	return p.end()
}

// trimFloat prints a value with three significant decimals at most, "-" when absent.
func trimFloat(v float64) string {
	if math.IsNaN(v) {
		return "-"
	}
	switch a := math.Abs(v); {
	case a >= 100:
		return fmt.Sprintf("%.0f", v)
	case a >= 10:
		return fmt.Sprintf("%.1f", v)
	}
	return fmt.Sprintf("%.3g", v)
}

// fixed prints v with the given decimals, "-" when absent.
func fixed(v float64, decimals int) string {
	if math.IsNaN(v) {
		return "-"
	}
	return strconv.FormatFloat(v, 'f', decimals, 64)
}

// serviceCharts draws CPU and memory per service.
func serviceCharts(r, base *result.Result) string {
	ws := r.Workloads
	if len(ws) == 0 {
		return noData("No services were measured: the experiment touched or observed no workload.")
	}
	extra := ""
	if len(ws) > maxServiceRows {
		extra = fmt.Sprintf(" The %d busiest of %d services are drawn; the tables list all.", maxServiceRows, len(ws))
		ws = busiest(ws, maxServiceRows)
	}
	caption := "The results keep each service's CPU and memory over the window as an average and a peak, not as series over time, so these are bars, not lines: solid the average, light the peak (of per-step sums), red the limit in force. The run's Grafana dashboard shows them over time."
	if base != nil {
		caption += " Grey bars beneath: baseline " + base.Experiment + "."
	}
	return figure("chart services", serviceChart(cpuMeasure, ws, base), "") +
		figure("chart services", serviceChart(memoryMeasure, ws, base), esc(caption+extra))
}

// busiest keeps the n services with the most CPU, touched ones first, in their original order.
func busiest(ws []result.WorkloadResult, n int) []result.WorkloadResult {
	type ranked struct {
		i   int
		cpu float64
	}
	rs := make([]ranked, len(ws))
	for i, w := range ws {
		c := 0.0
		if w.CPUAvg != nil {
			c = *w.CPUAvg
		}
		if w.Touched {
			c = math.Inf(1)
		}
		rs[i] = ranked{i, c}
	}
	keep := make([]bool, len(ws))
	for k := 0; k < n; k++ {
		best := -1
		for j, r := range rs {
			if !keep[r.i] && (best < 0 || r.cpu > rs[best].cpu) {
				best = j
			}
		}
		keep[rs[best].i] = true
	}
	var out []result.WorkloadResult
	for i, w := range ws {
		if keep[i] {
			out = append(out, w)
		}
	}
	return out
}
