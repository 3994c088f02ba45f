package controllers

import (
	"bytes"
	"context"
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/google/uuid"
	promapi "github.com/prometheus/client_golang/api"
	promv1 "github.com/prometheus/client_golang/api/prometheus/v1"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta/testrestmapper"
	"k8s.io/apimachinery/pkg/api/resource"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	metavalidation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/yaml"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/analyzer"
	"github.com/perfexp/perfexp/internal/load"
	"github.com/perfexp/perfexp/internal/step"
	"github.com/perfexp/perfexp/internal/testenv"
	"github.com/perfexp/perfexp/internal/testenv/admission"
	"github.com/perfexp/perfexp/internal/variant"
)

// FuzzExperimentSpec checks that the API server's admission and the operator's own checks
// agree on PerfExperiment specs. A spec is one of the ready manifests (config/samples,
// examples/, scenarios/) changed field by field by the fuzz input (see specEdits); it goes
// through the CRD's schema, defaults and CEL rules as the API server runs them
// (internal/testenv/admission), then, when admitted, through what the reconciler runs on it
// before and during its run, with the real collaborators against an in-memory cluster:
//
//   - Pending: the overall timeout (overallTimeoutProblem) and the queue's scope (queueProblem);
//   - Queued: the pre-run check (precheck: the baseline chain, the custom queries rendered and
//     tried against a Prometheus that answers every query with an empty vector);
//   - Preparing: variant.Environment.Prepare (the access rules, the plan, the dry run, the patches);
//   - SettingUp, WarmingUp, Running: the first step of load.Runner's Setup, WarmUp and Run (the
//     runner pods' rules, the scripts, the Jobs and ConfigMaps it creates);
//   - Restoring: variant.Environment.Restore, until done.
//
// The property, for every admitted spec: no check panics; each step either goes on (Done or
// Wait) or fails clean, with a condition reason listed in docs/conditions.md and a message;
// no step returns an error (the in-memory cluster never fails, so an error here is one the
// reconciler would retry until the phase's deadline instead of saying what is wrong); every
// object the operator creates would pass the API server's checks of names and labels; and
// after Restore every Deployment, StatefulSet, ConfigMap, Service and HPA of the cluster is as
// it was. For every refused spec: each refusal names a field and says why.
//
// What it does not cover: the ValidatingAdmissionPolicies (they ask the authorizer about the
// author; internal/access has their envtest tests), the analysis after the run, and what a
// real API server refuses in objects beyond names and labels (the envtest property test in
// api_property_test.go sends random specs through the real thing, slower).
func FuzzExperimentSpec(f *testing.F) {
	seeds := seedExperiments(f)
	for i := range seeds {
		f.Add(uint8(i), []byte{})
	}
	// A few edits to start from: each field kind once, so the fuzzer begins with every branch.
	for op := range len(specEdits) {
		f.Add(uint8(op%len(seeds)), []byte{byte(op), 0, 1, 2, 3})
	}
	crd, err := admission.Load(filepath.Join(testenv.Root(), "config", "crd", "bases", "perfexp.dev_perfexperiments.yaml"))
	if err != nil {
		f.Fatal(err)
	}
	documented := documentedReasons(f)

	f.Fuzz(func(t *testing.T, seed uint8, edits []byte) {
		exp := seeds[int(seed)%len(seeds)].DeepCopy()
		in := &fuzzInput{b: edits}
		for !in.empty() {
			specEdits[in.intn(len(specEdits))].apply(exp, in)
		}
		obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(exp)
		if err != nil {
			t.Fatal(err)
		}
		u := &unstructured.Unstructured{Object: obj}
		if errs := crd.Create(t.Context(), u); len(errs) > 0 {
			t.Logf("refused: %v", errs.ToAggregate())
			for _, e := range errs {
				if e.Field == "" && e.Detail == "" || e.Error() == "" {
					t.Fatalf("refused without saying why: %#v", e)
				}
			}
			return
		}
		admitted := &perfexpv1alpha1.PerfExperiment{}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, admitted); err != nil {
			t.Fatalf("the admitted object does not read back: %v", err)
		}
		ownSamples(t, admitted)
		runAdmitted(t, admitted, documented)
	})
}

// ownSamples checks that an admitted experiment's k6 runners tag every sample with its own
// test id and write where perfexp says, whatever its scenarios' args and env.
func ownSamples(t *testing.T, exp *perfexpv1alpha1.PerfExperiment) {
	t.Helper()
	const rw = "http://prometheus.monitoring:9090/api/v1/write"
	for _, sc := range exp.Spec.Load.Scenarios {
		args := load.K6Args("own-00000000", sc.Name, sc.Args, "/scripts/perfexp-run.js")
		var testID string
		for i, a := range args {
			if v, ok := strings.CutPrefix(a, "testid="); ok && i > 0 && args[i-1] == "--tag" {
				testID = v
			}
			if strings.HasPrefix(a, "--tag=testid=") || strings.HasPrefix(a, "-o") || strings.HasPrefix(a, "--out=") {
				t.Fatalf("scenario %s admitted with args %q", sc.Name, sc.Args)
			}
		}
		if testID != "own-00000000" {
			t.Fatalf("scenario %s's samples are tagged testid=%s: args %q", sc.Name, testID, args)
		}
		for _, e := range load.K6Env(rw, sc.Env) {
			if e.Name == "K6_PROMETHEUS_RW_SERVER_URL" && e.Value != rw {
				t.Fatalf("scenario %s writes its samples to %q", sc.Name, e.Value)
			}
		}
	}
}

// The namespaces of the in-memory cluster: the experiments' own (opted in), a second opted-in
// one, one that has not opted in, the operator's and the cluster's own.
const (
	fuzzTeam     = "team"
	fuzzOther    = "env-a"
	fuzzPlain    = "plain"
	fuzzOperator = "perfexp-system"
	fuzzProm     = "http://prometheus.fuzz:9090"
)

const fuzzScript = "export default function () {}"

// runAdmitted runs what the reconciler runs on an admitted experiment, in its order, and
// checks every answer.
func runAdmitted(t *testing.T, exp *perfexpv1alpha1.PerfExperiment, documented map[string]bool) {
	ctx := log.IntoContext(context.Background(), logr.Discard())
	exp.Namespace, exp.UID = fuzzTeam, types.UID(uuid.NewSHA1(uuid.NameSpaceOID, []byte(exp.Name)).String())
	exp.CreationTimestamp = metav1.NewTime(time.Now().Add(-time.Hour))
	exp.Status.TestID, exp.Status.Queue = exp.TestID(), exp.QueueName()

	c, created := fuzzCluster(t, exp)
	before := clusterState(t, c)
	env := variant.New(c, variant.Options{OperatorNamespaces: []string{fuzzOperator}, PrometheusURLs: []string{fuzzProm},
		PollInterval: time.Millisecond})
	runner := load.New(c, load.Options{PollInterval: time.Millisecond})
	r := &PerfExperimentReconciler{
		Client: c, Environment: env, Load: runner,
		Analyzer: &analyzer.PrometheusAnalyzer{Client: c, PrometheusURL: fuzzProm, NewAPI: emptyPrometheus},
	}

	// ended reports whether the step ended the run (a clean failure), and fails the test on
	// anything that is not Done, Wait or a clean failure.
	ended := func(what string, res step.Result, err error) bool {
		t.Helper()
		if err != nil {
			t.Fatalf("%s returned an error, which the reconciler retries (until the phase's deadline; Restoring for ever) instead of saying what is wrong: %v\nspec %s", what, err, specJSON(exp))
		}
		if res.Failure == nil {
			return false
		}
		t.Logf("%s failed the run: %s: %s", what, res.Failure.Reason, res.Failure.Message)
		if !documented[res.Failure.Reason] || strings.TrimSpace(res.Failure.Message) == "" {
			t.Fatalf("%s failed with reason %q (documented: %v) and message %q\nspec %s", what, res.Failure.Reason, documented[res.Failure.Reason], res.Failure.Message, specJSON(exp))
		}
		return true
	}
	problem := func(what, msg string, reason string) bool {
		t.Helper()
		return ended(what, failIf(msg, reason), nil)
	}

	restore := func() {
		t.Helper()
		for range 20 {
			res, err := env.Restore(ctx, exp)
			if ended("Restore", res, err) || res.Done {
				break
			}
		}
		if after := clusterState(t, c); after != before {
			t.Fatalf("the cluster is not as before after Restore:\nbefore %s\nafter  %s\nspec %s", before, after, specJSON(exp))
		}
		if len(*created) > 0 {
			t.Logf("created %v", *created)
		}
	}

	if problem("overallTimeoutProblem", r.overallTimeoutProblem(exp), perfexpv1alpha1.ReasonInvalidTimeouts) {
		return
	}
	msg, err := r.queueProblem(ctx, exp)
	if ended("queueProblem", failIf(msg, perfexpv1alpha1.ReasonQueueNotAllowed), err) {
		return
	}
	if res, err := r.precheck(ctx, exp); ended("precheck", res, err) {
		return
	}
	defer restore()
	for i := 0; ; i++ {
		res, err := env.Prepare(ctx, exp)
		if ended("Prepare", res, err) {
			return
		}
		if res.Done || i == 5 {
			break
		}
	}
	if exp.Spec.Setup != nil {
		res, err := runner.Setup(ctx, exp)
		if ended("Setup", res, err) {
			return
		}
	}
	if exp.Spec.Load.WarmUp != nil {
		res, err := runner.WarmUp(ctx, exp)
		if ended("WarmUp", res, err) {
			return
		}
	}
	res, err := runner.Run(ctx, exp)
	if !ended("Run", res, err) {
		t.Logf("ran: %s", res.Waiting)
	}
}

func failIf(msg, reason string) step.Result {
	if msg == "" {
		return step.Done()
	}
	return step.Fail(reason, "%s", msg)
}

func specJSON(exp *perfexpv1alpha1.PerfExperiment) string {
	data, _ := json.Marshal(exp.Spec)
	return string(data)
}

// fuzzCluster is the in-memory cluster an experiment runs against: Namespaces, the workloads
// of the seeds' variants and a few more, script ConfigMaps, a Service and an autoscaler. Every
// object the operator creates is checked as the API server checks names and labels; created
// lists them.
func fuzzCluster(t *testing.T, exp *perfexpv1alpha1.PerfExperiment) (client.Client, *[]string) {
	t.Helper()
	var objs []client.Object
	for _, ns := range []string{fuzzTeam, fuzzOther, fuzzPlain, fuzzOperator, "kube-system"} {
		n := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}
		if ns == fuzzTeam || ns == fuzzOther {
			n.Labels = map[string]string{perfexpv1alpha1.LabelAllowExperiments: "true"}
		}
		objs = append(objs, n)
	}
	// The script ConfigMaps the scenarios name, with every key they name and two more.
	scripts := map[string]map[string]string{}
	for _, sc := range exp.Spec.Load.Scenarios {
		if cm := sc.Script.ConfigMap; cm != nil && cm.Name != "missing" {
			if scripts[cm.Name] == nil {
				scripts[cm.Name] = map[string]string{"script.js": fuzzScript, "main.js": fuzzScript}
			}
			if cm.Key != "" && cm.Key != "missing.js" {
				scripts[cm.Name][cm.Key] = fuzzScript
			}
		}
	}
	for _, ns := range []string{fuzzTeam, fuzzOther, fuzzPlain} {
		for _, name := range fuzzWorkloadNames(exp) {
			objs = append(objs, fuzzDeployment(ns, name))
		}
		objs = append(objs, fuzzStatefulSet(ns, "db"),
			&corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"}, Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}}},
			&autoscalingv2.HorizontalPodAutoscaler{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "api"}, Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
				ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "api"}, MaxReplicas: 4}})
		for name, data := range scripts {
			objs = append(objs, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Data: data})
		}
		objs = append(objs, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "settings"}, Data: map[string]string{"POOL": "10"}})
	}
	if b := exp.Spec.Baseline; b != nil && b.Name != "before" && b.Name != exp.Name {
		// The baseline exists, except under the name the edits use for a missing one.
		base := exp.DeepCopy()
		base.Name, base.UID, base.Spec.Baseline, base.Status = b.Name, types.UID(uuid.NewSHA1(uuid.NameSpaceOID, []byte(b.Name)).String()), nil, perfexpv1alpha1.PerfExperimentStatus{}
		objs = append(objs, base)
	}
	created := &[]string{}
	scheme := testenv.Scheme()
	cl := fake.NewClientBuilder().WithScheme(scheme).WithRESTMapper(testrestmapper.TestOnlyStaticRESTMapper(scheme)).WithObjects(objs...).
		WithStatusSubresource(&perfexpv1alpha1.PerfExperiment{}).
		WithInterceptorFuncs(interceptor.Funcs{Create: func(ctx context.Context, cl client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			gvk, err := apiutil.GVKForObject(obj, scheme)
			if err != nil {
				return err
			}
			if errs := apiServerMetaChecks(gvk.Kind, obj); len(errs) > 0 {
				return apierrors.NewInvalid(gvk.GroupKind(), obj.GetName(), errs)
			}
			// As the API server does; the load's timeouts count from the creation time.
			obj.SetCreationTimestamp(metav1.Now())
			obj.SetUID(types.UID(uuid.NewSHA1(uuid.NameSpaceOID, []byte(gvk.Kind+"/"+obj.GetName())).String()))
			*created = append(*created, gvk.Kind+" "+obj.GetName())
			return cl.Create(ctx, obj, opts...)
		}}).Build()
	return cl, created
}

// apiServerMetaChecks are the API server's checks of a new object's name and labels, and of
// its pod template's labels; a Job's name goes into a label of its pods, so it is a label
// value too (63 characters at most).
func apiServerMetaChecks(kind string, obj client.Object) field.ErrorList {
	errs := apivalidation.ValidateObjectMetaAccessor(obj, true, apivalidation.NameIsDNSSubdomain, field.NewPath("metadata"))
	if kind == "Job" {
		for _, msg := range validation.IsValidLabelValue(obj.GetName()) {
			errs = append(errs, field.Invalid(field.NewPath("metadata", "name"), obj.GetName(), msg))
		}
	}
	u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return append(errs, field.InternalError(nil, err))
	}
	if labels, found, _ := unstructured.NestedStringMap(u, "spec", "template", "metadata", "labels"); found {
		errs = append(errs, metavalidation.ValidateLabels(labels, field.NewPath("spec", "template", "metadata", "labels"))...)
	}
	return errs
}

// fuzzWorkloadNames are the Deployments of each namespace: the two of the fuzz's own edits and
// every name the seed's variant selects, so a sample's variant finds its workloads.
func fuzzWorkloadNames(exp *perfexpv1alpha1.PerfExperiment) []string {
	names := []string{"web", "api"}
	add := func(sel perfexpv1alpha1.WorkloadSelector) {
		for _, n := range sel.Names {
			if !slices.Contains(names, n) && len(names) < 12 {
				names = append(names, n)
			}
		}
	}
	if v := exp.Spec.Variant; v != nil {
		for _, w := range v.Workloads {
			add(w.WorkloadSelector)
		}
		if v.Kafka != nil && v.Kafka.Bootstrap != nil {
			add(v.Kafka.Bootstrap.Workloads)
		}
	}
	return names
}

func fuzzDeployment(ns, name string) *appsv1.Deployment {
	labels := map[string]string{"app": name, "tier": "backend", "perfexp.dev/uses-kafka": "true"}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels, Generation: 1},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](2),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: fuzzPodSpec(name)},
		},
		Status: appsv1.DeploymentStatus{ObservedGeneration: 1, Replicas: 2, UpdatedReplicas: 2, ReadyReplicas: 2, AvailableReplicas: 2},
	}
}

func fuzzStatefulSet(ns, name string) *appsv1.StatefulSet {
	labels := map[string]string{"app": name, "tier": "data"}
	return &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels, Generation: 1},
		Spec: appsv1.StatefulSetSpec{
			Replicas: ptr.To[int32](1),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: fuzzPodSpec(name)},
		},
		Status: appsv1.StatefulSetStatus{ObservedGeneration: 1, Replicas: 1, UpdatedReplicas: 1, ReadyReplicas: 1, AvailableReplicas: 1, CurrentReplicas: 1},
	}
}

func fuzzPodSpec(name string) corev1.PodSpec {
	return corev1.PodSpec{Containers: []corev1.Container{{
		Name: name, Image: "registry.example/" + name + ":1.0",
		Env: []corev1.EnvVar{{Name: "HTTP_MAXPOOLSIZE", Value: "10"}, {Name: "KAFKA_BOOTSTRAP_SERVERS", Value: "kafka-zk:9092"}},
		Resources: corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("64Mi")},
			Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m"), corev1.ResourceMemory: resource.MustParse("256Mi")},
		},
	}}}
}

// clusterState is what Restore must put back: the specs, labels and annotations of every
// object an experiment may change.
func clusterState(t *testing.T, c client.Client) string {
	t.Helper()
	var b strings.Builder
	for _, list := range []client.ObjectList{&appsv1.DeploymentList{}, &appsv1.StatefulSetList{}, &corev1.ConfigMapList{}, &corev1.ServiceList{}, &autoscalingv2.HorizontalPodAutoscalerList{}} {
		if err := c.List(context.Background(), list); err != nil {
			t.Fatal(err)
		}
		data, err := json.Marshal(list)
		if err != nil {
			t.Fatal(err)
		}
		var l struct {
			Items []struct {
				Metadata struct {
					Namespace, Name string
					Labels          map[string]string
					Annotations     map[string]string
					OwnerReferences []any `json:"ownerReferences"`
				}
				Spec any
				Data any
			}
		}
		if err := json.Unmarshal(data, &l); err != nil {
			t.Fatal(err)
		}
		for _, it := range l.Items {
			if len(it.Metadata.OwnerReferences) > 0 {
				continue // the experiment's own (scripts, summaries): collected with it
			}
			item, _ := json.Marshal(it)
			b.Write(item)
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// emptyPrometheus answers every query with an empty vector, as a Prometheus that has no data
// for the run yet does.
func emptyPrometheus(url string) (promv1.API, error) {
	cl, err := promapi.NewClient(promapi.Config{Address: url, RoundTripper: roundTripper(func(*http.Request) (*http.Response, error) {
		return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": []string{"application/json"}},
			Body: io.NopCloser(strings.NewReader(`{"status":"success","data":{"resultType":"vector","result":[]}}`))}, nil
	})})
	if err != nil {
		return nil, err
	}
	return promv1.NewAPI(cl), nil
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// seedExperiments reads every PerfExperiment of config/samples, examples/ and scenarios/.
func seedExperiments(f *testing.F) []*perfexpv1alpha1.PerfExperiment {
	var out []*perfexpv1alpha1.PerfExperiment
	root := testenv.Root()
	for _, dir := range []string{"config/samples", "examples", "scenarios"} {
		err := filepath.WalkDir(filepath.Join(root, dir), func(path string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".yaml") {
				return err
			}
			data, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			for _, doc := range bytes.Split(data, []byte("\n---")) {
				var meta metav1.TypeMeta
				if yaml.Unmarshal(doc, &meta) != nil || meta.Kind != "PerfExperiment" {
					continue
				}
				exp := &perfexpv1alpha1.PerfExperiment{}
				if err := yaml.Unmarshal(doc, exp); err != nil {
					continue // a kustomize patch, not a whole manifest
				}
				exp.Namespace = fuzzTeam
				if !slices.Contains([]string{fuzzTeam, fuzzOther, fuzzPlain}, exp.Spec.TargetNamespace) {
					exp.Spec.TargetNamespace = "" // the seeds' own namespaces are not in the in-memory cluster
				}
				out = append(out, exp)
			}
			return nil
		})
		if err != nil {
			f.Fatal(err)
		}
	}
	if len(out) < 10 {
		f.Fatalf("found %d seed experiments", len(out))
	}
	return out
}

// documentedReasons are the condition reasons of api/v1alpha1/conditions.go that
// docs/conditions.md documents.
func documentedReasons(f *testing.F) map[string]bool {
	root := testenv.Root()
	file, err := parser.ParseFile(token.NewFileSet(), filepath.Join(root, "api", "v1alpha1", "conditions.go"), nil, 0)
	if err != nil {
		f.Fatal(err)
	}
	doc, err := os.ReadFile(filepath.Join(root, "docs", "conditions.md"))
	if err != nil {
		f.Fatal(err)
	}
	out := map[string]bool{}
	ast.Inspect(file, func(n ast.Node) bool {
		vs, ok := n.(*ast.ValueSpec)
		if !ok {
			return true
		}
		for i, name := range vs.Names {
			if !strings.HasPrefix(name.Name, "Reason") || i >= len(vs.Values) {
				continue
			}
			if lit, ok := vs.Values[i].(*ast.BasicLit); ok && lit.Kind == token.STRING {
				v, _ := strconv.Unquote(lit.Value)
				out[v] = bytes.Contains(doc, []byte("`"+v+"`"))
			}
		}
		return true
	})
	if len(out) < 30 {
		f.Fatalf("found %d reasons", len(out))
	}
	return out
}

// An experiment stored before the CRD checked a patch target's apiVersion (or admitted by an
// older CRD) still fails clean and restores: Restore used to read the target it could not
// parse on every call, so Restoring, which never gives up, held the queue for ever. Found by
// FuzzExperimentSpec (testdata/fuzz/FuzzExperimentSpec/restore-unparsable-patch-apiversion,
// now refused at admission).
func TestRestoreSkipsAnUnparsablePatchTarget(t *testing.T) {
	exp := &perfexpv1alpha1.PerfExperiment{ObjectMeta: metav1.ObjectMeta{Name: "stored-before"}}
	exp.Spec.Load.Scenarios = []perfexpv1alpha1.Scenario{{Name: "s", Script: perfexpv1alpha1.ScriptSource{Inline: fuzzScript},
		VUs: ptr.To[int32](1), Duration: &metav1.Duration{Duration: time.Minute}, Parallelism: 1}}
	exp.Spec.Variant = &perfexpv1alpha1.Variant{Patches: []perfexpv1alpha1.ObjectPatch{{
		Target: perfexpv1alpha1.ObjectTarget{APIVersion: "a/b/c", Kind: "ConfigMap", Name: "settings"},
		Type:   perfexpv1alpha1.PatchTypeStrategicMerge, Patch: `{"data":{"POOL":"50"}}`}}}
	runAdmitted(t, exp, map[string]bool{perfexpv1alpha1.ReasonInvalidVariant: true})
}
