package variant

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
)

// deployObj is a fresh copy of deployYAML, for a test to change.
func deployObj(t *testing.T) map[string]any {
	t.Helper()
	out := map[string]any{}
	if err := yaml.Unmarshal([]byte(deployYAML), &out); err != nil {
		t.Fatal(err)
	}
	return out
}

const deployYAML = `
metadata:
  name: app
spec:
  replicas: 2
  template:
    spec:
      containers:
      - name: app
        image: app:1
        env:
        - {name: A, value: "1"}
        - {name: B, valueFrom: {fieldRef: {fieldPath: metadata.name}}}
        - {name: C, value: "3"}
        resources:
          requests: {cpu: 100m}
          limits: {cpu: 250m, memory: 128Mi}
      - name: sidecar
        image: side:1
`

var appC = podTemplatePath.item("app")

func TestPathRoundTrip(t *testing.T) {
	p := appC.key("env").item("B").key("valueFrom")
	b, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	want := `["spec","template","spec","containers",{"name":"app"},"env",{"name":"B"},"valueFrom"]`
	if string(b) != want {
		t.Fatalf("marshalled %s, want %s", b, want)
	}
	var back Path
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, p) {
		t.Fatalf("read back %v, want %v", back, p)
	}
	if s := path("metadata", "annotations", "strimzi.io/kraft").String(); s != `metadata.annotations["strimzi.io/kraft"]` {
		t.Fatalf("String() = %s", s)
	}
}

// Every edit is undone exactly by unwinding its snapshot, whatever the field was before.
func TestEditsUnwindExactly(t *testing.T) {
	tests := []struct {
		name  string
		edits []edit
		check func(t *testing.T, o map[string]any)
	}{{
		name:  "remove the CPU limit",
		edits: []edit{{path: appC.key("resources", "limits", "cpu"), remove: true}},
		check: func(t *testing.T, o map[string]any) {
			if _, found, _ := get(o, appC.key("resources", "limits", "cpu")); found {
				t.Error("the CPU limit is still there")
			}
		},
	}, {
		name:  "add a limit to a container without resources",
		edits: []edit{{path: podTemplatePath.item("sidecar").key("resources", "limits", "cpu"), value: "1"}},
	}, {
		name: "change, add and remove env vars",
		edits: []edit{
			{path: appC.key("env").item("A"), value: map[string]any{"name": "A", "value": "50"}},
			{path: appC.key("env").item("D"), value: map[string]any{"name": "D", "value": "4"}},
			{path: appC.key("env").item("B"), remove: true},
		},
		check: func(t *testing.T, o map[string]any) {
			env, _, _ := get(o, appC.key("env"))
			var names []string
			for _, e := range env.([]any) {
				names = append(names, e.(map[string]any)["name"].(string))
			}
			if !reflect.DeepEqual(names, []string{"A", "C", "D"}) {
				t.Errorf("env after the edits = %v", names)
			}
		},
	}, {
		name:  "env on a container without env",
		edits: []edit{{path: podTemplatePath.item("sidecar").key("env").item("X"), value: map[string]any{"name": "X", "value": "x"}}},
	}, {
		name:  "replicas and image",
		edits: []edit{{path: replicasPath, value: int64(5)}, {path: appC.key("image"), value: "app:2"}},
	}, {
		name:  "remove what is absent",
		edits: []edit{{path: appC.key("resources", "requests", "memory"), remove: true}, {path: appC.key("env").item("NOPE"), remove: true}},
	}, {
		name:  "annotation on an object without annotations",
		edits: []edit{{path: path("metadata", "annotations", "strimzi.io/kraft"), value: "enabled"}},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := deployObj(t)
			o := deployObj(t)
			changes, err := (&fieldOp{src: "workloads[0]", edits: tt.edits}).apply(o)
			if err != nil {
				t.Fatal(err)
			}
			if tt.check != nil {
				tt.check(t, o)
			}
			if err := fillAfter(o, changes); err != nil {
				t.Fatal(err)
			}
			snap := &Snapshot{Version: snapshotVersion, Changes: changes}
			enc, err := snap.encode()
			if err != nil {
				t.Fatal(err)
			}
			back, err := decodeSnapshot(enc)
			if err != nil {
				t.Fatal(err)
			}
			if d := drifts(o, back); len(d) != 0 {
				t.Fatalf("drift right after the change: %+v", d)
			}
			if skipped := unwind(o, back); len(skipped) > 0 {
				t.Fatal(skipped)
			}
			if !sameJSON(o, before) {
				a, _ := json.Marshal(o)
				b, _ := json.Marshal(before)
				t.Fatalf("after unwinding:\n%s\nwant:\n%s", a, b)
			}
		})
	}
}

// A generic patch records exactly the fields it changes, for each patch type.
func TestPatchOpRecordsChangedPaths(t *testing.T) {
	tests := []struct {
		name  string
		typ   perfexpv1alpha1.PatchType
		doc   string
		paths []string
	}{
		{"merge adds and removes keys", perfexpv1alpha1.PatchTypeMerge,
			`{"spec":{"replicas":3,"paused":true},"metadata":{"labels":{"x":"y"}}}`,
			[]string{"metadata.labels", "spec.paused", "spec.replicas"}},
		{"JSON patch", perfexpv1alpha1.PatchTypeJSON,
			`[{"op":"replace","path":"/spec/template/spec/containers/1/image","value":"side:2"}]`,
			[]string{"spec.template.spec.containers"}},
		{"merge with null removes", perfexpv1alpha1.PatchTypeMerge,
			`{"spec":{"replicas":null}}`, []string{"spec.replicas"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := deployObj(t)
			o := deployObj(t)
			doc, err := patchDocument(tt.doc)
			if err != nil {
				t.Fatal(err)
			}
			changes, err := (&patchOp{src: "patches[0]", typ: tt.typ, doc: doc}).apply(o)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, c := range changes {
				got = append(got, c.Path.String())
			}
			if !reflect.DeepEqual(got, tt.paths) {
				t.Fatalf("changed paths %v, want %v", got, tt.paths)
			}
			if err := fillAfter(o, changes); err != nil {
				t.Fatal(err)
			}
			if skipped := unwind(o, &Snapshot{Changes: changes}); len(skipped) > 0 {
				t.Fatal(skipped)
			}
			if !sameJSON(o, before) {
				t.Fatalf("unwinding did not restore the object: %v", o)
			}
		})
	}
}

// Overlapping changes (a patch replacing the container list, then a workload change inside
// it) unwind to the original when undone newest first.
func TestOverlappingChangesUnwind(t *testing.T) {
	before := deployObj(t)
	o := deployObj(t)
	doc, _ := patchDocument(`[{"op":"replace","path":"/spec/template/spec/containers/0/image","value":"app:9"}]`)
	c1, err := (&patchOp{src: "patches[0]", typ: perfexpv1alpha1.PatchTypeJSON, doc: doc}).apply(o)
	if err != nil {
		t.Fatal(err)
	}
	c2, err := (&fieldOp{src: "workloads[0]", edits: []edit{{path: appC.key("resources", "limits", "cpu"), remove: true}}}).apply(o)
	if err != nil {
		t.Fatal(err)
	}
	snap := &Snapshot{Changes: append(c1, c2...)}
	if err := fillAfter(o, snap.Changes); err != nil {
		t.Fatal(err)
	}
	if d := drifts(o, snap); len(d) != 0 {
		t.Fatalf("drift right after the change: %+v", d)
	}
	if skipped := unwind(o, snap); len(skipped) > 0 {
		t.Fatal(skipped)
	}
	if !sameJSON(o, before) {
		t.Fatalf("unwinding did not restore the object: %v", o)
	}
}

func TestDriftNamesTheField(t *testing.T) {
	o := deployObj(t)
	changes, err := (&fieldOp{src: "workloads[0]", edits: []edit{{path: appC.key("resources", "limits", "cpu"), remove: true}}}).apply(o)
	if err != nil {
		t.Fatal(err)
	}
	if err := fillAfter(o, changes); err != nil {
		t.Fatal(err)
	}
	if err := set(o, appC.key("resources", "limits", "cpu"), "2", -1); err != nil {
		t.Fatal(err)
	}
	d := drifts(o, &Snapshot{Changes: changes})
	if len(d) != 1 || d[0].Path.String() != "spec.template.spec.containers[app].resources.limits.cpu" || d[0].Current != `"2"` || d[0].Want != "absent" {
		t.Fatalf("drifts = %+v", d)
	}
}

func TestNullIsNotAbsent(t *testing.T) {
	o := map[string]any{"a": nil}
	c, err := record(o, "s", path("a"))
	if err != nil {
		t.Fatal(err)
	}
	snap := &Snapshot{Version: snapshotVersion, Changes: []Change{c}}
	enc, _ := snap.encode()
	back, err := decodeSnapshot(enc)
	if err != nil {
		t.Fatal(err)
	}
	if absent(back.Changes[0].Before) {
		t.Fatalf("a null field was read back as absent: %s", enc)
	}
}

// The status keeps copies of snapshots only up to a bound; past it the annotation alone holds
// them, and the object is still recorded as touched.
func TestStatusSnapshotsAreBounded(t *testing.T) {
	exp := &perfexpv1alpha1.PerfExperiment{}
	big := &Snapshot{Version: snapshotVersion, Changes: []Change{{Source: "patches[0]", Path: path("data", "x"),
		Before: json.RawMessage(`"` + strings.Repeat("x", 60000) + `"`)}}}
	for i := range 12 {
		ref := objRef{APIVersion: "v1", Kind: "ConfigMap", Namespace: "ns", Name: fmt.Sprintf("cm-%d", i)}
		if err := recordTouched(exp, &target{ref: ref}, big, true); err != nil {
			t.Fatal(err)
		}
	}
	total, empty := 0, 0
	for _, tc := range exp.Status.Environment.Touched {
		total += len(tc.Snapshot)
		if tc.Snapshot == "" {
			empty++
		}
		if !tc.Patched {
			t.Fatalf("%s not recorded as patched", tc.Name)
		}
	}
	if total > maxStatusSnapshots || empty == 0 || empty == 12 {
		t.Fatalf("status holds %d bytes of snapshots, %d entries without: want at most %d bytes and some copies kept", total, empty, maxStatusSnapshots)
	}
}
