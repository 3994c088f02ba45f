package variant

import (
	"slices"
	"testing"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
)

func TestDeclaredFields(t *testing.T) {
	c := podTemplatePath.item("api")
	snap := &Snapshot{Version: snapshotVersion, Changes: []Change{
		{Path: c.key("resources", "limits", "cpu")},
		{Path: c.key("image")},
		{Path: c.key("env").item("GOGC")},
		{Path: c.key("env")},
		{Path: replicasPath},
		{Path: path("spec", "template", "spec", "nodeSelector", "pool")},
		{Path: path("spec", "template", "metadata", "annotations", "x")},
		{Path: path("metadata", "annotations", "strimzi.io/kraft")},
		{Path: c},
		{Path: podTemplatePath},
	}}
	s, err := snap.encode()
	if err != nil {
		t.Fatal(err)
	}
	got := DeclaredFields(perfexpv1alpha1.TouchedObject{Snapshot: s})
	want := []string{"resources/api/limits.cpu", "image/api", "env/api/GOGC", "env/api", "replicas", "nodes", "container/api", "*"}
	if !slices.Equal(got, want) {
		t.Fatalf("declared = %q, want %q", got, want)
	}
	if got := DeclaredFields(perfexpv1alpha1.TouchedObject{Snapshot: "not json"}); !slices.Equal(got, []string{"*"}) {
		t.Fatalf("unreadable snapshot: %q", got)
	}
}
