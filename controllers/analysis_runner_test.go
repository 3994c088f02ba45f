package controllers_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/api"
	promv1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/step"
	"github.com/perfexp/perfexp/internal/testenv"
)

// silentPrometheus is a Prometheus that accepts connections and never answers: every request
// hangs until its client gives up or the test ends.
type silentPrometheus struct {
	srv *httptest.Server
	// requests counts the requests that arrived; abandoned those whose client gave up.
	requests, abandoned atomic.Int32
}

func newSilentPrometheus(t *testing.T) *silentPrometheus {
	t.Helper()
	p := &silentPrometheus{}
	release := make(chan struct{})
	p.srv = httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		// Once the body is read the server notices a client that hangs up.
		_, _ = io.Copy(io.Discard, r.Body)
		p.requests.Add(1)
		select {
		case <-r.Context().Done():
			p.abandoned.Add(1)
		case <-release:
		}
	}))
	t.Cleanup(p.srv.Close)
	t.Cleanup(func() { close(release) })
	return p
}

// promAnalyzer analyses the experiments that name a spec.analysis.prometheusURL by querying
// it through client_golang, as the operator's analyzer does, and waits when the query fails;
// every other experiment is analysed by the lab (the operator's own Prometheus, healthy).
type promAnalyzer struct {
	*lab
}

func (a *promAnalyzer) Analyze(ctx context.Context, exp, baseline *perfexpv1alpha1.PerfExperiment) (step.Result, error) {
	if exp.Spec.Analysis == nil || exp.Spec.Analysis.PrometheusURL == "" {
		return a.lab.Analyze(ctx, exp, baseline)
	}
	c, err := api.NewClient(api.Config{Address: exp.Spec.Analysis.PrometheusURL})
	if err != nil {
		return step.Result{}, err
	}
	if _, _, err := promv1.NewAPI(c).Query(ctx, `up`, time.Now()); err != nil {
		return step.Wait(5*time.Second, "Prometheus to answer (%v)", err), nil
	}
	return step.Done(), nil
}

// hungExperiment is an experiment analysed against the silent Prometheus.
func hungExperiment(ns, name, queueName string, prom *silentPrometheus) *perfexpv1alpha1.PerfExperiment {
	exp := experiment(ns, name, queueName, 0)
	exp.Spec.Analysis = &perfexpv1alpha1.Analysis{PrometheusURL: prom.srv.URL}
	return exp
}

// timedRun creates an experiment on its own queue whose load lasts load, and returns how long
// after its creation its environment was restored and it reached Succeeded.
func timedRun(t *testing.T, c client.Client, lab *lab, ns, name string, load, within time.Duration) (restored, ended time.Duration) {
	t.Helper()
	created := time.Now()
	mustCreate(t, c, experiment(ns, name, "q-"+name, 0))
	time.AfterFunc(load, func() { lab.finishLoad(name) })
	eventually(t, within, name+" restores its environment", func() error {
		if lab.restores(name) == 0 {
			return fmt.Errorf("not restored after %s", time.Since(created).Round(time.Second))
		}
		return nil
	})
	restored = time.Since(created)
	eventually(t, within, name+" ends", func() error {
		got := get(t, c, ns, name)
		if got == nil || !got.Status.Phase.IsTerminal() {
			return fmt.Errorf("not ended after %s", time.Since(created).Round(time.Second))
		}
		if got.Status.Phase != perfexpv1alpha1.PhaseSucceeded {
			return fmt.Errorf("ended %s: %s", got.Status.Phase, got.Status.Message)
		}
		return nil
	})
	return restored, time.Since(created)
}

// Five experiments of five queues analyse against a Prometheus that never answers, with the
// operator's default workers and attempt timeout; a sixth experiment of its own queue with a
// short load, analysed by the operator's own Prometheus, must restore and end in about the time
// it takes on a quiet operator. Before the analysis ran apart from the reconcile workers, the
// five held all four workers for two minutes per attempt and the sixth waited behind them.
func TestHungPrometheusDelaysNoOtherQueue(t *testing.T) {
	env := testenv.Start(t)
	env.Namespace(t, leaseNamespace)
	c := env.Client
	ns := env.Namespace(t, "hung-five")
	prom := newSilentPrometheus(t)
	lab := newLab()
	startOperatorOpts(t, env, operatorOptions{workers: 4}, lab, lab, &promAnalyzer{lab: lab})

	const load = 2 * time.Second
	quietRestored, quietEnded := timedRun(t, c, lab, ns, "quiet", load, time.Minute)
	t.Logf("quiet operator: restored %s, ended %s after creation", quietRestored.Round(100*time.Millisecond), quietEnded.Round(100*time.Millisecond))

	for i := range 5 {
		name := fmt.Sprintf("hung-%d", i)
		mustCreate(t, c, hungExperiment(ns, name, "q-"+name, prom))
		lab.finishLoad(name)
	}
	// Two of them query at once (the operator's four workers before, then its four analysis
	// slots, now one namespace's share of them, half); the others wait for one.
	eventually(t, time.Minute, "the five analyses hang on Prometheus", func() error {
		if n := prom.requests.Load(); n < 2 {
			return fmt.Errorf("%d requests reached Prometheus", n)
		}
		for i := range 5 {
			if got := get(t, c, ns, fmt.Sprintf("hung-%d", i)); got.Status.Phase != perfexpv1alpha1.PhaseAnalyzing {
				return fmt.Errorf("hung-%d is %s", i, got.Status.Phase)
			}
		}
		return nil
	})

	// Wait long enough to measure the old behaviour too; the bound is asserted below.
	restored, ended := timedRun(t, c, lab, ns, "sixth", load, 5*time.Minute)
	t.Logf("five hung analyses: the sixth restored %s, ended %s after creation", restored.Round(100*time.Millisecond), ended.Round(100*time.Millisecond))
	bound := func(quiet time.Duration) time.Duration { return 3*quiet + 10*time.Second }
	if restored > bound(quietRestored) {
		t.Errorf("the sixth restored %s after creation beside five hung analyses, want within %s (quiet: %s)", restored, bound(quietRestored), quietRestored)
	}
	if ended > bound(quietEnded) {
		t.Errorf("the sixth ended %s after creation beside five hung analyses, want within %s (quiet: %s)", ended, bound(quietEnded), quietEnded)
	}
	for i := range 5 {
		if got := get(t, c, ns, fmt.Sprintf("hung-%d", i)); got.Status.Phase != perfexpv1alpha1.PhaseAnalyzing {
			t.Errorf("hung-%d is %s, want still Analyzing: the story did not overlap them", i, got.Status.Phase)
		}
	}
}

// An analysis under way is cancelled when its experiment is aborted or deleted, and the
// experiment ends at once instead of after the attempt's allowance; a restarted operator
// starts the analysis again.
func TestAnalysisUnderWayEnds(t *testing.T) {
	env := testenv.Start(t)
	env.Namespace(t, leaseNamespace)
	c := env.Client

	start := func(t *testing.T, ns, name string) (*silentPrometheus, *lab, *operator) {
		t.Helper()
		prom := newSilentPrometheus(t)
		lab := newLab()
		op := startOperatorOpts(t, env, operatorOptions{workers: 4}, lab, lab, &promAnalyzer{lab: lab})
		mustCreate(t, c, hungExperiment(ns, name, "q-"+ns, prom))
		lab.finishLoad(name)
		eventually(t, 30*time.Second, "the analysis hangs on Prometheus", func() error {
			if n := prom.requests.Load(); n < 1 {
				return fmt.Errorf("no request reached Prometheus")
			}
			return nil
		})
		return prom, lab, op
	}
	cancelled := func(t *testing.T, prom *silentPrometheus) {
		t.Helper()
		eventually(t, 10*time.Second, "the hung request is cancelled", func() error {
			if prom.abandoned.Load() == 0 {
				return fmt.Errorf("the request to Prometheus still hangs")
			}
			return nil
		})
	}

	t.Run("aborted", func(t *testing.T) {
		ns := env.Namespace(t, "analysis-abort")
		prom, _, _ := start(t, ns, "hung")
		abort(t, c, get(t, c, ns, "hung"))
		began := time.Now()
		eventually(t, 10*time.Second, "hung ends Aborted", func() error {
			if got := get(t, c, ns, "hung"); got.Status.Phase != perfexpv1alpha1.PhaseAborted {
				return fmt.Errorf("phase %s", got.Status.Phase)
			}
			return nil
		})
		t.Logf("aborted %s after the abort", time.Since(began).Round(100*time.Millisecond))
		cancelled(t, prom)
	})
	t.Run("deleted", func(t *testing.T) {
		ns := env.Namespace(t, "analysis-delete")
		prom, _, _ := start(t, ns, "hung")
		if err := c.Delete(t.Context(), get(t, c, ns, "hung")); err != nil {
			t.Fatal(err)
		}
		eventually(t, 10*time.Second, "hung is gone", func() error {
			if got := get(t, c, ns, "hung"); got != nil {
				return fmt.Errorf("still there, %s", got.Status.Phase)
			}
			return nil
		})
		cancelled(t, prom)
	})
	t.Run("operator restarted", func(t *testing.T) {
		ns := env.Namespace(t, "analysis-restart")
		_, lab, op := start(t, ns, "hung")
		op.stop()
		// The new operator's Prometheus answers (the lab's analysis under another name).
		startOperatorOpts(t, env, operatorOptions{workers: 4}, lab, lab, lab)
		waitPhase(t, c, ns, "hung", perfexpv1alpha1.PhaseSucceeded)
	})
}
