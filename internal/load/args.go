package load

import (
	"strings"

	corev1 "k8s.io/api/core/v1"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
)

// SummaryPath is where k6 writes its end-of-test summary (--summary-export): the container's
// standard output, so the summary reaches the pod log next to k6's text summary without a shell
// in the image. perfexp reads it back from the log when the pod has ended. It is perfexp's
// summary only when the script has no handleSummary of its own, and then nothing of the script
// reaches standard output; otherwise the entry script prints perfexp's summary as framed lines
// (SummaryFrame), which the log reading prefers.
const SummaryPath = "/dev/stdout"

// ScriptDir is where a Job's runner pods mount the unit's script ConfigMap.
const ScriptDir = "/scripts"

// K6Args is the k6 command line (after the image's k6 entrypoint) of one unit: every sample is
// tagged with the experiment's test id and the scenario name and written to Prometheus by
// remote write; the summary goes to the log. The user's extra arguments come before perfexp's
// flags, so perfexp's win (k6 keeps the last value of a repeated tag or flag): the API refuses
// arguments that set perfexp's tags or outputs, and an object admitted before that rule still
// cannot tag its samples with another experiment's test id.
func K6Args(testID, scenario string, userArgs []string, script string) []string {
	args := append([]string{"run"}, userArgs...)
	args = append(args, K6Flags(testID, scenario)...)
	return append(args, script)
}

// InstanceTag is the tag that tells apart the samples of a scenario's runner pods. Without it
// the pods would write the same series and overwrite each other's counts in Prometheus; with it
// a scenario's total is the sum over its pods. k6-operator tags its runners the same way.
const InstanceTag = "instance_id"

// K6Flags are the flags perfexp gives every k6 run of the Job runner. The pod's completion
// index reaches the instance tag through Kubernetes' $(VAR) expansion of container args, from
// the JOB_COMPLETION_INDEX variable the Job controller sets in each pod of an Indexed Job.
func K6Flags(testID, scenario string) []string {
	// The progress bar would print three lines a second into the pod log for the whole run.
	flags := append([]string{"--quiet"}, taggingFlags(testID, scenario)...)
	return append(flags, "--tag", InstanceTag+"=$(JOB_COMPLETION_INDEX)")
}

// taggingFlags tag every sample with the test id and scenario, write samples to Prometheus and
// the JSON summary to the log. k6-operator adds --quiet itself.
func taggingFlags(testID, scenario string) []string {
	return []string{
		"--tag", "testid=" + testID,
		"--tag", "scenario=" + scenario,
		"--out", "experimental-prometheus-rw",
		"--summary-export", SummaryPath,
	}
}

// RemoteWriteURL is where an experiment's k6 samples go: the Prometheus of the experiment's
// analysis when it names one, else the operator's.
func RemoteWriteURL(exp *perfexpv1alpha1.PerfExperiment, operatorDefault string) string {
	if a := exp.Spec.Analysis; a != nil && a.PrometheusURL != "" {
		return strings.TrimRight(a.PrometheusURL, "/") + "/api/v1/write"
	}
	return operatorDefault
}

// K6Env is the environment of a k6 container: the remote-write settings, then the scenario's
// own env. A scenario's variable replaces perfexp's of the same name, so a user can switch off
// native histograms (K6_PROMETHEUS_RW_TREND_AS_NATIVE_HISTOGRAM=false); a variable that says
// where samples go or how they are tagged (perfexpv1alpha1.ReservedK6Env) is dropped, for
// objects admitted before the API refused it.
func K6Env(remoteWriteURL string, user []perfexpv1alpha1.EnvVar) []corev1.EnvVar {
	kept := make([]perfexpv1alpha1.EnvVar, 0, len(user))
	for _, e := range user {
		if !perfexpv1alpha1.ReservedK6Env(e.Name) {
			kept = append(kept, e)
		}
	}
	user = kept
	env := []corev1.EnvVar{
		{Name: "K6_PROMETHEUS_RW_SERVER_URL", Value: remoteWriteURL},
		// Native histograms give percentiles over any window within a few percent; they are the
		// primary source of latency results.
		{Name: "K6_PROMETHEUS_RW_TREND_AS_NATIVE_HISTOGRAM", Value: k6True},
		// Used by k6 only when native histograms are switched off.
		{Name: "K6_PROMETHEUS_RW_TREND_STATS", Value: strings.Join(DefaultTrendStats, ",")},
		// k6 looks for its config file under $HOME; the root filesystem is read-only.
		{Name: "HOME", Value: "/tmp"},
	}
	return mergeEnv(env, toEnv(user))
}

func toEnv(in []perfexpv1alpha1.EnvVar) []corev1.EnvVar {
	out := make([]corev1.EnvVar, 0, len(in))
	for _, e := range in {
		v := corev1.EnvVar{Name: e.Name, Value: e.Value}
		if e.ValueFrom != nil {
			v.ValueFrom = &corev1.EnvVarSource{
				ConfigMapKeyRef: e.ValueFrom.ConfigMapKeyRef,
				SecretKeyRef:    e.ValueFrom.SecretKeyRef,
				FieldRef:        e.ValueFrom.FieldRef,
			}
		}
		out = append(out, v)
	}
	return out
}

// mergeEnv returns base with every variable of override replacing the one of the same name.
func mergeEnv(base, override []corev1.EnvVar) []corev1.EnvVar {
	out := make([]corev1.EnvVar, 0, len(base)+len(override))
	replaced := make(map[string]bool, len(override))
	for _, o := range override {
		replaced[o.Name] = true
	}
	for _, b := range base {
		if !replaced[b.Name] {
			out = append(out, b)
		}
	}
	return append(out, override...)
}
