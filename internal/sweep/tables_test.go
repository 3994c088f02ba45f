package sweep_test

import (
	"math"
	"strings"
	"testing"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/report"
	"github.com/perfexp/perfexp/internal/result"
	"github.com/perfexp/perfexp/internal/sweep"
)

// studyRun is a run of a study: a scenario with a group, a Trend and a Counter, two observed
// workloads and two custom queries (one per broker), as the reference reports measure them.
func studyRun(name string, p95, cpu, brokerCPU float64) *result.Result {
	l := result.Latency{Avg: f(p95 / 2), P50: f(p95 / 3), P75: f(p95 / 1.5), P95: f(p95), P99: f(p95 * 1.5)}
	return &result.Result{Experiment: name, Validity: perfexpv1alpha1.Valid,
		Scenarios: []result.ScenarioResult{{Name: "checkinout", Validity: perfexpv1alpha1.Valid,
			RequestStats: result.RequestStats{Avg: l.Avg, P50: l.P50, P75: l.P75, P95: l.P95, P99: l.P99, Rate: f(40), ErrorPercent: f(0.5)},
			Groups:       []result.GroupResult{{Name: "check-out", Latency: l}},
			Trends:       []result.TrendResult{{Name: "import_duration", Unit: "ms", Latency: result.Latency{Avg: f(9000), P95: f(12000)}}},
			Counters:     []result.CounterResult{{Name: "refreshes_failed", Rate: f(0.2)}},
		}},
		Workloads: []result.WorkloadResult{
			{Kind: "Deployment", Namespace: "lib", Name: "circulation", Pods: 2, CPUAvg: f(cpu), CPUPercentOfRequest: f(100 * cpu / 0.5), MemoryAvg: f(512 << 20)},
			{Kind: "StatefulSet", Namespace: "lib", Name: "postgres", Pods: 1, CPUAvg: f(0.3), MemoryAvg: f(1 << 30)},
		},
		Queries: []result.QueryResult{
			{Name: "db_connections", Value: f(120)},
			{Name: "broker_cpu", Unit: "%", Series: []result.QuerySeries{
				{Labels: map[string]string{"broker": "1"}, Value: f(brokerCPU)}, {Labels: map[string]string{"broker": "2"}, Value: f(brokerCPU / 2)}}},
		},
	}
}

// Story: a study's sweep answers with the tables its reference report leads with. Each arm
// carries the means of its runs for every transaction, workload and query; the report shows them
// per arm beside the comparison's change and verdict, and prints the error % the arm's scenario
// statistics always held.
func TestCompareCarriesTheStudysTables(t *testing.T) {
	s := newSweep(withArms(envArm("pool-50", "50")), withRepeats(3))
	p, err := sweep.NewPlan(s)
	if err != nil {
		t.Fatal(err)
	}
	outcomes := map[string]sweep.Outcome{}
	for _, run := range p.Runs {
		cpu, jitter := 0.5, 1+0.01*float64(run.Repeat)
		if run.Arm == "pool-50" {
			cpu = 0.8 // 60 % more CPU, every run
		}
		outcomes[run.Name] = sweep.Outcome{Phase: perfexpv1alpha1.PhaseSucceeded, Result: studyRun(run.Name, 100*jitter, cpu*jitter, 30*jitter)}
	}
	r := sweep.Compare(s, p, outcomes, nil)
	arm := r.Arms[1]
	var kinds []string
	for _, tr := range arm.Transactions {
		kinds = append(kinds, tr.Kind)
		if tr.Runs != 3 {
			t.Errorf("transaction %+v over %d runs, want 3", tr, tr.Runs)
		}
	}
	if strings.Join(kinds, ",") != "Scenario,Group,Trend,Counter" {
		t.Fatalf("transactions of kinds %v: want the scenario, its group, Trend and Counter (it measured no request names)", kinds)
	}
	if len(arm.Workloads) != 2 || arm.Workloads[0].Pods != 2 || math.Abs(*arm.Workloads[0].CPUAvg-0.8*1.02) > 1e-9 {
		t.Errorf("workloads %+v: want circulation's CPU the mean of 0.808, 0.816, 0.824", arm.Workloads)
	}
	if len(arm.Queries) != 2 || len(arm.Queries[1].Series) != 2 || arm.Queries[1].Series[0].Labels["broker"] != "1" {
		t.Errorf("queries %+v: want broker_cpu's two series", arm.Queries)
	}

	md := report.SweepMarkdown(r)
	for _, want := range []string{
		"## Transactions", "### checkinout · group check-out", "### checkinout · Trend import_duration", "### checkinout · Counter refreshes_failed",
		"## Services: CPU and memory", "### deployment lib/circulation", "## Queries", "### query broker_cpu (%)",
		"| baseline | 51.0 | 34.0 | 68.0 | 102 |  | 153 | 0.5 | 40.0 |", // the baseline's values, error % included
	} {
		if !strings.Contains(md, want) {
			t.Errorf("the sweep report lacks %q:\n%s", want, md)
		}
	}
	// circulation's CPU rose 60 % in every run: its row says so with its interval.
	i := strings.Index(md, "### deployment lib/circulation")
	table := md[i:]
	table = table[:strings.Index(table, "\n\n###")]
	if !strings.Contains(table, "| pool-50 | 2 | 0.816 | +60.0 % [") || !strings.Contains(table, "] Regressed") {
		t.Errorf("circulation's table does not read its 60 %% rise as Regressed:\n%s", table)
	}
	if strings.Index(md, "### deployment lib/circulation") > strings.Index(md, "### statefulset lib/postgres") {
		t.Error("the workload that moved comes after the one that did not")
	}
}

// Story (the list-refresh short form): k6 sends no series of a Counter never incremented. The
// arm's runs failed 14 refreshes and none; its table row read the one run that had the Counter
// (and an arm with no failure at all had no row). A run of the scenario without the Counter
// counts 0 once any run of the sweep has it, and the Counter's rate is the arithmetic mean.
func TestCounterTableCountsARunWithoutItAsZero(t *testing.T) {
	s := newSweep(withArms(envArm("split-on", "true"), envArm("split-on-2", "yes")), withRepeats(2))
	p, err := sweep.NewPlan(s)
	if err != nil {
		t.Fatal(err)
	}
	outcomes := map[string]sweep.Outcome{}
	for _, run := range p.Runs {
		r := studyRun(run.Name, 100, 0.5, 30)
		c := &r.Scenarios[0].Counters
		switch {
		case run.Arm == "split-on" && run.Repeat == p.Runs[0].Repeat:
			(*c)[0].Rate = f(0.14)
		case run.Arm == "split-on" || run.Arm == "split-on-2":
			*c = nil
		default:
			(*c)[0].Rate = f(0.27)
		}
		outcomes[run.Name] = sweep.Outcome{Phase: perfexpv1alpha1.PhaseSucceeded, Result: r}
	}
	r := sweep.Compare(s, p, outcomes, nil)
	want := map[string]float64{"baseline": 0.27, "split-on": 0.07, "split-on-2": 0}
	for _, arm := range r.Arms {
		var rate *float64
		for _, tr := range arm.Transactions {
			if tr.Kind == report.TransactionCounter && tr.Name == "refreshes_failed" {
				rate = tr.Rate
			}
		}
		if rate == nil || math.Abs(*rate-want[arm.Name]) > 1e-9 {
			t.Errorf("arm %s: Counter rate %v, want %v", arm.Name, rateOf(rate), want[arm.Name])
		}
	}
}

func rateOf(p *float64) any {
	if p == nil {
		return nil
	}
	return *p
}
