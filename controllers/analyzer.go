package controllers

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"time"

	"github.com/prometheus/client_golang/api"
	promv1 "github.com/prometheus/client_golang/api/prometheus/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/log"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/access"
	"github.com/perfexp/perfexp/internal/analysis"
	"github.com/perfexp/perfexp/internal/load"
	"github.com/perfexp/perfexp/internal/report"
	"github.com/perfexp/perfexp/internal/step"
)

// +kubebuilder:rbac:groups="",resources=configmaps,verbs=get;list;watch;create;update;patch
// +kubebuilder:rbac:groups=apps,resources=deployments;statefulsets,verbs=get;list;watch

// Analysis timing. Settle is how long after the window's end analysis starts, so k6's last
// remote write and cAdvisor's next scrape have landed. NoDataGrace is how long analysis waits
// for the first k6 sample of the run before it reports the results as invalid instead.
const (
	DefaultSettle      = 30 * time.Second
	DefaultNoDataGrace = 5 * time.Minute
	minBackoff         = 5 * time.Second
	maxBackoff         = 2 * time.Minute
	// maxReportBytes keeps the report ConfigMap under the API server's 1 MiB object limit.
	maxReportBytes = 900 * 1024
)

// PrometheusAnalyzer reads an experiment's results from Prometheus, writes them into its
// status and publishes the report ConfigMap <experiment>-report.
type PrometheusAnalyzer struct {
	Client client.Client
	// PrometheusURL is the default Prometheus; spec.analysis.prometheusURL overrides it.
	PrometheusURL string
	// NewAPI makes a Prometheus API client; nil means client_golang's.
	NewAPI func(url string) (promv1.API, error)
	Clock  clock.PassiveClock
	// Settle and NoDataGrace default to DefaultSettle and DefaultNoDataGrace.
	Settle, NoDataGrace time.Duration
	// CAdvisorMatchers select cAdvisor's series when they are not scraped the way
	// kube-prometheus-stack does (analysis.DefaultCAdvisorMatchers).
	CAdvisorMatchers string
	// AllowedPrometheusURLs are the URLs spec.analysis.prometheusURL may name besides
	// PrometheusURL: any other would let experiments send requests from the operator's
	// network position.
	AllowedPrometheusURLs []string
	// Access checks the namespaces the analysis reads besides the target; nil skips the
	// check (Prepare made it already, before anything was patched).
	Access *access.Rules
	// Timeout bounds each request to Prometheus (connection, query and response); zero means
	// DefaultPrometheusTimeout. A Prometheus that accepts and never answers then counts as
	// unavailable and analysis retries later, instead of holding the reconciler.
	Timeout time.Duration
	// CAdvisorMaxAge is how old a container's newest cAdvisor sample may be for it to count as
	// running; zero means analysis.DefaultCAdvisorMaxAge. Raise it for scrape intervals above
	// 30 s.
	CAdvisorMaxAge time.Duration
	// MaxListedWorkloads caps the target namespace's workloads reported by default; zero means
	// analysis.DefaultMaxListedWorkloads.
	MaxListedWorkloads int
	// Dashboards delivers each run's Grafana dashboard (dashboard.go); nil delivers none.
	Dashboards *GrafanaDashboards
}

// DefaultPrometheusTimeout is the default PrometheusAnalyzer.Timeout. The analysis asks
// Prometheus for at most two minutes of query time per query (a server-side limit); a range
// query over a day-long soak at the analysis' resolution answers in well under a second, so a
// minute without an answer means the server is stuck, not busy.
const DefaultPrometheusTimeout = time.Minute

var _ Analyzer = &PrometheusAnalyzer{}

// prometheusURL is the Prometheus an experiment's analysis and query check talk to: its own
// spec.analysis.prometheusURL when the allow-list admits it, else the operator's. A refused URL
// comes back as the failure to report; nothing is sent to it.
func (a *PrometheusAnalyzer) prometheusURL(exp *perfexpv1alpha1.PerfExperiment) (string, *step.Result) {
	if exp.Spec.Analysis == nil || exp.Spec.Analysis.PrometheusURL == "" {
		return a.PrometheusURL, nil
	}
	url := exp.Spec.Analysis.PrometheusURL
	if r := access.PrometheusURL(url, append([]string{a.PrometheusURL}, a.AllowedPrometheusURLs...)); r != nil {
		refused := step.Fail(r.Reason, "%s", r.Message)
		return "", &refused
	}
	return url, nil
}

// Analyze implements Analyzer. It waits while the data may still be arriving and while
// Prometheus does not answer, with a backoff that grows with the time spent waiting; the
// reconciler's analysis deadline ends the waiting.
func (a *PrometheusAnalyzer) Analyze(ctx context.Context, exp, baseline *perfexpv1alpha1.PerfExperiment) (step.Result, error) {
	w := exp.Status.Window
	if w == nil || w.Start == nil || w.End == nil {
		return step.Fail(perfexpv1alpha1.ReasonNoWindow, "the load recorded no window, so there is nothing to analyse"), nil
	}
	now := a.clock().Now()
	ready := w.End.Add(a.settle())
	// Before the settle time is up, analysis may start only if it can tell that every
	// request has landed: when the runners' own summaries are there to compare with.
	var early map[string]analysis.K6Summary
	if now.Before(ready) {
		if early = a.summaries(ctx, exp); early == nil {
			return step.Wait(ready.Sub(now), "the run's last samples to reach Prometheus (until %s)", ready.UTC().Format(time.RFC3339)), nil
		}
	}
	url, urlRefused := a.prometheusURL(exp)
	if urlRefused != nil {
		return *urlRefused, nil
	}
	if a.Access != nil {
		if r, err := a.Access.ReadNamespaces(ctx, exp); r != nil || err != nil {
			if err != nil {
				return step.Result{}, err
			}
			return step.Fail(r.Reason, "%s", r.Message), nil
		}
	}
	if url == "" {
		return step.Fail(perfexpv1alpha1.ReasonNoPrometheus, "no Prometheus to read results from: set spec.analysis.prometheusURL or the operator's Prometheus URL"), nil
	}
	promAPI, err := a.newAPI(url)
	if err != nil {
		return step.Fail(perfexpv1alpha1.ReasonNoPrometheus, "Prometheus URL %q: %v", url, err), nil
	}
	in, err := a.input(ctx, exp, baseline)
	if err != nil {
		return step.Result{}, err
	}

	res, err := analysis.Analyze(ctx, promAPI, in)
	var unavailable *analysis.UnavailableError
	var refused *analysis.QueryError
	switch {
	case errors.As(err, &unavailable):
		return step.Wait(a.backoff(exp, now), "Prometheus at %s to answer: %v", url, unavailable.Err), nil
	case errors.As(err, &refused):
		return step.Fail(perfexpv1alpha1.ReasonAnalysisFailed, "Prometheus at %s refused a query: %v", url, refused), nil
	case err != nil:
		return step.Result{}, err
	}
	if early != nil && !countsComplete(res, early) {
		return step.Wait(min(ready.Sub(now), earlyRecheck), "Prometheus's request counts for testid=%s to equal the k6 runners' summaries (until %s at the latest)",
			in.TestID, ready.UTC().Format(time.RFC3339)), nil
	}
	if noK6Samples(res) && now.Before(w.End.Add(a.noDataGrace())) {
		return step.Wait(a.backoff(exp, now), "the first k6 samples with testid=%s in Prometheus at %s", in.TestID, url), nil
	}
	res.Notes = append(res.Notes, a.crossCheck(ctx, exp, res)...)

	pageOpts := report.HTMLOptions{}
	if in.Baseline != nil {
		pageOpts.Baseline = in.Baseline.Result // the page overlays the baseline's series
	}
	cm, err := a.publish(ctx, exp, res, a.Dashboards.options(baseline), pageOpts)
	if err != nil {
		return step.Result{}, err
	}
	if exp.Status.DashboardURL, err = a.Dashboards.publish(ctx, a.Client, exp, baseline, res); err != nil {
		return step.Result{}, err
	}
	exp.Status.Results, exp.Status.Comparison = res.Status()
	exp.Status.Verdict = res.Verdict
	exp.Status.ReportRef = &perfexpv1alpha1.LocalObjectReference{Name: cm.Name}
	status, reason, message := analysis.ObjectivesCondition(res)
	meta.SetStatusCondition(&exp.Status.Conditions, metav1.Condition{
		Type: perfexpv1alpha1.ConditionObjectivesMet, Status: status, Reason: reason,
		Message: truncate(message, 1024), ObservedGeneration: exp.Generation,
	})
	log.FromContext(ctx).Info("Analyzed results", "experiment", client.ObjectKeyFromObject(exp), "verdict", res.Verdict,
		"validity", res.Validity, "queries", res.PrometheusQueries, "report", cm.Name)
	return step.Done(), nil
}

func (a *PrometheusAnalyzer) clock() clock.PassiveClock {
	if a.Clock == nil {
		return clock.RealClock{}
	}
	return a.Clock
}

func (a *PrometheusAnalyzer) settle() time.Duration {
	if a.Settle > 0 {
		return a.Settle
	}
	return DefaultSettle
}

func (a *PrometheusAnalyzer) noDataGrace() time.Duration {
	if a.NoDataGrace > 0 {
		return a.NoDataGrace
	}
	return DefaultNoDataGrace
}

func (a *PrometheusAnalyzer) newAPI(url string) (promv1.API, error) {
	if a.NewAPI != nil {
		return a.NewAPI(url)
	}
	timeout := a.Timeout
	if timeout <= 0 {
		timeout = DefaultPrometheusTimeout
	}
	// The client's own timeout covers the whole exchange, reading the body included, which a
	// context deadline set by the caller would too, but every caller would have to remember it.
	c, err := api.NewClient(api.Config{Address: url, Client: &http.Client{Timeout: timeout, Transport: api.DefaultRoundTripper}})
	if err != nil {
		return nil, err
	}
	return promv1.NewAPI(c), nil
}

// backoff grows with the time analysis has been waiting (from the Analyzed condition the
// reconciler keeps), so a Prometheus that is down for long is asked less often.
func (a *PrometheusAnalyzer) backoff(exp *perfexpv1alpha1.PerfExperiment, now time.Time) time.Duration {
	since := time.Duration(0)
	if c := meta.FindStatusCondition(exp.Status.Conditions, perfexpv1alpha1.ConditionAnalyzed); c != nil && c.Status == metav1.ConditionFalse {
		since = now.Sub(c.LastTransitionTime.Time)
	}
	return min(max(since/4, minBackoff), maxBackoff)
}

func noK6Samples(r *analysis.Result) bool {
	for _, s := range r.Scenarios {
		if s.RequestStats.Requests != nil {
			return false
		}
	}
	return true
}

// input gathers what the pure analysis needs from the experiment and the cluster.
func (a *PrometheusAnalyzer) input(ctx context.Context, exp, baseline *perfexpv1alpha1.PerfExperiment) (analysis.Input, error) {
	w := exp.Status.Window
	in := analysis.Input{
		Experiment: exp.Name, Namespace: exp.Namespace, TargetNamespace: TargetNamespace(exp),
		TestID: exp.Status.TestID, Start: w.Start.Time, End: w.End.Time, CAdvisorMatchers: a.CAdvisorMatchers,
		CAdvisorMaxAge: a.CAdvisorMaxAge, MaxListedWorkloads: a.MaxListedWorkloads, RunnerPods: load.RunnerPodPattern(exp),
	}
	if in.TestID == "" {
		in.TestID = TestID(exp)
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
	if exp.Spec.Analysis != nil {
		in.Analysis = *exp.Spec.Analysis
	}
	for _, s := range exp.Spec.Load.Scenarios {
		in.Scenarios = append(in.Scenarios, s.Name)
	}
	// The results record the load shape with a hash of each script, so a later run can
	// check it ran the same; a ConfigMap script that is gone has an unknown hash, not a
	// different one.
	scripts, err := scenarioScripts(ctx, a.Client, exp)
	if err != nil {
		return in, err
	}
	in.LoadShape = analysis.LoadShape(exp.Spec.Load, scripts)
	for _, p := range exp.Status.PhaseHistory {
		in.Phases = append(in.Phases, analysis.PhaseAt{Phase: string(p.Phase), Time: p.Time.Time})
	}
	if in.Workloads, err = a.workloads(ctx, exp); err != nil {
		return in, err
	}
	if exp.Spec.Baseline != nil {
		if in.Baseline, err = a.baseline(ctx, exp, baseline); err != nil {
			return in, err
		}
	}
	return in, nil
}

// workloads lists the touched workloads with the resources in force during the run, the
// observed ones with their specs' resources, and the target namespace's other workloads.
func (a *PrometheusAnalyzer) workloads(ctx context.Context, exp *perfexpv1alpha1.PerfExperiment) ([]analysis.Workload, error) {
	type key struct{ kind, ns, name string }
	seen := map[key]bool{}
	var out []analysis.Workload
	if env := exp.Status.Environment; env != nil {
		for _, t := range env.Touched {
			kind := perfexpv1alpha1.WorkloadKind(t.Kind)
			if t.APIVersion != "apps/v1" || (kind != perfexpv1alpha1.WorkloadKindDeployment && kind != perfexpv1alpha1.WorkloadKindStatefulSet) {
				continue
			}
			k := key{t.Kind, t.Namespace, t.Name}
			if seen[k] {
				continue
			}
			seen[k] = true
			wl := analysis.Workload{Kind: kind, Namespace: t.Namespace, Name: t.Name, Touched: true}
			if len(t.Containers) > 0 {
				for _, c := range t.Containers {
					wl.Containers = append(wl.Containers, containerFrom(c.Name, c.Requests, c.Limits))
				}
			} else {
				spec, err := a.podSpec(ctx, kind, t.Namespace, t.Name)
				if err != nil {
					return nil, err
				}
				wl.Containers = containersOf(spec)
			}
			out = append(out, wl)
		}
	}
	// addUnseen appends the workloads found that no earlier source named; listed marks those
	// reported only because they run in the target namespace.
	addUnseen := func(kind perfexpv1alpha1.WorkloadKind, ns string, found []analysis.Workload, listed bool) {
		for _, wl := range found {
			k := key{string(kind), ns, wl.Name}
			if seen[k] {
				continue
			}
			seen[k] = true
			wl.Listed = listed
			out = append(out, wl)
		}
	}
	var observe []perfexpv1alpha1.ObservedWorkloads
	if exp.Spec.Analysis != nil {
		observe = exp.Spec.Analysis.Observe
	}
	for _, o := range observe {
		ns := o.Namespace
		if ns == "" {
			ns = TargetNamespace(exp)
		}
		kind := o.Kind
		if kind == "" {
			kind = perfexpv1alpha1.WorkloadKindDeployment
		}
		found, err := a.observed(ctx, kind, ns, o.WorkloadSelector)
		if err != nil {
			return nil, err
		}
		addUnseen(kind, ns, found, false)
	}
	// Every other Deployment and StatefulSet of the target namespace is listed too, as a
	// performance report shows every service; the analysis keeps the largest when there are
	// many.
	ns := TargetNamespace(exp)
	for _, kind := range []perfexpv1alpha1.WorkloadKind{perfexpv1alpha1.WorkloadKindDeployment, perfexpv1alpha1.WorkloadKindStatefulSet} {
		found, err := a.observed(ctx, kind, ns, perfexpv1alpha1.WorkloadSelector{})
		if err != nil {
			return nil, err
		}
		addUnseen(kind, ns, found, true)
	}
	return out, nil
}

// observed lists the workloads an observe entry chooses. A named workload that is gone is
// skipped: it may have been deleted since the run, and its numbers are still in Prometheus
// under its name, but without its spec there are no requests or limits to compare with.
func (a *PrometheusAnalyzer) observed(ctx context.Context, kind perfexpv1alpha1.WorkloadKind, ns string, sel perfexpv1alpha1.WorkloadSelector) ([]analysis.Workload, error) {
	var out []analysis.Workload
	if len(sel.Names) > 0 {
		for _, name := range sel.Names {
			spec, err := a.podSpec(ctx, kind, ns, name)
			if apierrors.IsNotFound(err) {
				out = append(out, analysis.Workload{Kind: kind, Namespace: ns, Name: name})
				continue
			}
			if err != nil {
				return nil, err
			}
			out = append(out, analysis.Workload{Kind: kind, Namespace: ns, Name: name, Containers: containersOf(spec)})
		}
		return out, nil
	}
	selector := labels.Everything()
	if sel.Selector != nil {
		s, err := metav1.LabelSelectorAsSelector(sel.Selector)
		if err != nil {
			return nil, err
		}
		selector = s
	}
	opts := []client.ListOption{client.InNamespace(ns), client.MatchingLabelsSelector{Selector: selector}}
	switch kind {
	case perfexpv1alpha1.WorkloadKindStatefulSet:
		list := &appsv1.StatefulSetList{}
		if err := a.Client.List(ctx, list, opts...); err != nil {
			return nil, err
		}
		for i := range list.Items {
			out = append(out, analysis.Workload{Kind: kind, Namespace: ns, Name: list.Items[i].Name, Containers: containersOf(&list.Items[i].Spec.Template.Spec)})
		}
	default:
		list := &appsv1.DeploymentList{}
		if err := a.Client.List(ctx, list, opts...); err != nil {
			return nil, err
		}
		for i := range list.Items {
			out = append(out, analysis.Workload{Kind: kind, Namespace: ns, Name: list.Items[i].Name, Containers: containersOf(&list.Items[i].Spec.Template.Spec)})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

func (a *PrometheusAnalyzer) podSpec(ctx context.Context, kind perfexpv1alpha1.WorkloadKind, ns, name string) (*corev1.PodSpec, error) {
	key := client.ObjectKey{Namespace: ns, Name: name}
	if kind == perfexpv1alpha1.WorkloadKindStatefulSet {
		s := &appsv1.StatefulSet{}
		if err := a.Client.Get(ctx, key, s); err != nil {
			return nil, err
		}
		return &s.Spec.Template.Spec, nil
	}
	d := &appsv1.Deployment{}
	if err := a.Client.Get(ctx, key, d); err != nil {
		return nil, err
	}
	return &d.Spec.Template.Spec, nil
}

func containersOf(spec *corev1.PodSpec) []analysis.Container {
	if spec == nil {
		return nil
	}
	out := make([]analysis.Container, 0, len(spec.Containers))
	for _, c := range spec.Containers {
		out = append(out, containerFrom(c.Name, c.Resources.Requests, c.Resources.Limits))
	}
	return out
}

func containerFrom(name string, requests, limits corev1.ResourceList) analysis.Container {
	get := func(l corev1.ResourceList, r corev1.ResourceName) *float64 {
		q, ok := l[r]
		if !ok {
			return nil
		}
		v := q.AsApproximateFloat64()
		return &v
	}
	return analysis.Container{Name: name,
		CPURequest: get(requests, corev1.ResourceCPU), CPULimit: get(limits, corev1.ResourceCPU),
		MemoryRequest: get(requests, corev1.ResourceMemory), MemoryLimit: get(limits, corev1.ResourceMemory)}
}

// baseline describes the baseline run, or why it cannot be used.
func (a *PrometheusAnalyzer) baseline(ctx context.Context, exp, b *perfexpv1alpha1.PerfExperiment) (*analysis.Baseline, error) {
	name := exp.Spec.Baseline.Name
	out := &analysis.Baseline{Name: name}
	switch {
	case b == nil:
		out.Problem = fmt.Sprintf("baseline experiment %s was not found in namespace %s", name, exp.Namespace)
		return out, nil
	case b.Status.Phase != perfexpv1alpha1.PhaseSucceeded:
		out.Problem = fmt.Sprintf("baseline experiment %s has not succeeded (phase %s)", name, orNone(string(b.Status.Phase)))
		return out, nil
	case b.Status.Window == nil || b.Status.Window.Start == nil || b.Status.Window.End == nil:
		out.Problem = fmt.Sprintf("baseline experiment %s has no recorded window", name)
		return out, nil
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
	out.LoadShape = analysis.LoadShape(b.Spec.Load, nil)
	// The full results are in the baseline's report; its status holds the top request names.
	if ref := b.Status.ReportRef; ref != nil {
		cm := &corev1.ConfigMap{}
		err := a.Client.Get(ctx, client.ObjectKey{Namespace: b.Namespace, Name: ref.Name}, cm)
		switch {
		case err == nil:
			if r, perr := report.ParseJSON([]byte(cm.Data[report.KeyJSON])); perr == nil {
				out.Result = r
				return out, nil
			}
		case !apierrors.IsNotFound(err):
			return nil, err
		}
	}
	out.Result = analysis.ResultFromStatus(b.Status.Results)
	return out, nil
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// earlyRecheck is how soon analysis looks again when Prometheus's counts do not yet equal the
// runners' summaries: k6 pushes every 5 s by default and flushes once more when it stops.
const earlyRecheck = 2 * time.Second

// summaries reads the k6 runners' own end-of-test summaries, keyed as the ConfigMap keys
// them; nil when the load runner kept none or one cannot be read, and then analysis waits the
// settle time instead.
func (a *PrometheusAnalyzer) summaries(ctx context.Context, exp *perfexpv1alpha1.PerfExperiment) map[string]analysis.K6Summary {
	if exp.Status.Load == nil || exp.Status.Load.SummariesRef == nil {
		return nil
	}
	cm := &corev1.ConfigMap{}
	if err := a.Client.Get(ctx, client.ObjectKey{Namespace: exp.Namespace, Name: exp.Status.Load.SummariesRef.Name}, cm); err != nil {
		return nil
	}
	out := map[string]analysis.K6Summary{}
	for k, v := range cm.Data {
		if load.IsWarmUpSummaryKey(k) {
			// The warm-up's requests are before the window: no scenario's count holds them,
			// and waiting for one to would always end at the settle time.
			continue
		}
		s, err := analysis.ParseK6Summary([]byte(v))
		if err != nil {
			return nil
		}
		out[k] = s
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// countsComplete says whether Prometheus holds every request the runners counted: each
// scenario of the results has summaries, and every summary is matched with equal counts. Any
// doubt (a scenario without a summary, a count short) means waiting.
func countsComplete(r *analysis.Result, sums map[string]analysis.K6Summary) bool {
	mismatches, compared := analysis.CrossCheck(r, sums)
	return len(mismatches) == 0 && compared == len(sums) && compared > 0 && len(r.Scenarios) > 0 && !noK6Samples(r) &&
		scenariosSummarised(r, sums)
}

// scenariosSummarised says whether every scenario of the results has a summary of its own.
func scenariosSummarised(r *analysis.Result, sums map[string]analysis.K6Summary) bool {
	for _, s := range r.Scenarios {
		if _, compared := analysis.CrossCheck(&analysis.Result{Scenarios: []analysis.ScenarioResult{s}}, sums); compared == 0 {
			return false
		}
	}
	return true
}

// crossCheck compares the counts with the k6 runners' own end-of-test summaries, when the
// load runner kept them.
func (a *PrometheusAnalyzer) crossCheck(ctx context.Context, exp *perfexpv1alpha1.PerfExperiment, r *analysis.Result) []string {
	if exp.Status.Load == nil || exp.Status.Load.SummariesRef == nil {
		return nil
	}
	cm := &corev1.ConfigMap{}
	if err := a.Client.Get(ctx, client.ObjectKey{Namespace: exp.Namespace, Name: exp.Status.Load.SummariesRef.Name}, cm); err != nil {
		return []string{fmt.Sprintf("the k6 summaries (ConfigMap %s) could not be read for a cross-check: %v", exp.Status.Load.SummariesRef.Name, err)}
	}
	sums := map[string]analysis.K6Summary{}
	var notes []string
	for k, v := range cm.Data {
		s, err := analysis.ParseK6Summary([]byte(v))
		if err != nil {
			notes = append(notes, fmt.Sprintf("k6 summary %s: %v", k, err))
			continue
		}
		sums[k] = s
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

// publish writes the report ConfigMap, owned by the experiment so it goes with it.
func (a *PrometheusAnalyzer) publish(ctx context.Context, exp *perfexpv1alpha1.PerfExperiment, r *analysis.Result, dash report.DashboardOptions, page report.HTMLOptions) (*corev1.ConfigMap, error) {
	data, err := reportData(r, dash, page)
	if err != nil {
		return nil, err
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: exp.Namespace, Name: exp.ReportName()}}
	_, err = controllerutil.CreateOrUpdate(ctx, a.Client, cm, func() error {
		if cm.Labels == nil {
			cm.Labels = map[string]string{}
		}
		if len(exp.Name) <= 63 { // a label value holds at most 63 characters; the test id selects it too
			cm.Labels[perfexpv1alpha1.LabelExperiment] = exp.Name
		}
		cm.Labels[perfexpv1alpha1.LabelTestID] = r.TestID
		cm.Data = data
		return controllerutil.SetControllerReference(exp, cm, a.Client.Scheme())
	})
	if err != nil {
		return nil, fmt.Errorf("writing the report ConfigMap %s: %w", cm.Name, err)
	}
	return cm, nil
}

// reportData renders the report. When it would not fit a ConfigMap, request names beyond the
// most frequent are left out of the documents, and the report says so.
func reportData(r *analysis.Result, dash report.DashboardOptions, pageOpts report.HTMLOptions) (map[string]string, error) {
	for _, keep := range []int{-1, 500, 100, 20} {
		rr := r
		if keep >= 0 {
			rr = trimRequests(r, keep)
		}
		js, err := report.JSON(rr)
		if err != nil {
			return nil, err
		}
		dashboard, err := report.DashboardWith(rr, dash)
		if err != nil {
			return nil, err
		}
		page, err := report.HTML(rr, pageOpts)
		if err != nil {
			return nil, err
		}
		data := map[string]string{report.KeyMarkdown: report.Markdown(rr), report.KeyJSON: string(js), report.KeyDashboard: string(dashboard), report.KeyHTML: page}
		size := 0
		for _, v := range data {
			size += len(v)
		}
		if size <= maxReportBytes {
			return data, nil
		}
	}
	return nil, fmt.Errorf("the report does not fit a ConfigMap even with 20 request names per scenario")
}

func trimRequests(r *analysis.Result, keep int) *analysis.Result {
	c := *r
	c.Scenarios = make([]analysis.ScenarioResult, len(r.Scenarios))
	trimmed := false
	for i, s := range r.Scenarios {
		if len(s.Requests) > keep {
			s.Requests = s.Requests[:keep]
			trimmed = true
		}
		c.Scenarios[i] = s
	}
	c.Slices = nil
	for _, sl := range r.Slices {
		sc := sl
		sc.Scenarios = make([]analysis.ScenarioResult, len(sl.Scenarios))
		for i, s := range sl.Scenarios {
			if len(s.Requests) > keep {
				s.Requests = s.Requests[:keep]
			}
			sc.Scenarios[i] = s
		}
		c.Slices = append(c.Slices, sc)
	}
	if trimmed {
		c.Notes = append(append([]string(nil), r.Notes...), fmt.Sprintf("only the %d most frequent request names per scenario are listed: the full list does not fit a ConfigMap", keep))
	}
	return &c
}
