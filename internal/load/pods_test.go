package load

import (
	"os"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
)

var t0 = time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)

// podIn builds a pod created at t0 whose k6 container is in the given state.
func podIn(state corev1.ContainerState, mutate ...func(*corev1.Pod)) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", CreationTimestamp: metav1.NewTime(t0)}}
	p.Status.Phase = corev1.PodRunning
	p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: k6Container, State: state}}
	for _, m := range mutate {
		m(p)
	}
	return p
}

func terminated(code int32, reason string) corev1.ContainerState {
	return corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
		ExitCode: code, Reason: reason,
		StartedAt: metav1.NewTime(t0.Add(2 * time.Second)), FinishedAt: metav1.NewTime(t0.Add(62 * time.Second)),
	}}
}

func waiting(reason string) corev1.ContainerState {
	return corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason, Message: "details"}}
}

func TestViewPod(t *testing.T) {
	running := corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(t0.Add(2 * time.Second))}}
	tests := []struct {
		name       string
		pod        *corev1.Pod
		now        time.Time
		wantPhase  podPhase
		wantReason string
	}{
		{name: "running", pod: podIn(running), now: t0.Add(time.Minute), wantPhase: podRunning},
		{name: "ended", pod: podIn(terminated(0, "Completed")), now: t0.Add(time.Minute), wantPhase: podEnded, wantReason: "Completed"},
		{name: "OOM killed", pod: podIn(terminated(137, "OOMKilled")), now: t0.Add(time.Minute), wantPhase: podEnded, wantReason: "OOMKilled"},
		{name: "pulling for a while is fine", pod: podIn(waiting("ErrImagePull")), now: t0.Add(time.Minute), wantPhase: podPending},
		{name: "image pull back-off is fatal", pod: podIn(waiting("ImagePullBackOff")), now: t0.Add(time.Minute), wantPhase: podBroken, wantReason: "ImagePullBackOff"},
		{name: "a missing Secret key is fatal", pod: podIn(waiting("CreateContainerConfigError")), now: t0.Add(time.Minute), wantPhase: podBroken, wantReason: "CreateContainerConfigError"},
		{name: "pending within the timeout", pod: podIn(corev1.ContainerState{}), now: t0.Add(4 * time.Minute), wantPhase: podPending},
		{name: "pending past the timeout", pod: podIn(corev1.ContainerState{}), now: t0.Add(6 * time.Minute), wantPhase: podBroken, wantReason: "PendingTimeout"},
		{
			name: "evicted",
			pod: podIn(terminated(137, "Error"), func(p *corev1.Pod) {
				p.Status.Phase, p.Status.Reason, p.Status.Message = corev1.PodFailed, "Evicted", "The node was low on resource: memory."
			}),
			now: t0.Add(time.Minute), wantPhase: podBroken, wantReason: "Evicted",
		},
		{
			name: "failed before the container ran",
			pod: podIn(corev1.ContainerState{}, func(p *corev1.Pod) {
				p.Status.Phase, p.Status.Reason = corev1.PodFailed, "OutOfcpu"
			}),
			now: t0.Add(time.Minute), wantPhase: podBroken, wantReason: "OutOfcpu",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := viewPod(tt.pod, k6Container, 0, tt.now, 5*time.Minute)
			if v.phase != tt.wantPhase || v.reason != tt.wantReason {
				t.Fatalf("viewPod() = phase %d reason %q; want phase %d reason %q", v.phase, v.reason, tt.wantPhase, tt.wantReason)
			}
		})
	}
}

func TestEvaluate(t *testing.T) {
	ended := func(i int, code int32, reason string) podView {
		return podView{name: "p", index: i, phase: podEnded, exitCode: code, reason: reason,
			started: t0.Add(time.Duration(i) * time.Second), finished: t0.Add(time.Minute + time.Duration(i)*time.Second)}
	}
	run := func(i int) podView {
		return podView{index: i, phase: podRunning, started: t0.Add(time.Duration(i) * time.Second)}
	}
	tests := []struct {
		name           string
		views          []podView
		wantState      perfexpv1alpha1.ScenarioRunState
		wantReason     string
		wantThresholds bool
		wantCodes      []int32
		wantFinished   time.Time
	}{
		{name: "all pods ended well", views: []podView{ended(0, 0, ""), ended(1, 0, ""), ended(2, 0, "")},
			wantState: perfexpv1alpha1.ScenarioSucceeded, wantCodes: []int32{0, 0, 0}, wantFinished: t0.Add(62 * time.Second)},
		{name: "still running", views: []podView{ended(0, 0, ""), run(1)},
			wantState: perfexpv1alpha1.ScenarioRunning, wantCodes: []int32{0, -1}},
		{name: "nothing started", views: []podView{{phase: podPending}},
			wantState: perfexpv1alpha1.ScenarioWaiting, wantCodes: []int32{-1}},
		{name: "crossed thresholds still succeed", views: []podView{ended(0, 0, ""), ended(1, 99, "Error")},
			wantState: perfexpv1alpha1.ScenarioSucceeded, wantThresholds: true, wantCodes: []int32{0, 99}, wantFinished: t0.Add(61 * time.Second)},
		{name: "a script error fails at once", views: []podView{ended(0, 107, "Error"), run(1)},
			wantState: perfexpv1alpha1.ScenarioFailed, wantReason: perfexpv1alpha1.ReasonScriptError, wantCodes: []int32{107, -1}},
		{name: "a script abort fails", views: []podView{ended(0, 108, "Error")},
			wantState: perfexpv1alpha1.ScenarioFailed, wantReason: perfexpv1alpha1.ReasonScriptError, wantCodes: []int32{108}, wantFinished: t0.Add(time.Minute)},
		{name: "OOM killed fails the load", views: []podView{ended(0, 137, "OOMKilled")},
			wantState: perfexpv1alpha1.ScenarioFailed, wantReason: perfexpv1alpha1.ReasonLoadFailed, wantCodes: []int32{137}, wantFinished: t0.Add(time.Minute)},
		{name: "a broken pod fails the load", views: []podView{run(0), {index: 1, phase: podBroken, reason: "Evicted"}},
			wantState: perfexpv1alpha1.ScenarioFailed, wantReason: perfexpv1alpha1.ReasonLoadFailed, wantCodes: []int32{-1, -1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u := evaluate(tt.views)
			if u.state != tt.wantState || u.failureReason != tt.wantReason || u.thresholds != tt.wantThresholds {
				t.Fatalf("evaluate() = state %s reason %q thresholds %v; want %s %q %v", u.state, u.failureReason, u.thresholds, tt.wantState, tt.wantReason, tt.wantThresholds)
			}
			if len(u.exitCodes) != len(tt.wantCodes) {
				t.Fatalf("exit codes %v, want %v", u.exitCodes, tt.wantCodes)
			}
			for i := range u.exitCodes {
				if u.exitCodes[i] != tt.wantCodes[i] {
					t.Fatalf("exit codes %v, want %v", u.exitCodes, tt.wantCodes)
				}
			}
			if !u.finished.Equal(tt.wantFinished) {
				t.Fatalf("finished %s, want %s", u.finished, tt.wantFinished)
			}
		})
	}
}

func TestExtractSummary(t *testing.T) {
	real, err := os.ReadFile("testdata/k6-log.txt")
	if err != nil {
		t.Fatal(err)
	}
	// A real log of a k6 pod whose threshold was crossed, as the pod log API returned it on the
	// local cluster: k6's error line (standard error) inside the JSON (standard output).
	crossed, err := os.ReadFile("testdata/k6-log-threshold-crossed.txt")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name           string
		log            string
		wantErr        bool
		wantIterations float64
	}{
		{name: "k6's error line inside the JSON", log: string(crossed), wantIterations: 6621},
		{name: "a JSON-format log line inside the JSON", log: "{\n  \"metrics\": {\"iterations\": {\"count\": 5}},\n{\"level\":\"error\",\"msg\":\"thresholds crossed\",\"time\":\"x\"}\n  \"root_group\": {}\n}\n", wantIterations: 5},
		// A real k6 log: console.log lines holding "{", the text summary, then the JSON.
		{name: "real k6 output", log: string(real), wantIterations: 10},
		{name: "JSON before the text summary", log: "{\n  \"metrics\": {\"iterations\": {\"count\": 3}}\n}\n\n  █ TOTAL RESULTS\n", wantIterations: 3},
		{name: "k6 failed before the summary", log: "time=x level=error msg=\"ReferenceError\"\n", wantErr: true},
		{name: "a cut-off summary", log: "{\n  \"metrics\": {\"iterations\"", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ExtractSummary([]byte(tt.log))
			if tt.wantErr {
				if err == nil {
					t.Fatalf("want an error, got %s", got)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(string(got), "\n") {
				t.Errorf("summary not compacted: %s", got)
			}
			s, err := parseSummary(got)
			if err != nil {
				t.Fatal(err)
			}
			if n, _ := s.Metrics["iterations"].Value("count"); n != tt.wantIterations {
				t.Fatalf("iterations = %v, want %v", n, tt.wantIterations)
			}
		})
	}
}

func TestLogTail(t *testing.T) {
	log := "line 1\nline 2\nline 3\n{\n  \"metrics\": {}\n}\nafter\n"
	tests := []struct {
		name, log    string
		lines, limit int
		want         string
	}{
		{name: "the summary is left out", lines: 10, limit: 1000, want: "line 1\nline 2\nline 3\nafter"},
		{name: "the last lines", lines: 2, limit: 1000, want: "line 3\nafter"},
		{name: "bounded in bytes", lines: 10, limit: 9, want: "...\nafter"},
		// A script's console.log reaches the failure message, the event and the terminal of
		// whoever watches: ESC, BEL, CR and C1 are replaced.
		{name: "terminal controls are replaced", log: "fine\n\x1b[2J\x1b]0;pwned\x07\rFAKE: Succeeded\u009b31m\n", lines: 10, limit: 1000,
			want: "fine\n\ufffd[2J\ufffd]0;pwned\ufffd\ufffdFAKE: Succeeded\ufffd31m"},
		{name: "bounded in bytes on a character boundary", log: "ééééé\n", lines: 10, limit: 8, want: "...éé"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := log
			if tt.log != "" {
				in = tt.log
			}
			if got := LogTail([]byte(in), tt.lines, tt.limit); got != tt.want {
				t.Fatalf("LogTail() = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestReadTail(t *testing.T) {
	data := strings.Repeat("0123456789", 10000)
	got, err := readTail(strings.NewReader(data), 25)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != data[len(data)-25:] {
		t.Fatalf("readTail kept %q", got)
	}
}
