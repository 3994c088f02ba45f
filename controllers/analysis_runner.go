package controllers

import (
	"context"
	"errors"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/log"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/backend"
	"github.com/perfexp/perfexp/internal/step"
)

// DefaultAnalysisWorkers is how many analyses run at once when the reconciler names no number.
const DefaultAnalysisWorkers = 4

// analysisRunner runs the Analyzer apart from the reconciler's workers. Analysis is the one
// step whose time depends on a server perfexp does not control: a Prometheus that accepts
// connections and never answers held a worker per attempt, so five such analyses starved the
// restores and queue admissions of every other queue. Here a reconcile only starts an attempt
// and reads its outcome; the attempt runs in a goroutine and, when it ends, enqueues its
// experiment through a channel the controller watches. At most workers attempts query one
// Prometheus at once, so experiments analysed against a hung server (spec.analysis.prometheusURL)
// wait for each other, never for the experiments that read another Prometheus. One Prometheus
// is one pool however its URL is written (backend.ServerKey), and the attempts of one namespace
// hold at most namespaceShare of its slots, so one tenant's many or slow analyses leave the
// others a slot.
//
// Attempts live in memory only, keyed by the experiment's UID: a restarted manager has none and
// simply starts the analysis again (it is idempotent and its window is fixed). An attempt is
// cancelled when its experiment leaves Analyzing (abort, deadline) or is deleted.
type analysisRunner struct {
	analyzer Analyzer
	clock    clock.PassiveClock
	// timeout bounds one attempt from the moment it gets a slot.
	timeout time.Duration
	// workers bounds how many attempts call the Analyzer for one Prometheus at once.
	workers int
	// done carries the experiments whose attempt ended to the controller.
	done chan event.GenericEvent
	// base is the manager's context: attempts end with it.
	base context.Context

	mu       sync.Mutex
	attempts map[types.UID]*analysisAttempt
	count    uint64
	// slots are the slots of each Prometheus (backend.ServerKey) and of each namespace's share
	// of it (shareKey) that attempts use; an entry goes once no attempt holds or waits for it.
	slots map[string]*urlSlots
	// defaultPrometheus is the operator's Prometheus, which an experiment naming none reads.
	defaultPrometheus string
}

type urlSlots struct {
	free  chan struct{}
	users int
}

// analysisAttempt is one call into the Analyzer for one experiment.
type analysisAttempt struct {
	number uint64
	// first says no attempt of this experiment came before it (in this process); started is
	// when it was started.
	first   bool
	started time.Time
	key     types.NamespacedName
	cancel  context.CancelFunc

	// Set once the attempt ended, under the runner's lock.
	ended bool
	// notBefore is when the next attempt may start: the wait the Analyzer asked for.
	notBefore time.Time
	res       step.Result
	err       error
	// ranOut says the attempt used its whole allowance without an answer.
	ranOut bool
	// before and after are the experiment's status as the attempt got it and as the Analyzer
	// left it; the difference is what the attempt recorded.
	before, after *perfexpv1alpha1.PerfExperimentStatus
}

func newAnalysisRunner(base context.Context, a Analyzer, clk clock.PassiveClock, workers int, timeout time.Duration) *analysisRunner {
	if workers < 1 {
		workers = DefaultAnalysisWorkers
	}
	if timeout <= 0 {
		timeout = DefaultAnalysisAttemptTimeout
	}
	return &analysisRunner{
		analyzer: a, clock: clk, timeout: timeout, base: base,
		workers:  workers,
		slots:    map[string]*urlSlots{},
		done:     make(chan event.GenericEvent, 64),
		attempts: map[types.UID]*analysisAttempt{},
	}
}

// analysisErrorRetry is how long after an attempt that ended in an error the next may start.
const analysisErrorRetry = 5 * time.Second

// analysisRuns is what a reconcile waits for while an attempt is under way; the attempt's end
// enqueues the experiment, so the requeue below is only a safety net.
const analysisRuns = "the analysis attempt under way to answer"

// analysisPoll is what a reconcile learns of an experiment's analysis.
type analysisPoll struct {
	res step.Result
	// ranOut says the last attempt got no answer within its allowance.
	ranOut bool
	// firstStarted is when the experiment's first attempt (in this process) was started, while
	// it is under way; zero otherwise.
	firstStarted time.Time
}

// poll returns the outcome of exp's analysis so far, starting an attempt when none runs and
// the last one asked for no wait that is still pending. It never blocks on the Analyzer.
// An ended attempt's records are copied into exp.
func (ar *analysisRunner) poll(ctx context.Context, exp, baseline *perfexpv1alpha1.PerfExperiment) (analysisPoll, error) {
	ar.mu.Lock()
	defer ar.mu.Unlock()
	now := ar.clock.Now()
	a := ar.attempts[exp.UID]
	if a == nil || (a.ended && (a.err != nil || (!a.res.Done && a.res.Failure == nil)) && !now.Before(a.notBefore)) {
		a = ar.startLocked(ctx, exp, baseline, a == nil)
	}
	if !a.ended {
		p := analysisPoll{res: step.Wait(ar.timeout, analysisRuns)}
		if a.first {
			p.firstStarted = a.started
		}
		return p, nil
	}
	// An ended attempt is read at every reconcile until the experiment moves on, so a status
	// write that conflicted loses nothing.
	applyAnalysis(exp, a.before, a.after)
	if a.err != nil {
		return analysisPoll{}, a.err
	}
	res := a.res
	if !res.Done && res.Failure == nil {
		res.RequeueAfter = a.notBefore.Sub(now)
	}
	return analysisPoll{res: res, ranOut: a.ranOut}, nil
}

func (ar *analysisRunner) startLocked(ctx context.Context, exp, baseline *perfexpv1alpha1.PerfExperiment, first bool) *analysisAttempt {
	ar.count++
	work := exp.DeepCopy()
	var base *perfexpv1alpha1.PerfExperiment
	if baseline != nil {
		base = baseline.DeepCopy()
	}
	logger := log.FromContext(ctx).WithValues("analysisAttempt", ar.count)
	attemptCtx, cancel := context.WithCancel(log.IntoContext(ar.base, logger))
	a := &analysisAttempt{number: ar.count, first: first, started: ar.clock.Now(), key: client.ObjectKeyFromObject(exp), cancel: cancel, before: exp.Status.DeepCopy()}
	ar.attempts[exp.UID] = a
	prom := ar.prometheusOf(exp)
	share := shareKey(prom, exp.Namespace)
	go ar.run(attemptCtx, a, work, base, ar.slotsLocked(share, namespaceShare(ar.workers)), ar.slotsLocked(prom, ar.workers), share, prom)
	return a
}

// prometheusOf is the key of the Prometheus exp's analysis reads.
func (ar *analysisRunner) prometheusOf(exp *perfexpv1alpha1.PerfExperiment) string {
	u := ar.defaultPrometheus
	if exp.Spec.Analysis != nil && exp.Spec.Analysis.PrometheusURL != "" {
		u = exp.Spec.Analysis.PrometheusURL
	}
	return backend.ServerKey(u)
}

// namespaceShare is how many of a Prometheus' slots the analyses of one namespace may hold at
// once: half, so that a tenant with many analyses, or slow ones, leaves the others a slot.
func namespaceShare(workers int) int { return max(1, workers/2) }

// shareKey names one namespace's share of a Prometheus' slots.
func shareKey(prom, namespace string) string { return prom + " namespace=" + namespace }

// slotsLocked returns the slots of key, counting one more user until release is called.
func (ar *analysisRunner) slotsLocked(key string, size int) *urlSlots {
	s, ok := ar.slots[key]
	if !ok {
		s = &urlSlots{free: make(chan struct{}, size)}
		ar.slots[key] = s
	}
	s.users++
	return s
}

func (ar *analysisRunner) release(keys ...string) {
	ar.mu.Lock()
	defer ar.mu.Unlock()
	for _, key := range keys {
		if s := ar.slots[key]; s != nil {
			if s.users--; s.users <= 0 {
				delete(ar.slots, key)
			}
		}
	}
}

// run calls the Analyzer once it has a slot of its namespace's share and then one of its
// Prometheus, within the attempt's allowance, and enqueues the experiment when the call
// returns. A cancelled attempt records nothing and enqueues nothing. Waiting for the share
// first means an attempt over its namespace's share holds none of the Prometheus' slots.
func (ar *analysisRunner) run(ctx context.Context, a *analysisAttempt, exp, baseline *perfexpv1alpha1.PerfExperiment, share, slots *urlSlots, keys ...string) {
	defer a.cancel()
	defer ar.release(keys...)
	for _, s := range []*urlSlots{share, slots} {
		select {
		case s.free <- struct{}{}:
		case <-ctx.Done():
			return
		}
		defer func() { <-s.free }()
	}
	callCtx, cancel := context.WithTimeout(ctx, ar.timeout)
	res, err := ar.analyzer.Analyze(callCtx, exp, baseline)
	ranOut := errors.Is(callCtx.Err(), context.DeadlineExceeded) && ctx.Err() == nil && !res.Done && res.Failure == nil
	cancel()
	if ctx.Err() != nil {
		return
	}
	if ranOut {
		log.FromContext(ctx).Info("An analysis attempt ran out of time; trying again later", "timeout", ar.timeout, "error", err)
		res, err = step.Wait(defaultWait, attemptRanOut), nil
	}

	ar.mu.Lock()
	if ar.attempts[exp.UID] != a {
		ar.mu.Unlock()
		return
	}
	a.ended, a.res, a.err, a.ranOut, a.after = true, res, err, ranOut, exp.Status.DeepCopy()
	a.notBefore = ar.clock.Now()
	switch {
	case err != nil:
		// Reported by the reconciles until then (the controller backs off), never retried
		// in a tight loop.
		a.notBefore = a.notBefore.Add(analysisErrorRetry)
	case ranOut:
		// It already waited its whole allowance: the next one may start now.
	case !res.Done && res.Failure == nil:
		a.notBefore = a.notBefore.Add(orDefault(res.RequeueAfter))
	}
	ar.mu.Unlock()

	select {
	case ar.done <- event.GenericEvent{Object: exp}:
	case <-ctx.Done():
	}
}

// forget cancels and drops the attempt of the experiment uid, if any.
func (ar *analysisRunner) forget(uid types.UID) {
	if ar == nil {
		return
	}
	ar.mu.Lock()
	defer ar.mu.Unlock()
	if a, ok := ar.attempts[uid]; ok {
		a.cancel()
		delete(ar.attempts, uid)
	}
}

// forgetKey cancels and drops the attempts of the experiment named key (it is gone, so its UID
// is not known any more).
func (ar *analysisRunner) forgetKey(key types.NamespacedName) {
	if ar == nil {
		return
	}
	ar.mu.Lock()
	defer ar.mu.Unlock()
	for uid, a := range ar.attempts {
		if a.key == key {
			a.cancel()
			delete(ar.attempts, uid)
		}
	}
}

// applyAnalysis copies into exp what the Analyzer recorded in its copy: the results and their
// references, and every condition it set or changed. The rest of the status is the
// reconciler's and stays as read.
func applyAnalysis(exp *perfexpv1alpha1.PerfExperiment, before, after *perfexpv1alpha1.PerfExperimentStatus) {
	if after == nil {
		return
	}
	exp.Status.Results = after.Results
	exp.Status.Comparison = after.Comparison
	exp.Status.Verdict = after.Verdict
	exp.Status.ReportRef = after.ReportRef
	exp.Status.DashboardURL = after.DashboardURL
	for _, c := range after.Conditions {
		old := meta.FindStatusCondition(before.Conditions, c.Type)
		if old != nil && old.Status == c.Status && old.Reason == c.Reason && old.Message == c.Message &&
			old.ObservedGeneration == c.ObservedGeneration {
			continue
		}
		meta.SetStatusCondition(&exp.Status.Conditions, c)
	}
}
