package access

import (
	"context"
	"fmt"
	"slices"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// The operator reads the admission policies it relies on (config/policy) and their bindings, to
// refuse to start without them.
//
// +kubebuilder:rbac:groups=admissionregistration.k8s.io,resources=validatingadmissionpolicies;validatingadmissionpolicybindings,verbs=get;list

// UnboundPolicies returns, for each ValidatingAdmissionPolicy of names that is missing or that
// no binding enforces (validationActions with Deny), a sentence saying which and why. The
// policies are the first gate (who applies an experiment, see the package comment): without
// them an author could reach what only the operator's rights allow.
func UnboundPolicies(ctx context.Context, r Reader, names []string) ([]string, error) {
	bindings := &admissionregistrationv1.ValidatingAdmissionPolicyBindingList{}
	if err := r.List(ctx, bindings); err != nil {
		return nil, fmt.Errorf("listing ValidatingAdmissionPolicyBindings: %w", err)
	}
	var problems []string
	for _, name := range names {
		policy := &admissionregistrationv1.ValidatingAdmissionPolicy{}
		if err := r.Get(ctx, client.ObjectKey{Name: name}, policy); err != nil {
			if apierrors.IsNotFound(err) {
				problems = append(problems, fmt.Sprintf("ValidatingAdmissionPolicy %s does not exist", name))
				continue
			}
			return nil, fmt.Errorf("reading ValidatingAdmissionPolicy %s: %w", name, err)
		}
		enforced := false
		for _, b := range bindings.Items {
			if b.Spec.PolicyName == name && slices.Contains(b.Spec.ValidationActions, admissionregistrationv1.Deny) {
				enforced = true
				break
			}
		}
		if !enforced {
			problems = append(problems, fmt.Sprintf("ValidatingAdmissionPolicy %s has no binding with validationActions Deny", name))
		}
	}
	return problems, nil
}
