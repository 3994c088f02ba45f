package load

import (
	"fmt"
	"sort"
	"strconv"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
)

// podPhase is where one runner pod is, as far as the experiment is concerned.
type podPhase int

const (
	// podPending has not started its container yet.
	podPending podPhase = iota
	// podRunning runs its container.
	podRunning
	// podEnded's container terminated; see exitCode.
	podEnded
	// podBroken can never run or finish its load: an image or configuration error, eviction,
	// or waiting to start for longer than the pending timeout.
	podBroken
)

// podView is what the experiment needs to know of one runner pod.
type podView struct {
	name     string
	index    int
	phase    podPhase
	started  time.Time
	finished time.Time
	exitCode int32
	// reason is Kubernetes' word for what happened (OOMKilled, Evicted, ImagePullBackOff...).
	reason string
	// message explains reason, or is the end of the log the kubelet kept as the container's
	// termination message.
	message string
}

// fatalWaiting are container waiting reasons that no amount of waiting fixes: a missing image
// that will not be pulled, or a container that cannot be created (for example a Secret key an
// env var names does not exist). ErrImagePull is left to the pending timeout: a first failed
// pull may be a registry's hiccup, and it turns into ImagePullBackOff when it repeats.
var fatalWaiting = map[string]bool{
	"ImagePullBackOff":           true,
	"ErrImageNeverPull":          true,
	"InvalidImageName":           true,
	"CreateContainerConfigError": true,
	"CreateContainerError":       true,
	"RunContainerError":          true,
}

// reasonPendingTimeout is the reason of a pod that did not start within the pending timeout:
// perfexp's own word, as Kubernetes has none for it.
const reasonPendingTimeout = "PendingTimeout"

// viewPod reads one pod's state from its status.
func viewPod(pod *corev1.Pod, container string, index int, now time.Time, pendingTimeout time.Duration) podView {
	v := podView{name: pod.Name, index: index}
	var cs *corev1.ContainerStatus
	for i := range pod.Status.ContainerStatuses {
		if pod.Status.ContainerStatuses[i].Name == container {
			cs = &pod.Status.ContainerStatuses[i]
		}
	}
	if pod.Status.Reason == "Evicted" || (pod.Status.Phase == corev1.PodFailed && (cs == nil || cs.State.Terminated == nil)) {
		v.phase, v.reason, v.message = podBroken, orDefault(pod.Status.Reason, "PodFailed"), pod.Status.Message
		if cs != nil && cs.State.Terminated != nil {
			v.started, v.finished = cs.State.Terminated.StartedAt.Time, cs.State.Terminated.FinishedAt.Time
		}
		return v
	}
	if cs != nil {
		switch {
		case cs.State.Terminated != nil:
			t := cs.State.Terminated
			v.phase, v.exitCode, v.reason, v.message = podEnded, t.ExitCode, t.Reason, t.Message
			v.started, v.finished = t.StartedAt.Time, t.FinishedAt.Time
			return v
		case cs.State.Running != nil:
			v.phase, v.started = podRunning, cs.State.Running.StartedAt.Time
			return v
		case cs.State.Waiting != nil && fatalWaiting[cs.State.Waiting.Reason]:
			v.phase, v.reason, v.message = podBroken, cs.State.Waiting.Reason, cs.State.Waiting.Message
			return v
		}
	}
	v.phase = podPending
	if waited := now.Sub(pod.CreationTimestamp.Time); waited > pendingTimeout {
		v.phase, v.reason = podBroken, reasonPendingTimeout
		v.message = fmt.Sprintf("not started after %s: %s", waited.Round(time.Second), whyPending(pod, cs))
	}
	return v
}

// whyPending says what a pod that has not started waits for.
func whyPending(pod *corev1.Pod, cs *corev1.ContainerStatus) string {
	if cs != nil && cs.State.Waiting != nil && cs.State.Waiting.Reason != "" {
		return cs.State.Waiting.Reason + " " + cs.State.Waiting.Message
	}
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status != corev1.ConditionTrue {
			return "unschedulable: " + c.Message
		}
	}
	return "the pod has not started"
}

// missingPod stands for an index whose pod does not exist (yet): the Job controller may still
// be creating it, or a quota refuses it. It counts as pending since the Job was created.
func missingPod(index int, since, now time.Time, pendingTimeout time.Duration) podView {
	v := podView{index: index, phase: podPending}
	if waited := now.Sub(since); waited > pendingTimeout {
		v.phase, v.reason = podBroken, reasonPendingTimeout
		v.message = fmt.Sprintf("no pod after %s (look at the Job's events: a quota or admission policy may refuse it)", waited.Round(time.Second))
	}
	return v
}

// jobPods picks the latest pod of each completion index of an Indexed Job.
func jobPods(pods []corev1.Pod, n int) map[int]*corev1.Pod {
	byIndex := make(map[int]*corev1.Pod, n)
	for i := range pods {
		p := &pods[i]
		idx, err := strconv.Atoi(p.Annotations[batchv1.JobCompletionIndexAnnotation])
		if err != nil {
			idx, err = strconv.Atoi(p.Labels[batchv1.JobCompletionIndexAnnotation])
		}
		if err != nil || idx < 0 || idx >= n {
			continue
		}
		if cur, ok := byIndex[idx]; !ok || cur.CreationTimestamp.Before(&p.CreationTimestamp) {
			byIndex[idx] = p
		}
	}
	return byIndex
}

// k6 exit codes (go.k6.io/k6/errext/exitcodes) that perfexp tells apart.
const (
	exitThresholds    = 99
	exitSetupTimeout  = 100
	exitTeardownTO    = 101
	exitInvalidConfig = 104
	exitExternalAbort = 105
	exitScriptError   = 107
	exitScriptAborted = 108
	exitMarkedFailed  = 110
)

// exitMeaning says what a k6 exit code means: whether the load ran as declared, and if not, the
// condition reason and a description.
func exitMeaning(code int32) (ok bool, reason, what string) {
	switch code {
	case 0:
		return true, "", ""
	case exitThresholds:
		return true, "", "thresholds crossed"
	case exitScriptError:
		return false, perfexpv1alpha1.ReasonScriptError, "the script threw an exception"
	case exitScriptAborted:
		return false, perfexpv1alpha1.ReasonScriptError, "the script aborted the test (test.abort())"
	case exitMarkedFailed:
		return false, perfexpv1alpha1.ReasonScriptError, "the script marked the test as failed (test.fail())"
	case exitInvalidConfig:
		return false, perfexpv1alpha1.ReasonScriptError, "k6 refused its configuration (script options or args)"
	case exitSetupTimeout:
		return false, perfexpv1alpha1.ReasonScriptError, "setup() timed out"
	case exitTeardownTO:
		return false, perfexpv1alpha1.ReasonScriptError, "teardown() timed out"
	case exitExternalAbort:
		return false, perfexpv1alpha1.ReasonLoadFailed, "k6 was stopped from outside (signal)"
	case 137:
		return false, perfexpv1alpha1.ReasonLoadFailed, "k6 was killed (SIGKILL)"
	}
	return false, perfexpv1alpha1.ReasonLoadFailed, "k6 failed"
}

// unitView is the state of one unit's pods taken together.
type unitView struct {
	state perfexpv1alpha1.ScenarioRunState
	// started is the earliest container start; finished the latest end, once every pod ended.
	started, finished time.Time
	exitCodes         []int32
	thresholds        bool
	// failed is the first pod that failed the unit, with the reason and description.
	failed        *podView
	failureReason string
	failureWhat   string
	// ended are the pods that ended with a k6 exit code, whose summaries may be kept.
	ended   []podView
	pending int
	running int
}

// evaluate combines the views of a unit's n pods (index order) into the unit's state.
func evaluate(views []podView) unitView {
	u := unitView{exitCodes: make([]int32, len(views))}
	allEnded := true
	for i := range views {
		v := &views[i]
		u.exitCodes[i] = -1
		if !v.started.IsZero() && (u.started.IsZero() || v.started.Before(u.started)) {
			u.started = v.started
		}
		if v.finished.After(u.finished) {
			u.finished = v.finished
		}
		switch v.phase {
		case podPending:
			u.pending++
			allEnded = false
		case podRunning:
			u.running++
			allEnded = false
		case podBroken:
			if u.failed == nil {
				u.failed, u.failureReason, u.failureWhat = v, perfexpv1alpha1.ReasonLoadFailed, brokenWhat(v)
			}
		case podEnded:
			u.exitCodes[i] = v.exitCode
			u.ended = append(u.ended, *v)
			ok, reason, what := exitMeaning(v.exitCode)
			if v.reason == "OOMKilled" {
				ok, reason, what = false, perfexpv1alpha1.ReasonLoadFailed, "k6 ran out of memory (OOMKilled); give the runner pods more memory"
			}
			if v.exitCode == exitThresholds {
				u.thresholds = true
			}
			if !ok && u.failed == nil {
				u.failed, u.failureReason, u.failureWhat = v, reason, fmt.Sprintf("%s (exit code %d)", what, v.exitCode)
			}
		}
	}
	switch {
	case u.failed != nil:
		u.state = perfexpv1alpha1.ScenarioFailed
	case allEnded:
		u.state = perfexpv1alpha1.ScenarioSucceeded
	case u.running > 0 || !u.started.IsZero():
		u.state = perfexpv1alpha1.ScenarioRunning
	default:
		u.state = perfexpv1alpha1.ScenarioWaiting
	}
	if !allEnded {
		u.finished = time.Time{}
	}
	sort.Slice(u.ended, func(i, j int) bool { return u.ended[i].index < u.ended[j].index })
	return u
}

func brokenWhat(v *podView) string {
	switch v.reason {
	case "Evicted":
		return "the pod was evicted: " + v.message
	case reasonPendingTimeout:
		return "the pod is " + v.message
	case "ImagePullBackOff", "ErrImageNeverPull", "InvalidImageName":
		return "the k6 image cannot be pulled (" + v.reason + "): " + v.message
	}
	return v.reason + ": " + v.message
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
