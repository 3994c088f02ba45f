package charts_test

import (
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/strvals"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/sets"
)

// set parses helm's --set syntax, so each case reads as the command line a user would type.
func set(t *testing.T, flags ...string) map[string]any {
	t.Helper()
	values := map[string]any{}
	for _, f := range flags {
		if err := strvals.ParseInto(f, values); err != nil {
			t.Fatalf("--set %s: %v", f, err)
		}
	}
	return values
}

// values.schema.json refuses what would otherwise render silently; what it accepts renders.
func TestValuesSchema(t *testing.T) {
	tests := []struct {
		name    string
		set     []string
		wantErr string // a part of helm's message; empty: accepted
	}{
		{name: "a misspelt key", set: []string{"prometheusUrl=http://thanos:9090"}, wantErr: "prometheusUrl"},
		{name: "a boolean as a word", set: []string{"metrics.serviceMonitor.enabled=yes"}, wantErr: "serviceMonitor"},
		{name: "a key at the wrong level", set: []string{"serviceMonitor.enabled=true"}, wantErr: "serviceMonitor"},
		{name: "replicas without leader election", set: []string{"replicas=3", "leaderElection=false"}, wantErr: "leaderElection"},
		{name: "a port as a word", set: []string{"metrics.port=http"}, wantErr: "port"},
		{name: "a digest that is not one", set: []string{"image.digest=latest"}, wantErr: "digest"},
		{name: "an unknown pull policy", set: []string{"image.pullPolicy=Sometimes"}, wantErr: "pullPolicy"},
		{name: "an unknown key in a nested block", set: []string{"podDisruptionBudget.minAvaliable=1"}, wantErr: "minAvaliable"},
		{name: "a duration without a unit", set: []string{"prometheusTimeout=30"}, wantErr: "prometheusTimeout"},
		{name: "POD_NAMESPACE, which the chart sets", set: []string{"extraEnv[0].name=POD_NAMESPACE", "extraEnv[0].value=x"}, wantErr: "extraEnv"},
		{name: "an env var without a name", set: []string{"extraEnv[0].value=x"}, wantErr: "extraEnv"},
		{name: "a volume named like the chart's own", set: []string{"extraVolumes[0].name=metrics-certs", "extraVolumes[0].emptyDir.medium="}, wantErr: "extraVolumes"},
		{name: "a mount without a path", set: []string{"extraVolumeMounts[0].name=ca"}, wantErr: "mountPath"},
		{name: "a registry with a scheme", set: []string{"global.imageRegistry=https://mirror.example.com"}, wantErr: "imageRegistry"},
		{name: "a label value too long", set: []string{"commonLabels.team=" + strings.Repeat("x", 64)}, wantErr: "commonLabels"},
		{name: "half an install", set: []string{"installPart=half"}, wantErr: "installPart"},
		{name: "rbac.create as a word", set: []string{"rbac.create=no"}, wantErr: "create"},
		{name: "a scrape timeout without a unit", set: []string{"metrics.serviceMonitor.scrapeTimeout=10"}, wantErr: "scrapeTimeout"},
		{name: "relabelings as a map", set: []string{"metrics.serviceMonitor.relabelings.action=drop"}, wantErr: "relabelings"},
		{name: "a misspelt PodMonitor key", set: []string{"metrics.podMonitor.enable=true"}, wantErr: "enable"},
		{name: "an alert that does not exist", set: []string{"prometheusRule.disabled.PerfexpRestoreFailedd=true"}, wantErr: "PerfexpRestoreFailedd"},
		{name: "a runbook base with an anchor", set: []string{"prometheusRule.runbookBaseURL=https://wiki/x#y"}, wantErr: "runbookBaseURL"},
		{name: "extraObjects as a map", set: []string{"extraObjects.a=b"}, wantErr: "extraObjects"},
		{name: "defaults"},
		{name: "every knob of an operator chart", set: []string{
			"global.imageRegistry=mirror.example.com:5000/hub", "commonLabels.team=perf",
			"extraEnv[0].name=GOMEMLIMIT", "extraEnv[0].value=200MiB", "extraEnvFrom[0].configMapRef.name=proxy",
			"extraVolumes[0].name=ca", "extraVolumes[0].configMap.name=corp-ca",
			"extraVolumeMounts[0].name=ca", "extraVolumeMounts[0].mountPath=/etc/ssl/corp",
			"extraObjects[0].apiVersion=v1", "extraObjects[0].kind=ConfigMap", "extraObjects[0].metadata.name=x",
			"rbac.create=true", "rbac.userRoles.create=false",
			"metrics.serviceMonitor.scrapeTimeout=10s", "metrics.serviceMonitor.relabelings[0].targetLabel=cluster",
			"metrics.serviceMonitor.metricRelabelings[0].action=drop",
			"prometheusRule.disabled.PerfexpRegressionFound=true", "prometheusRule.runbookBaseURL=https://wiki.example.com/perfexp",
		}},
		{name: "a PodMonitor with plain metrics", set: []string{"metrics.podMonitor.enabled=true", "metrics.secure=false"}},
		{name: "the cluster part of a split install", set: []string{"installPart=cluster", "fullnameOverride=perfexp"}},
		{name: "the namespace part of a split install", set: []string{"installPart=namespace", "fullnameOverride=perfexp"}},
		{name: "replicas with leader election", set: []string{"replicas=3"}},
		{name: "one replica without leader election", set: []string{"replicas=1", "leaderElection=false"}},
		{name: "serviceMonitor forced", set: []string{"metrics.serviceMonitor.enabled=true"}},
		{name: "the local cluster's values", set: []string{"image.tag=dev", "image.pullPolicy=Never", "k6Image=perfexp/k6:v1.8.1"}},
		{name: "every block of a platform review", set: []string{
			"fullnameOverride=perf", "serviceAccount.create=false", "serviceAccount.name=perf-sa",
			"podDisruptionBudget.enabled=true", "podDisruptionBudget.minAvailable=50%", "networkPolicy.enabled=true",
			"topologySpreadConstraints[0].maxSkew=1", "topologySpreadConstraints[0].topologyKey=kubernetes.io/hostname",
			"topologySpreadConstraints[0].whenUnsatisfiable=ScheduleAnyway", "podSecurityContext=null",
			"image.digest=sha256:" + strings.Repeat("ab", 32),
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := renderRelease(t, releaseName, releaseNamespace, set(t, tt.set...))
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tt.wantErr != "" && err == nil:
				t.Fatalf("--set %s rendered; want it refused", strings.Join(tt.set, ","))
			case tt.wantErr != "" && !strings.Contains(err.Error(), "values don't meet the specifications of the schema"):
				t.Fatalf("refused, but not by the schema: %v", err)
			case tt.wantErr != "" && !strings.Contains(err.Error(), tt.wantErr):
				t.Fatalf("the refusal does not name %q: %v", tt.wantErr, err)
			}
		})
	}
}

// clusterScoped are the kinds a release creates outside its namespace.
var clusterScoped = sets.New("ClusterRole", "ClusterRoleBinding", "ValidatingAdmissionPolicy",
	"ValidatingAdmissionPolicyBinding", "ValidatingWebhookConfiguration", "MutatingWebhookConfiguration")

// Two releases in two namespaces write no object of the same kind and name, except the CRDs
// (which helm installs once and leaves alone); inside each, the bindings point at that
// release's own ClusterRoles, policies and service account.
func TestTwoReleasesDoNotCollide(t *testing.T) {
	both := map[string]any{"rbac": map[string]any{"environmentPatch": map[string]any{
		"clusterWide": false, "namespaces": []any{"perfexp-demo"}}}}
	tests := []struct {
		name   string
		a, b   [2]string // release, namespace
		values map[string]any
		bOnly  map[string]any // values of the second release only
	}{
		{name: "two release names", a: [2]string{"perfexp", "perf-a"}, b: [2]string{"team-b", "perf-b"}},
		{name: "both bind the same namespace", a: [2]string{"perf-a", "perf-a"}, b: [2]string{"perf-b", "perf-b"}, values: both},
		{name: "fullnameOverride", a: [2]string{"perfexp", "perf-a"}, b: [2]string{"perfexp", "perf-b"},
			bOnly: map[string]any{"fullnameOverride": "perf-b"}},
		{name: "namespaced, side by side", a: [2]string{"perf-a", "perf-a-system"}, b: [2]string{"perf-b", "perf-b-system"},
			values: map[string]any{"scope": "namespaced", "watchNamespaces": []any{"team-a"}},
			bOnly:  map[string]any{"scope": "namespaced", "watchNamespaces": []any{"team-b"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, err := renderRelease(t, tt.a[0], tt.a[1], tt.values)
			if err != nil {
				t.Fatal(err)
			}
			bValues := tt.values
			if tt.bOnly != nil {
				bValues = tt.bOnly
			}
			b, err := renderRelease(t, tt.b[0], tt.b[1], bValues)
			if err != nil {
				t.Fatal(err)
			}
			key := func(o *unstructured.Unstructured) string {
				return o.GetKind() + " " + o.GetNamespace() + "/" + o.GetName()
			}
			seen := map[string]bool{}
			cluster := 0
			for _, o := range a.objects {
				seen[key(o)] = true
				if clusterScoped.Has(o.GetKind()) {
					cluster++
				}
			}
			if cluster < 6 {
				t.Fatalf("only %d cluster-scoped objects in release %s", cluster, tt.a[0])
			}
			for _, o := range b.objects {
				if seen[key(o)] && o.GetKind() != "CustomResourceDefinition" {
					t.Errorf("both releases write %s", key(o))
				}
			}
			for _, r := range []rendered{a, b} {
				checkReferences(t, r)
			}
		})
	}
}

// checkReferences fails when a binding names a role, policy or service account the release
// does not render (or, for the service account, does not use).
func checkReferences(t *testing.T, r rendered) {
	t.Helper()
	names := map[string]bool{}
	for _, o := range r.objects {
		names[o.GetKind()+"/"+o.GetName()] = true
	}
	var deploy *unstructured.Unstructured
	for _, d := range r.kinds("Deployment") {
		deploy = d
	}
	sa, _, _ := unstructured.NestedString(deploy.Object, "spec", "template", "spec", "serviceAccountName")
	if !names["ServiceAccount/"+sa] {
		t.Errorf("the manager runs as %q, which the release does not create", sa)
	}
	for _, kind := range []string{"ClusterRoleBinding", "RoleBinding"} {
		for _, rb := range r.kinds(kind) {
			role, _, _ := unstructured.NestedString(rb.Object, "roleRef", "name")
			roleKind, _, _ := unstructured.NestedString(rb.Object, "roleRef", "kind")
			if !names[roleKind+"/"+role] {
				t.Errorf("%s %s binds %s %q, not the release's", kind, rb.GetName(), roleKind, role)
			}
			subjects, _, _ := unstructured.NestedSlice(rb.Object, "subjects")
			if len(subjects) != 1 || subjects[0].(map[string]any)["name"] != sa {
				t.Errorf("%s %s binds %v, not the manager's service account %s", kind, rb.GetName(), subjects, sa)
			}
		}
	}
	for _, pb := range r.kinds("ValidatingAdmissionPolicyBinding") {
		policy, _, _ := unstructured.NestedString(pb.Object, "spec", "policyName")
		if !names["ValidatingAdmissionPolicy/"+policy] {
			t.Errorf("ValidatingAdmissionPolicyBinding %s binds policy %q, not the release's", pb.GetName(), policy)
		}
	}
}

// The manager image and its pull policy: a digest pins the image whatever the tag says, and a
// tag that may move is pulled again.
func TestImage(t *testing.T) {
	digest := "sha256:" + strings.Repeat("0f", 32)
	// appVersion is dev, a tag that moves, between releases, and the version in a release commit.
	appVersion, defaultPolicy := chartAppVersion(t), "IfNotPresent"
	if appVersion == "dev" {
		defaultPolicy = "Always"
	}
	tests := []struct {
		name                  string
		set                   []string
		wantImage, wantPolicy string
	}{
		{name: "defaults: appVersion", wantImage: "perfexp/manager:" + appVersion, wantPolicy: defaultPolicy},
		{name: "a version tag", set: []string{"image.tag=v0.3.0"}, wantImage: "perfexp/manager:v0.3.0", wantPolicy: "IfNotPresent"},
		{name: "latest", set: []string{"image.tag=latest"}, wantImage: "perfexp/manager:latest", wantPolicy: "Always"},
		{name: "a digest wins over the tag", set: []string{"image.tag=v0.3.0", "image.digest=" + digest},
			wantImage: "perfexp/manager@" + digest, wantPolicy: "IfNotPresent"},
		{name: "a digest with another repository", set: []string{"image.repository=registry.example.com/perfexp/manager", "image.digest=" + digest},
			wantImage: "registry.example.com/perfexp/manager@" + digest, wantPolicy: "IfNotPresent"},
		{name: "a forced policy", set: []string{"image.tag=dev", "image.pullPolicy=Never"}, wantImage: "perfexp/manager:dev", wantPolicy: "Never"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := container(t, render(t, set(t, tt.set...)).find("Deployment", releaseNamespace, "perfexp-manager"))
			if c["image"] != tt.wantImage || c["imagePullPolicy"] != tt.wantPolicy {
				t.Errorf("image %v (%v), want %s (%s)", c["image"], c["imagePullPolicy"], tt.wantImage, tt.wantPolicy)
			}
		})
	}
}

// The blocks a platform team reviews: service account, securityContext, PDB, spread
// constraints, NetworkPolicy and the helm test pod.
func TestPlatformBlocks(t *testing.T) {
	t.Run("an existing service account", func(t *testing.T) {
		got := render(t, set(t, "serviceAccount.create=false", "serviceAccount.name=platform-sa"))
		if len(got.kinds("ServiceAccount")) != 0 {
			t.Error("a ServiceAccount was rendered with serviceAccount.create=false")
		}
		checkReferences(t, rendered{objects: append(got.objects, &unstructured.Unstructured{Object: map[string]any{
			"kind": "ServiceAccount", "metadata": map[string]any{"name": "platform-sa"}}})})
		if _, err := renderRelease(t, releaseName, releaseNamespace, set(t, "serviceAccount.create=false")); err == nil ||
			!strings.Contains(err.Error(), "serviceAccount.name") {
			t.Errorf("serviceAccount.create=false without a name: %v, want a message naming serviceAccount.name", err)
		}
	})
	t.Run("no UID by default, one when asked", func(t *testing.T) {
		c := container(t, render(t, nil).find("Deployment", releaseNamespace, "perfexp-manager"))
		if _, ok := c["securityContext"].(map[string]any)["runAsUser"]; ok {
			t.Errorf("the container's securityContext sets a UID: %v", c["securityContext"])
		}
		d := render(t, set(t, "podSecurityContext.runAsUser=1000700000", "podSecurityContext.fsGroup=1000700000")).
			find("Deployment", releaseNamespace, "perfexp-manager")
		uid, _, _ := unstructured.NestedFieldNoCopy(d.Object, "spec", "template", "spec", "securityContext", "runAsUser")
		nonRoot, _, _ := unstructured.NestedBool(d.Object, "spec", "template", "spec", "securityContext", "runAsNonRoot")
		if uid != float64(1000700000) || !nonRoot {
			t.Errorf("pod securityContext runAsUser %v runAsNonRoot %v, want 1000700000 and true", uid, nonRoot)
		}
	})
	t.Run("PDB, spread and NetworkPolicy select this release's manager pods", func(t *testing.T) {
		got := render(t, set(t, "replicas=2", "podDisruptionBudget.enabled=true", "podDisruptionBudget.minAvailable=1",
			"networkPolicy.enabled=true", "networkPolicy.metricsFrom[0].namespaceSelector.matchLabels.name=monitoring",
			"topologySpreadConstraints[0].maxSkew=1", "topologySpreadConstraints[0].topologyKey=topology.kubernetes.io/zone",
			"topologySpreadConstraints[0].whenUnsatisfiable=ScheduleAnyway"))
		d := got.find("Deployment", releaseNamespace, "perfexp-manager")
		tpl, _, _ := unstructured.NestedStringMap(d.Object, "spec", "template", "metadata", "labels")
		selects := func(what string, selector map[string]string) {
			if len(selector) < 3 {
				t.Errorf("%s selects %v: not this release's pods only", what, selector)
			}
			for k, v := range selector {
				if tpl[k] != v {
					t.Errorf("%s selects %s=%s; the manager pods have %q", what, k, v, tpl[k])
				}
			}
		}
		pdb := got.find("PodDisruptionBudget", releaseNamespace, "perfexp-manager")
		if pdb == nil {
			t.Fatal("no PodDisruptionBudget")
		}
		sel, _, _ := unstructured.NestedStringMap(pdb.Object, "spec", "selector", "matchLabels")
		selects("the PDB", sel)
		if v, _, _ := unstructured.NestedFieldNoCopy(pdb.Object, "spec", "minAvailable"); v != int64(1) && v != float64(1) {
			t.Errorf("PDB minAvailable %v, want 1", v)
		}
		spread, _, _ := unstructured.NestedSlice(d.Object, "spec", "template", "spec", "topologySpreadConstraints")
		if len(spread) != 1 {
			t.Fatalf("topologySpreadConstraints %v", spread)
		}
		sel, _, _ = unstructured.NestedStringMap(spread[0].(map[string]any), "labelSelector", "matchLabels")
		selects("the spread constraint", sel)
		np := got.find("NetworkPolicy", releaseNamespace, "perfexp-manager")
		if np == nil {
			t.Fatal("no NetworkPolicy")
		}
		sel, _, _ = unstructured.NestedStringMap(np.Object, "spec", "podSelector", "matchLabels")
		selects("the NetworkPolicy", sel)
		// The test pod must still reach the metrics when only monitoring may.
		test := findIn(got.hooks, "Pod")
		if test == nil {
			t.Fatal("no helm test pod")
		}
		ingress, _, _ := unstructured.NestedSlice(np.Object, "spec", "ingress")
		from, _, _ := unstructured.NestedSlice(ingress[0].(map[string]any), "from")
		allowed := false
		for _, peer := range from {
			m, _, _ := unstructured.NestedStringMap(peer.(map[string]any), "podSelector", "matchLabels")
			if len(m) > 0 && sets.New(keysValues(test.GetLabels())...).IsSuperset(sets.New(keysValues(m)...)) {
				allowed = true
			}
		}
		if !allowed {
			t.Errorf("the NetworkPolicy's metrics peers %v leave out the helm test pod %v", from, test.GetLabels())
		}
	})
	t.Run("off by default", func(t *testing.T) {
		got := render(t, nil)
		for _, kind := range []string{"PodDisruptionBudget", "NetworkPolicy"} {
			if len(got.kinds(kind)) != 0 {
				t.Errorf("a %s rendered by default", kind)
			}
		}
	})
	t.Run("the helm test reads the metrics Service", func(t *testing.T) {
		got := render(t, nil)
		pod, cm := findIn(got.hooks, "Pod"), findIn(got.hooks, "ConfigMap")
		if pod == nil || cm == nil {
			t.Fatal("no helm test pod and script")
		}
		if pod.GetAnnotations()["helm.sh/hook"] != "test" {
			t.Errorf("the test pod's hook %q", pod.GetAnnotations()["helm.sh/hook"])
		}
		script, _, _ := unstructured.NestedString(cm.Object, "data", "metrics.js")
		// Secured metrics by default: HTTPS, read with the test's own token.
		if svc := got.find("Service", releaseNamespace, "perfexp-manager-metrics"); svc == nil ||
			!strings.Contains(script, "https://perfexp-manager-metrics."+releaseNamespace+".svc:8080/metrics") {
			t.Errorf("the test script does not read the metrics Service:\n%s", script)
		}
		plain := render(t, set(t, "metrics.secure=false"))
		plainScript, _, _ := unstructured.NestedString(findIn(plain.hooks, "ConfigMap").Object, "data", "metrics.js")
		if !strings.Contains(plainScript, "http://perfexp-manager-metrics."+releaseNamespace+".svc:8080/metrics") {
			t.Errorf("with metrics.secure=false the test script does not read the plain metrics Service:\n%s", plainScript)
		}
		off := render(t, set(t, "metrics.port=0"))
		if len(off.hooks) != 0 {
			t.Errorf("a test rendered without a metrics endpoint: %d objects", len(off.hooks))
		}
	})
}

func findIn(objs []*unstructured.Unstructured, kind string) *unstructured.Unstructured {
	for _, o := range objs {
		if o.GetKind() == kind {
			return o
		}
	}
	return nil
}

func keysValues(m map[string]string) []string {
	var out []string
	for k, v := range m {
		out = append(out, k+"="+v)
	}
	return out
}
