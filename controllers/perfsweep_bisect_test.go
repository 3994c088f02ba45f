package controllers_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/report"
	"github.com/perfexp/perfexp/internal/step"
	"github.com/perfexp/perfexp/internal/sweep"
	"github.com/perfexp/perfexp/internal/testenv"
)

// releaseLab is the lab with a system under test whose p95 is 100 ms, 30 % more when the run
// applies the new image of the culprit service, with a little run-to-run noise.
type releaseLab struct {
	*kneeLab
	culprit string
}

func (l *releaseLab) Analyze(ctx context.Context, exp, _ *perfexpv1alpha1.PerfExperiment) (step.Result, error) {
	p95 := 100.0
	if v := exp.Spec.Variant; v != nil {
		for _, w := range v.Workloads {
			if len(w.Names) == 1 && w.Names[0] == l.culprit && strings.HasSuffix(w.Image, ":new") {
				p95 *= 1.3
			}
		}
	}
	repeat, _ := strconv.Atoi(exp.Labels[perfexpv1alpha1.LabelRepeat])
	p95 *= 1 + 0.01*float64((len(exp.Name)+7*repeat)%5-2)
	if err := l.c.Create(ctx, runReport(l.t, exp.Namespace, exp.Name, p95)); err != nil && !apierrors.IsAlreadyExists(err) {
		return step.Result{}, err
	}
	exp.Status.Verdict = perfexpv1alpha1.VerdictPass
	return step.Done(), nil
}

func TestBisect(t *testing.T) {
	env := testenv.Start(t)
	env.Namespace(t, leaseNamespace)
	c := env.Client

	t.Run("a bisect over four services' images names the one whose new image is slower", func(t *testing.T) {
		ns := env.Namespace(t, "bisect-story")
		l := &releaseLab{kneeLab: &kneeLab{lab: newLab(), t: t, c: c}, culprit: "inventory"}
		startOperatorWithAnalyzer(t, env, l.kneeLab, l)
		sw := &perfexpv1alpha1.PerfSweep{}
		sw.Namespace, sw.Name = ns, "release"
		sw.Spec.Queue = ns
		sw.Spec.Template.Load.Scenarios = experiment(ns, "template", ns, 0).Spec.Load.Scenarios
		for _, name := range []string{"circulation", "users", "inventory", "notify"} {
			sw.Spec.Bisect = ensureBisect(sw.Spec.Bisect)
			sw.Spec.Bisect.Services = append(sw.Spec.Bisect.Services, perfexpv1alpha1.BisectService{Name: name, Container: name,
				Baseline: "demo/" + name + ":old", Candidate: "demo/" + name + ":new"})
		}
		mustCreate(t, c, sw)

		var done *perfexpv1alpha1.PerfSweep
		eventually(t, 180*time.Second, "the bisect ends", func() error {
			done = getSweep(t, c, ns, "release")
			if done.Status.Phase != perfexpv1alpha1.SweepSucceeded {
				return fmt.Errorf("phase %q: %s", done.Status.Phase, done.Status.Message)
			}
			return nil
		})
		st := done.Status.Bisect
		t.Logf("status: %s; steps %+v", done.Status.Message, st.Steps)
		if st.Summary != "inventory" || st.Interaction || len(st.Culprits) != 1 {
			t.Errorf("answer %q (culprits %v, interaction %v), want inventory alone", st.Summary, st.Culprits, st.Interaction)
		}
		if len(st.Steps) != 5 {
			t.Errorf("%d steps, want 5 (all, two halves, two quarters)", len(st.Steps))
		}
		runs := runsOf(t, c, ns)
		first, ok := runs["release-step-1-1"]
		if !ok {
			t.Fatalf("run release-step-1-1 missing: %v", keys(runs))
		}
		for _, w := range first.Spec.Variant.Workloads {
			if !strings.HasSuffix(w.Image, ":new") {
				t.Errorf("the first step runs %s at %s, want every new image", w.Names, w.Image)
			}
		}
		base := runs["release-step-1-baseline-1"]
		for _, w := range base.Spec.Variant.Workloads {
			if !strings.HasSuffix(w.Image, ":old") {
				t.Errorf("the first step's baseline runs %s at %s, want every old image", w.Names, w.Image)
			}
		}
		if first.Spec.Baseline == nil || first.Spec.Baseline.Name != "release-step-1-baseline-1" {
			t.Errorf("step run compared with %+v", first.Spec.Baseline)
		}
		if v := l.violations(); len(v) > 0 {
			t.Errorf("runs overlapped: %v", v)
		}
		cm := &corev1.ConfigMap{}
		if err := c.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: done.Status.ReportRef.Name}, cm); err != nil {
			t.Fatal(err)
		}
		if md := cm.Data[report.KeyMarkdown]; !strings.Contains(md, "**Culprit: inventory**") {
			t.Errorf("report.md does not name the culprit:\n%s", md)
		}
	})

	t.Run("the demo's bisect is accepted by the API server, starts from the demo as deployed and plans every image", func(t *testing.T) {
		ns := env.Namespace(t, "bisect-demo")
		data, err := os.ReadFile(filepath.Join(testenv.Root(), "scenarios", "demo-bisect", "bisect.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		obj := &unstructured.Unstructured{}
		if err := yaml.Unmarshal(data, &obj.Object); err != nil {
			t.Fatal(err)
		}
		obj.SetNamespace(ns)
		if err := c.Create(t.Context(), obj, client.DryRunAll); err != nil {
			t.Fatalf("the demo's bisect was refused: %v", err)
		}
		sw := &perfexpv1alpha1.PerfSweep{}
		if err := yaml.UnmarshalStrict(data, sw); err != nil {
			t.Fatal(err)
		}
		deployed := demoImages(t)
		for _, svc := range sw.Spec.Bisect.Services {
			key := svc.Name + "/" + svc.Container
			if deployed[key] == "" || deployed[key] != svc.Baseline {
				t.Errorf("%s: baseline %s, the demo deploys %q", key, svc.Baseline, deployed[key])
			}
			if !strings.HasSuffix(svc.Candidate, ":next") {
				t.Errorf("%s: candidate %s, want a :next image (hack/images/build.sh demo-next)", key, svc.Candidate)
			}
		}
		if len(sw.Spec.Bisect.Services) < 2 {
			t.Errorf("%d services bisected, want at least circulation and inventory", len(sw.Spec.Bisect.Services))
		}
		// The first step: every new image against every old one.
		sw.Status.Bisect = &perfexpv1alpha1.SweepBisectStatus{}
		if done, why := sweep.AdvanceBisect(sw, sweep.NewBisectPlan(sw), nil); done {
			t.Fatalf("the bisect ended before its first step: %s", why)
		}
		p := sweep.NewBisectPlan(sw)
		if len(p.Runs) != 6 {
			t.Errorf("the first step plans %d runs, want 3 repeats of 2", len(p.Runs))
		}
		for _, arm := range p.Arms {
			for _, w := range arm.Variant.Workloads {
				want := ":next"
				if arm.Name == "step-1-baseline" {
					want = ":dev"
				}
				if !strings.HasSuffix(w.Image, want) {
					t.Errorf("arm %s runs %v at %s, want %s", arm.Name, w.Names, w.Image, want)
				}
			}
		}
	})
}

// demoImages maps deployment/container of the demo as deployed (test/demoapp/deploy/base) to
// its image.
func demoImages(t *testing.T) map[string]string {
	t.Helper()
	dir := filepath.Join(testenv.Root(), "test", "demoapp", "deploy", "base")
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no manifests in %s: %v", dir, err)
	}
	images := map[string]string{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, doc := range bytes.Split(data, []byte("\n---\n")) {
			d := &appsv1.Deployment{}
			if err := yaml.Unmarshal(doc, d); err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			if d.Kind != "Deployment" {
				continue
			}
			for _, c := range d.Spec.Template.Spec.Containers {
				images[d.Name+"/"+c.Name] = c.Image
			}
		}
	}
	return images
}

func ensureBisect(b *perfexpv1alpha1.SweepBisect) *perfexpv1alpha1.SweepBisect {
	if b == nil {
		return &perfexpv1alpha1.SweepBisect{MaxRepeats: 4, MaxSteps: 10}
	}
	return b
}
