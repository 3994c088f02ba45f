package manager

import (
	"maps"
	"slices"
	"testing"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/cache"

	"github.com/perfexp/perfexp/internal/analyzer"
)

// What the manager caches: every namespace by default; with --watch-namespaces only those,
// plus ConfigMaps (only) in a dashboard namespace outside them, where a namespaced install
// holds rights on ConfigMaps alone.
func TestCacheOptions(t *testing.T) {
	tests := []struct {
		name           string
		opts           Options
		wantDefault    []string // nil: every namespace
		wantConfigMaps []string // nil: as the default
	}{
		{name: "cluster-wide", opts: Options{LeaseNamespace: "perfexp-system"}},
		{name: "namespaced", opts: Options{LeaseNamespace: "perfexp-system", WatchNamespaces: []string{"team-a", "team-b"}},
			wantDefault: []string{"team-a", "team-b"}},
		{name: "namespaced, dashboards in Grafana's namespace", opts: Options{LeaseNamespace: "perfexp-system", WatchNamespaces: []string{"team-a"},
			Dashboards: analyzer.GrafanaDashboards{Enabled: true, Namespace: "monitoring"}},
			wantDefault: []string{"team-a"}, wantConfigMaps: []string{"monitoring", "team-a"}},
		{name: "namespaced, dashboards in a watched namespace", opts: Options{LeaseNamespace: "perfexp-system", WatchNamespaces: []string{"team-a"},
			Dashboards: analyzer.GrafanaDashboards{Enabled: true, Namespace: "team-a"}},
			wantDefault: []string{"team-a"}},
		{name: "cluster-wide, dashboards in Grafana's namespace", opts: Options{LeaseNamespace: "perfexp-system",
			Dashboards: analyzer.GrafanaDashboards{Enabled: true, Namespace: "monitoring"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := cacheOptions(tt.opts)
			if ns := slices.Sorted(maps.Keys(got.DefaultNamespaces)); !slices.Equal(ns, tt.wantDefault) {
				t.Errorf("DefaultNamespaces %v, want %v", ns, tt.wantDefault)
			}
			var configMaps []string
			for obj, by := range got.ByObject {
				if _, ok := obj.(*corev1.ConfigMap); ok {
					configMaps = slices.Sorted(maps.Keys(by.Namespaces))
				}
			}
			if !slices.Equal(configMaps, tt.wantConfigMaps) {
				t.Errorf("ConfigMaps cached in %v, want %v", configMaps, tt.wantConfigMaps)
			}
			var leases map[string]cache.Config
			for obj, by := range got.ByObject {
				if _, ok := obj.(*coordinationv1.Lease); ok {
					leases = by.Namespaces
				}
			}
			if _, ok := leases["perfexp-system"]; !ok || len(leases) != 1 {
				t.Errorf("Leases cached in %v, want the lease namespace only", slices.Collect(maps.Keys(leases)))
			}
		})
	}
}
