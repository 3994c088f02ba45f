package variant

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// managerOf names who changed a drifted field from managedFields: the owner of the field
// (through the scale subresource too), never perfexp itself nor a status writer, and for a
// field nobody owns any more the last writer, said to be a guess.
func TestManagerOf(t *testing.T) {
	at := func(s int) *metav1.Time { return &metav1.Time{Time: time.Date(2026, 1, 2, 3, 4, s, 0, time.UTC)} }
	entry := func(manager, sub string, s int, fields string) metav1.ManagedFieldsEntry {
		return metav1.ManagedFieldsEntry{Manager: manager, Operation: metav1.ManagedFieldsOperationUpdate, Subresource: sub, Time: at(s),
			FieldsV1: metav1.NewFieldsV1(fields)}
	}
	image := podTemplatePath.item("app").key("image")
	limit := podTemplatePath.item("app").key("resources", "limits", "cpu")
	entries := []metav1.ManagedFieldsEntry{
		entry("kubectl-create", "", 1, `{"f:spec":{"f:template":{"f:spec":{"f:containers":{"k:{\"name\":\"app\"}":{".":{},"f:name":{},"f:resources":{"f:requests":{"f:cpu":{}}}}}}}}}`),
		entry("perfexp", "", 2, `{"f:spec":{"f:template":{"f:spec":{"f:containers":{"k:{\"name\":\"app\"}":{"f:image":{}}}}}}}`),
		entry("argocd-application-controller", "", 3, `{"f:spec":{"f:template":{"f:spec":{"f:containers":{"k:{\"name\":\"app\"}":{"f:image":{}}}}}}}`),
		entry("kube-controller-manager", "scale", 4, `{"f:spec":{"f:replicas":{}}}`),
		entry("kube-controller-manager", "status", 9, `{"f:status":{"f:replicas":{}}}`),
	}
	bootstrap := podTemplatePath.item("app").key("env").item("KAFKA_BOOTSTRAP")
	envValue := func(manager string, s int) metav1.ManagedFieldsEntry {
		return entry(manager, "", s, `{"f:spec":{"f:template":{"f:spec":{"f:containers":{"k:{\"name\":\"app\"}":{"f:env":{"k:{\"name\":\"KAFKA_BOOTSTRAP\"}":{"f:value":{}}}}}}}}}`)
	}
	envEntries := []metav1.ManagedFieldsEntry{
		entry("kubectl-client-side-apply", "", 1, `{"f:spec":{"f:template":{"f:spec":{"f:containers":{"k:{\"name\":\"app\"}":{".":{},"f:name":{},"f:env":{".":{},"k:{\"name\":\"KAFKA_BOOTSTRAP\"}":{".":{},"f:name":{}}}}}}}}}`),
		envValue("perfexp", 2),
	}
	tests := []struct {
		name    string
		entries []metav1.ManagedFieldsEntry
		path    Path
		want    string
	}{
		{"the owner of the field, not perfexp", entries, image, `"argocd-application-controller" (Update at 03:04:03)`},
		{"replicas through the scale subresource", entries, replicasPath, `"kube-controller-manager" (Update of scale at 03:04:04)`},
		{"a removed field: the last writer, not the status writer", entries, limit, `"kube-controller-manager" (Update of scale at 03:04:04) (probably`},
		{"only perfexp wrote", entries[1:2], image, `"perfexp" (Update at 03:04:02) (perfexp itself)`},
		{"nobody wrote", nil, image, "unknown"},
		// kubectl apply keeps the env var's name after perfexp changed its value: the value
		// is perfexp's, and a later writer of the value is named, not kubectl.
		{"an env var whose value perfexp wrote", envEntries, bootstrap, `"perfexp" (Update at 03:04:02) (perfexp itself)`},
		{"an env var whose value another writer wrote", append(envEntries, envValue("argocd-application-controller", 5)), bootstrap,
			`"argocd-application-controller" (Update at 03:04:05)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := managerOf(tt.entries, tt.path, "perfexp"); !strings.HasPrefix(got, tt.want) {
				t.Fatalf("managerOf = %q, want it to start with %q", got, tt.want)
			}
		})
	}
}
