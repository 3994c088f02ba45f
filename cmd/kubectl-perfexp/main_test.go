package main

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/report"
	"github.com/perfexp/perfexp/internal/testenv"
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
	vus := int32(1)
	exp := &perfexpv1alpha1.PerfExperiment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	exp.Spec.Load.Scenarios = []perfexpv1alpha1.Scenario{{Name: "s", Script: perfexpv1alpha1.ScriptSource{Inline: "x"}, VUs: &vus, Duration: &metav1.Duration{Duration: time.Minute}}}
	return exp
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
		Data: map[string]string{report.KeyMarkdown: "# Performance test report: done\n", report.KeyJSON: `{"experiment":"done"}`, report.KeyDashboard: `{"title":"x"}`}}
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
		{"no report yet", []string{"report", "second", "-n", ns}, nil, "has no report yet (phase Queued)"},
		{"no such experiment", []string{"report", "nope", "-n", ns}, nil, "not found"},
		{"the queue in run order", []string{"queue", "-n", ns}, []string{"running", "Running", "second", "third"}, ""},
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
	third := &perfexpv1alpha1.PerfExperiment{}
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "third"}, third); err != nil || !third.Spec.Abort {
		t.Errorf("third not aborted: %v %v", third.Spec.Abort, err)
	}
}
