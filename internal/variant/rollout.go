package variant

import (
	"context"
	"fmt"
	"sort"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
)

// rollout is where a workload's rollout stands.
type rollout struct {
	// done is true once the rollout finished.
	done bool
	// waiting says what the rollout waits for.
	waiting string
	// failed says why the rollout cannot finish by waiting (empty when it still may).
	failed string
}

// revisionAnnotation is the Deployment controller's revision counter, kept on the Deployment
// and on each of its ReplicaSets; the new ReplicaSet carries the Deployment's revision.
const revisionAnnotation = "deployment.kubernetes.io/revision"

// deploymentRollout judges a Deployment the way `kubectl rollout status` does: the controller
// saw the latest spec, every replica is updated, no old replica is left, and every updated
// replica is ready and available.
func deploymentRollout(d *appsv1.Deployment) rollout {
	if d.Generation > d.Status.ObservedGeneration {
		return rollout{waiting: "the Deployment controller to observe the new spec"}
	}
	for _, c := range d.Status.Conditions {
		if c.Type == appsv1.DeploymentProgressing && c.Status == corev1.ConditionFalse && c.Reason == "ProgressDeadlineExceeded" {
			return rollout{failed: fmt.Sprintf("the rollout exceeded its progress deadline: %s", c.Message)}
		}
	}
	want := int32(1)
	if d.Spec.Replicas != nil {
		want = *d.Spec.Replicas
	}
	s := d.Status
	switch {
	case s.UpdatedReplicas < want:
		return rollout{waiting: fmt.Sprintf("%d of %d new replicas updated", s.UpdatedReplicas, want)}
	case s.Replicas > s.UpdatedReplicas:
		return rollout{waiting: fmt.Sprintf("%d old replicas pending termination", s.Replicas-s.UpdatedReplicas)}
	case s.ReadyReplicas < s.UpdatedReplicas:
		return rollout{waiting: fmt.Sprintf("%d of %d updated replicas ready", s.ReadyReplicas, s.UpdatedReplicas)}
	case s.AvailableReplicas < s.UpdatedReplicas:
		return rollout{waiting: fmt.Sprintf("%d of %d updated replicas available", s.AvailableReplicas, s.UpdatedReplicas)}
	}
	return rollout{done: true}
}

// statefulSetRollout judges a StatefulSet the way `kubectl rollout status` does: the
// controller saw the latest spec, every replica is ready, and every pod runs the update
// revision (or, with a partition, every pod above it does).
func statefulSetRollout(s *appsv1.StatefulSet) rollout {
	if s.Status.ObservedGeneration == 0 || s.Generation > s.Status.ObservedGeneration {
		return rollout{waiting: "the StatefulSet controller to observe the new spec"}
	}
	want := int32(1)
	if s.Spec.Replicas != nil {
		want = *s.Spec.Replicas
	}
	if s.Status.ReadyReplicas < want {
		return rollout{waiting: fmt.Sprintf("%d of %d replicas ready", s.Status.ReadyReplicas, want)}
	}
	if ru := s.Spec.UpdateStrategy.RollingUpdate; s.Spec.UpdateStrategy.Type == appsv1.RollingUpdateStatefulSetStrategyType && ru != nil && ru.Partition != nil && *ru.Partition > 0 {
		if s.Status.UpdatedReplicas < want-*ru.Partition {
			return rollout{waiting: fmt.Sprintf("%d of %d pods above the partition updated", s.Status.UpdatedReplicas, want-*ru.Partition)}
		}
		return rollout{done: true}
	}
	if s.Status.UpdateRevision != s.Status.CurrentRevision {
		return rollout{waiting: fmt.Sprintf("%d of %d pods at the update revision %s", s.Status.UpdatedReplicas, want, s.Status.UpdateRevision)}
	}
	return rollout{done: true}
}

// badWaitingReasons are container states that waiting will not fix on its own.
var badWaitingReasons = map[string]bool{
	"CrashLoopBackOff":           true,
	"ImagePullBackOff":           true,
	"ErrImagePull":               true,
	"InvalidImageName":           true,
	"CreateContainerConfigError": true,
	"CreateContainerError":       true,
}

// podProblem names the first pod of a new revision that cannot start: a container crash
// looping or unable to get its image, or a pod that cannot be scheduled.
func podProblem(pods []corev1.Pod) string {
	sort.Slice(pods, func(i, j int) bool { return pods[i].Name < pods[j].Name })
	for _, p := range pods {
		if p.DeletionTimestamp != nil {
			continue
		}
		for _, cond := range p.Status.Conditions {
			if cond.Type == corev1.PodScheduled && cond.Status == corev1.ConditionFalse && cond.Reason == corev1.PodReasonUnschedulable {
				return fmt.Sprintf("pod %s is unschedulable: %s", p.Name, cond.Message)
			}
		}
		statuses := append(append([]corev1.ContainerStatus{}, p.Status.InitContainerStatuses...), p.Status.ContainerStatuses...)
		for _, cs := range statuses {
			if w := cs.State.Waiting; w != nil && badWaitingReasons[w.Reason] {
				msg := fmt.Sprintf("pod %s container %s is in %s", p.Name, cs.Name, w.Reason)
				if w.Message != "" {
					msg += ": " + w.Message
				}
				return msg
			}
		}
	}
	return ""
}

// rolloutOf judges the rollout of a Deployment or StatefulSet and, while it is unfinished,
// looks at the pods of the new revision for a reason it cannot finish.
func (e *Environment) rolloutOf(ctx context.Context, u *unstructured.Unstructured) (rollout, error) {
	switch perfexpv1alpha1.WorkloadKind(u.GetKind()) {
	case perfexpv1alpha1.WorkloadKindDeployment:
		d := &appsv1.Deployment{}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, d); err != nil {
			return rollout{}, err
		}
		r := deploymentRollout(d)
		if r.done || r.failed != "" {
			return r, nil
		}
		problem, err := e.deploymentPodProblem(ctx, d)
		if err != nil {
			return rollout{}, err
		}
		r.failed = problem
		return r, nil
	case perfexpv1alpha1.WorkloadKindStatefulSet:
		s := &appsv1.StatefulSet{}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, s); err != nil {
			return rollout{}, err
		}
		r := statefulSetRollout(s)
		if r.done || s.Status.UpdateRevision == "" {
			return r, nil
		}
		sel, err := metav1.LabelSelectorAsSelector(s.Spec.Selector)
		if err != nil {
			return r, nil
		}
		pods, err := e.podsOf(ctx, s.Namespace, sel, s.UID, map[string]string{appsv1.ControllerRevisionHashLabelKey: s.Status.UpdateRevision})
		if err != nil {
			return rollout{}, err
		}
		r.failed = podProblem(pods)
		return r, nil
	}
	return rollout{done: true}, nil
}

// deploymentPodProblem finds the Deployment's new ReplicaSet (the one carrying the
// Deployment's revision) and looks at its pods.
func (e *Environment) deploymentPodProblem(ctx context.Context, d *appsv1.Deployment) (string, error) {
	rev := d.Annotations[revisionAnnotation]
	if rev == "" || d.Spec.Selector == nil {
		return "", nil
	}
	sel, err := metav1.LabelSelectorAsSelector(d.Spec.Selector)
	if err != nil {
		return "", nil
	}
	var rsList appsv1.ReplicaSetList
	if err := e.reader.List(ctx, &rsList, client.InNamespace(d.Namespace), client.MatchingLabelsSelector{Selector: sel}); err != nil {
		return "", fmt.Errorf("listing ReplicaSets of Deployment %s/%s: %w", d.Namespace, d.Name, err)
	}
	for i := range rsList.Items {
		rs := &rsList.Items[i]
		if rs.Annotations[revisionAnnotation] != rev || !metav1.IsControlledBy(rs, d) {
			continue
		}
		rsSel, err := metav1.LabelSelectorAsSelector(rs.Spec.Selector)
		if err != nil {
			return "", nil
		}
		pods, err := e.podsOf(ctx, d.Namespace, rsSel, rs.UID, nil)
		if err != nil {
			return "", err
		}
		return podProblem(pods), nil
	}
	return "", nil
}

// podsOf lists the pods controlled by owner that match sel and carry the extra labels.
func (e *Environment) podsOf(ctx context.Context, ns string, sel labels.Selector, owner types.UID, extra map[string]string) ([]corev1.Pod, error) {
	for k, v := range extra {
		req, err := labels.NewRequirement(k, selection.Equals, []string{v})
		if err != nil {
			return nil, err
		}
		sel = sel.Add(*req)
	}
	var pods corev1.PodList
	if err := e.reader.List(ctx, &pods, client.InNamespace(ns), client.MatchingLabelsSelector{Selector: sel}); err != nil {
		return nil, fmt.Errorf("listing pods in %s: %w", ns, err)
	}
	out := pods.Items[:0]
	for _, p := range pods.Items {
		if ref := metav1.GetControllerOf(&p); ref != nil && ref.UID == owner {
			out = append(out, p)
		}
	}
	return out, nil
}

// summarize joins waiting messages, naming the first few and counting the rest.
func summarize(msgs []string) string {
	const shown = 3
	if len(msgs) <= shown {
		return strings.Join(msgs, "; ")
	}
	return fmt.Sprintf("%s; and %d more", strings.Join(msgs[:shown], "; "), len(msgs)-shown)
}
