package charts_test

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/chart/loader"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// commonLabels go on every object the release renders (the CRDs excepted: helm installs crds/
// as they are), cluster-scoped ones and the pod template included, in each part of a split.
func TestCommonLabels(t *testing.T) {
	for _, part := range []string{"all", "cluster", "namespace"} {
		t.Run(part, func(t *testing.T) {
			got := render(t, set(t, "commonLabels.team=perf", "commonLabels.cost-center=cc-4711",
				"installPart="+part, "fullnameOverride=perfexp", "metrics.secure=false"), monitoringAPI)
			n := 0
			for _, o := range append(got.objects, got.hooks...) {
				if o.GetKind() == "CustomResourceDefinition" {
					continue
				}
				n++
				if l := o.GetLabels(); l["team"] != "perf" || l["cost-center"] != "cc-4711" {
					t.Errorf("%s %s has labels %v, without the common ones", o.GetKind(), o.GetName(), l)
				}
			}
			if n < 3 {
				t.Fatalf("only %d objects rendered", n)
			}
			if d := got.find("Deployment", releaseNamespace, "perfexp-manager"); d != nil {
				l, _, _ := unstructured.NestedStringMap(d.Object, "spec", "template", "metadata", "labels")
				if l["team"] != "perf" {
					t.Errorf("the manager pods' labels %v lack the common ones", l)
				}
				sel, _, _ := unstructured.NestedStringMap(d.Object, "spec", "selector", "matchLabels")
				if _, ok := sel["team"]; ok {
					t.Errorf("the Deployment's selector %v took a common label: it could never change again", sel)
				}
			}
		})
	}
}

// global.imageRegistry goes in front of every image perfexp runs, the load pods' included,
// and leaves an image that names its own registry alone.
func TestGlobalImageRegistry(t *testing.T) {
	tag := chartAppVersion(t)
	tests := []struct {
		name                    string
		set                     []string
		wantManager, wantK6Flag string
	}{
		{name: "none", wantManager: "perfexp/manager:" + tag, wantK6Flag: "grafana/k6:1.8.1"},
		{name: "a mirror", set: []string{"global.imageRegistry=mirror.example.com:5000/hub"},
			wantManager: "mirror.example.com:5000/hub/perfexp/manager:" + tag, wantK6Flag: "mirror.example.com:5000/hub/grafana/k6:1.8.1"},
		{name: "images that name a registry stay", set: []string{"global.imageRegistry=mirror.example.com",
			"image.repository=ghcr.io/perfexp/manager", "image.tag=v0.4.0", "k6Image=localhost:5000/k6:1"},
			wantManager: "ghcr.io/perfexp/manager:v0.4.0", wantK6Flag: "localhost:5000/k6:1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := render(t, set(t, tt.set...))
			c := container(t, got.find("Deployment", releaseNamespace, "perfexp-manager"))
			if c["image"] != tt.wantManager {
				t.Errorf("manager image %v, want %s", c["image"], tt.wantManager)
			}
			opts, _ := managerArgs(t, stringArgs(c))
			if opts.K6Image != tt.wantK6Flag {
				t.Errorf("--k6-image=%s, want %s", opts.K6Image, tt.wantK6Flag)
			}
			pod := findIn(got.hooks, "Pod")
			containers, _, _ := unstructured.NestedSlice(pod.Object, "spec", "containers")
			if img := containers[0].(map[string]any)["image"]; img != tt.wantK6Flag {
				t.Errorf("helm test image %v, want %s", img, tt.wantK6Flag)
			}
		})
	}
}

// extraEnv, extraEnvFrom, extraVolumes and extraVolumeMounts reach the manager beside the
// chart's own (POD_NAMESPACE, the metrics certificate).
func TestExtraEnvAndVolumes(t *testing.T) {
	got := render(t, set(t, "extraEnv[0].name=HTTPS_PROXY", "extraEnv[0].value=http://proxy:3128",
		"extraEnv[1].name=GOMEMLIMIT", "extraEnv[1].valueFrom.resourceFieldRef.resource=limits.memory",
		"extraEnvFrom[0].secretRef.name=perfexp-env",
		"extraVolumes[0].name=ca", "extraVolumes[0].configMap.name=corp-ca",
		"extraVolumeMounts[0].name=ca", "extraVolumeMounts[0].mountPath=/etc/ssl/corp",
		"metrics.certSecret=perfexp-metrics-tls"))
	d := got.find("Deployment", releaseNamespace, "perfexp-manager")
	c := container(t, d)
	var env []string
	for _, e := range c["env"].([]any) {
		env = append(env, e.(map[string]any)["name"].(string))
	}
	if !slices.Equal(env, []string{"POD_NAMESPACE", "HTTPS_PROXY", "GOMEMLIMIT"}) {
		t.Errorf("env %v", env)
	}
	if from, _ := c["envFrom"].([]any); len(from) != 1 {
		t.Errorf("envFrom %v", c["envFrom"])
	}
	var mounts []string
	for _, m := range c["volumeMounts"].([]any) {
		mounts = append(mounts, m.(map[string]any)["name"].(string))
	}
	vols, _, _ := unstructured.NestedSlice(d.Object, "spec", "template", "spec", "volumes")
	var volNames []string
	for _, v := range vols {
		volNames = append(volNames, v.(map[string]any)["name"].(string))
	}
	if !slices.Equal(mounts, []string{"metrics-certs", "ca"}) || !slices.Equal(volNames, []string{"metrics-certs", "ca"}) {
		t.Errorf("mounts %v, volumes %v; want metrics-certs and ca in both", mounts, volNames)
	}
	plain := container(t, render(t, set(t, "extraVolumes[0].name=ca", "extraVolumes[0].emptyDir.medium=Memory",
		"extraVolumeMounts[0].name=ca", "extraVolumeMounts[0].mountPath=/ca")).find("Deployment", releaseNamespace, "perfexp-manager"))
	if m, _ := plain["volumeMounts"].([]any); len(m) != 1 {
		t.Errorf("without a metrics certificate the mounts are %v, want ca only", plain["volumeMounts"])
	}
}

// extraObjects render, maps and strings alike, through tpl.
func TestExtraObjects(t *testing.T) {
	values := map[string]any{"fullnameOverride": "perf", "extraObjects": []any{
		map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": `{{ include "perfexp.fullname" . }}-ca`, "namespace": "{{ .Release.Namespace }}"},
			"data":     map[string]any{"ca.crt": "pem"}},
		"apiVersion: v1\nkind: Secret\nmetadata:\n  name: {{ .Release.Name }}-prometheus\n  namespace: {{ .Release.Namespace }}\nstringData:\n  token: t\n",
	}}
	got := render(t, values)
	if got.find("ConfigMap", releaseNamespace, "perf-ca") == nil {
		t.Error("the map object did not render as ConfigMap perf-ca")
	}
	if got.find("Secret", releaseNamespace, "perfexp-prometheus") == nil {
		t.Error("the string object did not render as Secret perfexp-prometheus")
	}
}

// The scrape's knobs: scrapeTimeout and both relabelings on the ServiceMonitor; a PodMonitor in
// its place that keeps the job label the alerts select, and that refuses secured metrics
// without credentials of its own.
func TestScrapeKnobs(t *testing.T) {
	knobs := []string{"metrics.serviceMonitor.scrapeTimeout=10s",
		"metrics.serviceMonitor.relabelings[0].targetLabel=cluster", "metrics.serviceMonitor.relabelings[0].replacement=eu-1",
		"metrics.serviceMonitor.metricRelabelings[0].action=drop", "metrics.serviceMonitor.metricRelabelings[0].regex=go_gc_.*",
		"metrics.serviceMonitor.metricRelabelings[0].sourceLabels[0]=__name__"}
	t.Run("ServiceMonitor", func(t *testing.T) {
		sm := render(t, set(t, knobs...), monitoringAPI).find("ServiceMonitor", releaseNamespace, "perfexp-manager")
		ep, _, _ := unstructured.NestedSlice(sm.Object, "spec", "endpoints")
		e := ep[0].(map[string]any)
		if e["scrapeTimeout"] != "10s" || len(e["relabelings"].([]any)) != 1 || len(e["metricRelabelings"].([]any)) != 1 {
			t.Errorf("endpoint %v", e)
		}
	})
	t.Run("PodMonitor", func(t *testing.T) {
		auth := []string{"metrics.podMonitor.enabled=true", "metrics.podMonitor.authorization.type=Bearer",
			"metrics.podMonitor.authorization.credentials.name=perfexp-metrics-token", "metrics.podMonitor.authorization.credentials.key=token"}
		got := render(t, set(t, append(knobs, auth...)...), monitoringAPI)
		if got.find("ServiceMonitor", releaseNamespace, "perfexp-manager") != nil {
			t.Error("a ServiceMonitor rendered beside the PodMonitor: every sample scraped twice")
		}
		pm := got.find("PodMonitor", releaseNamespace, "perfexp-manager")
		if pm == nil {
			t.Fatal("no PodMonitor")
		}
		ep, _, _ := unstructured.NestedSlice(pm.Object, "spec", "podMetricsEndpoints")
		e := ep[0].(map[string]any)
		relabel := e["relabelings"].([]any)
		first := relabel[0].(map[string]any)
		if first["targetLabel"] != "job" || first["replacement"] != "perfexp-manager-metrics" || len(relabel) != 2 {
			t.Errorf("relabelings %v: want the job of the alerts first, then the user's", relabel)
		}
		if e["scheme"] != "https" || e["authorization"] == nil || e["scrapeTimeout"] != "10s" {
			t.Errorf("endpoint %v", e)
		}
		sel, _, _ := unstructured.NestedStringMap(pm.Object, "spec", "selector", "matchLabels")
		if sel["app.kubernetes.io/instance"] != releaseName {
			t.Errorf("the PodMonitor selects %v, not this release's pods", sel)
		}
		for _, refused := range [][]string{
			{"metrics.podMonitor.enabled=true"},
			{"metrics.podMonitor.enabled=true", "metrics.secure=false", "metrics.serviceMonitor.enabled=true"},
		} {
			if _, err := renderRelease(t, releaseName, releaseNamespace, set(t, refused...), monitoringAPI); err == nil {
				t.Errorf("--set %s rendered; want it refused", strings.Join(refused, ","))
			}
		}
	})
}

// Every alert links its runbook, a section of docs/operations.md that exists, and each may be
// left out by name.
func TestAlertRunbooks(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join(root(t), "docs", "operations.md"))
	if err != nil {
		t.Fatal(err)
	}
	anchors := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^#+ (.+)$`).FindAllStringSubmatch(string(doc), -1) {
		anchors[githubAnchor(m[1])] = true
	}
	alerts := func(r rendered) map[string]map[string]any {
		rule := r.find("PrometheusRule", releaseNamespace, "perfexp-manager")
		groups, _, _ := unstructured.NestedSlice(rule.Object, "spec", "groups")
		out := map[string]map[string]any{}
		for _, g := range groups {
			for _, r := range g.(map[string]any)["rules"].([]any) {
				rule := r.(map[string]any)
				out[rule["alert"].(string)] = rule["annotations"].(map[string]any)
			}
		}
		return out
	}
	// The docs of the release the chart is: main until make release wrote a version.
	ref := "main"
	if v := chartAppVersion(t); v != "dev" {
		ref = "v" + v
	}
	all := alerts(render(t, nil, monitoringAPI))
	if len(all) < 8 {
		t.Fatalf("%d alerts", len(all))
	}
	for name, ann := range all {
		url, _ := ann["runbook_url"].(string)
		base, anchor, ok := strings.Cut(url, "#")
		if !ok || base != "https://github.com/perfexp/perfexp/blob/"+ref+"/docs/operations.md" {
			t.Errorf("%s: runbook_url %q", name, url)
			continue
		}
		if !anchors[anchor] {
			t.Errorf("%s: docs/operations.md has no section #%s", name, anchor)
		}
	}
	released := alerts(render(t, set(t, "prometheusRule.runbookBaseURL=https://wiki.example.com/perfexp"), monitoringAPI))
	if u := released["PerfexpManagerDown"]["runbook_url"]; u != "https://wiki.example.com/perfexp#perfexpmanagerdown" {
		t.Errorf("with runbookBaseURL: %v", u)
	}
	some := alerts(render(t, set(t, "prometheusRule.disabled.PerfexpRegressionFound=true",
		"prometheusRule.disabled.PerfexpQueueStalled=true", "prometheusRule.disabled.PerfexpManagerDown=false"), monitoringAPI))
	if _, ok := some["PerfexpRegressionFound"]; ok || len(some) != len(all)-2 {
		t.Errorf("with two alerts disabled: %d of %d left", len(some), len(all))
	}
}

// chartAppVersion is Chart.yaml's appVersion: dev between releases, the version in a release
// commit (make release writes it).
func chartAppVersion(t *testing.T) string {
	t.Helper()
	chrt, err := loader.Load(filepath.Join(root(t), "charts", "perfexp"))
	if err != nil {
		t.Fatal(err)
	}
	return chrt.Metadata.AppVersion
}

// githubAnchor is the id GitHub gives a Markdown heading.
func githubAnchor(heading string) string {
	h := strings.ToLower(strings.TrimSpace(heading))
	h = regexp.MustCompile("[^a-z0-9 _-]").ReplaceAllString(h, "")
	return strings.ReplaceAll(h, " ", "-")
}

// rbac.create: false leaves every role and binding of the manager to the user (the user roles
// follow their own value); the manager and its policies still render.
func TestRBACCreate(t *testing.T) {
	for _, values := range [][]string{{"rbac.create=false"}, {"rbac.create=false", "scope=namespaced", "watchNamespaces={team-a}"}} {
		got := render(t, set(t, values...))
		for _, kind := range []string{"ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding"} {
			for _, o := range got.kinds(kind) {
				if o.GetName() != "perfexp-edit" && o.GetName() != "perfexp-view" {
					t.Errorf("%v: %s %s rendered", values, kind, o.GetName())
				}
			}
		}
		if got.find("Deployment", releaseNamespace, "perfexp-manager") == nil || len(got.kinds("ValidatingAdmissionPolicy")) != 3 {
			t.Errorf("%v: the manager or its admission policies are missing", values)
		}
	}
	none := render(t, set(t, "rbac.create=false", "rbac.userRoles.create=false"))
	if n := len(none.kinds("ClusterRole")); n != 0 {
		t.Errorf("%d ClusterRoles with rbac.create and userRoles.create false", n)
	}
}

// perfexp-edit and perfexp-view aggregate into Kubernetes' user-facing roles, carry the
// release's prefix, and grant what their names say: edit writes experiments and sweeps, view
// only reads; neither reaches beyond perfexp's kinds.
func TestUserRoles(t *testing.T) {
	tests := []struct {
		release, wantPrefix string
	}{
		{release: "perfexp", wantPrefix: "perfexp"},
		{release: "team-b", wantPrefix: "team-b-perfexp"},
	}
	for _, tt := range tests {
		t.Run(tt.release, func(t *testing.T) {
			r, err := renderRelease(t, tt.release, releaseNamespace, nil)
			if err != nil {
				t.Fatal(err)
			}
			edit := r.find("ClusterRole", "", tt.wantPrefix+"-edit")
			view := r.find("ClusterRole", "", tt.wantPrefix+"-view")
			if edit == nil || view == nil {
				t.Fatalf("no %s-edit or -view ClusterRole", tt.wantPrefix)
			}
			wantLabels := map[*unstructured.Unstructured][]string{
				edit: {"rbac.authorization.k8s.io/aggregate-to-edit", "rbac.authorization.k8s.io/aggregate-to-admin"},
				view: {"rbac.authorization.k8s.io/aggregate-to-view"},
			}
			for role, labels := range wantLabels {
				for _, l := range labels {
					if role.GetLabels()[l] != "true" {
						t.Errorf("%s lacks %s=true: %v", role.GetName(), l, role.GetLabels())
					}
				}
				if role.GetLabels()["app.kubernetes.io/instance"] != tt.release {
					t.Errorf("%s lacks the release's labels", role.GetName())
				}
			}
			if view.GetLabels()["rbac.authorization.k8s.io/aggregate-to-edit"] != "" {
				t.Errorf("%s aggregates into edit itself", view.GetName())
			}
			verbs := func(role *unstructured.Unstructured, resource string) []string {
				rules, _, _ := unstructured.NestedSlice(role.Object, "rules")
				var out []string
				for _, r := range rules {
					rule := r.(map[string]any)
					groups, resources := rule["apiGroups"].([]any), rule["resources"].([]any)
					if len(groups) != 1 || groups[0] != "perfexp.dev" {
						t.Errorf("%s grants in groups %v: beyond perfexp's kinds", role.GetName(), groups)
					}
					if slices.Contains(resources, any(resource)) {
						for _, v := range rule["verbs"].([]any) {
							out = append(out, v.(string))
						}
					}
				}
				slices.Sort(out)
				return out
			}
			write := []string{"create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"}
			read := []string{"get", "list", "watch"}
			for _, c := range []struct {
				role     *unstructured.Unstructured
				resource string
				want     []string
			}{
				{edit, "perfexperiments", write}, {edit, "perfsweeps", write}, {edit, "perfhistories", read},
				{view, "perfexperiments", read}, {view, "perfsweeps", read}, {view, "perfhistories", read},
			} {
				if got := verbs(c.role, c.resource); !slices.Equal(got, c.want) {
					t.Errorf("%s on %s: %v, want %v", c.role.GetName(), c.resource, got, c.want)
				}
			}
		})
	}
}

// A split install: the cluster part holds what needs a cluster admin (cluster-scoped objects
// and every binding), the namespace part only namespaced objects in the release namespace, and
// together they are the whole release.
func TestSplitInstall(t *testing.T) {
	base := []string{"fullnameOverride=perfexp", "scope=namespaced", "watchNamespaces={team-a,team-b}", "metrics.secure=false"}
	key := func(o *unstructured.Unstructured) string {
		return o.GetKind() + " " + o.GetNamespace() + "/" + o.GetName()
	}
	keys := func(r rendered) []string {
		var out []string
		for _, o := range r.objects {
			if o.GetKind() != "CustomResourceDefinition" {
				out = append(out, key(o))
			}
		}
		slices.Sort(out)
		return out
	}
	all := render(t, set(t, append(base, "installPart=all")...), monitoringAPI)
	cluster := render(t, set(t, append(base, "installPart=cluster")...), monitoringAPI)
	ns := render(t, set(t, append(base, "installPart=namespace")...), monitoringAPI)

	for _, o := range cluster.objects {
		if !clusterScoped.Has(o.GetKind()) && o.GetKind() != "RoleBinding" && o.GetKind() != "CustomResourceDefinition" {
			t.Errorf("the cluster part renders %s, which the namespace admin can create", key(o))
		}
	}
	for _, o := range ns.objects {
		if clusterScoped.Has(o.GetKind()) || strings.HasSuffix(o.GetKind(), "Binding") || o.GetKind() == "Role" {
			t.Errorf("the namespace part renders %s, which needs more than the namespace's admin role", key(o))
		}
		if o.GetKind() != "CustomResourceDefinition" && o.GetNamespace() != releaseNamespace {
			t.Errorf("the namespace part renders %s outside %s", key(o), releaseNamespace)
		}
	}
	if ns.find("Deployment", releaseNamespace, "perfexp-manager") == nil || ns.find("ServiceAccount", releaseNamespace, "perfexp-manager") == nil ||
		ns.find("PrometheusRule", releaseNamespace, "perfexp-manager") == nil {
		t.Error("the namespace part lacks the manager, its service account or its alerts")
	}
	if cluster.find("ClusterRole", "", "perfexp-edit") == nil || cluster.find("RoleBinding", "team-b", "perfexp-environment-patch") == nil {
		t.Error("the cluster part lacks the user roles or the watched namespaces' bindings")
	}
	union := append(keys(cluster), keys(ns)...)
	slices.Sort(union)
	if want := keys(all); !slices.Equal(union, want) {
		t.Errorf("cluster + namespace parts:\n %v\nthe whole release:\n %v", union, want)
	}
	checkReferences(t, rendered{objects: append(cluster.objects, ns.objects...)})

	for _, part := range []string{"cluster", "namespace"} {
		if _, err := renderRelease(t, releaseName, releaseNamespace, set(t, "installPart="+part)); err == nil ||
			!strings.Contains(err.Error(), "fullnameOverride") {
			t.Errorf("installPart=%s without fullnameOverride: %v, want a message naming fullnameOverride", part, err)
		}
	}
}
