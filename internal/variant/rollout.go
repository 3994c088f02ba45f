package variant

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

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

// healthOf judges a workload's rollout from its own status, without reading its pods: what
// the snapshot records as the health to come back to.
func healthOf(u *unstructured.Unstructured) (*Health, error) {
	var r rollout
	var ready int32
	switch perfexpv1alpha1.WorkloadKind(u.GetKind()) {
	case perfexpv1alpha1.WorkloadKindDeployment:
		d := &appsv1.Deployment{}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, d); err != nil {
			return nil, err
		}
		r, ready = deploymentRollout(d), d.Status.ReadyReplicas
	case perfexpv1alpha1.WorkloadKindStatefulSet:
		s := &appsv1.StatefulSet{}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, s); err != nil {
			return nil, err
		}
		r, ready = statefulSetRollout(s), s.Status.ReadyReplicas
	default:
		return nil, nil
	}
	h := &Health{RolledOut: r.done, ReadyReplicas: ready, Waiting: r.waiting}
	if r.failed != "" {
		h.Waiting = r.failed
	}
	return h, nil
}

// observed reports whether the workload's controller has seen its current spec.
func observed(u *unstructured.Unstructured) bool {
	og, _, _ := unstructured.NestedInt64(u.Object, "status", "observedGeneration")
	return og >= u.GetGeneration()
}

// defaultPodProblemGrace is how long a pod problem must last before it fails a rollout. A
// cluster-autoscaler scale-up typically leaves a pod Unschedulable for one to two minutes, and
// a registry hiccup costs one ErrImagePull and a back-off of seconds.
const defaultPodProblemGrace = 2 * time.Minute

// badWaitingReasons are container states that fail a rollout once they last PodProblemGrace;
// a moment of them is not a verdict (a pull retried, a Secret created a second later).
var badWaitingReasons = map[string]bool{
	"CrashLoopBackOff":           true,
	"ImagePullBackOff":           true,
	"ErrImagePull":               true,
	"CreateContainerConfigError": true,
	"CreateContainerError":       true,
}

// hopelessWaitingReasons are container states that no amount of waiting fixes.
var hopelessWaitingReasons = map[string]bool{
	"InvalidImageName": true,
}

// podTrouble is what the pods of a new revision say about a rollout.
type podTrouble struct {
	// failed names a problem that has lasted the grace (or can never pass).
	failed string
	// pending names a problem that has not lasted the grace yet.
	pending string
}

// podProblem looks at the pods of a new revision for one that cannot start: a container crash
// looping or unable to get its image, or a pod that cannot be scheduled. A problem fails the
// rollout only once it has lasted grace at now, measured from the pod's Unschedulable condition
// or from when the pod was last ready (its creation for a pod never ready), since the kubelet
// keeps no start time for a waiting state.
func podProblem(pods []corev1.Pod, now time.Time, grace time.Duration) podTrouble {
	sort.Slice(pods, func(i, j int) bool { return pods[i].Name < pods[j].Name })
	var out podTrouble
	note := func(since time.Time, hopeless bool, msg string) {
		lasted := now.Sub(since)
		switch {
		case hopeless || lasted >= grace:
			if out.failed == "" {
				if !hopeless {
					msg += fmt.Sprintf(" (for %s)", lasted.Round(time.Second))
				}
				out.failed = msg
			}
		case out.pending == "":
			out.pending = fmt.Sprintf("%s (for %s; the rollout fails if it lasts %s)", msg, lasted.Round(time.Second), grace)
		}
	}
	for _, p := range pods {
		if p.DeletionTimestamp != nil {
			continue
		}
		for _, cond := range p.Status.Conditions {
			if cond.Type == corev1.PodScheduled && cond.Status == corev1.ConditionFalse && cond.Reason == corev1.PodReasonUnschedulable {
				note(cond.LastTransitionTime.Time, false, fmt.Sprintf("pod %s is unschedulable: %s", p.Name, cond.Message))
			}
		}
		statuses := append(append([]corev1.ContainerStatus{}, p.Status.InitContainerStatuses...), p.Status.ContainerStatuses...)
		for _, cs := range statuses {
			w := cs.State.Waiting
			if w == nil || (!badWaitingReasons[w.Reason] && !hopelessWaitingReasons[w.Reason]) {
				continue
			}
			msg := fmt.Sprintf("pod %s container %s is in %s", p.Name, cs.Name, w.Reason)
			if w.Message != "" {
				msg += ": " + w.Message
			}
			note(notReadySince(&p), hopelessWaitingReasons[w.Reason], msg)
		}
	}
	return out
}

// notReadySince is when the pod last stopped being ready, or its creation time.
func notReadySince(p *corev1.Pod) time.Time {
	since := p.CreationTimestamp.Time
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady && c.Status != corev1.ConditionTrue && c.LastTransitionTime.After(since) {
			since = c.LastTransitionTime.Time
		}
	}
	return since
}

// judgePods folds what the pods say into the rollout: a lasting problem fails it, a passing one
// is shown in what it waits for.
func (e *Environment) judgePods(r rollout, pods []corev1.Pod) rollout {
	grace := e.opts.PodProblemGrace
	if grace <= 0 {
		grace = defaultPodProblemGrace
	}
	now := time.Now()
	if e.opts.Clock != nil {
		now = e.opts.Clock.Now()
	}
	trouble := podProblem(pods, now, grace)
	r.failed = trouble.failed
	if trouble.pending != "" {
		r.waiting += "; " + trouble.pending
	}
	return r
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
		if r.done {
			// The Deployment's status counts no terminating pod, so it reads rolled out while
			// an old pod still runs its graceful shutdown: still using CPU and memory on the
			// node, still answering the connections it had. Load started then measures both.
			waiting, err := e.oldPodsTerminating(ctx, d)
			if err != nil {
				return rollout{}, err
			}
			if waiting != "" {
				return rollout{waiting: waiting}, nil
			}
			return r, nil
		}
		if r.failed != "" {
			return r, nil
		}
		pods, err := e.deploymentNewPods(ctx, d)
		if err != nil {
			return rollout{}, err
		}
		return e.judgePods(r, pods), nil
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
		return e.judgePods(r, pods), nil
	}
	return rollout{done: true}, nil
}

// stuckTerminating is how long past its deletion deadline a terminating pod stops being waited
// for: one on a lost node stays Terminating until the node comes back or someone force-deletes
// it, and it runs nowhere meanwhile.
const stuckTerminating = 2 * time.Minute

// oldPodsTerminating says which of the Deployment's pods are still shutting down, or "" when
// none is. The pods are listed by metadata only, and a ReplicaSet list follows only when one is
// terminating, to check that the Deployment owns it.
func (e *Environment) oldPodsTerminating(ctx context.Context, d *appsv1.Deployment) (string, error) {
	if d.Spec.Selector == nil {
		return "", nil
	}
	sel, err := metav1.LabelSelectorAsSelector(d.Spec.Selector)
	if err != nil {
		return "", nil
	}
	pods := &metav1.PartialObjectMetadataList{}
	pods.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("PodList"))
	if err := e.reader.List(ctx, pods, client.InNamespace(d.Namespace), client.MatchingLabelsSelector{Selector: sel}); err != nil {
		return "", fmt.Errorf("listing pods of Deployment %s/%s: %w", d.Namespace, d.Name, err)
	}
	now := time.Now()
	if e.opts.Clock != nil {
		now = e.opts.Clock.Now()
	}
	var terminating []metav1.PartialObjectMetadata
	for _, p := range pods.Items {
		if dt := p.DeletionTimestamp; dt != nil && now.Sub(dt.Time) <= stuckTerminating {
			terminating = append(terminating, p)
		}
	}
	if len(terminating) == 0 {
		return "", nil
	}
	var rsList metav1.PartialObjectMetadataList
	rsList.SetGroupVersionKind(appsv1.SchemeGroupVersion.WithKind("ReplicaSetList"))
	if err := e.reader.List(ctx, &rsList, client.InNamespace(d.Namespace), client.MatchingLabelsSelector{Selector: sel}); err != nil {
		return "", fmt.Errorf("listing ReplicaSets of Deployment %s/%s: %w", d.Namespace, d.Name, err)
	}
	owned := map[types.UID]bool{}
	for i := range rsList.Items {
		if metav1.IsControlledBy(&rsList.Items[i], d) {
			owned[rsList.Items[i].UID] = true
		}
	}
	var names []string
	for i := range terminating {
		if ref := metav1.GetControllerOf(&terminating[i]); ref != nil && owned[ref.UID] {
			names = append(names, terminating[i].Name)
		}
	}
	if len(names) == 0 {
		return "", nil
	}
	sort.Strings(names)
	return fmt.Sprintf("%d old pods still terminating (%s)", len(names), summarize(names)), nil
}

// deploymentNewPods finds the Deployment's new ReplicaSet (the one carrying the Deployment's
// revision) and lists its pods.
func (e *Environment) deploymentNewPods(ctx context.Context, d *appsv1.Deployment) ([]corev1.Pod, error) {
	rev := d.Annotations[revisionAnnotation]
	if rev == "" || d.Spec.Selector == nil {
		return nil, nil
	}
	sel, err := metav1.LabelSelectorAsSelector(d.Spec.Selector)
	if err != nil {
		return nil, nil
	}
	var rsList appsv1.ReplicaSetList
	if err := e.reader.List(ctx, &rsList, client.InNamespace(d.Namespace), client.MatchingLabelsSelector{Selector: sel}); err != nil {
		return nil, fmt.Errorf("listing ReplicaSets of Deployment %s/%s: %w", d.Namespace, d.Name, err)
	}
	for i := range rsList.Items {
		rs := &rsList.Items[i]
		if rs.Annotations[revisionAnnotation] != rev || !metav1.IsControlledBy(rs, d) {
			continue
		}
		rsSel, err := metav1.LabelSelectorAsSelector(rs.Spec.Selector)
		if err != nil {
			return nil, nil
		}
		pods, err := e.podsOf(ctx, d.Namespace, rsSel, rs.UID, nil)
		if err != nil {
			return nil, err
		}
		return pods, nil
	}
	return nil, nil
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
