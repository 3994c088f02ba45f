package charts_test

import (
	"strings"
	"testing"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/perfexp/perfexp/internal/testenv"
)

// The user roles as the API server's RBAC authorizer reads them: a user bound to perfexp-edit
// in a namespace may create experiments there and nowhere else; one bound to perfexp-view may
// read them and not create one. (The aggregation into edit and view is done by
// kube-controller-manager, which envtest does not run: TestUserRoles checks its labels.)
func TestUserRolesAuthorize(t *testing.T) {
	env := testenv.Start(t)
	ctx := t.Context()
	for _, ns := range []string{"team-a", "team-b"} {
		if err := env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
			t.Fatal(err)
		}
	}
	r := render(t, nil)
	for _, name := range []string{"perfexp-edit", "perfexp-view"} {
		role := r.find("ClusterRole", "", name)
		if role == nil {
			t.Fatalf("no ClusterRole %s rendered", name)
		}
		if err := env.Client.Apply(ctx, client.ApplyConfigurationFromUnstructured(role), client.FieldOwner("helm")); err != nil {
			t.Fatal(err)
		}
	}
	for user, role := range map[string]string{"alice": "perfexp-edit", "bob": "perfexp-view"} {
		rb := &rbacv1.RoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: user, Namespace: "team-a"},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role},
			Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: user}},
		}
		if err := env.Client.Create(ctx, rb); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		user, verb, resource, namespace string
		want                            bool
	}{
		{"alice", "create", "perfexperiments", "team-a", true},
		{"alice", "patch", "perfexperiments", "team-a", true}, // spec.abort
		{"alice", "create", "perfsweeps", "team-a", true},
		{"alice", "create", "perfexperiments", "team-b", false},
		{"alice", "update", "perfexperiments/status", "team-a", false},
		{"alice", "delete", "perfhistories", "team-a", false},
		{"bob", "list", "perfexperiments", "team-a", true},
		{"bob", "get", "perfhistories", "team-a", true},
		{"bob", "create", "perfexperiments", "team-a", false},
		{"bob", "patch", "perfexperiments", "team-a", false},
	}
	for _, tt := range tests {
		resource, sub, _ := strings.Cut(tt.resource, "/")
		sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
			User: tt.user,
			ResourceAttributes: &authorizationv1.ResourceAttributes{
				Namespace: tt.namespace, Verb: tt.verb, Group: "perfexp.dev", Resource: resource, Subresource: sub,
			},
		}}
		// RBAC bindings reach the authorizer's cache a moment after they are written.
		var allowed bool
		for range 50 {
			if err := env.Client.Create(ctx, sar); err != nil {
				t.Fatal(err)
			}
			if allowed = sar.Status.Allowed; allowed == tt.want {
				break
			}
			sar.Status = authorizationv1.SubjectAccessReviewStatus{}
			time.Sleep(100 * time.Millisecond)
		}
		if allowed != tt.want {
			t.Errorf("%s %s %s in %s: allowed %v, want %v", tt.user, tt.verb, tt.resource, tt.namespace, allowed, tt.want)
		}
	}
}
