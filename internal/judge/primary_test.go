package judge

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/result"
)

// truth is the true level of each quantity of one side's runs, relative to the baseline's.
type truth struct {
	group, trend, counter, rate, query, cpu float64
}

var unchanged = truth{group: 1, trend: 1, counter: 1, rate: 1, query: 1, cpu: 1}

// quantityRun is one run of a side whose every measured quantity sits at its true level times a
// run-to-run noise of about ±2 %: the scenario's requests, a group, a time Trend, a Counter, a
// custom Rate, a custom query and a workload's CPU (with a 2-core request).
func quantityRun(name string, i int, tr truth) *result.Result {
	r := transactionRun(name, i, tr.group)
	noise := 1 + 0.02*math.Sin(float64(5*i+2))
	s := &r.Scenarios[0]
	t := &s.Trends[0]
	t.Avg, t.P95 = result.Num(*t.Avg*tr.trend), result.Num(*t.P95*tr.trend)
	s.Counters = []result.CounterResult{{Name: "refresh_failed", Metric: "k6_refresh_failed_total", Total: result.Num(60 * tr.counter * noise), Rate: result.Num(tr.counter * noise)}}
	s.Rates = []result.RateResult{{Name: "slow_refresh", Metric: "k6_slow_refresh_rate", Percent: result.Num(10*tr.rate + 0.3*math.Sin(float64(7*i+3)))}}
	r.Queries = []result.QueryResult{{Name: "broker-cpu", Unit: "cores", Value: result.Num(0.8 * tr.query * noise)}}
	cpu, req := 0.5*tr.cpu*noise, 2.0
	r.Workloads = []result.WorkloadResult{{Kind: "Deployment", Namespace: "shop", Name: "circulation", Pods: 2, CPUAvg: &cpu, CPURequest: &req,
		CPUPercentOfRequest: result.Num(100 * cpu / req), MemoryAvg: result.Num(300 * mib)}}
	return r
}

func quantityRuns(name string, n, offset int, tr truth) []*result.Result {
	out := make([]*result.Result, n)
	for i := range out {
		out[i] = quantityRun(name, i+offset, tr)
	}
	return out
}

// primaries returns the labels of a comparison's primary rows.
func primaries(c *result.Comparison) []string {
	var out []string
	for _, mc := range c.Metrics {
		if mc.Primary {
			out = append(out, mc.Metric)
		}
	}
	return out
}

// Story: each kind of quantity a study decides on can be its primary metric. Across three runs
// per side, the row it names is primary (and the only one: the scenario's p95 and errors step
// aside), it alone makes Holm's family, its direction decides which way is Regressed, and one
// naming something the runs did not produce is a primary row that reads Unknown with the name it
// looked for.
func TestPrimaryMetricOfEveryKind(t *testing.T) {
	const (
		lower, higher, either = perfexpv1alpha1.LowerIsBetter, perfexpv1alpha1.HigherIsBetter, perfexpv1alpha1.TwoSided
	)
	workload := &perfexpv1alpha1.MetricWorkload{Kind: perfexpv1alpha1.WorkloadKindDeployment, Name: "circulation"}
	tests := []struct {
		name     string
		primary  perfexpv1alpha1.PrimaryMetric
		cur      truth
		row      string
		want     perfexpv1alpha1.Change
		why      string
		headline perfexpv1alpha1.Change
	}{
		{"a group 30% slower", perfexpv1alpha1.PrimaryMetric{Metric: perfexpv1alpha1.MetricP95, Scenario: "desk", Group: "check-out"},
			truth{1.3, 1, 1, 1, 1, 1}, "desk group check-out p95", perfexpv1alpha1.ChangeRegressed, "", perfexpv1alpha1.ChangeRegressed},
		{"a group 30% slower, higher declared better", perfexpv1alpha1.PrimaryMetric{Metric: perfexpv1alpha1.MetricP95, Scenario: "desk", Group: "check-out", Direction: higher},
			truth{1.3, 1, 1, 1, 1, 1}, "desk group check-out p95", perfexpv1alpha1.ChangeImproved, "", perfexpv1alpha1.ChangeImproved},
		{"a Trend 25% faster", perfexpv1alpha1.PrimaryMetric{Metric: perfexpv1alpha1.MetricAvg, Scenario: "desk", Trend: "checkout_transaction"},
			truth{1, 0.75, 1, 1, 1, 1}, "desk trend checkout_transaction avg", perfexpv1alpha1.ChangeImproved, "", perfexpv1alpha1.ChangeImproved},
		{"a Trend 25% faster, two-sided", perfexpv1alpha1.PrimaryMetric{Metric: perfexpv1alpha1.MetricAvg, Scenario: "desk", Trend: "checkout_transaction", Direction: either},
			truth{1, 0.75, 1, 1, 1, 1}, "desk trend checkout_transaction avg", perfexpv1alpha1.ChangeRegressed, "changed down beyond ±5%", perfexpv1alpha1.ChangeRegressed},
		{"an unchanged Trend, two-sided", perfexpv1alpha1.PrimaryMetric{Metric: perfexpv1alpha1.MetricAvg, Scenario: "desk", Trend: "checkout_transaction", Direction: either},
			unchanged, "desk trend checkout_transaction avg", perfexpv1alpha1.ChangeNoMeaningfulChange, "", perfexpv1alpha1.ChangeNoMeaningfulChange},
		{"a Counter's rate 40% lower, higher better", perfexpv1alpha1.PrimaryMetric{Metric: perfexpv1alpha1.MetricCount, Scenario: "desk", Counter: "refresh_failed", Direction: higher},
			truth{1, 1, 0.6, 1, 1, 1}, "desk counter refresh_failed rate", perfexpv1alpha1.ChangeRegressed, "", perfexpv1alpha1.ChangeRegressed},
		{"a Counter's rate 40% lower, lower better", perfexpv1alpha1.PrimaryMetric{Metric: perfexpv1alpha1.MetricCount, Scenario: "desk", Counter: "refresh_failed", Direction: lower},
			truth{1, 1, 0.6, 1, 1, 1}, "desk counter refresh_failed rate", perfexpv1alpha1.ChangeImproved, "", perfexpv1alpha1.ChangeImproved},
		{"a custom Rate from 10% to 30%", perfexpv1alpha1.PrimaryMetric{Metric: perfexpv1alpha1.MetricPercent, Scenario: "desk", Rate: "slow_refresh", Direction: lower},
			truth{1, 1, 1, 3, 1, 1}, "desk rate slow_refresh percent", perfexpv1alpha1.ChangeRegressed, "", perfexpv1alpha1.ChangeRegressed},
		{"a query 30% higher", perfexpv1alpha1.PrimaryMetric{Metric: perfexpv1alpha1.MetricQuery, Query: "broker-cpu", Direction: lower},
			truth{1, 1, 1, 1, 1.3, 1}, "query broker-cpu", perfexpv1alpha1.ChangeRegressed, "", perfexpv1alpha1.ChangeRegressed},
		{"a query 30% higher, higher better", perfexpv1alpha1.PrimaryMetric{Metric: perfexpv1alpha1.MetricQuery, Query: "broker-cpu", Direction: higher},
			truth{1, 1, 1, 1, 1.3, 1}, "query broker-cpu", perfexpv1alpha1.ChangeImproved, "", perfexpv1alpha1.ChangeImproved},
		{"a workload's CPU 30% higher", perfexpv1alpha1.PrimaryMetric{Metric: perfexpv1alpha1.MetricCPU, Workload: workload},
			truth{1, 1, 1, 1, 1, 1.3}, "shop/circulation cpu avg", perfexpv1alpha1.ChangeRegressed, "", perfexpv1alpha1.ChangeRegressed},
		{"a workload's CPU share of its request 30% lower", perfexpv1alpha1.PrimaryMetric{Metric: perfexpv1alpha1.MetricCPUPercentOfRequest, Workload: workload},
			truth{1, 1, 1, 1, 1, 0.7}, "shop/circulation cpu % of request", perfexpv1alpha1.ChangeImproved, "", perfexpv1alpha1.ChangeImproved},
		{"a Trend neither side has", perfexpv1alpha1.PrimaryMetric{Metric: perfexpv1alpha1.MetricP95, Scenario: "desk", Trend: "import_duration"},
			unchanged, "desk trend import_duration p95", perfexpv1alpha1.ChangeUnknown, "no trend import_duration of scenario desk in the runs of either side", perfexpv1alpha1.ChangeUnknown},
		{"a group neither side has", perfexpv1alpha1.PrimaryMetric{Metric: perfexpv1alpha1.MetricP95, Scenario: "desk", Group: "renew"},
			unchanged, "desk group renew p95", perfexpv1alpha1.ChangeUnknown, `no group "renew" of scenario desk in the runs of either side`, perfexpv1alpha1.ChangeUnknown},
		{"a query the runs lack", perfexpv1alpha1.PrimaryMetric{Metric: perfexpv1alpha1.MetricQuery, Query: "db-cpu", Direction: lower},
			unchanged, "query db-cpu", perfexpv1alpha1.ChangeUnknown, "no query db-cpu in the runs of either side", perfexpv1alpha1.ChangeUnknown},
		{"a workload the runs lack", perfexpv1alpha1.PrimaryMetric{Metric: perfexpv1alpha1.MetricCPU, Workload: &perfexpv1alpha1.MetricWorkload{Kind: perfexpv1alpha1.WorkloadKindStatefulSet, Name: "kafka"}},
			unchanged, "StatefulSet/kafka cpu avg", perfexpv1alpha1.ChangeUnknown, "no workload StatefulSet/kafka in the runs of either side", perfexpv1alpha1.ChangeUnknown},
		{"a custom Rate the runs lack", perfexpv1alpha1.PrimaryMetric{Metric: perfexpv1alpha1.MetricPercent, Scenario: "desk", Rate: "stuck", Direction: lower},
			unchanged, "desk rate stuck percent", perfexpv1alpha1.ChangeUnknown, "no rate stuck of scenario desk in the runs of either side", perfexpv1alpha1.ChangeUnknown},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			base, cur := quantityRuns("base", 3, 0, unchanged), quantityRuns("arm", 3, 3, tc.cur)
			c := CompareRuns(base, cur, CompareOptions{Primary: []perfexpv1alpha1.PrimaryMetric{tc.primary}})
			if c.Message != "" {
				t.Fatalf("comparison refused: %s", c.Message)
			}
			if got := primaries(c); len(got) != 1 || got[0] != tc.row {
				t.Fatalf("primary rows %q, want only %q; rows: %v", got, tc.row, labels(c))
			}
			mc := comparedRow(c, tc.row)
			if mc.Change != tc.want || !strings.Contains(mc.Why, tc.why) {
				t.Errorf("%s: %s (%s), want %s with a reason containing %q", tc.row, mc.Change, mc.Why, tc.want, tc.why)
			}
			if c.Change != tc.headline {
				t.Errorf("headline %s, want %s", c.Change, tc.headline)
			}
			family := "Holm across 1 primary metric"
			if tc.want == perfexpv1alpha1.ChangeUnknown {
				family = "no primary metric had a change that could be claimed"
			}
			if !strings.Contains(c.Multiplicity, family) {
				t.Errorf("multiplicity %q, want %q", c.Multiplicity, family)
			}
		})
	}
}

// Story: a study that decides on the scenario's p95, a group, a query and a workload's CPU has a
// Holm family of four, with every other row (the scenario's error rate among them) secondary;
// one true regression of the group is found through the family of four, and the headline is
// Regressed on it alone.
func TestPrimaryMetricsShareOneHolmFamily(t *testing.T) {
	ps := []perfexpv1alpha1.PrimaryMetric{
		{Metric: perfexpv1alpha1.MetricP95, Scenario: "desk"},
		{Metric: perfexpv1alpha1.MetricP95, Scenario: "desk", Group: "check-out"},
		{Metric: perfexpv1alpha1.MetricQuery, Query: "broker-cpu", Direction: perfexpv1alpha1.LowerIsBetter},
		{Metric: perfexpv1alpha1.MetricCPU, Workload: &perfexpv1alpha1.MetricWorkload{Name: "circulation", Namespace: "shop"}},
	}
	c := CompareRuns(quantityRuns("base", 4, 0, unchanged), quantityRuns("arm", 4, 4, truth{1.3, 1, 1, 1, 1, 1}), CompareOptions{Primary: ps})
	want := []string{"desk p95", "desk group check-out p95", "shop/circulation cpu avg", "query broker-cpu"}
	got := primaries(c)
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("primary rows %q, want %q", got, want)
	}
	if !strings.HasPrefix(c.Multiplicity, "Holm across 4 primary metrics") {
		t.Errorf("multiplicity %q, want a family of 4", c.Multiplicity)
	}
	for _, label := range want {
		mc := comparedRow(c, label)
		if mc.AdjustedP == nil {
			t.Errorf("%s: no Holm-adjusted p", label)
		}
		if wantChange := label == "desk group check-out p95"; wantChange != (mc.Change == perfexpv1alpha1.ChangeRegressed) {
			t.Errorf("%s: %s (%s)", label, mc.Change, mc.Why)
		}
	}
	if c.Change != perfexpv1alpha1.ChangeRegressed {
		t.Errorf("headline %s, want Regressed", c.Change)
	}
}

// Story: one run against one run, a custom query has one value per run: its primary row reads
// Unknown, and says how many runs per side would decide the change seen at the between-run
// noise the comparison holds; the same query over three runs per side is decided with the run as
// the unit.
func TestPrimaryQueryOneRunAndRepeats(t *testing.T) {
	p := perfexpv1alpha1.PrimaryMetric{Metric: perfexpv1alpha1.MetricQuery, Query: "broker-cpu", Direction: perfexpv1alpha1.LowerIsBetter}
	o := CompareOptions{Primary: []perfexpv1alpha1.PrimaryMetric{p}, BetweenRun: &BetweenRun{SDPercent: 3, Runs: 10, Source: "an A/A sweep"}}
	base, cur := quantityRun("base", 0, unchanged), quantityRun("arm", 1, truth{1, 1, 1, 1, 1.3, 1})
	c := Compare(cur, &result.IntervalData{}, &Baseline{Name: "base", Result: base}, &result.IntervalData{}, o)
	mc := comparedRow(c, "query broker-cpu")
	if mc == nil || !mc.Primary || mc.Change != perfexpv1alpha1.ChangeUnknown {
		t.Fatalf("single-run query row: %+v; want a primary Unknown row", mc)
	}
	if !strings.Contains(mc.Why, "one value per run") || !strings.Contains(mc.Why, "runs per side would decide a change of +") {
		t.Errorf("why %q: want the runs that would decide it", mc.Why)
	}
	if c.Change != perfexpv1alpha1.ChangeUnknown {
		t.Errorf("headline %s, want Unknown: its only primary metric cannot be decided from one run", c.Change)
	}
	cr := CompareRuns(quantityRuns("base", 3, 0, unchanged), quantityRuns("arm", 3, 3, truth{1, 1, 1, 1, 1.3, 1}), o)
	if mc := comparedRow(cr, "query broker-cpu"); mc == nil || mc.Change != perfexpv1alpha1.ChangeRegressed || mc.SampleUnit != "runs" || mc.Samples != 3 {
		t.Fatalf("query row over 3 runs per side: %+v; want Regressed, 3 runs", mc)
	}
}

// runsToDecide's count: the interval of the difference of n runs per side, at sd 10 % and a
// change of 0, is narrower than ±5 % from about 35 runs per side (2·1.96²·0.1²/0.0488² ≈ 32, a
// little more for Student's t); at sd 3 % about 4 do; a change of exactly δ is never decided.
func TestRunsToDecide(t *testing.T) {
	up := math.Log1p(0.05)
	tests := []struct {
		change, sd float64
		lo, hi     int
	}{
		{0, 0.10, 32, 36},
		{0, 0.03, 3, 5},
		{math.Log(1.3), 0.03, 2, 2},
		{up, 0.03, 0, 0},
		{0, 0.5, 0, 0},
	}
	for _, tc := range tests {
		if n := runsToDecide(tc.change, tc.sd, up); n < tc.lo || n > tc.hi {
			t.Errorf("runsToDecide(%.3f, %.2f) = %d, want %d-%d", tc.change, tc.sd, n, tc.lo, tc.hi)
		}
	}
}

// Story: a sweep's blocks each ran at another level (a busier hour: ±20 %), and the variant uses
// 15 % more CPU in every block. Paired within the blocks, as latencies are, the workload's CPU
// row finds it; compared unpaired, the hours' spread hides it.
func TestWorkloadCPUPairedWithinBlocks(t *testing.T) {
	hour := []float64{0.8, 1.2, 1.0, 0.85, 1.15}
	design := &Design{Blocks: map[string]int{}}
	var base, cur []*result.Result
	for b, h := range hour {
		bs, cs := quantityRun(fmt.Sprint("base-", b), b, truth{1, 1, 1, 1, 1, h}), quantityRun(fmt.Sprint("arm-", b), b, truth{1, 1, 1, 1, 1, 1.15 * h})
		design.Blocks[bs.Experiment], design.Blocks[cs.Experiment] = b, b
		base, cur = append(base, bs), append(cur, cs)
	}
	design.Arms = [][]*result.Result{base, cur}
	p := []perfexpv1alpha1.PrimaryMetric{{Metric: perfexpv1alpha1.MetricCPU, Workload: &perfexpv1alpha1.MetricWorkload{Name: "circulation"}}}
	tests := []struct {
		name   string
		design *Design
		method string
		want   perfexpv1alpha1.Change
	}{
		{"paired within blocks", design, MethodPaired, perfexpv1alpha1.ChangeRegressed},
		{"unpaired", nil, result.MethodRuns, perfexpv1alpha1.ChangeInconclusive},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := CompareRuns(base, cur, CompareOptions{Primary: p, Design: tc.design})
			mc := comparedRow(c, "shop/circulation cpu avg")
			if mc == nil || mc.Method != tc.method || mc.Change != tc.want {
				t.Fatalf("CPU row %+v; want %s by %s", mc, tc.want, tc.method)
			}
		})
	}
}

// Story: a scenario with more groups than the comparison takes (the ten most frequent) names a
// rare one as its primary metric: its per-interval series is among those the analysis keeps for
// later comparisons, and its row is compared.
func TestPrimaryGroupBeyondTheMostFrequent(t *testing.T) {
	run := func(name string) *result.Result {
		r := transactionRun(name, 0, 1)
		s := &r.Scenarios[0]
		for i := range TopRequestsCompared + 2 {
			s.Groups = append(s.Groups, result.GroupResult{Name: fmt.Sprint("g", i), Count: result.Count(int64(100 - i)), Latency: s.Groups[0].Latency})
		}
		return r
	}
	rare := fmt.Sprint("g", TopRequestsCompared+1)
	a := perfexpv1alpha1.Analysis{PrimaryMetrics: []perfexpv1alpha1.PrimaryMetric{{Metric: perfexpv1alpha1.MetricP95, Scenario: "desk", Group: rare}}}
	keys := ComparedIntervals(run("arm"), run("base"), a)
	if !slices.Contains(keys, result.IntervalKey{Scenario: "desk", Group: rare}) {
		t.Errorf("intervals kept %v: the primary group %s is not among them", keys, rare)
	}
	o, _ := OptionsFor(a)
	c := CompareRuns([]*result.Result{run("base-1"), run("base-2")}, []*result.Result{run("arm-1"), run("arm-2")}, o)
	if mc := comparedRow(c, "desk group "+rare+" p95"); mc == nil || !mc.Primary || mc.Change == perfexpv1alpha1.ChangeUnknown {
		t.Errorf("row of the primary group: %+v; want a primary row compared", mc)
	}
}
