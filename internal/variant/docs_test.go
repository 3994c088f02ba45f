package variant

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/testenv"
)

var yamlBlock = regexp.MustCompile("(?s)```yaml\n(.*?)```")

// Every experiment in docs/variants.md is accepted by the API server, and prepares and
// restores cleanly on a copy of the demo system under test.
func TestDocExamples(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join(testenv.Root(), "docs", "variants.md"))
	if err != nil {
		t.Fatal(err)
	}
	var examples []*perfexpv1alpha1.PerfExperiment
	for _, m := range yamlBlock.FindAllStringSubmatch(string(doc), -1) {
		if !strings.Contains(m[1], "kind: PerfExperiment") {
			continue
		}
		exp := &perfexpv1alpha1.PerfExperiment{}
		if err := yaml.UnmarshalStrict([]byte(m[1]), exp); err != nil {
			t.Fatalf("an example in docs/variants.md does not read as a PerfExperiment: %v\n%s", err, m[1])
		}
		examples = append(examples, exp)
	}
	if len(examples) < 8 {
		t.Fatalf("found %d examples in docs/variants.md; the extraction is broken", len(examples))
	}
	te := startEnv(t)
	c := te.Client
	for i, exp := range examples {
		t.Run(exp.Name, func(t *testing.T) {
			ns := te.Namespace(t, fmt.Sprintf("doc-%02d", i))
			demo(t, te, ns)
			rollOut(t, c, ns)
			before := state(t, c, ns)
			exp.Namespace = ns
			create(t, c, exp)
			e := New(c, Options{})
			prepare(t, e, c, exp)
			if reflect.DeepEqual(before, state(t, c, ns)) {
				t.Fatal("the example changed nothing")
			}
			restore(t, e, c, exp)
			requireSameState(t, before, state(t, c, ns))
		})
	}
}

// demo creates a copy of the demo system under test in ns, with the ConfigMap and the Strimzi
// Kafka the examples refer to.
func demo(t *testing.T, te *testenv.Env, ns string) {
	t.Helper()
	dir := filepath.Join(testenv.Root(), "test", "demoapp", "deploy", "base")
	for _, f := range []string{"circulation.yaml", "inventory.yaml", "kafka.yaml"} {
		data, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		for _, part := range strings.Split(string(data), "\n---") {
			u := &unstructured.Unstructured{}
			if err := yaml.Unmarshal([]byte(part), &u.Object); err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			if len(u.Object) == 0 {
				continue
			}
			u.SetNamespace(ns)
			create(t, te.Client, u)
		}
	}
	create(t, te.Client, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "circulation-config"},
		Data: map[string]string{"jvm-options": "-Xmx256m", "keycloak_key_cache_ttl_ms": "60000"}})
	kafka(t, te.Client, ns, "my-cluster", "ZooKeeper", nil)
	// The replicas section pins an autoscaled service through its autoscaler.
	create(t, te.Client, &autoscalingv2.HorizontalPodAutoscaler{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "inventory"},
		Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
			ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "inventory"},
			MinReplicas:    ptr.To[int32](1), MaxReplicas: 3,
		}})
}
