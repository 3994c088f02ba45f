package access

import (
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
)

// DefaultRunnerServiceAccount is the service account setup, teardown, warm-up and load pods
// run as when the experiment names none. perfexp creates it in the experiment's namespace
// when it is missing, with no token mounted and no rights: a runner pod needs none to send
// requests or to prepare data over the network.
const DefaultRunnerServiceAccount = "perfexp-runner"

// RunnerPods are the rules every pod perfexp creates for an experiment must pass, checked on
// the pod as it is about to be created (not only on the spec when the experiment leaves the
// queue), so nothing that reaches a Job or a TestRun escapes them.
type RunnerPods struct {
	// ServiceAccount is what runner pods run as unless the experiment names another;
	// DefaultRunnerServiceAccount when empty. Always allowed; mounted with no token.
	ServiceAccount string
	// ServiceAccounts are the other service accounts an experiment may name (an entry ending
	// in * matches by prefix, so * alone allows any). Empty: none.
	ServiceAccounts []string
	// Images, when not empty, are the only images runner pods may run (an entry ending in *
	// matches by prefix); DefaultImage is always allowed. Empty allows any: the manager passes
	// [DefaultImage] when --allowed-runner-images is empty.
	Images       []string
	DefaultImage string
	// Placement bounds the load pods' tolerations and node selector.
	Placement Placement
}

// Account is the service account runner pods run as when the experiment names none.
func (p RunnerPods) Account() string {
	if p.ServiceAccount == "" {
		return DefaultRunnerServiceAccount
	}
	return p.ServiceAccount
}

// Check refuses a runner pod (what names it, for the message) that would run as a service
// account or an image outside the rules. An empty service account is the namespace's
// "default", which is refused unless allowed like any other.
func (p RunnerPods) Check(what, serviceAccount string, images ...string) *Refusal {
	if serviceAccount == "" {
		serviceAccount = "default"
	}
	if serviceAccount != p.Account() && !matchAny(p.ServiceAccounts, serviceAccount) {
		allowed := append([]string{p.Account()}, p.ServiceAccounts...)
		return refuse(perfexpv1alpha1.ReasonPodNotAllowed,
			"%s may not run as service account %s; allowed: %s (the operator's --runner-service-account and --allowed-runner-service-accounts); leave serviceAccountName unset to run as %s, which holds no token",
			what, serviceAccount, strings.Join(allowed, ", "), p.Account())
	}
	if len(p.Images) > 0 {
		for _, img := range images {
			if img != "" && img != p.DefaultImage && !matchAny(p.Images, img) {
				return refuse(perfexpv1alpha1.ReasonPodNotAllowed, "%s may not run image %s; allowed: %s (the operator's --k6-image and --allowed-runner-images; its administrator may add the image or its registry there)", what, img, strings.Join(p.Images, ", "))
			}
		}
	}
	return nil
}

// CheckPod checks the service account, every container image and the placement of a pod
// template.
func (p RunnerPods) CheckPod(what string, spec *corev1.PodSpec) *Refusal {
	images := make([]string, 0, len(spec.InitContainers)+len(spec.Containers))
	for _, c := range slices.Concat(spec.InitContainers, spec.Containers) {
		images = append(images, c.Image)
	}
	if ref := p.Check(what, spec.ServiceAccountName, images...); ref != nil {
		return ref
	}
	return p.Placement.Check(what, spec.NodeSelector, spec.Tolerations)
}

// Runner is the runner pod part of the rules.
func (r *Rules) Runner() RunnerPods {
	return RunnerPods{ServiceAccount: r.RunnerServiceAccount, ServiceAccounts: r.RunnerServiceAccounts, Images: r.RunnerImages,
		DefaultImage: r.DefaultImage, Placement: r.RunnerPlacement}
}

// pods checks every runner pod an experiment asks for, as the spec says: the setup and
// teardown Jobs and the load (warm-up included). The load runner checks each pod again when it
// creates it.
func (r *Rules) pods(exp *perfexpv1alpha1.PerfExperiment) *Refusal {
	p := r.Runner()
	account := func(named string) string {
		if named == "" {
			return p.Account()
		}
		return named
	}
	var loadAccount string
	if pod := exp.Spec.Load.Pod; pod != nil {
		loadAccount = pod.ServiceAccountName
	}
	images := make([]string, 0, 1+len(exp.Spec.Load.Scenarios))
	images = append(images, exp.Spec.Load.Image)
	for _, s := range exp.Spec.Load.Scenarios {
		images = append(images, s.Image)
	}
	if ref := p.Check("the load's pods", account(loadAccount), images...); ref != nil {
		return ref
	}
	if ref := p.Placement.CheckRunner("the load's pods", exp.Spec.Load.Pod); ref != nil {
		return ref
	}
	for _, d := range []struct {
		what string
		spec *perfexpv1alpha1.Setup
	}{{"the setup Job", exp.Spec.Setup}, {"the teardown Job", exp.Spec.Teardown}} {
		if d.spec == nil {
			continue
		}
		if ref := p.Check(d.what, account(d.spec.ServiceAccountName), d.spec.Image); ref != nil {
			return ref
		}
	}
	return nil
}
