package load

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
)

// unitRun is one runner pod's k6 run of runUnit: its exit code, log and the samples it wrote.
type unitRun struct {
	exitCode int
	log      []byte
	summary  Summary
	// samples are http_reqs samples by their scenario tag, and the test ids they carried.
	samples map[string]int64
	testIDs map[string]bool
}

// runUnit runs a unit the way its runner pods would, with files laid out as its script
// ConfigMap, and reads each pod's summary from its log the way the runner does. Samples go to a
// JSON output beside the remote write (to nowhere), as a stand-in for what Prometheus receives.
func runUnit(t *testing.T, k6 string, u unit, files map[string]string, testID string, env ...string) []unitRun {
	t.Helper()
	dir := t.TempDir()
	entry, err := EntryScript(u, "script.js", true)
	if err != nil {
		t.Fatal(err)
	}
	files[EntryKey] = entry
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	runs := make([]unitRun, u.parallelism)
	var wg sync.WaitGroup
	for i := range runs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out := filepath.Join(dir, fmt.Sprintf("samples-%d.json", i))
			args := K6Args(testID, u.name, []string{"--address", "127.0.0.1:0", "--out", "json=" + out}, filepath.Join(dir, EntryKey))
			for j, a := range args {
				args[j] = strings.ReplaceAll(a, "$(JOB_COMPLETION_INDEX)", fmt.Sprint(i))
			}
			cmd := exec.Command(k6, args...)
			cmd.Dir = dir
			cmd.Env = append(os.Environ(), "K6_PROMETHEUS_RW_SERVER_URL=http://127.0.0.1:1/api/v1/write", fmt.Sprintf("JOB_COMPLETION_INDEX=%d", i))
			cmd.Env = append(cmd.Env, env...)
			var log bytes.Buffer
			cmd.Stdout, cmd.Stderr = &log, &log
			_ = cmd.Run()
			runs[i].exitCode = cmd.ProcessState.ExitCode()
			runs[i].log = log.Bytes()
			runs[i].samples, runs[i].testIDs = readSamples(t, out)
		}()
	}
	wg.Wait()
	for i := range runs {
		data, err := ExtractSummary(runs[i].log)
		if err != nil {
			t.Fatalf("pod %d (exit %d): %v; log:\n%s", i, runs[i].exitCode, err, runs[i].log)
		}
		if runs[i].summary, err = parseSummary(data); err != nil {
			t.Fatal(err)
		}
	}
	return runs
}

// readSamples counts the http_reqs samples of k6's JSON output by scenario tag.
func readSamples(t *testing.T, path string) (map[string]int64, map[string]bool) {
	f, err := os.Open(path)
	if err != nil {
		t.Errorf("reading k6's JSON output: %v", err)
		return nil, nil
	}
	defer func() { _ = f.Close() }()
	counts, ids := map[string]int64{}, map[string]bool{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var p struct {
			Type   string `json:"type"`
			Metric string `json:"metric"`
			Data   struct {
				Value float64           `json:"value"`
				Tags  map[string]string `json:"tags"`
			} `json:"data"`
		}
		if json.Unmarshal(sc.Bytes(), &p) != nil || p.Type != "Point" || p.Metric != "http_reqs" {
			continue
		}
		counts[p.Data.Tags["scenario"]] += int64(p.Data.Value)
		ids[p.Data.Tags["testid"]] = true
	}
	return counts, ids
}

// pathServer answers every request and counts them by path.
func pathServer(t *testing.T) (*httptest.Server, func() map[string]int64) {
	var mu sync.Mutex
	n := map[string]int64{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		n[r.URL.Path]++
		mu.Unlock()
		_, _ = w.Write([]byte("ok"))
	}))
	t.Cleanup(srv.Close)
	return srv, func() map[string]int64 {
		mu.Lock()
		defer mu.Unlock()
		out := map[string]int64{}
		for k, v := range n {
			out[k] = v
		}
		return out
	}
}

// textSummaryStandIn is what the jslib k6-summary module's textSummary is to a script: a text
// rendering of the summary data without a trailing newline. Vendored jslib cannot be fetched
// here, so this stands in for it; it prints lines that are exactly "{" and a JSON document with
// "metrics", the shapes perfexp's old log reading mistook for its own summary.
const textSummaryStandIn = `export function textSummary(data) {
  const lines = ['', '  █ TOTAL RESULTS', ''];
  for (const [name, m] of Object.entries(data.metrics)) {
    lines.push('    ' + name + '...: ' + JSON.stringify(m.values));
  }
  lines.push('{');
  lines.push(JSON.stringify({ metrics: { iterations: { count: -1 } } }, null, 2));
  return lines.join('\n');
}
`

// A script's handleSummary that prints a text summary to stdout (and more to stderr, and console
// lines holding "{") no longer hides perfexp's summary: it is read in 10 of 10 runs, and counts
// exactly the requests the server saw. The old log reading found it in 1-2 of 6-8 runs.
func TestRealK6SummaryDoesNotDependOnTheScriptsOutput(t *testing.T) {
	k6 := k6Binary(t)
	srv, served := pathServer(t)
	script := `import http from 'k6/http';
import { textSummary } from './k6-summary.js';
export default function () {
  console.log('{');
  http.get(__ENV.BASE_URL + '/items');
}
export function handleSummary(data) {
  console.log('{');
  return { stdout: textSummary(data), stderr: '{\n' };
}
`
	sc := &perfexpv1alpha1.Scenario{Name: "summary", ArrivalRate: &perfexpv1alpha1.ArrivalRate{Rate: 10, Duration: dur(1e9), PreAllocatedVUs: 2}}
	u := unit{name: "summary", sc: sc, parallelism: 1, executor: Executor(sc)}
	for i := range 10 {
		before := served()["/items"]
		runs := runUnit(t, k6, u, map[string]string{"script.js": script, "k6-summary.js": textSummaryStandIn}, "summary", "BASE_URL="+srv.URL)
		got := count(runs[0].summary, "iterations", "count")
		if want := served()["/items"] - before; got != want || got <= 0 {
			t.Fatalf("run %d: perfexp's summary counts %d iterations; the server saw %d requests; log:\n%s", i, got, want, runs[0].log)
		}
		if !bytes.Contains(runs[0].log, []byte("█ TOTAL RESULTS")) {
			t.Fatalf("run %d: the script's own text summary is missing from the log:\n%s", i, runs[0].log)
		}
	}
}
