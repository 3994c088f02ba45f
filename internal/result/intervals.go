package result

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// AllScenarios labels the samples of all scenarios together; no scenario can have this name.
const AllScenarios = "*"

// IntervalKey names a sample series: a scenario (or AllScenarios), and a request name, a
// group, a custom Trend or a custom Counter of it, its iteration duration, or none.
type IntervalKey struct {
	Scenario, Request, Group, Trend string
	Iteration                       bool
	Counter                         string
}

// Less orders sample series: by scenario, then request, group, Trend, iteration and Counter.
func (k IntervalKey) Less(o IntervalKey) bool {
	switch {
	case k.Scenario != o.Scenario:
		return k.Scenario < o.Scenario
	case k.Request != o.Request:
		return k.Request < o.Request
	case k.Group != o.Group:
		return k.Group < o.Group
	case k.Trend != o.Trend:
		return k.Trend < o.Trend
	case k.Iteration != o.Iteration:
		return !k.Iteration
	}
	return k.Counter < o.Counter
}

// SeedParts names the series for the bootstrap's seed; a request's, group's and Trend's are
// what they were before iterations and Counters had series, so their intervals do not move.
func (k IntervalKey) SeedParts() []string {
	parts := []string{k.Scenario, k.Request, k.Group, k.Trend}
	switch {
	case k.Iteration:
		parts = append(parts, "iteration")
	case k.Counter != "":
		parts = append(parts, "counter", k.Counter)
	}
	return parts
}

// IntervalData is a run's per-interval counts and latency histograms: what a later comparison
// needs, kept in results.json so a baseline older than Prometheus' retention can still be
// compared with.
type IntervalData struct {
	// StepSeconds is the length of one interval.
	StepSeconds float64 `json:"stepSeconds"`
	// Series are per scenario ("*" is all scenarios together) and per compared request name.
	Series []IntervalSeries `json:"series"`
	// SuccessfulOnly is true when the latency histograms hold the successful requests only
	// (expected_response not "false"), what comparisons judge; results analysed before perfexp
	// read them so hold all requests. Request and failure counts always cover every request.
	SuccessfulOnly bool `json:"successfulOnly,omitempty"`
	// Workloads are each reported workload's CPU and memory on the same intervals; absent in
	// results analysed before perfexp kept them.
	Workloads []WorkloadIntervals `json:"workloads,omitempty"`
	// Routes are the observed services' routes on the same intervals.
	Routes []RouteIntervals `json:"routes,omitempty"`
}

// IntervalSeries is one scenario's (or request name's) per-interval data. Interval i of every
// slice is the same interval of the window.
type IntervalSeries struct {
	Scenario string `json:"scenario"`
	Request  string `json:"request,omitempty"`
	// Group or Trend name a k6 group's or custom Trend's series instead: Requests then
	// counts its executions (or values) per interval, Failed is zero, and the histogram is
	// in k6's unit (seconds for a group or time Trend).
	Group string `json:"group,omitempty"`
	Trend string `json:"trend,omitempty"`
	// Iteration names the scenario's iteration_duration series: Requests counts the
	// iterations that ended in each interval, the histogram is in seconds.
	Iteration bool `json:"iteration,omitempty"`
	// Counter names a custom k6 Counter's series (by its script name): Requests holds what the
	// script added to it in each interval (summed over runners and tag sets), Failed is zero
	// and there is no histogram.
	Counter string `json:"counter,omitempty"`
	// Requests and Failed count the requests of each interval.
	Requests []float64 `json:"requests"`
	Failed   []float64 `json:"failed"`
	// Bounds are the latency histogram's buckets ([lower, upper] in seconds) that hold any
	// observation, shared by all intervals; Counts[i][j] is bucket j's count in interval i
	// (trailing zeros dropped), Sums[i] the sum of interval i's latencies in seconds.
	Bounds [][2]float64 `json:"bounds,omitempty"`
	Counts [][]float64  `json:"counts,omitempty"`
	Sums   []float64    `json:"sums,omitempty"`
}

// Find is the series named k, nil when there is none.
func (d *IntervalData) Find(k IntervalKey) *IntervalSeries {
	if d == nil {
		return nil
	}
	for i := range d.Series {
		if d.Series[i].Key() == k {
			return &d.Series[i]
		}
	}
	return nil
}

// FindWorkload is the per-interval data of a workload, nil when the run has none.
func (d *IntervalData) FindWorkload(kind, namespace, name string) *WorkloadIntervals {
	if d == nil {
		return nil
	}
	for i := range d.Workloads {
		if w := &d.Workloads[i]; w.Kind == kind && w.Namespace == namespace && w.Name == name {
			return w
		}
	}
	return nil
}

// Key names the series.
func (s *IntervalSeries) Key() IntervalKey {
	return IntervalKey{Scenario: s.Scenario, Request: s.Request, Group: s.Group, Trend: s.Trend, Iteration: s.Iteration, Counter: s.Counter}
}

// Histogram is interval i's latency histogram, nil when it had none.
func (s *IntervalSeries) Histogram(i int) *Histogram {
	if i >= len(s.Counts) || len(s.Counts[i]) == 0 {
		return nil
	}
	h := NewHistogram()
	for j, c := range s.Counts[i] {
		if c != 0 {
			h.buckets[bucketKey{lower: s.Bounds[j][0], upper: s.Bounds[j][1]}] += c
			h.Count += c
		}
	}
	if i < len(s.Sums) {
		h.Sum = s.Sums[i]
	}
	return h
}

// intervalSeriesJSON is IntervalSeries as results.json holds it: every list of numbers as one
// space-separated string, one per interval for the histogram counts. The report is written
// indented, which would put each of a run's thousands of bucket counts on its own line.
type intervalSeriesJSON struct {
	Scenario string   `json:"scenario"`
	Request  string   `json:"request,omitempty"`
	Group    string   `json:"group,omitempty"`
	Trend    string   `json:"trend,omitempty"`
	Iter     bool     `json:"iteration,omitempty"`
	Counter  string   `json:"counter,omitempty"`
	Requests string   `json:"requests"`
	Failed   string   `json:"failed"`
	Bounds   string   `json:"bounds,omitempty"`
	Counts   []string `json:"counts,omitempty"`
	Sums     string   `json:"sums,omitempty"`
}

// MarshalJSON writes the compact form.
func (s IntervalSeries) MarshalJSON() ([]byte, error) {
	w := intervalSeriesJSON{Scenario: s.Scenario, Request: s.Request, Group: s.Group, Trend: s.Trend, Iter: s.Iteration, Counter: s.Counter, Requests: numbers(s.Requests), Failed: numbers(s.Failed), Sums: numbers(s.Sums)}
	flat := make([]float64, 0, 2*len(s.Bounds))
	for _, b := range s.Bounds {
		flat = append(flat, b[0], b[1])
	}
	w.Bounds = numbers(flat)
	if len(s.Counts) > 0 {
		w.Counts = make([]string, len(s.Counts))
		for i, c := range s.Counts {
			w.Counts[i] = numbers(c)
		}
	}
	return json.Marshal(w)
}

// UnmarshalJSON reads the compact form.
func (s *IntervalSeries) UnmarshalJSON(b []byte) error {
	var w intervalSeriesJSON
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	var err error
	out := IntervalSeries{Scenario: w.Scenario, Request: w.Request, Group: w.Group, Trend: w.Trend, Iteration: w.Iter, Counter: w.Counter}
	if out.Requests, err = parseNumbers(w.Requests); err != nil {
		return err
	}
	if out.Failed, err = parseNumbers(w.Failed); err != nil {
		return err
	}
	if out.Sums, err = parseNumbers(w.Sums); err != nil {
		return err
	}
	flat, err := parseNumbers(w.Bounds)
	if err != nil {
		return err
	}
	if len(flat)%2 != 0 {
		return fmt.Errorf("interval series %s/%s: an odd number of bucket bounds", w.Scenario, w.Request)
	}
	for i := 0; i < len(flat); i += 2 {
		out.Bounds = append(out.Bounds, [2]float64{flat[i], flat[i+1]})
	}
	for _, c := range w.Counts {
		row, err := parseNumbers(c)
		if err != nil {
			return err
		}
		if len(row) > len(out.Bounds) {
			return fmt.Errorf("interval series %s/%s: %d counts for %d buckets", w.Scenario, w.Request, len(row), len(out.Bounds))
		}
		out.Counts = append(out.Counts, row)
	}
	*s = out
	return nil
}

// numbers writes floats with the shortest text that reads back the same.
func numbers(vs []float64) string {
	parts := make([]string, len(vs))
	for i, v := range vs {
		parts[i] = strconv.FormatFloat(v, 'g', -1, 64)
	}
	return strings.Join(parts, " ")
}

func parseNumbers(s string) ([]float64, error) {
	fields := strings.Fields(s)
	if len(fields) == 0 {
		return nil, nil
	}
	out := make([]float64, len(fields))
	for i, f := range fields {
		v, err := strconv.ParseFloat(f, 64)
		if err != nil {
			return nil, fmt.Errorf("reading interval data: %w", err)
		}
		out[i] = v
	}
	return out, nil
}

// MaxStoredSeries bounds the per-interval series results.json keeps: about 5 KB each, so at
// most a quarter of the report ConfigMap.
const MaxStoredSeries = 48
