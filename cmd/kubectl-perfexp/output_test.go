package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/report"
	"github.com/perfexp/perfexp/internal/testenv"
)

// runSplit runs the plugin with standard output and standard error apart.
func runSplit(t *testing.T, conn *connection, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	cmd := newRootCommandWith(func(f *kubeFlags) (*connection, error) {
		c := *conn
		if ns := f.namespaceFlag(); ns != "" {
			c.namespace = ns
		}
		return &c, nil
	}, testSettings())
	var out, errOut bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&errOut)
	cmd.SetArgs(args)
	err = cmd.ExecuteContext(t.Context())
	return out.String(), errOut.String(), err
}

// Story: a script reads perfexp's objects with the -o forms it knows from kubectl get: json,
// yaml, name, jsonpath= and go-template=, on every verb that prints an object or a document.
func TestOutputFormats(t *testing.T) {
	env := testenv.Start(t)
	ns := env.Namespace(t, "output")
	empty := env.Namespace(t, "output-empty")
	conn := &connection{client: watchingClient(t, env), namespace: ns}
	ctx := t.Context()

	// A finished experiment with a report, two waiting ones, and a history.
	done := newExperiment(ns, "done")
	if err := env.Client.Create(ctx, done); err != nil {
		t.Fatal(err)
	}
	done.Status.Phase, done.Status.Verdict = perfexpv1alpha1.PhaseSucceeded, perfexpv1alpha1.VerdictFail
	done.Status.ReportRef = &perfexpv1alpha1.LocalObjectReference{Name: "done-report"}
	if err := env.Client.Status().Update(ctx, done); err != nil {
		t.Fatal(err)
	}
	results := `{"experiment":"done","namespace":"` + ns + `","verdict":"Fail","validity":"Valid"}`
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "done-report"},
		Data: map[string]string{report.KeyMarkdown: "# done\n", report.KeyJSON: results}}
	if err := env.Client.Create(ctx, cm); err != nil {
		t.Fatal(err)
	}
	for i, name := range []string{"first", "second"} {
		e := newExperiment(ns, name)
		if err := env.Client.Create(ctx, e); err != nil {
			t.Fatal(err)
		}
		e.Status.Phase, e.Status.Queue, e.Status.QueuePosition = perfexpv1alpha1.PhaseQueued, "perf", int32(i+1)
		if err := env.Client.Status().Update(ctx, e); err != nil {
			t.Fatal(err)
		}
	}
	h := &perfexpv1alpha1.PerfHistory{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "trend"}}
	if err := env.Client.Create(ctx, h); err != nil {
		t.Fatal(err)
	}
	h.Status.Records = []perfexpv1alpha1.HistoryRecord{{Experiment: "done", Time: metav1.Now(), Validity: perfexpv1alpha1.Valid}}
	if err := env.Client.Status().Update(ctx, h); err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name string
		args []string
		// want is standard output exactly when exact, else texts it contains.
		exact   bool
		want    []string
		wantErr string
	}{
		{name: "queue -o name: the table's rows, in its order", args: []string{"queue", "-o", "name"}, exact: true,
			want: []string{"perfexperiment.perfexp.dev/first\nperfexperiment.perfexp.dev/second\n"}},
		{name: "queue -o jsonpath", args: []string{"queue", "-o", "jsonpath={.items[*].status.queuePosition}"}, exact: true, want: []string{"1 2"}},
		{name: "queue -o go-template", args: []string{"queue", "-o", `go-template={{range .items}}{{.metadata.name}} {{end}}`}, exact: true,
			want: []string{"first second "}},
		{name: "queue --template alone means go-template, as in kubectl", args: []string{"queue", "--template", `{{len .items}}`}, exact: true, want: []string{"2"}},
		{name: "queue -o json: a List, as kubectl get prints one", args: []string{"queue", "-o", "json"},
			want: []string{`"kind": "List"`, `"apiVersion": "perfexp.dev/v1alpha1"`, `"kind": "PerfExperiment"`, `"name": "first"`}},
		{name: "queue -o yaml without managed fields", args: []string{"queue", "-o", "yaml"},
			want: []string{"kind: List", "kind: PerfExperiment", "  name: second", "queuePosition: 2"}},
		{name: "queue -o kyaml", args: []string{"queue", "-o", "kyaml"}, want: []string{"PerfExperiment", "first", "second"}},
		{name: "an empty queue -o json is an empty List", args: []string{"queue", "-n", empty, "-o", "json"},
			want: []string{`"items": []`, `"kind": "List"`}},
		{name: "report -o yaml: the results document", args: []string{"report", "done", "-o", "yaml"}, exact: true,
			want: []string{"experiment: done\nnamespace: " + ns + "\nvalidity: Valid\nverdict: Fail\n"}},
		{name: "report -o jsonpath", args: []string{"report", "done", "-o", "jsonpath={.verdict}"}, exact: true, want: []string{"Fail"}},
		{name: "report -o go-template", args: []string{"report", "done", "-o", "go-template={{.experiment}}: {{.verdict}}"}, exact: true,
			want: []string{"done: Fail"}},
		{name: "report -o json stays the stored results.json", args: []string{"report", "done", "-o", "json"}, exact: true, want: []string{results + "\n"}},
		{name: "report -o name: the results are no object", args: []string{"report", "done", "-o", "name"},
			wantErr: "-o name prints Kubernetes objects; this output is not one"},
		{name: "history -o name", args: []string{"history", "-o", "name"}, exact: true, want: []string{"perfhistory.perfexp.dev/trend\n"}},
		{name: "history --key -o jsonpath", args: []string{"history", "--key", "trend", "-o", "jsonpath={.status.records[0].experiment}"}, exact: true,
			want: []string{"done"}},
		{name: "version --client -o jsonpath", args: []string{"version", "--client", "-o", "jsonpath={.clientVersion.api}"}, exact: true,
			want: []string{"perfexp.dev/v1alpha1"}},
		{name: "abort -o name", args: []string{"abort", "second", "-o", "name"}, exact: true, want: []string{"perfexperiment.perfexp.dev/second\n"}},
		{name: "an unknown format lists the known ones", args: []string{"queue", "-o", "table"},
			wantErr: `unknown output "table": use wide, custom-columns=, json, yaml, kyaml, name, go-template=, jsonpath=, jsonpath-as-json=`},
		{name: "wide, as kubectl get -o wide", args: []string{"queue", "-o", "wide"}, want: []string{"TARGET", "BASELINE"}},
		{name: "a report format elsewhere is unknown", args: []string{"history", "-o", "md"}, wantErr: `unknown output "md"`},
		{name: "a missing key prints nothing, as in kubectl", args: []string{"queue", "-o", "jsonpath={.items[0].nope}"}, exact: true, want: []string{""}},
		{name: "a missing key with --allow-missing-template-keys=false says so",
			args: []string{"queue", "-o", "jsonpath={.items[0].nope}", "--allow-missing-template-keys=false"}, wantErr: "nope is not found"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, errOut, err := runSplit(t, conn, tc.args...)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want %q\nstdout:\n%s", err, tc.wantErr, out)
				}
				return
			}
			if err != nil {
				t.Fatalf("%v\nstdout:\n%s\nstderr:\n%s", err, out, errOut)
			}
			if errOut != "" {
				t.Errorf("nothing should go to standard error, got:\n%s", errOut)
			}
			if tc.exact && out != tc.want[0] {
				t.Fatalf("stdout %q, want %q", out, tc.want[0])
			}
			for _, w := range tc.want {
				if !strings.Contains(out, w) {
					t.Errorf("stdout lacks %q:\n%s", w, out)
				}
			}
			if strings.Contains(out, "managedFields") {
				t.Errorf("managed fields printed without --show-managed-fields:\n%s", out)
			}
		})
	}

	t.Run("json and yaml are the same object", func(t *testing.T) {
		j, _, err := runSplit(t, conn, "history", "--key", "trend", "-o", "json")
		if err != nil {
			t.Fatal(err)
		}
		y, _, err := runSplit(t, conn, "history", "--key", "trend", "-o", "yaml")
		if err != nil {
			t.Fatal(err)
		}
		var fromJSON, fromYAML map[string]any
		if err := json.Unmarshal([]byte(j), &fromJSON); err != nil {
			t.Fatal(err)
		}
		if err := yaml.Unmarshal([]byte(y), &fromYAML); err != nil {
			t.Fatal(err)
		}
		if fromJSON["kind"] != "PerfHistory" || fromYAML["kind"] != "PerfHistory" || fromJSON["apiVersion"] != "perfexp.dev/v1alpha1" {
			t.Fatalf("kind/apiVersion missing:\n%s\n%s", j, y)
		}
	})

	t.Run("watch -o jsonpath: the ended experiment on stdout, the progress on stderr", func(t *testing.T) {
		out, errOut, err := runSplit(t, conn, "watch", "done", "--prometheus-url", "none", "-o", "jsonpath={.status.verdict}")
		if err != nil {
			t.Fatal(err)
		}
		if out != "Fail" || !strings.Contains(errOut, ns+"/done  Succeeded") || !strings.Contains(errOut, "verdict    Fail") {
			t.Fatalf("stdout %q, stderr:\n%s", out, errOut)
		}
	})

	t.Run("watch -o name with --fail-on: the object printed, the exit code kept", func(t *testing.T) {
		out, _, err := runSplit(t, conn, "watch", "done", "--prometheus-url", "none", "--fail-on", "fail", "-o", "name")
		if exitCode(err) != exitFail || out != "perfexperiment.perfexp.dev/done\n" {
			t.Fatalf("error %v (exit %d), stdout %q", err, exitCode(err), out)
		}
	})

	t.Run("compare -o jsonpath reads the comparison document", func(t *testing.T) {
		out, _, err := runSplit(t, conn, "compare", "done", "done", "-o", "jsonpath={.experiment}")
		if err != nil || out != "done" {
			t.Fatalf("error %v, stdout %q", err, out)
		}
	})
}
