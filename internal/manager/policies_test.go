package manager

import (
	"strings"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/perfexp/perfexp/internal/testenv"
)

// The operator refuses to start unless each admission policy it is told to rely on exists and
// a binding enforces it (Deny); a binding that only warns or audits does not count.
func TestRequirePolicies(t *testing.T) {
	policy := func(name string) client.Object {
		return &admissionregistrationv1.ValidatingAdmissionPolicy{ObjectMeta: metav1.ObjectMeta{Name: name}}
	}
	binding := func(name, policy string, actions ...admissionregistrationv1.ValidationAction) client.Object {
		return &admissionregistrationv1.ValidatingAdmissionPolicyBinding{ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{PolicyName: policy, ValidationActions: actions}}
	}
	names := []string{"perfexp-no-escalation", "perfexp-spec-frozen"}
	tests := []struct {
		name    string
		objects []client.Object
		says    []string // empty: starts
	}{
		{name: "both bound", objects: []client.Object{policy(names[0]), policy(names[1]),
			binding("a", names[0], admissionregistrationv1.Deny), binding("b", names[1], admissionregistrationv1.Deny, admissionregistrationv1.Audit)}},
		{name: "none installed", says: []string{"perfexp-no-escalation does not exist", "perfexp-spec-frozen does not exist"}},
		{name: "one without a binding", objects: []client.Object{policy(names[0]), policy(names[1]), binding("a", names[0], admissionregistrationv1.Deny)},
			says: []string{"perfexp-spec-frozen has no binding with validationActions Deny"}},
		{name: "a binding that only warns", objects: []client.Object{policy(names[0]), policy(names[1]),
			binding("a", names[0], admissionregistrationv1.Deny), binding("b", names[1], admissionregistrationv1.Warn)},
			says: []string{"perfexp-spec-frozen has no binding"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := fake.NewClientBuilder().WithScheme(testenv.Scheme()).WithObjects(tt.objects...).Build()
			err := requirePolicies(t.Context(), r, names, 0)
			if len(tt.says) == 0 {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil {
				t.Fatal("started without its admission policies")
			}
			for _, s := range tt.says {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("%v does not say %q", err, s)
				}
			}
		})
	}
	if err := requirePolicies(t.Context(), nil, nil, time.Minute); err != nil {
		t.Errorf("no policies named: %v", err)
	}
}
