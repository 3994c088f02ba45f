package charts_test

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/perfexp/perfexp/internal/manager"
)

const (
	releaseName      = "perfexp"
	releaseNamespace = "perfexp-system"
	monitoringAPI    = "monitoring.coreos.com/v1"
)

// root is the repository's root: the tests run in charts/.
func root(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// rendered is the output of one `helm install --dry-run` of the chart.
type rendered struct {
	objects []*unstructured.Unstructured
	hooks   []*unstructured.Unstructured // helm test's objects
	notes   string
}

// find returns the rendered object of that kind, namespace and name, or nil.
func (r rendered) find(kind, namespace, name string) *unstructured.Unstructured {
	for _, o := range r.objects {
		if o.GetKind() == kind && o.GetNamespace() == namespace && o.GetName() == name {
			return o
		}
	}
	return nil
}

func (r rendered) kinds(kind string) []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for _, o := range r.objects {
		if o.GetKind() == kind {
			out = append(out, o)
		}
	}
	return out
}

// render installs the chart client-side with helm's own Go module, as `helm install --dry-run`
// and `helm template --include-crds` do, against a cluster serving apiVersions.
func render(t *testing.T, values map[string]any, apiVersions ...string) rendered {
	t.Helper()
	r, err := renderRelease(t, releaseName, releaseNamespace, values, apiVersions...)
	if err != nil {
		t.Fatalf("rendering the chart: %v", err)
	}
	return r
}

// renderRelease renders the chart as release name in namespace; the error is helm's (a value
// the schema refuses, a template's fail).
func renderRelease(t *testing.T, name, namespace string, values map[string]any, apiVersions ...string) (rendered, error) {
	t.Helper()
	chrt, err := loader.Load(filepath.Join(root(t), "charts", "perfexp"))
	if err != nil {
		t.Fatalf("loading the chart: %v", err)
	}
	install := action.NewInstall(&action.Configuration{Log: func(string, ...any) {}})
	install.DryRun = true
	install.ClientOnly = true
	install.IncludeCRDs = true
	install.ReleaseName = name
	install.Namespace = namespace
	install.KubeVersion = &chartutil.KubeVersion{Version: "v1.36.3", Major: "1", Minor: "36"}
	install.APIVersions = chartutil.VersionSet(apiVersions)
	rel, err := install.Run(chrt, values)
	if err != nil {
		return rendered{}, err
	}
	r := rendered{objects: decodeAll(t, rel.Manifest), notes: rel.Info.Notes}
	for _, h := range rel.Hooks {
		r.hooks = append(r.hooks, decodeAll(t, h.Manifest)...)
	}
	return r, nil
}

// decodeAll reads a multi-document YAML stream; empty documents (comments only) are skipped.
func decodeAll(t *testing.T, stream string) []*unstructured.Unstructured {
	t.Helper()
	var out []*unstructured.Unstructured
	for _, doc := range regexp.MustCompile(`(?m)^---\s*$`).Split(stream, -1) {
		obj := map[string]any{}
		if err := yaml.Unmarshal([]byte(doc), &obj); err != nil {
			t.Fatalf("decoding %q: %v", doc, err)
		}
		if len(obj) == 0 {
			continue
		}
		out = append(out, &unstructured.Unstructured{Object: obj})
	}
	return out
}

// configObjects reads the objects of files under config/.
func configObjects(t *testing.T, files ...string) rendered {
	t.Helper()
	var r rendered
	for _, f := range files {
		data, err := os.ReadFile(filepath.Join(root(t), "config", f))
		if err != nil {
			t.Fatal(err)
		}
		r.objects = append(r.objects, decodeAll(t, string(data))...)
	}
	return r
}

// The chart's copies of config/'s generated and hand-written files are the same bytes, so
// `make helm-sync` was run after the last change (to a CRD, an RBAC marker, a policy).
func TestChartCopiesMatchConfig(t *testing.T) {
	tests := []struct {
		name, from, to string
	}{
		{name: "CRDs", from: "config/crd/bases", to: "charts/perfexp/crds"},
		{name: "RBAC", from: "config/rbac", to: "charts/perfexp/files/rbac"},
		{name: "admission policies", from: "config/policy", to: "charts/perfexp/files/policy"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			copies, err := filepath.Glob(filepath.Join(root(t), tt.to, "*.yaml"))
			if err != nil || len(copies) == 0 {
				t.Fatalf("no copies in %s (%v)", tt.to, err)
			}
			for _, c := range copies {
				want, err := os.ReadFile(filepath.Join(root(t), tt.from, filepath.Base(c)))
				if err != nil {
					t.Fatalf("%s has no original in %s: %v", filepath.Base(c), tt.from, err)
				}
				got, _ := os.ReadFile(c)
				if !bytes.Equal(got, want) {
					t.Errorf("%s differs from %s: run `make helm-sync`", c, filepath.Join(tt.from, filepath.Base(c)))
				}
			}
			if tt.name == "CRDs" {
				bases, _ := filepath.Glob(filepath.Join(root(t), tt.from, "*.yaml"))
				if len(bases) != len(copies) {
					t.Errorf("%d CRDs in %s, %d in the chart: run `make helm-sync`", len(bases), tt.from, len(copies))
				}
			}
		})
	}
}

// The helm binary `make helm` builds is the module version the tests render with.
func TestHelmVersionIsPinnedOnce(t *testing.T) {
	gomod, err := os.ReadFile(filepath.Join(root(t), "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	mk, err := os.ReadFile(filepath.Join(root(t), "hack", "make", "helm.mk"))
	if err != nil {
		t.Fatal(err)
	}
	inGoMod := regexp.MustCompile(`helm\.sh/helm/v3 (v\S+)`).FindSubmatch(gomod)
	inMake := regexp.MustCompile(`(?m)^HELM_VERSION \?= (v\S+)`).FindSubmatch(mk)
	if inGoMod == nil || inMake == nil || string(inGoMod[1]) != string(inMake[1]) {
		t.Fatalf("helm in go.mod %q, in hack/make/helm.mk %q: keep them equal", inGoMod, inMake)
	}
}

// managerArgs parses a container's args with the manager's own flags, so a value spelled
// differently but meaning the same compares equal, and a flag the manager does not know fails.
func managerArgs(t *testing.T, args []string) (manager.Options, map[string]bool) {
	t.Helper()
	var o manager.Options
	fs := flag.NewFlagSet("manager", flag.ContinueOnError)
	o.BindFlags(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatalf("the manager refuses args %q: %v", args, err)
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	return o, set
}

func container(t *testing.T, deploy *unstructured.Unstructured) map[string]any {
	t.Helper()
	if deploy == nil {
		t.Fatal("no manager Deployment")
	}
	cs, _, _ := unstructured.NestedSlice(deploy.Object, "spec", "template", "spec", "containers")
	if len(cs) != 1 {
		t.Fatalf("want one container, got %d", len(cs))
	}
	return cs[0].(map[string]any)
}

func stringArgs(c map[string]any) []string {
	var out []string
	for _, a := range c["args"].([]any) {
		out = append(out, a.(string))
	}
	return out
}

// With default values the chart installs what config/default installs: the same CRDs,
// ClusterRoles, policies, bindings and manager settings.
func TestChartAgreesWithConfigDefault(t *testing.T) {
	got := render(t, nil)
	want := configObjects(t, "crd/bases/perfexp.dev_perfexperiments.yaml", "crd/bases/perfexp.dev_perfsweeps.yaml",
		"rbac/role.yaml", "rbac/environment_patch_role.yaml", "rbac/role_binding.yaml", "serviceaccount/service_account.yaml",
		"rbac/cluster-wide/cluster_role_binding.yaml", "rbac/metrics_auth_role.yaml", "rbac/metrics_auth_role_binding.yaml", "rbac/metrics_reader_role.yaml",
		"rbac/snapshot_key_role.yaml", "policy/no_escalation.yaml", "policy/spec_frozen.yaml", "manager/manager.yaml")

	for _, w := range want.objects {
		if w.GetKind() == "Namespace" || w.GetKind() == "Deployment" {
			continue // the release namespace is helm's; the Deployment is compared below
		}
		g := got.find(w.GetKind(), w.GetNamespace(), w.GetName())
		if g == nil {
			t.Errorf("the chart has no %s %s/%s", w.GetKind(), w.GetNamespace(), w.GetName())
			continue
		}
		for _, field := range []string{"spec", "rules", "roleRef", "subjects"} {
			if !reflect.DeepEqual(g.Object[field], w.Object[field]) {
				t.Errorf("%s %s: %s differs from config/:\n chart:  %v\n config: %v", w.GetKind(), w.GetName(), field, g.Object[field], w.Object[field])
			}
		}
	}
	for _, rb := range got.kinds("RoleBinding") {
		if rb.GetName() != "perfexp-snapshot-key" || rb.GetNamespace() != releaseNamespace {
			t.Errorf("cluster-wide RBAC rendered RoleBinding %s/%s too (only the snapshot key's, in the release's namespace)", rb.GetNamespace(), rb.GetName())
		}
	}

	gc := container(t, got.find("Deployment", releaseNamespace, "perfexp-manager"))
	wc := container(t, want.find("Deployment", releaseNamespace, "perfexp-manager"))
	gotOpts, _ := managerArgs(t, stringArgs(gc))
	wantOpts, _ := managerArgs(t, stringArgs(wc))
	// The lease namespace defaults to $POD_NAMESPACE, which both set from the pod's namespace.
	gotOpts.LeaseNamespace, wantOpts.LeaseNamespace = "", ""
	if !reflect.DeepEqual(gotOpts, wantOpts) {
		t.Errorf("manager options differ:\n chart:  %+v\n config: %+v", gotOpts, wantOpts)
	}
	// Both ship an allow-list of runner images (the official k6 images): the manager alone,
	// without the flag, allows only --k6-image.
	if !reflect.DeepEqual(gotOpts.RunnerImages, []string{"grafana/k6:*"}) {
		t.Errorf("default runner images %q, want [grafana/k6:*]", gotOpts.RunnerImages)
	}
	// The chart leaves the UID to the image (65532) or the platform (OpenShift's restricted-v2
	// assigns one from the namespace's range); config/manager states it.
	delete(wc["securityContext"].(map[string]any), "runAsUser")
	for _, field := range []string{"env", "securityContext", "resources"} {
		if !reflect.DeepEqual(gc[field], wc[field]) {
			t.Errorf("manager container %s differs:\n chart:  %v\n config: %v", field, gc[field], wc[field])
		}
	}
	if got.find("ServiceMonitor", releaseNamespace, "perfexp-manager") != nil {
		t.Error("a ServiceMonitor was rendered for a cluster without prometheus-operator")
	}
}

// Every flag the manager binds has a value in the chart: with each value set away from its
// default, each flag appears in the Deployment's args and means what the value says. A new
// flag without a value fails here.
func TestEveryManagerFlagHasAValue(t *testing.T) {
	all := flag.NewFlagSet("manager", flag.ContinueOnError)
	(&manager.Options{}).BindFlags(all)

	values := map[string]any{
		"leaderElection": true, "leaseNamespace": "perf-ops",
		"prometheusURL": "http://thanos:9090", "remoteWriteURL": "http://prometheus:9090/api/v1/write",
		"cadvisorMatchers": `job="cadvisor"`, "k6Image": "registry.example.com/k6:1",
		"access": map[string]any{
			"allowedNamespaces": []any{"library", "shop"}, "genericPatchKinds": []any{"ConfigMap"},
			"allowedPrometheusURLs": []any{"http://thanos:9090/*"}, "unboundQueryNamespaces": []any{"platform-perf"}, "allowedRunnerServiceAccounts": []any{"k6"},
			"allowedRunnerImages": []any{"grafana/k6:*"}, "runnerServiceAccount": "perf-runner",
			"allowedRunnerTolerations": []any{"dedicated=loadgen:NoSchedule"}, "allowedRunnerNodeSelectors": []any{"pool=loadgen"},
		},
		"metrics": map[string]any{"port": 9090, "secure": true, "certSecret": "perfexp-metrics-tls"}, "healthProbePort": 9091,
		"scope": "namespaced", "watchNamespaces": []any{"library", "shop"},
	}
	want := []string{"--metrics-bind-address=:9090", "--metrics-secure", "--metrics-cert-dir=/etc/perfexp/metrics-certs",
		"--watch-namespaces=library,shop", "--health-probe-bind-address=:9091", "--admission-policies=perfexp-no-escalation,perfexp-spec-frozen", "--leader-elect", "--lease-namespace=perf-ops",
		"--allowed-namespaces=library,shop", "--k6-image=registry.example.com/k6:1", "--prometheus-url=http://thanos:9090",
		"--remote-write-url=http://prometheus:9090/api/v1/write", `--cadvisor-matchers=job="cadvisor"`,
		"--generic-patch-kinds=ConfigMap", "--allowed-prometheus-urls=http://thanos:9090/*", "--unbound-query-namespaces=platform-perf",
		"--allowed-runner-service-accounts=k6", "--allowed-runner-images=grafana/k6:*", "--runner-service-account=perf-runner",
		"--allowed-runner-tolerations=dedicated=loadgen:NoSchedule", "--allowed-runner-node-selectors=pool=loadgen"}
	// Flags newer than some operators: their values render only when set, so they are set
	// here only when this operator has them.
	for _, f := range []struct{ flag, value, arg string }{
		{flag: "max-concurrent-reconciles", value: "maxConcurrentReconciles", arg: "7"},
		{flag: "analysis-attempt-timeout", value: "analysisAttemptTimeout", arg: "45s"},
		{flag: "analysis-workers", value: "analysisWorkers", arg: "6"},
		{flag: "orphan-interval", value: "orphanInterval", arg: "10m"},
		{flag: "prometheus-timeout", value: "prometheusTimeout", arg: "30s"},
		{flag: "baseline-arrival-grace", value: "baselineArrivalGrace", arg: "1m"},
		{flag: "default-overall-timeout", value: "defaultOverallTimeout", arg: "12h"},
		{flag: "max-overall-timeout", value: "maxOverallTimeout", arg: "72h"},
	} {
		if all.Lookup(f.flag) != nil {
			values[f.value] = f.arg
			want = append(want, "--"+f.flag+"="+f.arg)
		}
	}
	if all.Lookup("prometheus-http-config-file") != nil {
		values["prometheusAuth"] = map[string]any{"httpConfigSecret": "thanos-auth", "tenants": map[string]any{"shop": "team-shop"}, "tenantHeader": "THANOS-TENANT"}
		want = append(want, "--prometheus-http-config-file=/etc/perfexp/prometheus/http.yaml",
			"--prometheus-tenants-file=/etc/perfexp/tenants/tenants.yaml", "--prometheus-tenant-header=THANOS-TENANT")
	}
	if all.Lookup("fail-on-regression") != nil {
		values["failOnRegression"] = true
		want = append(want, "--fail-on-regression")
	}

	values["grafana"] = map[string]any{"url": "https://grafana.example.com", "dashboards": map[string]any{
		"enabled": true, "namespace": "monitoring", "label": "team_dashboard", "labelValue": "perf",
		"folderAnnotation": "grafana_folder", "folder": "Performance"}}
	want = append(want, "--grafana-dashboards", "--grafana-dashboard-namespace=monitoring", "--grafana-dashboard-label=team_dashboard=perf",
		"--grafana-dashboard-folder-annotation=grafana_folder", "--grafana-dashboard-folder=Performance", "--grafana-url=https://grafana.example.com")

	c := container(t, render(t, values).find("Deployment", releaseNamespace, "perfexp-manager"))
	got, set := managerArgs(t, stringArgs(c))
	all.VisitAll(func(f *flag.Flag) {
		if !set[f.Name] {
			t.Errorf("manager flag --%s has no chart value (values.yaml, templates/deployment.yaml)", f.Name)
		}
	})
	wantOpts, _ := managerArgs(t, want)
	if !reflect.DeepEqual(got, wantOpts) {
		t.Errorf("options from the chart's args:\n got  %+v\n want %+v", got, wantOpts)
	}
}

// The patch ClusterRole is bound cluster-wide or once per listed namespace, as the kustomize
// components config/rbac/cluster-wide and config/rbac/namespaced do.
func TestEnvironmentPatchBinding(t *testing.T) {
	namespaced := configObjects(t, "rbac/namespaced/role_binding.yaml").objects[0]
	tests := []struct {
		name             string
		values           map[string]any
		wantClusterWide  bool
		wantRoleBindings []string
		wantNotes        string
	}{
		{name: "cluster-wide by default", wantClusterWide: true, wantNotes: "in every namespace that opts in"},
		{name: "per namespace", values: map[string]any{"rbac": map[string]any{"environmentPatch": map[string]any{
			"clusterWide": false, "namespaces": []any{"library", "perfexp-demo"}}}},
			wantRoleBindings: []string{"library", "perfexp-demo"}, wantNotes: "only in: library, perfexp-demo"},
		{name: "per namespace, none yet", values: map[string]any{"rbac": map[string]any{"environmentPatch": map[string]any{
			"clusterWide": false}}}, wantNotes: "no namespace yet"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := render(t, tt.values)
			if crb := got.find("ClusterRoleBinding", "", "perfexp-environment-patch"); (crb != nil) != tt.wantClusterWide {
				t.Errorf("cluster-wide binding rendered: %v, want %v", crb != nil, tt.wantClusterWide)
			}
			var namespaces []string
			for _, rb := range got.kinds("RoleBinding") {
				if rb.GetName() == "perfexp-snapshot-key" {
					continue // the snapshot key's Role, in the release's namespace: TestChartAgreesWithConfigDefault
				}
				namespaces = append(namespaces, rb.GetNamespace())
				for _, field := range []string{"roleRef", "subjects"} {
					if !reflect.DeepEqual(rb.Object[field], namespaced.Object[field]) {
						t.Errorf("RoleBinding in %s: %s %v, config/rbac/namespaced has %v", rb.GetNamespace(), field, rb.Object[field], namespaced.Object[field])
					}
				}
			}
			sort.Strings(namespaces)
			if !slices.Equal(namespaces, tt.wantRoleBindings) {
				t.Errorf("RoleBindings in %v, want %v", namespaces, tt.wantRoleBindings)
			}
			if !strings.Contains(got.notes, tt.wantNotes) {
				t.Errorf("NOTES.txt does not say %q:\n%s", tt.wantNotes, got.notes)
			}
		})
	}
}

// The ServiceMonitor follows the cluster's APIs unless forced, and never exists without a
// metrics endpoint.
func TestServiceMonitor(t *testing.T) {
	tests := []struct {
		name        string
		values      map[string]any
		apiVersions []string
		want        bool
	}{
		{name: "auto without prometheus-operator"},
		{name: "auto with prometheus-operator", apiVersions: []string{monitoringAPI}, want: true},
		{name: "forced on", values: map[string]any{"metrics": map[string]any{"serviceMonitor": map[string]any{"enabled": true}}}, want: true},
		{name: "forced off", values: map[string]any{"metrics": map[string]any{"serviceMonitor": map[string]any{"enabled": false}}}, apiVersions: []string{monitoringAPI}},
		{name: "metrics disabled", values: map[string]any{"metrics": map[string]any{"port": 0}}, apiVersions: []string{monitoringAPI}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := render(t, tt.values, tt.apiVersions...)
			sm := got.find("ServiceMonitor", releaseNamespace, "perfexp-manager")
			if (sm != nil) != tt.want {
				t.Fatalf("ServiceMonitor rendered: %v, want %v", sm != nil, tt.want)
			}
			if sm == nil {
				return
			}
			svc := got.find("Service", releaseNamespace, "perfexp-manager-metrics")
			if svc == nil {
				t.Fatal("ServiceMonitor without the metrics Service")
			}
			selector, _, _ := unstructured.NestedStringMap(sm.Object, "spec", "selector", "matchLabels")
			for k, v := range selector {
				if svc.GetLabels()[k] != v {
					t.Errorf("the ServiceMonitor selects %s=%s; the Service has %q", k, v, svc.GetLabels()[k])
				}
			}
		})
	}
}
