// Package access holds the operator's own rules on what an experiment may reach: which
// namespaces it may patch or read, which kinds a generic patch may target, which Prometheus it
// may query and which service accounts and images its pods may use.
//
// They are the second of two gates. The first, the admission policy in config/policy, checks
// the person who applies an experiment against the API server's authorizer; these rules are
// what the operator enforces whoever created the experiment, before its first write. See
// docs/security.md.
package access

import (
	"context"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
)

// The namespaces of the cluster itself: never patched or read for an experiment, whatever the
// flags and labels say.
var systemNamespaces = []string{"kube-system", "kube-public", "kube-node-lease"}

// DefaultGenericPatchKinds are the kinds a generic patch may target unless
// --generic-patch-kinds says otherwise: configuration and the workloads' own objects, none
// that grants rights (Roles, ServiceAccounts) or holds secrets.
var DefaultGenericPatchKinds = []string{
	"ConfigMap",
	"Service",
	"Deployment.apps",
	"StatefulSet.apps",
	"HorizontalPodAutoscaler.autoscaling",
	"Kafka.kafka.strimzi.io",
}

// Rules are the operator's access rules. The zero value refuses every namespace that is not
// labelled and every generic patch kind.
type Rules struct {
	// Reader reads Namespaces for their opt-in label. Required unless every namespace used is
	// listed in AllowedNamespaces.
	Reader Reader
	// AllowedNamespaces may be used without the opt-in label.
	AllowedNamespaces []string
	// OperatorNamespaces are the operator's own (its Leases, its service account): never used.
	OperatorNamespaces []string
	// WatchedNamespaces, when not empty, are the only namespaces an experiment may use: the
	// operator is installed for them alone (--watch-namespaces, a namespaced install), holds
	// rights nowhere else and may not read Namespaces, so being listed is their opt-in.
	WatchedNamespaces []string
	// GenericPatchKinds are the kinds variant.patches may target, as Kind.group (Kind alone
	// for the core group).
	GenericPatchKinds []string
	// RunnerServiceAccount is the service account setup, teardown and load pods run as when
	// the experiment names none; DefaultRunnerServiceAccount when empty.
	RunnerServiceAccount string
	// RunnerServiceAccounts are the other service accounts setup, teardown and load pods may
	// name (an entry ending in * matches by prefix). Empty: none.
	RunnerServiceAccounts []string
	// RunnerImages, when not empty, are the only images setup and load pods may run (the
	// operator's own k6 image is always allowed). An entry ending in * matches by prefix.
	RunnerImages []string
	// DefaultImage is the operator's k6 image.
	DefaultImage string
	// RunnerPlacement bounds the load pods' tolerations and node selector.
	RunnerPlacement Placement
	// PrometheusURLs, when not empty, are the URLs spec.analysis.prometheusURL may name
	// (checked here so a refused URL fails before the load, not after it; the analyzer checks
	// again).
	PrometheusURLs []string
}

// Reader reads objects; a controller-runtime client.Reader.
type Reader = client.Reader

// Refusal says why an experiment may not go on; Reason is a condition reason.
type Refusal struct {
	Reason  string
	Message string
}

func (r *Refusal) Error() string { return r.Message }

func refuse(reason, format string, args ...any) *Refusal {
	return &Refusal{Reason: reason, Message: fmt.Sprintf(format, args...)}
}

// Reserved reports whether ns is a namespace no experiment may ever use: the cluster's own or
// the operator's. It needs no API call, so restoring can use it too.
func (r *Rules) Reserved(ns string) bool {
	return slices.Contains(systemNamespaces, ns) || slices.Contains(r.OperatorNamespaces, ns)
}

// Namespace checks that an experiment may use namespace ns; use says what for ("patch",
// "read workloads in"), for the message.
func (r *Rules) Namespace(ctx context.Context, ns, use string) (*Refusal, error) {
	switch {
	case slices.Contains(systemNamespaces, ns):
		return refuse(perfexpv1alpha1.ReasonNamespaceNotAllowed, "perfexp may not %s namespace %s: kube-system, kube-public and kube-node-lease are never used for experiments", use, ns), nil
	case slices.Contains(r.OperatorNamespaces, ns):
		return refuse(perfexpv1alpha1.ReasonNamespaceNotAllowed, "perfexp may not %s namespace %s: it is the operator's own namespace", use, ns), nil
	case len(r.WatchedNamespaces) > 0:
		if slices.Contains(r.WatchedNamespaces, ns) {
			return nil, nil
		}
		return refuse(perfexpv1alpha1.ReasonNamespaceNotAllowed,
			"perfexp may not %s namespace %s: this operator is installed for namespaces %s only (its --watch-namespaces) and holds no rights elsewhere",
			use, ns, strings.Join(r.WatchedNamespaces, ", ")), nil
	case slices.Contains(r.AllowedNamespaces, ns):
		return nil, nil
	}
	if r.Reader == nil {
		return refuse(perfexpv1alpha1.ReasonNamespaceNotAllowed, "perfexp may not %s namespace %s: it is not in the operator's --allowed-namespaces", use, ns), nil
	}
	n := &corev1.Namespace{}
	if err := r.Reader.Get(ctx, client.ObjectKey{Name: ns}, n); err != nil {
		if apierrors.IsNotFound(err) {
			return refuse(perfexpv1alpha1.ReasonNamespaceNotAllowed, "perfexp may not %s namespace %s: it does not exist", use, ns), nil
		}
		return nil, fmt.Errorf("reading namespace %s for its %s label: %w", ns, perfexpv1alpha1.LabelAllowExperiments, err)
	}
	if n.Labels[perfexpv1alpha1.LabelAllowExperiments] != "true" {
		return refuse(perfexpv1alpha1.ReasonNamespaceNotAllowed,
			"perfexp may not %s namespace %s: the namespace has not opted in; its administrator can label it %s=true (or list it in the operator's --allowed-namespaces)",
			use, ns, perfexpv1alpha1.LabelAllowExperiments), nil
	}
	return nil, nil
}

// Experiment checks everything about exp that can be checked before its first write: the
// target namespace, every namespace it reads, the kinds of its generic patches, and the
// service accounts and images of its pods. The first problem found is returned.
func (r *Rules) Experiment(ctx context.Context, exp *perfexpv1alpha1.PerfExperiment) (*Refusal, error) {
	if ref := r.pods(exp); ref != nil {
		return ref, nil
	}
	if ref := r.patchKinds(exp.Spec.Variant); ref != nil {
		return ref, nil
	}
	if a := exp.Spec.Analysis; a != nil && a.PrometheusURL != "" && len(r.PrometheusURLs) > 0 {
		if ref := PrometheusURL(a.PrometheusURL, r.PrometheusURLs); ref != nil {
			return ref, nil
		}
	}
	if ref, err := r.Namespace(ctx, exp.TargetNamespace(), "patch or read"); ref != nil || err != nil {
		return ref, err
	}
	for _, read := range ReadNamespaces(exp) {
		if ref, err := r.Namespace(ctx, read.Namespace, "read "+read.What+" in"); ref != nil || err != nil {
			return ref, err
		}
	}
	return nil, nil
}

// ReadNamespaces checks only the namespaces exp reads besides its target (for the analysis,
// which runs after the environment is restored).
func (r *Rules) ReadNamespaces(ctx context.Context, exp *perfexpv1alpha1.PerfExperiment) (*Refusal, error) {
	for _, read := range ReadNamespaces(exp) {
		if ref, err := r.Namespace(ctx, read.Namespace, "read "+read.What+" in"); ref != nil || err != nil {
			return ref, err
		}
	}
	return nil, nil
}

// Read is a namespace an experiment reads, and what it reads there.
type Read struct {
	Namespace string
	What      string
}

// ReadNamespaces lists the namespaces other than its target that exp reads.
func ReadNamespaces(exp *perfexpv1alpha1.PerfExperiment) []Read {
	var out []Read
	target := exp.TargetNamespace()
	if a := exp.Spec.Analysis; a != nil {
		for _, o := range a.Observe {
			if o.Namespace != "" && o.Namespace != target {
				out = append(out, Read{Namespace: o.Namespace, What: "workloads (analysis.observe)"})
			}
		}
	}
	if v := exp.Spec.Variant; v != nil && v.Kafka != nil && v.Kafka.Bootstrap != nil {
		if fk := v.Kafka.Bootstrap.FromKafka; fk != nil && fk.Namespace != "" && fk.Namespace != target {
			out = append(out, Read{Namespace: fk.Namespace, What: "the Kafka resource (kafka.bootstrap.fromKafka)"})
		}
	}
	return out
}

// patchKinds refuses a generic patch whose kind is not in GenericPatchKinds.
func (r *Rules) patchKinds(v *perfexpv1alpha1.Variant) *Refusal {
	if v == nil {
		return nil
	}
	for i, p := range v.Patches {
		gv, err := schema.ParseGroupVersion(p.Target.APIVersion)
		if err != nil {
			return refuse(perfexpv1alpha1.ReasonInvalidVariant, "variant.patches[%d]: apiVersion %q: %v", i, p.Target.APIVersion, err)
		}
		gk := schema.GroupKind{Group: gv.Group, Kind: p.Target.Kind}
		if !slices.Contains(r.GenericPatchKinds, gk.String()) {
			return refuse(perfexpv1alpha1.ReasonPatchKindNotAllowed,
				"variant.patches[%d] targets %s, a kind the operator does not patch; allowed kinds: %s (the operator's --generic-patch-kinds)",
				i, gk.String(), strings.Join(r.GenericPatchKinds, ", "))
		}
	}
	return nil
}

// PrometheusURL checks a Prometheus URL an experiment asks for against allowed. Entries match
// exactly, ignoring a trailing slash; an entry ending in * matches by prefix.
func PrometheusURL(url string, allowed []string) *Refusal {
	if matchAny(allowed, url) {
		return nil
	}
	return refuse(perfexpv1alpha1.ReasonPrometheusURLNotAllowed,
		"spec.analysis.prometheusURL %s is not one the operator may query (its --allowed-prometheus-urls: %s); remove it to use the operator's own Prometheus",
		url, strings.Join(allowed, ", "))
}

func matchAny(patterns []string, s string) bool {
	for _, p := range patterns {
		if prefix, ok := strings.CutSuffix(p, "*"); ok {
			if strings.HasPrefix(s, prefix) {
				return true
			}
			continue
		}
		if strings.TrimRight(p, "/") == strings.TrimRight(s, "/") {
			return true
		}
	}
	return false
}
