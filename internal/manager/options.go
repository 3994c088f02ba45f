package manager

import (
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/perfexp/perfexp/controllers"
	"github.com/perfexp/perfexp/internal/access"
	"github.com/perfexp/perfexp/internal/analyzer"
	"github.com/perfexp/perfexp/internal/backend"
)

// Options configure the operator. Every option has a flag.
type Options struct {
	MetricsAddr string
	// MetricsSecure serves the metrics over HTTPS and lets only callers the API server
	// authenticates (TokenReview) and authorizes (SubjectAccessReview, get on /metrics) read them.
	MetricsSecure bool
	// MetricsCertDir holds tls.crt and tls.key for the metrics endpoint; empty: a self-signed
	// certificate generated at start.
	MetricsCertDir    string
	ProbeAddr         string
	LeaderElection    bool
	LeaseNamespace    string
	AllowedNamespaces []string
	// AdmissionPolicies are the ValidatingAdmissionPolicies (config/policy) the operator
	// refuses to start without, each enforced by a binding; empty checks none.
	AdmissionPolicies []string
	// WatchNamespaces, when not empty, makes a namespaced install: the operator caches and
	// serves experiments only in these namespaces, and experiments may use no other.
	WatchNamespaces []string
	K6Image         string
	PrometheusURL   string
	RemoteWriteURL  string
	// PrometheusHTTPConfigFile is the operator's HTTP client configuration for PrometheusURL
	// (prometheus/common's http_config YAML); empty: no authentication.
	PrometheusHTTPConfigFile string
	// PrometheusTenantsFile maps namespaces to tenants (YAML namespace: tenant), sent in
	// PrometheusTenantHeader with each experiment's reads and remote write.
	PrometheusTenantsFile  string
	PrometheusTenantHeader string
	CAdvisorMatchers       string
	// MaxConcurrentReconciles is how many experiments are reconciled at once.
	MaxConcurrentReconciles int
	// AnalysisWorkers is how many analyses query Prometheus at once, apart from the reconciles.
	AnalysisWorkers int
	// OrphanInterval is how often objects patched for experiments that are gone are looked for.
	OrphanInterval time.Duration
	// AnalysisAttemptTimeout bounds one call into the analysis.
	AnalysisAttemptTimeout time.Duration
	// BaselineArrivalGrace is how long an experiment waits for a baseline that does not exist yet.
	BaselineArrivalGrace time.Duration
	// DefaultOverallTimeout bounds an experiment without spec.timeouts.overall;
	// MaxOverallTimeout is the longest one an experiment may set.
	DefaultOverallTimeout, MaxOverallTimeout time.Duration
	// PrometheusTimeout bounds each request to Prometheus.
	PrometheusTimeout time.Duration
	// Access rules (internal/access, docs/security.md).
	GenericPatchKinds     []string
	AllowedPrometheusURLs []string
	// UnboundQueryNamespaces are the namespaces whose experiments' custom queries may read any
	// namespace's series (analysis.BindQuery).
	UnboundQueryNamespaces []string
	RunnerServiceAccount   string
	RunnerServiceAccounts  []string
	RunnerImages           []string
	RunnerPlacement        access.Placement
	// Dashboards configures the delivery of each run's Grafana dashboard (docs/dashboards.md).
	Dashboards analyzer.GrafanaDashboards
	// FailOnRegression is the default of spec.analysis.failOnRegression.
	FailOnRegression bool
}

// BindFlags registers the options' flags on fs with their defaults.
func (o *Options) BindFlags(fs *flag.FlagSet) {
	fs.StringVar(&o.MetricsAddr, "metrics-bind-address", ":8080", "Address the metrics endpoint binds to; \"0\" disables it.")
	fs.BoolVar(&o.MetricsSecure, "metrics-secure", false, "Serve the metrics over HTTPS, to callers the API server authenticates and authorizes for get on the non-resource URL /metrics (needs create on tokenreviews and subjectaccessreviews); false serves plain HTTP to anyone.")
	fs.StringVar(&o.MetricsCertDir, "metrics-cert-dir", "", "Directory with tls.crt and tls.key for --metrics-secure; empty generates a self-signed certificate at start.")
	fs.StringVar(&o.ProbeAddr, "health-probe-bind-address", ":8081", "Address the health probes bind to.")
	fs.BoolVar(&o.LeaderElection, "leader-elect", false, "Elect a leader so that only one replica reconciles.")
	fs.StringVar(&o.LeaseNamespace, "lease-namespace", envOr("POD_NAMESPACE", "perfexp-system"), "Namespace of the queue locks (Leases) and of the leader-election lock.")
	fs.Func("allowed-namespaces", "Comma-separated namespaces experiments may patch and read without the perfexp.dev/allow-experiments=true label; every other namespace needs the label. kube-system, kube-public, kube-node-lease and the operator's own namespace are refused whatever this says.", func(s string) error {
		o.AllowedNamespaces = splitList(s)
		return nil
	})
	fs.Func("watch-namespaces", "Comma-separated namespaces this operator works in (a namespaced install, RBAC granted by RoleBindings there): it watches experiments, sweeps and their objects only in them, and experiments may patch or read no other namespace; the listed namespaces need no perfexp.dev/allow-experiments label. Empty: every namespace.", func(s string) error {
		o.WatchNamespaces = splitList(s)
		return nil
	})
	fs.Func("admission-policies", "Comma-separated ValidatingAdmissionPolicies (config/policy's, under their installed names) that must exist and be bound with validationActions Deny; the operator refuses to start without them. Empty checks none.", func(s string) error {
		o.AdmissionPolicies = splitList(s)
		return nil
	})
	o.GenericPatchKinds = access.DefaultGenericPatchKinds
	fs.Func("generic-patch-kinds", "Comma-separated kinds (Kind.group, Kind for the core group) spec.variant.patches may target (default "+strings.Join(access.DefaultGenericPatchKinds, ",")+").", func(s string) error {
		o.GenericPatchKinds = splitList(s)
		return nil
	})
	fs.Func("allowed-prometheus-urls", "Comma-separated Prometheus URLs spec.analysis.prometheusURL may name (an entry ending in * matches by prefix); default: only --prometheus-url.", func(s string) error {
		o.AllowedPrometheusURLs = splitList(s)
		return nil
	})
	fs.Func("unbound-query-namespaces", "Comma-separated namespaces whose experiments' custom queries may read the series of any namespace and test id; elsewhere every selector is bound to the target namespace or the run's test id. Name only namespaces whose authors may read everything the Prometheus holds.", func(s string) error {
		o.UnboundQueryNamespaces = splitList(s)
		return nil
	})
	fs.StringVar(&o.RunnerServiceAccount, "runner-service-account", access.DefaultRunnerServiceAccount, "Service account setup, teardown and load pods run as when the experiment names none; perfexp creates it in the experiment's namespace when it is missing, and mounts no token.")
	fs.Func("allowed-runner-service-accounts", "Comma-separated service accounts, besides --runner-service-account, that setup, teardown and load pods may name (an entry ending in * matches by prefix; * allows any); empty allows none.", func(s string) error {
		o.RunnerServiceAccounts = splitList(s)
		return nil
	})
	fs.Func("allowed-runner-tolerations", "Comma-separated tolerations load pods may carry (spec.load.pod.tolerations), each key, key=value, key:Effect or key=value:Effect (no value: any value; no effect: any effect); * allows any. Empty allows none: a toleration lets a pod onto tainted nodes (the control plane, another team's dedicated nodes).", func(s string) error {
		o.RunnerPlacement.Tolerations = splitList(s)
		return nil
	})
	fs.Func("allowed-runner-node-selectors", "Comma-separated node selector terms load pods may use (spec.load.pod.nodeSelector), each key=value, key=* or key; empty allows any (a node selector only narrows where a pod may go; without a toleration it reaches no tainted node).", func(s string) error {
		o.RunnerPlacement.NodeSelectors = splitList(s)
		return nil
	})
	fs.Func("allowed-runner-images", "Comma-separated images setup, teardown and load pods may run besides --k6-image (an entry ending in * matches by prefix; * allows any); empty allows only --k6-image.", func(s string) error {
		o.RunnerImages = splitList(s)
		return nil
	})
	fs.StringVar(&o.K6Image, "k6-image", "grafana/k6:1.8.1", "Default k6 image for load pods.")
	fs.StringVar(&o.PrometheusURL, "prometheus-url", "http://prometheus-operated.monitoring:9090", "Prometheus the analysis queries.")
	fs.StringVar(&o.PrometheusHTTPConfigFile, "prometheus-http-config-file", "", "File with the HTTP client configuration for --prometheus-url, in Prometheus' http_config format (authorization, basic_auth, oauth2, tls_config, http_headers; the *_file forms read mounted Secrets). Used for that URL only; empty: no authentication. See docs/backends.md.")
	fs.StringVar(&o.PrometheusTenantsFile, "prometheus-tenants-file", "", "File mapping experiment namespaces to tenants of a multi-tenant backend (YAML namespace: tenant, a mounted ConfigMap): the tenant is sent in --prometheus-tenant-header with the namespace's reads and remote write. Empty sends none.")
	fs.StringVar(&o.PrometheusTenantHeader, "prometheus-tenant-header", backend.DefaultTenantHeader, "Header that carries the tenant of --prometheus-tenants-file.")
	fs.StringVar(&o.CAdvisorMatchers, "cadvisor-matchers", "", "PromQL label matchers selecting cAdvisor's container series; empty means job=\"kubelet\",metrics_path=\"/metrics/cadvisor\" as kube-prometheus-stack scrapes them.")
	fs.IntVar(&o.MaxConcurrentReconciles, "max-concurrent-reconciles", 4, "How many experiments are reconciled at once, so one slow step (an analysis waiting on Prometheus) never holds back another experiment's restore. At least 1.")
	fs.IntVar(&o.AnalysisWorkers, "analysis-workers", controllers.DefaultAnalysisWorkers, "How many analyses query Prometheus at once. They run apart from the reconcile workers, so a slow or hung Prometheus never delays another experiment's restore or queue admission. At least 1.")
	fs.DurationVar(&o.OrphanInterval, "orphan-interval", controllers.DefaultOrphanInterval, "How often the operator looks for objects still patched for an experiment that no longer exists (its finalizer removed by force) and puts them back from their snapshot; it also looks at start-up.")
	fs.DurationVar(&o.PrometheusTimeout, "prometheus-timeout", analyzer.DefaultPrometheusTimeout, "Time limit of each request to Prometheus; a server that does not answer within it counts as unavailable and the analysis retries later.")
	fs.DurationVar(&o.AnalysisAttemptTimeout, "analysis-attempt-timeout", controllers.DefaultAnalysisAttemptTimeout, "How long one analysis attempt may wait for Prometheus before it gives up and tries again later; spec.timeouts.analysis still ends the analysis.")
	fs.DurationVar(&o.BaselineArrivalGrace, "baseline-arrival-grace", 30*time.Second, "How long an experiment whose spec.baseline does not exist yet waits for it before failing with BaselineNotFound (GitOps tools apply a queue in their own order); 0 fails at once.")
	fs.BoolVar(&o.FailOnRegression, "fail-on-regression", false, "Default of spec.analysis.failOnRegression: a Regressed comparison headline makes an experiment's (and a sweep's) verdict Fail.")
	fs.DurationVar(&o.DefaultOverallTimeout, "default-overall-timeout", controllers.DefaultOverallTimeout, "How long an experiment without spec.timeouts.overall may hold its queue, from leaving it to the end of its load; an experiment whose planned load is longer is refused before it joins the queue.")
	fs.DurationVar(&o.MaxOverallTimeout, "max-overall-timeout", controllers.DefaultMaxOverallTimeout, "The longest spec.timeouts.overall an experiment may set (the API allows up to 720h); longer ones are refused before they join the queue.")
	fs.BoolVar(&o.Dashboards.Enabled, "grafana-dashboards", false, "Write each analysed experiment's Grafana dashboard into a ConfigMap labelled for Grafana's dashboard sidecar.")
	fs.StringVar(&o.Dashboards.Namespace, "grafana-dashboard-namespace", "", "Namespace of the dashboard ConfigMaps; empty means each experiment's own (the sidecar must then search every namespace).")
	fs.Func("grafana-dashboard-label", "The label key=value the Grafana sidecar looks for (its label and labelValue; default grafana_dashboard=1).", func(s string) error {
		k, v, _ := strings.Cut(s, "=")
		if k = strings.TrimSpace(k); k == "" {
			return fmt.Errorf("want key=value, got %q", s)
		}
		o.Dashboards.LabelKey, o.Dashboards.LabelValue = k, strings.TrimSpace(v)
		return nil
	})
	fs.StringVar(&o.Dashboards.FolderAnnotation, "grafana-dashboard-folder-annotation", "", "Annotation the Grafana sidecar reads a dashboard's folder from (its folderAnnotation); empty writes none.")
	fs.StringVar(&o.Dashboards.Folder, "grafana-dashboard-folder", "perfexp", "Folder written in --grafana-dashboard-folder-annotation.")
	fs.StringVar(&o.Dashboards.BaseURL, "grafana-url", "", "Grafana's external URL; status.dashboardURL is <grafana-url>/d/<uid>. Empty leaves status.dashboardURL unset.")
	fs.StringVar(&o.RemoteWriteURL, "remote-write-url", "", "Prometheus remote-write URL k6 pushes samples to; defaults to <prometheus-url>/api/v1/write.")
}

func (o *Options) complete() {
	if o.RemoteWriteURL == "" {
		o.RemoteWriteURL = strings.TrimRight(o.PrometheusURL, "/") + "/api/v1/write"
	}
	if o.GenericPatchKinds == nil {
		o.GenericPatchKinds = access.DefaultGenericPatchKinds
	}
	if o.MaxConcurrentReconciles < 1 {
		o.MaxConcurrentReconciles = 1
	}
	if o.AnalysisWorkers < 1 {
		o.AnalysisWorkers = controllers.DefaultAnalysisWorkers
	}
	if o.AnalysisAttemptTimeout <= 0 {
		o.AnalysisAttemptTimeout = controllers.DefaultAnalysisAttemptTimeout
	}
}

// runnerImages are the images runner pods may run: --allowed-runner-images, or only --k6-image
// (always allowed besides the list) when it is empty. An image is code run in the tenant's
// namespace with whatever the network lets it reach; an allow-list the administrator did not
// write must not mean "any".
func (o *Options) runnerImages() []string {
	if len(o.RunnerImages) == 0 {
		return []string{o.K6Image}
	}
	return o.RunnerImages
}

// operatorNamespaces are the namespaces no experiment may use: where the operator runs and
// keeps its Leases.
func (o *Options) operatorNamespaces() []string {
	out := []string{o.LeaseNamespace}
	if ns := os.Getenv("POD_NAMESPACE"); ns != "" && ns != o.LeaseNamespace {
		out = append(out, ns)
	}
	return out
}
