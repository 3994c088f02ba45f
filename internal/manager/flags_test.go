package manager

import (
	"flag"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/perfexp/perfexp/internal/access"
)

// The access flags: deny by default, lists parsed as comma-separated values.
func TestAccessFlags(t *testing.T) {
	tests := []struct {
		name  string
		args  []string
		check func(t *testing.T, o Options)
	}{
		{name: "defaults", check: func(t *testing.T, o Options) {
			if !slices.Equal(o.GenericPatchKinds, access.DefaultGenericPatchKinds) || len(o.AllowedNamespaces) != 0 ||
				len(o.AllowedPrometheusURLs) != 0 || len(o.RunnerImages) != 0 || len(o.RunnerServiceAccounts) != 0 {
				t.Fatalf("defaults: %+v", o)
			}
		}},
		{name: "lists", args: []string{"--generic-patch-kinds=ConfigMap, Kafka.kafka.strimzi.io", "--allowed-namespaces=perf,library",
			"--allowed-prometheus-urls=http://thanos:9090/*", "--allowed-runner-images=grafana/k6:*", "--allowed-runner-service-accounts=k6"},
			check: func(t *testing.T, o Options) {
				if !slices.Equal(o.GenericPatchKinds, []string{"ConfigMap", "Kafka.kafka.strimzi.io"}) || !slices.Equal(o.AllowedNamespaces, []string{"perf", "library"}) ||
					!slices.Equal(o.AllowedPrometheusURLs, []string{"http://thanos:9090/*"}) || !slices.Equal(o.RunnerImages, []string{"grafana/k6:*"}) ||
					!slices.Equal(o.RunnerServiceAccounts, []string{"k6"}) {
					t.Fatalf("parsed: %+v", o)
				}
			}},
		{name: "the operator's namespaces", args: []string{"--lease-namespace=perf-ops"}, check: func(t *testing.T, o Options) {
			t.Setenv("POD_NAMESPACE", "perfexp-system")
			if got := o.operatorNamespaces(); !slices.Equal(got, []string{"perf-ops", "perfexp-system"}) {
				t.Fatalf("operator namespaces %v", got)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var o Options
			fs := flag.NewFlagSet("test", flag.ContinueOnError)
			o.BindFlags(fs)
			if err := fs.Parse(tt.args); err != nil {
				t.Fatal(err)
			}
			o.complete()
			tt.check(t, o)
		})
	}
}

// The reliability flags: several workers and a bounded analysis attempt by default; values
// that would stop the operator (no worker, no time) fall back to safe ones.
func TestReliabilityFlags(t *testing.T) {
	tests := []struct {
		name        string
		args        []string
		wantWorkers int
		wantAttempt time.Duration
	}{
		{name: "defaults", wantWorkers: 4, wantAttempt: 2 * time.Minute},
		{name: "set", args: []string{"--max-concurrent-reconciles=8", "--analysis-attempt-timeout=45s"}, wantWorkers: 8, wantAttempt: 45 * time.Second},
		{name: "no worker means one", args: []string{"--max-concurrent-reconciles=0", "--analysis-attempt-timeout=0s"}, wantWorkers: 1, wantAttempt: 2 * time.Minute},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var o Options
			fs := flag.NewFlagSet("test", flag.ContinueOnError)
			o.BindFlags(fs)
			if err := fs.Parse(tt.args); err != nil {
				t.Fatal(err)
			}
			o.complete()
			if o.MaxConcurrentReconciles != tt.wantWorkers || o.AnalysisAttemptTimeout != tt.wantAttempt {
				t.Errorf("workers %d, attempt timeout %s; want %d, %s", o.MaxConcurrentReconciles, o.AnalysisAttemptTimeout, tt.wantWorkers, tt.wantAttempt)
			}
		})
	}
}

// Runner images: with --allowed-runner-images unset, runner pods run only --k6-image (before,
// any image); a list allows its entries besides --k6-image; "*" allows any.
func TestRunnerImagesFlag(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		allowed []string
		refused []string
	}{
		{name: "unset: only the operator's k6", args: []string{"--k6-image=grafana/k6:1.8.1"},
			allowed: []string{"grafana/k6:1.8.1", ""}, refused: []string{"evil.example.com/miner:1", "grafana/k6:latest", "busybox"}},
		{name: "a list", args: []string{"--k6-image=grafana/k6:1.8.1", "--allowed-runner-images=registry.example.com/perf/*,perfexp/datagen:1"},
			allowed: []string{"grafana/k6:1.8.1", "registry.example.com/perf/seed:2", "perfexp/datagen:1"},
			refused: []string{"perfexp/datagen:2", "registry.example.com/other/x:1", "evil.example.com/miner:1"}},
		{name: "any", args: []string{"--allowed-runner-images=*"}, allowed: []string{"evil.example.com/miner:1", "busybox"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var o Options
			fs := flag.NewFlagSet("test", flag.ContinueOnError)
			o.BindFlags(fs)
			if err := fs.Parse(tt.args); err != nil {
				t.Fatal(err)
			}
			o.complete()
			pods := access.RunnerPods{Images: o.runnerImages(), DefaultImage: o.K6Image}
			for _, img := range tt.allowed {
				if ref := pods.Check("the load's pods", access.DefaultRunnerServiceAccount, img); ref != nil {
					t.Errorf("image %q refused: %s", img, ref.Message)
				}
			}
			for _, img := range tt.refused {
				ref := pods.Check("the setup Job", access.DefaultRunnerServiceAccount, img)
				if ref == nil {
					t.Errorf("image %q allowed", img)
					continue
				}
				if !strings.Contains(ref.Message, "the setup Job may not run image "+img+"; allowed: ") || !strings.Contains(ref.Message, "--allowed-runner-images") {
					t.Errorf("image %q: message %q", img, ref.Message)
				}
			}
		})
	}
}
