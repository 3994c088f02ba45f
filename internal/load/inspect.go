package load

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"path"
	"slices"
	"sort"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/step"
)

// scriptsVolume is the volume of a runner pod's script ConfigMap.
const scriptsVolume = "scripts"

// componentInspect marks the pods that run `k6 inspect` on a fromScript scenario's script.
const componentInspect = "inspect"

// InspectJobName is the name of the Job that inspects a fromScript scenario's script.
func InspectJobName(exp *perfexpv1alpha1.PerfExperiment, scenario string) string {
	return childName(exp.Name, "inspect-"+scenario, maxSetupJobName)
}

// toInspect are the fromScript scenarios that give no scriptDuration and have not been inspected.
func toInspect(exp *perfexpv1alpha1.PerfExperiment) []unit {
	var out []unit
	for _, u := range scenarioUnits(exp) {
		if u.fromScript && u.sc.ScriptDuration == nil && inspected(exp, u.name) == nil {
			out = append(out, u)
		}
	}
	return out
}

// inspected is what k6 inspect found in a scenario's script, nil when it has not run.
func inspected(exp *perfexpv1alpha1.PerfExperiment, scenario string) *perfexpv1alpha1.ScriptInspection {
	if exp.Status.Load == nil {
		return nil
	}
	for i := range exp.Status.Load.Inspected {
		if exp.Status.Load.Inspected[i].Scenario == scenario {
			return &exp.Status.Load.Inspected[i]
		}
	}
	return nil
}

// Inspect runs `k6 inspect --execution-requirements` on the script of every fromScript scenario
// that gives no scriptDuration, in a short Job of the scenario's image, and records its
// totalDuration and maxVUs in status.load.inspected; Done once every one is known. A script
// with fewer VUs than the scenario's parallelism fails, as a load shape's does at admission. The script
// inspected is the copy the load runs later (the scenario's script ConfigMap, created here).
func (r *Runner) Inspect(ctx context.Context, exp *perfexpv1alpha1.PerfExperiment) (step.Result, error) {
	for _, u := range toInspect(exp) {
		found, res, err := r.inspectUnit(ctx, exp, u)
		if err != nil || res.Failure != nil {
			return res, err
		}
		if found == nil {
			return res, nil
		}
		ls := loadStatus(exp)
		ls.Inspected = append(ls.Inspected, *found)
	}
	return step.Done(), nil
}

// InspectedDuration is the totalDuration k6 inspect found for a scenario's script, if it ran.
func InspectedDuration(exp *perfexpv1alpha1.PerfExperiment, scenario string) (time.Duration, bool) {
	if in := inspected(exp, scenario); in != nil {
		return in.TotalDuration.Duration, true
	}
	return 0, false
}

// InspectionSummary says what k6 inspect found, one clause per inspected scenario, or "".
func InspectionSummary(exp *perfexpv1alpha1.PerfExperiment) string {
	if exp.Status.Load == nil || len(exp.Status.Load.Inspected) == 0 {
		return ""
	}
	parts := make([]string, 0, len(exp.Status.Load.Inspected))
	for _, in := range exp.Status.Load.Inspected {
		parts = append(parts, fmt.Sprintf("scenario %s: k6 inspect plans %s with at most %d VUs (k6 scenarios %s)",
			in.Scenario, in.TotalDuration.Duration, in.MaxVUs, strings.Join(in.K6Scenarios, ", ")))
	}
	return strings.Join(parts, "; ")
}

func (r *Runner) inspectUnit(ctx context.Context, exp *perfexpv1alpha1.PerfExperiment, u unit) (*perfexpv1alpha1.ScriptInspection, step.Result, error) {
	what := "scenario " + u.name + "'s script inspection"
	// The entry script the runner will run: the Job runner's splits the load itself, a
	// TestRun's gets its segments from k6-operator.
	segmented := exp.Spec.Load.Runner != perfexpv1alpha1.RunnerK6Operator
	cm, err := r.ensureScriptConfigMap(ctx, exp, u, segmented)
	if err != nil {
		res, err := asResult(err)
		return nil, res, err
	}
	job := r.inspectJob(exp, u, cm)
	spec := &job.Spec.Template.Spec
	if err := r.admitPod(ctx, exp, what+" Job "+job.Name, spec.ServiceAccountName, spec.Containers[0].Image); err != nil {
		res, err := asResult(err)
		return nil, res, err
	}
	existing := &batchv1.Job{}
	if err := r.createOwned(ctx, exp, job, existing); err != nil {
		res, err := asResult(err)
		return nil, res, err
	}
	if existing.Name != "" {
		job = existing
	}
	pods := &corev1.PodList{}
	if err := r.c.List(ctx, pods, client.InNamespace(exp.Namespace), client.MatchingLabels(job.Spec.Template.Labels)); err != nil {
		return nil, step.Result{}, fmt.Errorf("listing the %s pods: %w", what, err)
	}
	now := r.opts.Clock.Now()
	if len(pods.Items) == 0 {
		if v := missingPod(0, job.CreationTimestamp.Time, now, r.opts.PendingTimeout); v.phase == podBroken {
			return nil, step.Fail(perfexpv1alpha1.ReasonScriptError, "%s Job %s: %s", what, job.Name, v.message), nil
		}
		return nil, step.Wait(2*time.Second, "%s Job %s to start a pod", what, job.Name), nil
	}
	pod := &pods.Items[0]
	v := viewPod(pod, k6Container, 0, now, r.opts.PendingTimeout)
	switch {
	case v.phase == podBroken:
		return nil, step.Fail(perfexpv1alpha1.ReasonScriptError, "%s Job %s, pod %s: %s", what, job.Name, pod.Name, brokenWhat(&v)), nil
	case v.phase != podEnded:
		return nil, step.Wait(2*time.Second, "%s Job %s", what, job.Name), nil
	case v.exitCode != 0:
		return nil, step.Fail(perfexpv1alpha1.ReasonScriptError, "k6 inspect of scenario %s's script exited with %d%s; give the scenario a scriptDuration to run it without inspection",
			u.name, v.exitCode, r.podLogTail(ctx, pod, k6Container)), nil
	}
	if r.opts.Logs == nil {
		return nil, step.Fail(perfexpv1alpha1.ReasonScriptError, "scenario %s: this operator reads no pod logs, so it cannot read k6 inspect's answer; give the scenario a scriptDuration", u.name), nil
	}
	log, err := r.opts.Logs.Tail(ctx, pod.Namespace, pod.Name, k6Container, maxLogTail)
	if err != nil {
		return nil, step.Wait(5*time.Second, "reading the log of %s pod %s: %v", what, pod.Name, err), nil
	}
	found, err := ParseInspection(log)
	if err != nil {
		return nil, step.Fail(perfexpv1alpha1.ReasonScriptError, "scenario %s: %v", u.name, err), nil
	}
	found.Scenario = u.name
	if found.MaxVUs < int64(u.parallelism) {
		// As the API refuses vus below parallelism for a load shape: a pod without a VU adds a
		// runner that makes no load.
		return nil, step.Fail(perfexpv1alpha1.ReasonScriptError, "scenario %s: k6 inspect says its script needs at most %d VUs, fewer than its parallelism %d, so a runner pod would get none; lower parallelism to at most %d",
			u.name, found.MaxVUs, u.parallelism, found.MaxVUs), nil
	}
	return found, step.Done(), nil
}

// InspectArgs is the k6 command line (after the image's k6 entrypoint) that inspects a script.
func InspectArgs(script string) []string {
	return []string{"inspect", "--execution-requirements", script}
}

// inspectJob runs k6 inspect once on the unit's entry script, with the scenario's image, env and
// pod placement: a script may read its options from __ENV.
func (r *Runner) inspectJob(exp *perfexpv1alpha1.PerfExperiment, u unit, configMap string) *batchv1.Job {
	lbl := labels(exp, componentInspect, u.name)
	tmp, tmpMount := tmpVolume()
	spec := corev1.PodSpec{
		RestartPolicy:                corev1.RestartPolicyNever,
		SecurityContext:              runnerPodSecurity(r.opts.RunAsUser),
		EnableServiceLinks:           ptr.To(false),
		AutomountServiceAccountToken: ptr.To(false),
		Containers: []corev1.Container{{
			Name:                     k6Container,
			Image:                    r.image(exp, u.sc),
			ImagePullPolicy:          corev1.PullIfNotPresent,
			Args:                     InspectArgs(path.Join(ScriptDir, EntryKey)),
			Env:                      toEnv(u.sc.Env),
			SecurityContext:          restrictedContainer(),
			TerminationMessagePolicy: corev1.TerminationMessageFallbackToLogsOnError,
			VolumeMounts:             []corev1.VolumeMount{{Name: scriptsVolume, MountPath: ScriptDir, ReadOnly: true}, tmpMount},
		}},
		Volumes: []corev1.Volume{
			{Name: scriptsVolume, VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
				LocalObjectReference: corev1.LocalObjectReference{Name: configMap},
			}}},
			tmp,
		},
	}
	r.placePod(&spec, exp.Spec.Load.Pod)
	return &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: InspectJobName(exp, u.name), Namespace: exp.Namespace, Labels: lbl},
		Spec: batchv1.JobSpec{
			BackoffLimit:            ptr.To[int32](0),
			ActiveDeadlineSeconds:   ptr.To[int64](300),
			TTLSecondsAfterFinished: ptr.To[int32](3600),
			Template:                corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: lbl}, Spec: spec},
		},
	}
}

// ParseInspection reads the JSON that `k6 inspect --execution-requirements` prints, which may
// sit among k6's log lines in a pod log: totalDuration, maxVUs and the scenarios' names.
func ParseInspection(log []byte) (*perfexpv1alpha1.ScriptInspection, error) {
	start := -1
	if bytes.HasPrefix(log, []byte("{\n")) {
		start = 0
	} else if i := bytes.Index(log, []byte("\n{\n")); i >= 0 {
		start = i + 1
	}
	if start < 0 {
		return nil, fmt.Errorf("k6 inspect printed no JSON: %q", LogTail(log, tailLinesInMessage, tailBytesInMessage))
	}
	var out struct {
		TotalDuration *string                    `json:"totalDuration"`
		MaxVUs        *int64                     `json:"maxVUs"`
		Scenarios     map[string]json.RawMessage `json:"scenarios"`
	}
	if err := json.NewDecoder(bytes.NewReader(log[start:])).Decode(&out); err != nil {
		return nil, fmt.Errorf("reading k6 inspect's answer: %w", err)
	}
	if out.TotalDuration == nil || out.MaxVUs == nil {
		return nil, fmt.Errorf("k6 inspect gave no totalDuration and maxVUs (is the image's k6 older than v0.30?)")
	}
	d, err := time.ParseDuration(*out.TotalDuration)
	if err != nil {
		return nil, fmt.Errorf("k6 inspect's totalDuration %q: %w", *out.TotalDuration, err)
	}
	names := make([]string, 0, len(out.Scenarios))
	for name := range out.Scenarios {
		names = append(names, name)
	}
	sort.Strings(names)
	return &perfexpv1alpha1.ScriptInspection{TotalDuration: metav1.Duration{Duration: d}, MaxVUs: *out.MaxVUs, K6Scenarios: slices.Clip(names)}, nil
}
