package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/report"
	"github.com/perfexp/perfexp/internal/result"
	"github.com/perfexp/perfexp/internal/testenv"
)

// pipelineStep is the gate step of a pipeline example: the shell it runs, its environment,
// and where the pipeline picks up the JUnit report.
type pipelineStep struct {
	run   string
	env   map[string]string
	junit string
	// cleanup: the pipeline aborts the experiment of a cancelled gate (perfexp-gate.sh abort).
	cleanup bool
}

// readYAML reads a file of examples/ci as a tree of maps and lists.
func readYAML(t *testing.T, name string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(testenv.Root(), "examples", "ci", name))
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := yaml.Unmarshal(b, &doc); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return doc
}

func stringMap(v any) map[string]string {
	out := map[string]string{}
	m, _ := v.(map[string]any)
	for k, v := range m {
		s, _ := v.(string)
		out[k] = s
	}
	return out
}

// githubGate is the step of the GitHub Actions example that runs the gate, with the job's
// and the step's environment, and the JUnit path its publishing step reads.
func githubGate(t *testing.T) pipelineStep {
	doc := readYAML(t, "github-actions.yaml")
	job, _ := doc["jobs"].(map[string]any)["perfexp"].(map[string]any)
	if job == nil {
		t.Fatal("github-actions.yaml has no job perfexp")
	}
	var gate pipelineStep
	steps, _ := job["steps"].([]any)
	for _, s := range steps {
		step, _ := s.(map[string]any)
		run, _ := step["run"].(string)
		uses, _ := step["uses"].(string)
		switch {
		case strings.Contains(run, "perfexp-gate.sh abort"):
			// The cleanup of a cancelled run: it must run when the job was cancelled.
			if step["if"] != "cancelled()" {
				t.Errorf("the abort step runs if: %v, want cancelled()", step["if"])
			}
			gate.cleanup = true
		case strings.Contains(run, "perfexp-gate.sh"):
			gate.run, gate.env = run, stringMap(job["env"])
			for k, v := range stringMap(step["env"]) {
				gate.env[k] = v
			}
		case strings.HasPrefix(uses, "mikepenz/action-junit-report@"):
			gate.junit = stringMap(step["with"])["report_paths"]
			if step["if"] != "always()" {
				t.Errorf("the JUnit step runs only when the gate passed: if: %v", step["if"])
			}
		}
	}
	if gate.run == "" || gate.junit == "" {
		t.Fatalf("github-actions.yaml: no gate step or no JUnit step: %+v", gate)
	}
	return gate
}

// gitlabGate is the GitLab CI example's job script with its variables and its JUnit report.
func gitlabGate(t *testing.T) pipelineStep {
	doc := readYAML(t, "gitlab-ci.yml")
	job, _ := doc["perfexp"].(map[string]any)
	if job == nil {
		t.Fatal("gitlab-ci.yml has no job perfexp")
	}
	var lines []string
	script, _ := job["script"].([]any)
	for _, l := range script {
		s, _ := l.(string)
		lines = append(lines, s)
	}
	artifacts, _ := job["artifacts"].(map[string]any)
	if artifacts["when"] != "always" {
		t.Errorf("gitlab-ci.yml keeps the reports only when the gate passed: when: %v", artifacts["when"])
	}
	cleanup := false
	after, _ := job["after_script"].([]any)
	for _, l := range after {
		s, _ := l.(string)
		cleanup = cleanup || strings.Contains(s, "perfexp-gate.sh abort")
	}
	return pipelineStep{run: strings.Join(lines, "\n"), env: stringMap(job["variables"]), junit: stringMap(artifacts["reports"])["junit"], cleanup: cleanup}
}

// Story: a pipeline gates a change on an experiment. The gate steps of both examples
// (examples/ci/github-actions.yaml and gitlab-ci.yml) run here as the pipelines run them,
// with their own settings, against a real API server, kubectl, and the plugin built from
// this tree; the test plays the operator. A Fail verdict fails the step with exit code 3
// and a JUnit file with the failure; a Pass passes; an experiment that does not end in time
// fails with 9.
func TestPipelineExamples(t *testing.T) {
	kubectl, err := exec.LookPath("kubectl")
	if err != nil {
		t.Skip("the pipeline examples run kubectl, which is not on the PATH")
	}
	github, gitlab := githubGate(t), gitlabGate(t)
	for _, g := range []pipelineStep{github, gitlab} {
		if want := g.env["PERFEXP_REPORTS"] + "/perfexp-junit.xml"; g.junit != want {
			t.Errorf("the pipeline publishes %q, the gate writes %q", g.junit, want)
		}
		if !g.cleanup {
			t.Errorf("the pipeline running %q does not abort the experiment of a cancelled gate", g.run)
		}
	}

	env := testenv.Start(t)
	ns := env.Namespace(t, "ci")
	ctx := t.Context()
	root := testenv.Root()
	bin := t.TempDir()
	build := exec.CommandContext(ctx, "go", "build", "-o", filepath.Join(bin, "kubectl-perfexp"), "./cmd/kubectl-perfexp")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the plugin: %v\n%s", err, out)
	}
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["envtest"] = &clientcmdapi.Cluster{Server: env.Config.Host, CertificateAuthorityData: env.Config.CAData}
	cfg.AuthInfos["admin"] = &clientcmdapi.AuthInfo{ClientCertificateData: env.Config.CertData, ClientKeyData: env.Config.KeyData}
	cfg.Contexts["ci"] = &clientcmdapi.Context{Cluster: "envtest", AuthInfo: "admin", Namespace: ns}
	cfg.CurrentContext = "ci"
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, kubeconfig); err != nil {
		t.Fatal(err)
	}

	// operator plays the operator for the next experiment the gate creates: it takes it up and
	// ends it as end says (nil: leaves it Queued).
	operator := func(seen map[string]bool, end *perfexpv1alpha1.PerfExperimentStatus, res *result.Result) <-chan error {
		done := make(chan error, 1)
		go func() {
			done <- func() error {
				deadline := time.Now().Add(30 * time.Second)
				for time.Now().Before(deadline) {
					list := &perfexpv1alpha1.PerfExperimentList{}
					if err := env.Client.List(ctx, list, client.InNamespace(ns)); err != nil {
						return err
					}
					for i := range list.Items {
						exp := &list.Items[i]
						if seen[exp.Name] {
							continue
						}
						seen[exp.Name] = true
						exp.Status.Phase, exp.Status.Queue, exp.Status.QueuePosition = perfexpv1alpha1.PhaseQueued, ns, 1
						if err := env.Client.Status().Update(ctx, exp); err != nil {
							return err
						}
						if end == nil {
							return nil
						}
						time.Sleep(300 * time.Millisecond) // watch shows the queue first
						res.Experiment, res.Namespace = exp.Name, ns
						js, err := report.JSON(res)
						if err != nil {
							return err
						}
						cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: exp.Name + "-report"},
							Data: map[string]string{report.KeyJSON: string(js), report.KeyHTML: "<!doctype html><title>" + exp.Name + "</title>\n"}}
						if err := env.Client.Create(ctx, cm); err != nil {
							return err
						}
						exp.Status = *end.DeepCopy()
						exp.Status.ReportRef = &perfexpv1alpha1.LocalObjectReference{Name: cm.Name}
						return env.Client.Status().Update(ctx, exp)
					}
					time.Sleep(50 * time.Millisecond)
				}
				return errors.New("the gate created no experiment")
			}()
		}()
		return done
	}
	// gate runs a pipeline's gate step as the pipeline would, from the repository root, with
	// the pipeline's own settings except where the experiment runs and where reports go.
	gate := func(t *testing.T, step pipelineStep, timeout string, extraEnv ...string) (code int, output, reports string) {
		reports = t.TempDir()
		cmd := exec.CommandContext(ctx, "bash", "-e", "-c", step.run)
		cmd.Dir = root
		cmd.Env = []string{"PATH=" + bin + ":" + filepath.Dir(kubectl) + ":/usr/bin:/bin", "HOME=" + t.TempDir(), "KUBECONFIG=" + kubeconfig}
		for k, v := range step.env {
			cmd.Env = append(cmd.Env, k+"="+v)
		}
		cmd.Env = append(cmd.Env, "PERFEXP_NAMESPACE="+ns, "PERFEXP_REPORTS="+reports)
		if timeout != "" {
			cmd.Env = append(cmd.Env, "PERFEXP_TIMEOUT="+timeout)
		}
		cmd.Env = append(cmd.Env, extraEnv...)
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		err := cmd.Run()
		var exit *exec.ExitError
		switch {
		case err == nil:
		case errors.As(err, &exit):
			code = exit.ExitCode()
		default:
			t.Fatalf("running the gate: %v\n%s", err, out.String())
		}
		return code, out.String(), reports
	}
	readReport := func(t *testing.T, path string) string {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("the gate wrote no %s: %v", filepath.Base(path), err)
		}
		return string(b)
	}
	seen := map[string]bool{}

	t.Run("GitHub Actions: a Fail verdict fails the step with 3, with the failure in JUnit", func(t *testing.T) {
		end := &perfexpv1alpha1.PerfExperimentStatus{Phase: perfexpv1alpha1.PhaseSucceeded, Verdict: perfexpv1alpha1.VerdictFail,
			Comparison: &perfexpv1alpha1.Comparison{Baseline: "demo-baseline", Change: perfexpv1alpha1.ChangeRegressed}}
		res := &result.Result{Verdict: perfexpv1alpha1.VerdictFail, Validity: perfexpv1alpha1.Valid,
			VerdictReasons: []string{"p95 of checkout regressed by 40 % against demo-baseline"}}
		op := operator(seen, end, res)
		code, out, reports := gate(t, github, "")
		if err := <-op; err != nil {
			t.Fatalf("%v; the gate printed:\n%s", err, out)
		}
		if code != exitFail || !strings.Contains(out, "verdict Fail") {
			t.Fatalf("exit %d, want %d:\n%s", code, exitFail, out)
		}
		junit := readReport(t, filepath.Join(reports, "perfexp-junit.xml"))
		if !strings.Contains(junit, `<failure message="verdict Fail" type="Fail">p95 of checkout regressed by 40 % against demo-baseline</failure>`) {
			t.Errorf("JUnit lacks the failure:\n%s", junit)
		}
		name := strings.TrimSpace(readReport(t, filepath.Join(reports, "experiment-name")))
		if !strings.HasPrefix(name, "ci-no-cpu-limits-") || !strings.Contains(readReport(t, filepath.Join(reports, "perfexp-report.html")), name) {
			t.Errorf("experiment %q, or the HTML report is not its own", name)
		}
		t.Logf("the gate printed:\n%s", out)
	})

	t.Run("GitLab CI: a Pass verdict passes the job, with a JUnit file without failures", func(t *testing.T) {
		end := &perfexpv1alpha1.PerfExperimentStatus{Phase: perfexpv1alpha1.PhaseSucceeded, Verdict: perfexpv1alpha1.VerdictPass}
		op := operator(seen, end, &result.Result{Verdict: perfexpv1alpha1.VerdictPass, Validity: perfexpv1alpha1.Valid})
		code, out, reports := gate(t, gitlab, "")
		if err := <-op; err != nil {
			t.Fatal(err)
		}
		if code != 0 || !strings.Contains(out, "accepted") {
			t.Fatalf("exit %d, want 0:\n%s", code, out)
		}
		if junit := readReport(t, filepath.Join(reports, "perfexp-junit.xml")); !strings.Contains(junit, `failures="0"`) {
			t.Errorf("JUnit has failures:\n%s", junit)
		}
	})

	t.Run("GitLab CI: an experiment that does not end in time fails the job with 9 and is aborted", func(t *testing.T) {
		op := operator(seen, nil, nil)
		// Nothing plays the restore here: the gate waits its PERFEXP_ABORT_WAIT out.
		code, out, reports := gate(t, gitlab, "3s", "PERFEXP_ABORT_WAIT=2s")
		if err := <-op; err != nil {
			t.Fatal(err)
		}
		if code != exitTimedOut || !strings.Contains(out, "had not ended after --timeout 3s (phase Queued)") {
			t.Fatalf("exit %d, want %d:\n%s", code, exitTimedOut, out)
		}
		if _, err := os.Stat(filepath.Join(reports, "perfexp-junit.xml")); err == nil {
			t.Errorf("a JUnit file for an experiment that has no report")
		}
		name := strings.TrimSpace(readReport(t, filepath.Join(reports, "experiment-name")))
		exp := &perfexpv1alpha1.PerfExperiment{}
		if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, exp); err != nil {
			t.Fatal(err)
		}
		if !exp.Spec.Abort || !strings.Contains(out, "aborting "+name) || !strings.Contains(out, "still restoring after 2s") {
			t.Errorf("spec.abort %v after the gate's timeout; the gate printed:\n%s", exp.Spec.Abort, out)
		}
	})
}

// The gate script's cancellation, with a fake kubectl (examples/ci/perfexp-gate_test.sh): a
// SIGTERM while it waits aborts the experiment and waits for the restore within
// PERFEXP_ABORT_WAIT; its own timeout aborts too; an ended experiment is left alone; the
// cleanup form aborts what a killed gate left running. No cluster, about 4 s.
func TestGateScriptCancels(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	cmd := exec.CommandContext(t.Context(), bash, filepath.Join(testenv.Root(), "examples", "ci", "perfexp-gate_test.sh"))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
}

// Every action the examples and the composite action use is pinned by a full commit (a tag
// can be moved to other code), with the tag it stands for beside it; the repository's own
// action is used by its path.
func TestActionsPinnedByCommit(t *testing.T) {
	pinned := regexp.MustCompile(`^\s*-?\s*uses:\s*([^@\s]+)@([0-9a-f]{40}) # v[0-9.]+\s*$`)
	files := []string{"examples/ci/github-actions.yaml", "examples/ci/github-actions-composite.yaml", ".github/actions/perfexp-gate/action.yml"}
	n := 0
	for _, f := range files {
		b, err := os.ReadFile(filepath.Join(testenv.Root(), f))
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(b), "\n") {
			if !strings.Contains(line, "uses:") || strings.HasPrefix(strings.TrimSpace(line), "#") {
				continue
			}
			n++
			if strings.Contains(line, "uses: ./.github/actions/") {
				continue
			}
			if !pinned.MatchString(line) {
				t.Errorf("%s:%d: %q is not pinned by a commit with its tag in a comment", f, i+1, strings.TrimSpace(line))
			}
		}
	}
	if n < 6 {
		t.Errorf("only %d uses: lines found", n)
	}
}

// The composite action passes each setting of the gate script (its PERFEXP_* variables) from
// an input, and runs the script the examples run.
func TestCompositeAction(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(testenv.Root(), ".github", "actions", "perfexp-gate", "action.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var action struct {
		Inputs map[string]struct {
			Default string `json:"default"`
		} `json:"inputs"`
		Runs struct {
			Using string `json:"using"`
			Steps []struct {
				Run string            `json:"run"`
				Env map[string]string `json:"env"`
			} `json:"steps"`
		} `json:"runs"`
	}
	if err := yaml.Unmarshal(b, &action); err != nil {
		t.Fatal(err)
	}
	script, err := os.ReadFile(filepath.Join(testenv.Root(), "examples", "ci", "perfexp-gate.sh"))
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{}
	runsGate := false
	for _, s := range action.Runs.Steps {
		for k, v := range s.Env {
			env[k] = v
		}
		runsGate = runsGate || strings.Contains(s.Run, "examples/ci/perfexp-gate.sh")
	}
	if action.Runs.Using != "composite" || !runsGate {
		t.Fatalf("using %q, runs the gate script: %v", action.Runs.Using, runsGate)
	}
	settings := regexp.MustCompile(`(?m)^#\s+(PERFEXP_[A-Z_]+)\s`).FindAllStringSubmatch(string(script), -1)
	for _, m := range settings {
		v := m[1]
		if v == "PERFEXP_ABORT_ON_TIMEOUT" {
			continue // always on in the action: a timed-out gate must not hold the environment
		}
		in, ok := env[v]
		name := strings.TrimSuffix(strings.TrimPrefix(in, "${{ inputs."), " }}")
		if _, declared := action.Inputs[name]; !ok || !declared {
			t.Errorf("the gate's %s comes from no input of the action (env %q)", v, in)
		}
	}
	if len(settings) < 6 {
		t.Errorf("found %d settings in the gate's header", len(settings))
	}
}
