// Package analyzer is the analysis' adapter to the cluster and Prometheus: it reads what an
// experiment's analysis needs (the run's workloads and their resources, the baseline, the k6
// runners' own summaries), has internal/analysis query Prometheus, and publishes the results
// (status, report ConfigMap, Grafana dashboard). Reading and writing live in read.go,
// publish.go and dashboards.go; every decision in between (whether to wait, which workloads
// and baseline count, what the status says) is a pure function in decide.go, testable with no
// API server and no Prometheus.
package analyzer

import (
	"context"
	"errors"
	"strings"
	"time"

	promv1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/config"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/access"
	"github.com/perfexp/perfexp/internal/analysis"
	"github.com/perfexp/perfexp/internal/backend"
	"github.com/perfexp/perfexp/internal/judge"
	"github.com/perfexp/perfexp/internal/publish"
	"github.com/perfexp/perfexp/internal/report"
	"github.com/perfexp/perfexp/internal/step"
	"github.com/perfexp/perfexp/internal/text"
)

// +kubebuilder:rbac:groups="",resources=configmaps,verbs=get;list;watch;create;update;patch
// +kubebuilder:rbac:groups=apps,resources=deployments;statefulsets,verbs=get;list;watch

// Analysis timing. Settle is how long after the window's end analysis starts, so k6's last
// remote write and cAdvisor's next scrape have landed. NoDataGrace is how long analysis waits
// for the first k6 sample of the run before it reports the results as invalid instead.
const (
	DefaultSettle      = 30 * time.Second
	DefaultNoDataGrace = 5 * time.Minute
)

// DefaultPrometheusTimeout is the default PrometheusAnalyzer.Timeout. The analysis asks
// Prometheus for at most two minutes of query time per query (a server-side limit); a range
// query over a day-long soak at the analysis' resolution answers in well under a second, so a
// minute without an answer means the server is stuck, not busy.
const DefaultPrometheusTimeout = time.Minute

// PrometheusAnalyzer reads an experiment's results from Prometheus, writes them into its
// status and publishes the report ConfigMap <experiment>-report. It implements the
// reconciler's Analyzer and QueryChecker.
type PrometheusAnalyzer struct {
	Client client.Client
	// APIReader reads past the cache what the manager should not cache: PerfHistory objects
	// (up to 1.5 MiB each, read once per analysis). nil reads them with Client.
	APIReader client.Reader
	// PrometheusURL is the default Prometheus; spec.analysis.prometheusURL overrides it.
	PrometheusURL string
	// HTTPConfig is how the operator reaches PrometheusURL (credentials, TLS, headers; the
	// administrator's --prometheus-http-config-file); nil: no authentication. It is never
	// used for another URL: an experiment that names one brings its own
	// spec.analysis.prometheusAuth.
	HTTPConfig *config.HTTPClientConfig
	// Tenants maps experiment namespaces to the tenant header sent with their reads.
	Tenants backend.Tenants
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
	// UnboundQueryNamespaces are the namespaces whose experiments' custom queries are not bound
	// to the target namespace and test id (analysis.BindQuery): only namespaces whose authors
	// may read every series of the Prometheus.
	UnboundQueryNamespaces []string
	// Access checks the namespaces the analysis reads besides the target; nil skips the
	// check (Prepare made it already, before anything was patched).
	Access *access.Rules
	// Timeout bounds each request to Prometheus (connection, query and response); zero means
	// DefaultPrometheusTimeout. A Prometheus that accepts and never answers then counts as
	// unavailable and analysis retries later, instead of holding the reconciler.
	Timeout time.Duration
	// MaxAnswerBytes caps each answer read from Prometheus, after decompression; zero means
	// analysis.DefaultMaxAnswerBytes. A larger answer fails its query with a message that
	// says so (analysis.AnswerTooLargeError) instead of growing the manager's memory.
	MaxAnswerBytes int64
	// CAdvisorMaxAge is how old a container's newest cAdvisor sample may be for it to count as
	// running; zero means analysis.DefaultCAdvisorMaxAge. Raise it for scrape intervals above
	// 30 s.
	CAdvisorMaxAge time.Duration
	// MaxListedWorkloads caps the target namespace's workloads reported by default; zero means
	// analysis.DefaultMaxListedWorkloads.
	MaxListedWorkloads int
	// Dashboards delivers each run's Grafana dashboard (dashboards.go); nil delivers none.
	Dashboards *GrafanaDashboards
	// FailOnRegression is the default of spec.analysis.failOnRegression.
	FailOnRegression bool
}

// Analyze reads the results, compares them with the baseline (nil when none is set), judges
// the objectives, writes status.results, status.comparison and status.verdict, and publishes
// the report. It waits while the data may still be arriving and while Prometheus does not
// answer, with a backoff that grows with the time spent waiting; the reconciler's analysis
// deadline ends the waiting.
func (a *PrometheusAnalyzer) Analyze(ctx context.Context, exp, baseline *perfexpv1alpha1.PerfExperiment) (step.Result, error) {
	if r := noWindow(exp); r != nil {
		return *r, nil
	}
	now := a.clock().Now()
	end := exp.Status.Window.End.Time
	ready := end.Add(a.settle())
	// Before the settle time is up, analysis may start only if it can tell that every
	// request has landed: when the runners' own summaries are there to compare with.
	var early map[string]analysis.K6Summary
	if now.Before(ready) {
		if early = earlySummaries(a.summaries(ctx, exp)); early == nil {
			return step.Wait(ready.Sub(now), "the run's last samples to reach Prometheus (until %s)", ready.UTC().Format(time.RFC3339)), nil
		}
	}
	url, urlRefused := prometheusURL(exp, a.PrometheusURL, a.AllowedPrometheusURLs)
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
	promAPI, failed, err := a.prometheusAPI(ctx, exp, url)
	if failed != nil || err != nil {
		return orFailed(failed), err
	}
	in, err := a.input(ctx, exp, baseline)
	if err != nil {
		return step.Result{}, err
	}

	res, err := analysis.Analyze(ctx, promAPI, in)
	if err != nil {
		return queryFailed(err, url, backoff(exp, now))
	}
	wait := waitFor{now: now, ready: ready, noDataUntil: end.Add(a.noDataGrace()), backoff: backoff(exp, now), testID: in.TestID, url: url}
	if r := wait.more(res, early); r != nil {
		return *r, nil
	}
	sums := a.summaries(ctx, exp)
	res.Notes = append(res.Notes, crossCheckNotes(res, sums)...)
	judge.ApplyGate(res, gateInput(exp, sums, a.FailOnRegression))

	pageOpts := report.HTMLOptions{}
	if in.Baseline != nil {
		pageOpts.Baseline = in.Baseline.Result // the page overlays the baseline's series
	}
	// A report or dashboard name taken by someone else's ConfigMap costs that ConfigMap only:
	// the results still go into status, and a condition names what was left alone.
	var taken []string
	reportName := ""
	cm, err := a.publish(ctx, exp, res, a.Dashboards.options(baseline), pageOpts)
	if n, ok := publish.IsNotOwned(err); ok {
		taken = append(taken, n.Error())
	} else if err != nil {
		return step.Result{}, err
	} else {
		reportName = cm.Name
	}
	dashboardURL, err := a.Dashboards.publish(ctx, a.Client, exp, baseline, res)
	if n, ok := publish.IsNotOwned(err); ok {
		taken = append(taken, n.Error())
	} else if err != nil {
		return step.Result{}, err
	}
	recordResults(exp, res, reportName, dashboardURL)
	if len(taken) > 0 {
		meta.SetStatusCondition(&exp.Status.Conditions, metav1.Condition{
			Type: perfexpv1alpha1.ConditionReported, Status: metav1.ConditionFalse, Reason: perfexpv1alpha1.ReasonConfigMapNotOwned,
			Message: text.Truncate(strings.Join(taken, "; "), maxConditionMessage), ObservedGeneration: exp.Generation,
		})
		log.FromContext(ctx).Info("Left alone a ConfigMap that is not perfexp's", "experiment", client.ObjectKeyFromObject(exp), "message", strings.Join(taken, "; "))
	}
	log.FromContext(ctx).Info("Analyzed results", "experiment", client.ObjectKeyFromObject(exp), "verdict", res.Verdict,
		"validity", res.Validity, "queries", res.PrometheusQueries, "report", reportName)
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

// errNoTestID is returned for an experiment that reached analysis without a test id: the
// Pending phase records one before any load runs, and the load runner refuses to start
// without it, so there are no samples to read.
var errNoTestID = errors.New("the experiment has no test id yet")
