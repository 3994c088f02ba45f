// Package service holds what the demo services share: configuration from the environment, the
// CPU work that makes latency depend on CPU limits, request metrics and an HTTP server with a
// graceful shutdown.
package service

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promauto"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// EnvInt reads a positive integer from the environment, or returns def when it is unset.
// A malformed value is a deployment mistake and stops the service.
func EnvInt(name string, def int) int {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		slog.Error("Invalid environment variable", "name", name, "value", v)
		os.Exit(2)
	}
	return n
}

// EnvString reads a string from the environment, or returns def when it is unset.
func EnvString(name, def string) string {
	if v, ok := os.LookupEnv(name); ok {
		return v
	}
	return def
}

// WorkRounds is the CPU work per request: WORK_ROUNDS (def when unset) made
// RELEASE_CPU_WORK_PERCENT percent larger (default 0). The second knob stands for a slower
// release of the service: the history demo switches it on from one run to the next, as a
// deployment pipeline would roll out a new image, and the run history must show a change
// point there.
func WorkRounds(def int) int {
	return EnvInt("WORK_ROUNDS", def) * (100 + EnvInt("RELEASE_CPU_WORK_PERCENT", 0)) / 100
}

// Work burns CPU for the given number of hashing rounds and returns a digest so the compiler
// cannot drop it. It stands for the business logic of a real service (rule evaluation,
// serialisation): time spent here stretches when the container's CPU quota is exhausted, which
// is exactly what a CPU-limit experiment must be able to see.
func Work(rounds int, seed string) [32]byte {
	sum := sha256.Sum256([]byte(seed))
	for range rounds {
		sum = sha256.Sum256(sum[:])
	}
	return sum
}

// Registry is the Prometheus registry of a demo service (no global state between services).
type Registry struct {
	*prometheus.Registry
	requests *prometheus.HistogramVec
	leak     *Leak
}

// Leak keeps a fixed number of bytes per request for good: a memory leak on purpose, so a soak
// of the demo can check perfexp's leak verdict against a known growth rate. Bytes per hour is
// requests per hour times the bytes per request.
type Leak struct {
	perRequest int
	mu         sync.Mutex
	arena      arena
	total      prometheus.Counter
}

// arena keeps bytes for good outside the Go heap, in anonymous memory mappings written byte by
// byte so that their pages are resident and count in the container's working set, as a native
// leak's would. Bytes kept in the heap would grow the working set at about twice their rate,
// since the garbage collector lets the heap reach twice its live size (GOGC=100).
type arena struct {
	chunk []byte // the current mapping, written up to used
	used  int
	kept  int
}

// arenaChunk is the size of one mapping.
const arenaChunk = 1 << 20

// keep writes n more bytes, mapping more memory as needed. It returns how many it kept: fewer
// only when the address space is exhausted.
func (a *arena) keep(n int) int {
	done := 0
	for done < n {
		if a.used == len(a.chunk) {
			c, err := syscall.Mmap(-1, 0, arenaChunk, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
			if err != nil {
				break
			}
			a.chunk, a.used = c, 0
		}
		k := min(n-done, len(a.chunk)-a.used)
		for i := range k {
			a.chunk[a.used+i] = byte(i) | 1
		}
		a.used += k
		done += k
	}
	a.kept += done
	return done
}

// NewLeak returns a leak of perRequest bytes per request (none when zero), counted in
// demo_leaked_bytes_total.
func NewLeak(reg prometheus.Registerer, perRequest int) *Leak {
	return &Leak{perRequest: perRequest, total: promauto.With(reg).NewCounter(prometheus.CounterOpts{
		Name: "demo_leaked_bytes_total",
		Help: "Bytes kept on purpose (LEAK_BYTES_PER_REQUEST), never freed.",
	})}
}

// Add leaks one request's bytes.
func (l *Leak) Add() {
	if l == nil || l.perRequest == 0 {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.total.Add(float64(l.arena.keep(l.perRequest)))
}

// Kept is how many bytes the leak holds.
func (l *Leak) Kept() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.arena.kept
}

// ballast is the fixed footprint HoldBallast keeps.
var ballast arena

// HoldBallast keeps MEMORY_BALLAST_BYTES (default 0) resident for the life of the process: a
// fixed footprint, as a real service has (a JVM's heap, caches), so that the working set of these
// few-MiB stand-ins does not swing by half with the garbage collector's timing and the pod's age.
// Memory then compares across runs the way it would for a real service.
func HoldBallast() int {
	return ballast.keep(EnvInt("MEMORY_BALLAST_BYTES", 0))
}

// NewRegistry creates the registry with Go runtime, process and HTTP request metrics. Every
// instrumented request leaks LEAK_BYTES_PER_REQUEST bytes (default 0, no leak).
func NewRegistry(service string) *Registry {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	requests := promauto.With(reg).NewHistogramVec(prometheus.HistogramOpts{
		Name:                        "demo_http_request_duration_seconds",
		Help:                        "Time to serve a request, by route and status code.",
		ConstLabels:                 prometheus.Labels{"service": service},
		Buckets:                     prometheus.DefBuckets,
		NativeHistogramBucketFactor: 1.1,
	}, []string{"route", "code"})
	return &Registry{Registry: reg, requests: requests, leak: NewLeak(reg, EnvInt("LEAK_BYTES_PER_REQUEST", 0))}
}

type statusRecorder struct {
	http.ResponseWriter
	code int
}

func (r *statusRecorder) WriteHeader(code int) {
	r.code = code
	r.ResponseWriter.WriteHeader(code)
}

// Instrument wraps a handler so its latency is recorded under route.
func (r *Registry) Instrument(route string, h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, req *http.Request) {
		start := time.Now()
		rec := &statusRecorder{ResponseWriter: w, code: http.StatusOK}
		h(rec, req)
		r.leak.Add()
		r.requests.WithLabelValues(route, strconv.Itoa(rec.code)).Observe(time.Since(start).Seconds())
	}
}

// WriteJSON writes v with the given status.
func WriteJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

// WriteError writes a JSON error body.
func WriteError(w http.ResponseWriter, code int, format string, args ...any) {
	WriteJSON(w, code, map[string]string{"error": fmt.Sprintf(format, args...)})
}

// Serve runs mux on addr with /healthz and /metrics added, until SIGTERM or SIGINT. On a
// signal it stops accepting connections and lets in-flight requests finish, so a rollout
// (what every perfexp variant causes) does not turn into failed requests.
func Serve(addr string, mux *http.ServeMux, reg *Registry) error {
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusOK)
	})
	mux.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{Registry: reg}))
	srv := &http.Server{Addr: addr, Handler: mux, ReadHeaderTimeout: 5 * time.Second}

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	errCh := make(chan error, 1)
	go func() { errCh <- srv.ListenAndServe() }()
	slog.Info("Started serving", "addr", addr)
	select {
	case err := <-errCh:
		return err
	case <-ctx.Done():
	}
	slog.Info("Received a stop signal, draining")
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
