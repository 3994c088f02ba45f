package load

import (
	"fmt"
	"path"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
)

// maxScriptBytes keeps a script ConfigMap under the API server's 1 MiB object limit, with room
// for the entry script and metadata.
const maxScriptBytes = 900 * 1024

// scriptFiles are the user's script files: an inline script, or every key of the named
// ConfigMap (so the script's relative imports of other keys keep working).
type scriptFiles struct {
	data   map[string]string
	binary map[string][]byte
	// main is the key of the script k6 runs.
	main string
}

func (f scriptFiles) size() int {
	n := 0
	for k, v := range f.data {
		n += len(k) + len(v)
	}
	for k, v := range f.binary {
		n += len(k) + len(v)
	}
	return n
}

// scriptConfigMap is a unit's ConfigMap: the generated entry script beside a copy of the
// user's script files. The copy freezes the script for the run (a ConfigMap edited during an
// experiment cannot change its load) and is kept with the experiment for later reference.
func scriptConfigMap(exp *perfexpv1alpha1.PerfExperiment, u unit, files scriptFiles, segmented bool) (*corev1.ConfigMap, error) {
	if _, clash := files.data[EntryKey]; clash {
		return nil, fmt.Errorf("the script ConfigMap has a key %s, which perfexp reserves for its entry script", EntryKey)
	}
	if _, clash := files.binary[EntryKey]; clash {
		return nil, fmt.Errorf("the script ConfigMap has a key %s, which perfexp reserves for its entry script", EntryKey)
	}
	if strings.HasSuffix(files.main, ".tar") {
		return nil, fmt.Errorf("script %s is a k6 archive; perfexp runs scripts (.js) so that it can set their load shape", files.main)
	}
	if files.size() > maxScriptBytes {
		return nil, fmt.Errorf("the script files take %d bytes; at most %d fit beside perfexp's entry script in one ConfigMap", files.size(), maxScriptBytes)
	}
	entry, err := EntryScript(u, files.main, segmented)
	if err != nil {
		return nil, err
	}
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{
			Name: UnitName(exp, u.name), Namespace: exp.Namespace,
			Labels: labels(exp, componentLoad, u.name),
		},
		Data:       map[string]string{EntryKey: entry},
		BinaryData: files.binary,
	}
	for k, v := range files.data {
		cm.Data[k] = v
	}
	return cm, nil
}

// runnerPodSecurity is the restricted Pod Security Standard: non-root, no privilege escalation,
// no capabilities, the runtime's seccomp profile.
func runnerPodSecurity(user int64) *corev1.PodSecurityContext {
	return &corev1.PodSecurityContext{
		RunAsNonRoot:   ptr.To(true),
		RunAsUser:      ptr.To(user),
		RunAsGroup:     ptr.To(user),
		FSGroup:        ptr.To(user),
		SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
	}
}

func restrictedContainer() *corev1.SecurityContext {
	return &corev1.SecurityContext{
		AllowPrivilegeEscalation: ptr.To(false),
		ReadOnlyRootFilesystem:   ptr.To(true),
		RunAsNonRoot:             ptr.To(true),
		Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
		SeccompProfile:           &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
	}
}

// tmpVolume gives a read-only root filesystem a writable /tmp.
func tmpVolume() (corev1.Volume, corev1.VolumeMount) {
	return corev1.Volume{Name: "tmp", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
		corev1.VolumeMount{Name: "tmp", MountPath: "/tmp"}
}

func (r *Runner) image(exp *perfexpv1alpha1.PerfExperiment, sc *perfexpv1alpha1.Scenario) string {
	switch {
	case sc.Image != "":
		return sc.Image
	case exp.Spec.Load.Image != "":
		return exp.Spec.Load.Image
	}
	return r.opts.K6Image
}

func resources(exp *perfexpv1alpha1.PerfExperiment, sc *perfexpv1alpha1.Scenario) corev1.ResourceRequirements {
	switch {
	case sc.Resources != nil:
		return *sc.Resources.DeepCopy()
	case exp.Spec.Load.Pod != nil && exp.Spec.Load.Pod.Resources != nil:
		return *exp.Spec.Load.Pod.Resources.DeepCopy()
	}
	return corev1.ResourceRequirements{}
}

// k6Job is the Indexed Job of a unit: parallelism = completions = N pods, each running its
// execution segment of the load. No pod is ever retried (backoffLimitPerIndex 0): a second
// attempt would add load that was not declared. A failed pod does not stop the others, so
// every pod's exit code and summary are known.
func (r *Runner) k6Job(exp *perfexpv1alpha1.PerfExperiment, u unit, configMap string) *batchv1.Job {
	n := u.parallelism
	lbl := labels(exp, componentLoad, u.name)
	tmp, tmpMount := tmpVolume()
	env, authVols, authMounts := r.k6Env(exp, u.sc.Env)
	spec := corev1.PodSpec{
		RestartPolicy:                corev1.RestartPolicyNever,
		SecurityContext:              runnerPodSecurity(r.opts.RunAsUser),
		EnableServiceLinks:           ptr.To(false),
		AutomountServiceAccountToken: ptr.To(false),
		Containers: []corev1.Container{{
			Name:            k6Container,
			Image:           r.image(exp, u.sc),
			ImagePullPolicy: corev1.PullIfNotPresent,
			Args:            K6Args(exp.Status.TestID, u.name, u.sc.Args, path.Join(ScriptDir, EntryKey)),
			Env:             env,
			Resources:       resources(exp, u.sc),
			SecurityContext: restrictedContainer(),
			// When the log cannot be read, the status still carries its last lines.
			TerminationMessagePolicy: corev1.TerminationMessageFallbackToLogsOnError,
			VolumeMounts: append([]corev1.VolumeMount{
				{Name: scriptsVolume, MountPath: ScriptDir, ReadOnly: true},
				tmpMount,
			}, authMounts...),
		}},
		Volumes: append([]corev1.Volume{
			{Name: scriptsVolume, VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
				LocalObjectReference: corev1.LocalObjectReference{Name: configMap},
			}}},
			tmp,
		}, authVols...),
	}
	r.placePod(&spec, exp.Spec.Load.Pod)
	return &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: UnitName(exp, u.name), Namespace: exp.Namespace, Labels: lbl},
		Spec: batchv1.JobSpec{
			CompletionMode:       ptr.To(batchv1.IndexedCompletion),
			Completions:          ptr.To(n),
			Parallelism:          ptr.To(n),
			BackoffLimitPerIndex: ptr.To[int32](0),
			// A replacement pod could start while a terminating one still sends requests.
			PodReplacementPolicy: ptr.To(batchv1.Failed),
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: lbl},
				Spec:       spec,
			},
		},
	}
}

// placePod applies the experiment's placement of runner pods and their service account: the
// runner account with no token unless the experiment names another (which the operator's
// allow-list must hold).
func (r *Runner) placePod(spec *corev1.PodSpec, p *perfexpv1alpha1.RunnerPod) {
	var named string
	if p != nil {
		spec.NodeSelector = p.NodeSelector
		spec.Tolerations = p.Tolerations
		named = p.ServiceAccountName
	}
	r.runAs(spec, named)
}

// runAs sets a runner pod's service account. The runner account gets no token: a pod that
// sends requests or loads data over the network needs none, and a token in a pod the author
// controls is the account's rights in the author's hands. A service account the experiment
// names (and the administrator allowed) is chosen for its identity, so it keeps its own
// automount setting.
func (r *Runner) runAs(spec *corev1.PodSpec, named string) {
	if named != "" && named != r.opts.Pods.Account() {
		spec.ServiceAccountName = named
		spec.AutomountServiceAccountToken = nil
		return
	}
	spec.ServiceAccountName = r.opts.Pods.Account()
	spec.AutomountServiceAccountToken = ptr.To(false)
}

// dataJobObject is the Job of spec.setup or spec.teardown; both have one shape.
func (r *Runner) dataJobObject(exp *perfexpv1alpha1.PerfExperiment, d dataJob) *batchv1.Job {
	s := d.spec
	lbl := labels(exp, d.component, "")
	tmp, tmpMount := tmpVolume()
	c := corev1.Container{
		Name:            setupContainer,
		Image:           s.Image,
		Command:         s.Command,
		Args:            s.Args,
		Env:             toEnv(s.Env),
		SecurityContext: restrictedContainer(),
		VolumeMounts:    []corev1.VolumeMount{tmpMount},
		// The failure message carries the end of the log even when the log cannot be read.
		TerminationMessagePolicy: corev1.TerminationMessageFallbackToLogsOnError,
	}
	// Data-preparation tools often write next to themselves; the root filesystem stays
	// writable for them (the restricted Pod Security Standard does not require it read-only).
	c.SecurityContext.ReadOnlyRootFilesystem = nil
	if s.Resources != nil {
		c.Resources = *s.Resources.DeepCopy()
	}
	spec := corev1.PodSpec{
		RestartPolicy:      corev1.RestartPolicyNever,
		EnableServiceLinks: ptr.To(false),
		SecurityContext: &corev1.PodSecurityContext{
			RunAsNonRoot:   ptr.To(true),
			RunAsUser:      s.RunAsUser,
			SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
		},
		Containers: []corev1.Container{c},
		Volumes:    []corev1.Volume{tmp},
	}
	r.runAs(&spec, s.ServiceAccountName)
	return &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: d.name, Namespace: exp.Namespace, Labels: lbl},
		Spec: batchv1.JobSpec{
			BackoffLimit: ptr.To(s.BackoffLimit),
			Template:     corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: lbl}, Spec: spec},
		},
	}
}
