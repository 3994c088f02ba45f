// What watch draws: one frame of an experiment's progress (phase, load, live numbers, outcome),
// rendered from the object alone.

package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/load"
)

// renderWatch draws one refresh of watch. It is pure: the same frame always gives the same text.
func renderWatch(f watchFrame) string {
	exp := f.Exp
	var b strings.Builder
	phase := perfexpv1alpha1.Phase(phaseOf(exp))
	fmt.Fprintf(&b, "%s/%s  %s", exp.Namespace, exp.Name, phase)
	if since := phaseSince(exp, phase); since != nil && !phase.IsTerminal() {
		fmt.Fprintf(&b, " for %s", shortDuration(f.Now.Sub(*since)))
	}
	if exp.Status.Queue != "" {
		fmt.Fprintf(&b, "  (queue %s)", exp.Status.Queue)
	}
	b.WriteString("\n")
	row := func(label, format string, a ...any) {
		fmt.Fprintf(&b, "  %-10s %s\n", label, fmt.Sprintf(format, a...))
	}
	switch phase {
	case perfexpv1alpha1.PhasePending:
		row("waiting", "for the operator to take it up")
	case perfexpv1alpha1.PhaseQueued:
		if p := exp.Status.QueuePosition; p > 0 {
			ahead := "it runs next, once the environment is free"
			if p > 1 {
				ahead = plural(int(p-1), "experiment") + " ahead of it"
			}
			row("position", "%d in queue %s: %s", p, orDash(exp.Status.Queue), ahead)
		}
	case perfexpv1alpha1.PhaseWarmingUp:
		if wu := exp.Spec.Load.WarmUp; wu != nil && exp.Status.Window != nil && exp.Status.Window.Start != nil {
			row("warm-up", "%s", progress(f.Now.Sub(exp.Status.Window.Start.Time), wu.Duration.Duration))
		}
	case perfexpv1alpha1.PhaseRunning:
		renderLoad(row, f)
	}
	if phase.IsTerminal() {
		renderOutcome(row, exp, f.Now)
	} else if exp.Status.Message != "" {
		row("message", "%s", exp.Status.Message)
	}
	return b.String()
}

// renderLoad shows the load's progress, each scenario and the live numbers.
func renderLoad(row func(string, string, ...any), f watchFrame) {
	exp := f.Exp
	ls := exp.Status.Load
	if ls == nil || ls.StartTime == nil {
		row("load", "starting")
	} else {
		row("load", "%s", progress(f.Now.Sub(ls.StartTime.Time), plannedLoad(exp)))
	}
	states := map[string]perfexpv1alpha1.ScenarioStatus{}
	if ls != nil {
		for _, s := range ls.Scenarios {
			states[s.Name] = s
		}
	}
	for i := range exp.Spec.Load.Scenarios {
		sc := &exp.Spec.Load.Scenarios[i]
		st, ok := states[sc.Name]
		state := perfexpv1alpha1.ScenarioWaiting
		if ok {
			state = st.State
		}
		detail := ""
		switch {
		case state == perfexpv1alpha1.ScenarioWaiting && sc.StartDelay != nil && ls != nil && ls.StartTime != nil:
			if wait := ls.StartTime.Add(sc.StartDelay.Duration).Sub(f.Now); wait > 0 {
				detail = ", starts in " + shortDuration(wait)
			}
		case state == perfexpv1alpha1.ScenarioRunning && st.StartTime != nil:
			detail = fmt.Sprintf(", %s of %s", shortDuration(f.Now.Sub(st.StartTime.Time)), shortDuration(load.ShapeDuration(sc)))
		case st.Message != "":
			detail = ": " + st.Message
		}
		row("scenario", "%s %s%s", sc.Name, state, detail)
	}
	if f.Live != nil {
		row("live", "%s", f.Live.String())
	}
	// What the operator waits for, as LoadCompleted says it: once the pods ended, the summaries
	// being read, or an error it retries; never a silent wait.
	if c := meta.FindStatusCondition(exp.Status.Conditions, perfexpv1alpha1.ConditionLoadCompleted); c != nil &&
		c.Status == metav1.ConditionFalse && c.Reason == perfexpv1alpha1.ReasonLoadRunning && c.Message != "" {
		row("awaiting", "%s", strings.TrimPrefix(c.Message, "running: "))
	}
}

// renderOutcome shows how the experiment ended.
func renderOutcome(row func(string, string, ...any), exp *perfexpv1alpha1.PerfExperiment, now time.Time) {
	if exp.Status.StartTime != nil {
		end := now
		if exp.Status.CompletionTime != nil {
			end = exp.Status.CompletionTime.Time
		}
		row("took", "%s from leaving the queue to the end", shortDuration(end.Sub(exp.Status.StartTime.Time)))
	}
	if exp.Status.Verdict != "" {
		row("verdict", "%s", exp.Status.Verdict)
	}
	if r := exp.Status.Results; r != nil {
		if r.Validity != "" {
			v := string(r.Validity)
			if r.InvalidReason != "" {
				v += ": " + r.InvalidReason
			}
			row("results", "%s", v)
		}
		if r.P95 != "" {
			row("p95", "%s ms over all scenarios", r.P95)
		}
		for _, s := range r.Scenarios {
			row("scenario", "%s p95 %s ms, errors %s %%", s.Name, orDash(s.P95), orDash(s.ErrorPercent))
		}
	}
	if c := exp.Status.Comparison; c != nil {
		row("compared", "with %s: %s", c.Baseline, orDash(string(c.Change)))
	}
	if exp.Status.Message != "" {
		row("message", "%s", exp.Status.Message)
	}
	if exp.Status.ReportRef != nil {
		row("report", "kubectl perfexp report %s -n %s", exp.Name, exp.Namespace)
	}
}

// plannedLoad is how long the load is planned to run: the longest start delay plus load shape
// over the scenarios (the operator's own plan, without k6's graceful stop; a fromScript
// scenario without scriptDuration counts what k6 inspect found, graceful stop included).
func plannedLoad(exp *perfexpv1alpha1.PerfExperiment) time.Duration {
	var longest time.Duration
	for i := range exp.Spec.Load.Scenarios {
		sc := &exp.Spec.Load.Scenarios[i]
		d := load.ShapeDuration(sc)
		if found, ok := load.InspectedDuration(exp, sc.Name); ok && sc.FromScript && sc.ScriptDuration == nil {
			d = found
		}
		if sc.StartDelay != nil {
			d += sc.StartDelay.Duration
		}
		longest = max(longest, d)
	}
	return longest
}

// progress draws a bar with the share done, the time elapsed and the time left. Past the plan
// the bar is full and the overrun is shown: k6 is stopping its virtual users gracefully.
func progress(elapsed, total time.Duration) string {
	elapsed = max(elapsed, 0)
	if total <= 0 {
		return shortDuration(elapsed) + " so far"
	}
	share := min(float64(elapsed)/float64(total), 1)
	filled := int(share*progressWidth + 0.5)
	bar := "[" + strings.Repeat("#", filled) + strings.Repeat("-", progressWidth-filled) + "]"
	if elapsed >= total {
		return fmt.Sprintf("%s 100%%  %s planned, %s over: the load is stopping", bar, shortDuration(total), shortDuration(elapsed-total))
	}
	return fmt.Sprintf("%s %3.0f%%  %s of %s, %s left", bar, share*100, shortDuration(elapsed), shortDuration(total), shortDuration(total-elapsed))
}

// phaseSince is when the experiment entered its current phase, from its phase history.
func phaseSince(exp *perfexpv1alpha1.PerfExperiment, phase perfexpv1alpha1.Phase) *time.Time {
	h := exp.Status.PhaseHistory
	for i := len(h) - 1; i >= 0; i-- {
		if h[i].Phase == phase {
			t := h[i].Time.Time
			return &t
		}
	}
	return nil
}

// shortDuration renders a duration to the second: 45s, 3m05s, 1h02m03s.
func shortDuration(d time.Duration) string {
	d = d.Round(time.Second)
	if d < 0 {
		d = 0
	}
	h, m, s := int(d/time.Hour), int(d/time.Minute)%60, int(d/time.Second)%60
	switch {
	case h > 0:
		return fmt.Sprintf("%dh%02dm%02ds", h, m, s)
	case m > 0:
		return fmt.Sprintf("%dm%02ds", m, s)
	}
	return fmt.Sprintf("%ds", s)
}

// isTerminal reports whether out is a character device (a terminal) that may be redrawn.
func isTerminal(out io.Writer) bool {
	f, ok := out.(*os.File)
	if !ok {
		return false
	}
	info, err := f.Stat()
	return err == nil && info.Mode()&os.ModeCharDevice != 0
}
