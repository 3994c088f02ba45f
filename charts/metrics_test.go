package charts_test

import (
	"reflect"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// The ServiceMonitor scrapes the way the manager serves: HTTPS with Prometheus's own token by
// default (skipping verification of the self-signed certificate unless a tlsConfig is given),
// plain HTTP when metrics.secure is false, and always with honorLabels, so the namespace label
// of perfexp_experiment_info is the experiment's, not the operator's (exported_namespace).
func TestServiceMonitorEndpoint(t *testing.T) {
	tests := []struct {
		name   string
		values map[string]any
		want   map[string]any
	}{
		{name: "secure by default", want: map[string]any{
			"port": "metrics", "path": "/metrics", "interval": "30s", "honorLabels": true, "scheme": "https",
			"bearerTokenFile": "/var/run/secrets/kubernetes.io/serviceaccount/token",
			"tlsConfig":       map[string]any{"insecureSkipVerify": true},
		}},
		{name: "a certificate of its own", values: map[string]any{"metrics": map[string]any{
			"certSecret": "perfexp-metrics-tls",
			"serviceMonitor": map[string]any{"tlsConfig": map[string]any{
				"serverName": "perfexp-manager-metrics.perfexp-system.svc",
				"ca":         map[string]any{"secret": map[string]any{"name": "perfexp-metrics-tls", "key": "ca.crt"}},
			}},
		}}, want: map[string]any{
			"port": "metrics", "path": "/metrics", "interval": "30s", "honorLabels": true, "scheme": "https",
			"bearerTokenFile": "/var/run/secrets/kubernetes.io/serviceaccount/token",
			"tlsConfig": map[string]any{
				"serverName": "perfexp-manager-metrics.perfexp-system.svc",
				"ca":         map[string]any{"secret": map[string]any{"name": "perfexp-metrics-tls", "key": "ca.crt"}},
			},
		}},
		{name: "plain HTTP", values: map[string]any{"metrics": map[string]any{"secure": false}}, want: map[string]any{
			"port": "metrics", "path": "/metrics", "interval": "30s", "honorLabels": true,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := render(t, tt.values, monitoringAPI)
			sm := got.find("ServiceMonitor", releaseNamespace, "perfexp-manager")
			if sm == nil {
				t.Fatal("no ServiceMonitor")
			}
			endpoints, _, _ := unstructured.NestedSlice(sm.Object, "spec", "endpoints")
			if len(endpoints) != 1 || !reflect.DeepEqual(endpoints[0], tt.want) {
				t.Errorf("endpoints:\n got  %v\n want %v", endpoints, tt.want)
			}
			args := stringArgs(container(t, got.find("Deployment", releaseNamespace, "perfexp-manager")))
			opts, _ := managerArgs(t, args)
			if secure := tt.want["scheme"] == "https"; opts.MetricsSecure != secure {
				t.Errorf("the ServiceMonitor scrapes https: %v, the manager serves it: %v", secure, opts.MetricsSecure)
			}
		})
	}
}

// The manager's rights for secured metrics follow metrics.secure: the reviews and the reader
// role exist only when the endpoint is secured.
func TestMetricsAuthRBAC(t *testing.T) {
	for _, secure := range []bool{true, false} {
		got := render(t, map[string]any{"metrics": map[string]any{"secure": secure}})
		for _, o := range [][2]string{{"ClusterRole", "perfexp-metrics-auth"}, {"ClusterRoleBinding", "perfexp-metrics-auth"}, {"ClusterRole", "perfexp-metrics-reader"}} {
			if (got.find(o[0], "", o[1]) != nil) != secure {
				t.Errorf("metrics.secure=%v: %s %s rendered: %v", secure, o[0], o[1], !secure)
			}
		}
	}
}
