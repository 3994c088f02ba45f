package variant

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/step"
	"github.com/perfexp/perfexp/internal/testenv"
)

// Stories of a shared cluster, where restoring must always finish, drift must be caught and a
// bad target must fail at once (issue 10: items 5, 6, 9 and 15).
func TestSafetyStories(t *testing.T) {
	te := startEnv(t)
	stories := []struct {
		name string
		run  func(t *testing.T, te *testenv.Env, ns string)
	}{
		{"statefulset with a bad variant image is rolled back", storyStatefulSetBadImage},
		{"a workload unhealthy before the experiment is restored without waiting for health", storyUnhealthyBefore},
		{"the wait for rollouts after restoring is bounded and says what is not healthy", storyRestoreBound},
		{"drift by another field manager is named with its manager", storyDriftManager},
		{"replicas of an autoscaled workload are refused", storyHPARefusal},
		{"a target perfexp may not read fails at once and never blocks restore", storyForbiddenTarget},
		{"an unreadable snapshot blocks instead of counting as restored", storyCorruptedSnapshot},
		{"a snapshot annotation removed mid-run is restored from the status", storyRemovedSnapshot},
		{"a restore whose status write was lost is not drift; a real revert names its writer", storyLostRestoreStatus},
		{"objects of an experiment gone without restoring are put back from their snapshot", storyOrphans},
		{"the janitor writes nothing from a snapshot perfexp did not record", storyForgedSnapshots},
		{"one object named under two API versions is one target", storyTwoVersions},
		{"a baseline waits while another experiment's variant is in force", storyOtherExperimentInNamespace},
	}
	for i, s := range stories {
		t.Run(s.name, func(t *testing.T) {
			s.run(t, te, te.Namespace(t, "safety-"+string(rune('a'+i))))
		})
	}
}

// call calls a step once and saves the status, failing the test on an error.
func call(t *testing.T, c client.Client, exp *perfexpv1alpha1.PerfExperiment, f func(context.Context, *perfexpv1alpha1.PerfExperiment) (step.Result, error)) step.Result {
	t.Helper()
	res, err := f(t.Context(), exp)
	if err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	save(t, c, exp)
	return res
}

func getLedger(t testing.TB, c client.Client, ns string) *appsv1.StatefulSet {
	t.Helper()
	s := &appsv1.StatefulSet{}
	if err := c.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: "ledger"}, s); err != nil {
		t.Fatal(err)
	}
	return s
}

// setDeploymentStatus plays the Deployment controller with the given counts for the current
// generation.
func setDeploymentStatus(t testing.TB, c client.Client, ns, name string, updated, ready int32) {
	t.Helper()
	d := getDeployment(t, c, ns, name)
	r := ptr.Deref(d.Spec.Replicas, 1)
	d.Status = appsv1.DeploymentStatus{ObservedGeneration: d.Generation, Replicas: r, UpdatedReplicas: updated, ReadyReplicas: ready, AvailableReplicas: ready}
	if err := c.Status().Update(t.Context(), d); err != nil {
		t.Fatal(err)
	}
}

// statefulSetPod creates a pod of the StatefulSet at a revision, ready or stuck pulling its
// image, as the StatefulSet controller and the kubelet would.
func statefulSetPod(t testing.TB, c client.Client, s *appsv1.StatefulSet, ordinal int, revision string, ready bool) *corev1.Pod {
	t.Helper()
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: s.Namespace, Name: s.Name + "-" + string(rune('0'+ordinal)),
			Labels: map[string]string{"app": s.Name, appsv1.ControllerRevisionHashLabelKey: revision},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "StatefulSet", Name: s.Name, UID: s.UID,
				Controller: ptr.To(true)}},
		},
		Spec: *s.Spec.Template.Spec.DeepCopy(),
	}
	create(t, c, p)
	status := corev1.ConditionTrue
	state := corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}
	if !ready {
		status = corev1.ConditionFalse
		state = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ImagePullBackOff", Message: "manifest unknown"}}
	}
	p.Status = corev1.PodStatus{Phase: corev1.PodPending,
		Conditions:        []corev1.PodCondition{{Type: corev1.PodReady, Status: status, LastTransitionTime: metav1.Now()}},
		ContainerStatuses: []corev1.ContainerStatus{{Name: p.Spec.Containers[0].Name, State: state}}}
	if ready {
		p.Status.Phase = corev1.PodRunning
	}
	if err := c.Status().Update(t.Context(), p); err != nil {
		t.Fatal(err)
	}
	return p
}

// A release with a bad image is tried on a StatefulSet with the default OrderedReady rolling
// update: its last pod cannot pull the image, and the controller waits for it for ever.
// Restoring the template alone would never replace that pod (Kubernetes' forced rollback
// case); perfexp deletes it once the controller saw the restored template, and the
// StatefulSet comes back.
func storyStatefulSetBadImage(t *testing.T, te *testenv.Env, ns string) {
	c := te.Client
	create(t, c, statefulSet(ns, "ledger", service("db")))
	rollOut(t, c, ns)
	good := getLedger(t, c, ns).Status.UpdateRevision
	before := state(t, c, ns)
	exp := experiment(t, c, ns, "bad-release", &perfexpv1alpha1.Variant{Workloads: []perfexpv1alpha1.WorkloadChange{{
		WorkloadSelector: perfexpv1alpha1.WorkloadSelector{Kind: perfexpv1alpha1.WorkloadKindStatefulSet, Names: []string{"ledger"}},
		Containers:       []string{"db"},
		Image:            "registry.example/db:does-not-exist",
	}}})
	e := New(c, Options{})
	if res := call(t, c, exp, e.Prepare); res.Done || res.Failure != nil {
		t.Fatalf("first Prepare: %+v", res)
	}
	// The controller rolls out from the last ordinal: ledger-2 gets the bad image and stays
	// not ready, so the rollout stops there.
	s := getLedger(t, c, ns)
	s.Status = appsv1.StatefulSetStatus{ObservedGeneration: s.Generation, Replicas: 3, ReadyReplicas: 2, CurrentReplicas: 2, UpdatedReplicas: 1,
		CurrentRevision: good, UpdateRevision: "ledger-bad"}
	if err := c.Status().Update(t.Context(), s); err != nil {
		t.Fatal(err)
	}
	s = getLedger(t, c, ns)
	kept := []*corev1.Pod{statefulSetPod(t, c, s, 0, good, true), statefulSetPod(t, c, s, 1, good, true)}
	broken := statefulSetPod(t, c, s, 2, "ledger-bad", false)

	if res := call(t, c, exp, e.Restore); res.Done {
		t.Fatalf("first Restore done before the StatefulSet controller saw the restored template: %+v", res)
	}
	// The controller sees the restored template: its revision is the good one again, but
	// with OrderedReady it waits for ledger-2 to become ready before doing anything.
	s = getLedger(t, c, ns)
	s.Status.ObservedGeneration, s.Status.UpdateRevision = s.Generation, good
	if err := c.Status().Update(t.Context(), s); err != nil {
		t.Fatal(err)
	}
	res := call(t, c, exp, e.Restore)
	if res.Done {
		t.Fatalf("Restore done with a replica not ready: %+v", res)
	}
	if err := c.Get(t.Context(), client.ObjectKeyFromObject(broken), &corev1.Pod{}); !apierrors.IsNotFound(err) {
		t.Fatalf("the pod of the bad revision was not deleted (err %v); the StatefulSet would wait for it for ever", err)
	}
	for _, p := range kept {
		if err := c.Get(t.Context(), client.ObjectKeyFromObject(p), &corev1.Pod{}); err != nil {
			t.Fatalf("ready pod %s of the good revision: %v", p.Name, err)
		}
	}
	// The controller recreates ledger-2 from the good revision.
	rollOut(t, c, ns)
	restore(t, e, c, exp)
	requireSameState(t, before, state(t, c, ns))
}

// A service was crash looping before the experiment (0 of 2 ready). Restoring puts its
// fields back and is done once the Deployment controller saw them: it does not wait for a
// health the workload never had.
func storyUnhealthyBefore(t *testing.T, te *testenv.Env, ns string) {
	c := te.Client
	create(t, c, deployment(ns, "flaky", nil, service("app")))
	setDeploymentStatus(t, c, ns, "flaky", 2, 0)
	before := state(t, c, ns)
	exp := experiment(t, c, ns, "pool", &perfexpv1alpha1.Variant{Workloads: []perfexpv1alpha1.WorkloadChange{{
		WorkloadSelector: perfexpv1alpha1.WorkloadSelector{Names: []string{"flaky"}},
		Env:              &perfexpv1alpha1.EnvChange{Set: []perfexpv1alpha1.EnvVar{{Name: "HTTP_MAXPOOLSIZE", Value: "50"}}},
	}}})
	e := New(c, Options{})
	if res := call(t, c, exp, e.Prepare); res.Done || res.Failure != nil {
		t.Fatalf("first Prepare: %+v", res)
	}
	snap, err := decodeSnapshot(exp.Status.Environment.Touched[0].Snapshot)
	if err != nil || snap.Health == nil || snap.Health.RolledOut || snap.Health.ReadyReplicas != 0 {
		t.Fatalf("the snapshot does not record the unhealthy rollout before the experiment: %+v %v", snap, err)
	}
	// The rollout never finishes (the reconciler's rollout timeout fails the experiment).
	setDeploymentStatus(t, c, ns, "flaky", 2, 0)

	if res := call(t, c, exp, e.Restore); res.Done {
		t.Fatalf("first Restore done before the controller saw the restored spec: %+v", res)
	}
	setDeploymentStatus(t, c, ns, "flaky", 2, 0)
	res := call(t, c, exp, e.Restore)
	if !res.Done || res.Waiting != "" {
		t.Fatalf("Restore = %+v; want done at once, with nothing left unhealthy that was healthy", res)
	}
	if !exp.Status.Environment.Restored {
		t.Fatal("status.environment.restored is false")
	}
	requireSameState(t, before, state(t, c, ns))
}

// A restored Deployment that was healthy before never becomes healthy again (its node pool
// is gone). Restoring waits for it for spec.timeouts.rollout after the fields are back, then
// reports done with what is still not healthy, so the queue is released.
func storyRestoreBound(t *testing.T, te *testenv.Env, ns string) {
	c := te.Client
	create(t, c, deployment(ns, "web", nil, service("app")))
	rollOut(t, c, ns)
	before := state(t, c, ns)
	exp := experiment(t, c, ns, "bound", &perfexpv1alpha1.Variant{Workloads: []perfexpv1alpha1.WorkloadChange{{
		WorkloadSelector: perfexpv1alpha1.WorkloadSelector{Names: []string{"web"}},
		Resources:        &perfexpv1alpha1.ResourcesChange{RemoveLimits: []corev1.ResourceName{corev1.ResourceCPU}},
	}}})
	clk := clocktesting.NewFakePassiveClock(time.Now())
	e := New(c, Options{Clock: clk})
	prepare(t, e, c, exp)

	if res := call(t, c, exp, e.Restore); res.Done {
		t.Fatalf("first Restore: %+v", res)
	}
	if exp.Status.Environment.FieldsRestoredAt == nil {
		t.Fatal("fieldsRestoredAt is not recorded once every field is back")
	}
	setDeploymentStatus(t, c, ns, "web", 1, 1)
	tests := []struct {
		advance  time.Duration
		wantDone bool
	}{{time.Minute, false}, {8 * time.Minute, false}, {2 * time.Minute, true}}
	for _, tt := range tests {
		clk.SetTime(clk.Now().Add(tt.advance))
		res := call(t, c, exp, e.Restore)
		if res.Done != tt.wantDone {
			t.Fatalf("after %s more: Restore = %+v, want done %v (bound %s)", tt.advance, res, tt.wantDone, defaultRestoreBound)
		}
		if !res.Done && res.RequeueAfter <= 0 {
			t.Fatalf("a wait without a requeue: %+v", res)
		}
		if res.Done && (!strings.Contains(res.Waiting, "Deployment "+ns+"/web") || !strings.Contains(res.Waiting, "1 of 2")) {
			t.Fatalf("the done result does not say what is still not healthy: %q", res.Waiting)
		}
	}
	if !exp.Status.Environment.Restored {
		t.Fatal("status.environment.restored is false after the bound")
	}
	requireSameState(t, before, state(t, c, ns))
}

// Argo CD's self-heal puts the image back seconds after the rollout. Prepare catches it at
// the end of the rollout and fails before any load; during the run, CheckDrift names the
// field and the manager, and ReportDrift sets the Drifted condition the analysis reads.
func storyDriftManager(t *testing.T, te *testenv.Env, ns string) {
	c := te.Client
	create(t, c, deployment(ns, "web", nil, service("app")), deployment(ns, "api", nil, service("app")))
	rollOut(t, c, ns)
	revert := func(name string) {
		t.Helper()
		d := getDeployment(t, c, ns, name)
		patch := client.MergeFrom(d.DeepCopy())
		d.Spec.Template.Spec.Containers[0].Image = "registry.example/app:1.0"
		if err := c.Patch(t.Context(), d, patch, client.FieldOwner("argocd-application-controller")); err != nil {
			t.Fatal(err)
		}
	}
	release := func(name, exp string) *perfexpv1alpha1.PerfExperiment {
		return experiment(t, c, ns, exp, &perfexpv1alpha1.Variant{Workloads: []perfexpv1alpha1.WorkloadChange{{
			WorkloadSelector: perfexpv1alpha1.WorkloadSelector{Names: []string{name}}, Containers: []string{"app"}, Image: "registry.example/app:2.0"}}})
	}
	e := New(c, Options{})

	t.Run("reverted during the rollout", func(t *testing.T) {
		exp := release("api", "release-api")
		if res := call(t, c, exp, e.Prepare); res.Done || res.Failure != nil {
			t.Fatalf("first Prepare: %+v", res)
		}
		revert("api")
		rollOut(t, c, ns)
		res := call(t, c, exp, e.Prepare)
		if res.Failure == nil || res.Failure.Reason != perfexpv1alpha1.ReasonVariantDrifted ||
			!strings.Contains(res.Failure.Message, "argocd-application-controller") || !strings.Contains(res.Failure.Message, "containers[app].image") {
			t.Fatalf("Prepare = %+v; want a VariantDrifted failure naming the field and Argo CD", res)
		}
		restore(t, e, c, exp)
	})

	t.Run("reverted during the run", func(t *testing.T) {
		exp := release("web", "release-web")
		prepare(t, e, c, exp)
		if d, err := e.CheckDrift(t.Context(), exp); err != nil || len(d) != 0 {
			t.Fatalf("CheckDrift right after the rollout: %v %v; want none", d, err)
		}
		revert("web")
		drifted, err := e.CheckDrift(t.Context(), exp)
		if err != nil || len(drifted) != 1 {
			t.Fatalf("CheckDrift: %v %v; want the image", drifted, err)
		}
		d := drifted[0]
		if d.Object != "Deployment "+ns+"/web" || d.Path.String() != "spec.template.spec.containers[app].image" ||
			d.Current != `"registry.example/app:1.0"` || !strings.Contains(d.Manager, `"argocd-application-controller" (Update`) {
			t.Fatalf("drift %+v; want the image, its values and the manager", d)
		}
		if found, err := ReportDrift(t.Context(), e, exp); err != nil || !found {
			t.Fatalf("ReportDrift: %v %v", found, err)
		}
		cond := apimeta.FindStatusCondition(exp.Status.Conditions, perfexpv1alpha1.ConditionDrifted)
		if cond == nil || cond.Status != metav1.ConditionTrue || !strings.Contains(cond.Message, "argocd-application-controller") {
			t.Fatalf("Drifted condition %+v; want True naming the manager", cond)
		}
		restore(t, e, c, exp)
	})
}

// The variant sets replicas on a Deployment a HorizontalPodAutoscaler scales: the autoscaler
// would undo them during the run, so the experiment fails before anything is patched.
func storyHPARefusal(t *testing.T, te *testenv.Env, ns string) {
	c := te.Client
	create(t, c, deployment(ns, "web", nil, service("app")), deployment(ns, "api", nil, service("app")))
	create(t, c, &autoscalingv2.HorizontalPodAutoscaler{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"},
		Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
			ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"},
			MinReplicas:    ptr.To[int32](2), MaxReplicas: 10,
		}})
	rollOut(t, c, ns)
	before := resourceVersions(t, c, ns)
	tests := []struct {
		name, workload string
		refused        bool
	}{{"autoscaled", "web", true}, {"not autoscaled", "api", false}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			exp := experiment(t, c, ns, "replicas-"+tt.workload, &perfexpv1alpha1.Variant{Workloads: []perfexpv1alpha1.WorkloadChange{{
				WorkloadSelector: perfexpv1alpha1.WorkloadSelector{Names: []string{tt.workload}}, Replicas: ptr.To[int32](5)}}})
			e := New(c, Options{})
			res, err := e.Prepare(t.Context(), exp)
			if err != nil {
				t.Fatal(err)
			}
			if !tt.refused {
				if res.Failure != nil {
					t.Fatalf("Prepare refused a workload no autoscaler scales: %+v", res.Failure)
				}
				save(t, c, exp)
				restore(t, e, c, exp)
				return
			}
			if res.Failure == nil || res.Failure.Reason != perfexpv1alpha1.ReasonReplicasManagedByHPA || !strings.Contains(res.Failure.Message, "HorizontalPodAutoscaler web") {
				t.Fatalf("Prepare = %+v; want ReplicasManagedByHPA naming the autoscaler", res)
			}
			if after := resourceVersions(t, c, ns); after["Deployment/web"] != before["Deployment/web"] {
				t.Fatal("the autoscaled Deployment was written")
			}
		})
	}
}

// A generic patch names a PodDisruptionBudget, which perfexp's service account was not
// granted (the issue saw it with a Secret; the admission policy now refuses Secrets at apply,
// and any kind without rights takes the same path). Prepare fails at once with a reason
// naming the cause, and restoring (on failure or deletion) has nothing to do for an object it
// never patched, so it never blocks the queue.
func storyForbiddenTarget(t *testing.T, te *testenv.Env, ns string) {
	pdbs := schema.GroupKind{Group: "policy", Kind: "PodDisruptionBudget"}
	denied := func(obj client.Object) error {
		if _, ok := obj.(*policyv1.PodDisruptionBudget); ok || obj.GetObjectKind().GroupVersionKind().GroupKind() == pdbs {
			return apierrors.NewForbidden(schema.GroupResource{Group: "policy", Resource: "poddisruptionbudgets"}, obj.GetName(), errForbiddenByRBAC)
		}
		return nil
	}
	ww, err := client.NewWithWatch(te.Config, client.Options{Scheme: te.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	c := interceptor.NewClient(ww, interceptor.Funcs{
		Get: func(ctx context.Context, cl client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			if err := denied(obj); err != nil {
				return err
			}
			return cl.Get(ctx, key, obj, opts...)
		},
	})
	create(t, te.Client, deployment(ns, "web", nil, service("app")),
		&policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"}, Spec: policyv1.PodDisruptionBudgetSpec{
			MinAvailable: ptr.To(intstr.FromInt32(1)), Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}}})
	rollOut(t, te.Client, ns)
	before := state(t, te.Client, ns)
	exp := experiment(t, te.Client, ns, "pdb", &perfexpv1alpha1.Variant{
		Workloads: []perfexpv1alpha1.WorkloadChange{{WorkloadSelector: perfexpv1alpha1.WorkloadSelector{Names: []string{"web"}},
			Env: &perfexpv1alpha1.EnvChange{Set: []perfexpv1alpha1.EnvVar{{Name: "POOL", Value: "5"}}}}},
		Patches: []perfexpv1alpha1.ObjectPatch{{Target: perfexpv1alpha1.ObjectTarget{APIVersion: "policy/v1", Kind: "PodDisruptionBudget", Name: "web"},
			Patch: `{"spec":{"minAvailable":0}}`}},
	})
	e := New(c, Options{GenericPatchKinds: []string{"PodDisruptionBudget.policy"}})
	res, err := e.Prepare(t.Context(), exp)
	if err != nil {
		t.Fatalf("Prepare returned an error, which the reconciler would retry for minutes: %v", err)
	}
	if res.Failure == nil || res.Failure.Reason != perfexpv1alpha1.ReasonTargetForbidden || !strings.Contains(res.Failure.Message, "PodDisruptionBudget "+ns+"/web") {
		t.Fatalf("Prepare = %+v; want TargetForbidden naming the PodDisruptionBudget", res)
	}
	save(t, te.Client, exp)
	requireSameState(t, before, state(t, te.Client, ns))
	res, err = e.Restore(t.Context(), exp)
	if err != nil || !res.Done {
		t.Fatalf("Restore = %+v, %v; want done: nothing was patched", res, err)
	}
}

var errForbiddenByRBAC = errorString("perfexp's service account has no get on poddisruptionbudgets in this namespace")

type errorString string

func (e errorString) Error() string { return string(e) }

// Someone edits a patched Deployment and breaks perfexp's snapshot annotation. With the copy
// in status the Deployment is restored from it; without one (the status was lost too)
// Restoring blocks and says what to do, instead of counting the Deployment as restored and
// releasing the queue on a patched environment.
func storyCorruptedSnapshot(t *testing.T, te *testenv.Env, ns string) {
	c := te.Client
	create(t, c, deployment(ns, "web", nil, service("app")))
	rollOut(t, c, ns)
	before := state(t, c, ns)
	corrupt := func() {
		t.Helper()
		d := getDeployment(t, c, ns, "web")
		patch := client.MergeFrom(d.DeepCopy())
		d.Annotations[perfexpv1alpha1.AnnotationSnapshot] = `{"v":1,"changes":[{"path":`
		if err := c.Patch(t.Context(), d, patch); err != nil {
			t.Fatal(err)
		}
	}
	v := &perfexpv1alpha1.Variant{Workloads: []perfexpv1alpha1.WorkloadChange{{
		WorkloadSelector: perfexpv1alpha1.WorkloadSelector{Names: []string{"web"}},
		Resources:        &perfexpv1alpha1.ResourcesChange{RemoveLimits: []corev1.ResourceName{corev1.ResourceCPU}},
	}}}
	e := New(c, Options{})

	t.Run("the status holds a copy", func(t *testing.T) {
		exp := experiment(t, c, ns, "with-copy", v)
		prepare(t, e, c, exp)
		corrupt()
		restore(t, e, c, exp)
		requireSameState(t, before, state(t, c, ns))
	})

	t.Run("the status was lost too", func(t *testing.T) {
		exp := experiment(t, c, ns, "without-copy", v)
		prepare(t, e, c, exp)
		corrupt()
		lost := reread(t, c, exp)
		lost.Status = perfexpv1alpha1.PerfExperimentStatus{}
		res := call(t, c, lost, e.Restore)
		if res.Done || !strings.Contains(res.Waiting, "Deployment "+ns+"/web carries a "+perfexpv1alpha1.AnnotationSnapshot+" annotation perfexp cannot read") {
			t.Fatalf("Restore = %+v; want a wait naming the unreadable snapshot", res)
		}
		if lost.Status.Environment != nil && lost.Status.Environment.Restored {
			t.Fatal("the environment is marked restored")
		}
		// A person puts the Deployment back and removes perfexp's marks; restoring goes on.
		d := getDeployment(t, c, ns, "web")
		d.Spec.Template.Spec.Containers[0].Resources.Limits[corev1.ResourceCPU] = q("500m")
		delete(d.Annotations, perfexpv1alpha1.AnnotationSnapshot)
		delete(d.Annotations, perfexpv1alpha1.AnnotationExperiment)
		delete(d.Labels, LabelPatchedBy)
		if len(d.Annotations) == 0 {
			d.Annotations = nil
		}
		if err := c.Update(t.Context(), d); err != nil {
			t.Fatal(err)
		}
		restore(t, e, c, lost)
		requireSameState(t, before, state(t, c, ns))
	})
}

// Someone (a tool that prunes unknown annotations, a hand edit) removes perfexp's snapshot
// annotation from a patched Deployment during the run. The variant is still in force; the copy
// in status restores it, instead of the Deployment counting as restored while still patched.
// Whether the label went with it or not, the status says it was patched and not put back.
func storyRemovedSnapshot(t *testing.T, te *testenv.Env, ns string) {
	c := te.Client
	e := New(c, Options{})
	for i, tt := range []struct {
		name      string
		dropLabel bool
	}{{"the label stays", false}, {"the label goes too", true}} {
		t.Run(tt.name, func(t *testing.T) {
			name := fmt.Sprintf("web-%d", i)
			create(t, c, deployment(ns, name, nil, service("app")))
			rollOut(t, c, ns)
			before := state(t, c, ns)
			v := &perfexpv1alpha1.Variant{Workloads: []perfexpv1alpha1.WorkloadChange{{
				WorkloadSelector: perfexpv1alpha1.WorkloadSelector{Names: []string{name}},
				Resources:        &perfexpv1alpha1.ResourcesChange{RemoveLimits: []corev1.ResourceName{corev1.ResourceCPU}},
				Env:              &perfexpv1alpha1.EnvChange{Set: []perfexpv1alpha1.EnvVar{{Name: "POOL", Value: "200"}}},
			}}}
			exp := experiment(t, c, ns, fmt.Sprintf("removed-%d", i), v)
			prepare(t, e, c, exp)
			d := getDeployment(t, c, ns, name)
			if _, limited := d.Spec.Template.Spec.Containers[0].Resources.Limits[corev1.ResourceCPU]; limited {
				t.Fatal("the variant was not applied")
			}
			delete(d.Annotations, perfexpv1alpha1.AnnotationSnapshot)
			if tt.dropLabel {
				delete(d.Annotations, perfexpv1alpha1.AnnotationExperiment)
				delete(d.Labels, LabelPatchedBy)
			}
			if err := c.Update(t.Context(), d); err != nil {
				t.Fatal(err)
			}
			restore(t, e, c, exp)
			requireSameState(t, before, state(t, c, ns))
		})
	}
}

// Two generic patches reach one HorizontalPodAutoscaler, one as autoscaling/v1 and one as
// autoscaling/v2. It is one target: both changes are applied in one write, recorded in one
// snapshot and restored together.
func storyTwoVersions(t *testing.T, te *testenv.Env, ns string) {
	c := te.Client
	create(t, c, &autoscalingv2.HorizontalPodAutoscaler{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"},
		Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
			ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"},
			MinReplicas:    ptr.To[int32](2), MaxReplicas: 10,
		}})
	read := func() *autoscalingv1.HorizontalPodAutoscaler {
		h := &autoscalingv1.HorizontalPodAutoscaler{}
		if err := c.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: "web"}, h); err != nil {
			t.Fatal(err)
		}
		return h
	}
	exp := experiment(t, c, ns, "bounds", &perfexpv1alpha1.Variant{Patches: []perfexpv1alpha1.ObjectPatch{
		{Target: perfexpv1alpha1.ObjectTarget{APIVersion: "autoscaling/v1", Kind: "HorizontalPodAutoscaler", Name: "web"}, Patch: `{"spec":{"minReplicas":4}}`},
		{Target: perfexpv1alpha1.ObjectTarget{APIVersion: "autoscaling/v2", Kind: "HorizontalPodAutoscaler", Name: "web"}, Patch: `{"spec":{"maxReplicas":20}}`},
	}})
	e := New(c, Options{})
	prepare(t, e, c, exp)
	h := read()
	if ptr.Deref(h.Spec.MinReplicas, 0) != 4 || h.Spec.MaxReplicas != 20 {
		t.Fatalf("during the run min %d max %d, want 4 and 20: both patches apply", ptr.Deref(h.Spec.MinReplicas, 0), h.Spec.MaxReplicas)
	}
	if n := len(exp.Status.Environment.Touched); n != 1 {
		t.Fatalf("status names %d touched objects, want 1", n)
	}
	restore(t, e, c, exp)
	h = read()
	if ptr.Deref(h.Spec.MinReplicas, 0) != 2 || h.Spec.MaxReplicas != 10 || h.Annotations[perfexpv1alpha1.AnnotationSnapshot] != "" {
		t.Fatalf("after restoring min %d max %d annotations %v, want 2, 10 and none of perfexp's", ptr.Deref(h.Spec.MinReplicas, 0), h.Spec.MaxReplicas, h.Annotations)
	}
}

// An experiment of another queue still has its variant on a Deployment of the namespace. A
// baseline (no variant) in this namespace waits for it to be restored, instead of measuring
// the other experiment's variant as the baseline.
func storyOtherExperimentInNamespace(t *testing.T, te *testenv.Env, ns string) {
	c := te.Client
	create(t, c, deployment(ns, "web", nil, service("app")), deployment(ns, "api", nil, service("app")))
	rollOut(t, c, ns)
	e := New(c, Options{})
	other := experiment(t, c, ns, "other-queue", &perfexpv1alpha1.Variant{Workloads: []perfexpv1alpha1.WorkloadChange{{
		WorkloadSelector: perfexpv1alpha1.WorkloadSelector{Names: []string{"api"}}, Replicas: ptr.To[int32](4)}}})
	prepare(t, e, c, other)
	baseline := experiment(t, c, ns, "baseline", nil)
	res := call(t, c, baseline, e.Prepare)
	if res.Done || res.Failure != nil || !strings.Contains(res.Waiting, "experiment "+ns+"/other-queue to restore Deployment "+ns+"/api") {
		t.Fatalf("baseline Prepare = %+v; want a wait for the other experiment", res)
	}
	restore(t, e, c, other)
	if res := call(t, c, baseline, e.Prepare); !res.Done {
		t.Fatalf("baseline Prepare = %+v once the other experiment restored; want done", res)
	}
}
