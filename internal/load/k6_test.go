package load

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	promapi "github.com/prometheus/client_golang/api"
	promv1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"
	"k8s.io/utils/ptr"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/testenv"
)

// These tests run the real k6 (bin/k6, built by hack/k6.sh) with the entry script and command
// line perfexp gives its runner pods, on loopback only: against an httptest server, and writing
// to a real Prometheus the test starts.

// userScript is a script as users write it: it sets its own load shape and a threshold, and
// has setup and teardown. perfexp replaces the shape and keeps the rest.
const userScript = `import http from 'k6/http';
import { check } from 'k6';
export const options = { vus: 50, duration: '1h', thresholds: { checks: ['rate>0.99'] } };
export function setup() { return { base: __ENV.BASE_URL }; }
export default function (data) {
  const res = http.get(data.base + '/items', { tags: { name: 'list items' } });
  check(res, { 'status 200': (r) => r.status === 200 });
}
export function teardown() { console.log('teardown done'); }
`

func k6Binary(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(testenv.Root(), "bin", "k6")
	if _, err := os.Stat(bin); err == nil {
		return bin
	}
	t.Log("bin/k6 is missing; building it with hack/k6.sh (about 2 minutes)")
	out, err := exec.Command(filepath.Join(testenv.Root(), "hack", "k6.sh")).Output()
	if err != nil {
		t.Fatalf("these tests need the static k6 that hack/k6.sh builds into bin/k6; building it failed: %v", err)
	}
	return strings.TrimSpace(string(out))
}

// countingServer answers every request and counts them.
func countingServer(t *testing.T) (*httptest.Server, *atomic.Int64) {
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		n.Add(1)
		_, _ = w.Write([]byte(`[]`))
	}))
	t.Cleanup(srv.Close)
	return srv, &n
}

type k6Run struct {
	exitCode int
	log      []byte
	summary  Summary
}

// runPods runs a unit the way its n runner pods would, all at once: the ConfigMap's files laid
// out in a directory, K6Args as the command line, K6Env plus JOB_COMPLETION_INDEX as the env.
func runPods(t *testing.T, k6 string, u unit, testID, remoteWrite string, extraEnv ...string) []k6Run {
	t.Helper()
	dir := t.TempDir()
	entry, err := EntryScript(u, "script.js", true)
	if err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string]string{EntryKey: entry, "script.js": userScript} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// Another k6 on this machine may hold k6's default REST API port.
	args := K6Args(testID, u.name, []string{"--address", "127.0.0.1:0"}, filepath.Join(dir, EntryKey))
	env := os.Environ()
	for _, e := range K6Env(remoteWrite, nil) {
		if e.Name != "HOME" {
			env = append(env, e.Name+"="+e.Value)
		}
	}
	env = append(env, extraEnv...)
	runs := make([]k6Run, u.parallelism)
	var wg sync.WaitGroup
	for i := range runs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// What Kubernetes' $(VAR) expansion of container args does in the pod.
			podArgs := make([]string, len(args))
			for j, a := range args {
				podArgs[j] = strings.ReplaceAll(a, "$(JOB_COMPLETION_INDEX)", fmt.Sprint(i))
			}
			cmd := exec.Command(k6, podArgs...)
			cmd.Env = append(append([]string{}, env...), fmt.Sprintf("JOB_COMPLETION_INDEX=%d", i))
			var out bytes.Buffer
			// One pipe for both streams, as a container runtime gives the log.
			cmd.Stdout, cmd.Stderr = &out, &out
			err := cmd.Run()
			runs[i].exitCode = cmd.ProcessState.ExitCode()
			runs[i].log = out.Bytes()
			if err != nil && runs[i].exitCode <= 0 {
				t.Errorf("running k6: %v", err)
			}
		}()
	}
	wg.Wait()
	for i := range runs {
		data, err := ExtractSummary(runs[i].log)
		if err != nil {
			t.Fatalf("pod %d: %v; log:\n%s", i, err, runs[i].log)
		}
		if runs[i].summary, err = parseSummary(data); err != nil {
			t.Fatal(err)
		}
	}
	return runs
}

func count(s Summary, metric, stat string) int64 {
	v, _ := s.Metrics[metric].Value(stat)
	return int64(v)
}

func TestRealK6SegmentsMakeTheDeclaredLoad(t *testing.T) {
	k6 := k6Binary(t)
	srv, requests := countingServer(t)
	base := "BASE_URL=" + srv.URL
	// Nothing listens there: the samples are dropped, which k6 only logs.
	noPrometheus := "http://127.0.0.1:1/api/v1/write"

	t.Run("an arrival rate split over two pods makes the declared iterations", func(t *testing.T) {
		sc := &perfexpv1alpha1.Scenario{Name: "list", ArrivalRate: &perfexpv1alpha1.ArrivalRate{
			Rate: 40, Duration: dur(3 * time.Second), PreAllocatedVUs: 10,
		}}
		whole := unit{name: "list", sc: sc, parallelism: 1, executor: Executor(sc)}
		split := whole
		split.parallelism = 2

		before := requests.Load()
		single := runPods(t, k6, whole, "whole", noPrometheus, base)
		afterSingle := requests.Load()
		pods := runPods(t, k6, split, "split", noPrometheus, base)

		// The declared load is the iterations k6 starts; on a busy machine some find no free VU
		// and k6 counts them as dropped instead.
		declared := func(s Summary) int64 {
			return count(s, "iterations", "count") + count(s, "dropped_iterations", "count")
		}
		wholeIterations := declared(single[0].summary)
		// k6 starts an iteration at the very start and one at the very end of the window.
		if want := int64(40 * 3); wholeIterations < want || wholeIterations > want+1 {
			t.Fatalf("one pod made %d iterations; declared %d", wholeIterations, want)
		}
		var sum, made int64
		for i, p := range pods {
			if p.exitCode != 0 {
				t.Fatalf("pod %d exited with %d:\n%s", i, p.exitCode, p.log)
			}
			n := declared(p.summary)
			t.Logf("segment %d started %d iterations (%d dropped)", i, n, count(p.summary, "dropped_iterations", "count"))
			if n < wholeIterations/2-1 || n > wholeIterations/2+1 {
				t.Errorf("segment %d made %d iterations; an even share is %d", i, n, wholeIterations/2)
			}
			sum += n
			made += count(p.summary, "iterations", "count")
		}
		// Together they make the declared load, give or take the one iteration due at the very
		// end of the window, which k6 starts or not depending on timing (as with one pod).
		if want := int64(40 * 3); sum < want || sum > want+1 {
			t.Fatalf("the two segments made %d iterations together; declared %d (one pod made %d)", sum, want, wholeIterations)
		}
		if served := requests.Load() - afterSingle; served != made {
			t.Fatalf("the server saw %d requests from the split run; the summaries count %d", served, made)
		}
		if served, made := afterSingle-before, count(single[0].summary, "iterations", "count"); served != made {
			t.Fatalf("the server saw %d requests from the single run; its summary counts %d", served, made)
		}
	})

	t.Run("VUs split over three pods add up and the script's own shape is replaced", func(t *testing.T) {
		sc := &perfexpv1alpha1.Scenario{Name: "browse", VUs: ptr.To[int32](7), Duration: ptr.To(dur(2 * time.Second))}
		u := unit{name: "browse", sc: sc, parallelism: 3, executor: Executor(sc)}
		pods := runPods(t, k6, u, "vus", noPrometheus, base)
		var vus int64
		for i, p := range pods {
			if p.exitCode != 0 {
				t.Fatalf("pod %d exited with %d:\n%s", i, p.exitCode, p.log)
			}
			if !bytes.Contains(p.log, []byte("teardown done")) {
				t.Errorf("pod %d did not run the script's teardown", i)
			}
			vus += count(p.summary, "vus_max", "value")
		}
		// The script asks for 50 VUs for an hour; the experiment's 7 VUs for 2s win.
		if vus != 7 {
			t.Fatalf("the pods ran %d VUs together, want 7", vus)
		}
	})

	t.Run("a crossed threshold exits 99", func(t *testing.T) {
		sc := &perfexpv1alpha1.Scenario{Name: "broken", VUs: ptr.To[int32](1), Duration: ptr.To(dur(time.Second))}
		u := unit{name: "broken", sc: sc, parallelism: 1, executor: Executor(sc)}
		pods := runPods(t, k6, u, "thresholds", noPrometheus, "BASE_URL=http://127.0.0.1:1")
		if pods[0].exitCode != exitThresholds {
			t.Fatalf("k6 exited with %d, want %d", pods[0].exitCode, exitThresholds)
		}
		if ok, _, _ := exitMeaning(int32(pods[0].exitCode)); !ok {
			t.Fatal("exit code 99 must not fail the load")
		}
	})
}

// startPrometheus starts the Debian prometheus binary on a free loopback port with remote write
// and native histograms on, and returns its URL.
func startPrometheus(t *testing.T) string {
	t.Helper()
	bin, err := exec.LookPath("prometheus")
	if err != nil {
		t.Fatalf("this test needs the prometheus binary (Debian package prometheus): %v", err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	_ = l.Close()
	dir := t.TempDir()
	cfg := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(cfg, []byte("global:\n  scrape_interval: 1m\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "--config.file="+cfg, "--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+addr, "--web.enable-remote-write-receiver", "--enable-feature=native-histograms")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	url := "http://" + addr
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get(url + "/-/ready")
		if err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return url
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("prometheus did not get ready: %v\n%s", err, out.String())
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func TestRealK6RemoteWritesTaggedSamples(t *testing.T) {
	k6 := k6Binary(t)
	prom := startPrometheus(t)
	srv, _ := countingServer(t)
	sc := &perfexpv1alpha1.Scenario{Name: "checkout", ArrivalRate: &perfexpv1alpha1.ArrivalRate{Rate: 20, Duration: dur(2 * time.Second), PreAllocatedVUs: 2}}
	u := unit{name: "checkout", sc: sc, parallelism: 2, executor: Executor(sc)}
	exp := &perfexpv1alpha1.PerfExperiment{}
	exp.Name = "remote-write"
	exp.Spec.Analysis = &perfexpv1alpha1.Analysis{PrometheusURL: prom + "/"}
	testID := "remote-write-0a1b2c3d"
	pods := runPods(t, k6, u, testID, RemoteWriteURL(exp, "http://unused"), "BASE_URL="+srv.URL)
	var iterations int64
	for _, p := range pods {
		iterations += count(p.summary, "iterations", "count")
	}

	client, err := promapi.NewClient(promapi.Config{Address: prom})
	if err != nil {
		t.Fatal(err)
	}
	api := promv1.NewAPI(client)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// The counter is cumulative per pod from the run's start, so its last value per series
	// summed over the pods is exact.
	query := fmt.Sprintf(`sum(max_over_time(k6_iterations_total{testid=%q, scenario="checkout"}[10m]))`, testID)
	var got float64
	for {
		v, _, err := api.Query(ctx, query, time.Now())
		if err == nil {
			if vec, ok := v.(model.Vector); ok && len(vec) == 1 {
				got = float64(vec[0].Value)
				if int64(got) == iterations {
					break
				}
			}
		}
		select {
		case <-ctx.Done():
			t.Fatalf("Prometheus has %v iterations for testid %s; the k6 summaries count %d (last error %v)", got, testID, iterations, err)
		case <-time.After(500 * time.Millisecond):
		}
	}
	// Latencies arrive as a native histogram.
	v, _, err := api.Query(ctx, fmt.Sprintf(`histogram_count(sum(k6_http_req_duration_seconds{testid=%q, name="list items"}))`, testID), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if vec, ok := v.(model.Vector); !ok || len(vec) != 1 || int64(vec[0].Value) != iterations {
		t.Fatalf("native histogram of http_req_duration: %v; want a count of %d", v, iterations)
	}
}

// Every script of the scenario library loads in k6 behind perfexp's entry script, and k6 sees
// the experiment's shape instead of the script's.
func TestRealK6LoadsTheLibraryScripts(t *testing.T) {
	k6 := k6Binary(t)
	scripts, err := filepath.Glob(filepath.Join(testenv.Root(), "scenarios", "*", "*.js"))
	if err != nil || len(scripts) < 5 {
		t.Fatalf("found %d library scripts (%v)", len(scripts), err)
	}
	for _, script := range scripts {
		name := filepath.Base(filepath.Dir(script))
		t.Run(name, func(t *testing.T) {
			source, err := os.ReadFile(script)
			if err != nil {
				t.Fatal(err)
			}
			sc := &perfexpv1alpha1.Scenario{Name: name, VUs: ptr.To[int32](4), Duration: ptr.To(dur(time.Minute))}
			u := unit{name: name, sc: sc, parallelism: 2, executor: Executor(sc)}
			entry, err := EntryScript(u, "script.js", true)
			if err != nil {
				t.Fatal(err)
			}
			dir := t.TempDir()
			for file, data := range map[string]string{EntryKey: entry, "script.js": string(source)} {
				if err := os.WriteFile(filepath.Join(dir, file), []byte(data), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			cmd := exec.Command(k6, "inspect", "--execution-requirements", filepath.Join(dir, EntryKey))
			cmd.Env = append(os.Environ(), "JOB_COMPLETION_INDEX=1")
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("k6 inspect: %v\n%s", err, out)
			}
			// (k6 inspect leaves execution segments out; TestRealK6SegmentsMakeTheDeclaredLoad
			// shows a run takes them.)
			for _, want := range []string{`"` + name + `": {`, `"executor": "constant-vus"`, `"duration": "1m0s"`} {
				if !bytes.Contains(out, []byte(want)) {
					t.Errorf("k6 inspect lacks %s:\n%s", want, out)
				}
			}
		})
	}
}
