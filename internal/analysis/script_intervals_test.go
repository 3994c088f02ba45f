package analysis

import (
	"context"
	"encoding/json"
	"math"
	"reflect"
	"testing"
	"time"

	"github.com/perfexp/perfexp/internal/analysis/promtest"
	"github.com/perfexp/perfexp/internal/result"
)

// renamed turns a crafted request series pair into another k6 metric pair with the same
// samples: the counter under counterName, the histogram under histName (dropped when "").
func renamed(s *promtest.K6Series, counterName, histName string) []promtest.Series {
	pair := s.Series()
	pair[0].Labels["__name__"] = counterName
	if histName == "" {
		return pair[:1]
	}
	pair[1].Labels["__name__"] = histName
	return pair
}

// Story: a scenario's iteration durations and a script's Counter are read per interval, each
// runner's series on its own: over 40 minutes, runner 0 stops at minute 30 (its series leave
// every instant evaluation 5 minutes later) and runner 1 restarts at minute 25 (its counters
// begin again at zero). Every interval's iterations, their duration sum and the Counter's
// increment must equal the truth, and reading them costs no more queries than reading the
// request name alone.
func TestCraftedIterationAndCounterIntervals(t *testing.T) {
	prom := promtest.Start(t)
	api := prom.API(t)
	base := time.Now().Add(-50 * time.Minute).Truncate(time.Minute)
	start, end := base, base.Add(40*time.Minute)
	const testID = "script-intervals"
	labels := func(inst string) map[string]string {
		return map[string]string{"testid": testID, "scenario": "main", "instance_id": inst}
	}
	reqs := promtest.NewK6Series(promtest.K6Labels(testID, "main", "browse", "0", true))
	iters := []*promtest.K6Series{promtest.NewK6Series(labels("0")), promtest.NewK6Series(labels("1"))}
	// A Counter is a float series: crafted as a request counter whose "latencies" are the
	// amounts added (only their number counts), one per unit.
	stuck := []*promtest.K6Series{promtest.NewK6Series(labels("0")), promtest.NewK6Series(labels("1"))}
	var restartAt time.Time
	for i := 1; at(start, i).Before(end); i++ {
		t0 := at(start, i)
		reqs.Flush(t0, latencies(3, 0.001, 0.2, i)...)
		if t0.Sub(start) >= 25*time.Minute && restartAt.IsZero() {
			iters[1].Restart()
			stuck[1].Restart()
			restartAt = t0
		}
		for r, s := range iters {
			if r == 0 && t0.Sub(start) >= 30*time.Minute {
				continue
			}
			s.Flush(t0, latencies(1+(i+r)%3, 0.5, 3, i+r)...)
			if (i+r)%4 == 0 {
				stuck[r].Flush(t0, make([]float64, 1+i%3)...)
			}
		}
	}
	series := reqs.Series()
	for r := range iters {
		series = append(series, renamed(iters[r], metricIterations, metricIterationDuration)...)
		series = append(series, renamed(stuck[r], counterMetric("stuck"), "")...)
	}
	prom.Write(t, series)

	step := intervalLength(end.Sub(start))
	n := int(end.Sub(start) / step)
	in := func(ts time.Time, i int) bool {
		return ts.After(start.Add(time.Duration(i)*step)) && !ts.After(start.Add(time.Duration(i+1)*step))
	}
	browse := result.IntervalKey{Scenario: "main", Request: "browse"}
	keep := map[result.IntervalKey]bool{browse: true, {Scenario: "main", Iteration: true}: true, {Scenario: "main", Counter: "stuck"}: true}
	cq := &CountingQuerier{Querier: api}
	got, err := readIntervals(context.Background(), cq, testID, []string{"main"}, start, end, step, keep, true)
	if err != nil {
		t.Fatal(err)
	}
	plain := &CountingQuerier{Querier: api}
	if _, err := readIntervals(context.Background(), plain, testID, []string{"main"}, start, end, step, map[result.IntervalKey]bool{browse: true}, true); err != nil {
		t.Fatal(err)
	}
	if cq.Count() != plain.Count() {
		t.Errorf("%d queries with iterations and a Counter, %d with the request name alone", cq.Count(), plain.Count())
	}
	if s := got.Find(browse); s == nil || len(s.Counts) == 0 {
		t.Errorf("the request name's histograms, read in the same query: %+v", s)
	}
	it, ctr := got.Find(result.IntervalKey{Scenario: "main", Iteration: true}), got.Find(result.IntervalKey{Scenario: "main", Counter: "stuck"})
	if it == nil || ctr == nil {
		t.Fatalf("iteration series %v, Counter series %v; got %d series", it != nil, ctr != nil, len(got.Series))
	}
	if len(it.Requests) != n || len(ctr.Requests) != n || len(ctr.Counts) != 0 {
		t.Fatalf("%d and %d intervals (Counter histogram %d), want %d", len(it.Requests), len(ctr.Requests), len(ctr.Counts), n)
	}
	// What boundaries can see: a restarted runner's last values before its restart, in the
	// interval of the restart, are gone (as for rate()); every other observation counts.
	seen := func(r int, o promtest.Observation, i int) bool {
		lost := r == 1 && in(restartAt, i) && o.T.Before(restartAt)
		return in(o.T, i) && !lost
	}
	var total float64
	for i := range n {
		var count, sum, added float64
		for r := range iters {
			for _, o := range iters[r].Observations {
				if seen(r, o, i) {
					count, sum = count+1, sum+o.V
				}
			}
			for _, o := range stuck[r].Observations {
				if seen(r, o, i) {
					added++
				}
			}
		}
		h := it.Histogram(i)
		if it.Requests[i] != count || h == nil || h.Count != count || math.Abs(h.Sum-sum) > 1e-9 {
			t.Errorf("interval %d: %v iterations (histogram %+v), want %v with sum %v", i, it.Requests[i], h, count, sum)
		}
		if ctr.Requests[i] != added || ctr.Failed[i] != 0 {
			t.Errorf("interval %d: Counter +%v (failed %v), want +%v", i, ctr.Requests[i], ctr.Failed[i], added)
		}
		total += added
	}
	if total == 0 {
		t.Fatal("the crafted Counter added nothing")
	}
	if s := got.Find(result.IntervalKey{Scenario: "main"}); s == nil || s.Requests[0] == 0 {
		t.Errorf("the scenario's request series: %+v", s)
	}
	t.Logf("%d intervals, %v added to the Counter, %d queries", n, total, cq.Count())
}

// The iteration and Counter series survive results.json: a later single-run comparison reads
// them back as they were.
func TestIntervalSeriesJSONKeepsIterationsAndCounters(t *testing.T) {
	in := result.IntervalData{StepSeconds: 30, Series: []result.IntervalSeries{
		{Scenario: "main", Iteration: true, Requests: []float64{3, 4}, Failed: []float64{0, 0},
			Bounds: [][2]float64{{1, 1.09}, {1.09, 1.19}}, Counts: [][]float64{{1, 2}, {4}}, Sums: []float64{3.3, 4.2}},
		{Scenario: "main", Counter: "stuck", Requests: []float64{0, 2.5}, Failed: []float64{0, 0}},
		{Scenario: "main", Requests: []float64{10, 12}, Failed: []float64{1, 0}},
	}}
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	var out result.IntervalData
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(in, out) {
		t.Errorf("round trip:\n got %+v\nwant %+v\njson %s", out, in, b)
	}
	for _, k := range []result.IntervalKey{{Scenario: "main", Iteration: true}, {Scenario: "main", Counter: "stuck"}, {Scenario: "main"}} {
		if s := out.Find(k); s == nil || s.Key() != k {
			t.Errorf("%+v: found %+v", k, s)
		}
	}
}

// stored keeps each scenario's iteration series and its Counters' beside its request names.
func TestStoredKeepsIterationAndCounterSeries(t *testing.T) {
	d := &result.IntervalData{StepSeconds: 30, Series: []result.IntervalSeries{
		{Scenario: result.AllScenarios}, {Scenario: "main"}, {Scenario: "main", Iteration: true}, {Scenario: "main", Counter: "stuck"},
		{Scenario: "main", Counter: "unreported"},
	}}
	r := &result.Result{Scenarios: []result.ScenarioResult{{Name: "main", IterationDuration: &result.Latency{}, Counters: []result.CounterResult{{Name: "stuck"}}}}}
	got := stored(d, r)
	var keys []result.IntervalKey
	for _, s := range got.Series {
		keys = append(keys, s.Key())
	}
	want := []result.IntervalKey{{Scenario: result.AllScenarios}, {Scenario: "main"}, {Scenario: "main", Iteration: true}, {Scenario: "main", Counter: "stuck"}}
	if !reflect.DeepEqual(keys, want) {
		t.Errorf("stored %+v, want %+v", keys, want)
	}
}
