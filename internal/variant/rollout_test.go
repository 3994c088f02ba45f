package variant

import (
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
)

func TestDeploymentRollout(t *testing.T) {
	dep := func(gen, observed int64, replicas int32, st appsv1.DeploymentStatus) *appsv1.Deployment {
		st.ObservedGeneration = observed
		return &appsv1.Deployment{
			ObjectMeta: metav1.ObjectMeta{Generation: gen},
			Spec:       appsv1.DeploymentSpec{Replicas: ptr.To(replicas)},
			Status:     st,
		}
	}
	tests := []struct {
		name    string
		d       *appsv1.Deployment
		done    bool
		waiting string
		failed  string
	}{
		{"spec not observed yet", dep(3, 2, 2, appsv1.DeploymentStatus{Replicas: 2, UpdatedReplicas: 2, ReadyReplicas: 2, AvailableReplicas: 2}), false, "observe the new spec", ""},
		{"replicas not updated", dep(3, 3, 2, appsv1.DeploymentStatus{Replicas: 3, UpdatedReplicas: 1, ReadyReplicas: 2, AvailableReplicas: 2}), false, "1 of 2 new replicas updated", ""},
		{"old replicas left", dep(3, 3, 2, appsv1.DeploymentStatus{Replicas: 3, UpdatedReplicas: 2, ReadyReplicas: 3, AvailableReplicas: 3}), false, "1 old replicas pending termination", ""},
		{"not ready", dep(3, 3, 2, appsv1.DeploymentStatus{Replicas: 2, UpdatedReplicas: 2, ReadyReplicas: 1, AvailableReplicas: 1}), false, "1 of 2 updated replicas ready", ""},
		{"ready but not available", dep(3, 3, 2, appsv1.DeploymentStatus{Replicas: 2, UpdatedReplicas: 2, ReadyReplicas: 2, AvailableReplicas: 1}), false, "1 of 2 updated replicas available", ""},
		{"rolled out", dep(3, 3, 2, appsv1.DeploymentStatus{Replicas: 2, UpdatedReplicas: 2, ReadyReplicas: 2, AvailableReplicas: 2}), true, "", ""},
		{"scaled to zero", dep(3, 3, 0, appsv1.DeploymentStatus{}), true, "", ""},
		{"progress deadline exceeded", dep(3, 3, 2, appsv1.DeploymentStatus{Replicas: 2, UpdatedReplicas: 1, Conditions: []appsv1.DeploymentCondition{{
			Type: appsv1.DeploymentProgressing, Status: corev1.ConditionFalse, Reason: "ProgressDeadlineExceeded", Message: `ReplicaSet "app-5d" has timed out progressing.`}}}),
			false, "", "progress deadline"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := deploymentRollout(tt.d)
			if r.done != tt.done || !strings.Contains(r.waiting, tt.waiting) || !strings.Contains(r.failed, tt.failed) || (tt.failed == "" && r.failed != "") {
				t.Fatalf("got %+v", r)
			}
		})
	}
}

func TestStatefulSetRollout(t *testing.T) {
	sts := func(gen, observed int64, partition *int32, st appsv1.StatefulSetStatus) *appsv1.StatefulSet {
		st.ObservedGeneration = observed
		s := &appsv1.StatefulSet{
			ObjectMeta: metav1.ObjectMeta{Generation: gen},
			Spec:       appsv1.StatefulSetSpec{Replicas: ptr.To[int32](3), UpdateStrategy: appsv1.StatefulSetUpdateStrategy{Type: appsv1.RollingUpdateStatefulSetStrategyType}},
			Status:     st,
		}
		if partition != nil {
			s.Spec.UpdateStrategy.RollingUpdate = &appsv1.RollingUpdateStatefulSetStrategy{Partition: partition}
		}
		return s
	}
	tests := []struct {
		name    string
		s       *appsv1.StatefulSet
		done    bool
		waiting string
	}{
		{"never observed", sts(1, 0, nil, appsv1.StatefulSetStatus{}), false, "observe the new spec"},
		{"not ready", sts(2, 2, nil, appsv1.StatefulSetStatus{ReadyReplicas: 2, CurrentRevision: "a", UpdateRevision: "a"}), false, "2 of 3 replicas ready"},
		{"revisions differ", sts(2, 2, nil, appsv1.StatefulSetStatus{ReadyReplicas: 3, UpdatedReplicas: 1, CurrentRevision: "a", UpdateRevision: "b"}), false, "1 of 3 pods at the update revision b"},
		{"rolled out", sts(2, 2, nil, appsv1.StatefulSetStatus{ReadyReplicas: 3, UpdatedReplicas: 3, CurrentRevision: "b", UpdateRevision: "b"}), true, ""},
		{"partition pending", sts(2, 2, ptr.To[int32](1), appsv1.StatefulSetStatus{ReadyReplicas: 3, UpdatedReplicas: 1, CurrentRevision: "a", UpdateRevision: "b"}), false, "1 of 2 pods above the partition"},
		{"partition done", sts(2, 2, ptr.To[int32](1), appsv1.StatefulSetStatus{ReadyReplicas: 3, UpdatedReplicas: 2, CurrentRevision: "a", UpdateRevision: "b"}), true, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := statefulSetRollout(tt.s)
			if r.done != tt.done || !strings.Contains(r.waiting, tt.waiting) {
				t.Fatalf("got %+v", r)
			}
		})
	}
}

func TestPodProblem(t *testing.T) {
	created := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	pod := func(mutate func(*corev1.Pod)) corev1.Pod {
		p := corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", CreationTimestamp: metav1.NewTime(created)}}
		mutate(&p)
		return p
	}
	waiting := func(reason string) corev1.Pod {
		return pod(func(p *corev1.Pod) {
			p.Status.ContainerStatuses = []corev1.ContainerStatus{{
				Name: "app", State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason, Message: "details"}}}}
		})
	}
	unschedulableSince := func(since time.Time) corev1.Pod {
		return pod(func(p *corev1.Pod) {
			p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse,
				Reason: corev1.PodReasonUnschedulable, Message: "0/1 nodes are available: 1 Insufficient cpu.", LastTransitionTime: metav1.NewTime(since)}}
		})
	}
	// crashedAfterReady was ready for an hour, then its container began to crash.
	crashedAfterReady := waiting("CrashLoopBackOff")
	crashedAfterReady.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionFalse, LastTransitionTime: metav1.NewTime(created.Add(time.Hour))}}

	const grace = 2 * time.Minute
	tests := []struct {
		name        string
		pod         corev1.Pod
		at          time.Duration // after the pod's creation
		wantFailed  string
		wantPending string
	}{
		{"one failed pull is a wait", waiting("ErrImagePull"), 10 * time.Second, "", "ErrImagePull: details (for 10s; the rollout fails if it lasts 2m0s)"},
		{"a pull failing for the grace fails", waiting("ImagePullBackOff"), grace, "container app is in ImagePullBackOff: details (for 2m0s)", ""},
		{"a crash loop within the grace is a wait", waiting("CrashLoopBackOff"), time.Minute, "", "CrashLoopBackOff"},
		{"a crash loop beyond the grace fails", waiting("CrashLoopBackOff"), 3 * time.Minute, "CrashLoopBackOff", ""},
		{"the grace counts from when the pod stopped being ready", crashedAfterReady, time.Hour + time.Minute, "", "CrashLoopBackOff: details (for 1m0s;"},
		{"an invalid image name fails at once", waiting("InvalidImageName"), time.Second, "InvalidImageName", ""},
		{"still creating is no problem", waiting("ContainerCreating"), time.Hour, "", ""},
		{"unschedulable during a scale-up is a wait", unschedulableSince(created.Add(time.Minute)), 2 * time.Minute, "", "pod p is unschedulable: 0/1 nodes are available: 1 Insufficient cpu. (for 1m0s;"},
		{"unschedulable for the grace fails", unschedulableSince(created), 150 * time.Second, "pod p is unschedulable: 0/1 nodes are available", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := podProblem([]corev1.Pod{tt.pod}, created.Add(tt.at), grace)
			if (tt.wantFailed == "") != (got.failed == "") || !strings.Contains(got.failed, tt.wantFailed) {
				t.Errorf("failed = %q, want %q", got.failed, tt.wantFailed)
			}
			if (tt.wantPending == "") != (got.pending == "") || !strings.Contains(got.pending, tt.wantPending) {
				t.Errorf("pending = %q, want %q", got.pending, tt.wantPending)
			}
		})
	}
}

// TestRolloutToleratesPassingPodProblems follows one rollout through the Environment's clock:
// a pod whose image pull fails once and then recovers never fails the rollout, one whose pull
// keeps failing fails it once the grace has passed.
func TestRolloutToleratesPassingPodProblems(t *testing.T) {
	created := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	clk := clocktesting.NewFakeClock(created)
	e := New(nil, Options{Clock: clk, PodProblemGrace: 90 * time.Second})
	slow := rollout{waiting: "0 of 1 updated replicas ready"}
	pullFailing := []corev1.Pod{{ObjectMeta: metav1.ObjectMeta{Name: "api-1", CreationTimestamp: metav1.NewTime(created)},
		Status: corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{{Name: "api",
			State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ErrImagePull"}}}}}}}
	pulling := []corev1.Pod{{ObjectMeta: metav1.ObjectMeta{Name: "api-1", CreationTimestamp: metav1.NewTime(created)},
		Status: corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{{Name: "api",
			State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ContainerCreating"}}}}}}}

	steps := []struct {
		after      time.Duration
		pods       []corev1.Pod
		wantFailed bool
		wantWait   string
	}{
		{5 * time.Second, pullFailing, false, "ErrImagePull (for 5s;"},
		{10 * time.Second, pulling, false, ""},
		{60 * time.Second, pullFailing, false, "ErrImagePull (for 1m15s;"},
		{30 * time.Second, pullFailing, true, ""},
	}
	for i, s := range steps {
		clk.Step(s.after)
		r := e.judgePods(slow, s.pods)
		if (r.failed != "") != s.wantFailed || !strings.Contains(r.waiting, s.wantWait) {
			t.Fatalf("observation %d at %s: %+v", i, clk.Since(created), r)
		}
	}

	// Without a configured grace the default applies.
	d := New(nil, Options{Clock: clocktesting.NewFakeClock(created.Add(defaultPodProblemGrace - time.Second))})
	if r := d.judgePods(slow, pullFailing); r.failed != "" {
		t.Fatalf("failed before the default grace: %+v", r)
	}
}

// TestDeploymentWaitsForItsOldPodsToTerminate: a Deployment's status counts no terminating
// pod, so it reads rolled out while an old pod still shuts down. The rollout is done only when
// the Deployment's own old pods are gone; another owner's terminating pod does not hold it, nor
// does one stuck terminating long past its deadline (a lost node).
func TestDeploymentWaitsForItsOldPodsToTerminate(t *testing.T) {
	now := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	clk := clocktesting.NewFakeClock(now)
	labels := map[string]string{"app": "inventory"}
	one := int32(1)
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "inventory", UID: "d-uid", Generation: 2},
		Spec:       appsv1.DeploymentSpec{Replicas: &one, Selector: &metav1.LabelSelector{MatchLabels: labels}},
		Status:     appsv1.DeploymentStatus{ObservedGeneration: 2, Replicas: 1, UpdatedReplicas: 1, ReadyReplicas: 1, AvailableReplicas: 1},
	}
	isController := true
	ownedBy := func(kind, name string, uid types.UID) []metav1.OwnerReference {
		return []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: kind, Name: name, UID: uid, Controller: &isController}}
	}
	rsOld := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "inventory-old", UID: "rs-old", Labels: labels,
		OwnerReferences: ownedBy("Deployment", "inventory", "d-uid")}}
	rsOther := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "other-1", UID: "rs-other", Labels: labels,
		OwnerReferences: ownedBy("Deployment", "other", "other-uid")}}
	terminatingPod := func(name string, rs *appsv1.ReplicaSet, deadline time.Time) *corev1.Pod {
		dt := metav1.NewTime(deadline)
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: name, Labels: labels, DeletionTimestamp: &dt,
			Finalizers: []string{"test.perfexp.dev/hold"}, OwnerReferences: ownedBy("ReplicaSet", rs.Name, rs.UID)}}
	}
	u, err := runtimeToUnstructured(d)
	if err != nil {
		t.Fatal(err)
	}
	u.SetKind("Deployment")

	for _, c := range []struct {
		name string
		objs []client.Object
		want string
	}{
		{"no pod terminating", []client.Object{rsOld}, ""},
		{"its old pod shutting down", []client.Object{rsOld, terminatingPod("inventory-old-abc", rsOld, now.Add(20*time.Second))}, "1 old pods still terminating (inventory-old-abc)"},
		{"another owner's pod", []client.Object{rsOld, rsOther, terminatingPod("other-1-abc", rsOther, now.Add(20*time.Second))}, ""},
		{"stuck past its deadline", []client.Object{rsOld, terminatingPod("inventory-old-abc", rsOld, now.Add(-stuckTerminating-time.Second))}, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			reader := fake.NewClientBuilder().WithObjects(c.objs...).Build()
			e := New(reader, Options{Clock: clk})
			r, err := e.rolloutOf(t.Context(), u)
			if err != nil {
				t.Fatal(err)
			}
			if c.want == "" && !r.done {
				t.Fatalf("want done, got %+v", r)
			}
			if c.want != "" && (r.done || r.waiting != c.want) {
				t.Fatalf("want waiting %q, got %+v", c.want, r)
			}
		})
	}
}
