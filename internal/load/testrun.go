package load

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
)

// TestRunGVK is k6-operator's TestRun. perfexp handles it as unstructured so that it does not
// depend on k6-operator's Go module, and works with any k6-operator that serves v1alpha1.
var TestRunGVK = schema.GroupVersionKind{Group: "k6.io", Version: "v1alpha1", Kind: "TestRun"}

// k6-operator's stages (TestRun status.stage).
const (
	stageFinished = "finished"
	stageStopped  = "stopped"
	stageError    = "error"
)

// Labels k6-operator puts on the runner pods of a TestRun.
const (
	k6OperatorApp    = "app"
	k6OperatorCR     = "k6_cr"
	k6OperatorRunner = "runner"
)

// k6True is true as k6 and k6-operator read it from a string: an environment variable, the
// TestRun's quiet field, the runner label.
const k6True = "true"

// testRunBackend runs each unit as a k6-operator TestRun. k6-operator splits the load over its
// runners with execution segments itself, starts them together, and reports stages; it does
// not report how k6 exited, so the runner pods' statuses are read here.
type testRunBackend struct{ r *Runner }

func newTestRun() *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(TestRunGVK)
	return u
}

// TestRun builds the TestRun of a unit whose script ConfigMap is configMap.
func (r *Runner) TestRun(exp *perfexpv1alpha1.PerfExperiment, u unit, configMap string) (*unstructured.Unstructured, error) {
	for _, a := range u.sc.Args {
		if strings.ContainsAny(a, " \t\n\"'") {
			return nil, fmt.Errorf("argument %q holds spaces or quotes, which k6-operator's arguments string cannot carry", a)
		}
	}
	// perfexp's flags last, so they win over the user's (see K6Args).
	args := append(append([]string{}, u.sc.Args...), taggingFlags(exp.Status.TestID, u.name)...)
	lbl := labels(exp, componentLoad, u.name)
	tmp, tmpMount := tmpVolume()
	env, authVols, authMounts := r.k6Env(exp, u.sc.Env)
	res := resources(exp, u.sc)
	runner := map[string]any{
		"image":                    r.image(exp, u.sc),
		"imagePullPolicy":          string(corev1.PullIfNotPresent),
		"env":                      env,
		"resources":                res,
		"metadata":                 map[string]any{"labels": lbl},
		"securityContext":          runnerPodSecurity(r.opts.RunAsUser),
		"containerSecurityContext": restrictedContainer(),
		"volumes":                  append([]corev1.Volume{tmp}, authVols...),
		"volumeMounts":             append([]corev1.VolumeMount{tmpMount}, authMounts...),
	}
	pod := corev1.PodSpec{}
	r.placePod(&pod, exp.Spec.Load.Pod)
	if len(pod.NodeSelector) > 0 {
		runner["nodeSelector"] = pod.NodeSelector
	}
	if len(pod.Tolerations) > 0 {
		runner["tolerations"] = pod.Tolerations
	}
	runner["serviceAccountName"] = pod.ServiceAccountName
	if pod.AutomountServiceAccountToken != nil {
		runner["automountServiceAccountToken"] = strconv.FormatBool(*pod.AutomountServiceAccountToken)
	}
	spec := map[string]any{
		"parallelism": u.parallelism,
		"script":      map[string]any{"configMap": map[string]any{"name": configMap, "file": EntryKey}},
		"arguments":   strings.Join(args, " "),
		"quiet":       k6True,
		"runner":      runner,
	}
	obj := map[string]any{
		"apiVersion": TestRunGVK.GroupVersion().String(),
		"kind":       TestRunGVK.Kind,
		"metadata":   map[string]any{"name": testRunName(exp, u.name), "namespace": exp.Namespace, "labels": lbl},
		"spec":       spec,
	}
	// Through JSON, the typed pieces (env, resources, security contexts) become the plain values
	// an unstructured object holds, with integers as int64.
	data, err := json.Marshal(obj)
	if err != nil {
		return nil, err
	}
	tr := newTestRun()
	if err := tr.UnmarshalJSON(data); err != nil {
		return nil, err
	}
	return tr, nil
}

func (b testRunBackend) ensure(ctx context.Context, exp *perfexpv1alpha1.PerfExperiment, u unit) (runnerRef, error) {
	name := testRunName(exp, u.name)
	tr := newTestRun()
	err := b.r.c.Get(ctx, types.NamespacedName{Namespace: exp.Namespace, Name: name}, tr)
	if err == nil {
		if err := b.r.checkOwned(ctx, exp, tr); err != nil {
			return runnerRef{}, err
		}
		return runnerRef{name: name, created: tr.GetCreationTimestamp().Time}, nil
	}
	if meta.IsNoMatchError(err) {
		return runnerRef{}, failure(perfexpv1alpha1.ReasonLoadFailed, "runner K6Operator needs k6-operator's TestRun kind (k6.io/v1alpha1), which this cluster does not serve")
	}
	if client.IgnoreNotFound(err) != nil {
		return runnerRef{}, err
	}
	// k6-operator passes each runner its execution segment on the command line, so the entry
	// script does not pick one.
	cm, err := b.r.ensureScriptConfigMap(ctx, exp, u, false)
	if err != nil {
		return runnerRef{}, err
	}
	tr, err = b.r.TestRun(exp, u, cm)
	if err != nil {
		return runnerRef{}, failure(perfexpv1alpha1.ReasonLoadFailed, "scenario %s: %v", u.sc.Name, err)
	}
	account, _, _ := unstructured.NestedString(tr.Object, "spec", "runner", "serviceAccountName")
	image, _, _ := unstructured.NestedString(tr.Object, "spec", "runner", "image")
	if err := b.r.admitPod(ctx, exp, "scenario "+u.name+"'s TestRun "+name, account, image); err != nil {
		return runnerRef{}, err
	}
	if err := b.r.admitPlacement("scenario "+u.name+"'s TestRun "+name, exp.Spec.Load.Pod); err != nil {
		return runnerRef{}, err
	}
	existing := newTestRun()
	if err := b.r.createOwned(ctx, exp, tr, existing); err != nil {
		return runnerRef{}, err
	}
	if existing.GetName() != "" {
		tr = existing
	}
	created := tr.GetCreationTimestamp().Time
	if created.IsZero() {
		created = b.r.opts.Clock.Now()
	}
	return runnerRef{name: name, created: created}, nil
}

func (b testRunBackend) observe(ctx context.Context, exp *perfexpv1alpha1.PerfExperiment, u unit, ref runnerRef) ([]podView, time.Time, error) {
	tr := newTestRun()
	if err := b.r.c.Get(ctx, types.NamespacedName{Namespace: exp.Namespace, Name: ref.name}, tr); err != nil {
		return nil, time.Time{}, fmt.Errorf("reading TestRun %s: %w", ref.name, err)
	}
	stage, _, _ := unstructured.NestedString(tr.Object, "status", "stage")
	conditions := testRunConditions(tr)
	if stage == stageError {
		return nil, time.Time{}, failure(perfexpv1alpha1.ReasonLoadFailed, "scenario %s: k6-operator reports an error for TestRun %s%s", u.name, ref.name, conditionMessages(conditions))
	}
	pods := &corev1.PodList{}
	if err := b.r.c.List(ctx, pods, client.InNamespace(exp.Namespace), client.MatchingLabels{
		k6OperatorApp: "k6", k6OperatorCR: ref.name, k6OperatorRunner: k6True,
	}); err != nil {
		return nil, time.Time{}, fmt.Errorf("listing the runner pods of TestRun %s: %w", ref.name, err)
	}
	n := int(u.parallelism)
	now := b.r.opts.Clock.Now()
	byIndex := make(map[int]*corev1.Pod, n)
	for i := range pods.Items {
		p := &pods.Items[i]
		idx, ok := runnerIndex(p, ref.name)
		if !ok || idx >= n {
			continue
		}
		if cur, seen := byIndex[idx]; !seen || cur.CreationTimestamp.Before(&p.CreationTimestamp) {
			byIndex[idx] = p
		}
	}
	views := make([]podView, n)
	for i := 0; i < n; i++ {
		if p, ok := byIndex[i]; ok {
			views[i] = viewPod(p, k6Container, i, now, b.r.opts.PendingTimeout)
		} else {
			views[i] = missingPod(i, ref.created, now, b.r.opts.PendingTimeout)
		}
	}
	// Runners start paused and wait for k6-operator's starter: the load begins when the
	// TestRun turns running, not when the containers start. Until then a running runner pod
	// makes no load.
	var start time.Time
	if c := meta.FindStatusCondition(conditions, "TestRunRunning"); c != nil && c.Status == metav1.ConditionTrue {
		start = c.LastTransitionTime.Time
	} else if stage == "" || strings.HasPrefix(stage, "init") || stage == "created" {
		for i := range views {
			if views[i].phase == podRunning {
				views[i].phase, views[i].started = podPending, time.Time{}
			}
		}
	}
	return views, start, nil
}

// runnerIndex is a runner pod's index, counted from 0. k6-operator names the runner Jobs of a
// TestRun <name>-1 ... <name>-N.
func runnerIndex(p *corev1.Pod, testRun string) (int, bool) {
	job := p.Labels[batchv1.JobNameLabel]
	if job == "" {
		job = p.Labels["job-name"]
	}
	n, err := strconv.Atoi(strings.TrimPrefix(job, testRun+"-"))
	if err != nil || !strings.HasPrefix(job, testRun+"-") || n < 1 {
		return 0, false
	}
	return n - 1, true
}

func testRunConditions(tr *unstructured.Unstructured) []metav1.Condition {
	raw, _, _ := unstructured.NestedSlice(tr.Object, "status", "conditions")
	out := make([]metav1.Condition, 0, len(raw))
	for _, c := range raw {
		m, ok := c.(map[string]any)
		if !ok {
			continue
		}
		var cond metav1.Condition
		if runtime.DefaultUnstructuredConverter.FromUnstructured(m, &cond) == nil {
			out = append(out, cond)
		}
	}
	return out
}

func conditionMessages(conds []metav1.Condition) string {
	var parts []string
	for _, c := range conds {
		if c.Message != "" {
			parts = append(parts, c.Type+": "+c.Message)
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return " (" + strings.Join(parts, "; ") + ")"
}

// testRunFinished reports whether a TestRun reached a final stage.
func testRunFinished(tr *unstructured.Unstructured) bool {
	stage, _, _ := unstructured.NestedString(tr.Object, "status", "stage")
	return stage == stageFinished || stage == stageError || stage == stageStopped
}
