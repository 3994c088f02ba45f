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

// As for the inventory the Running phase records.
var _ controllers.InventoryRecorder = &analyzer.PrometheusAnalyzer{}

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
	keys, err := readSnapshotKeys(ctx, mgr.GetAPIReader(), c, opts.LeaseNamespace)
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
			RunnerImages:          opts.runnerImages(),
			RunnerPlacement:       opts.RunnerPlacement,
			DefaultImage:          opts.K6Image,
			PrometheusURLs:        append([]string{opts.PrometheusURL}, opts.AllowedPrometheusURLs...),
			APIReader:             mgr.GetAPIReader(),
			SnapshotKey:           keys.sign,
			PreviousSnapshotKeys:  keys.previous,
		}),
		Load: load.New(c, load.Options{
			K6Image:        opts.K6Image,
			RemoteWriteURL: opts.RemoteWriteURL,
			Tenants:        be.tenants,
			Logs:           load.NewPodLogs(cs),
			APIReader:      mgr.GetAPIReader(),
			Pods: access.RunnerPods{
				ServiceAccount: opts.RunnerServiceAccount, ServiceAccounts: opts.RunnerServiceAccounts,
				Images: opts.runnerImages(), DefaultImage: opts.K6Image, Placement: opts.RunnerPlacement,
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
