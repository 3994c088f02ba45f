package analysis

import (
	"context"
	"fmt"
	"time"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/judge"
	"github.com/perfexp/perfexp/internal/judge/findings"
	"github.com/perfexp/perfexp/internal/result"
)

// Input is everything the analysis needs to know about the experiment. The controller fills it
// from the experiment's status and the cluster.
type Input struct {
	// Experiment and Namespace name the experiment; TargetNamespace is where the workloads run.
	Experiment, Namespace, TargetNamespace string
	// TestID is the testid tag of the run's k6 samples.
	TestID string
	// Variant describes the variant, for the report.
	Variant string
	// Start, WarmUpEnd (zero when there was no warm-up) and End are the recorded window.
	Start, WarmUpEnd, End time.Time
	// Scenarios are the declared scenario names.
	Scenarios []string
	// LoadShape is the load shape of every scenario (LoadShape(spec.load, scripts)), recorded
	// in the results so later runs can check they ran the same.
	LoadShape []result.ScenarioShape
	// Analysis is spec.analysis.
	Analysis perfexpv1alpha1.Analysis
	// Workloads are the touched and observed workloads with their containers' resources.
	Workloads []Workload
	// Routes are the workloads whose own request histogram is read per route
	// (analysis.observe[].routes).
	Routes []RouteSource
	// Baseline is the baseline run, nil when none is set.
	Baseline *judge.Baseline
	// Inventory is what the touched and observed workloads ran with, recorded when the
	// measured window began (status.inventory); nil when none was recorded.
	Inventory []result.WorkloadInventory
	// History is the between-run noise learned from the PerfHistory segments of the run's and
	// its baseline's configurations; a single-run comparison uses it, per metric, when
	// spec.analysis.betweenRun is not set. nil when there is none.
	History *judge.HistoryNoise
	// Phases is the experiment's timeline, for the report.
	Phases []result.PhaseAt
	// RunnerPods matches the names of the run's k6 pods in Namespace (load.RunnerPodPattern),
	// whose CPU and memory the report lists; empty: not read.
	RunnerPods string
	// CAdvisorMatchers select cAdvisor's series; defaults to DefaultCAdvisorMatchers.
	CAdvisorMatchers string
	// QueriesUnbound lets the custom queries read series of any namespace and test id: the
	// experiment's namespace is one the operator's admin trusts (--unbound-query-namespaces).
	QueriesUnbound bool
	// PodAge, when set, is what the run did to its pods' age before the load; the result's
	// notes state it.
	PodAge *PodAge
	// Drifted, when not empty, says which field of the variant someone else changed during
	// the run and who (the experiment's Drifted condition): the load then measured something
	// other than the variant, so the results are Invalid.
	Drifted string
	// CAdvisorMaxAge is how old a container's newest cAdvisor sample may be for the container
	// to count as running at an evaluation; defaults to DefaultCAdvisorMaxAge. It must exceed
	// the scrape interval plus cAdvisor's housekeeping delay.
	CAdvisorMaxAge time.Duration
	// MaxListedWorkloads caps the workloads listed by default (Workload.Listed); the largest
	// by CPU or memory are kept. Defaults to DefaultMaxListedWorkloads.
	MaxListedWorkloads int
	// EndGrace is how far past End k6 series are read. The recorded end has whole-second
	// precision and samples carry the time of their last request, so a few may be stamped
	// just after it; nothing of this test ID arrives later. Defaults to DefaultEndGrace.
	EndGrace time.Duration
}

// DefaultEndGrace is the default Input.EndGrace.
const DefaultEndGrace = time.Minute

// lookBefore is how far before the window's start ranges reach, so the first samples of a
// run are always inside them. Only samples of this test ID are selected, so reaching back
// costs nothing.
const lookBefore = 10 * time.Minute

// Analyze reads the experiment's results from Prometheus and judges them. It returns an
// *UnavailableError when Prometheus could not answer a query the results depend on; the
// caller retries later.
//
// Reading is done here and in the read* functions; every judgement (validity, the comparison
// with the baseline, objectives, the verdict) is made by internal/judge.
func Analyze(ctx context.Context, q Querier, in Input) (*result.Result, error) {
	if in.EndGrace <= 0 {
		in.EndGrace = DefaultEndGrace
	}
	cq := &CountingQuerier{Querier: newBoundedQuerier(q, maxConcurrentQueries)}
	signals := signalsFrom(ctx)
	if signals == nil {
		signals = &BackendSignals{}
		ctx = WithBackendSignals(ctx, signals)
	}
	r := newResult(in)
	if r.Window.MeasuredSeconds <= 0 {
		r.LatencySource = perfexpv1alpha1.LatencyNone
		judge.MarkInvalid(r, fmt.Sprintf("the measured window is empty: it starts at %s and ends at %s",
			r.Window.MeasuredStart.Format(time.RFC3339), in.End.Format(time.RFC3339)))
		r.Verdict = perfexpv1alpha1.VerdictInvalid
		return r, nil
	}
	w := planWindow(in, r)
	d, err := readAll(ctx, cq, in, w)
	if err != nil {
		return nil, err
	}
	if err := fillRequests(ctx, cq, in, w, d, r); err != nil {
		return nil, err
	}
	if r.WarmUp, err = readWarmUp(ctx, cq, in); err != nil {
		return nil, err
	}
	fillResources(in, w, d, r)
	fillSlices(in, w, d, r)

	judge.Validity(r, judge.MaxErrorRate(in.Analysis))
	judge.Drift(r, in.Drifted)
	r.LoadShape = in.LoadShape
	// The request names whose latency per interval anyone reads: the stored ones and the
	// compared ones. They are known only now, from the counts at the window's edges.
	keep := intervalNames(r, in.Baseline, in.Analysis)
	cur, err := readIntervals(ctx, cq, in.TestID, in.Scenarios, w.ms, in.End, w.step, keep, true)
	if err != nil {
		return nil, err
	}
	cur.Workloads = d.wd.intervals(w.ms, w.step, int(in.End.Sub(w.ms)/w.step))
	cur.Routes = d.routes.intervals
	r.Timeline = timeline(cur, w.ms, in.Scenarios)
	r.Intervals = stored(cur, r)
	if in.Baseline != nil {
		if r.Comparison, err = compareWithBaseline(ctx, cq, in, r, cur, w.ms, w.step, keep); err != nil {
			return nil, err
		}
		findings.Mark(r.Comparison, r.Inventory, in.Baseline.Result)
	}
	markBackendWarnings(r, signals)
	r.Objectives = judge.Objectives(r, in.Analysis.Objectives)
	r.Verdict = judge.Verdict(r)
	r.Findings = findings.Run(r, baselineResult(in.Baseline))
	r.PrometheusQueries = cq.Count()
	return r, nil
}

// baselineResult is the baseline's full result, nil when there is none.
func baselineResult(b *judge.Baseline) *result.Result {
	if b == nil {
		return nil
	}
	return b.Result
}
