// Package manager builds and runs the perfexp operator: flags, the controller-runtime manager
// and the wiring of the reconciler's collaborators. cmd/manager only calls Main.
package manager

import (
	"context"
	"crypto/tls"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/prometheus/common/config"
	batchv1 "k8s.io/api/batch/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	"sigs.k8s.io/controller-runtime/pkg/metrics/filters"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/controllers"
	"github.com/perfexp/perfexp/internal/access"
	"github.com/perfexp/perfexp/internal/analyzer"
	"github.com/perfexp/perfexp/internal/backend"
	"github.com/perfexp/perfexp/internal/load"
	"github.com/perfexp/perfexp/internal/queue"
	"github.com/perfexp/perfexp/internal/variant"
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
	fs.Func("allowed-runner-images", "Comma-separated images setup and load pods may run (an entry ending in * matches by prefix; --k6-image is always allowed); empty allows any.", func(s string) error {
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

// operatorNamespaces are the namespaces no experiment may use: where the operator runs and
// keeps its Leases.
func (o *Options) operatorNamespaces() []string {
	out := []string{o.LeaseNamespace}
	if ns := os.Getenv("POD_NAMESPACE"); ns != "" && ns != o.LeaseNamespace {
		out = append(out, ns)
	}
	return out
}

// Scheme holds every kind the operator reads or writes.
func Scheme() *runtime.Scheme {
	s := runtime.NewScheme()
	utilRuntimeMust(clientgoscheme.AddToScheme(s))
	utilRuntimeMust(perfexpv1alpha1.AddToScheme(s))
	return s
}

// Main parses flags, runs the operator until it is signalled, and returns the exit code.
func Main() int {
	var opts Options
	opts.BindFlags(flag.CommandLine)
	zapOpts := zap.Options{}
	zapOpts.BindFlags(flag.CommandLine)
	flag.Parse()
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&zapOpts)))

	if err := Run(ctrl.SetupSignalHandler(), ctrl.GetConfigOrDie(), opts); err != nil {
		ctrl.Log.Error(err, "The operator stopped with an error")
		return 1
	}
	return 0
}

// Run starts the operator with the given options and blocks until ctx ends.
func Run(ctx context.Context, cfg *rest.Config, opts Options) error {
	opts.complete()
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                  Scheme(),
		Metrics:                 metricsOptions(opts),
		HealthProbeBindAddress:  opts.ProbeAddr,
		LeaderElection:          opts.LeaderElection,
		LeaderElectionID:        "perfexp-manager",
		LeaderElectionNamespace: opts.LeaseNamespace,
		Cache:                   cacheOptions(opts),
		Client: client.Options{Cache: &client.CacheOptions{
			// Decisions on queue locks read straight from the API server (queue.Lock.Reader);
			// only the holder a waiting experiment shows comes from the cache.
			DisableFor: []client.Object{&coordinationv1.Lease{}},
		}},
	})
	if err != nil {
		return fmt.Errorf("creating manager: %w", err)
	}
	if err := requirePolicies(ctx, mgr.GetAPIReader(), opts.AdmissionPolicies, policyWait); err != nil {
		return err
	}
	r, err := NewReconciler(mgr, opts)
	if err != nil {
		return err
	}
	if err := r.SetupWithManager(ctx, mgr); err != nil {
		return fmt.Errorf("setting up the PerfExperiment controller: %w", err)
	}
	if recoverer, ok := r.Environment.(controllers.OrphanRecoverer); ok {
		janitor := &controllers.OrphanJanitor{Environment: recoverer, Reader: mgr.GetAPIReader(), Recorder: r.Recorder, Lock: r.Lock, Interval: opts.OrphanInterval, Namespaces: opts.WatchNamespaces}
		if err := mgr.Add(janitor); err != nil {
			return fmt.Errorf("adding the orphan janitor: %w", err)
		}
		// The next experiment to take a queue's lock where an orphan could not be restored
		// says so; the reconciler starts with the manager, below.
		r.Orphans = janitor
	}
	sweeps := &controllers.PerfSweepReconciler{Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), Recorder: mgr.GetEventRecorder("perfexp"), FailOnRegression: opts.FailOnRegression}
	if err := sweeps.SetupWithManager(mgr); err != nil {
		return fmt.Errorf("setting up the PerfSweep controller: %w", err)
	}
	if err := mgr.AddHealthzCheck("healthz", healthz.Ping); err != nil {
		return err
	}
	if err := mgr.AddReadyzCheck("readyz", healthz.Ping); err != nil {
		return err
	}
	ctrl.Log.Info("Started perfexp", "watchNamespaces", opts.WatchNamespaces, "metricsSecure", opts.MetricsSecure, "leaseNamespace", opts.LeaseNamespace, "prometheus", opts.PrometheusURL, "k6Image", opts.K6Image)
	return mgr.Start(ctx)
}

// Leader election records its changes as core Events in the lease namespace (the reconcilers'
// events are events.k8s.io ones).
// +kubebuilder:rbac:groups="",resources=events,verbs=create;patch

// policyWait is how long the operator waits at start for its admission policies: a Helm
// install may create them after the Deployment. It stays below the liveness probe's grace.
const policyWait = 20 * time.Second

// requirePolicies waits up to wait for every admission policy of names to exist and be bound,
// and refuses to start (an error naming each missing one) when they are not: the policies
// check who applies an experiment, and the operator's rules alone do not.
func requirePolicies(ctx context.Context, r client.Reader, names []string, wait time.Duration) error {
	if len(names) == 0 {
		return nil
	}
	deadline := time.Now().Add(wait)
	for {
		problems, err := access.UnboundPolicies(ctx, r, names)
		if err == nil && len(problems) == 0 {
			ctrl.Log.Info("Found the admission policies bound", "policies", names)
			return nil
		}
		if time.Now().After(deadline) {
			if err != nil {
				return fmt.Errorf("checking the admission policies %s: %w", strings.Join(names, ", "), err)
			}
			return fmt.Errorf("refusing to start without the admission policies perfexp relies on (--admission-policies; docs/security.md): %s", strings.Join(problems, "; "))
		}
		ctrl.Log.Info("Waiting for the admission policies", "problems", problems, "error", err)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(2 * time.Second):
		}
	}
}

// cacheOptions says what the manager caches. A namespaced install (--watch-namespaces) caches
// only the watched namespaces, so it lists and watches nothing its RoleBindings do not cover.
func cacheOptions(opts Options) cache.Options {
	o := cache.Options{
		// No reader of the cache needs managedFields (drift reads them from uncached
		// objects); they are a good part of every cached experiment.
		DefaultTransform: cache.TransformStripManagedFields(),
		ByObject: map[client.Object]cache.ByObject{
			// Only the load runner reads Pods and Jobs through the cache, and only its own;
			// without a selector the manager would hold every Pod of the cluster in memory.
			&corev1.Pod{}:  {Label: load.OwnSelector()},
			&batchv1.Job{}: {Label: load.OwnSelector()},
			// Waiting experiments read their queue's Lease from the cache (queue.Lock.Cache):
			// only the operator's own namespace, not every node's heartbeat Lease.
			&coordinationv1.Lease{}: {Namespaces: map[string]cache.Config{opts.LeaseNamespace: {}}},
		},
	}
	if len(opts.WatchNamespaces) == 0 {
		return o
	}
	o.DefaultNamespaces = map[string]cache.Config{}
	for _, ns := range opts.WatchNamespaces {
		o.DefaultNamespaces[ns] = cache.Config{}
	}
	// Dashboard ConfigMaps may go to a namespace of their own (Grafana's), where the operator
	// holds rights on ConfigMaps only: cache ConfigMaps there, and nothing else.
	if ns := opts.Dashboards.Namespace; opts.Dashboards.Enabled && ns != "" {
		if _, watched := o.DefaultNamespaces[ns]; !watched {
			configMaps := map[string]cache.Config{ns: {}}
			for w := range o.DefaultNamespaces {
				configMaps[w] = cache.Config{}
			}
			o.ByObject[&corev1.ConfigMap{}] = cache.ByObject{Namespaces: configMaps}
		}
	}
	return o
}

// metricsOptions configure the metrics endpoint: plain HTTP, or HTTPS with every request
// authenticated and authorized by the API server (controller-runtime's filters).
func metricsOptions(opts Options) metricsserver.Options {
	o := metricsserver.Options{BindAddress: opts.MetricsAddr}
	if !opts.MetricsSecure || opts.MetricsAddr == "0" {
		return o
	}
	o.SecureServing = true
	o.CertDir = opts.MetricsCertDir
	o.FilterProvider = filters.WithAuthenticationAndAuthorization
	// HTTP/1.1 only: HTTP/2's stream resets (CVE-2023-44487, CVE-2023-39325) would let any
	// client that reaches the port load the manager before it is authenticated.
	o.TLSOpts = []func(*tls.Config){func(c *tls.Config) { c.NextProtos = []string{"http/1.1"} }}
	return o
}

// The reconciler finds the analyzer's query check by a type assertion: this fails to compile,
// rather than the check silently stopping, if the analyzer ever stops being a QueryChecker.
var _ controllers.QueryChecker = &analyzer.PrometheusAnalyzer{}

// NewReconciler wires the PerfExperiment reconciler and its collaborators.
func NewReconciler(mgr ctrl.Manager, opts Options) (*controllers.PerfExperimentReconciler, error) {
	c := mgr.GetClient()
	cs, err := kubernetes.NewForConfig(mgr.GetConfig())
	if err != nil {
		return nil, fmt.Errorf("creating clientset: %w", err)
	}
	dashboards := &opts.Dashboards
	dashboards.CAdvisorMatchers = opts.CAdvisorMatchers
	// Without the key the operator still runs experiments; its janitor restores no orphan,
	// since it could not tell perfexp's snapshots from forged ones, and says so on each.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	signingKey, err := snapshotKey(ctx, mgr.GetAPIReader(), c, opts.LeaseNamespace)
	if err != nil {
		ctrl.Log.WithName("setup").Error(err, "Could not read or create the snapshot key; the orphan janitor will restore nothing")
	}
	be, err := opts.backendSettings()
	if err != nil {
		return nil, err
	}
	return &controllers.PerfExperimentReconciler{
		Client:                  c,
		APIReader:               mgr.GetAPIReader(),
		Recorder:                mgr.GetEventRecorder("perfexp"),
		Clock:                   clock.RealClock{},
		Lock:                    &queue.Lock{Client: c, Reader: mgr.GetAPIReader(), Namespace: opts.LeaseNamespace, Clock: clock.RealClock{}},
		MaxConcurrentReconciles: opts.MaxConcurrentReconciles,
		AnalysisWorkers:         opts.AnalysisWorkers,
		AnalysisAttemptTimeout:  opts.AnalysisAttemptTimeout,
		PrometheusURL:           opts.PrometheusURL,
		BaselineArrivalGrace:    opts.BaselineArrivalGrace,
		DefaultOverallTimeout:   opts.DefaultOverallTimeout,
		MaxOverallTimeout:       opts.MaxOverallTimeout,
		Dashboards:              dashboards,
		Environment: variant.New(c, variant.Options{
			AllowedNamespaces:     opts.AllowedNamespaces,
			OperatorNamespaces:    opts.operatorNamespaces(),
			WatchedNamespaces:     opts.WatchNamespaces,
			GenericPatchKinds:     opts.GenericPatchKinds,
			RunnerServiceAccount:  opts.RunnerServiceAccount,
			RunnerServiceAccounts: opts.RunnerServiceAccounts,
			RunnerImages:          opts.RunnerImages,
			RunnerPlacement:       opts.RunnerPlacement,
			DefaultImage:          opts.K6Image,
			PrometheusURLs:        append([]string{opts.PrometheusURL}, opts.AllowedPrometheusURLs...),
			APIReader:             mgr.GetAPIReader(),
			SnapshotKey:           signingKey,
		}),
		Load: load.New(c, load.Options{
			K6Image:        opts.K6Image,
			RemoteWriteURL: opts.RemoteWriteURL,
			Tenants:        be.tenants,
			Logs:           load.NewPodLogs(cs),
			APIReader:      mgr.GetAPIReader(),
			Pods: access.RunnerPods{
				ServiceAccount: opts.RunnerServiceAccount, ServiceAccounts: opts.RunnerServiceAccounts,
				Images: opts.RunnerImages, DefaultImage: opts.K6Image, Placement: opts.RunnerPlacement,
			},
		}),
		Analyzer: &analyzer.PrometheusAnalyzer{
			Client:                 c,
			APIReader:              mgr.GetAPIReader(),
			PrometheusURL:          opts.PrometheusURL,
			HTTPConfig:             be.http,
			Tenants:                be.tenants,
			Clock:                  clock.RealClock{},
			CAdvisorMatchers:       opts.CAdvisorMatchers,
			AllowedPrometheusURLs:  opts.AllowedPrometheusURLs,
			UnboundQueryNamespaces: opts.UnboundQueryNamespaces,
			Timeout:                opts.PrometheusTimeout,
			Dashboards:             dashboards,
			FailOnRegression:       opts.FailOnRegression,
			Access: &access.Rules{
				Reader:             mgr.GetAPIReader(),
				AllowedNamespaces:  opts.AllowedNamespaces,
				OperatorNamespaces: opts.operatorNamespaces(),
				WatchedNamespaces:  opts.WatchNamespaces,
			},
		},
	}, nil
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

func utilRuntimeMust(err error) {
	if err != nil {
		panic(err)
	}
}

// backendSettings are the operator's own ways to its default backend, read once at start: a
// file that does not parse stops the manager rather than sending unauthenticated reads.
type backendSettings struct {
	http    *config.HTTPClientConfig
	tenants backend.Tenants
}

func (o *Options) backendSettings() (backendSettings, error) {
	out := backendSettings{tenants: backend.Tenants{Header: o.PrometheusTenantHeader}}
	if o.PrometheusHTTPConfigFile != "" {
		cfg, err := backend.LoadHTTPConfigFile(o.PrometheusHTTPConfigFile)
		if err != nil {
			return out, err
		}
		out.http = &cfg
	}
	if o.PrometheusTenantsFile != "" {
		m, err := backend.LoadTenantsFile(o.PrometheusTenantsFile)
		if err != nil {
			return out, err
		}
		out.tenants.ByNamespace = m
	}
	return out, nil
}
