package analyzer

import (
	"errors"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/access"
	"github.com/perfexp/perfexp/internal/analysis"
	"github.com/perfexp/perfexp/internal/judge"
	"github.com/perfexp/perfexp/internal/judge/findings"
	"github.com/perfexp/perfexp/internal/load"
	"github.com/perfexp/perfexp/internal/report"
	"github.com/perfexp/perfexp/internal/result"
	"github.com/perfexp/perfexp/internal/step"
	"github.com/perfexp/perfexp/internal/text"
)

// The decisions of the analysis, as pure functions of what was read: no API server, no
// Prometheus. Analyze (analyzer.go) calls them between its reads and its writes.

const (
	minBackoff = 5 * time.Second
	maxBackoff = 2 * time.Minute
	// earlyRecheck is how soon analysis looks again when Prometheus's counts do not yet equal
	// the runners' summaries: k6 pushes every 5 s by default and flushes once more when it
	// stops.
	earlyRecheck = 2 * time.Second
	// maxConditionMessage bounds the ObjectivesMet condition's message, which lists every
	// objective missed.
	maxConditionMessage = 1024
)

// noWindow fails an experiment whose load recorded no window; nil when there is one.
func noWindow(exp *perfexpv1alpha1.PerfExperiment) *step.Result {
	w := exp.Status.Window
	if w == nil || w.Start == nil || w.End == nil {
		r := step.Fail(perfexpv1alpha1.ReasonNoWindow, "the load recorded no window, so there is nothing to analyse")
		return &r
	}
	return nil
}

// prometheusURL is the Prometheus an experiment's analysis and query check talk to: its own
// spec.analysis.prometheusURL when the allow-list admits it, else the operator's (def). A
// refused URL comes back as the failure to report; nothing is sent to it.
func prometheusURL(exp *perfexpv1alpha1.PerfExperiment, def string, allowed []string) (string, *step.Result) {
	if exp.Spec.Analysis == nil || exp.Spec.Analysis.PrometheusURL == "" {
		return def, nil
	}
	url := exp.Spec.Analysis.PrometheusURL
	if r := access.PrometheusURL(url, append([]string{def}, allowed...)); r != nil {
		refused := step.Fail(r.Reason, "%s", r.Message)
		return "", &refused
	}
	return url, nil
}

// backoff grows with the time analysis has been waiting (from the Analyzed condition the
// reconciler keeps), so a Prometheus that is down for long is asked less often.
func backoff(exp *perfexpv1alpha1.PerfExperiment, now time.Time) time.Duration {
	since := time.Duration(0)
	if c := meta.FindStatusCondition(exp.Status.Conditions, perfexpv1alpha1.ConditionAnalyzed); c != nil && c.Status == metav1.ConditionFalse {
		since = now.Sub(c.LastTransitionTime.Time)
	}
	return min(max(since/4, minBackoff), maxBackoff)
}

// queryFailed says what an error of the Prometheus queries means: a Prometheus that does not
// answer is waited for, a query it refuses fails the analysis, anything else is the caller's
// error to retry.
func queryFailed(err error, url string, wait time.Duration) (step.Result, error) {
	var unavailable *analysis.UnavailableError
	var refused *analysis.QueryError
	var tooLarge *analysis.AnswerTooLargeError
	var unauthorized *analysis.UnauthorizedError
	var limit *analysis.LimitError
	switch {
	case errors.As(err, &unauthorized):
		return step.Fail(perfexpv1alpha1.ReasonPrometheusUnauthorized, "the metrics backend at %s refused perfexp's credentials (check spec.analysis.prometheusAuth, or the operator's --prometheus-http-config-file): %v", url, unauthorized.Err), nil
	case errors.As(err, &limit):
		return step.Fail(perfexpv1alpha1.ReasonBackendLimit, "the metrics backend at %s refused a query for one of its limits, %s; raise that limit for perfexp's tenant or shorten the run: %v", url, limit.Limit, limit.Err), nil
	case errors.As(err, &unavailable):
		return step.Wait(wait, "Prometheus at %s to answer: %v", url, unavailable.Err), nil
	case errors.As(err, &refused) && errors.As(err, &tooLarge):
		return step.Fail(perfexpv1alpha1.ReasonAnalysisFailed, "Prometheus at %s answered with more than perfexp reads: %v", url, refused), nil
	case errors.As(err, &refused):
		return step.Fail(perfexpv1alpha1.ReasonAnalysisFailed, "Prometheus at %s refused a query: %v", url, refused), nil
	}
	return step.Result{}, err
}

// waitFor holds what decides whether results just read are final.
type waitFor struct {
	now, ready  time.Time // ready: the window's end plus the settle time
	noDataUntil time.Time // the window's end plus the grace for the first k6 sample
	backoff     time.Duration
	testID, url string
}

// more is the wait before results can be published, nil when they can: analysis that started
// early (early: the runners' summaries) waits until Prometheus counts what they counted, and
// results without a single k6 sample wait out the grace before they are reported invalid.
func (w waitFor) more(res *result.Result, early map[string]analysis.K6Summary) *step.Result {
	if early != nil && !countsComplete(res, early) {
		r := step.Wait(min(w.ready.Sub(w.now), earlyRecheck), "Prometheus's request counts for testid=%s to equal the k6 runners' summaries (until %s at the latest)",
			w.testID, w.ready.UTC().Format(time.RFC3339))
		return &r
	}
	// The requests are all in, but cAdvisor stamps its samples at its own housekeeping (10-15 s
	// apart, longer for an idle container) and they reach Prometheus a scrape later: right after
	// a short run a custom query's rate over {{.Window}} may not yet find two samples of its
	// series inside the window, and returns nothing. (The workloads' own CPU falls back to the
	// samples around the window and needs no wait.) Such a query is asked again until the
	// settle time, after which its answer is what Prometheus holds.
	if early != nil && w.now.Before(w.ready) {
		if q := emptyQuery(res); q != "" {
			r := step.Wait(min(w.ready.Sub(w.now), earlyRecheck), "the last cAdvisor samples of the window (custom query %q has no series yet; until %s at the latest)",
				q, w.ready.UTC().Format(time.RFC3339))
			return &r
		}
	}
	if noK6Samples(res) && w.now.Before(w.noDataUntil) {
		r := step.Wait(w.backoff, "the first k6 samples with testid=%s in Prometheus at %s", w.testID, w.url)
		return &r
	}
	return nil
}

// emptyQuery names the first custom query of the results that returned no series (it has a
// note saying so); "" when none did.
func emptyQuery(r *result.Result) string {
	for _, q := range r.Queries {
		if q.Note != "" {
			return q.Name
		}
	}
	return ""
}

// noK6Samples says whether Prometheus holds no sample of the run at all: neither a request
// nor an iteration counter. A script that makes no HTTP request (it sleeps, or speaks gRPC)
// still writes k6's iteration counter; its results are reported at once (invalid: no
// requests) instead of waiting out the grace for samples that will never come.
func noK6Samples(r *result.Result) bool {
	for _, s := range r.Scenarios {
		if s.RequestStats.Requests != nil || s.Iterations != nil {
			return false
		}
	}
	return true
}

// countsComplete says whether Prometheus holds every request the runners counted: each
// scenario of the results has summaries, and every summary is matched with equal counts. Any
// doubt (a scenario without a summary, a count short) means waiting.
func countsComplete(r *result.Result, sums map[string]analysis.K6Summary) bool {
	mismatches, compared := analysis.CrossCheck(r, sums)
	return len(mismatches) == 0 && compared == len(sums) && compared > 0 && len(r.Scenarios) > 0 && !noK6Samples(r) &&
		scenariosSummarised(r, sums)
}

// scenariosSummarised says whether every scenario of the results has a summary of its own.
func scenariosSummarised(r *result.Result, sums map[string]analysis.K6Summary) bool {
	for _, s := range r.Scenarios {
		if _, compared := analysis.CrossCheck(&result.Result{Scenarios: []result.ScenarioResult{s}}, sums); compared == 0 {
			return false
		}
	}
	return true
}

// summaryData is the k6 runners' summaries ConfigMap as read: kept is false when the load
// runner kept none; err is why it could not be read.
type summaryData struct {
	name string
	data map[string]string
	err  error
	kept bool
}

// earlySummaries are the runners' summaries to compare Prometheus's counts with before the
// settle time is up; nil when there are none or one cannot be read, and then analysis waits
// the settle time instead.
func earlySummaries(s summaryData) map[string]analysis.K6Summary {
	if !s.kept || s.err != nil {
		return nil
	}
	out := map[string]analysis.K6Summary{}
	for k, v := range s.data {
		if load.IsWarmUpSummaryKey(k) {
			// The warm-up's requests are before the window: no scenario's count holds them,
			// and waiting for one to would always end at the settle time.
			continue
		}
		sum, err := analysis.ParseK6Summary([]byte(v))
		if err != nil {
			return nil
		}
		out[k] = sum
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// crossCheckNotes compare the counts with the k6 runners' own end-of-test summaries, when the
// load runner kept them: a note that they agree, or one per difference or unreadable summary.
func crossCheckNotes(r *result.Result, s summaryData) []string {
	if !s.kept {
		return nil
	}
	if s.err != nil {
		return []string{fmt.Sprintf("the k6 summaries (ConfigMap %s) could not be read for a cross-check: %v", s.name, s.err)}
	}
	sums := map[string]analysis.K6Summary{}
	var notes []string
	for k, v := range s.data {
		sum, err := analysis.ParseK6Summary([]byte(v))
		if err != nil {
			notes = append(notes, fmt.Sprintf("k6 summary %s: %v", k, err))
			continue
		}
		sums[k] = sum
	}
	if len(sums) == 0 {
		return notes
	}
	mismatches, compared := analysis.CrossCheck(r, sums)
	if len(mismatches) == 0 && compared > 0 {
		notes = append(notes, fmt.Sprintf("request and error counts equal the sum of the %d k6 runners' own summaries", compared))
	}
	return append(notes, mismatches...)
}

// settings are the operator's analysis settings every experiment's input carries.
type settings struct {
	cAdvisorMatchers   string
	cAdvisorMaxAge     time.Duration
	maxListedWorkloads int
	unboundQueries     bool
}

// inputFrom is the analysis' input as far as the experiment itself tells it; the reads add
// the scripts' hashes, the workloads and the baseline.
func inputFrom(exp *perfexpv1alpha1.PerfExperiment, s settings) (analysis.Input, error) {
	w := exp.Status.Window
	if exp.Status.TestID == "" {
		return analysis.Input{}, errNoTestID
	}
	in := analysis.Input{
		Experiment: exp.Name, Namespace: exp.Namespace, TargetNamespace: exp.TargetNamespace(),
		TestID: exp.Status.TestID, Start: w.Start.Time, End: w.End.Time, CAdvisorMatchers: s.cAdvisorMatchers,
		CAdvisorMaxAge: s.cAdvisorMaxAge, QueriesUnbound: s.unboundQueries, MaxListedWorkloads: s.maxListedWorkloads, RunnerPods: load.RunnerPodPattern(exp),
	}
	if c := meta.FindStatusCondition(exp.Status.Conditions, perfexpv1alpha1.ConditionDrifted); c != nil && c.Status == metav1.ConditionTrue {
		in.Drifted = c.Message
	}
	if w.WarmUpEnd != nil {
		in.WarmUpEnd = w.WarmUpEnd.Time
	}
	if exp.Spec.Variant != nil {
		in.Variant = exp.Spec.Variant.Description
	}
	in.PodAge = podAgeOf(exp)
	if exp.Spec.Analysis != nil {
		in.Analysis = *exp.Spec.Analysis
	}
	in.Scenarios = reportedScenarios(exp)
	in.Inventory = result.InventoryFrom(exp.Status.Inventory)
	for _, p := range exp.Status.PhaseHistory {
		in.Phases = append(in.Phases, result.PhaseAt{Phase: string(p.Phase), Time: p.Time.Time})
	}
	return in, nil
}

// reportedScenarios are the scenario names the samples carry: a scenario's own, or for a
// fromScript scenario the k6 scenarios of its script (k6's scenario tag replaces perfexp's on
// every sample made within them), as the load step recorded them.
func reportedScenarios(exp *perfexpv1alpha1.PerfExperiment) []string {
	var names []string
	for _, s := range exp.Spec.Load.Scenarios {
		if !s.FromScript {
			names = append(names, s.Name)
			continue
		}
		if exp.Status.Load != nil {
			for _, st := range exp.Status.Load.Scenarios {
				if st.Name == s.Name {
					names = append(names, st.K6Scenarios...)
				}
			}
		}
	}
	return names
}

// touchedWorkloads are the Deployments and StatefulSets the variant touched, once each, with
// the resources in force during the run as the snapshot recorded them. A workload whose
// snapshot recorded no containers has nil Containers: its spec is to be read.
func touchedWorkloads(env *perfexpv1alpha1.EnvironmentStatus) []analysis.Workload {
	if env == nil {
		return nil
	}
	seen := map[workloadKey]bool{}
	var out []analysis.Workload
	for _, t := range env.Touched {
		kind := perfexpv1alpha1.WorkloadKind(t.Kind)
		if t.APIVersion != "apps/v1" || (kind != perfexpv1alpha1.WorkloadKindDeployment && kind != perfexpv1alpha1.WorkloadKindStatefulSet) {
			continue
		}
		k := workloadKey{kind, t.Namespace, t.Name}
		if seen[k] {
			continue
		}
		seen[k] = true
		wl := analysis.Workload{Kind: kind, Namespace: t.Namespace, Name: t.Name, Touched: true}
		for _, c := range t.Containers {
			wl.Containers = append(wl.Containers, containerFrom(c.Name, c.Requests, c.Limits))
		}
		out = append(out, wl)
	}
	return out
}

type workloadKey struct {
	kind     perfexpv1alpha1.WorkloadKind
	ns, name string
}

// workloadQuery is one list of workloads the analysis reads: an observe entry, or one kind of
// the target namespace's workloads (listed).
type workloadQuery struct {
	kind     perfexpv1alpha1.WorkloadKind
	ns       string
	selector perfexpv1alpha1.WorkloadSelector
	listed   bool
	// routes is the observe entry's route histogram, nil when it reads none.
	routes *perfexpv1alpha1.RouteHistogram
}

// describeBaseline is the baseline run as its experiment (b, nil when not found) tells it, or
// why it cannot be used (Problem). Its results are read separately (baselineResult).
func describeBaseline(exp, b *perfexpv1alpha1.PerfExperiment) *judge.Baseline {
	name := exp.Spec.Baseline.Name
	out := &judge.Baseline{Name: name}
	switch {
	case b == nil:
		out.Problem = fmt.Sprintf("baseline experiment %s was not found in namespace %s", name, exp.Namespace)
		return out
	case b.Status.Phase != perfexpv1alpha1.PhaseSucceeded:
		out.Problem = fmt.Sprintf("baseline experiment %s has not succeeded (phase %s)", name, orNone(string(b.Status.Phase)))
		return out
	case b.Status.Window == nil || b.Status.Window.Start == nil || b.Status.Window.End == nil:
		out.Problem = fmt.Sprintf("baseline experiment %s has no recorded window", name)
		return out
	}
	out.TestID = b.Status.TestID
	out.Start, out.End = b.Status.Window.Start.Time, b.Status.Window.End.Time
	if b.Status.Window.WarmUpEnd != nil {
		out.WarmUpEnd = b.Status.Window.WarmUpEnd.Time
	}
	for _, s := range b.Spec.Load.Scenarios {
		out.Scenarios = append(out.Scenarios, s.Name)
	}
	// Its load shape as its spec says, for results that do not record one; its ConfigMap
	// scripts may have changed since it ran, so only inline scripts are hashed here.
	out.LoadShape = result.LoadShape(b.Spec.Load, nil)
	return out
}

// baselineResult is the baseline's full results from its report's results.json (doc, found
// when the report was there), else the top request names its status holds.
func baselineResult(status *perfexpv1alpha1.Results, doc string, found bool) *result.Result {
	if found {
		if r, err := report.ParseJSON([]byte(doc)); err == nil {
			return r
		}
	}
	return result.FromStatus(status)
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// recordResults writes what the analysis found into the experiment's status: the bounded
// results and comparison, the verdict, the report's name and the ObjectivesMet and Confounded
// conditions.
func recordResults(exp *perfexpv1alpha1.PerfExperiment, res *result.Result, reportName, dashboardURL string) {
	exp.Status.DashboardURL = dashboardURL
	exp.Status.Results, exp.Status.Comparison = res.Status()
	exp.Status.Verdict = res.Verdict
	exp.Status.ReportRef = nil
	if reportName != "" {
		exp.Status.ReportRef = &perfexpv1alpha1.LocalObjectReference{Name: reportName}
	}
	setGateConditions(exp, res)
	status, reason, message := judge.ObjectivesCondition(res)
	meta.SetStatusCondition(&exp.Status.Conditions, metav1.Condition{
		Type: perfexpv1alpha1.ConditionObjectivesMet, Status: status, Reason: reason,
		Message: text.Truncate(message, maxConditionMessage), ObservedGeneration: exp.Generation,
	})
	if c, ok := findings.Condition(res.Comparison); ok {
		c.Message, c.ObservedGeneration = text.Truncate(c.Message, maxConditionMessage), exp.Generation
		meta.SetStatusCondition(&exp.Status.Conditions, c)
	} else {
		meta.RemoveStatusCondition(&exp.Status.Conditions, perfexpv1alpha1.ConditionConfounded)
	}
}
