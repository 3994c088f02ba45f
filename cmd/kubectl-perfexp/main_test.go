package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/controller-runtime/pkg/client"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/report"
	"github.com/perfexp/perfexp/internal/testenv"
	"github.com/perfexp/perfexp/internal/testexp"
)

func run(t *testing.T, conn *connection, args ...string) (string, error) {
	t.Helper()
	return runWith(t, conn, testSettings(), args...)
}

// testSettings never opens a browser and refreshes watch quickly.
func testSettings() settings {
	return settings{
		open:          func(string) error { return fmt.Errorf("no browser in tests") },
		watchInterval: 20 * time.Millisecond,
		now:           time.Now,
		terminal:      func(io.Writer) bool { return false },
	}
}

// runWith runs the plugin connected to conn, as if its namespace were the -n flag's or else
// conn's.
func runWith(t *testing.T, conn *connection, set settings, args ...string) (string, error) {
	t.Helper()
	cmd := newRootCommandWith(func(f *kubeFlags) (*connection, error) {
		c := *conn
		if ns := f.namespaceFlag(); ns != "" {
			c.namespace = ns
		}
		return &c, nil
	}, set)
	var out bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&out)
	cmd.SetArgs(args)
	err := cmd.ExecuteContext(t.Context())
	return out.String(), err
}

func newExperiment(ns, name string) *perfexpv1alpha1.PerfExperiment {
	return testexp.New(ns, name)
}

// Story: a performance engineer reads the report of a finished experiment, looks at the queue
// and aborts a waiting experiment, all from kubectl.
func TestKubectlPerfexp(t *testing.T) {
	env := testenv.Start(t)
	ns := env.Namespace(t, "plugin")
	conn := &connection{client: env.Client, namespace: "default"}
	ctx := t.Context()

	done := newExperiment(ns, "done")
	if err := env.Client.Create(ctx, done); err != nil {
		t.Fatal(err)
	}
	done.Status.Phase, done.Status.Queue = perfexpv1alpha1.PhaseSucceeded, ns
	done.Status.ReportRef = &perfexpv1alpha1.LocalObjectReference{Name: "done-report"}
	if err := env.Client.Status().Update(ctx, done); err != nil {
		t.Fatal(err)
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "done-report"},
		Data: map[string]string{report.KeyMarkdown: "# Performance test report: done\n", report.KeyJSON: `{"experiment":"done"}`, report.KeyDashboard: `{"title":"x"}`,
			report.KeyHTML: "<!doctype html><title>done</title>\n"}}
	if err := env.Client.Create(ctx, cm); err != nil {
		t.Fatal(err)
	}
	for i, name := range []string{"running", "second", "third"} {
		e := newExperiment(ns, name)
		if err := env.Client.Create(ctx, e); err != nil {
			t.Fatal(err)
		}
		e.Status.Queue = ns
		e.Status.Phase = perfexpv1alpha1.PhaseQueued
		e.Status.QueuePosition = int32(i)
		if i == 0 {
			e.Status.Phase = perfexpv1alpha1.PhaseRunning
		}
		if err := env.Client.Status().Update(ctx, e); err != nil {
			t.Fatal(err)
		}
	}

	tests := []struct {
		name    string
		args    []string
		want    []string
		wantErr string
	}{
		{"the Markdown report", []string{"report", "done", "-n", ns}, []string{"# Performance test report: done"}, ""},
		{"the full results", []string{"report", "done", "-n", ns, "-o", "json"}, []string{`{"experiment":"done"}`}, ""},
		{"the dashboard", []string{"report", "done", "-n", ns, "-o", "dashboard"}, []string{`"title":"x"`}, ""},
		{"an unknown format", []string{"report", "done", "-n", ns, "-o", "pdf"}, nil, `unknown output "pdf"`},
		{"JUnit for CI, rendered from results.json", []string{"report", "done", "-n", ns, "-o", "junit"},
			[]string{`<?xml version="1.0" encoding="UTF-8"?>`, `<testsuites name="perfexp" tests="1" failures="0" skipped="0">`, `<testcase name="verdict" classname="perfexp.done"`}, ""},
		{"the plugin's version", []string{"version", "--client"}, []string{"Client Version: ", "API perfexp.dev/v1alpha1"}, ""},
		{"the operator's version, when there is none", []string{"version"}, []string{"Client Version: ", "Server Version: none (no Deployment labelled app.kubernetes.io/name=perfexp)"}, ""},
		{"no report yet", []string{"report", "second", "-n", ns}, nil, "has no report yet (phase Queued)"},
		{"no such experiment", []string{"report", "nope", "-n", ns}, nil, "not found"},
		{"no such experiment, as kubectl would say it", []string{"report", "nope", "-n", ns}, nil, `perfexperiment "nope" not found in namespace "` + ns + `"`},
		{"abort of no such experiment", []string{"abort", "nope", "-n", ns}, nil, `perfexperiment "nope" not found in namespace "` + ns + `"`},
		{"the queue in run order", []string{"queue", "-n", ns}, []string{"running", "Running", "second", "third"}, ""},
		{"the queue in custom columns", []string{"queue", "-n", ns, "-o", "custom-columns=NAME:.metadata.name,PHASE:.status.phase,NOPE:.status.nope"},
			[]string{"NAME", "PHASE", "NOPE", "running", "Running", "<none>", "second", "Queued"}, ""},
		{"a malformed custom column", []string{"queue", "-n", ns, "-o", "custom-columns=NAME"}, nil, `custom-columns column "NAME" is not HEADER:JSONPATH`},
		{"--watch follows tables only", []string{"queue", "-n", ns, "--watch", "-o", "json"}, nil, "--watch follows the table"},
		{"abort", []string{"abort", "third", "-n", ns}, []string{"perfexperiment " + ns + "/third aborting"}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, err := run(t, conn, tc.args...)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			last := -1
			for _, w := range tc.want {
				i := strings.Index(out, w)
				if i < 0 || i < last {
					t.Fatalf("output lacks %q (in order):\n%s", w, out)
				}
				last = i
			}
			if strings.Contains(out, "done ") && tc.args[0] == "queue" {
				t.Errorf("a finished experiment is listed in the queue:\n%s", out)
			}
		})
	}
	t.Run("abort --dry-run changes nothing", func(t *testing.T) {
		for _, mode := range []string{"client", "server"} {
			out, err := run(t, conn, "abort", "second", "-n", ns, "--dry-run="+mode)
			if err != nil || !strings.Contains(out, "perfexperiment "+ns+"/second aborting (phase Queued) (") {
				t.Fatalf("--dry-run=%s: %v\n%s", mode, err, out)
			}
		}
		got := &perfexpv1alpha1.PerfExperiment{}
		if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "second"}, got); err != nil {
			t.Fatal(err)
		}
		if got.Spec.Abort {
			t.Error("a dry run aborted the experiment")
		}
		if _, err := run(t, conn, "abort", "second", "-n", ns, "--dry-run=maybe"); err == nil {
			t.Error("--dry-run=maybe accepted")
		}
	})
	t.Run("queue -l, -o wide and --no-headers, as kubectl get", func(t *testing.T) {
		second := &perfexpv1alpha1.PerfExperiment{}
		if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "second"}, second); err != nil {
			t.Fatal(err)
		}
		second.Labels = map[string]string{"team": "checkout"}
		if err := env.Client.Update(ctx, second); err != nil {
			t.Fatal(err)
		}
		out, err := run(t, conn, "queue", "-n", ns, "-l", "team=checkout", "-o", "wide", "--no-headers")
		if err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		lines := strings.Split(strings.TrimSpace(out), "\n")
		if len(lines) != 1 || !strings.Contains(lines[0], "second") || strings.Contains(out, "QUEUE") ||
			len(strings.Fields(lines[0])) != 9 {
			t.Errorf("want one wide row (9 columns), for second, without a header:\n%s", out)
		}
		if _, err := run(t, conn, "queue", "-n", ns, "-l", "team in (a"); err == nil || !strings.Contains(err.Error(), "--selector") {
			t.Errorf("a malformed selector: %v", err)
		}
	})
	t.Run("report --file writes the report and says where", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "done.md")
		out, err := run(t, conn, "report", "done", "-n", ns, "--file", path)
		if err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		b, rerr := os.ReadFile(path)
		if rerr != nil || string(b) != "# Performance test report: done\n" {
			t.Errorf("file holds %q (%v)", b, rerr)
		}
		if !strings.Contains(out, "wrote the report of "+ns+"/done to "+path) {
			t.Errorf("output does not say where:\n%s", out)
		}
	})
	t.Run("report --open writes the page and opens it", func(t *testing.T) {
		var opened []string
		set := testSettings()
		set.open = func(p string) error { opened = append(opened, p); return nil }
		dir := t.TempDir()
		t.Setenv("TMPDIR", dir)
		out, err := runWith(t, conn, set, "report", "done", "-n", ns, "-o", "html", "--open")
		if err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		want := filepath.Join(dir, "perfexp-"+ns+"-done.html")
		if len(opened) != 1 || opened[0] != want {
			t.Fatalf("opened %v, want %s", opened, want)
		}
		if b, err := os.ReadFile(want); err != nil || !strings.Contains(string(b), "<title>done</title>") {
			t.Errorf("page %q (%v)", b, err)
		}
	})
	t.Run("report --open without a browser still writes the page", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "done.html")
		out, err := run(t, conn, "report", "done", "-n", ns, "-o", "html", "--open", "--file", path)
		if err != nil || !strings.Contains(out, "could not open it (no browser in tests): open the file in a browser") {
			t.Fatalf("%v\n%s", err, out)
		}
		if _, err := os.Stat(path); err != nil {
			t.Error(err)
		}
	})
	t.Run("report --open is for the HTML page", func(t *testing.T) {
		if _, err := run(t, conn, "report", "done", "-n", ns, "--open"); err == nil || !strings.Contains(err.Error(), "add -o html") {
			t.Errorf("error %v, want a hint to add -o html", err)
		}
	})

	t.Run("completion", func(t *testing.T) {
		sw := &perfexpv1alpha1.PerfSweep{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "sweep"}}
		sw.Spec.Template.Load = newExperiment(ns, "x").Spec.Load
		sw.Spec.Arms = []perfexpv1alpha1.SweepArm{{Name: "more", Load: &perfexpv1alpha1.LoadOverride{VUs: ptr(int32(2))}}}
		if err := env.Client.Create(ctx, sw); err != nil {
			t.Fatal(err)
		}
		tests := []struct {
			name    string
			args    []string
			want    []string
			notWant []string
		}{
			{"experiment names for report", []string{"report", "-n", ns, ""}, []string{"done\texperiment, Succeeded", "running\texperiment, Running", "second", "third"}, []string{"sweep"}},
			{"by prefix", []string{"watch", "-n", ns, "s"}, []string{"second"}, []string{"done", "running", "third"}},
			{"nothing after the one name", []string{"abort", "-n", ns, "done", ""}, nil, []string{"done", "second"}},
			{"experiments and sweeps first for compare", []string{"compare", "-n", ns, ""}, []string{"done", "sweep\tsweep, Pending"}, nil},
			{"then another experiment", []string{"compare", "-n", ns, "done", ""}, []string{"running", "second"}, []string{"done", "sweep"}},
			{"queues", []string{"queue", "-n", ns, ""}, []string{ns + "\tqueue, 3 unfinished experiments"}, nil},
			{"namespaces", []string{"queue", "-n", ""}, []string{ns + "\tnamespace", "kube-system"}, nil},
			{"output formats", []string{"report", "done", "-o", ""}, []string{"dashboard", "html", "json", "md"}, nil},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				out, err := run(t, conn, append([]string{"__complete"}, tc.args...)...)
				if err != nil {
					t.Fatalf("%v\n%s", err, out)
				}
				lines := strings.Split(out, "\n")
				if !strings.Contains(out, ":4\n") {
					t.Errorf("completion should not offer files (directive 4):\n%s", out)
				}
				for _, w := range tc.want {
					if !slices.Contains(lines, w) && !slices.ContainsFunc(lines, func(l string) bool { return strings.HasPrefix(l, w+"\t") }) {
						t.Errorf("completion lacks %q:\n%s", w, out)
					}
				}
				for _, nw := range tc.notWant {
					if slices.ContainsFunc(lines, func(l string) bool { return l == nw || strings.HasPrefix(l, nw+"\t") }) {
						t.Errorf("completion offers %q:\n%s", nw, out)
					}
				}
			})
		}
	})

	third := &perfexpv1alpha1.PerfExperiment{}
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "third"}, third); err != nil || !third.Spec.Abort {
		t.Errorf("third not aborted: %v %v", third.Spec.Abort, err)
	}
}

// Story: the plugin connects as kubectl does, through cli-runtime's flags: a kubeconfig file,
// its current context's namespace, -n over it, and another --context.
func TestKubeconfigFlags(t *testing.T) {
	env := testenv.Start(t)
	ns := env.Namespace(t, "flags")
	other := env.Namespace(t, "other")
	ctx := t.Context()
	for _, n := range []struct{ ns, name string }{{ns, "in-context-ns"}, {other, "in-other-ns"}} {
		e := newExperiment(n.ns, n.name)
		if err := env.Client.Create(ctx, e); err != nil {
			t.Fatal(err)
		}
		e.Status.Phase, e.Status.Queue = perfexpv1alpha1.PhaseQueued, n.ns
		if err := env.Client.Status().Update(ctx, e); err != nil {
			t.Fatal(err)
		}
	}
	// A kubeconfig for the test API server, whose current context works in ns, and a second
	// context pointing at a server that does not exist.
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["envtest"] = &clientcmdapi.Cluster{Server: env.Config.Host, CertificateAuthorityData: env.Config.CAData}
	cfg.Clusters["nowhere"] = &clientcmdapi.Cluster{Server: "https://127.0.0.1:1"}
	cfg.AuthInfos["admin"] = &clientcmdapi.AuthInfo{ClientCertificateData: env.Config.CertData, ClientKeyData: env.Config.KeyData, Token: env.Config.BearerToken}
	cfg.Contexts["perf"] = &clientcmdapi.Context{Cluster: "envtest", AuthInfo: "admin", Namespace: ns}
	cfg.Contexts["elsewhere"] = &clientcmdapi.Context{Cluster: "nowhere", AuthInfo: "admin"}
	cfg.CurrentContext = "perf"
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name    string
		args    []string
		want    string
		notWant string
		wantErr string
	}{
		{"the current context's namespace", []string{"queue", "--kubeconfig", path}, "in-context-ns", "in-other-ns", ""},
		{"-n over the context's", []string{"queue", "--kubeconfig", path, "-n", other}, "in-other-ns", "in-context-ns", ""},
		{"--context picks another cluster", []string{"queue", "--kubeconfig", path, "--context", "elsewhere"}, "", "", "127.0.0.1:1"},
		{"a cluster out of reach, said as kubectl says it", []string{"queue", "--kubeconfig", path, "--context", "elsewhere"}, "", "",
			"The connection to the server 127.0.0.1:1 was refused - did you specify the right host or port?"},
		// Before, watch retried for a minute, a line every 2 s.
		{"watch gives up at once on a cluster that was never there", []string{"watch", "x", "--kubeconfig", path, "--context", "elsewhere"}, "", "",
			"The connection to the server 127.0.0.1:1 was refused"},
		{"an empty queue, said as kubectl says it", []string{"queue", "--kubeconfig", path, "-n", "empty"}, "No resources found in empty namespace.", "QUEUE", ""},
		{"an unknown context", []string{"queue", "--kubeconfig", path, "--context", "nope"}, "", "", `context "nope" does not exist`},
		{"--as impersonates, and the API server says so", []string{"queue", "--kubeconfig", path, "--as", "someone"}, "", "", `"someone"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cmd := newRootCommand(kubeconfigClient)
			var out bytes.Buffer
			cmd.SetOut(&out)
			cmd.SetErr(&out)
			cmd.SetArgs(tc.args)
			err := cmd.ExecuteContext(ctx)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("%v\n%s", err, out.String())
			}
			if !strings.Contains(out.String(), tc.want) || strings.Contains(out.String(), tc.notWant) {
				t.Errorf("output should list %s and not %s:\n%s", tc.want, tc.notWant, out.String())
			}
		})
	}
}
