package promtest

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"testing"
)

// Root is the module's root directory.
func Root() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "..")
}

// K6Binary finds k6: $K6, else bin/k6 (built by hack/k6.sh).
func K6Binary(t testing.TB) string {
	t.Helper()
	if p := os.Getenv("K6"); p != "" {
		return p
	}
	p := filepath.Join(Root(), "bin", "k6")
	if _, err := os.Stat(p); err != nil {
		t.Skipf("no k6 binary at %s: run hack/k6.sh", p)
	}
	return p
}

// K6Run is one k6 process of a (possibly distributed) run.
type K6Run struct {
	// Script is the k6 script's source.
	Script string
	// TestID is the testid tag; Tags are more tags (e.g. a runner index).
	TestID string
	Tags   map[string]string
	// Segment and Sequence split the load between runners (k6 execution segments).
	Segment, Sequence string
	// Env is passed to the script.
	Env map[string]string
	// OutputEnv is set in k6's environment, e.g. K6_PROMETHEUS_RW_STALE_MARKERS=true.
	OutputEnv map[string]string
}

// RunK6 runs k6 with the experimental-prometheus-rw output writing native histograms to the
// server and returns the parsed --summary-export JSON.
func (s *Server) RunK6(t testing.TB, r K6Run) []byte {
	t.Helper()
	bin := K6Binary(t)
	dir := t.TempDir()
	script := filepath.Join(dir, "script.js")
	if err := os.WriteFile(script, []byte(r.Script), 0o644); err != nil {
		t.Fatal(err)
	}
	summary := filepath.Join(dir, "summary.json")
	args := []string{"run", "--quiet", "--no-usage-report", "--summary-export", summary,
		"--summary-trend-stats", "avg,min,max,p(50),p(75),p(90),p(95),p(99),count",
		"-o", "experimental-prometheus-rw", "--tag", "testid=" + r.TestID}
	keys := make([]string, 0, len(r.Tags))
	for k := range r.Tags {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		args = append(args, "--tag", k+"="+r.Tags[k])
	}
	if r.Segment != "" {
		args = append(args, "--execution-segment", r.Segment, "--execution-segment-sequence", r.Sequence)
	}
	envKeys := make([]string, 0, len(r.Env))
	for k := range r.Env {
		envKeys = append(envKeys, k)
	}
	sort.Strings(envKeys)
	for _, k := range envKeys {
		args = append(args, "-e", k+"="+r.Env[k])
	}
	args = append(args, script)
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(),
		"K6_PROMETHEUS_RW_SERVER_URL="+s.WriteURL,
		"K6_PROMETHEUS_RW_TREND_AS_NATIVE_HISTOGRAM=true",
		"K6_PROMETHEUS_RW_PUSH_INTERVAL=1s",
		"K6_NO_COLOR=true",
	)
	for k, v := range r.OutputEnv {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("k6 %s: %v\n%s", strings.Join(cmd.Args[1:], " "), err, out.String())
	}
	b, err := os.ReadFile(summary)
	if err != nil {
		t.Fatalf("reading the k6 summary: %v\n%s", err, out.String())
	}
	return b
}
