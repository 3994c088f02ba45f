package variant

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/testenv"
)

// The stories share one API server; each runs in its own namespace.
func TestVariantStories(t *testing.T) {
	te := startEnv(t)
	stories := []struct {
		name string
		run  func(t *testing.T, te *testenv.Env, ns string)
	}{
		{"cpu limits removed on twenty deployments", storyNoCPULimits},
		{"env vars changed added and removed with replicas and image", storyEnvReplicasImage},
		{"kafka bootstrap switch by address and from a Kafka resource", storyKafkaBootstrap},
		{"strimzi mode switch", storyStrimziMode},
		{"generic patches", storyGenericPatches},
		{"fields owned by a server-side applier", storyAppliedFields},
		{"crash after patching before the status was saved", storyCrashBeforeStatus},
		{"crash between two workload patches", storyCrashBetweenPatches},
		{"crash during restore", storyCrashDuringRestore},
		{"drift during the run", storyDrift},
		{"namespace not allowed", storyNamespaceRefused},
		{"namespace gate: labels, lists, kinds, URLs and pods", storyNamespaceGate},
		{"invalid variants change nothing", storyInvalidVariants},
		{"failed rollouts", storyFailedRollouts},
		{"another experiment's snapshot", storyAnotherExperiment},
		{"another experiment's patch of a ConfigMap, Service or HPA", storyOthersOfEveryKind},
	}
	for i, s := range stories {
		t.Run(s.name, func(t *testing.T) {
			s.run(t, te, te.Namespace(t, fmt.Sprintf("story-%02d", i)))
		})
	}
}

// A performance engineer removes the CPU limit of every service in the namespace with one
// line, runs, and finds every Deployment exactly as before afterwards.
func storyNoCPULimits(t *testing.T, te *testenv.Env, ns string) {
	c := te.Client
	for i := range 20 {
		create(t, c, deployment(ns, fmt.Sprintf("svc-%02d", i), nil, service("app")))
	}
	rollOut(t, c, ns)
	before := state(t, c, ns)
	exp := experiment(t, c, ns, "no-cpu-limits", &perfexpv1alpha1.Variant{Workloads: []perfexpv1alpha1.WorkloadChange{{
		WorkloadSelector: perfexpv1alpha1.WorkloadSelector{Selector: selectAll()},
		Resources:        &perfexpv1alpha1.ResourcesChange{RemoveLimits: []corev1.ResourceName{corev1.ResourceCPU}},
	}}})
	e := New(c, Options{})

	res, err := e.Prepare(t.Context(), exp)
	if err != nil || res.Done || res.Failure != nil {
		t.Fatalf("first Prepare: %+v, %v; want a wait for the rollouts", res, err)
	}
	if !strings.Contains(res.Waiting, "observe the new spec") {
		t.Errorf("waiting for %q; want the rollouts named", res.Waiting)
	}
	save(t, c, exp)
	for i := range 20 {
		d := getDeployment(t, c, ns, fmt.Sprintf("svc-%02d", i))
		app := containerOf(t, d.Spec.Template.Spec, "app")
		if _, ok := app.Resources.Limits[corev1.ResourceCPU]; ok {
			t.Fatalf("%s still has a CPU limit", d.Name)
		}
		if app.Resources.Limits.Memory().Cmp(q("256Mi")) != 0 || app.Resources.Requests.Cpu().Cmp(q("100m")) != 0 {
			t.Fatalf("%s: fields the variant does not touch changed: %v", d.Name, app.Resources)
		}
		if d.Labels[LabelPatchedBy] != string(exp.UID) || d.Annotations[perfexpv1alpha1.AnnotationExperiment] != ns+"/no-cpu-limits" || d.Annotations[perfexpv1alpha1.AnnotationSnapshot] == "" {
			t.Fatalf("%s lacks perfexp's label and annotations: %v %v", d.Name, d.Labels, d.Annotations)
		}
	}
	touched := exp.Status.Environment.Touched
	if len(touched) != 20 {
		t.Fatalf("status names %d touched objects, want 20", len(touched))
	}
	for _, tc := range touched {
		if !tc.Patched || tc.Snapshot == "" || len(tc.Containers) != 1 {
			t.Fatalf("touched entry incomplete: %+v", tc)
		}
		if _, ok := tc.Containers[0].Limits[corev1.ResourceCPU]; ok {
			t.Fatalf("%s: containers in force still show a CPU limit", tc.Name)
		}
		if r := tc.Containers[0].Requests[corev1.ResourceCPU]; r.Cmp(q("100m")) != 0 {
			t.Fatalf("%s: CPU request in force %v, want 100m", tc.Name, r)
		}
	}
	prepare(t, e, c, exp)

	restore(t, e, c, exp)
	if !exp.Status.Environment.Restored {
		t.Fatal("status.environment.restored is false after Restore")
	}
	requireSameState(t, before, state(t, c, ns))

	// Restoring again is harmless and writes nothing.
	rv := getDeployment(t, c, ns, "svc-00").ResourceVersion
	restore(t, e, c, exp)
	if got := getDeployment(t, c, ns, "svc-00").ResourceVersion; got != rv {
		t.Fatal("a second Restore wrote to a restored Deployment")
	}
}

// Module parameters, task counts and releases: an env var changed, one added, one removed,
// replicas and an image, on Deployments and a StatefulSet.
func storyEnvReplicasImage(t *testing.T, te *testenv.Env, ns string) {
	c := te.Client
	sidecar := container{name: "proxy", image: "proxy:1", env: env("A", "1")}
	create(t, c,
		deployment(ns, "checkout", map[string]string{"tier": "web"}, service("app"), sidecar),
		deployment(ns, "catalog", map[string]string{"tier": "web"}, service("app")),
		statefulSet(ns, "ledger", service("db")),
	)
	rollOut(t, c, ns)
	before := state(t, c, ns)
	exp := experiment(t, c, ns, "params", &perfexpv1alpha1.Variant{Workloads: []perfexpv1alpha1.WorkloadChange{{
		WorkloadSelector: perfexpv1alpha1.WorkloadSelector{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"tier": "web"}}},
		Containers:       []string{"app"},
		Env: &perfexpv1alpha1.EnvChange{
			Set:    []perfexpv1alpha1.EnvVar{{Name: "HTTP_MAXPOOLSIZE", Value: "100"}, {Name: "JAVA_OPTS", Value: "-Xmx1g"}},
			Remove: []string{"LOG_LEVEL"},
		},
	}, {
		WorkloadSelector: perfexpv1alpha1.WorkloadSelector{Names: []string{"checkout"}},
		Replicas:         ptr.To[int32](5),
		Containers:       []string{"proxy"},
		Image:            "proxy:2",
	}, {
		WorkloadSelector: perfexpv1alpha1.WorkloadSelector{Kind: perfexpv1alpha1.WorkloadKindStatefulSet, Names: []string{"ledger"}},
		Env:              &perfexpv1alpha1.EnvChange{Set: []perfexpv1alpha1.EnvVar{{Name: "POD", ValueFrom: &perfexpv1alpha1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}}}},
		Replicas:         ptr.To[int32](1),
	}}})
	e := New(c, Options{})
	prepare(t, e, c, exp)

	d := getDeployment(t, c, ns, "checkout")
	app := containerOf(t, d.Spec.Template.Spec, "app")
	var names []string
	for _, ev := range app.Env {
		names = append(names, ev.Name+"="+ev.Value)
	}
	if got := strings.Join(names, " "); got != "HTTP_MAXPOOLSIZE=100 KAFKA_BOOTSTRAP_SERVERS=kafka-zk:9092 JAVA_OPTS=-Xmx1g" {
		t.Fatalf("checkout app env during the run: %s", got)
	}
	if *d.Spec.Replicas != 5 || containerOf(t, d.Spec.Template.Spec, "proxy").Image != "proxy:2" || containerOf(t, d.Spec.Template.Spec, "app").Image != "registry.example/app:1.0" {
		t.Fatalf("checkout during the run: replicas %d, images %v", *d.Spec.Replicas, d.Spec.Template.Spec.Containers)
	}
	if _, ok := envValue(containerOf(t, d.Spec.Template.Spec, "proxy"), "JAVA_OPTS"); ok {
		t.Fatal("the env change reached a container it does not name")
	}
	s := &appsv1.StatefulSet{}
	if err := c.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: "ledger"}, s); err != nil {
		t.Fatal(err)
	}
	if pod := containerOf(t, s.Spec.Template.Spec, "db").Env[3]; pod.Name != "POD" || pod.ValueFrom == nil || pod.ValueFrom.FieldRef.FieldPath != "metadata.name" || *s.Spec.Replicas != 1 {
		t.Fatalf("ledger during the run: %+v, replicas %d", pod, *s.Spec.Replicas)
	}

	restore(t, e, c, exp)
	requireSameState(t, before, state(t, c, ns))
}

// The services are pointed at another Kafka cluster, by address and by a Strimzi Kafka's
// listener.
func storyKafkaBootstrap(t *testing.T, te *testenv.Env, ns string) {
	c := te.Client
	create(t, c,
		deployment(ns, "orders", map[string]string{"kafka-client": "yes"}, service("app")),
		deployment(ns, "billing", map[string]string{"kafka-client": "yes"}, container{name: "app", image: "billing:1"}),
	)
	kafka(t, c, ns, "kraft", "KRaft", nil)
	rollOut(t, c, ns)
	before := state(t, c, ns)
	clients := perfexpv1alpha1.WorkloadSelector{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"kafka-client": "yes"}}}
	tests := []struct {
		name   string
		change perfexpv1alpha1.KafkaBootstrapSwitch
		want   string
		envVar string
	}{
		{"address", perfexpv1alpha1.KafkaBootstrapSwitch{Workloads: clients, Address: "kafka-kraft:9092"}, "kafka-kraft:9092", "KAFKA_BOOTSTRAP_SERVERS"},
		{"from kafka", perfexpv1alpha1.KafkaBootstrapSwitch{Workloads: clients, EnvVar: "BROKERS", FromKafka: &perfexpv1alpha1.StrimziKafkaRef{Name: "kraft", Listener: "tls"}},
			"kraft-kafka-bootstrap." + ns + ".svc:9093", "BROKERS"},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			exp := experiment(t, c, ns, fmt.Sprintf("bootstrap-%d", i), &perfexpv1alpha1.Variant{Kafka: &perfexpv1alpha1.KafkaVariant{Bootstrap: &tt.change}})
			e := New(c, Options{})
			prepare(t, e, c, exp)
			for _, name := range []string{"orders", "billing"} {
				if v, _ := envValue(containerOf(t, getDeployment(t, c, ns, name).Spec.Template.Spec, "app"), tt.envVar); v != tt.want {
					t.Fatalf("%s: %s=%q during the run, want %q", name, tt.envVar, v, tt.want)
				}
			}
			restore(t, e, c, exp)
			requireSameState(t, before, state(t, c, ns))
		})
	}
}

// Kafka runs in KRaft mode for one experiment: the Strimzi annotation is set, perfexp waits
// for the metadata state, and afterwards the annotation is absent again, as it was.
func storyStrimziMode(t *testing.T, te *testenv.Env, ns string) {
	c := te.Client
	kafka(t, c, ns, "main", "ZooKeeper", nil)
	before := state(t, c, ns)
	exp := experiment(t, c, ns, "kraft", &perfexpv1alpha1.Variant{Kafka: &perfexpv1alpha1.KafkaVariant{
		StrimziMode: &perfexpv1alpha1.StrimziModeSwitch{Name: "main", KRaft: "enabled"}}})
	e := New(c, Options{})
	res, err := e.Prepare(t.Context(), exp)
	if err != nil || res.Done || !strings.Contains(res.Waiting, `waiting for "KRaft"`) {
		t.Fatalf("Prepare: %+v %v; want a wait for the KRaft metadata state", res, err)
	}
	save(t, c, exp)
	k := kafkas(t, c, ns)[0]
	if k.GetAnnotations()[kraftAnnotation] != "enabled" {
		t.Fatalf("annotations during the run: %v", k.GetAnnotations())
	}
	// Strimzi copies a Kafka's labels onto its pods and services: perfexp adds none.
	if _, ok := k.GetLabels()[LabelPatchedBy]; ok {
		t.Fatalf("the Kafka resource got perfexp's label: %v", k.GetLabels())
	}
	// Still ZooKeeper: still waiting.
	if res, _ := e.Prepare(t.Context(), exp); res.Done {
		t.Fatal("Prepare was done before Strimzi reported KRaft")
	}
	prepare(t, e, c, exp)

	res, err = e.Restore(t.Context(), exp)
	if err != nil || res.Done || !strings.Contains(res.Waiting, `waiting for "ZooKeeper"`) {
		t.Fatalf("Restore: %+v %v; want a wait for the ZooKeeper metadata state", res, err)
	}
	save(t, c, exp)
	restore(t, e, c, exp)
	requireSameState(t, before, state(t, c, ns))
}

// The escape hatch: a strategic merge patch on a Service and a ConfigMap, a merge patch on the
// Kafka resource and a JSON patch on a ConfigMap, on top of a workload change of the same
// Deployment a patch also changes.
func storyGenericPatches(t *testing.T, te *testenv.Env, ns string) {
	c := te.Client
	create(t, c,
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "settings"}, Data: map[string]string{"pool": "10", "ttl": "60"}},
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "flags"}, Data: map[string]string{"a": "on"}},
		&corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"}, Spec: corev1.ServiceSpec{
			Selector: map[string]string{"app": "web"}, Ports: []corev1.ServicePort{{Name: "http", Port: 80}}}},
		deployment(ns, "web", nil, service("app")),
	)
	kafka(t, c, ns, "main", "KRaft", map[string]string{"strimzi.io/kraft": "enabled"})
	rollOut(t, c, ns)
	before := state(t, c, ns)
	patches := []perfexpv1alpha1.ObjectPatch{
		{Target: perfexpv1alpha1.ObjectTarget{APIVersion: "v1", Kind: "ConfigMap", Name: "settings"}, Patch: "data:\n  pool: \"50\"\n  extra: \"1\"\n"},
		{Target: perfexpv1alpha1.ObjectTarget{APIVersion: "v1", Kind: "Service", Name: "web"},
			Patch: `{"metadata":{"labels":{"perf":"on"}},"spec":{"ports":[{"name":"metrics","port":9090}]}}`},
		{Target: perfexpv1alpha1.ObjectTarget{APIVersion: "kafka.strimzi.io/v1beta2", Kind: "Kafka", Name: "main"}, Type: perfexpv1alpha1.PatchTypeMerge,
			Patch: `{"spec":{"kafka":{"config":{"num.partitions":12,"compression.type":"lz4"}}}}`},
		{Target: perfexpv1alpha1.ObjectTarget{APIVersion: "v1", Kind: "ConfigMap", Name: "flags"}, Type: perfexpv1alpha1.PatchTypeJSON,
			Patch: `[{"op":"remove","path":"/data/a"},{"op":"add","path":"/data/b","value":"off"}]`},
		{Target: perfexpv1alpha1.ObjectTarget{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"},
			Patch: `{"spec":{"template":{"spec":{"containers":[{"name":"app","resources":{"limits":{"cpu":"2"}}}]}}}}`},
	}
	exp := experiment(t, c, ns, "patches", &perfexpv1alpha1.Variant{
		Workloads: []perfexpv1alpha1.WorkloadChange{{WorkloadSelector: perfexpv1alpha1.WorkloadSelector{Names: []string{"web"}},
			Env: &perfexpv1alpha1.EnvChange{Remove: []string{"LOG_LEVEL"}}}},
		Patches: patches,
	})
	e := New(c, Options{})
	prepare(t, e, c, exp)

	during := state(t, c, ns)
	checks := []struct {
		key  string
		path []string
		want any
	}{
		{"ConfigMap/settings", []string{"data", "pool"}, "50"},
		{"ConfigMap/settings", []string{"data", "ttl"}, "60"},
		{"ConfigMap/flags", []string{"data", "b"}, "off"},
		{"Service/web", []string{"metadata", "labels", "perf"}, "on"},
		{"Kafka/main", []string{"spec", "kafka", "config", "compression.type"}, "lz4"},
	}
	for _, ch := range checks {
		got, _, _ := unstructured.NestedFieldNoCopy(during[ch.key], ch.path...)
		if got != ch.want {
			t.Errorf("%s %v = %v during the run, want %v", ch.key, ch.path, got, ch.want)
		}
	}
	if ports, _, _ := unstructured.NestedSlice(during["Service/web"], "spec", "ports"); len(ports) != 2 {
		t.Errorf("the Service has %d ports during the run, want 2 (strategic merge keeps http)", len(ports))
	}
	web := getDeployment(t, c, ns, "web")
	app := containerOf(t, web.Spec.Template.Spec, "app")
	if app.Resources.Limits.Cpu().Cmp(q("2")) != 0 {
		t.Errorf("web CPU limit during the run: %v", app.Resources.Limits.Cpu())
	}
	if _, ok := envValue(app, "LOG_LEVEL"); ok {
		t.Error("web still has LOG_LEVEL during the run")
	}
	restore(t, e, c, exp)
	requireSameState(t, before, state(t, c, ns))
}

// A GitOps tool owns the Deployment through server-side apply. perfexp removes a limit and an
// env var the tool owns, and after restoring the tool's next apply (without force) meets no
// conflict and changes nothing.
func storyAppliedFields(t *testing.T, te *testenv.Env, ns string) {
	c := te.Client
	manifest := func() *unstructured.Unstructured {
		d := deployment(ns, "gitops", nil, service("app"))
		d.TypeMeta = metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"}
		m, err := runtimeToUnstructured(d)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	apply := func() error {
		//nolint:staticcheck // client.Apply on an unstructured object is the plain way to apply a manifest.
		return c.Patch(t.Context(), manifest(), client.Apply, client.FieldOwner("gitops"))
	}
	if err := apply(); err != nil {
		t.Fatal(err)
	}
	rollOut(t, c, ns)
	before := state(t, c, ns)
	exp := experiment(t, c, ns, "ssa", &perfexpv1alpha1.Variant{Workloads: []perfexpv1alpha1.WorkloadChange{{
		WorkloadSelector: perfexpv1alpha1.WorkloadSelector{Names: []string{"gitops"}},
		Resources:        &perfexpv1alpha1.ResourcesChange{RemoveLimits: []corev1.ResourceName{corev1.ResourceCPU}},
		Env:              &perfexpv1alpha1.EnvChange{Remove: []string{"LOG_LEVEL"}},
	}}})
	e := New(c, Options{})
	prepare(t, e, c, exp)
	app := containerOf(t, getDeployment(t, c, ns, "gitops").Spec.Template.Spec, "app")
	if _, ok := app.Resources.Limits[corev1.ResourceCPU]; ok {
		t.Fatal("the applied CPU limit was not removed")
	}
	if _, ok := envValue(app, "LOG_LEVEL"); ok {
		t.Fatal("the applied env var was not removed")
	}
	restore(t, e, c, exp)
	requireSameState(t, before, state(t, c, ns))
	if err := apply(); err != nil {
		t.Fatalf("the GitOps tool's apply after the experiment: %v", err)
	}
	requireSameState(t, before, state(t, c, ns))
}

// The operator dies after patching every workload but before the experiment's status was
// saved. The restarted operator reads the experiment without status, reuses the snapshots on
// the objects (never snapshotting the patched state) and restores exactly.
func storyCrashBeforeStatus(t *testing.T, te *testenv.Env, ns string) {
	c := te.Client
	for i := range 4 {
		create(t, c, deployment(ns, fmt.Sprintf("svc-%d", i), nil, service("app")))
	}
	rollOut(t, c, ns)
	before := state(t, c, ns)
	exp := experiment(t, c, ns, "crash", &perfexpv1alpha1.Variant{Workloads: []perfexpv1alpha1.WorkloadChange{{
		WorkloadSelector: perfexpv1alpha1.WorkloadSelector{Selector: selectAll()},
		Resources:        &perfexpv1alpha1.ResourcesChange{RemoveLimits: []corev1.ResourceName{corev1.ResourceCPU}},
		Env:              &perfexpv1alpha1.EnvChange{Set: []perfexpv1alpha1.EnvVar{{Name: "LOG_LEVEL", Value: "debug"}}},
	}}})
	if _, err := New(c, Options{}).Prepare(t.Context(), exp); err != nil {
		t.Fatal(err)
	}
	snapshots := annotations(t, c, ns)
	// Crash: the status is never saved.
	fresh := reread(t, c, exp)
	if fresh.Status.Environment != nil {
		t.Fatal("the status was saved; the story needs it lost")
	}
	e := New(c, Options{})
	prepare(t, e, c, fresh)
	if got := annotations(t, c, ns); !mapsEqual(got, snapshots) {
		t.Fatalf("the restarted operator took new snapshots:\nbefore %v\nafter  %v", snapshots, got)
	}
	if n := len(fresh.Status.Environment.Touched); n != 4 {
		t.Fatalf("the restarted operator's status names %d objects, want 4", n)
	}
	// The status is lost again before Restore (the experiment is deleted mid-run and its
	// status never saved): the objects are found by their label and restored.
	lost := reread(t, c, exp)
	lost.Status = perfexpv1alpha1.PerfExperimentStatus{}
	restore(t, New(c, Options{}), c, lost)
	requireSameState(t, before, state(t, c, ns))
	// A later call with the saved status finds everything restored and writes nothing.
	rvs := resourceVersions(t, c, ns)
	restore(t, New(c, Options{}), c, reread(t, c, exp))
	if !mapsEqual(rvs, resourceVersions(t, c, ns)) {
		t.Fatal("restoring an already restored environment wrote to it")
	}
}

// annotations returns the snapshot annotation of every Deployment in ns.
func annotations(t testing.TB, c client.Client, ns string) map[string]string {
	t.Helper()
	var deps appsv1.DeploymentList
	if err := c.List(t.Context(), &deps, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, d := range deps.Items {
		out[d.Name] = d.Annotations[perfexpv1alpha1.AnnotationSnapshot]
	}
	return out
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

var errCrash = errors.New("operator died")

// crashAfter returns a hook that lets n writes through and then fails every write.
func crashAfter(n int) func(objRef) error {
	count := 0
	return func(objRef) error {
		if count >= n {
			return errCrash
		}
		count++
		return nil
	}
}

// The operator dies between two workload patches, at every possible point; the restarted
// operator finishes the variant from the objects' own snapshots and restores exactly. The
// experiment may also be aborted right after the crash: Restore then puts back only what was
// patched.
func storyCrashBetweenPatches(t *testing.T, te *testenv.Env, ns string) {
	c := te.Client
	const n = 3
	for i := range n {
		create(t, c, deployment(ns, fmt.Sprintf("svc-%d", i), nil, service("app")))
	}
	rollOut(t, c, ns)
	before := state(t, c, ns)
	variant := &perfexpv1alpha1.Variant{Workloads: []perfexpv1alpha1.WorkloadChange{{
		WorkloadSelector: perfexpv1alpha1.WorkloadSelector{Selector: selectAll()},
		Resources:        &perfexpv1alpha1.ResourcesChange{Limits: corev1.ResourceList{corev1.ResourceCPU: q("2")}},
		Replicas:         ptr.To[int32](4),
	}}}
	for crashAt := 0; crashAt <= n; crashAt++ {
		for _, abort := range []bool{false, true} {
			t.Run(fmt.Sprintf("after %d patches, abort %v", crashAt, abort), func(t *testing.T) {
				exp := experiment(t, c, ns, fmt.Sprintf("crash-%d-%v", crashAt, abort), variant)
				dying := New(c, Options{})
				dying.beforeWrite = crashAfter(crashAt)
				res, err := dying.Prepare(t.Context(), exp)
				if crashAt < n && !errors.Is(err, errCrash) {
					t.Fatalf("Prepare did not stop at the crash: %+v %v", res, err)
				}
				fresh := reread(t, c, exp)
				e := New(c, Options{})
				if !abort {
					prepare(t, e, c, fresh)
					for i := range n {
						d := getDeployment(t, c, ns, fmt.Sprintf("svc-%d", i))
						snap, err := decodeSnapshot(d.Annotations[perfexpv1alpha1.AnnotationSnapshot])
						if err != nil {
							t.Fatal(err)
						}
						for _, ch := range snap.Changes {
							if ch.Path.String() == "spec.replicas" && string(ch.Before) != "2" {
								t.Fatalf("%s: the snapshot's baseline of replicas is %s, want 2 (a patched state was snapshotted)", d.Name, ch.Before)
							}
						}
					}
				}
				restore(t, e, c, fresh)
				requireSameState(t, before, state(t, c, ns))
			})
		}
	}
}

// The operator dies in the middle of restoring, at every point, with or without the status.
func storyCrashDuringRestore(t *testing.T, te *testenv.Env, ns string) {
	c := te.Client
	const n = 3
	for i := range n {
		create(t, c, deployment(ns, fmt.Sprintf("svc-%d", i), nil, service("app")))
	}
	rollOut(t, c, ns)
	before := state(t, c, ns)
	variant := &perfexpv1alpha1.Variant{Workloads: []perfexpv1alpha1.WorkloadChange{{
		WorkloadSelector: perfexpv1alpha1.WorkloadSelector{Selector: selectAll()},
		Env:              &perfexpv1alpha1.EnvChange{Remove: []string{"HTTP_MAXPOOLSIZE"}},
	}}}
	for crashAt := 0; crashAt < n; crashAt++ {
		for _, keepStatus := range []bool{true, false} {
			t.Run(fmt.Sprintf("after %d restores, status kept %v", crashAt, keepStatus), func(t *testing.T) {
				exp := experiment(t, c, ns, fmt.Sprintf("restore-crash-%d-%v", crashAt, keepStatus), variant)
				prepare(t, New(c, Options{}), c, exp)
				dying := New(c, Options{})
				dying.beforeWrite = crashAfter(crashAt)
				if _, err := dying.Restore(t.Context(), exp.DeepCopy()); !errors.Is(err, errCrash) {
					t.Fatalf("Restore did not stop at the crash: %v", err)
				}
				fresh := reread(t, c, exp)
				if !keepStatus {
					fresh.Status = perfexpv1alpha1.PerfExperimentStatus{}
				}
				restore(t, New(c, Options{}), c, fresh)
				requireSameState(t, before, state(t, c, ns))
			})
		}
	}
}

// A GitOps self-heal puts the CPU limit back during the run. Restoring says so in a condition
// naming the object and field, and restores the snapshot anyway.
func storyDrift(t *testing.T, te *testenv.Env, ns string) {
	c := te.Client
	create(t, c, deployment(ns, "web", nil, service("app")), deployment(ns, "api", nil, service("app")),
		deployment(ns, "pair", nil, service("app"), service("sidecar")))
	rollOut(t, c, ns)
	before := state(t, c, ns)
	exp := experiment(t, c, ns, "drift", &perfexpv1alpha1.Variant{Workloads: []perfexpv1alpha1.WorkloadChange{{
		WorkloadSelector: perfexpv1alpha1.WorkloadSelector{Selector: selectAll()},
		Resources:        &perfexpv1alpha1.ResourcesChange{RemoveLimits: []corev1.ResourceName{corev1.ResourceCPU}},
	}}})
	e := New(c, Options{})
	prepare(t, e, c, exp)
	web := getDeployment(t, c, ns, "web")
	web.Spec.Template.Spec.Containers[0].Resources.Limits[corev1.ResourceCPU] = q("750m")
	if err := c.Update(t.Context(), web, client.FieldOwner("argocd")); err != nil {
		t.Fatal(err)
	}
	// Someone removes a container perfexp changed: its fields cannot be put back, the rest is.
	pair := getDeployment(t, c, ns, "pair")
	pair.Spec.Template.Spec.Containers = pair.Spec.Template.Spec.Containers[:1]
	if err := c.Update(t.Context(), pair); err != nil {
		t.Fatal(err)
	}
	restore(t, e, c, exp)
	if _, ok := containerOf(t, getDeployment(t, c, ns, "pair").Spec.Template.Spec, "app").Resources.Limits[corev1.ResourceCPU]; !ok {
		t.Error("pair's app container did not get its CPU limit back")
	}
	cond := apimeta.FindStatusCondition(exp.Status.Conditions, perfexpv1alpha1.ConditionDrifted)
	if cond == nil || cond.Status != metav1.ConditionTrue || cond.Reason != perfexpv1alpha1.ReasonFieldChangedDuringRun {
		t.Fatalf("Drifted condition: %+v", cond)
	}
	for _, want := range []string{"Deployment " + ns + "/web", "containers[app].resources.limits.cpu", `"750m"`} {
		if !strings.Contains(cond.Message, want) {
			t.Errorf("the Drifted message does not name %s: %s", want, cond.Message)
		}
	}
	if !strings.Contains(cond.Message, "Deployment "+ns+"/pair spec.template.spec.containers[sidecar].resources.limits.cpu could not be put back") {
		t.Errorf("the Drifted message does not say the removed container's limit could not be put back: %s", cond.Message)
	}
	if strings.Contains(cond.Message, ns+"/api") {
		t.Errorf("the Drifted message names an object nobody changed: %s", cond.Message)
	}
	if cond.ObservedGeneration != exp.Generation {
		t.Errorf("observedGeneration %d, want %d", cond.ObservedGeneration, exp.Generation)
	}
	after := state(t, c, ns)
	delete(before, "Deployment/pair")
	delete(after, "Deployment/pair")
	requireSameState(t, before, after)
}

// perfexp is allowed to patch other namespaces only: the experiment is refused, untouched.
func storyNamespaceRefused(t *testing.T, te *testenv.Env, ns string) {
	c := te.Client
	create(t, c, deployment(ns, "web", nil, service("app")))
	optOut(t, c, ns)
	before := state(t, c, ns)
	exp := experiment(t, c, ns, "refused", &perfexpv1alpha1.Variant{Workloads: []perfexpv1alpha1.WorkloadChange{{
		WorkloadSelector: perfexpv1alpha1.WorkloadSelector{Selector: selectAll()}, Replicas: ptr.To[int32](0)}}})
	e := New(c, Options{AllowedNamespaces: []string{"perf-a", "perf-b"}})
	res, err := e.Prepare(t.Context(), exp)
	if err != nil || res.Failure == nil || res.Failure.Reason != perfexpv1alpha1.ReasonNamespaceNotAllowed || !strings.Contains(res.Failure.Message, ns) {
		t.Fatalf("Prepare: %+v %v; want a NamespaceNotAllowed failure naming %s", res, err, ns)
	}
	if res, err := e.Restore(t.Context(), exp); err != nil || !res.Done {
		t.Fatalf("Restore after the refusal: %+v %v", res, err)
	}
	requireSameState(t, before, state(t, c, ns))
}

// Every invalid variant is refused with a clear reason before the first patch: the objects
// a valid part of it would change keep their resourceVersion.
func storyInvalidVariants(t *testing.T, te *testenv.Env, ns string) {
	c := te.Client
	create(t, c,
		deployment(ns, "a", nil, service("app")),
		deployment(ns, "b", nil, service("app")),
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "cm"}, Data: map[string]string{"k": "v"}},
	)
	st := statefulSet(ns, "ondelete", service("db"))
	st.Spec.UpdateStrategy.Type = appsv1.OnDeleteStatefulSetStrategyType
	create(t, c, st)
	paused := deployment(ns, "paused", nil, service("app"))
	paused.Spec.Paused = true
	create(t, c, paused)
	kafka(t, c, ns, "main", "ZooKeeper", nil)
	valid := perfexpv1alpha1.WorkloadChange{WorkloadSelector: perfexpv1alpha1.WorkloadSelector{Names: []string{"a", "b"}},
		Resources: &perfexpv1alpha1.ResourcesChange{RemoveLimits: []corev1.ResourceName{corev1.ResourceCPU}}}
	names := func(n ...string) perfexpv1alpha1.WorkloadSelector { return perfexpv1alpha1.WorkloadSelector{Names: n} }
	tests := []struct {
		name   string
		v      perfexpv1alpha1.Variant
		reason string
		says   string
	}{
		{"missing workload", perfexpv1alpha1.Variant{Workloads: []perfexpv1alpha1.WorkloadChange{valid, {WorkloadSelector: names("nope"), Replicas: ptr.To[int32](1)}}},
			perfexpv1alpha1.ReasonWorkloadNotFound, "Deployment " + ns + "/nope does not exist"},
		{"selector matching nothing", perfexpv1alpha1.Variant{Workloads: []perfexpv1alpha1.WorkloadChange{valid, {WorkloadSelector: perfexpv1alpha1.WorkloadSelector{
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"tier": "none"}}}, Replicas: ptr.To[int32](1)}}},
			perfexpv1alpha1.ReasonWorkloadNotFound, "matches the selector"},
		{"missing container", perfexpv1alpha1.Variant{Workloads: []perfexpv1alpha1.WorkloadChange{valid, {WorkloadSelector: names("b"), Containers: []string{"sidecar"}, Image: "x:1"}}},
			perfexpv1alpha1.ReasonContainerNotFound, `has no container "sidecar"`},
		{"two entries change the same field", perfexpv1alpha1.Variant{Workloads: []perfexpv1alpha1.WorkloadChange{valid,
			{WorkloadSelector: names("b"), Resources: &perfexpv1alpha1.ResourcesChange{Limits: corev1.ResourceList{corev1.ResourceCPU: q("1")}}}}},
			perfexpv1alpha1.ReasonInvalidVariant, "workloads[0] and workloads[1] both change limits.cpu of container app in Deployment " + ns + "/b"},
		{"bootstrap and env change the same variable", perfexpv1alpha1.Variant{
			Workloads: []perfexpv1alpha1.WorkloadChange{{WorkloadSelector: names("a"), Env: &perfexpv1alpha1.EnvChange{Remove: []string{"KAFKA_BOOTSTRAP_SERVERS"}}}},
			Kafka:     &perfexpv1alpha1.KafkaVariant{Bootstrap: &perfexpv1alpha1.KafkaBootstrapSwitch{Workloads: names("a"), Address: "k:9092"}}},
			perfexpv1alpha1.ReasonInvalidVariant, "workloads[0] and kafka.bootstrap both change env KAFKA_BOOTSTRAP_SERVERS"},
		{"refused by the API server", perfexpv1alpha1.Variant{Workloads: []perfexpv1alpha1.WorkloadChange{valid,
			{WorkloadSelector: names("b"), Resources: &perfexpv1alpha1.ResourcesChange{Requests: corev1.ResourceList{corev1.ResourceMemory: q("1Gi")}}}}},
			perfexpv1alpha1.ReasonInvalidVariant, "must be less than or equal to memory limit"},
		{"StatefulSet with OnDelete", perfexpv1alpha1.Variant{Workloads: []perfexpv1alpha1.WorkloadChange{valid,
			{WorkloadSelector: perfexpv1alpha1.WorkloadSelector{Kind: perfexpv1alpha1.WorkloadKindStatefulSet, Names: []string{"ondelete"}}, Image: "db:2", Containers: []string{"db"}}}},
			perfexpv1alpha1.ReasonInvalidVariant, "OnDelete"},
		{"paused Deployment", perfexpv1alpha1.Variant{Workloads: []perfexpv1alpha1.WorkloadChange{valid,
			{WorkloadSelector: names("paused"), Env: &perfexpv1alpha1.EnvChange{Remove: []string{"LOG_LEVEL"}}}}},
			perfexpv1alpha1.ReasonInvalidVariant, "Deployment " + ns + "/paused is paused"},
		{"missing patch target", perfexpv1alpha1.Variant{Workloads: []perfexpv1alpha1.WorkloadChange{valid},
			Patches: []perfexpv1alpha1.ObjectPatch{{Target: perfexpv1alpha1.ObjectTarget{APIVersion: "v1", Kind: "ConfigMap", Name: "gone"}, Patch: `{"data":{"a":"b"}}`}}},
			perfexpv1alpha1.ReasonObjectNotFound, "ConfigMap " + ns + "/gone does not exist"},
		{"unknown kind", perfexpv1alpha1.Variant{Workloads: []perfexpv1alpha1.WorkloadChange{valid},
			Patches: []perfexpv1alpha1.ObjectPatch{{Target: perfexpv1alpha1.ObjectTarget{APIVersion: "example.com/v1", Kind: "Widget", Name: "w"}, Patch: `{"a":1}`}}},
			perfexpv1alpha1.ReasonObjectNotFound, "no kind Widget"},
		{"cluster-scoped target", perfexpv1alpha1.Variant{Workloads: []perfexpv1alpha1.WorkloadChange{valid},
			Patches: []perfexpv1alpha1.ObjectPatch{{Target: perfexpv1alpha1.ObjectTarget{APIVersion: "v1", Kind: "Namespace", Name: ns}, Patch: `{"metadata":{"labels":{"a":"b"}}}`}}},
			perfexpv1alpha1.ReasonInvalidVariant, "cluster-scoped"},
		{"strategic merge on a custom resource", perfexpv1alpha1.Variant{Workloads: []perfexpv1alpha1.WorkloadChange{valid},
			Patches: []perfexpv1alpha1.ObjectPatch{{Target: perfexpv1alpha1.ObjectTarget{APIVersion: "kafka.strimzi.io/v1beta2", Kind: "Kafka", Name: "main"}, Patch: `{"spec":{"a":1}}`}}},
			perfexpv1alpha1.ReasonInvalidVariant, "use type Merge or JSON"},
		{"JSON patch test fails", perfexpv1alpha1.Variant{Workloads: []perfexpv1alpha1.WorkloadChange{valid},
			Patches: []perfexpv1alpha1.ObjectPatch{{Target: perfexpv1alpha1.ObjectTarget{APIVersion: "v1", Kind: "ConfigMap", Name: "cm"}, Type: perfexpv1alpha1.PatchTypeJSON,
				Patch: `[{"op":"test","path":"/data/k","value":"other"},{"op":"replace","path":"/data/k","value":"w"}]`}}},
			perfexpv1alpha1.ReasonInvalidVariant, "applying the JSON patch"},
		{"patch of a field the API server manages", perfexpv1alpha1.Variant{Workloads: []perfexpv1alpha1.WorkloadChange{valid},
			Patches: []perfexpv1alpha1.ObjectPatch{{Target: perfexpv1alpha1.ObjectTarget{APIVersion: "v1", Kind: "ConfigMap", Name: "cm"}, Type: perfexpv1alpha1.PatchTypeMerge,
				Patch: `{"metadata":{"annotations":{"perfexp.dev/snapshot":"{}"}}}`}}},
			perfexpv1alpha1.ReasonInvalidVariant, "which perfexp manages"},
		{"missing Kafka", perfexpv1alpha1.Variant{Workloads: []perfexpv1alpha1.WorkloadChange{valid},
			Kafka: &perfexpv1alpha1.KafkaVariant{StrimziMode: &perfexpv1alpha1.StrimziModeSwitch{Name: "other", KRaft: "enabled"}}},
			perfexpv1alpha1.ReasonObjectNotFound, "Kafka " + ns + "/other does not exist"},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := state(t, c, ns)
			rvs := resourceVersions(t, c, ns)
			exp := experimentPastAdmission(t, c, ns, fmt.Sprintf("invalid-%d", i), &tt.v)
			res, err := New(c, Options{GenericPatchKinds: kindsOfInvalidVariants}).Prepare(t.Context(), exp)
			if err != nil {
				t.Fatal(err)
			}
			if res.Failure == nil || res.Failure.Reason != tt.reason || !strings.Contains(res.Failure.Message, tt.says) {
				t.Fatalf("Prepare: %+v %+v; want %s saying %q", res, res.Failure, tt.reason, tt.says)
			}
			if got := resourceVersions(t, c, ns); !mapsEqual(got, rvs) {
				t.Fatal("an object was written although the variant was refused")
			}
			requireSameState(t, before, state(t, c, ns))
			if exp.Status.Environment != nil && len(exp.Status.Environment.Touched) > 0 {
				t.Fatalf("the status records touched objects: %+v", exp.Status.Environment.Touched)
			}
		})
	}
}

func resourceVersions(t testing.TB, c client.Client, ns string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, gvk := range comparedKinds {
		list := &unstructured.UnstructuredList{}
		list.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
		if err := c.List(t.Context(), list, client.InNamespace(ns)); err != nil {
			t.Fatal(err)
		}
		for _, u := range list.Items {
			out[gvk.Kind+"/"+u.GetName()] = u.GetResourceVersion()
		}
	}
	return out
}

// A rollout that cannot finish fails the experiment with the reason, and restoring still
// works (and does not fail, only waits, while the restored workload is unhealthy).
func storyFailedRollouts(t *testing.T, te *testenv.Env, ns string) {
	c := te.Client
	create(t, c, deployment(ns, "stuck", nil, service("app")), deployment(ns, "crashing", nil, service("app")))
	rollOut(t, c, ns)
	before := state(t, c, ns)

	t.Run("progress deadline exceeded", func(t *testing.T) {
		exp := experiment(t, c, ns, "deadline", &perfexpv1alpha1.Variant{Workloads: []perfexpv1alpha1.WorkloadChange{{
			WorkloadSelector: perfexpv1alpha1.WorkloadSelector{Names: []string{"stuck"}}, Containers: []string{"app"}, Image: "registry.example/app:broken"}}})
		e := New(c, Options{})
		if res, err := e.Prepare(t.Context(), exp); err != nil || res.Done {
			t.Fatalf("Prepare: %+v %v", res, err)
		}
		d := getDeployment(t, c, ns, "stuck")
		d.Status = appsv1.DeploymentStatus{ObservedGeneration: d.Generation, Replicas: 3, UpdatedReplicas: 1, ReadyReplicas: 2, AvailableReplicas: 2,
			Conditions: []appsv1.DeploymentCondition{{Type: appsv1.DeploymentProgressing, Status: corev1.ConditionFalse, Reason: "ProgressDeadlineExceeded", Message: `ReplicaSet "stuck-1" has timed out progressing.`}}}
		if err := c.Status().Update(t.Context(), d); err != nil {
			t.Fatal(err)
		}
		res, err := e.Prepare(t.Context(), exp)
		if err != nil || res.Failure == nil || res.Failure.Reason != perfexpv1alpha1.ReasonRolloutFailed || !strings.Contains(res.Failure.Message, "stuck") {
			t.Fatalf("Prepare: %+v %v; want RolloutFailed naming the Deployment", res, err)
		}
		restore(t, e, c, exp)
		requireSameState(t, before, state(t, c, ns))
	})

	t.Run("crash loop in the new ReplicaSet", func(t *testing.T) {
		exp := experiment(t, c, ns, "crashloop", &perfexpv1alpha1.Variant{Workloads: []perfexpv1alpha1.WorkloadChange{{
			WorkloadSelector: perfexpv1alpha1.WorkloadSelector{Names: []string{"crashing"}}, Resources: &perfexpv1alpha1.ResourcesChange{
				Limits: corev1.ResourceList{corev1.ResourceMemory: q("64Mi")}}}}})
		// The pods get their creation time from the API server; the clock starts there.
		clk := clocktesting.NewFakeClock(time.Now())
		e := New(c, Options{Clock: clk})
		if res, err := e.Prepare(t.Context(), exp); err != nil || res.Done {
			t.Fatalf("Prepare: %+v %v", res, err)
		}
		d := getDeployment(t, c, ns, "crashing")
		d.Annotations[revisionAnnotation] = "2"
		if err := c.Update(t.Context(), d); err != nil {
			t.Fatal(err)
		}
		pod := newReplicaSetPod(t, c, d, "2")
		// The API server keeps whole seconds: a clock started before the pod may be later than
		// its creation time by less than a second, or earlier, so start it at that time.
		clk.SetTime(pod.CreationTimestamp.Time)
		pod.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "app", State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{
			Reason: "CrashLoopBackOff", Message: "back-off 40s restarting failed container=app"}}}}
		if err := c.Status().Update(t.Context(), pod); err != nil {
			t.Fatal(err)
		}
		d = getDeployment(t, c, ns, "crashing")
		d.Status = appsv1.DeploymentStatus{ObservedGeneration: d.Generation, Replicas: 3, UpdatedReplicas: 1, ReadyReplicas: 2, AvailableReplicas: 2}
		if err := c.Status().Update(t.Context(), d); err != nil {
			t.Fatal(err)
		}
		// A crash loop that has just begun may be a dependency starting up: a wait that says so.
		res, err := e.Prepare(t.Context(), exp)
		if err != nil || res.Failure != nil || res.Done || !strings.Contains(res.Waiting, "CrashLoopBackOff") {
			t.Fatalf("Prepare: %+v %v; want a wait naming the crash loop", res, err)
		}
		clk.Step(defaultPodProblemGrace)
		res, err = e.Prepare(t.Context(), exp)
		if err != nil || res.Failure == nil || res.Failure.Reason != perfexpv1alpha1.ReasonRolloutFailed || !strings.Contains(res.Failure.Message, "CrashLoopBackOff") {
			t.Fatalf("Prepare: %+v %v; want RolloutFailed for the crash loop", res, err)
		}
		// While the pod still crash-loops, Restore waits and says why; it never fails.
		res, err = e.Restore(t.Context(), exp)
		if err != nil || res.Failure != nil || res.Done {
			t.Fatalf("Restore: %+v %v; want a wait", res, err)
		}
		save(t, c, exp)
		if err := c.Delete(t.Context(), pod); err != nil {
			t.Fatal(err)
		}
		d = getDeployment(t, c, ns, "crashing")
		delete(d.Annotations, revisionAnnotation)
		if err := c.Update(t.Context(), d); err != nil {
			t.Fatal(err)
		}
		restore(t, e, c, exp)
		requireSameState(t, before, state(t, c, ns))
	})
}

// newReplicaSetPod creates the Deployment's ReplicaSet of the given revision with one pod, as
// the Deployment controller and the scheduler would.
func newReplicaSetPod(t testing.TB, c client.Client, d *appsv1.Deployment, revision string) *corev1.Pod {
	t.Helper()
	labels := map[string]string{"app": d.Name, "pod-template-hash": "h" + revision}
	rs := &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: d.Namespace, Name: d.Name + "-h" + revision, Labels: labels,
			Annotations:     map[string]string{revisionAnnotation: revision},
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(d, appsv1.SchemeGroupVersion.WithKind("Deployment"))}},
		Spec: appsv1.ReplicaSetSpec{Replicas: ptr.To[int32](1), Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: d.Spec.Template.Spec}},
	}
	create(t, c, rs)
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: d.Namespace, Name: rs.Name + "-x", Labels: labels,
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(rs, appsv1.SchemeGroupVersion.WithKind("ReplicaSet"))}},
		Spec: d.Spec.Template.Spec,
	}
	create(t, c, pod)
	return pod
}

// Two experiments in different queues select the same workload. The second waits while the
// first holds the workload; a snapshot left by an experiment that no longer exists is refused
// with instructions.
func storyAnotherExperiment(t *testing.T, te *testenv.Env, ns string) {
	c := te.Client
	create(t, c, deployment(ns, "shared", nil, service("app")))
	rollOut(t, c, ns)
	before := state(t, c, ns)
	v := &perfexpv1alpha1.Variant{Workloads: []perfexpv1alpha1.WorkloadChange{{
		WorkloadSelector: perfexpv1alpha1.WorkloadSelector{Names: []string{"shared"}}, Replicas: ptr.To[int32](3)}}}
	first := experiment(t, c, ns, "first", v)
	second := experiment(t, c, ns, "second", v)
	e := New(c, Options{})
	prepare(t, e, c, first)
	res, err := e.Prepare(t.Context(), second)
	if err != nil || res.Done || res.Failure != nil || !strings.Contains(res.Waiting, "experiment "+ns+"/first to restore") {
		t.Fatalf("second Prepare: %+v %v; want a wait for the first experiment", res, err)
	}
	// Restoring the second experiment must not touch what the first patched.
	if res, err := e.Restore(t.Context(), second); err != nil || !res.Done {
		t.Fatalf("Restore of the second: %+v %v", res, err)
	}
	if d := getDeployment(t, c, ns, "shared"); *d.Spec.Replicas != 3 || d.Labels[LabelPatchedBy] != string(first.UID) {
		t.Fatal("restoring the second experiment undid the first one's patch")
	}
	// The first experiment disappears without restoring (its finalizer was removed by force).
	if err := c.Delete(t.Context(), first); err != nil {
		t.Fatal(err)
	}
	res, err = e.Prepare(t.Context(), second)
	if err != nil || res.Failure == nil || res.Failure.Reason != perfexpv1alpha1.ReasonPatchedByAnotherExperiment || !strings.Contains(res.Failure.Message, ns+"/first") {
		t.Fatalf("second Prepare after the first vanished: %+v %v", res, err)
	}
	// Whatever restores the first experiment's snapshot (here its last in-memory copy) puts
	// the baseline back: it is on the object.
	for i := 0; ; i++ {
		res, err := e.Restore(t.Context(), first)
		if err != nil || res.Failure != nil {
			t.Fatalf("Restore of the first: %+v %v", res, err)
		}
		if res.Done {
			break
		}
		if i == 5 {
			t.Fatalf("Restore of the first still waits: %s", res.Waiting)
		}
		rollOut(t, c, ns)
	}
	requireSameState(t, before, state(t, c, ns))
}
