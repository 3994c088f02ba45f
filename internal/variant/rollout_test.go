package variant

import (
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
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
	waiting := func(reason string) corev1.Pod {
		return corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p"}, Status: corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{{
			Name: "app", State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason, Message: "details"}}}}}}
	}
	tests := []struct {
		name string
		pod  corev1.Pod
		want string
	}{
		{"crash loop", waiting("CrashLoopBackOff"), "container app is in CrashLoopBackOff: details"},
		{"image pull back-off", waiting("ImagePullBackOff"), "ImagePullBackOff"},
		{"image pull error", waiting("ErrImagePull"), "ErrImagePull"},
		{"still creating", waiting("ContainerCreating"), ""},
		{"unschedulable", corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p"}, Status: corev1.PodStatus{Conditions: []corev1.PodCondition{{
			Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonUnschedulable, Message: "0/1 nodes are available: 1 Insufficient cpu."}}}},
			"pod p is unschedulable: 0/1 nodes are available"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := podProblem([]corev1.Pod{tt.pod})
			if (tt.want == "") != (got == "") || !strings.Contains(got, tt.want) {
				t.Fatalf("podProblem = %q, want %q", got, tt.want)
			}
		})
	}
}
