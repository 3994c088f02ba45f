package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/go-logr/logr"
	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	watchtools "k8s.io/client-go/tools/watch"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	textpkg "github.com/perfexp/perfexp/internal/text"
)

const watchExamples = `  # Follow an experiment until it ends; the verdict is printed at the end
  kubectl perfexp watch demo-no-cpu-limits -n perfexp-demo

  # Read live latency from a Prometheus the plugin can reach directly
  kubectl perfexp watch demo-no-cpu-limits -n perfexp-demo --prometheus-url http://localhost:9090

  # Phase and progress only, without asking Prometheus
  kubectl perfexp watch demo-no-cpu-limits -n perfexp-demo --prometheus-url none

  # In a pipeline: wait at most 2 hours, fail on a regression, a failed or an invalid verdict
  # (exit codes: 3 Fail, 4 Invalid, 5 Regressed, 7 Failed, 8 Aborted, 9 timed out)
  kubectl perfexp watch demo-no-cpu-limits -n perfexp-demo --timeout 2h --fail-on regressed,fail,invalid

  # The same, keeping only the verdict on standard output (the progress goes to standard error)
  kubectl perfexp watch demo-no-cpu-limits -n perfexp-demo --timeout 2h -o jsonpath='{.status.verdict}'

  # Follow a sweep (a bisect here): runs done, each step, and the culprit at the end; exit 5
  # when a culprit was named
  kubectl perfexp watch perfsweep/demo-bisect -n perfexp-demo --fail-on regressed`

// logEvery is how often watch prints an unchanged experiment when its output is not a
// terminal: a CI log gets a line when something happens and a heartbeat, not one every 2 s.
const logEvery = 30 * time.Second

// apiGrace is how long watch keeps retrying an API server that does not answer.
const apiGrace = time.Minute

func watchCommand(connect clientFactory, flags *kubeFlags, set settings) *cobra.Command {
	var promURL string
	var timeout time.Duration
	var failOnList []string
	var o *output
	cmd := &cobra.Command{
		Use:   "watch NAME | perfsweep/NAME",
		Short: "Follow an experiment (phase, queue position, load progress, live p95 and error rate, verdict) or a sweep (runs, arms, probes or steps, headline)",
		Long: `watch follows the experiment on a Kubernetes watch until it ends and shows where it is: its
place in the queue while it waits, the load's progress with the time left while k6 runs, and the
verdict when it ends. Each change is shown as soon as the API server reports it; a watch the
server closes is resumed from the last version seen, and an outage is retried for a minute. While the load runs it also shows the last minute's p95, error rate and request
rate, read from Prometheus: from --prometheus-url, else the experiment's
spec.analysis.prometheusURL, else the operator's own --prometheus-url (read from its
Deployment when the user may list Deployments), else ` + defaultPrometheusURL + `. A Prometheus inside the
cluster (a URL like http://NAME.NAMESPACE:PORT or NAME.NAMESPACE.svc...) is reached through the
API server's service proxy, so no port-forward is needed (the user needs get on services/proxy
in that namespace); any other URL is asked directly. When Prometheus cannot be reached the
numbers read n/a and watch goes on.

On a terminal the block is redrawn in place (every 2 s, for the time left and the live numbers);
in a pipe or a CI log a new block is printed when the phase or a scenario changes, and every 30 s
otherwise. With -o json, yaml, name, jsonpath=... or go-template=..., the progress goes to
standard error and the experiment as it ended (or as last seen, on --timeout) is printed to
standard output, as kubectl get would print it.

Exit codes: 0 when the experiment succeeded and no outcome named in --fail-on applies (without
--fail-on, whatever its verdict); 3 verdict Fail, 4 verdict Invalid, 5 comparison Regressed,
6 verdict Inconclusive (each only when --fail-on names it; the first that applies in this
order wins); 7 when it ended Failed, 8 Aborted; 9 when --timeout passed first; 1 for any
other error (no such experiment, no cluster).

A sweep (perfsweep/NAME or psweep/NAME; a bare NAME is a sweep when no experiment has that
name) is followed the same way: its runs done of those planned so far, the run that holds the
environment (watch that one for its live numbers), each arm's runs and change, a capacity
search's probes or a bisect's steps with their outcomes, and at the end the sweep's headline
(capacity, culprit or best arm), verdict and report. Its exit codes are an experiment's: 7
Failed, 8 Aborted, 9 timed out, and on a Succeeded sweep, for the outcomes --fail-on names: 3
fail (verdict Fail), 4 invalid (a run failed or was aborted, or an arm has no valid result), 5
regressed (an arm Regressed, or a bisect named a culprit), 6 inconclusive (an arm
Inconclusive, a probe or a step Undecided).`,
		Example:           watchExamples,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: completeWatch(connect, flags),
		RunE: func(cmd *cobra.Command, args []string) error {
			failOn, err := parseFailOn(failOnList)
			if err != nil {
				return err
			}
			if err := o.validate(); err != nil {
				return err
			}
			conn, err := connect(flags)
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			if timeout > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, timeout)
				defer cancel()
			}
			progress := cmd.OutOrStdout()
			if !o.human() {
				progress = cmd.ErrOrStderr()
			}
			kind, name, bare, err := watchTarget(args[0])
			if err != nil {
				return err
			}
			w := &watcher{conn: conn, name: name, promURL: promURL, set: set, failOn: failOn, sweep: kind == kindSweep, bare: bare}
			if !w.sweep {
				err = w.run(ctx, progress)
			}
			if w.sweep || errors.Is(err, errIsSweep) {
				kind, w.sweep = kindSweep, true
				err = w.runSweep(ctx, progress)
			}
			if last := w.lastObject(); !o.human() && last != nil {
				if perr := o.printObject(cmd.OutOrStdout(), last); perr != nil && err == nil {
					err = perr
				}
			}
			if err == nil && timeout > 0 && !w.ended && errors.Is(ctx.Err(), context.DeadlineExceeded) {
				return &outcomeError{exitTimedOut, fmt.Sprintf("%s %s/%s had not ended after --timeout %s (phase %s)",
					kind, conn.namespace, name, timeout, orDash(w.lastPhase))}
			}
			return err
		},
	}
	cmd.Flags().StringVar(&promURL, "prometheus-url", "", `Prometheus to read live latency from ("none": do not ask); default: the experiment's, else the operator's, else `+defaultPrometheusURL)
	cmd.Flags().DurationVar(&timeout, "timeout", 0, "give up after this long (a Go duration such as 2h) with exit code 9; 0 waits until the experiment ends")
	cmd.Flags().StringSliceVar(&failOnList, "fail-on", nil, "outcomes of a succeeded experiment that fail watch, comma-separated: fail, invalid, regressed, inconclusive")
	o = addOutput(cmd, "")
	_ = cmd.RegisterFlagCompletionFunc("fail-on", cobra.FixedCompletions([]string{outcomeFail, outcomeInvalid, outcomeRegressed, outcomeInconclusive}, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

// watcher follows one experiment.
type watcher struct {
	conn    *connection
	name    string
	promURL string
	set     settings
	// failOn are the outcomes of a succeeded experiment that fail watch (--fail-on).
	failOn map[string]bool
	// ended is set once the experiment was seen ended; lastPhase is the last phase seen;
	// seen is set once the experiment was read at all.
	ended     bool
	lastPhase string
	seen      bool
	// last is the experiment as last seen, which -o prints when watch ends; lastSweep the
	// sweep, when a sweep is followed (sweep).
	last      *perfexpv1alpha1.PerfExperiment
	sweep     bool
	lastSweep *perfexpv1alpha1.PerfSweep
	// bare says the name came without a type: a sweep of that name is followed when no
	// experiment has it.
	bare bool

	prom    *livePrometheus
	promFor string
	// operatorURL is the operator's --prometheus-url, read once (operatorRead) when needed.
	operatorURL  string
	operatorRead bool
	lastKey      string
	lastPrint    time.Time
	drawnLines   int
}

func (w *watcher) run(ctx context.Context, out io.Writer) error {
	wc, ok := w.conn.client.(client.WithWatch)
	if !ok {
		return errors.New("the client cannot watch")
	}
	// The RetryWatcher logs every failed attempt; watch says it once, below.
	ctx = klog.NewContext(ctx, logr.Discard())
	terminal := w.set.terminal(out)
	ticker := time.NewTicker(w.set.watchInterval)
	defer ticker.Stop()
	for {
		exp, err := w.get(ctx, out, ticker)
		if exp == nil || err != nil {
			return err
		}
		if done, err := w.show(ctx, out, exp, terminal); done || err != nil {
			return err
		}
		again, err := w.follow(ctx, wc, out, exp, terminal, ticker)
		if !again || err != nil {
			return err
		}
		// The watch cannot resume (its resourceVersion is too old): read the experiment again
		// and watch from there.
	}
}

// get reads the experiment, retrying an API server that stops answering for up to apiGrace;
// nil without an error once ctx is done.
func (w *watcher) get(ctx context.Context, out io.Writer, ticker *time.Ticker) (*perfexpv1alpha1.PerfExperiment, error) {
	exp := &perfexpv1alpha1.PerfExperiment{}
	ok, err := w.read(ctx, out, ticker, exp, func(err error) error {
		if w.sweepInstead(ctx) {
			return errIsSweep
		}
		return notFoundIn(err, w.name, w.conn.namespace)
	})
	if !ok || err != nil {
		return nil, err
	}
	return exp, nil
}

// read gets the watched object into obj, retrying an API server that stops answering for up
// to apiGrace; notFound says what a missing object means. It reports false without an error
// once ctx is done.
func (w *watcher) read(ctx context.Context, out io.Writer, ticker *time.Ticker, obj client.Object, notFound func(error) error) (bool, error) {
	var failingSince time.Time
	for {
		err := w.conn.client.Get(ctx, client.ObjectKey{Namespace: w.conn.namespace, Name: w.name}, obj)
		switch {
		case err == nil:
			return true, nil
		case ctx.Err() != nil:
			return false, nil
		case apierrors.IsNotFound(err):
			return false, notFound(err)
		case apierrors.IsForbidden(err) || apierrors.IsUnauthorized(err):
			return false, err
		case !w.seen && isUnreachable(err):
			// Nothing answers where the kubeconfig points: say so at once, as kubectl
			// does, instead of retrying a server that was never there.
			return false, unreachable(err, w.conn.rest)
		case failingSince.IsZero():
			failingSince = w.set.now()
			if err := w.sayRetrying("reading", err, out); err != nil {
				return false, err
			}
		case w.set.now().Sub(failingSince) > apiGrace:
			return false, fmt.Errorf("the API server has not answered for %s: %w", shortDuration(apiGrace), err)
		}
		select {
		case <-ctx.Done():
			return false, nil
		case <-ticker.C:
		}
	}
}

// sayRetrying prints the one line an outage gets. A soak runs for hours; one dropped
// connection must not end the watch. The line goes below the last block, which is then left
// as it is; the retries that follow print nothing until the server answers again.
func (w *watcher) sayRetrying(what string, err error, out io.Writer) error {
	if _, werr := fmt.Fprintf(out, "%s %s/%s failed, retrying for up to %s: %v\n", what, w.conn.namespace, w.name, shortDuration(apiGrace), err); werr != nil {
		return werr
	}
	w.drawnLines, w.lastKey = 0, ""
	return nil
}

// follow shows each change of the experiment as the API server reports it, on a watch that
// resumes from the last resourceVersion seen whenever the server closes it. Between changes
// the ticker redraws the last state (the time left, the live numbers). again says the watch
// could not resume and the experiment must be read anew.
func (w *watcher) follow(ctx context.Context, wc client.WithWatch, out io.Writer, exp *perfexpv1alpha1.PerfExperiment,
	terminal bool, ticker *time.Ticker) (again bool, err error) {
	source := &experimentWatch{client: wc, namespace: w.conn.namespace, name: w.name, now: w.set.now}
	return w.followEvents(ctx, source, exp.ResourceVersion, out, ticker, watchedObject{
		take: func(o runtime.Object) bool {
			changed, ok := o.(*perfexpv1alpha1.PerfExperiment)
			if ok {
				exp = changed
			}
			return ok
		},
		deleted: func() error {
			return fmt.Errorf("perfexperiment %q in namespace %q was deleted before it ended (phase %s)", w.name, w.conn.namespace, phaseOf(exp))
		},
		show: func() (bool, error) { return w.show(ctx, out, exp, terminal) },
	})
}

// watchedObject is what followEvents needs of the object it follows: take keeps a changed
// object (false when the event holds another type), deleted is the error of its deletion, and
// show draws it (done once it ended).
type watchedObject struct {
	take    func(runtime.Object) bool
	deleted func() error
	show    func() (done bool, err error)
}

// followEvents runs a RetryWatcher from resourceVersion on source and shows each change as the
// API server reports it; between changes the ticker redraws the last state. again says the
// watch could not resume and the object must be read anew.
func (w *watcher) followEvents(ctx context.Context, source *experimentWatch, resourceVersion string, out io.Writer,
	ticker *time.Ticker, obj watchedObject) (again bool, err error) {
	rw, err := watchtools.NewRetryWatcherWithContext(ctx, resourceVersion, source)
	if err != nil {
		return false, err
	}
	defer rw.Stop()
	announced := false
	for {
		select {
		case <-ctx.Done():
			return false, nil
		case ev, ok := <-rw.ResultChan():
			if !ok {
				return ctx.Err() == nil, nil
			}
			switch ev.Type {
			case watch.Added, watch.Modified:
				if !obj.take(ev.Object) {
					continue
				}
				announced = false
			case watch.Deleted:
				return false, obj.deleted()
			case watch.Error:
				err := apierrors.FromObject(ev.Object)
				if apierrors.IsGone(err) || apierrors.IsResourceExpired(err) {
					return true, nil
				}
				return false, err
			default:
				continue
			}
		case <-ticker.C:
			if since, err := source.failing(); err != nil {
				if w.set.now().Sub(since) > apiGrace {
					return false, fmt.Errorf("the API server has not answered for %s: %w", shortDuration(apiGrace), err)
				}
				if !announced {
					announced = true
					if err := w.sayRetrying("watching", err, out); err != nil {
						return false, err
					}
				}
				continue
			}
			announced = false
		}
		if done, err := obj.show(); done || err != nil {
			return false, err
		}
	}
}

// show draws one refresh; done once the experiment has ended, with an error unless it
// succeeded.
func (w *watcher) show(ctx context.Context, out io.Writer, exp *perfexpv1alpha1.PerfExperiment, terminal bool) (done bool, err error) {
	w.seen, w.lastPhase, w.last = true, phaseOf(exp), exp
	frame := watchFrame{Now: w.set.now(), Exp: exp}
	if exp.Status.Phase == perfexpv1alpha1.PhaseRunning {
		frame.Live = w.live(ctx, exp, frame.Now)
	}
	if err := w.draw(out, frame, terminal); err != nil {
		return true, err
	}
	if !exp.Status.Phase.IsTerminal() {
		return false, nil
	}
	w.ended = true
	return true, endedError(exp, w.failOn)
}

// draw shows the frame: redrawn in place on a terminal, appended to a log otherwise.
func (w *watcher) draw(out io.Writer, f watchFrame, terminal bool) error {
	return w.drawText(out, renderWatch(f), watchKey(f.Exp), f.Now, f.Exp.Status.Phase.IsTerminal(), terminal)
}

// drawText shows one rendered block. In a log a block is printed when its key changed, at the
// end, and every logEvery otherwise.
func (w *watcher) drawText(out io.Writer, text, key string, now time.Time, ended, terminal bool) error {
	// The block quotes status messages, which may hold pod log lines: only the watch's own
	// cursor moves may reach the terminal (operators before this rule stored them raw).
	text = textpkg.Printable(text)
	if terminal {
		var b strings.Builder
		if w.drawnLines > 0 {
			// Up to the first line of the previous block, then clear to the end of the screen.
			fmt.Fprintf(&b, "\x1b[%dA\x1b[J", w.drawnLines)
		}
		b.WriteString(text)
		w.drawnLines = strings.Count(text, "\n")
		_, err := io.WriteString(out, b.String())
		return err
	}
	if key == w.lastKey && now.Sub(w.lastPrint) < logEvery && !ended {
		return nil
	}
	prefix := ""
	if w.lastKey != "" {
		prefix = "\n"
	}
	w.lastKey, w.lastPrint = key, now
	_, err := io.WriteString(out, prefix+text)
	return err
}

// watchKey is what makes a new block worth printing in a log: the phase, the queue position
// and each scenario's state.
func watchKey(exp *perfexpv1alpha1.PerfExperiment) string {
	key := fmt.Sprintf("%s/%d", phaseOf(exp), exp.Status.QueuePosition)
	if exp.Status.Load != nil {
		for _, s := range exp.Status.Load.Scenarios {
			key += "/" + s.Name + "=" + string(s.State)
		}
	}
	return key
}

// live reads the last minute's latency and errors, or says why it cannot.
func (w *watcher) live(ctx context.Context, exp *perfexpv1alpha1.PerfExperiment, now time.Time) *liveStats {
	if !w.operatorRead && w.promURL == "" && (exp.Spec.Analysis == nil || exp.Spec.Analysis.PrometheusURL == "") {
		w.operatorURL, w.operatorRead = operatorPrometheusURL(ctx, w.conn.client), true
	}
	url := prometheusURLFor(w.promURL, exp, w.operatorURL)
	if url == "" {
		return nil
	}
	if exp.Status.TestID == "" {
		return &liveStats{Unavailable: "no test id yet"}
	}
	if w.prom == nil || w.promFor != url {
		p, err := newLivePrometheus(url, w.conn.rest)
		if err != nil {
			return &liveStats{Unavailable: err.Error()}
		}
		w.prom, w.promFor = p, url
	}
	stats := w.prom.read(ctx, exp.Status.TestID, now)
	if stats.Unavailable != "" && w.promURL == "" {
		// The URL was guessed (the experiment's, the operator's or the default), and it may be
		// one only the cluster reaches: say how to name another.
		stats.Unavailable += "; choose one with --prometheus-url"
	}
	return stats
}

// watchFrame is everything one refresh shows; renderWatch turns it into text.
type watchFrame struct {
	Now  time.Time
	Exp  *perfexpv1alpha1.PerfExperiment
	Live *liveStats
}

// progressWidth is the number of cells in the progress bar.
const progressWidth = 30
