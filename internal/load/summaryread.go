// Reading k6's summaries from the logs of ended pods: a bounded number of logs per call, a few
// at once, within one log timeout, so that an experiment with a thousand pods never holds a
// reconcile worker for long.

package load

import (
	"context"
	"errors"
	"fmt"
	"time"

	"golang.org/x/sync/errgroup"
	"sigs.k8s.io/controller-runtime/pkg/log"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/text"
)

// moreLogsWait is how soon the next call comes when a call left summaries unread for its
// bound: at once, but through the work queue, so that other experiments' reconciles take turns.
const moreLogsWait = 100 * time.Millisecond

// pendingSummaries are the summaries of ended pods that could not be read yet.
type pendingSummaries struct {
	count int
	// pods names them, lastErr says why the last one could not be read, giveUp is when the
	// last of them is given up.
	pods, lastErr string
	giveUp        time.Time
	// deferred counts the ended pods whose logs this call did not read for its bounds.
	deferred int
}

func (p *pendingSummaries) add(pod string, err error, giveUp time.Time) {
	p.count++
	if p.pods != "" {
		p.pods += ", "
	}
	p.pods += pod
	p.lastErr = text.Truncate(err.Error(), 200)
	if giveUp.After(p.giveUp) {
		p.giveUp = giveUp
	}
}

// waiting says what the step waits for, and how soon to look again.
func (p *pendingSummaries) waiting(unit string, finished time.Time) (string, time.Duration) {
	if p.count == 0 {
		return fmt.Sprintf("%s: every k6 pod ended at %s; %d summaries left to read from their logs",
			unit, finished.UTC().Format(time.TimeOnly), p.deferred), moreLogsWait
	}
	msg := fmt.Sprintf("%s: every k6 pod ended at %s; reading the summary of %s from its log (%s), until %s at the latest",
		unit, finished.UTC().Format(time.TimeOnly), p.pods, p.lastErr, p.giveUp.UTC().Format(time.TimeOnly))
	if p.deferred > 0 {
		return fmt.Sprintf("%s; %d more summaries left to read", msg, p.deferred), moreLogsWait
	}
	return msg, 2 * time.Second
}

// logBudget is what is left of one call's log reading: how many logs it may still read, and
// its context, which ends LogTimeout after the call began.
type logBudget struct {
	ctx  context.Context
	left int
}

// newLogBudget starts a call's log reading; cancel it when the call ends.
func (r *Runner) newLogBudget(ctx context.Context) (*logBudget, context.CancelFunc) {
	ctx, cancel := context.WithTimeout(ctx, r.opts.LogTimeout)
	return &logBudget{ctx: ctx, left: r.opts.LogsPerCall}, cancel
}

// logRead is the outcome of reading one ended pod's log; skipped means the call's time for
// reading logs ran out before it began.
type logRead struct {
	data    []byte
	err     error
	skipped bool
}

// keepSummaries reads the summaries of ended pods that are not kept yet and keeps them, and
// records the k6 scenarios they count (a fromScript scenario's) in st. It returns the ones it is
// still waiting for: a log that could not be read yet (for at most SummaryTimeout after the pod
// ended), and the ones left for the next call by its bounds (Options.LogsPerCall, LogsInFlight,
// LogTimeout, shared by the units of one call through budget). A pod that is gone has no log to read: its summary is given up at once. What was
// kept or given up is recorded in the summaries ConfigMap, in one write per call.
func (r *Runner) keepSummaries(ctx context.Context, exp *perfexpv1alpha1.PerfExperiment, unit string, ended []podView, now time.Time, st *perfexpv1alpha1.ScenarioStatus, budget *logBudget) (pendingSummaries, error) {
	var pending pendingSummaries
	if r.opts.Logs == nil || len(ended) == 0 {
		return pending, nil
	}
	store, err := r.summaries(ctx, exp)
	if err != nil {
		return pending, err
	}
	var todo []podView
	for _, v := range ended {
		if !store.has(SummaryKey(unit, v.index)) {
			todo = append(todo, v)
		}
	}
	if n := max(budget.left, 0); len(todo) > n {
		pending.deferred = len(todo) - n
		todo = todo[:n]
	}
	budget.left -= len(todo)
	reads := r.readLogs(ctx, budget.ctx, exp.Namespace, todo)
	changed := false
	for i, v := range todo {
		rd := reads[i]
		if rd.skipped {
			pending.deferred++
			continue
		}
		if rd.err != nil {
			if giveUp := v.finished.Add(r.opts.SummaryTimeout); v.name != "" && now.Before(giveUp) {
				log.FromContext(ctx).V(1).Info("Reading a k6 log failed; retrying", "pod", v.name, "error", rd.err.Error())
				pending.add(v.name, rd.err, giveUp)
				continue
			}
			log.FromContext(ctx).Info("Gave up reading a k6 summary", "pod", orDefault(v.name, fmt.Sprintf("%s index %d", unit, v.index)), "error", rd.err.Error())
		}
		summary, err := ExtractSummary(rd.data)
		if err != nil {
			log.FromContext(ctx).Info("Found no k6 summary in a pod's log", "pod", v.name, "exitCode", v.exitCode, "bytes", len(rd.data))
			summary = nil
		}
		recordK6Scenarios(st, summary)
		if kept := store.add(SummaryKey(unit, v.index), summary); summary != nil && !kept {
			log.FromContext(ctx).Info("Left out a k6 summary that did not fit", "pod", v.name, "bytes", len(summary))
		}
		changed = true
	}
	if changed {
		if err := store.save(ctx); err != nil {
			return pending, err
		}
	}
	return pending, nil
}

// readLogs reads the logs of the given pods, LogsInFlight at once, every read within the
// call's log context. A pod known only from its Job's account has no log (errPodGone).
func (r *Runner) readLogs(ctx, callCtx context.Context, namespace string, pods []podView) []logRead {
	out := make([]logRead, len(pods))
	var g errgroup.Group
	g.SetLimit(r.opts.LogsInFlight)
	for i, v := range pods {
		if v.name == "" {
			out[i].err = errPodGone
			continue
		}
		g.Go(func() error {
			if callCtx.Err() != nil {
				out[i].skipped = ctx.Err() == nil
				out[i].err = callCtx.Err()
				return nil
			}
			out[i].data, out[i].err = r.opts.Logs.Tail(callCtx, namespace, v.name, k6Container, maxLogTail)
			return nil
		})
	}
	_ = g.Wait()
	return out
}

// errPodGone is why the log of a pod known only from its Job's account cannot be read.
var errPodGone = errors.New("the pod is gone")

// readLog reads the end of a k6 container's log within LogTimeout: a log stream the kubelet
// never ends must not hold the experiment's reconcile (and with it the overall timeout).
func (r *Runner) readLog(ctx context.Context, namespace, pod string, maxBytes int) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, r.opts.LogTimeout)
	defer cancel()
	return r.opts.Logs.Tail(ctx, namespace, pod, k6Container, maxBytes)
}
