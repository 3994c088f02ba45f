// Package promtest starts a real Prometheus for tests, writes crafted series to it through the
// remote-write protocol, and runs real k6 against it. The binary is Debian's 2.42 by default, or
// the one $PROMETHEUS names (a Prometheus 3 built by hack/prometheus3.sh: `make
// test-prometheus3`); the flags follow its version. Tests that need it skip when no prometheus
// binary is installed.
//
// One file of about 500 lines on purpose: starting the server, writing series and running k6
// share its process and port handling, and tests read it as one harness.
package promtest

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	prompb "buf.build/gen/go/prometheus/prometheus/protocolbuffers/go"
	"github.com/klauspost/compress/snappy"
	"github.com/prometheus/client_golang/api"
	promv1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"google.golang.org/protobuf/proto"
)

// Server is a running Prometheus with remote-write receiving and native histograms.
type Server struct {
	// URL is the base URL of the HTTP API.
	URL string
	// WriteURL is the remote-write endpoint.
	WriteURL string
	// Pid is the server's process, for benchmarks that count its CPU time.
	Pid int
	// Version is the server's release, for tests that state a version's own behaviour.
	Version Version
	// LogFile holds what the server logged (warnings and errors only).
	LogFile string
	// client carries the credentials the server's web config asks for.
	client *http.Client
}

// Version is a Prometheus release.
type Version struct {
	Major, Minor, Patch int
}

// AtLeast reports whether v is major.minor or later.
func (v Version) AtLeast(major, minor int) bool {
	return v.Major > major || v.Major == major && v.Minor >= minor
}

func (v Version) String() string { return fmt.Sprintf("%d.%d.%d", v.Major, v.Minor, v.Patch) }

// versionLine matches the first line of `prometheus --version`: "prometheus, version 2.42.0+ds
// (branch: ...)" from Debian, "prometheus, version 3.16.0 (branch: ...)" from a release build or
// hack/prometheus3.sh.
var versionLine = regexp.MustCompile(`^prometheus, version v?(\d+)\.(\d+)\.(\d+)`)

// ParseVersion reads the release from the output of `prometheus --version`.
func ParseVersion(out string) (Version, error) {
	m := versionLine.FindStringSubmatch(strings.TrimSpace(out))
	if m == nil {
		first, _, _ := strings.Cut(out, "\n")
		return Version{}, fmt.Errorf("no release in %q (a binary built without Prometheus' -X version flags says none: build it with hack/prometheus3.sh)", first)
	}
	var n [3]int
	for i := range n {
		n[i], _ = strconv.Atoi(m[i+1])
	}
	return Version{Major: n[0], Minor: n[1], Patch: n[2]}, nil
}

// BinaryVersion runs `bin --version`.
func BinaryVersion(bin string) (Version, error) {
	out, err := exec.Command(bin, "--version").CombinedOutput()
	if err != nil {
		return Version{}, fmt.Errorf("%s --version: %w: %s", bin, err, out)
	}
	return ParseVersion(string(out))
}

// Flags are the command-line flags that make a Prometheus of version v a remote-write receiver
// that stores native histograms. The receiver has had its own flag since 2.33 (3.0 removed the
// older feature flag). Native histograms needed --enable-feature=native-histograms from 2.40
// until 3.9, which made them stable and the feature flag a no-op that logs a warning; histograms
// arriving by remote write are stored without it (only scraping them needs
// scrape_native_histograms, and the tests scrape nothing).
func Flags(v Version) []string {
	flags := []string{"--web.enable-remote-write-receiver"}
	if !v.AtLeast(3, 9) {
		flags = append(flags, "--enable-feature=native-histograms")
	}
	return flags
}

// Binary finds the prometheus binary: $PROMETHEUS, else the one on PATH.
func Binary() (string, error) {
	if p := os.Getenv("PROMETHEUS"); p != "" {
		return p, nil
	}
	return exec.LookPath("prometheus")
}

// Start starts Prometheus on a free loopback port with its data in a temporary directory and
// stops it when the test ends. Each test gets its own server: the TSDB accepts samples only in
// time order within an hour of the newest, so tests that write history must not share one.
func Start(t testing.TB) *Server {
	t.Helper()
	return StartWith(t, Options{})
}

// Options start a Prometheus that is more than an open one on loopback.
type Options struct {
	// WebConfig is the content of --web.config.file: basic_auth_users and tls_server_config,
	// for a server that refuses unauthenticated requests. Files it names must exist.
	WebConfig string
	// TLS says the web config serves HTTPS: the URLs are https://.
	TLS bool
	// Client is what the readiness probe and Write use, with the credentials the web config
	// asks for; http.DefaultClient when nil.
	Client *http.Client
}

// StartWith is Start with options.
func StartWith(t testing.TB, opts Options) *Server {
	t.Helper()
	bin, err := Binary()
	if err != nil {
		t.Skipf("no prometheus binary (install the Debian package or set $PROMETHEUS): %v", err)
	}
	version, err := BinaryVersion(bin)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	cfg := filepath.Join(dir, "prometheus.yml")
	// No scrape jobs: every series the tests need arrives through remote write, with the
	// timestamps the test chooses.
	if err := os.WriteFile(cfg, []byte("global:\n  scrape_interval: 15s\nscrape_configs: []\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	addr := freeAddr(t)
	args := append([]string{
		"--config.file=" + cfg,
		"--storage.tsdb.path=" + filepath.Join(dir, "data"),
		"--web.listen-address=" + addr,
		"--log.level=warn",
	}, Flags(version)...)
	if opts.WebConfig != "" {
		web := filepath.Join(dir, "web.yml")
		if err := os.WriteFile(web, []byte(opts.WebConfig), 0o600); err != nil {
			t.Fatal(err)
		}
		args = append(args, "--web.config.file="+web)
	}
	scheme, hc := "http", opts.Client
	if opts.TLS {
		scheme = "https"
	}
	if hc == nil {
		hc = http.DefaultClient
	}
	cmd := exec.Command(bin, args...)
	logf, err := os.Create(filepath.Join(dir, "prometheus.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting prometheus: %v", err)
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
	})
	s := &Server{URL: scheme + "://" + addr, WriteURL: scheme + "://" + addr + "/api/v1/write", Pid: cmd.Process.Pid, Version: version, LogFile: logf.Name(), client: hc}
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := hc.Get(s.URL + "/-/ready")
		if err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return s
			}
		}
		select {
		case <-done:
			log, _ := os.ReadFile(logf.Name())
			t.Fatalf("prometheus exited: %s", log)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("prometheus did not become ready at %s", s.URL)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func freeAddr(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	_ = l.Close()
	return addr
}

// API returns a client_golang API client for the server.
func (s *Server) API(t testing.TB) promv1.API {
	t.Helper()
	c, err := api.NewClient(api.Config{Address: s.URL, Client: s.client})
	if err != nil {
		t.Fatal(err)
	}
	return promv1.NewAPI(c)
}

// Float is one float sample.
type Float struct {
	T time.Time
	V float64
}

// StaleNaN is Prometheus' staleness marker: a scrape writes it when a series disappears.
var StaleNaN = math.Float64frombits(0x7ff0000000000002)

// HistogramSample is one native-histogram sample.
type HistogramSample struct {
	T time.Time
	H *prompb.Histogram
}

// Series is a crafted series: labels (including __name__) and its samples in time order.
type Series struct {
	Labels     map[string]string
	Floats     []Float
	Histograms []HistogramSample
}

// Write sends series through remote write, in batches of at most batch samples, in time order
// across all series (Prometheus refuses samples older than an hour before the newest one).
func (s *Server) Write(t testing.TB, series []Series) {
	t.Helper()
	type item struct {
		t  int64
		ts *prompb.TimeSeries
	}
	var items []item
	for _, sr := range series {
		labels := make([]*prompb.Label, 0, len(sr.Labels))
		for k, v := range sr.Labels {
			labels = append(labels, &prompb.Label{Name: k, Value: v})
		}
		sort.Slice(labels, func(i, j int) bool { return labels[i].Name < labels[j].Name })
		for _, f := range sr.Floats {
			items = append(items, item{f.T.UnixMilli(), &prompb.TimeSeries{Labels: labels, Samples: []*prompb.Sample{{Value: f.V, Timestamp: f.T.UnixMilli()}}}})
		}
		for _, h := range sr.Histograms {
			hp := proto.Clone(h.H).(*prompb.Histogram)
			hp.Timestamp = h.T.UnixMilli()
			items = append(items, item{h.T.UnixMilli(), &prompb.TimeSeries{Labels: labels, Histograms: []*prompb.Histogram{hp}}})
		}
	}
	sort.SliceStable(items, func(i, j int) bool { return items[i].t < items[j].t })
	const batch = 5000
	for i := 0; i < len(items); i += batch {
		j := min(i+batch, len(items))
		req := &prompb.WriteRequest{}
		for _, it := range items[i:j] {
			req.Timeseries = append(req.Timeseries, it.ts)
		}
		s.post(t, req)
	}
}

func (s *Server) post(t testing.TB, req *prompb.WriteRequest) {
	t.Helper()
	b, err := proto.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	hreq, err := http.NewRequestWithContext(context.Background(), http.MethodPost, s.WriteURL, bytes.NewReader(snappy.Encode(nil, b)))
	if err != nil {
		t.Fatal(err)
	}
	hreq.Header.Set("Content-Encoding", "snappy")
	hreq.Header.Set("Content-Type", "application/x-protobuf")
	hreq.Header.Set("X-Prometheus-Remote-Write-Version", "0.1.0")
	resp, err := s.client.Do(hreq)
	if err != nil {
		t.Fatalf("remote write: %v", err)
	}
	body, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		t.Fatalf("remote write refused (%s): %s", resp.Status, body)
	}
}

// NativeHistogram builds cumulative native histograms exactly as k6's remote-write output does:
// a client_golang histogram with a bucket factor of 1.1 (schema 3), snapshotted after each
// batch of observations.
type NativeHistogram struct {
	h prometheus.Histogram
}

// NewNativeHistogram returns an empty histogram with k6's settings.
func NewNativeHistogram() *NativeHistogram {
	return &NativeHistogram{h: prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:                        "crafted",
		NativeHistogramBucketFactor: 1.1,
	})}
}

// Observe adds observations, in seconds.
func (n *NativeHistogram) Observe(vs ...float64) {
	for _, v := range vs {
		n.h.Observe(v)
	}
}

// Snapshot is the histogram's current cumulative state in remote-write form.
func (n *NativeHistogram) Snapshot() *prompb.Histogram {
	m := &dto.Metric{}
	if err := n.h.Write(m); err != nil {
		panic(err)
	}
	hm := m.GetHistogram()
	spans := func(s []*dto.BucketSpan) []*prompb.BucketSpan {
		out := make([]*prompb.BucketSpan, len(s))
		for i := range s {
			out[i] = &prompb.BucketSpan{Offset: s[i].GetOffset(), Length: s[i].GetLength()}
		}
		return out
	}
	return &prompb.Histogram{
		Count:          &prompb.Histogram_CountInt{CountInt: hm.GetSampleCount()},
		Sum:            hm.GetSampleSum(),
		Schema:         hm.GetSchema(),
		ZeroThreshold:  hm.GetZeroThreshold(),
		ZeroCount:      &prompb.Histogram_ZeroCountInt{ZeroCountInt: hm.GetZeroCount()},
		NegativeSpans:  spans(hm.GetNegativeSpan()),
		NegativeDeltas: hm.GetNegativeDelta(),
		PositiveSpans:  spans(hm.GetPositiveSpan()),
		PositiveDeltas: hm.GetPositiveDelta(),
	}
}

// String renders a server for logs.
func (s *Server) String() string { return fmt.Sprintf("prometheus at %s", s.URL) }

// K6Series crafts one k6 series pair the way k6's remote-write output writes it: the request
// counter k6_http_reqs_total and the latency histogram k6_http_req_duration_seconds, both
// cumulative, one sample per flush that had requests, stamped with the time of the flush's last
// request. It remembers every observation, so tests can compute the truth.
type K6Series struct {
	Labels       map[string]string
	Observations []Observation
	n            float64
	hist         *NativeHistogram
	floats       []Float
	hists        []HistogramSample
	staleAt      time.Time
}

// Observation is one request's latency (seconds) and the time it was flushed.
type Observation struct {
	T time.Time
	V float64
}

// NewK6Series starts a series pair with the given labels (without __name__).
func NewK6Series(labels map[string]string) *K6Series {
	return &K6Series{Labels: labels, hist: NewNativeHistogram()}
}

// K6Labels are the labels k6 puts on a request's series.
func K6Labels(testID, scenario, name, instance string, ok bool) map[string]string {
	status, expected := "200", "true"
	if !ok {
		status, expected = "500", "false"
	}
	return map[string]string{"testid": testID, "scenario": scenario, "name": name, "instance_id": instance,
		"method": "GET", "status": status, "expected_response": expected}
}

// Flush records latencies (seconds) of requests whose last one happened at t.
func (s *K6Series) Flush(t time.Time, latencies ...float64) {
	s.n += float64(len(latencies))
	s.hist.Observe(latencies...)
	s.floats = append(s.floats, Float{T: t, V: s.n})
	s.hists = append(s.hists, HistogramSample{T: t, H: s.hist.Snapshot()})
	for _, v := range latencies {
		s.Observations = append(s.Observations, Observation{t, v})
	}
}

// Restart is a runner restarting: its counters begin again at zero.
func (s *K6Series) Restart() {
	s.n = 0
	s.hist = NewNativeHistogram()
}

// Stale ends both series with a staleness marker at t, as k6 does at the end of a run with
// K6_PROMETHEUS_RW_STALE_MARKERS=true.
func (s *K6Series) Stale(t time.Time) {
	s.floats = append(s.floats, Float{T: t, V: StaleNaN})
	s.staleAt = t
}

// Series returns the two series to write.
func (s *K6Series) Series() []Series {
	reqs := map[string]string{"__name__": "k6_http_reqs_total"}
	dur := map[string]string{"__name__": "k6_http_req_duration_seconds"}
	for k, v := range s.Labels {
		reqs[k], dur[k] = v, v
	}
	durSeries := Series{Labels: dur, Histograms: s.hists}
	if !s.staleAt.IsZero() {
		durSeries.Floats = []Float{{T: s.staleAt, V: StaleNaN}}
	}
	return []Series{{Labels: reqs, Floats: s.floats}, durSeries}
}
