package analyzer

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/prometheus/client_golang/api"
	promv1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/config"
	"sigs.k8s.io/controller-runtime/pkg/client"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/analysis"
	"github.com/perfexp/perfexp/internal/backend"
	"github.com/perfexp/perfexp/internal/step"
)

// httpConfig is the HTTP client configuration of exp's reads from url: the experiment's own
// credentials when it names some, the operator's when url is the operator's Prometheus, none
// otherwise (the operator's credentials never go to a URL an experiment chose), then the
// tenant header the operator maps to the experiment's namespace. A reference that cannot be
// used is a *backend.RefError.
func (a *PrometheusAnalyzer) httpConfig(ctx context.Context, exp *perfexpv1alpha1.PerfExperiment, url string) (config.HTTPClientConfig, error) {
	cfg := config.DefaultHTTPClientConfig
	var auth *perfexpv1alpha1.PrometheusAuth
	if exp.Spec.Analysis != nil {
		auth = exp.Spec.Analysis.PrometheusAuth
	}
	switch {
	case auth != nil:
		var reader client.Reader = a.Client
		if a.APIReader != nil {
			reader = a.APIReader // Secrets are read past the cache: the manager watches none
		}
		var err error
		if cfg, err = backend.FromSecrets(ctx, reader, exp.Namespace, auth); err != nil {
			return cfg, err
		}
	case a.HTTPConfig != nil && backend.ServerKey(url) == backend.ServerKey(a.PrometheusURL):
		cfg = *a.HTTPConfig
	}
	header, tenant := a.Tenants.For(exp.Namespace)
	if len(a.Tenants.ByNamespace) > 0 && auth != nil {
		for _, h := range auth.Headers {
			if strings.EqualFold(h.Name, header) {
				return cfg, &backend.RefError{Message: "spec.analysis.prometheusAuth.headers sets " + h.Name +
					", the tenant header the operator sets itself from its namespace-to-tenant map; remove it"}
			}
		}
	}
	return backend.WithTenant(cfg, header, tenant), nil
}

// prometheusAPI is the API client for exp's reads from url, or the failure that says why there
// is none.
func (a *PrometheusAnalyzer) prometheusAPI(ctx context.Context, exp *perfexpv1alpha1.PerfExperiment, url string) (promv1.API, *step.Result, error) {
	if a.NewAPI != nil {
		c, err := a.NewAPI(url)
		if err != nil {
			f := step.Fail(perfexpv1alpha1.ReasonNoPrometheus, "Prometheus URL %q: %v", url, err)
			return nil, &f, nil
		}
		return c, nil, nil
	}
	cfg, err := a.httpConfig(ctx, exp, url)
	var ref *backend.RefError
	switch {
	case errors.As(err, &ref):
		f := step.Fail(perfexpv1alpha1.ReasonPrometheusAuthInvalid, "%s", ref.Message)
		return nil, &f, nil
	case err != nil:
		return nil, nil, err
	}
	c, err := a.newAPI(url, cfg)
	if err != nil {
		f := step.Fail(perfexpv1alpha1.ReasonNoPrometheus, "Prometheus URL %q: %v", url, err)
		return nil, &f, nil
	}
	return c, nil, nil
}

func (a *PrometheusAnalyzer) newAPI(url string, cfg config.HTTPClientConfig) (promv1.API, error) {
	timeout := a.Timeout
	if timeout <= 0 {
		timeout = DefaultPrometheusTimeout
	}
	maxBytes := a.MaxAnswerBytes
	if maxBytes <= 0 {
		maxBytes = analysis.DefaultMaxAnswerBytes
	}
	rt, err := backend.RoundTripper(cfg)
	if err != nil {
		return nil, err
	}
	// The client's own timeout covers the whole exchange, reading the body included, which a
	// context deadline set by the caller would too, but every caller would have to remember it.
	transport := analysis.WatchPartial(analysis.LimitAnswers(rt, maxBytes))
	c, err := api.NewClient(api.Config{Address: url, Client: &http.Client{Timeout: timeout, Transport: transport}})
	if err != nil {
		return nil, err
	}
	return promv1.NewAPI(c), nil
}

// probeTimeout bounds the credentials' trial before the run.
const probeTimeout = 10 * time.Second

// probeCredentials asks the backend one trivial query with the experiment's credentials
// before anything is patched, so wrong credentials fail the experiment then and not after its
// load. A backend that does not answer passes: analysis waits for it later.
func probeCredentials(ctx context.Context, promAPI promv1.API, url string) *step.Result {
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	_, _, err := promAPI.Query(ctx, "vector(1)", time.Now())
	if err == nil {
		return nil
	}
	var unauthorized *analysis.UnauthorizedError
	if errors.As(analysis.Classify("vector(1)", err), &unauthorized) {
		f := step.Fail(perfexpv1alpha1.ReasonPrometheusUnauthorized, "the metrics backend at %s refused spec.analysis.prometheusAuth's credentials before the run: %v", url, unauthorized.Err)
		return &f
	}
	return nil
}

func orFailed(f *step.Result) step.Result {
	if f == nil {
		return step.Result{}
	}
	return *f
}
