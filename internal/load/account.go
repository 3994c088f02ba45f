package load

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
)

// admitPod checks a runner pod (what names it) against the operator's rules as it is about
// to be created, whatever the spec said when the experiment left the queue, and makes sure the
// runner service account exists when the pod runs as it.
func (r *Runner) admitPod(ctx context.Context, exp *perfexpv1alpha1.PerfExperiment, what, account string, images ...string) error {
	if ref := r.opts.Pods.Check(what, account, images...); ref != nil {
		return failure(ref.Reason, "%s", ref.Message)
	}
	if account != r.opts.Pods.Account() {
		return nil
	}
	return r.ensureAccount(ctx, exp.Namespace)
}

// admitPlacement checks the load pods' tolerations and node selector as a load pod is about
// to be created.
func (r *Runner) admitPlacement(what string, pod *perfexpv1alpha1.RunnerPod) error {
	if ref := r.opts.Pods.Placement.CheckRunner(what, pod); ref != nil {
		return failure(ref.Reason, "%s", ref.Message)
	}
	return nil
}

// ensureAccount creates the runner service account in ns unless it exists. It holds no token
// (automountServiceAccountToken: false) and perfexp binds it to nothing; an administrator may
// create it beforehand, and perfexp then leaves it as it is. It belongs to no experiment, so
// it outlives them all.
func (r *Runner) ensureAccount(ctx context.Context, ns string) error {
	name := r.opts.Pods.Account()
	err := r.reader().Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &corev1.ServiceAccount{})
	if err == nil {
		return nil
	}
	if !apierrors.IsNotFound(err) {
		return fmt.Errorf("reading the runner service account %s: %w", name, err)
	}
	sa := &corev1.ServiceAccount{
		ObjectMeta: metav1.ObjectMeta{
			Name: name, Namespace: ns,
			Labels: map[string]string{labelManagedBy: managedBy, labelComponent: "runner"},
		},
		AutomountServiceAccountToken: ptr.To(false),
	}
	switch err := r.c.Create(ctx, sa); {
	case err == nil:
		log.FromContext(ctx).Info("Created the runner service account", "serviceAccount", ns+"/"+name)
		return nil
	case apierrors.IsAlreadyExists(err):
		return nil
	case apierrors.IsForbidden(err):
		return failure(perfexpv1alpha1.ReasonPodNotAllowed,
			"runner pods run as service account %s, which does not exist in namespace %s and perfexp may not create: ask the cluster administrator to create it (docs/security.md)", name, ns)
	default:
		return fmt.Errorf("creating the runner service account %s: %w", name, err)
	}
}
