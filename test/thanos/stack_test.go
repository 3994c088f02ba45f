//go:build thanos_e2e

// Package thanos runs perfexp's analysis against a real distributed backend: two Thanos
// Receive replicas (replication factor 2) behind a Thanos Query that deduplicates on the
// replica label and a Thanos Query Frontend, as local processes. Opt-in: `make e2e-thanos`
// builds the binary (hack/thanos, its own Go module) and runs these tests with the build tag
// thanos_e2e, which keeps them out of `go test ./...` and `make test`.
package thanos

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// replicaLabel is the external label each Receive announces and Query deduplicates on.
const replicaLabel = "receive_replica"

// stack is a running Thanos: Receive replicas, Query over them, Query Frontend over Query.
type stack struct {
	// WriteURLs are the Receives' remote-write endpoints.
	WriteURLs []string
	// QueryURL is Thanos Query's HTTP API, FrontendURL the Query Frontend's.
	QueryURL, FrontendURL string
	// Pids are every Thanos process, for the CPU they spent.
	Pids     []int
	bin, dir string
}

// startFrontend starts one more Query Frontend over Query, with extra flags.
func (s *stack) startFrontend(t *testing.T, name string, flags ...string) string {
	t.Helper()
	addr := freeAddr(t)
	u := "http://" + addr
	s.Pids = append(s.Pids, run(t, s.bin, s.dir, name, u, append([]string{"query-frontend",
		"--http-address=" + addr, "--query-frontend.downstream-url=" + s.QueryURL}, flags...)...))
	return u
}

func thanosBinary(t *testing.T) string {
	t.Helper()
	bin := os.Getenv("THANOS")
	if bin == "" {
		t.Fatal("$THANOS names no binary: run `make e2e-thanos`, which builds it under bin/thanos/<version>/")
	}
	if _, err := os.Stat(bin); err != nil {
		t.Fatal(err)
	}
	return bin
}

// startStack starts two Receives sharing one hashring with replication factor 2 (every
// series is written to both before the write is acknowledged), Query over both with
// deduplication on replicaLabel, and Query Frontend over Query.
func startStack(t *testing.T) *stack {
	t.Helper()
	bin := thanosBinary(t)
	dir := t.TempDir()
	grpc := []string{freeAddr(t), freeAddr(t)}
	ring := fmt.Sprintf(`[{"hashring": "default", "endpoints": [%q, %q]}]`, grpc[0], grpc[1])
	ringFile := filepath.Join(dir, "hashring.json")
	if err := os.WriteFile(ringFile, []byte(ring), 0o644); err != nil {
		t.Fatal(err)
	}
	s := &stack{}
	for i := range grpc {
		httpAddr, rwAddr := freeAddr(t), freeAddr(t)
		pid := run(t, bin, dir, fmt.Sprintf("receive-%d", i), "http://"+httpAddr,
			"receive",
			"--tsdb.path="+filepath.Join(dir, fmt.Sprintf("receive-%d", i)),
			"--grpc-address="+grpc[i],
			"--http-address="+httpAddr,
			"--remote-write.address="+rwAddr,
			"--receive.capnproto-address="+freeAddr(t),
			"--receive.local-endpoint="+grpc[i],
			"--receive.hashrings-file="+ringFile,
			"--receive.replication-factor=2",
			fmt.Sprintf("--label=%s=%q", replicaLabel, strconv.Itoa(i)),
			"--tsdb.retention=1d",
		)
		s.Pids = append(s.Pids, pid)
		s.WriteURLs = append(s.WriteURLs, "http://"+rwAddr+"/api/v1/receive")
	}
	endpoints := "endpoints:\n"
	for _, g := range grpc {
		endpoints += fmt.Sprintf("  - address: %q\n", g)
	}
	queryHTTP := freeAddr(t)
	s.QueryURL = "http://" + queryHTTP
	s.Pids = append(s.Pids, run(t, bin, dir, "query", s.QueryURL,
		"query",
		"--http-address="+queryHTTP,
		"--grpc-address="+freeAddr(t),
		"--endpoint.sd-config="+endpoints,
		"--query.replica-label="+replicaLabel,
	))
	// The frontend keeps range queries where the analysis put them: by default it moves their
	// start and end to multiples of the step (for its cache), off the measured window's grid.
	s.bin, s.dir = bin, dir
	s.FrontendURL = s.startFrontend(t, "query-frontend", "--no-query-range.align-range-with-step")
	// Query lists its stores asynchronously: wait until both Receives are among them.
	waitFor(t, 30*time.Second, func() error {
		var stores struct {
			Data map[string][]struct {
				Name      string  `json:"name"`
				LastError *string `json:"lastError"`
			} `json:"data"`
		}
		if err := getJSON(s.QueryURL+"/api/v1/stores", &stores); err != nil {
			return err
		}
		healthy := 0
		for _, group := range stores.Data {
			for _, st := range group {
				if st.LastError == nil {
					healthy++
				}
			}
		}
		if healthy < len(grpc) {
			return fmt.Errorf("query lists %d healthy stores of %d: %+v", healthy, len(grpc), stores.Data)
		}
		return nil
	})
	return s
}

// run starts one Thanos component and waits for its /-/ready; it is stopped when the test ends.
func run(t *testing.T, bin, dir, name, httpURL string, args ...string) int {
	t.Helper()
	logf, err := os.Create(filepath.Join(dir, name+".log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, append(args, "--log.level=warn")...)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting thanos %s: %v", name, err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
		_ = logf.Close()
		if t.Failed() {
			b, _ := os.ReadFile(logf.Name())
			t.Logf("thanos %s log:\n%s", name, b)
		}
	})
	waitFor(t, 60*time.Second, func() error {
		select {
		case <-done:
			b, _ := os.ReadFile(logf.Name())
			t.Fatalf("thanos %s exited: %s", name, b)
		default:
		}
		resp, err := http.Get(httpURL + "/-/ready")
		if err != nil {
			return err
		}
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("thanos %s: %s", name, resp.Status)
		}
		return nil
	})
	return cmd.Process.Pid
}

func waitFor(t *testing.T, timeout time.Duration, check func() error) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		err := check()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("after %v: %v", timeout, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = l.Close() }()
	return l.Addr().String()
}

// teeWriter is the remote-write endpoint k6 writes to: each write goes to Prometheus and to
// one Receive (alternately, as a load balancer in front of the replicas would), and it is
// acknowledged only when both accepted it, so both backends hold the same run.
type teeWriter struct {
	URL              string
	writes, refusals atomic.Int64
}

func newTeeWriter(t *testing.T, promWrite string, receives []string) *teeWriter {
	t.Helper()
	tw := &teeWriter{}
	var next atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		tw.writes.Add(1)
		recv := receives[int(next.Add(1))%len(receives)]
		for _, target := range []string{promWrite, recv} {
			req, _ := http.NewRequestWithContext(r.Context(), http.MethodPost, target, bytes.NewReader(body))
			for _, h := range []string{"Content-Encoding", "Content-Type", "User-Agent", "X-Prometheus-Remote-Write-Version"} {
				req.Header.Set(h, r.Header.Get(h))
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				tw.refusals.Add(1)
				http.Error(w, err.Error(), http.StatusBadGateway)
				return
			}
			msg, _ := io.ReadAll(resp.Body)
			_ = resp.Body.Close()
			if resp.StatusCode/100 != 2 {
				tw.refusals.Add(1)
				t.Logf("%s refused a write: %s %s", target, resp.Status, msg)
				http.Error(w, string(msg), resp.StatusCode)
				return
			}
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(srv.Close)
	tw.URL = srv.URL
	return tw
}

// countingProxy passes every request to target and counts the API requests: the queries a
// client asked of that backend.
type countingProxy struct {
	URL     string
	queries atomic.Int64
	// Form is added to every request's form (dedup=false, to see the replicas).
	Form  url.Values
	mu    sync.Mutex
	asked []string
}

// Asked returns the requests seen since from: path and query.
func (p *countingProxy) Asked(from int) []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.asked[from:]...)
}

func newCountingProxy(t *testing.T, target string) *countingProxy {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	p := &countingProxy{}
	rp := &httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) { r.SetURL(u) }}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/api/v1/") {
			p.queries.Add(1)
			if err := r.ParseForm(); err == nil {
				enc := r.PostForm.Encode()
				r.Body = io.NopCloser(strings.NewReader(enc))
				r.ContentLength = int64(len(enc))
				p.mu.Lock()
				p.asked = append(p.asked, r.URL.Path+" "+r.Form.Get("query")+r.Form.Get("match[]"))

				p.mu.Unlock()
			}
		}
		if len(p.Form) > 0 {
			q := r.URL.Query()
			for k, vs := range p.Form {
				q[k] = vs
			}
			r.URL.RawQuery = q.Encode()
		}
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	p.URL = srv.URL
	return p
}

func getJSON(u string, v any) error {
	resp, err := http.Get(u)
	if err != nil {
		return err
	}
	defer func() { _ = resp.Body.Close() }()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s: %s", u, resp.Status, b)
	}
	return json.Unmarshal(b, v)
}

// cpuSeconds is the user and system CPU time a process has used (Linux, 100 ticks a second).
func cpuSeconds(t *testing.T, pid int) float64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		t.Fatal(err)
	}
	// The command name may hold spaces: the fields are counted after its closing parenthesis.
	fields := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+2:]))
	utime, _ := strconv.ParseFloat(fields[11], 64)
	stime, _ := strconv.ParseFloat(fields[12], 64)
	return (utime + stime) / 100
}
