package load

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/step"
	"github.com/perfexp/perfexp/internal/text"
)

// Bounds of what a failure message carries from a pod's log.
const (
	tailLinesInMessage = 20
	tailBytesInMessage = 1500
)

// backend runs units: as Indexed Jobs, or as k6-operator TestRuns.
type backend interface {
	// ensure creates the unit's script ConfigMap and runner unless they exist, and returns
	// the runner's name and creation time.
	ensure(ctx context.Context, exp *perfexpv1alpha1.PerfExperiment, u unit) (runnerRef, error)
	// observe returns the views of the unit's pods in index order. start, when not zero, is
	// when the load really began if that is later than the containers' start (k6-operator
	// starts its runners paused).
	observe(ctx context.Context, exp *perfexpv1alpha1.PerfExperiment, u unit, ref runnerRef) (views []podView, start time.Time, err error)
}

type runnerRef struct {
	name    string
	created time.Time
}

// failure is a permanent failure travelling as an error through the helpers.
func failure(reason, format string, args ...any) error {
	return &step.Failure{Reason: reason, Message: fmt.Sprintf(format, args...)}
}

// waitError is a wait travelling as an error through the helpers: the step is not done and asks
// to be called again after a while, without a failure and without an error in the log.
type waitError struct {
	after time.Duration
	why   string
}

func (w *waitError) Error() string { return w.why }

// asResult turns a *step.Failure error into a failed step and a *waitError into a wait, passing
// other errors on.
func asResult(err error) (step.Result, error) {
	var f *step.Failure
	if errors.As(err, &f) {
		return step.Result{Failure: f}, nil
	}
	var w *waitError
	if errors.As(err, &w) {
		return step.Wait(w.after, "%s", w.why), nil
	}
	return step.Result{}, err
}

func (r *Runner) backend(exp *perfexpv1alpha1.PerfExperiment) backend {
	if exp.Spec.Load.Runner == perfexpv1alpha1.RunnerK6Operator {
		return testRunBackend{r}
	}
	return jobBackend{r}
}

func (r *Runner) warmUp(ctx context.Context, exp *perfexpv1alpha1.PerfExperiment) (step.Result, error) {
	u, ok := warmUpUnit(exp)
	if !ok {
		return step.Done(), nil
	}
	if exp.Status.TestID == "" {
		return step.Result{}, errors.New("the experiment has no test id yet")
	}
	now := r.opts.Clock.Now()
	out, err := r.drive(ctx, exp, []unit{u}, now, now)
	if err != nil {
		return asResult(err)
	}
	w := window(exp)
	if w.Start == nil && !out.started.IsZero() {
		w.Start = &metav1.Time{Time: out.started}
	}
	if out.failure != nil {
		return step.Result{Failure: out.failure}, nil
	}
	if !out.done {
		return step.Wait(out.wait, "%s", out.waiting), nil
	}
	w.WarmUpEnd = &metav1.Time{Time: ceilSecond(out.finished)}
	log.FromContext(ctx).Info("Warm-up finished", "experiment", klogRef(exp), "start", w.Start, "end", w.WarmUpEnd)
	return step.Done(), nil
}

func (r *Runner) run(ctx context.Context, exp *perfexpv1alpha1.PerfExperiment) (step.Result, error) {
	if exp.Status.TestID == "" {
		return step.Result{}, errors.New("the experiment has no test id yet")
	}
	now := r.opts.Clock.Now()
	ls := loadStatus(exp)
	if ls.StartTime == nil {
		// Start delays count from here; recorded so that they keep counting from the same
		// moment across reconciles and operator restarts.
		ls.StartTime = &metav1.Time{Time: now}
	}
	out, err := r.drive(ctx, exp, scenarioUnits(exp), ls.StartTime.Time, now)
	if err != nil {
		return asResult(err)
	}
	w := window(exp)
	if w.Start == nil && !out.started.IsZero() {
		w.Start = &metav1.Time{Time: out.started}
	}
	if out.thresholds {
		ls.ThresholdsCrossed = true
	}
	if out.failure != nil {
		return step.Result{Failure: out.failure}, nil
	}
	if !out.done {
		return step.Wait(out.wait, "%s", out.waiting), nil
	}
	w.End = &metav1.Time{Time: ceilSecond(out.finished)}
	log.FromContext(ctx).Info("Load finished", "experiment", klogRef(exp), "start", w.Start, "end", w.End, "thresholdsCrossed", ls.ThresholdsCrossed)
	return step.Done(), nil
}

// driveOutcome is the state of a set of units run together.
type driveOutcome struct {
	done              bool
	started, finished time.Time
	thresholds        bool
	failure           *step.Failure
	wait              time.Duration
	waiting           string
}

// drive starts every unit whose start delay has passed, looks at the pods of every started
// unit, records each unit's state in status and keeps the summaries of pods that ended.
func (r *Runner) drive(ctx context.Context, exp *perfexpv1alpha1.PerfExperiment, units []unit, start, now time.Time) (driveOutcome, error) {
	out := driveOutcome{done: true, wait: r.opts.PollInterval}
	b := r.backend(exp)
	budget, cancel := r.newLogBudget(ctx)
	defer cancel()
	var waiting []string
	for _, u := range units {
		st := scenarioStatus(exp, u.name)
		if st.State == perfexpv1alpha1.ScenarioSucceeded {
			out.merge(st.StartTime, st.CompletionTime)
			continue
		}
		due := start.Add(u.startDelay)
		if now.Before(due) {
			st.State = perfexpv1alpha1.ScenarioWaiting
			out.done = false
			out.wait = min(out.wait, due.Sub(now))
			waiting = append(waiting, fmt.Sprintf("%s starts in %s", u.name, due.Sub(now).Round(time.Second)))
			continue
		}
		ref, err := b.ensure(ctx, exp, u)
		if err != nil {
			var f *step.Failure
			if errors.As(err, &f) {
				st.State, st.Message = perfexpv1alpha1.ScenarioFailed, text.Truncate(f.Message, 4096)
			}
			return out, err
		}
		st.Runner = ref.name
		// Pods are awaited from when the unit was due, in the operator's own time.
		if ref.created.Before(due) {
			ref.created = due
		}
		views, loadStart, err := b.observe(ctx, exp, u, ref)
		if err != nil {
			return out, err
		}
		uv := evaluate(views)
		if !loadStart.IsZero() && loadStart.After(uv.started) {
			uv.started = loadStart
		}
		st.State, st.ExitCodes = uv.state, uv.exitCodes
		setTime(&st.StartTime, uv.started)
		setTime(&st.CompletionTime, uv.finished)
		if uv.thresholds && u.name != WarmUpName {
			out.thresholds = true
		}
		out.merge(st.StartTime, nil)
		if uv.failed != nil {
			msg := r.failureMessage(ctx, exp, u.name, uv.failed, uv.failureWhat)
			st.Message = text.Truncate(msg, 4096)
			out.failure = &step.Failure{Reason: uv.failureReason, Message: msg}
			return out, nil
		}
		pending, err := r.keepSummaries(ctx, exp, u.name, uv.ended, now, st, budget)
		if err != nil {
			return out, err
		}
		if uv.state == perfexpv1alpha1.ScenarioSucceeded && (pending.count > 0 || pending.deferred > 0) {
			// Every pod ended: the load is over and only k6's summaries, a cross-check, are
			// awaited: the ones left for the next call, and an unreadable log for at most
			// SummaryTimeout after the end. Reported as running until then, so that the step
			// is not done before they are kept, and said as it is.
			st.State = perfexpv1alpha1.ScenarioRunning
			out.done = false
			msg, after := pending.waiting(u.name, uv.finished)
			out.wait = min(out.wait, after)
			waiting = append(waiting, msg)
			continue
		}
		if pending.deferred > 0 {
			out.wait = min(out.wait, moreLogsWait)
		}
		if uv.state != perfexpv1alpha1.ScenarioSucceeded {
			out.done = false
			waiting = append(waiting, fmt.Sprintf("%s: %d/%d pods running, %d pending, %d ended", u.name, uv.running, len(views), uv.pending, len(uv.ended)))
			continue
		}
		out.merge(st.StartTime, st.CompletionTime)
	}
	out.waiting = strings.Join(waiting, "; ")
	return out, nil
}

func (o *driveOutcome) merge(start, end *metav1.Time) {
	if start != nil && (o.started.IsZero() || start.Time.Before(o.started)) {
		o.started = start.Time
	}
	if end != nil && end.After(o.finished) {
		o.finished = end.Time
	}
}

// failureMessage says which pod failed how, with the end of its log.
func (r *Runner) failureMessage(ctx context.Context, exp *perfexpv1alpha1.PerfExperiment, unit string, v *podView, what string) string {
	msg := fmt.Sprintf("scenario %s, pod %d (%s): %s", unit, v.index, orDefault(v.name, "not created"), what)
	if v.phase != podEnded {
		return msg
	}
	tail := v.message
	if r.opts.Logs != nil && v.name != "" {
		if data, err := r.readLog(ctx, exp.Namespace, v.name, 64*1024); err == nil {
			tail = string(data)
		} else {
			log.FromContext(ctx).Info("Reading a failed pod's log failed", "pod", v.name, "error", err.Error())
		}
	}
	if tail = LogTail([]byte(tail), tailLinesInMessage, tailBytesInMessage); tail != "" {
		msg += "; log tail:\n" + tail
	}
	return msg
}

// recordK6Scenarios adds the k6 scenarios a summary counts to a scenario's status, in order.
func recordK6Scenarios(st *perfexpv1alpha1.ScenarioStatus, summary []byte) {
	if summary == nil {
		return
	}
	s, err := parseSummary(summary)
	if err != nil {
		return
	}
	for name := range s.Scenarios() {
		if !slices.Contains(st.K6Scenarios, name) && len(st.K6Scenarios) < 32 {
			st.K6Scenarios = append(st.K6Scenarios, name)
		}
	}
	slices.Sort(st.K6Scenarios)
}

// scriptFiles reads a scenario's script: inline, or every key of its ConfigMap.
func (r *Runner) scriptFiles(ctx context.Context, exp *perfexpv1alpha1.PerfExperiment, sc *perfexpv1alpha1.Scenario) (scriptFiles, error) {
	if sc.Script.ConfigMap == nil {
		return scriptFiles{data: map[string]string{InlineScriptKey: sc.Script.Inline}, main: InlineScriptKey}, nil
	}
	ref := sc.Script.ConfigMap
	key := orDefault(ref.Key, "script.js")
	cm := &corev1.ConfigMap{}
	if err := r.reader().Get(ctx, types.NamespacedName{Namespace: exp.Namespace, Name: ref.Name}, cm); err != nil {
		if apierrors.IsNotFound(err) {
			return scriptFiles{}, failure(perfexpv1alpha1.ReasonScriptError, "scenario %s: script ConfigMap %s not found in namespace %s", sc.Name, ref.Name, exp.Namespace)
		}
		return scriptFiles{}, err
	}
	if _, ok := cm.Data[key]; !ok {
		return scriptFiles{}, failure(perfexpv1alpha1.ReasonScriptError, "scenario %s: ConfigMap %s has no key %s", sc.Name, ref.Name, key)
	}
	return scriptFiles{data: cm.Data, binary: cm.BinaryData, main: key}, nil
}

func (r *Runner) reader() client.Reader {
	if r.opts.APIReader != nil {
		return r.opts.APIReader
	}
	return r.c
}

// ensureScriptConfigMap creates a unit's script ConfigMap unless it exists.
func (r *Runner) ensureScriptConfigMap(ctx context.Context, exp *perfexpv1alpha1.PerfExperiment, u unit, segmented bool) (string, error) {
	files, err := r.scriptFiles(ctx, exp, u.sc)
	if err != nil {
		return "", err
	}
	cm, err := scriptConfigMap(exp, u, files, segmented)
	if err != nil {
		return "", failure(perfexpv1alpha1.ReasonScriptError, "scenario %s: %v", u.sc.Name, err)
	}
	if err := r.createOwned(ctx, exp, cm, &corev1.ConfigMap{}); err != nil {
		return "", err
	}
	return cm.Name, nil
}

func loadStatus(exp *perfexpv1alpha1.PerfExperiment) *perfexpv1alpha1.LoadStatus {
	if exp.Status.Load == nil {
		exp.Status.Load = &perfexpv1alpha1.LoadStatus{}
	}
	return exp.Status.Load
}

func window(exp *perfexpv1alpha1.PerfExperiment) *perfexpv1alpha1.Window {
	if exp.Status.Window == nil {
		exp.Status.Window = &perfexpv1alpha1.Window{}
	}
	return exp.Status.Window
}

// scenarioStatus finds or adds the status entry of a unit, the warm-up first.
func scenarioStatus(exp *perfexpv1alpha1.PerfExperiment, name string) *perfexpv1alpha1.ScenarioStatus {
	ls := loadStatus(exp)
	for i := range ls.Scenarios {
		if ls.Scenarios[i].Name == name {
			return &ls.Scenarios[i]
		}
	}
	entry := perfexpv1alpha1.ScenarioStatus{Name: name, State: perfexpv1alpha1.ScenarioWaiting}
	if name == WarmUpName {
		ls.Scenarios = append([]perfexpv1alpha1.ScenarioStatus{entry}, ls.Scenarios...)
		return &ls.Scenarios[0]
	}
	ls.Scenarios = append(ls.Scenarios, entry)
	return &ls.Scenarios[len(ls.Scenarios)-1]
}

func setTime(field **metav1.Time, t time.Time) {
	if t.IsZero() {
		return
	}
	// Status times are written with second precision; comparing at that precision keeps
	// reconciles that learn nothing new from rewriting the status.
	if *field == nil || !(*field).Time.Truncate(time.Second).Equal(t.Truncate(time.Second)) {
		*field = &metav1.Time{Time: t}
	}
}

// ceilSecond rounds an end up to the next whole second. Kubernetes reports container times in
// whole seconds, cut down: a pod that "finished at 10:40:12" finished before 10:40:13. The
// window's start (cut down) and end (rounded up) therefore always hold every sample of the load,
// and are off what happened by less than a second.
func ceilSecond(t time.Time) time.Time { return t.Truncate(time.Second).Add(time.Second) }

func klogRef(exp *perfexpv1alpha1.PerfExperiment) string { return exp.Namespace + "/" + exp.Name }
