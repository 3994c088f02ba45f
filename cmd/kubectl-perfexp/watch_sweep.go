// watch of a PerfSweep: its runs done and planned, each arm, a capacity search's probes or a
// bisect's steps, and the sweep's headline at the end, with the exit codes of an experiment's
// watch.

package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
)

// The kinds watch follows, as its messages name them.
const (
	kindExperiment = "experiment"
	kindSweep      = "sweep"
)

// watchTarget reads watch's argument: TYPE/NAME as kubectl writes it (perfsweep/NAME,
// psweep/NAME, perfexperiment/NAME, pexp/NAME), or a bare NAME, which is an experiment unless
// none has that name and a sweep has (bare is then true).
func watchTarget(arg string) (kind, name string, bare bool, err error) {
	typ, n, ok := strings.Cut(arg, "/")
	if !ok {
		return kindExperiment, arg, true, nil
	}
	switch strings.ToLower(typ) {
	case "perfsweep", "perfsweeps", "psweep", "perfsweep.perfexp.dev", "perfsweeps.perfexp.dev":
		return kindSweep, n, false, nil
	case "perfexperiment", "perfexperiments", "pexp", "perfexperiment.perfexp.dev", "perfexperiments.perfexp.dev":
		return kindExperiment, n, false, nil
	}
	return "", "", false, fmt.Errorf("watch follows a perfexperiment or a perfsweep, not %q", typ)
}

// errIsSweep says a bare name watch took for an experiment names a sweep.
var errIsSweep = errors.New("the name is a sweep's")

// sweepInstead reports whether the sweep w.name exists, for a bare name no experiment has.
func (w *watcher) sweepInstead(ctx context.Context) bool {
	return w.bare && w.conn.client.Get(ctx, client.ObjectKey{Namespace: w.conn.namespace, Name: w.name}, &perfexpv1alpha1.PerfSweep{}) == nil
}

// lastObject is what -o prints when watch ends: the experiment or the sweep as last seen.
func (w *watcher) lastObject() runtime.Object {
	if w.sweep {
		if w.lastSweep == nil {
			return nil
		}
		return w.lastSweep
	}
	if w.last == nil {
		return nil
	}
	return w.last
}

// runSweep follows a sweep as run follows an experiment.
func (w *watcher) runSweep(ctx context.Context, out io.Writer) error {
	wc, ok := w.conn.client.(client.WithWatch)
	if !ok {
		return errors.New("the client cannot watch")
	}
	ctx = klog.NewContext(ctx, logr.Discard())
	terminal := w.set.terminal(out)
	ticker := time.NewTicker(w.set.watchInterval)
	defer ticker.Stop()
	for {
		sw, err := w.getSweep(ctx, out, ticker)
		if sw == nil || err != nil {
			return err
		}
		if done, err := w.showSweep(out, sw, terminal); done || err != nil {
			return err
		}
		again, err := w.followSweep(ctx, wc, out, sw, terminal, ticker)
		if !again || err != nil {
			return err
		}
	}
}

// getSweep reads the sweep, retrying an API server that stops answering for up to apiGrace.
func (w *watcher) getSweep(ctx context.Context, out io.Writer, ticker *time.Ticker) (*perfexpv1alpha1.PerfSweep, error) {
	sw := &perfexpv1alpha1.PerfSweep{}
	ok, err := w.read(ctx, out, ticker, sw, func(err error) error {
		return &wrapped{msg: fmt.Sprintf("perfsweep %q not found in namespace %q", w.name, w.conn.namespace), err: err}
	})
	if !ok || err != nil {
		return nil, err
	}
	return sw, nil
}

// followSweep shows each change of the sweep as the API server reports it; see follow.
func (w *watcher) followSweep(ctx context.Context, wc client.WithWatch, out io.Writer, sw *perfexpv1alpha1.PerfSweep,
	terminal bool, ticker *time.Ticker) (again bool, err error) {
	source := &experimentWatch{client: wc, namespace: w.conn.namespace, name: w.name, now: w.set.now, sweep: true}
	return w.followEvents(ctx, source, sw.ResourceVersion, out, ticker, watchedObject{
		take: func(o runtime.Object) bool {
			changed, ok := o.(*perfexpv1alpha1.PerfSweep)
			if ok {
				sw = changed
			}
			return ok
		},
		deleted: func() error {
			return fmt.Errorf("perfsweep %q in namespace %q was deleted before it ended (phase %s)", w.name, w.conn.namespace, sweepPhaseOf(sw))
		},
		show: func() (bool, error) { return w.showSweep(out, sw, terminal) },
	})
}

// showSweep draws one refresh of the sweep; done once it has ended, with the error its end
// gives watch.
func (w *watcher) showSweep(out io.Writer, sw *perfexpv1alpha1.PerfSweep, terminal bool) (done bool, err error) {
	w.seen, w.lastPhase, w.lastSweep = true, sweepPhaseOf(sw), sw
	now := w.set.now()
	ended := sw.Status.Phase.IsTerminal()
	if err := w.drawText(out, renderSweep(sw), sweepKey(sw), now, ended, terminal); err != nil {
		return true, err
	}
	if !ended {
		return false, nil
	}
	w.ended = true
	return true, sweepEndedError(sw, w.failOn)
}

func sweepPhaseOf(sw *perfexpv1alpha1.PerfSweep) string {
	if sw.Status.Phase == "" {
		return string(perfexpv1alpha1.SweepPending)
	}
	return string(sw.Status.Phase)
}

// sweepKind names what the sweep does, for its first line.
func sweepKind(sw *perfexpv1alpha1.PerfSweep) string {
	switch {
	case sw.Spec.Capacity != nil:
		return "capacity search"
	case sw.Spec.Bisect != nil:
		return "bisect"
	case sw.Status.Sequential != nil:
		return "sequential sweep"
	}
	return "sweep"
}

// renderSweep draws one refresh of a sweep's watch. It is pure: the same sweep always gives the
// same text.
func renderSweep(sw *perfexpv1alpha1.PerfSweep) string {
	st := &sw.Status
	var b strings.Builder
	fmt.Fprintf(&b, "%s/%s  %s  (%s", sw.Namespace, sw.Name, sweepPhaseOf(sw), sweepKind(sw))
	if q := sw.Spec.Queue; q != "" {
		fmt.Fprintf(&b, ", queue %s", q)
	}
	b.WriteString(")\n")
	row := func(label, format string, a ...any) {
		fmt.Fprintf(&b, "  %-10s %s\n", label, fmt.Sprintf(format, a...))
	}
	runs := fmt.Sprintf("%d of %d done", st.Done, st.Total)
	if st.Total > 0 {
		share := min(float64(st.Done)/float64(st.Total), 1)
		filled := int(share*progressWidth + 0.5)
		runs = "[" + strings.Repeat("#", filled) + strings.Repeat("-", progressWidth-filled) + "] " + runs
	}
	if st.Failed > 0 {
		runs += fmt.Sprintf(", %d failed or aborted", st.Failed)
	}
	if seq := st.Sequential; seq != nil {
		runs += fmt.Sprintf("; %s planned so far, %s taken", plural(int(seq.Repeats), "repeat"), plural(int(seq.Looks), "look"))
	}
	if sw.Spec.Capacity != nil || sw.Spec.Bisect != nil {
		runs += " (the plan grows as the search goes)"
	}
	row("runs", "%s", runs)
	if st.CurrentExperiment != "" {
		current := st.CurrentExperiment
		if st.CurrentArm != "" {
			current += " (" + st.CurrentArm + ")"
		}
		row("now", "%s holds the environment: kubectl perfexp watch %s -n %s", current, st.CurrentExperiment, sw.Namespace)
	}
	switch {
	case st.Capacity != nil:
		renderProbes(row, sw)
	case st.Bisect != nil:
		renderSteps(row, sw)
	default:
		renderArms(row, st.Arms)
	}
	if perfexpv1alpha1.SweepPhase(sweepPhaseOf(sw)).IsTerminal() {
		renderSweepOutcome(row, sw)
	} else if st.Message != "" {
		row("message", "%s", st.Message)
	}
	return b.String()
}

// renderArms shows each arm: its runs and, once its runs ended, its change.
func renderArms(row func(string, string, ...any), arms []perfexpv1alpha1.SweepArmStatus) {
	for _, a := range arms {
		label := a.Name
		if a.Value != "" {
			label += " (" + a.Value + ")"
		}
		state := fmt.Sprintf("%d/%d runs ended", a.Succeeded+a.Failed, a.Runs)
		if a.Failed > 0 {
			state += fmt.Sprintf(", %d failed", a.Failed)
		}
		if a.Change != "" {
			state += ": " + string(a.Change)
			if a.Message != "" {
				state += ", " + a.Message
			}
		}
		row("arm", "%s  %s", label, state)
	}
}

// renderProbes shows a capacity search's probes in the order they ran.
func renderProbes(row func(string, string, ...any), sw *perfexpv1alpha1.PerfSweep) {
	c := sw.Status.Capacity
	unit := "VUs"
	if sw.Spec.Capacity.Parameter == perfexpv1alpha1.LoadRate {
		unit = "iterations/" + rateUnit(sw)
	}
	for i, p := range c.Probes {
		outcome := string(p.Outcome)
		if outcome == "" {
			outcome = "running"
		}
		line := fmt.Sprintf("%d %s  %s: %s", p.Load, unit, plural(int(p.Runs), "run"), outcome)
		if p.Message != "" {
			line += ", " + p.Message
		}
		row(fmt.Sprintf("probe %d", i+1), "%s", line)
	}
	if c.LastHeld != nil || c.FirstBroken != nil {
		row("bracket", "held at %s, broke at %s", int32OrDash(c.LastHeld), int32OrDash(c.FirstBroken))
	}
}

// rateUnit is the time unit of the template's arrival rates, as the capacity answer names it.
func rateUnit(sw *perfexpv1alpha1.PerfSweep) string {
	for _, sc := range sw.Spec.Template.Load.Scenarios {
		if sc.ArrivalRate != nil && sc.ArrivalRate.TimeUnit != nil && sc.ArrivalRate.TimeUnit.Duration > 0 && sc.ArrivalRate.TimeUnit.Duration != time.Second {
			return sc.ArrivalRate.TimeUnit.Duration.String()
		}
	}
	return "s"
}

// renderSteps shows a bisect's steps in the order they ran.
func renderSteps(row func(string, string, ...any), sw *perfexpv1alpha1.PerfSweep) {
	for i, s := range sw.Status.Bisect.Steps {
		outcome := string(s.Outcome)
		if outcome == "" {
			outcome = "running"
		}
		line := fmt.Sprintf("%s  %s: %s", orDash(s.Description), plural(int(s.Repeats), "repeat"), outcome)
		if s.Message != "" {
			line += ", " + s.Message
		}
		row(fmt.Sprintf("step %d", i+1), "%s", line)
	}
}

// renderSweepOutcome shows how the sweep ended: its headline, verdict and report.
func renderSweepOutcome(row func(string, string, ...any), sw *perfexpv1alpha1.PerfSweep) {
	st := &sw.Status
	switch {
	case st.Capacity != nil && st.Capacity.Summary != "":
		row("capacity", "%s", st.Capacity.Summary)
		if st.Capacity.LimitingFactor != "" {
			row("limit", "%s", st.Capacity.LimitingFactor)
		}
	case st.Bisect != nil && st.Bisect.Summary != "":
		row("answer", "%s", st.Bisect.Summary)
	case st.BestArm != "":
		row("best arm", "%s", st.BestArm)
	}
	if st.Verdict != "" {
		row("verdict", "%s", st.Verdict)
	}
	if st.Message != "" {
		row("message", "%s", st.Message)
	}
	if st.ReportRef != nil {
		row("report", "kubectl perfexp compare %s -n %s", sw.Name, sw.Namespace)
	}
}

func int32OrDash(v *int32) string {
	if v == nil {
		return "-"
	}
	return fmt.Sprint(*v)
}

// sweepKey is what makes a new block worth printing in a log: the phase, the runs done, and
// each arm's, probe's or step's outcome.
func sweepKey(sw *perfexpv1alpha1.PerfSweep) string {
	st := &sw.Status
	key := fmt.Sprintf("%s/%d/%d/%d/%s", sweepPhaseOf(sw), st.Done, st.Total, st.Failed, st.CurrentExperiment)
	for _, a := range st.Arms {
		key += fmt.Sprintf("/%s=%d:%s", a.Name, a.Succeeded+a.Failed, a.Change)
	}
	if c := st.Capacity; c != nil {
		for _, p := range c.Probes {
			key += fmt.Sprintf("/%d=%d:%s", p.Load, p.Runs, p.Outcome)
		}
	}
	if bi := st.Bisect; bi != nil {
		for _, s := range bi.Steps {
			key += fmt.Sprintf("/%s=%d:%s", s.Description, s.Repeats, s.Outcome)
		}
	}
	return key
}

// sweepFailOnOutcomes are --fail-on's outcomes read on a sweep that Succeeded, in the order of
// an experiment's (failOnOutcomes): the first that applies gives the exit code.
var sweepFailOnOutcomes = []struct {
	name string
	code int
	hit  func(*perfexpv1alpha1.PerfSweep) bool
}{
	{outcomeFail, exitFail, func(sw *perfexpv1alpha1.PerfSweep) bool { return sw.Status.Verdict == perfexpv1alpha1.VerdictFail }},
	{outcomeInvalid, exitInvalid, func(sw *perfexpv1alpha1.PerfSweep) bool {
		if sw.Status.Failed > 0 {
			return true
		}
		for _, a := range sw.Status.Arms {
			if a.Change == perfexpv1alpha1.ChangeUnknown {
				return true
			}
		}
		return false
	}},
	{outcomeRegressed, exitRegressed, func(sw *perfexpv1alpha1.PerfSweep) bool {
		if bi := sw.Status.Bisect; bi != nil && len(bi.Culprits) > 0 {
			return true
		}
		for _, a := range sw.Status.Arms {
			if a.Change == perfexpv1alpha1.ChangeRegressed {
				return true
			}
		}
		return false
	}},
	{outcomeInconclusive, exitInconclusive, func(sw *perfexpv1alpha1.PerfSweep) bool {
		for _, a := range sw.Status.Arms {
			if a.Change == perfexpv1alpha1.ChangeInconclusive {
				return true
			}
		}
		if c := sw.Status.Capacity; c != nil {
			for _, p := range c.Probes {
				if p.Outcome == perfexpv1alpha1.ProbeUndecided {
					return true
				}
			}
		}
		if bi := sw.Status.Bisect; bi != nil {
			for _, s := range bi.Steps {
				if s.Outcome == perfexpv1alpha1.BisectUndecided {
					return true
				}
			}
		}
		return false
	}},
}

// sweepEndedError is how an ended sweep ends watch: nil when it Succeeded with no outcome
// --fail-on names, else an outcomeError with the code an experiment's watch would give.
func sweepEndedError(sw *perfexpv1alpha1.PerfSweep, failOn map[string]bool) error {
	ref := sw.Namespace + "/" + sw.Name
	switch sw.Status.Phase {
	case perfexpv1alpha1.SweepFailed:
		return &outcomeError{exitFailed, fmt.Sprintf("sweep %s ended Failed: %s", ref, sw.Status.Message)}
	case perfexpv1alpha1.SweepAborted:
		return &outcomeError{exitAborted, fmt.Sprintf("sweep %s ended Aborted: %s", ref, sw.Status.Message)}
	}
	for _, o := range sweepFailOnOutcomes {
		if failOn[o.name] && o.hit(sw) {
			return &outcomeError{o.code, fmt.Sprintf("sweep %s succeeded with verdict %s: --fail-on %s (%s)",
				ref, orDash(string(sw.Status.Verdict)), o.name, orDash(sw.Status.Message))}
		}
	}
	return nil
}
