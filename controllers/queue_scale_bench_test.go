package controllers_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	goruntime "runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	coordinationv1 "k8s.io/api/coordination/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/queue"
	"github.com/perfexp/perfexp/internal/testenv"
)

// The queue benchmarks run the real reconciler against a real API server with the scripted lab
// of suite_test.go, and measure what a big queue costs: status writes and API requests (counted
// on the manager's own transport), reconcile latency (controller-runtime's histogram), heap and
// RSS, and the time from a lock's release to the next experiment taking it.
//
// PERFEXP_BENCH_EXPERIMENTS sets how many experiments each benchmark applies at once (100 when
// unset, small enough for CI; `make bench-queue` runs 1,000).

// benchExperiments is how many experiments a queue benchmark applies.
func benchExperiments(b *testing.B) int {
	b.Helper()
	v := os.Getenv("PERFEXP_BENCH_EXPERIMENTS")
	if v == "" {
		return 100
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 10 {
		b.Fatalf("PERFEXP_BENCH_EXPERIMENTS=%q: want an integer of at least 10", v)
	}
	return n
}

// BenchmarkQueueBurst applies N experiments at once to one queue whose head is running, waits
// until their positions settle, then lets a few of them run one after another.
func BenchmarkQueueBurst(b *testing.B) {
	n := benchExperiments(b)
	const dequeues = 5
	env := testenv.Start(b)
	env.Namespace(b, leaseNamespace)
	for b.Loop() {
		ns := env.Namespace(b, "burst")
		lab := newLab()
		api := startCountedOperator(b, env, lab)
		probe := startProbe()

		mustCreateB(b, env.Client, experiment(ns, "holder", "burst", 0))
		waitPhaseB(b, env.Client, ns, "holder", perfexpv1alpha1.PhaseRunning, time.Minute)
		api.settle(time.Second, 30*time.Second)
		before := api.snapshot()
		hist := reconcileHistogram(b)
		writesBefore := api.statusWritesSoFar()

		start := time.Now()
		names := make([]string, n)
		for i := range names {
			names[i] = fmt.Sprintf("exp-%04d", i)
		}
		createAll(b, env.Client, ns, names, func(string) string { return "burst" }, nil)
		// Polled every second: a list of 1,000 experiments in the benchmark's own process costs
		// heap and CPU that are counted with the manager's.
		testenv.EventuallyEvery(b, 10*time.Minute, time.Second, "the burst's positions settle", func() error {
			return positionsSettled(b, env.Client, ns, n)
		})
		api.settle(2*time.Second, 10*time.Minute)
		burst := api.snapshot().minus(before)
		settled := api.lastStatusWrite().Sub(start)
		// Logged at once, so a run that fails later still tells what the burst cost.
		b.Logf("burst of %d settled in %s: %s", n, settled.Round(time.Millisecond), burst)

		running := "holder"
		var lat []time.Duration
		afterBurst := api.snapshot()
		for range dequeues {
			next := headOf(b, env.Client, ns)
			atRelease, released := api.snapshot(), time.Now()
			lab.finishLoad(running)
			waitPhaseB(b, env.Client, ns, next, perfexpv1alpha1.PhaseRunning, 2*time.Minute)
			lat = append(lat, api.handover(queue.LeaseName("burst"), released))
			api.settle(time.Second, 2*time.Minute)
			b.Logf("%s took the lock %s after its release; the dequeue settled %s after the load ended, with %s", next,
				lat[len(lat)-1].Round(time.Millisecond), time.Since(released).Round(time.Millisecond), api.snapshot().minus(atRelease))
			running = next
		}
		deq := api.snapshot().minus(afterBurst)
		probe.stop()

		b.ReportMetric(float64(burst.statusWrites()), "burst-status-writes")
		b.ReportMetric(float64(burst.total())/float64(n), "burst-requests/exp")
		b.ReportMetric(settled.Seconds(), "burst-settle-s")
		b.ReportMetric(float64(deq.statusWrites())/dequeues, "status-writes/dequeue")
		b.ReportMetric(float64(deq.total())/dequeues, "requests/dequeue")
		b.ReportMetric(maxDuration(lat).Seconds()*1000, "max-handover-ms")
		reportReconcile(b, hist)
		api.reportPatchTimes(b, writesBefore)
		probe.report(b)
		b.Logf("%d dequeues: %s; handovers %v", dequeues, deq, lat)
	}
}

// BenchmarkQueueMany applies N experiments at once to N/10 queues (10 each) with loads that end
// at once, and waits until every one has succeeded.
func BenchmarkQueueMany(b *testing.B) {
	n := benchExperiments(b)
	queues := n / 10
	env := testenv.Start(b)
	env.Namespace(b, leaseNamespace)
	for b.Loop() {
		ns := env.Namespace(b, "many")
		lab := newLab()
		api := startCountedOperator(b, env, lab)
		probe := startProbe()
		hist := reconcileHistogram(b)

		names := make([]string, queues*10)
		queueOf := map[string]string{}
		for i := range names {
			names[i] = fmt.Sprintf("q%03d-exp-%02d", i%queues, i/queues)
			queueOf[names[i]] = fmt.Sprintf("many-%03d", i%queues)
			lab.finishLoad(names[i])
		}
		start := time.Now()
		createAll(b, env.Client, ns, names, func(name string) string { return queueOf[name] }, nil)
		testenv.EventuallyEvery(b, 15*time.Minute, 2*time.Second, "every experiment succeeds", func() error {
			return allSucceeded(b, env.Client, ns)
		})
		elapsed := api.lastStatusWrite().Sub(start)
		total := api.snapshot()
		probe.stop()

		var lat []time.Duration
		for q := range queues {
			lat = append(lat, api.handovers(queue.LeaseName(fmt.Sprintf("many-%03d", q)))...)
		}
		b.ReportMetric(elapsed.Seconds(), "all-done-s")
		b.ReportMetric(float64(total.statusWrites())/float64(len(names)), "status-writes/exp")
		b.ReportMetric(float64(total.total())/float64(len(names)), "requests/exp")
		b.ReportMetric(quantileDuration(lat, 0.5).Seconds()*1000, "p50-handover-ms")
		b.ReportMetric(maxDuration(lat).Seconds()*1000, "max-handover-ms")
		reportReconcile(b, hist)
		api.reportPatchTimes(b, 0)
		probe.report(b)
		b.Logf("%d queues x 10: %s; %d handovers", queues, total, len(lat))
	}
}

// allSucceeded reports whether every experiment of ns has succeeded. It reads 100 at a time and
// stops at the first that has not: a list of all 1,000 at every poll, in the benchmark's own
// process, cost more heap and CPU than the manager's cache of them, and was counted with it.
// The time of the last success is the last status write's, not the poll's.
func allSucceeded(b *testing.B, c client.Client, ns string) error {
	cont := ""
	for {
		list := &perfexpv1alpha1.PerfExperimentList{}
		if err := c.List(b.Context(), list, client.InNamespace(ns), client.Limit(100), client.Continue(cont)); err != nil {
			return err
		}
		for i := range list.Items {
			if e := &list.Items[i]; e.Status.Phase != perfexpv1alpha1.PhaseSucceeded {
				return fmt.Errorf("%s is %s", e.Name, e.Status.Phase)
			}
		}
		if cont = list.Continue; cont == "" {
			return nil
		}
	}
}

// startCountedOperator runs the reconciler as startOperator does, on a copy of the API
// server's config whose transport counts every request. Client-side throttling is off, as in
// the operator (ctrl.GetConfig leaves it to the API server's priority and fairness).
func startCountedOperator(b *testing.B, env *testenv.Env, lab *lab) *apiCounter {
	b.Helper()
	api := newAPICounter(env.Scheme)
	cfg := rest.CopyConfig(env.Config)
	cfg.QPS = -1
	cfg.WrapTransport = api.wrap
	startOperatorOpts(b, env, operatorOptions{workers: 4, config: cfg}, lab, lab, lab)
	return api
}

// createAll creates the named experiments at once, as `kubectl apply` of a directory does, from
// a few clients in parallel, roughly in name order. With created, each experiment is handed to
// it as soon as the API server answered.
func createAll(b *testing.B, c client.Client, ns string, names []string, queueOf func(string) string, created chan<- *perfexpv1alpha1.PerfExperiment) {
	b.Helper()
	const clients = 8
	var wg sync.WaitGroup
	errs := make(chan error, len(names))
	next := make(chan string)
	for range clients {
		wg.Go(func() {
			for name := range next {
				exp := experiment(ns, name, queueOf(name), 0)
				if err := c.Create(context.Background(), exp); err != nil {
					errs <- err
					continue
				}
				if created != nil {
					created <- exp
				}
			}
		})
	}
	for _, name := range names {
		next <- name
	}
	close(next)
	wg.Wait()
	close(errs)
	for err := range errs {
		b.Fatal(err)
	}
}

// positionsSettled reports whether all n waiting experiments are Queued with a position, and
// the first ten hold the exact positions 1..10.
func positionsSettled(b *testing.B, c client.Client, ns string, n int) error {
	list := &perfexpv1alpha1.PerfExperimentList{}
	if err := c.List(b.Context(), list, client.InNamespace(ns)); err != nil {
		return err
	}
	var positions []int32
	for i := range list.Items {
		e := &list.Items[i]
		if e.Name == "holder" {
			continue
		}
		if e.Status.Phase != perfexpv1alpha1.PhaseQueued || e.Status.QueuePosition == 0 {
			return fmt.Errorf("%s: phase %q position %d", e.Name, e.Status.Phase, e.Status.QueuePosition)
		}
		positions = append(positions, e.Status.QueuePosition)
	}
	if len(positions) != n {
		return fmt.Errorf("%d of %d experiments seen", len(positions), n)
	}
	slices.Sort(positions)
	for i := range min(10, n) {
		if positions[i] != int32(i+1) {
			return fmt.Errorf("the first positions are %v", positions[:min(10, n)])
		}
	}
	return nil
}

// headOf is the waiting experiment at position 1.
func headOf(b *testing.B, c client.Client, ns string) string {
	b.Helper()
	list := &perfexpv1alpha1.PerfExperimentList{}
	if err := c.List(b.Context(), list, client.InNamespace(ns)); err != nil {
		b.Fatal(err)
	}
	for i := range list.Items {
		if e := &list.Items[i]; e.Status.Phase == perfexpv1alpha1.PhaseQueued && e.Status.QueuePosition == 1 {
			return e.Name
		}
	}
	b.Fatal("no experiment waits at position 1")
	return ""
}

func mustCreateB(b *testing.B, c client.Client, obj client.Object) {
	b.Helper()
	if err := c.Create(b.Context(), obj); err != nil {
		b.Fatal(err)
	}
}

func eventuallyB(b *testing.B, timeout time.Duration, what string, check func() error) {
	b.Helper()
	testenv.EventuallyEvery(b, timeout, 200*time.Millisecond, what, check)
}

func waitPhaseB(b *testing.B, c client.Client, ns, name string, want perfexpv1alpha1.Phase, timeout time.Duration) {
	b.Helper()
	eventuallyB(b, timeout, fmt.Sprintf("%s reaches %s", name, want), func() error {
		exp := &perfexpv1alpha1.PerfExperiment{}
		if err := c.Get(b.Context(), client.ObjectKey{Namespace: ns, Name: name}, exp); err != nil {
			return err
		}
		if exp.Status.Phase != want {
			return fmt.Errorf("phase %q (%s)", exp.Status.Phase, exp.Status.Message)
		}
		return nil
	})
}

// apiCounter counts the manager's API requests by verb and resource, and remembers when each
// queue Lease was taken and released.
type apiCounter struct {
	decoder    runtime.Decoder
	mu         sync.Mutex
	counts     requestCounts
	lastStatus time.Time
	// patchTimes are the round trips of the status writes, so that a reconcile's latency can be
	// told apart from the API server's answer to its one write.
	patchTimes []time.Duration
	leases     []leaseWrite
}

// leaseWrite is one successful write of a queue Lease.
type leaseWrite struct {
	name  string
	taken bool // a holder was written; false: the lock was released
	at    time.Time
}

// requestCounts maps "verb resource[/subresource]" to a number of requests.
type requestCounts map[string]int

func newAPICounter(scheme *runtime.Scheme) *apiCounter {
	return &apiCounter{counts: requestCounts{}, decoder: serializer.NewCodecFactory(scheme).UniversalDeserializer()}
}

func (a *apiCounter) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripFunc(func(req *http.Request) (*http.Response, error) {
		verb, resource, name := describe(req)
		var lease *leaseWrite
		if resource == "leases" && (verb == "create" || verb == "update") && req.Body != nil {
			body, err := io.ReadAll(req.Body)
			if err != nil {
				return nil, err
			}
			req.Body = io.NopCloser(bytes.NewReader(body))
			// The manager's client may send Leases as protobuf or JSON: decode either.
			l := &coordinationv1.Lease{}
			if _, _, err := a.decoder.Decode(body, nil, l); err == nil {
				if name == "" {
					name = l.Name
				}
				lease = &leaseWrite{name: name, taken: l.Spec.HolderIdentity != nil && *l.Spec.HolderIdentity != ""}
			}
		}
		sent := time.Now()
		resp, err := rt.RoundTrip(req)
		took := time.Since(sent)
		a.mu.Lock()
		defer a.mu.Unlock()
		a.counts[verb+" "+resource]++
		if err == nil && resp.StatusCode == http.StatusConflict {
			// Counted among the requests too; kept apart to tell retries from progress.
			a.counts["conflicted "+verb+" "+resource]++
		}
		if err == nil && resp.StatusCode < 300 {
			if resource == "perfexperiments/status" && (verb == "patch" || verb == "update") {
				a.lastStatus = time.Now()
				a.patchTimes = append(a.patchTimes, took)
			}
			if lease != nil {
				lease.at = time.Now()
				a.leases = append(a.leases, *lease)
			}
		}
		return resp, err
	})
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

// describe returns a request's verb, resource (with its subresource) and object name, from its
// method and path (/api/v1/... or /apis/group/version/..., namespaced or not).
func describe(req *http.Request) (verb, resource, name string) {
	parts := strings.Split(strings.Trim(req.URL.Path, "/"), "/")
	switch {
	case len(parts) >= 2 && parts[0] == "api":
		parts = parts[2:]
	case len(parts) >= 3 && parts[0] == "apis":
		parts = parts[3:]
	default:
		return strings.ToLower(req.Method), req.URL.Path, ""
	}
	if len(parts) >= 3 && parts[0] == "namespaces" {
		parts = parts[2:]
	}
	if len(parts) > 0 {
		resource = parts[0]
	}
	if len(parts) > 1 {
		name = parts[1]
	}
	if len(parts) > 2 {
		resource += "/" + parts[2]
	}
	switch req.Method {
	case http.MethodGet:
		verb = "get"
		if name == "" {
			verb = "list"
		}
		if req.URL.Query().Get("watch") == "true" {
			verb = "watch"
		}
	case http.MethodPost:
		verb = "create"
	case http.MethodPut:
		verb = "update"
	default:
		verb = strings.ToLower(req.Method)
	}
	return verb, resource, name
}

func (a *apiCounter) snapshot() requestCounts {
	a.mu.Lock()
	defer a.mu.Unlock()
	c := make(requestCounts, len(a.counts))
	for k, v := range a.counts {
		c[k] = v
	}
	return c
}

func (a *apiCounter) lastStatusWrite() time.Time {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.lastStatus
}

// settle waits until no status was written for quiet (at most timeout).
func (a *apiCounter) settle(quiet, timeout time.Duration) {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if time.Since(a.lastStatusWrite()) >= quiet {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// reportPatchTimes reports the p50 and p99 round trip of the status writes since the first
// from-th one.
func (a *apiCounter) reportPatchTimes(b *testing.B, from int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	ds := a.patchTimes[from:]
	if len(ds) == 0 {
		return
	}
	b.ReportMetric(quantileDuration(ds, 0.5).Seconds()*1000, "p50-status-write-ms")
	b.ReportMetric(quantileDuration(ds, 0.99).Seconds()*1000, "p99-status-write-ms")
}

func (a *apiCounter) statusWritesSoFar() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.patchTimes)
}

// handover is the time from the first release of the lease after since to the next take.
func (a *apiCounter) handover(lease string, since time.Time) time.Duration {
	a.mu.Lock()
	defer a.mu.Unlock()
	var released time.Time
	for _, w := range a.leases {
		switch {
		case w.name != lease || w.at.Before(since):
		case !w.taken && released.IsZero():
			released = w.at
		case w.taken && !released.IsZero():
			return w.at.Sub(released)
		}
	}
	return -1
}

// handovers is every release-to-take time of the lease.
func (a *apiCounter) handovers(lease string) []time.Duration {
	a.mu.Lock()
	defer a.mu.Unlock()
	var out []time.Duration
	var released time.Time
	for _, w := range a.leases {
		switch {
		case w.name != lease:
		case !w.taken:
			released = w.at
		case !released.IsZero():
			out = append(out, w.at.Sub(released))
			released = time.Time{}
		}
	}
	return out
}

func (c requestCounts) minus(o requestCounts) requestCounts {
	d := requestCounts{}
	for k, v := range c {
		if v-o[k] != 0 {
			d[k] = v - o[k]
		}
	}
	return d
}

func (c requestCounts) total() int {
	t := 0
	for k, v := range c {
		if !strings.HasPrefix(k, "conflicted ") {
			t += v
		}
	}
	return t
}

func (c requestCounts) statusWrites() int {
	return c["patch perfexperiments/status"] + c["update perfexperiments/status"]
}

func (c requestCounts) String() string {
	keys := make([]string, 0, len(c))
	for k := range c {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s=%d", k, c[k])
	}
	return fmt.Sprintf("%d requests (%s)", c.total(), strings.Join(parts, ", "))
}

// probe samples the process's heap and RSS while a benchmark runs and keeps the peaks.
type probe struct {
	done           chan struct{}
	wg             sync.WaitGroup
	mu             sync.Mutex
	heapMiB, rssMB float64
}

func startProbe() *probe {
	// What an earlier benchmark of the process freed is returned to the OS first, so that the
	// peak RSS is this benchmark's own (the runtime returns freed memory only lazily).
	debug.FreeOSMemory()
	p := &probe{done: make(chan struct{})}
	p.wg.Go(func() {
		t := time.NewTicker(250 * time.Millisecond)
		defer t.Stop()
		for {
			p.sample()
			select {
			case <-p.done:
				return
			case <-t.C:
			}
		}
	})
	return p
}

func (p *probe) sample() {
	var m goruntime.MemStats
	goruntime.ReadMemStats(&m)
	rss := vmRSSMiB()
	p.mu.Lock()
	defer p.mu.Unlock()
	p.heapMiB = math.Max(p.heapMiB, float64(m.HeapInuse)/(1<<20))
	p.rssMB = math.Max(p.rssMB, rss)
}

func (p *probe) stop() {
	close(p.done)
	p.wg.Wait()
}

func (p *probe) report(b *testing.B) {
	p.mu.Lock()
	defer p.mu.Unlock()
	b.ReportMetric(p.heapMiB, "peak-heap-MiB")
	b.ReportMetric(p.rssMB, "peak-rss-MiB")
}

// vmRSSMiB is the process's resident set size from /proc/self/status, 0 where there is none.
func vmRSSMiB() float64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for line := range strings.Lines(string(data)) {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 64)
			if err != nil {
				return 0
			}
			return kb / 1024
		}
	}
	return 0
}

// nativeHistogram is the perfexperiment controller's reconcile-time histogram (a Prometheus
// native histogram) as bucket index -> count at one schema.
type nativeHistogram struct {
	schema int32
	zero   uint64
	counts map[int]uint64
}

// reconcileHistogram reads controller_runtime_reconcile_time_seconds{controller="perfexperiment"}
// from controller-runtime's registry. It is shared by every manager of the process, so a
// benchmark measures the difference between two reads.
func reconcileHistogram(b *testing.B) nativeHistogram {
	b.Helper()
	families, err := crmetrics.Registry.Gather()
	if err != nil {
		b.Fatal(err)
	}
	h := nativeHistogram{counts: map[int]uint64{}}
	for _, f := range families {
		if f.GetName() != "controller_runtime_reconcile_time_seconds" {
			continue
		}
		for _, m := range f.GetMetric() {
			if !hasLabel(m, "controller", "perfexperiment") {
				continue
			}
			nh := m.GetHistogram()
			h.schema = nh.GetSchema()
			h.zero = nh.GetZeroCount()
			idx, count := 0, int64(0)
			deltas := nh.GetPositiveDelta()
			d := 0
			for _, span := range nh.GetPositiveSpan() {
				idx += int(span.GetOffset())
				for range span.GetLength() {
					count += deltas[d]
					d++
					h.counts[idx] = uint64(count)
					idx++
				}
			}
		}
	}
	return h
}

func hasLabel(m *dto.Metric, name, value string) bool {
	for _, l := range m.GetLabel() {
		if l.GetName() == name && l.GetValue() == value {
			return true
		}
	}
	return false
}

// coarsen returns h at a schema no finer than schema: each bucket of a finer schema lies in
// exactly one bucket of a coarser one.
func (h nativeHistogram) coarsen(schema int32) nativeHistogram {
	if schema >= h.schema {
		return h
	}
	shift := h.schema - schema
	out := nativeHistogram{schema: schema, zero: h.zero, counts: map[int]uint64{}}
	for i, c := range h.counts {
		out.counts[((i-1)>>shift)+1] += c
	}
	return out
}

// reportReconcile reports the p50 and p99 of the reconciles since before, as the upper bound
// of their bucket (within 10 % at the histogram's finest schema).
func reportReconcile(b *testing.B, before nativeHistogram) {
	b.Helper()
	after := reconcileHistogram(b)
	schema := min(before.schema, after.schema)
	before, after = before.coarsen(schema), after.coarsen(schema)
	diff := map[int]uint64{}
	var total uint64
	for i, c := range after.counts {
		diff[i] = c - before.counts[i]
		total += diff[i]
	}
	zero := after.zero - before.zero
	total += zero
	if total == 0 {
		return
	}
	idx := make([]int, 0, len(diff))
	for i := range diff {
		idx = append(idx, i)
	}
	slices.Sort(idx)
	quantile := func(q float64) float64 {
		rank := uint64(math.Ceil(q * float64(total)))
		seen := zero
		for _, i := range idx {
			seen += diff[i]
			if seen >= rank {
				return math.Pow(2, float64(i)*math.Pow(2, -float64(schema)))
			}
		}
		return math.NaN()
	}
	b.ReportMetric(float64(total), "reconciles")
	b.ReportMetric(quantile(0.5)*1000, "p50-reconcile-ms")
	b.ReportMetric(quantile(0.99)*1000, "p99-reconcile-ms")
}

func maxDuration(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return -1
	}
	return slices.Max(ds)
}

func quantileDuration(ds []time.Duration, q float64) time.Duration {
	if len(ds) == 0 {
		return -1
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[int(math.Ceil(q*float64(len(s))))-1]
}
