package charts_test

import (
	"fmt"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
)

// namespacedValues are a namespaced install working in team-a and team-b.
func namespacedValues(extra ...string) map[string]any {
	return map[string]any{"scope": "namespaced", "watchNamespaces": toAny(append([]string{"team-a", "team-b"}, extra...))}
}

func toAny(s []string) []any {
	out := make([]any, len(s))
	for i, v := range s {
		out[i] = v
	}
	return out
}

// reviewCreates are the only non-read verbs a namespaced install may hold cluster-wide: asking
// the API server who a metrics scraper is and what it may do. Reviews are never stored.
var reviewCreates = map[string]bool{"authentication.k8s.io/tokenreviews": true, "authorization.k8s.io/subjectaccessreviews": true}

// clusterWideWrites lists every verb other than get, list and watch that a ClusterRoleBinding
// of r grants, as "binding: verb group/resource", except the review creates.
func clusterWideWrites(t *testing.T, r rendered) []string {
	t.Helper()
	var out []string
	for _, crb := range r.kinds("ClusterRoleBinding") {
		roleName, _, _ := unstructured.NestedString(crb.Object, "roleRef", "name")
		role := r.find("ClusterRole", "", roleName)
		if role == nil {
			t.Fatalf("ClusterRoleBinding %s binds ClusterRole %s, which the chart does not render", crb.GetName(), roleName)
		}
		rules, _, _ := unstructured.NestedSlice(role.Object, "rules")
		for _, rule := range rules {
			rule := rule.(map[string]any)
			for _, verb := range stringsOf(rule["verbs"]) {
				if verb == "get" || verb == "list" || verb == "watch" {
					continue
				}
				if len(stringsOf(rule["nonResourceURLs"])) > 0 {
					out = append(out, fmt.Sprintf("%s: %s %v", crb.GetName(), verb, rule["nonResourceURLs"]))
					continue
				}
				for _, group := range stringsOf(rule["apiGroups"]) {
					for _, res := range stringsOf(rule["resources"]) {
						if verb == "create" && reviewCreates[group+"/"+res] {
							continue
						}
						out = append(out, fmt.Sprintf("%s: %s %s/%s", crb.GetName(), verb, group, res))
					}
				}
			}
		}
	}
	sort.Strings(out)
	return out
}

func stringsOf(v any) []string {
	var out []string
	for _, s := range asSlice(v) {
		out = append(out, s.(string))
	}
	return out
}

func asSlice(v any) []any {
	s, _ := v.([]any)
	return s
}

// bindingsOf lists r's RoleBindings as "namespace/name -> roleRef".
func bindingsOf(r rendered) []string {
	var out []string
	for _, rb := range r.kinds("RoleBinding") {
		ref, _, _ := unstructured.NestedString(rb.Object, "roleRef", "name")
		out = append(out, rb.GetNamespace()+"/"+rb.GetName()+" -> "+ref)
	}
	sort.Strings(out)
	return out
}

// A namespaced install grants the manager no cluster-wide write: its ClusterRoleBindings
// grant reads (Namespaces) and the two metrics reviews only, every write comes from a
// RoleBinding in a watched namespace or the operator's own, the manager watches exactly those
// namespaces, and the admission policies are still installed and bound. The cluster scope, for
// contrast, does grant cluster-wide writes (so this check can fail).
func TestNamespacedScopeGrantsNoClusterWideWrite(t *testing.T) {
	if writes := clusterWideWrites(t, render(t, nil)); len(writes) == 0 {
		t.Fatal("the cluster scope shows no cluster-wide write: the check is blind")
	}
	tests := []struct {
		name         string
		values       map[string]any
		wantBindings []string
	}{
		{name: "two namespaces", values: namespacedValues(), wantBindings: []string{
			"perfexp-system/perfexp-manager -> perfexp-manager", "perfexp-system/perfexp-snapshot-key -> perfexp-snapshot-key",
			"team-a/perfexp-environment-patch -> perfexp-environment-patch", "team-a/perfexp-manager -> perfexp-manager",
			"team-b/perfexp-environment-patch -> perfexp-environment-patch", "team-b/perfexp-manager -> perfexp-manager",
		}},
		{name: "the lease namespace watched too, the patch bindings of the cluster scope ignored", values: func() map[string]any {
			v := namespacedValues("perf-ops")
			v["leaseNamespace"] = "perf-ops"
			v["rbac"] = map[string]any{"environmentPatch": map[string]any{"clusterWide": true}}
			return v
		}(), wantBindings: []string{
			"perf-ops/perfexp-environment-patch -> perfexp-environment-patch", "perf-ops/perfexp-manager -> perfexp-manager", "perf-ops/perfexp-snapshot-key -> perfexp-snapshot-key",
			"team-a/perfexp-environment-patch -> perfexp-environment-patch", "team-a/perfexp-manager -> perfexp-manager",
			"team-b/perfexp-environment-patch -> perfexp-environment-patch", "team-b/perfexp-manager -> perfexp-manager",
		}},
		{name: "dashboards in Grafana's namespace: ConfigMaps there only", values: func() map[string]any {
			v := namespacedValues()
			v["grafana"] = map[string]any{"dashboards": map[string]any{"enabled": true, "namespace": "monitoring"}}
			return v
		}(), wantBindings: []string{
			"monitoring/perfexp-manager-dashboards -> perfexp-manager-dashboards",
			"perfexp-system/perfexp-manager -> perfexp-manager", "perfexp-system/perfexp-snapshot-key -> perfexp-snapshot-key",
			"team-a/perfexp-environment-patch -> perfexp-environment-patch", "team-a/perfexp-manager -> perfexp-manager",
			"team-b/perfexp-environment-patch -> perfexp-environment-patch", "team-b/perfexp-manager -> perfexp-manager",
		}},
		{name: "plain HTTP metrics", values: func() map[string]any {
			v := namespacedValues()
			v["metrics"] = map[string]any{"secure": false}
			return v
		}(), wantBindings: []string{
			"perfexp-system/perfexp-manager -> perfexp-manager", "perfexp-system/perfexp-snapshot-key -> perfexp-snapshot-key",
			"team-a/perfexp-environment-patch -> perfexp-environment-patch", "team-a/perfexp-manager -> perfexp-manager",
			"team-b/perfexp-environment-patch -> perfexp-environment-patch", "team-b/perfexp-manager -> perfexp-manager",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := render(t, tt.values)
			if writes := clusterWideWrites(t, got); len(writes) > 0 {
				t.Errorf("cluster-wide writes granted:\n  %s", strings.Join(writes, "\n  "))
			}
			if b := bindingsOf(got); !slices.Equal(b, tt.wantBindings) {
				t.Errorf("RoleBindings:\n got  %v\n want %v", b, tt.wantBindings)
			}
			if r := got.kinds("Role"); len(r) > 0 {
				rules, _, _ := unstructured.NestedSlice(r[0].Object, "rules")
				if len(r) != 1 || len(rules) != 1 || !slices.Equal(stringsOf(rules[0].(map[string]any)["resources"]), []string{"configmaps"}) {
					t.Errorf("Roles beyond the dashboards' ConfigMaps: %v", r)
				}
			}
			opts, _ := managerArgs(t, stringArgs(container(t, got.find("Deployment", releaseNamespace, "perfexp-manager"))))
			want := stringsOf(tt.values["watchNamespaces"])
			if !slices.Equal(opts.WatchNamespaces, want) {
				t.Errorf("--watch-namespaces %v, want %v", opts.WatchNamespaces, want)
			}
			for _, policy := range []string{"perfexp-no-escalation", "perfexp-spec-frozen", "perfexp-interleaved-order"} {
				if got.find("ValidatingAdmissionPolicy", "", policy) == nil || got.find("ValidatingAdmissionPolicyBinding", "", policy) == nil {
					t.Errorf("admission policy %s is not installed and bound in the namespaced scope", policy)
				}
			}
			if !strings.Contains(got.notes, "Namespaced install: perfexp works only in team-a, team-b") {
				t.Errorf("NOTES.txt does not say where the operator works:\n%s", got.notes)
			}
		})
	}
}

// scope and watchNamespaces go together: either without the other is refused with a message.
func TestNamespacedScopeNeedsItsNamespaces(t *testing.T) {
	tests := []struct {
		name   string
		values map[string]any
		says   string
	}{
		{name: "namespaced without namespaces", values: map[string]any{"scope": "namespaced"}, says: "scope: namespaced needs watchNamespaces"},
		{name: "namespaces without the scope", values: map[string]any{"watchNamespaces": []any{"team-a"}}, says: "watchNamespaces is only for scope: namespaced"},
		{name: "an unknown scope", values: map[string]any{"scope": "team"}, says: "value must be one of 'cluster', 'namespaced'"},
		{name: "a namespace name no namespace can have", values: namespacedValues("Team_C"), says: "watchNamespaces/2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := renderRelease(t, releaseName, releaseNamespace, tt.values)
			if err == nil || !strings.Contains(err.Error(), tt.says) {
				t.Fatalf("got %v, want an error saying %q", err, tt.says)
			}
		})
	}
}

// The chart's namespaced scope and the kustomize overlay config/namespaced grant the same
// rights: the same ClusterRoles and rules, the same ClusterRoleBindings and RoleBindings, and
// the same manager options.
func TestNamespacedChartAgreesWithKustomize(t *testing.T) {
	k := krusty.MakeKustomizer(krusty.MakeDefaultOptions())
	resMap, err := k.Run(filesys.MakeFsOnDisk(), filepath.Join(root(t), "config", "namespaced"))
	if err != nil {
		t.Fatalf("kustomize build config/namespaced: %v", err)
	}
	stream, err := resMap.AsYaml()
	if err != nil {
		t.Fatal(err)
	}
	want := rendered{objects: decodeAll(t, string(stream))}
	got := render(t, map[string]any{"scope": "namespaced", "watchNamespaces": []any{"perfexp-demo"}})

	key := func(o *unstructured.Unstructured) string {
		return o.GetKind() + " " + o.GetNamespace() + "/" + o.GetName()
	}
	for _, kind := range []string{"ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding"} {
		var gotKeys, wantKeys []string
		for _, o := range got.kinds(kind) {
			gotKeys = append(gotKeys, key(o))
		}
		for _, o := range want.kinds(kind) {
			wantKeys = append(wantKeys, key(o))
			g := got.find(kind, o.GetNamespace(), o.GetName())
			if g == nil {
				continue
			}
			for _, field := range []string{"rules", "roleRef", "subjects"} {
				if !reflect.DeepEqual(g.Object[field], o.Object[field]) {
					t.Errorf("%s: %s differs:\n chart:     %v\n kustomize: %v", key(o), field, g.Object[field], o.Object[field])
				}
			}
		}
		sort.Strings(gotKeys)
		sort.Strings(wantKeys)
		if !slices.Equal(gotKeys, wantKeys) {
			t.Errorf("%ss:\n chart:     %v\n kustomize: %v", kind, gotKeys, wantKeys)
		}
	}
	gotOpts, _ := managerArgs(t, stringArgs(container(t, got.find("Deployment", releaseNamespace, "perfexp-manager"))))
	wantOpts, _ := managerArgs(t, stringArgs(container(t, want.find("Deployment", releaseNamespace, "perfexp-manager"))))
	gotOpts.LeaseNamespace, wantOpts.LeaseNamespace = "", ""
	if !reflect.DeepEqual(gotOpts, wantOpts) {
		t.Errorf("manager options differ:\n chart:     %+v\n kustomize: %+v", gotOpts, wantOpts)
	}
}

// The manager is told the admission policies under the names this release gives them, and
// checks none when the chart installs none.
func TestAdmissionPoliciesFlag(t *testing.T) {
	tests := []struct {
		name   string
		values map[string]any
		want   []string
	}{
		{name: "default", want: []string{"perfexp-no-escalation", "perfexp-spec-frozen"}},
		{name: "another prefix", values: map[string]any{"fullnameOverride": "perf-b"}, want: []string{"perf-b-no-escalation", "perf-b-spec-frozen"}},
		{name: "policies off", values: map[string]any{"admissionPolicies": map[string]any{"enabled": false}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := render(t, tt.values)
			var deploy *unstructured.Unstructured
			for _, d := range got.kinds("Deployment") {
				deploy = d
			}
			opts, _ := managerArgs(t, stringArgs(container(t, deploy)))
			if !slices.Equal(opts.AdmissionPolicies, tt.want) {
				t.Errorf("--admission-policies %v, want %v", opts.AdmissionPolicies, tt.want)
			}
			for _, p := range tt.want {
				if got.find("ValidatingAdmissionPolicy", "", p) == nil || got.find("ValidatingAdmissionPolicyBinding", "", p) == nil {
					t.Errorf("the manager requires %s, which the chart does not install and bind", p)
				}
			}
		})
	}
}

// config/namespaced's two halves: cluster-admin/ holds only what needs a cluster admin
// (cluster-scoped objects and the bindings), namespace-admin/ only namespaced objects in
// perfexp-system, and together they are config/namespaced.
func TestNamespacedKustomizeSplit(t *testing.T) {
	build := func(dir string) rendered {
		k := krusty.MakeKustomizer(krusty.MakeDefaultOptions())
		resMap, err := k.Run(filesys.MakeFsOnDisk(), filepath.Join(root(t), "config", "namespaced", dir))
		if err != nil {
			t.Fatalf("kustomize build config/namespaced/%s: %v", dir, err)
		}
		stream, err := resMap.AsYaml()
		if err != nil {
			t.Fatal(err)
		}
		return rendered{objects: decodeAll(t, string(stream))}
	}
	key := func(o *unstructured.Unstructured) string {
		return o.GetKind() + " " + o.GetNamespace() + "/" + o.GetName()
	}
	whole, cluster, ns := build(""), build("cluster-admin"), build("namespace-admin")
	for _, o := range cluster.objects {
		if !clusterScoped.Has(o.GetKind()) && o.GetKind() != "RoleBinding" && o.GetKind() != "CustomResourceDefinition" && o.GetKind() != "Namespace" {
			t.Errorf("cluster-admin/ has %s, which the namespace admin can create", key(o))
		}
	}
	for _, o := range ns.objects {
		if o.GetNamespace() != "perfexp-system" || strings.HasSuffix(o.GetKind(), "Binding") {
			t.Errorf("namespace-admin/ has %s, beyond the admin role of perfexp-system", key(o))
		}
	}
	var got, want []string
	for _, o := range append(cluster.objects, ns.objects...) {
		got = append(got, key(o))
	}
	for _, o := range whole.objects {
		want = append(want, key(o))
	}
	sort.Strings(got)
	sort.Strings(want)
	if !slices.Equal(got, want) {
		t.Errorf("cluster-admin + namespace-admin:\n %v\nconfig/namespaced:\n %v", got, want)
	}
	if ns.find("Deployment", "perfexp-system", "perfexp-manager") == nil || cluster.find("ClusterRole", "", "perfexp-edit") == nil {
		t.Error("the manager or the user roles are missing from their half")
	}
}
