package variant

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/step"
	"github.com/perfexp/perfexp/internal/testenv"
	"github.com/perfexp/perfexp/internal/testexp"
)

func init() {
	// The package logs through controller-runtime's logger; tests assert on results instead.
	log.SetLogger(logr.Discard())
}

// startEnv starts a kube-apiserver with perfexp's CRDs and the minimal Strimzi Kafka CRD.
func startEnv(t testing.TB) *testenv.Env {
	t.Helper()
	return testenv.Start(t, filepath.Join("testdata", "crds"))
}

// --- builders ---------------------------------------------------------------------------

type container struct {
	name, image string
	env         []corev1.EnvVar
	requests    corev1.ResourceList
	limits      corev1.ResourceList
}

func res(pairs ...string) corev1.ResourceList {
	l := corev1.ResourceList{}
	for i := 0; i+1 < len(pairs); i += 2 {
		l[corev1.ResourceName(pairs[i])] = resource.MustParse(pairs[i+1])
	}
	return l
}

func env(pairs ...string) []corev1.EnvVar {
	var out []corev1.EnvVar
	for i := 0; i+1 < len(pairs); i += 2 {
		out = append(out, corev1.EnvVar{Name: pairs[i], Value: pairs[i+1]})
	}
	return out
}

// service is the usual container of a test workload: requests and limits set, a few env vars.
func service(name string) container {
	return container{
		name: name, image: "registry.example/" + name + ":1.0",
		env:      env("HTTP_MAXPOOLSIZE", "10", "LOG_LEVEL", "info", "KAFKA_BOOTSTRAP_SERVERS", "kafka-zk:9092"),
		requests: res("cpu", "100m", "memory", "64Mi"),
		limits:   res("cpu", "500m", "memory", "256Mi"),
	}
}

func podSpec(cs ...container) corev1.PodSpec {
	var spec corev1.PodSpec
	for _, c := range cs {
		spec.Containers = append(spec.Containers, corev1.Container{
			Name: c.name, Image: c.image, Env: c.env,
			Resources: corev1.ResourceRequirements{Requests: c.requests, Limits: c.limits},
		})
	}
	return spec
}

func deployment(ns, name string, labels map[string]string, cs ...container) *appsv1.Deployment {
	sel := map[string]string{"app": name}
	all := map[string]string{"app": name}
	for k, v := range labels {
		all[k] = v
	}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: all},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](2),
			Selector: &metav1.LabelSelector{MatchLabels: sel},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: sel}, Spec: podSpec(cs...)},
		},
	}
}

func statefulSet(ns, name string, cs ...container) *appsv1.StatefulSet {
	sel := map[string]string{"app": name}
	return &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: sel},
		Spec: appsv1.StatefulSetSpec{
			Replicas:    ptr.To[int32](3),
			ServiceName: name,
			Selector:    &metav1.LabelSelector{MatchLabels: sel},
			Template:    corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: sel}, Spec: podSpec(cs...)},
		},
	}
}

// kafka creates a Strimzi Kafka resource with listeners and a metadata state in its status.
func kafka(t testing.TB, c client.Client, ns, name, state string, annotations map[string]string) {
	t.Helper()
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(kafkaGVK)
	u.SetNamespace(ns)
	u.SetName(name)
	u.SetAnnotations(annotations)
	u.Object["spec"] = map[string]any{"kafka": map[string]any{
		"replicas":  int64(3),
		"listeners": []any{map[string]any{"name": "plain", "port": int64(9092), "type": "internal", "tls": false}},
		"config":    map[string]any{"num.partitions": int64(6)},
	}}
	create(t, c, u)
	u.Object["status"] = map[string]any{
		"kafkaMetadataState": state,
		"listeners": []any{
			map[string]any{"name": "plain", "bootstrapServers": name + "-kafka-bootstrap." + ns + ".svc:9092"},
			map[string]any{"name": "tls", "bootstrapServers": name + "-kafka-bootstrap." + ns + ".svc:9093"},
		},
	}
	if err := c.Status().Update(t.Context(), u); err != nil {
		t.Fatalf("writing the status of Kafka %s: %v", name, err)
	}
}

func setKafkaState(t testing.TB, c client.Client, ns, name, state string) {
	t.Helper()
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(kafkaGVK)
	if err := c.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: name}, u); err != nil {
		t.Fatal(err)
	}
	if err := unstructured.SetNestedField(u.Object, state, "status", "kafkaMetadataState"); err != nil {
		t.Fatal(err)
	}
	if err := c.Status().Update(t.Context(), u); err != nil {
		t.Fatal(err)
	}
}

func create(t testing.TB, c client.Client, objs ...client.Object) {
	t.Helper()
	for _, o := range objs {
		if err := c.Create(t.Context(), o); err != nil {
			t.Fatalf("creating %T %s: %v", o, o.GetName(), err)
		}
	}
}

// newExperiment builds an experiment with the variant: one scenario ramping to one VU over a
// minute.
func newExperiment(ns, name string, v *perfexpv1alpha1.Variant) *perfexpv1alpha1.PerfExperiment {
	return testexp.New(ns, name, testexp.WithVariant(v),
		testexp.WithScenarios(testexp.Ramping("s", perfexpv1alpha1.Stage{Duration: metav1.Duration{Duration: time.Minute}, Target: 1})))
}

// experiment creates an experiment with the variant in ns, so it has a UID and defaults.
func experiment(t testing.TB, c client.Client, ns, name string, v *perfexpv1alpha1.Variant) *perfexpv1alpha1.PerfExperiment {
	t.Helper()
	exp := newExperiment(ns, name, v)
	create(t, c, exp)
	return exp
}

// save writes the experiment's status, as the reconciler does after every call.
func save(t testing.TB, c client.Client, exp *perfexpv1alpha1.PerfExperiment) {
	t.Helper()
	if err := c.Status().Update(t.Context(), exp); err != nil {
		t.Fatalf("saving the experiment's status: %v", err)
	}
}

// reread returns the experiment as the API server has it: what a restarted operator sees.
func reread(t testing.TB, c client.Client, exp *perfexpv1alpha1.PerfExperiment) *perfexpv1alpha1.PerfExperiment {
	t.Helper()
	out := &perfexpv1alpha1.PerfExperiment{}
	if err := c.Get(t.Context(), client.ObjectKeyFromObject(exp), out); err != nil {
		t.Fatal(err)
	}
	return out
}

// rollOut plays the Deployment and StatefulSet controllers: every workload in ns reports a
// finished rollout of its current spec.
func rollOut(t testing.TB, c client.Client, ns string) {
	t.Helper()
	if err := testenv.RollOut(t.Context(), c, ns); err != nil {
		t.Fatal(err)
	}
}

// --- comparing states -------------------------------------------------------------------

// comparedKinds are the kinds whose objects the stories compare before and after.
var comparedKinds = []schema.GroupVersionKind{
	{Group: "apps", Version: "v1", Kind: "Deployment"},
	{Group: "apps", Version: "v1", Kind: "StatefulSet"},
	{Version: "v1", Kind: "ConfigMap"},
	{Version: "v1", Kind: "Service"},
	{Group: "autoscaling", Version: "v2", Kind: "HorizontalPodAutoscaler"},
	kafkaGVK,
}

// state reads every object of the compared kinds in ns, without the fields the API server
// manages (resourceVersion, generation, managedFields) and without status.
func state(t testing.TB, c client.Client, ns string) map[string]map[string]any {
	t.Helper()
	out := map[string]map[string]any{}
	for _, gvk := range comparedKinds {
		list := &unstructured.UnstructuredList{}
		list.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
		if err := c.List(t.Context(), list, client.InNamespace(ns)); err != nil {
			t.Fatal(err)
		}
		for _, u := range list.Items {
			if u.GetName() == "kube-root-ca.crt" {
				continue
			}
			o := u.DeepCopy().Object
			unstructured.RemoveNestedField(o, "metadata", "resourceVersion")
			unstructured.RemoveNestedField(o, "metadata", "generation")
			unstructured.RemoveNestedField(o, "metadata", "managedFields")
			unstructured.RemoveNestedField(o, "status")
			out[gvk.Kind+"/"+u.GetName()] = o
		}
	}
	return out
}

// requireSameState fails with the first difference between two states.
func requireSameState(t testing.TB, before, after map[string]map[string]any) {
	t.Helper()
	var keys []string
	for k := range before {
		keys = append(keys, k)
	}
	for k := range after {
		if _, ok := before[k]; !ok {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		if reflect.DeepEqual(before[k], after[k]) {
			continue
		}
		b, _ := json.MarshalIndent(before[k], "", "  ")
		a, _ := json.MarshalIndent(after[k], "", "  ")
		t.Fatalf("%s differs from its state before the experiment:\n%s", k, firstDiff(string(b), string(a)))
	}
}

func firstDiff(a, b string) string {
	la, lb := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := 0; i < len(la) || i < len(lb); i++ {
		var x, y string
		if i < len(la) {
			x = la[i]
		}
		if i < len(lb) {
			y = lb[i]
		}
		if x != y {
			lo := max(0, i-6)
			return fmt.Sprintf("before (from line %d):\n%s\nafter:\n%s", lo+1,
				strings.Join(la[lo:min(len(la), i+6)], "\n"), strings.Join(lb[lo:min(len(lb), i+6)], "\n"))
		}
	}
	return "(no line differs)"
}

// --- driving the environment ------------------------------------------------------------

// prepare calls Prepare, saves the status and plays the controllers until it is done, as the
// reconciler would; it fails the test on an error or a failure.
func prepare(t testing.TB, e *Environment, c client.Client, exp *perfexpv1alpha1.PerfExperiment) {
	t.Helper()
	drive(t, "Prepare", e.Prepare, c, exp)
}

// restore is prepare for Restore.
func restore(t testing.TB, e *Environment, c client.Client, exp *perfexpv1alpha1.PerfExperiment) {
	t.Helper()
	drive(t, "Restore", e.Restore, c, exp)
}

func drive(t testing.TB, what string, f func(context.Context, *perfexpv1alpha1.PerfExperiment) (step.Result, error), c client.Client, exp *perfexpv1alpha1.PerfExperiment) {
	t.Helper()
	ns := exp.TargetNamespace()
	for i := 0; i < 10; i++ {
		res, err := f(t.Context(), exp)
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if res.Failure != nil {
			t.Fatalf("%s failed: %s: %s", what, res.Failure.Reason, res.Failure.Message)
		}
		save(t, c, exp)
		if res.Done {
			return
		}
		rollOut(t, c, ns)
		for _, u := range kafkas(t, c, ns) {
			// Play Strimzi: the metadata state follows the annotation.
			want := map[string]string{"enabled": "KRaft", "disabled": "ZooKeeper", "": "ZooKeeper", "migration": "KRaftDualWriting"}[u.GetAnnotations()[kraftAnnotation]]
			if metadataState(&u) != want {
				setKafkaState(t, c, ns, u.GetName(), want)
			}
		}
	}
	t.Fatalf("%s was not done after 10 calls", what)
}

func kafkas(t testing.TB, c client.Client, ns string) []unstructured.Unstructured {
	t.Helper()
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(kafkaGVK.GroupVersion().WithKind("KafkaList"))
	if err := c.List(t.Context(), list, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	return list.Items
}

func getDeployment(t testing.TB, c client.Client, ns, name string) *appsv1.Deployment {
	t.Helper()
	d := &appsv1.Deployment{}
	if err := c.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: name}, d); err != nil {
		t.Fatal(err)
	}
	return d
}

// container returns the named container of a pod spec.
func containerOf(t testing.TB, spec corev1.PodSpec, name string) corev1.Container {
	t.Helper()
	for _, c := range spec.Containers {
		if c.Name == name {
			return c
		}
	}
	t.Fatalf("no container %s", name)
	return corev1.Container{}
}

func envValue(c corev1.Container, name string) (string, bool) {
	for _, e := range c.Env {
		if e.Name == name {
			return e.Value, true
		}
	}
	return "", false
}

func runtimeToUnstructured(o any) (*unstructured.Unstructured, error) {
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(o)
	if err != nil {
		return nil, err
	}
	return &unstructured.Unstructured{Object: m}, nil
}

func selectAll() *metav1.LabelSelector { return &metav1.LabelSelector{} }

func q(s string) resource.Quantity { return resource.MustParse(s) }
