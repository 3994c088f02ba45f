package main

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/testenv"
)

// syncBuffer is an output the test reads while the command writes it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// watchingClient is a client of env that can open watches, as the plugin's own is.
func watchingClient(t *testing.T, env *testenv.Env) client.WithWatch {
	t.Helper()
	c, err := client.NewWithWatch(env.Config, client.Options{Scheme: env.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// Story: an engineer runs `kubectl perfexp watch` on an experiment that waits in the queue,
// and follows it through the run, with live numbers from Prometheus, to its verdict. The
// experiment is moved along by status updates on a real API server, as the operator would.
func TestWatch(t *testing.T) {
	env := testenv.Start(t)
	ns := env.Namespace(t, "watch")
	conn := &connection{client: watchingClient(t, env), namespace: ns, rest: env.Config}
	ctx := t.Context()

	prom := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// One answer for the three queries: 0.1875 reads as p95 187.5 ms, 18.75 % errors
		// and 0.2 req/s.
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"status":"success","data":{"resultType":"vector","result":[{"metric":{},"value":[1700000000,"0.1875"]}]}}`))
	}))
	defer prom.Close()

	// update moves the experiment along as the operator would: a status write.
	update := func(t *testing.T, name string, change func(*perfexpv1alpha1.PerfExperimentStatus)) {
		t.Helper()
		exp := &perfexpv1alpha1.PerfExperiment{}
		if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, exp); err != nil {
			t.Fatal(err)
		}
		change(&exp.Status)
		if err := env.Client.Status().Update(ctx, exp); err != nil {
			t.Fatal(err)
		}
	}
	// start runs watch in the background; wait returns its error once it ended.
	// The clock stands still, so the progress shown is exact.
	now := time.Now().Truncate(time.Second)
	set := testSettings()
	set.now = func() time.Time { return now }
	start := func(t *testing.T, args ...string) (out *syncBuffer, wait func() error) {
		out = &syncBuffer{}
		done := make(chan error, 1)
		go func() {
			cmd := newRootCommandWith(func(*kubeFlags) (*connection, error) { return conn, nil }, set)
			cmd.SetOut(out)
			cmd.SetErr(out)
			cmd.SetArgs(args)
			done <- cmd.ExecuteContext(ctx)
		}()
		return out, func() error {
			select {
			case err := <-done:
				return err
			case <-time.After(20 * time.Second):
				t.Fatalf("watch did not end; it printed:\n%s", out.String())
				return nil
			}
		}
	}
	// shows waits until the output has every text, in order, from where the last wait stopped.
	shows := func(t *testing.T, out *syncBuffer, from *int, texts ...string) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for {
			s := out.String()
			at, ok := *from, true
			for _, text := range texts {
				i := strings.Index(s[at:], text)
				if i < 0 {
					ok = false
					break
				}
				at += i + len(text)
			}
			if ok {
				*from = at
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("watch never showed %q after offset %d; it printed:\n%s", texts, *from, s)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}

	t.Run("from the queue to the verdict", func(t *testing.T) {
		exp := newExperiment(ns, "pool-10")
		exp.Spec.Load.Scenarios[0].Duration = &metav1.Duration{Duration: 10 * time.Minute}
		if err := env.Client.Create(ctx, exp); err != nil {
			t.Fatal(err)
		}
		update(t, "pool-10", func(s *perfexpv1alpha1.PerfExperimentStatus) {
			s.Phase, s.Queue, s.QueuePosition = perfexpv1alpha1.PhaseQueued, "perf", 2
		})
		out, wait := start(t, "watch", "pool-10", "--prometheus-url", prom.URL)
		from := 0
		shows(t, out, &from, ns+"/pool-10  Queued", "position   2 in queue perf: 1 experiment ahead of it")

		update(t, "pool-10", func(s *perfexpv1alpha1.PerfExperimentStatus) { s.QueuePosition = 1 })
		shows(t, out, &from, "position   1 in queue perf: it runs next")

		update(t, "pool-10", func(s *perfexpv1alpha1.PerfExperimentStatus) {
			s.Phase, s.QueuePosition, s.Message = perfexpv1alpha1.PhasePreparing, 0, "waiting for the rollout of deployment/checkout"
		})
		shows(t, out, &from, "Preparing", "waiting for the rollout of deployment/checkout")

		started := metav1.NewTime(now.Add(-150 * time.Second))
		update(t, "pool-10", func(s *perfexpv1alpha1.PerfExperimentStatus) {
			s.Phase, s.TestID, s.Message = perfexpv1alpha1.PhaseRunning, "pool-10-1", ""
			s.Load = &perfexpv1alpha1.LoadStatus{StartTime: &started, Scenarios: []perfexpv1alpha1.ScenarioStatus{
				{Name: "s", State: perfexpv1alpha1.ScenarioRunning, StartTime: &started}}}
		})
		// 2m30s of the 10 minutes: a quarter of the bar, 7m30s left.
		shows(t, out, &from, "Running", "load       [########----------------------]  25%  2m30s of 10m00s, 7m30s left",
			"scenario   s Running", "live       p95 187.5 ms, errors 18.75 %, 0.2 req/s over the last minute")

		for _, p := range []perfexpv1alpha1.Phase{perfexpv1alpha1.PhaseRestoring, perfexpv1alpha1.PhaseAnalyzing} {
			update(t, "pool-10", func(s *perfexpv1alpha1.PerfExperimentStatus) { s.Phase = p })
			shows(t, out, &from, string(p))
		}
		update(t, "pool-10", func(s *perfexpv1alpha1.PerfExperimentStatus) {
			s.Phase, s.Verdict = perfexpv1alpha1.PhaseSucceeded, perfexpv1alpha1.VerdictPass
			s.Results = &perfexpv1alpha1.Results{Validity: perfexpv1alpha1.Valid, P95: "187.5"}
			s.ReportRef = &perfexpv1alpha1.LocalObjectReference{Name: "pool-10-report"}
		})
		if err := wait(); err != nil {
			t.Fatalf("watch of a succeeded experiment: %v\n%s", err, out.String())
		}
		shows(t, out, &from, "Succeeded", "verdict    Pass", "p95        187.5 ms over all scenarios", "report     kubectl perfexp report pool-10 -n "+ns)
	})

	t.Run("a failed experiment ends watch with an error", func(t *testing.T) {
		if err := env.Client.Create(ctx, newExperiment(ns, "broken")); err != nil {
			t.Fatal(err)
		}
		update(t, "broken", func(s *perfexpv1alpha1.PerfExperimentStatus) { s.Phase = perfexpv1alpha1.PhasePreparing })
		out, wait := start(t, "watch", "broken", "--prometheus-url", "none")
		from := 0
		shows(t, out, &from, "Preparing")
		update(t, "broken", func(s *perfexpv1alpha1.PerfExperimentStatus) {
			s.Phase, s.Message = perfexpv1alpha1.PhaseFailed, "the variant could not be applied"
		})
		err := wait()
		if err == nil || !strings.Contains(err.Error(), "ended Failed") {
			t.Fatalf("error %v, want one saying it ended Failed\n%s", err, out.String())
		}
		shows(t, out, &from, "Failed", "the variant could not be applied")
	})

	t.Run("an unknown experiment", func(t *testing.T) {
		out, wait := start(t, "watch", "nope")
		if err := wait(); err == nil || !strings.Contains(err.Error(), `perfexperiment "nope" not found in namespace "`+ns+`"`) || exitCode(err) != exitError {
			t.Fatalf("error %v, want not found naming the namespace\n%s", err, out.String())
		}
	})

	t.Run("in a pipeline: --fail-on gives each outcome its exit code", func(t *testing.T) {
		if err := env.Client.Create(ctx, newExperiment(ns, "gated")); err != nil {
			t.Fatal(err)
		}
		update(t, "gated", func(s *perfexpv1alpha1.PerfExperimentStatus) {
			s.Phase, s.Verdict = perfexpv1alpha1.PhaseSucceeded, perfexpv1alpha1.VerdictFail
			s.Comparison = &perfexpv1alpha1.Comparison{Change: perfexpv1alpha1.ChangeRegressed}
		})
		for _, tc := range []struct {
			failOn string
			code   int
		}{{"", 0}, {"fail", exitFail}, {"regressed,fail,invalid", exitFail}, {"regressed", exitRegressed}, {"inconclusive", 0}} {
			args := []string{"watch", "gated", "--prometheus-url", "none"}
			if tc.failOn != "" {
				args = append(args, "--fail-on", tc.failOn)
			}
			out, wait := start(t, args...)
			err := wait()
			if code := exitCode(err); (err == nil) != (tc.code == 0) || (err != nil && code != tc.code) {
				t.Errorf("--fail-on %q: error %v (exit %d), want exit %d\n%s", tc.failOn, err, code, tc.code, out.String())
			}
		}
		out, wait := start(t, "watch", "gated", "--fail-on", "slow")
		if err := wait(); err == nil || !strings.Contains(err.Error(), `unknown --fail-on outcome "slow"`) {
			t.Errorf("error %v\n%s", err, out.String())
		}
	})

	t.Run("in a pipeline: --timeout ends a watch that waits too long with exit code 9", func(t *testing.T) {
		if err := env.Client.Create(ctx, newExperiment(ns, "slow")); err != nil {
			t.Fatal(err)
		}
		update(t, "slow", func(s *perfexpv1alpha1.PerfExperimentStatus) {
			s.Phase, s.QueuePosition = perfexpv1alpha1.PhaseQueued, 2
		})
		out, wait := start(t, "watch", "slow", "--timeout", "300ms", "--prometheus-url", "none")
		err := wait()
		if exitCode(err) != exitTimedOut || !strings.Contains(err.Error(), "had not ended after --timeout 300ms (phase Queued)") {
			t.Fatalf("error %v (exit %d), want exit 9\n%s", err, exitCode(err), out.String())
		}
	})

	t.Run("the API server not answering for a while, then for too long", func(t *testing.T) {
		if err := env.Client.Create(ctx, newExperiment(ns, "flaky")); err != nil {
			t.Fatal(err)
		}
		update(t, "flaky", func(s *perfexpv1alpha1.PerfExperimentStatus) { s.Phase = perfexpv1alpha1.PhasePreparing })
		var mu sync.Mutex
		failures := 2
		withWatch, err := client.NewWithWatch(env.Config, client.Options{Scheme: env.Scheme})
		if err != nil {
			t.Fatal(err)
		}
		flaky := interceptor.NewClient(withWatch, interceptor.Funcs{
			Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
				mu.Lock()
				defer mu.Unlock()
				if failures != 0 {
					failures--
					return errors.New("connection reset by peer")
				}
				return c.Get(ctx, key, obj, opts...)
			},
		})
		// Each reading of the clock is 20 s later: three failures in a row outlast the
		// one-minute grace, two do not.
		var tick time.Duration
		clockSet := testSettings()
		clockSet.now = func() time.Time { mu.Lock(); defer mu.Unlock(); tick += 20 * time.Second; return now.Add(tick) }
		watchWith := func(args ...string) (*syncBuffer, error) {
			out := &syncBuffer{}
			cmd := newRootCommandWith(func(*kubeFlags) (*connection, error) {
				return &connection{client: flaky, namespace: ns}, nil
			}, clockSet)
			cmd.SetOut(out)
			cmd.SetErr(out)
			cmd.SetArgs(args)
			wctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
			defer cancel()
			return out, cmd.ExecuteContext(wctx)
		}
		out, err := watchWith("watch", "flaky", "--prometheus-url", "none")
		// One line per outage, not one per attempt.
		if err != nil || strings.Count(out.String(), "reading "+ns+"/flaky failed, retrying for up to 1m00s: connection reset by peer") != 1 ||
			!strings.Contains(out.String(), "Preparing") {
			t.Fatalf("two failures should be retried under one line, then the experiment shown (err %v):\n%s", err, out.String())
		}
		mu.Lock()
		failures = -1 // from now on, every read fails
		mu.Unlock()
		out, err = watchWith("watch", "flaky")
		if err == nil || !strings.Contains(err.Error(), "the API server has not answered for 1m00s") {
			t.Fatalf("error %v, want watch to give up after the grace\n%s", err, out.String())
		}
	})

	t.Run("without a flag, the operator's Prometheus", func(t *testing.T) {
		system := env.Namespace(t, "perfexp-system")
		labels := map[string]string{operatorLabel: "perfexp"}
		op := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: system, Name: "perfexp-manager", Labels: labels},
			Spec: appsv1.DeploymentSpec{Selector: &metav1.LabelSelector{MatchLabels: labels}, Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "manager", Image: "perfexp/manager:dev",
					Args: []string{"--leader-elect", "--prometheus-url", prom.URL}}}}}}}
		if err := env.Client.Create(ctx, op); err != nil {
			t.Fatal(err)
		}
		defer func() { _ = env.Client.Delete(ctx, op) }()
		if err := env.Client.Create(ctx, newExperiment(ns, "discovered")); err != nil {
			t.Fatal(err)
		}
		started := metav1.NewTime(now)
		update(t, "discovered", func(s *perfexpv1alpha1.PerfExperimentStatus) {
			s.Phase, s.TestID = perfexpv1alpha1.PhaseRunning, "discovered-1"
			s.Load = &perfexpv1alpha1.LoadStatus{StartTime: &started}
		})
		out, wait := start(t, "watch", "discovered")
		from := 0
		shows(t, out, &from, "Running", "live       p95 187.5 ms")
		update(t, "discovered", func(s *perfexpv1alpha1.PerfExperimentStatus) { s.Phase = perfexpv1alpha1.PhaseSucceeded })
		if err := wait(); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("a running experiment with Prometheus out of reach shows n/a", func(t *testing.T) {
		dead := httptest.NewServer(http.NotFoundHandler())
		deadURL := dead.URL
		dead.Close()
		// The experiment names the Prometheus, not the user: n/a comes with a hint.
		exp := newExperiment(ns, "offline")
		exp.Spec.Analysis = &perfexpv1alpha1.Analysis{PrometheusURL: deadURL}
		if err := env.Client.Create(ctx, exp); err != nil {
			t.Fatal(err)
		}
		started := metav1.NewTime(now)
		update(t, "offline", func(s *perfexpv1alpha1.PerfExperimentStatus) {
			s.Phase, s.TestID = perfexpv1alpha1.PhaseRunning, "offline-1"
			s.Load = &perfexpv1alpha1.LoadStatus{StartTime: &started}
		})
		out, wait := start(t, "watch", "offline")
		from := 0
		shows(t, out, &from, "Running", "live       p95 n/a, errors n/a (Prometheus: ", "; choose one with --prometheus-url)")
		update(t, "offline", func(s *perfexpv1alpha1.PerfExperimentStatus) { s.Phase = perfexpv1alpha1.PhaseAborted })
		if err := wait(); err == nil || !strings.Contains(err.Error(), "ended Aborted") {
			t.Fatalf("error %v, want ended Aborted", err)
		}
	})
}

// cutWatch passes on at most limit events of a real watch, then closes its channel, as an API
// server does when a watch times out; it notes the resourceVersion of each event it passed.
type cutWatch struct {
	inner watch.Interface
	ch    chan watch.Event
	stop  chan struct{}
	once  sync.Once
}

func newCutWatch(inner watch.Interface, limit int, passed func(rv string)) *cutWatch {
	c := &cutWatch{inner: inner, ch: make(chan watch.Event), stop: make(chan struct{})}
	go func() {
		defer close(c.ch)
		defer inner.Stop()
		for n := 0; n < limit; n++ {
			select {
			case ev, ok := <-inner.ResultChan():
				if !ok {
					return
				}
				if o, isObj := ev.Object.(client.Object); isObj {
					passed(o.GetResourceVersion())
				}
				select {
				case c.ch <- ev:
				case <-c.stop:
					return
				}
			case <-c.stop:
				return
			}
		}
	}()
	return c
}

func (c *cutWatch) ResultChan() <-chan watch.Event { return c.ch }
func (c *cutWatch) Stop()                          { c.once.Do(func() { close(c.stop) }) }

// Story: watch is a Kubernetes watch, not a poll. A change shows as soon as the API server
// reports it; a watch the server closes is resumed from the last resourceVersion without
// reading the experiment again; one that cannot resume (410 Gone) reads it again; an API
// server that stops answering is retried for a minute, under one line.
func TestWatchOnAWatch(t *testing.T) {
	env := testenv.Start(t)
	ns := env.Namespace(t, "watching")
	base := watchingClient(t, env)
	ctx := t.Context()

	update := func(t *testing.T, name string, change func(*perfexpv1alpha1.PerfExperimentStatus)) {
		t.Helper()
		exp := &perfexpv1alpha1.PerfExperiment{}
		if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, exp); err != nil {
			t.Fatal(err)
		}
		change(&exp.Status)
		if err := env.Client.Status().Update(ctx, exp); err != nil {
			t.Fatal(err)
		}
	}
	create := func(t *testing.T, name string) {
		t.Helper()
		if err := env.Client.Create(ctx, newExperiment(ns, name)); err != nil {
			t.Fatal(err)
		}
		update(t, name, func(s *perfexpv1alpha1.PerfExperimentStatus) {
			s.Phase, s.QueuePosition = perfexpv1alpha1.PhaseQueued, 2
		})
	}
	// No redraw between changes: only the watch can show a change.
	set := testSettings()
	set.watchInterval = time.Hour
	start := func(t *testing.T, c client.WithWatch, set settings, args ...string) (*syncBuffer, func() error) {
		out := &syncBuffer{}
		done := make(chan error, 1)
		go func() {
			cmd := newRootCommandWith(func(*kubeFlags) (*connection, error) { return &connection{client: c, namespace: ns}, nil }, set)
			cmd.SetOut(out)
			cmd.SetErr(out)
			cmd.SetArgs(args)
			done <- cmd.ExecuteContext(ctx)
		}()
		return out, func() error {
			select {
			case err := <-done:
				return err
			case <-time.After(20 * time.Second):
				t.Fatalf("watch did not end; it printed:\n%s", out.String())
				return nil
			}
		}
	}
	// within waits until out has text and says how long that took.
	within := func(t *testing.T, out *syncBuffer, text string, limit time.Duration) time.Duration {
		t.Helper()
		begin := time.Now()
		for !strings.Contains(out.String(), text) {
			if time.Since(begin) > limit {
				t.Fatalf("watch did not show %q within %s; it printed:\n%s", text, limit, out.String())
			}
			time.Sleep(5 * time.Millisecond)
		}
		return time.Since(begin)
	}

	t.Run("a change shows as soon as the API server reports it", func(t *testing.T) {
		create(t, "prompt")
		out, wait := start(t, base, set, "watch", "prompt", "--prometheus-url", "none")
		within(t, out, "position   2 in queue", 5*time.Second)
		update(t, "prompt", func(s *perfexpv1alpha1.PerfExperimentStatus) {
			s.Phase, s.QueuePosition, s.Message = perfexpv1alpha1.PhasePreparing, 0, "applying the variant"
		})
		took := within(t, out, "applying the variant", 2*time.Second)
		update(t, "prompt", func(s *perfexpv1alpha1.PerfExperimentStatus) { s.Phase = perfexpv1alpha1.PhaseSucceeded })
		if err := wait(); err != nil {
			t.Fatal(err)
		}
		t.Logf("the change showed %s after the status write", took)
	})

	t.Run("a watch the server closes resumes from the last resourceVersion", func(t *testing.T) {
		create(t, "resumed")
		var mu sync.Mutex
		var gets int
		var asked, passed []string
		cut := interceptor.NewClient(base, interceptor.Funcs{
			Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
				mu.Lock()
				gets++
				mu.Unlock()
				return c.Get(ctx, key, obj, opts...)
			},
			Watch: func(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) (watch.Interface, error) {
				lo := (&client.ListOptions{}).ApplyOptions(opts)
				mu.Lock()
				asked = append(asked, lo.Raw.ResourceVersion)
				mu.Unlock()
				w, err := c.Watch(ctx, list, opts...)
				if err != nil {
					return nil, err
				}
				// Every watch ends after one event.
				return newCutWatch(w, 1, func(rv string) { mu.Lock(); passed = append(passed, rv); mu.Unlock() }), nil
			},
		})
		out, wait := start(t, cut, set, "watch", "resumed", "--prometheus-url", "none")
		within(t, out, "Queued", 5*time.Second)
		for _, p := range []perfexpv1alpha1.Phase{perfexpv1alpha1.PhasePreparing, perfexpv1alpha1.PhaseRestoring, perfexpv1alpha1.PhaseAnalyzing} {
			update(t, "resumed", func(s *perfexpv1alpha1.PerfExperimentStatus) { s.Phase = p })
			within(t, out, string(p), 5*time.Second)
		}
		update(t, "resumed", func(s *perfexpv1alpha1.PerfExperimentStatus) { s.Phase = perfexpv1alpha1.PhaseSucceeded })
		if err := wait(); err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		defer mu.Unlock()
		if gets != 1 || len(asked) < 4 || len(passed) < 3 {
			t.Fatalf("%d reads, %d watches %v, events at %v; want one read and a watch per change", gets, len(asked), asked, passed)
		}
		// Each new watch starts where the closed one stopped.
		for i := 1; i < len(asked) && i <= len(passed); i++ {
			if asked[i] != passed[i-1] {
				t.Errorf("watch %d asked from resourceVersion %s, want %s, the last event of watch %d (asked %v, events %v)", i+1, asked[i], passed[i-1], i, asked, passed)
			}
		}
	})

	t.Run("a watch that cannot resume (410 Gone) reads the experiment again", func(t *testing.T) {
		create(t, "gone")
		var mu sync.Mutex
		var gets, watches int
		expired := interceptor.NewClient(base, interceptor.Funcs{
			Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
				mu.Lock()
				gets++
				mu.Unlock()
				return c.Get(ctx, key, obj, opts...)
			},
			Watch: func(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) (watch.Interface, error) {
				mu.Lock()
				watches++
				first := watches == 1
				mu.Unlock()
				if first {
					fake := watch.NewFakeWithChanSize(1, false)
					gone := apierrors.NewResourceExpired("too old resource version")
					fake.Error(&gone.ErrStatus)
					return fake, nil
				}
				return c.Watch(ctx, list, opts...)
			},
		})
		out, wait := start(t, expired, set, "watch", "gone", "--prometheus-url", "none")
		within(t, out, "Queued", 5*time.Second)
		deadline := time.Now().Add(5 * time.Second)
		for {
			mu.Lock()
			again := watches >= 2
			mu.Unlock()
			if again {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("no second watch after 410 Gone:\n%s", out.String())
			}
			time.Sleep(5 * time.Millisecond)
		}
		update(t, "gone", func(s *perfexpv1alpha1.PerfExperimentStatus) { s.Phase = perfexpv1alpha1.PhaseAborted })
		if err := wait(); exitCode(err) != exitAborted {
			t.Fatalf("error %v, want ended Aborted\n%s", err, out.String())
		}
		mu.Lock()
		defer mu.Unlock()
		if gets != 2 {
			t.Fatalf("%d reads, want 2: the first, and one after 410 Gone", gets)
		}
	})

	t.Run("an API server that stops answering mid-watch is retried for a minute, under one line", func(t *testing.T) {
		create(t, "outage")
		down := interceptor.NewClient(base, interceptor.Funcs{
			Watch: func(context.Context, client.WithWatch, client.ObjectList, ...client.ListOption) (watch.Interface, error) {
				return nil, errors.New("connection reset by peer")
			},
		})
		// Each reading of the clock is 20 s later.
		var mu sync.Mutex
		var tick time.Duration
		clock := testSettings()
		now := time.Now()
		clock.now = func() time.Time { mu.Lock(); defer mu.Unlock(); tick += 20 * time.Second; return now.Add(tick) }
		out, wait := start(t, down, clock, "watch", "outage", "--prometheus-url", "none")
		err := wait()
		if err == nil || !strings.Contains(err.Error(), "the API server has not answered for 1m00s") {
			t.Fatalf("error %v, want watch to give up after the grace\n%s", err, out.String())
		}
		if n := strings.Count(out.String(), "watching "+ns+"/outage failed, retrying for up to 1m00s: connection reset by peer"); n != 1 {
			t.Fatalf("%d retry lines, want one:\n%s", n, out.String())
		}
	})
}
