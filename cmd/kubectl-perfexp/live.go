package main

import (
	"context"
	"fmt"
	"math"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	promapi "github.com/prometheus/client_golang/api"
	promv1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"
	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
)

// defaultPrometheusURL is the Helm chart's default --prometheus-url: the Prometheus of
// kube-prometheus-stack.
const defaultPrometheusURL = "http://prometheus-operated.monitoring:9090"

// noPrometheus as --prometheus-url switches the live numbers off.
const noPrometheus = "none"

// liveWindow is the span the live numbers cover (liveStats.String says "the last minute"): long enough for k6's 5 s remote-write flushes
// to give a rate, short enough to follow a ramp.
const liveWindow = time.Minute

// liveQueryTimeout bounds one refresh's queries, so a slow Prometheus never stalls the display.
const liveQueryTimeout = 3 * time.Second

// liveStats are the last minute's numbers of a running load, or why there are none.
type liveStats struct {
	// P95 is the 95th percentile latency in seconds, from k6's native histograms.
	P95 *float64
	// ErrorRate is the share of failed requests, 0..1.
	ErrorRate *float64
	// RequestRate is requests per second.
	RequestRate *float64
	// Unavailable says why Prometheus gave no numbers; empty when it answered.
	Unavailable string
}

func (l *liveStats) String() string {
	if l.Unavailable != "" {
		return "p95 n/a, errors n/a (" + l.Unavailable + ")"
	}
	p95, errs, rate := "n/a", "n/a", "n/a req/s"
	if l.P95 != nil {
		p95 = strconv.FormatFloat(*l.P95*1000, 'f', 1, 64) + " ms"
	}
	if l.ErrorRate != nil {
		errs = strconv.FormatFloat(*l.ErrorRate*100, 'f', 2, 64) + " %"
	}
	if l.RequestRate != nil {
		rate = strconv.FormatFloat(*l.RequestRate, 'f', 1, 64) + " req/s"
	}
	return fmt.Sprintf("p95 %s, errors %s, %s over the last minute", p95, errs, rate)
}

// prometheusURLFor picks the Prometheus to ask: the flag, the experiment's own, the one the
// operator was started with (operator, "" when unknown), or the chart's default; "" when the
// user said none.
func prometheusURLFor(flag string, exp *perfexpv1alpha1.PerfExperiment, operator string) string {
	switch {
	case flag == noPrometheus:
		return ""
	case flag != "":
		return flag
	case exp.Spec.Analysis != nil && exp.Spec.Analysis.PrometheusURL != "":
		return exp.Spec.Analysis.PrometheusURL
	case operator != "":
		return operator
	}
	return defaultPrometheusURL
}

// operatorLabel selects the operator's Deployment, as config/manager and the chart label it.
const operatorLabel = "app.kubernetes.io/name"

// operatorPrometheusURL reads --prometheus-url from the perfexp operator's Deployment in any
// namespace: the Prometheus the analysis itself uses. "" when there is none or the user may not
// list Deployments (most users may not, cluster-wide): the caller falls back to the default.
func operatorPrometheusURL(ctx context.Context, c client.Client) string {
	list := &appsv1.DeploymentList{}
	if err := c.List(ctx, list, client.MatchingLabels{operatorLabel: "perfexp"}); err != nil {
		return ""
	}
	for _, d := range list.Items {
		for _, ctr := range d.Spec.Template.Spec.Containers {
			args := append(append([]string(nil), ctr.Command...), ctr.Args...)
			for i, a := range args {
				if v, ok := strings.CutPrefix(a, "--prometheus-url="); ok {
					return v
				}
				if a == "--prometheus-url" && i+1 < len(args) {
					return args[i+1]
				}
			}
		}
	}
	return ""
}

// serviceProxyPath is the API server path that proxies to the in-cluster service a Prometheus
// URL names (http://NAME.NAMESPACE[.svc[.DOMAIN]][:PORT][/PREFIX]), and false for any other
// URL (an IP address, localhost, an ingress host), which is asked directly.
func serviceProxyPath(u *url.URL) (string, bool) {
	host := u.Hostname()
	if net.ParseIP(host) != nil {
		return "", false
	}
	parts := strings.Split(host, ".")
	if len(parts) < 2 || (len(parts) > 2 && parts[2] != "svc") {
		return "", false
	}
	port := u.Port()
	if port == "" {
		port = "80"
		if u.Scheme == "https" {
			port = "443"
		}
	}
	svc := parts[0] + ":" + port
	if u.Scheme == "https" {
		svc = "https:" + svc
	}
	return "/api/v1/namespaces/" + parts[1] + "/services/" + svc + "/proxy" + strings.TrimRight(u.Path, "/"), true
}

// livePrometheus asks one Prometheus for the live numbers.
type livePrometheus struct {
	api promv1.API
}

// newLivePrometheus connects to the Prometheus at rawURL: through the API server's service
// proxy, authenticated as the kubeconfig user, when it is an in-cluster service; directly
// otherwise.
func newLivePrometheus(rawURL string, cfg *rest.Config) (*livePrometheus, error) {
	u, err := url.Parse(rawURL)
	if err != nil || u.Host == "" {
		return nil, fmt.Errorf("bad Prometheus URL %q", rawURL)
	}
	pc := promapi.Config{Address: rawURL, RoundTripper: http.DefaultTransport}
	if path, ok := serviceProxyPath(u); ok && cfg != nil {
		server, _, err := rest.DefaultServerUrlFor(cfg)
		if err != nil {
			return nil, err
		}
		rt, err := rest.TransportFor(cfg)
		if err != nil {
			return nil, err
		}
		pc = promapi.Config{Address: strings.TrimRight(server.String(), "/") + path, RoundTripper: rt}
	}
	c, err := promapi.NewClient(pc)
	if err != nil {
		return nil, err
	}
	return &livePrometheus{api: promv1.NewAPI(c)}, nil
}

// liveQueries are the PromQL of the live numbers for a test id, over the last liveWindow. The
// warm-up is left out as the report leaves it out. A run without a failed request has no
// expected_response="false" series at all, so the error numerator falls back to 0: no errors
// read 0 %, not n/a.
func liveQueries(testID string) (p95, errorRate, requestRate string) {
	sel := fmt.Sprintf(`testid=%q,scenario!="warm-up"`, testID)
	w := promWindow(liveWindow)
	reqs := fmt.Sprintf(`sum(rate(k6_http_reqs_total{%s}[%s]))`, sel, w)
	p95 = fmt.Sprintf(`histogram_quantile(0.95, sum(rate(k6_http_req_duration_seconds{%s}[%s])))`, sel, w)
	errorRate = fmt.Sprintf(`(sum(rate(k6_http_reqs_total{%s,expected_response="false"}[%s])) or vector(0)) / %s`, sel, w, reqs)
	return p95, errorRate, reqs
}

func promWindow(d time.Duration) string { return strconv.Itoa(int(d.Seconds())) + "s" }

// read asks for the three numbers. A query without an answer leaves its number empty; an
// unreachable Prometheus makes all three n/a with the reason.
func (p *livePrometheus) read(ctx context.Context, testID string, now time.Time) *liveStats {
	ctx, cancel := context.WithTimeout(ctx, liveQueryTimeout)
	defer cancel()
	qp95, qerr, qrate := liveQueries(testID)
	out := &liveStats{}
	for _, q := range []struct {
		query string
		into  **float64
	}{{qp95, &out.P95}, {qerr, &out.ErrorRate}, {qrate, &out.RequestRate}} {
		v, _, err := p.api.Query(ctx, q.query, now)
		if err != nil {
			return &liveStats{Unavailable: "Prometheus: " + shortError(err)}
		}
		*q.into = scalarOf(v)
	}
	return out
}

// scalarOf is the single sample of an instant vector, or nil when there is none or it is NaN
// (no requests in the window).
func scalarOf(v model.Value) *float64 {
	vec, ok := v.(model.Vector)
	if !ok || len(vec) != 1 {
		return nil
	}
	f := float64(vec[0].Value)
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return nil
	}
	return &f
}

// shortError keeps an error's first line, cut to fit a terminal row.
func shortError(err error) string {
	s, _, _ := strings.Cut(err.Error(), "\n")
	if r := []rune(s); len(r) > 80 {
		s = string(r[:77]) + "..."
	}
	return s
}
