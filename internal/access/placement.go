package access

import (
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
)

// Placement bounds where runner pods may be scheduled (spec.load.pod.tolerations and
// nodeSelector). A toleration is what lets a pod onto a tainted node: the control plane, the
// nodes another team keeps to itself, expensive GPU nodes. So none is allowed unless the
// administrator lists it. A node selector only narrows the nodes a pod could be scheduled on
// anyway, and without a toleration it cannot reach a tainted node: any is allowed unless the
// administrator lists the ones that may be used.
type Placement struct {
	// Tolerations are the tolerations runner pods may carry, each "key", "key=value",
	// "key:Effect" or "key=value:Effect" (no value: any value or Exists; no effect: any
	// effect); "*" allows any toleration. Empty: none.
	Tolerations []string
	// NodeSelectors, when not empty, are the node selector terms runner pods may use, each
	// "key=value", "key=*" or "key" (any value). Empty: any.
	NodeSelectors []string
}

// Check refuses a runner pod (what names it, for the message) whose tolerations or node
// selector fall outside the rules.
func (p Placement) Check(what string, nodeSelector map[string]string, tolerations []corev1.Toleration) *Refusal {
	for _, t := range tolerations {
		if !slices.ContainsFunc(p.Tolerations, func(entry string) bool { return tolerationAllowed(entry, t) }) {
			allowed := "none"
			if len(p.Tolerations) > 0 {
				allowed = strings.Join(p.Tolerations, ", ")
			}
			return refuse(perfexpv1alpha1.ReasonPodNotAllowed,
				"%s may not tolerate %s; allowed: %s (the operator's --allowed-runner-tolerations)", what, describeToleration(t), allowed)
		}
	}
	if len(p.NodeSelectors) == 0 {
		return nil
	}
	keys := make([]string, 0, len(nodeSelector))
	for k := range nodeSelector {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if !slices.ContainsFunc(p.NodeSelectors, func(entry string) bool { return selectorAllowed(entry, k, nodeSelector[k]) }) {
			return refuse(perfexpv1alpha1.ReasonPodNotAllowed,
				"%s may not select nodes by %s=%s; allowed: %s (the operator's --allowed-runner-node-selectors)", what, k, nodeSelector[k], strings.Join(p.NodeSelectors, ", "))
		}
	}
	return nil
}

// CheckRunner checks the placement an experiment asks for its load pods.
func (p Placement) CheckRunner(what string, pod *perfexpv1alpha1.RunnerPod) *Refusal {
	if pod == nil {
		return nil
	}
	return p.Check(what, pod.NodeSelector, pod.Tolerations)
}

func tolerationAllowed(entry string, t corev1.Toleration) bool {
	if entry == "*" {
		return true
	}
	rest, effect, hasEffect := strings.Cut(entry, ":")
	key, value, hasValue := strings.Cut(rest, "=")
	if t.Key == "" || t.Key != key {
		return false // an empty key with Exists tolerates every taint: only "*" allows it
	}
	if hasValue && (t.Operator == corev1.TolerationOpExists || t.Value != value) {
		return false
	}
	// A toleration with no effect matches every effect of the key.
	return !hasEffect || string(t.Effect) == effect
}

func selectorAllowed(entry, key, value string) bool {
	k, v, hasValue := strings.Cut(entry, "=")
	return k == key && (!hasValue || v == "*" || v == value)
}

func describeToleration(t corev1.Toleration) string {
	s := t.Key
	if s == "" {
		s = "every taint"
	}
	if t.Operator != corev1.TolerationOpExists && t.Value != "" {
		s += "=" + t.Value
	}
	if t.Effect != "" {
		s += ":" + string(t.Effect)
	}
	return fmt.Sprintf("%q", s)
}
