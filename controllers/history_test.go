package controllers_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/controllers"
	"github.com/perfexp/perfexp/internal/history"
	"github.com/perfexp/perfexp/internal/report"
	"github.com/perfexp/perfexp/internal/step"
	"github.com/perfexp/perfexp/internal/testenv"
)

// resultsLab is the lab whose analysis writes results: a p95 per experiment and the demo's
// circulation workload.
type resultsLab struct {
	*lab
	c   client.Client
	mu  sync.Mutex
	p95 map[string]float64
}

func (l *resultsLab) Analyze(ctx context.Context, exp, baseline *perfexpv1alpha1.PerfExperiment) (step.Result, error) {
	res, err := l.lab.Analyze(ctx, exp, baseline)
	if err != nil || !res.Done {
		return res, err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	p95 := strconv.FormatFloat(l.p95[exp.Name], 'f', 3, 64)
	n := int64(6000)
	exp.Status.Results = &perfexpv1alpha1.Results{Validity: perfexpv1alpha1.Valid, P95: p95,
		Scenarios: []perfexpv1alpha1.ScenarioResult{{Name: "checkinout", Validity: perfexpv1alpha1.Valid,
			RequestStats: perfexpv1alpha1.RequestStats{Requests: &n, P95: p95, Avg: p95, Rate: "100", ErrorPercent: "0"}}},
		Workloads: []perfexpv1alpha1.WorkloadResult{{Kind: "Deployment", Namespace: exp.Namespace, Name: "circulation", CPUAvg: "0.25"}},
	}
	// A report, as the analyzer publishes one, for the history section to be added to.
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: exp.Namespace, Name: exp.Name + "-report"},
		Data: map[string]string{report.KeyMarkdown: "# " + exp.Name + "\n\n## Method\n\nk6 and Prometheus.\n"}}
	if err := controllerutil.SetControllerReference(exp, cm, l.c.Scheme()); err != nil {
		return step.Result{}, err
	}
	if err := l.c.Create(ctx, cm); err != nil && !apierrors.IsAlreadyExists(err) {
		return step.Result{}, err
	}
	exp.Status.ReportRef = &perfexpv1alpha1.LocalObjectReference{Name: cm.Name}
	return res, nil
}

func histories(t *testing.T, c client.Client, ns string) []perfexpv1alpha1.PerfHistory {
	t.Helper()
	list := &perfexpv1alpha1.PerfHistoryList{}
	if err := c.List(t.Context(), list, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	return list.Items
}

// TestHistory is the story of issue 15 on an API server: eight comparable runs, the fifth
// onwards slower, each adds one record to one history; the history outlives the experiments
// and shows one change, at the fifth run.
func TestHistory(t *testing.T) {
	env := testenv.Start(t)
	env.Namespace(t, leaseNamespace)
	c := env.Client
	ns := env.Namespace(t, "history")
	mustCreate(t, c, &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "circulation"},
		Spec: appsv1.DeploymentSpec{
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "circulation"}},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "circulation"}},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "perfexp-demo:dev"}}}},
		}})
	l := &resultsLab{lab: newLab(), c: c, p95: map[string]float64{}}
	startOperatorWith(t, env, l, l, l)

	var names []string
	for i := range 8 {
		name := fmt.Sprintf("checkout-%d", i+1)
		names = append(names, name)
		level := 100.0
		if i >= 4 {
			level = 160
		}
		l.mu.Lock()
		l.p95[name] = level * (1 + 0.02*float64(i%3-1))
		l.mu.Unlock()
		mustCreate(t, c, experiment(ns, name, "history", 0))
		l.finishLoad(name)
		waitPhase(t, c, ns, name, perfexpv1alpha1.PhaseSucceeded)
	}

	hs := histories(t, c, ns)
	if len(hs) != 1 {
		t.Fatalf("%d histories, want 1 for 8 comparable runs", len(hs))
	}
	h := hs[0]
	if len(h.Status.Records) != 8 || len(h.OwnerReferences) != 0 {
		t.Fatalf("history %s: %d records, owners %v; want 8 and none", h.Name, len(h.Status.Records), h.OwnerReferences)
	}
	for i, r := range h.Status.Records {
		if r.Experiment != names[i] || r.UID == "" {
			t.Errorf("record %d is %s (%s), want %s", i, r.Experiment, r.UID, names[i])
		}
	}
	if img := h.Status.Records[0].Images; len(img) != 1 || img[0].Value != "perfexp-demo:dev" || img[0].Name != "Deployment/circulation/app" {
		t.Errorf("images %+v, want the circulation Deployment's", img)
	}
	if h.Labels[perfexpv1alpha1.LabelHistoryFingerprint] == "" || len(h.Status.Fingerprint) != 64 {
		t.Errorf("fingerprint label %q status %q", h.Labels[perfexpv1alpha1.LabelHistoryFingerprint], h.Status.Fingerprint)
	}
	b, _ := json.Marshal(h)
	t.Logf("the API server stores history %s with 8 one-scenario records in %d bytes of JSON (%d per record)", h.Name, len(b), len(b)/8)

	changes := history.Changes(&h)
	found := map[string]string{}
	for _, ch := range changes {
		found[ch.Series] = ch.Experiment
	}
	if found["checkinout/p95"] != "checkout-5" || found["checkinout/avg"] != "checkout-5" || len(changes) != 2 {
		t.Errorf("changes %v, want checkinout/p95 and /avg at checkout-5 only", found)
	}

	t.Run("the report of the last run shows the history and the change", func(t *testing.T) {
		cm := &corev1.ConfigMap{}
		if err := c.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: "checkout-8-report"}, cm); err != nil {
			t.Fatal(err)
		}
		md := cm.Data[report.KeyMarkdown]
		for _, want := range []string{"## Method", "## History", "Run 8 of 8", "| checkinout/p95 |", "Change points among these runs", "| checkout-5 | checkinout/p95 |"} {
			if !strings.Contains(md, want) {
				t.Errorf("report.md lacks %q:\n%s", want, md)
			}
		}
		if !strings.HasPrefix(cm.Data[report.KeyHistory], "## History") {
			t.Errorf("history.md = %q", cm.Data[report.KeyHistory])
		}
		t.Logf("checkout-8's history section:\n%s", cm.Data[report.KeyHistory])
	})

	t.Run("writing a record again adds nothing", func(t *testing.T) {
		exp := get(t, c, ns, "checkout-3")
		for range 2 {
			if _, err := controllers.RecordHistory(t.Context(), c, c, exp, metav1.Now()); err != nil {
				t.Fatal(err)
			}
		}
		if n := len(histories(t, c, ns)[0].Status.Records); n != 8 {
			t.Errorf("%d records after writing checkout-3 twice more, want 8", n)
		}
	})

	t.Run("the history outlives its experiments", func(t *testing.T) {
		for _, name := range names {
			if err := c.Delete(t.Context(), &perfexpv1alpha1.PerfExperiment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}); err != nil {
				t.Fatal(err)
			}
		}
		eventually(t, 30*time.Second, "experiments deleted", func() error {
			list := &perfexpv1alpha1.PerfExperimentList{}
			if err := c.List(t.Context(), list, client.InNamespace(ns)); err != nil {
				return err
			}
			if len(list.Items) > 0 {
				return fmt.Errorf("%d left", len(list.Items))
			}
			return nil
		})
		hs := histories(t, c, ns)
		if len(hs) != 1 || len(hs[0].Status.Records) != 8 {
			t.Fatalf("after deleting the experiments: %d histories", len(hs))
		}
	})

	t.Run("another load shape starts another history", func(t *testing.T) {
		exp := experiment(ns, "checkout-20vus", "history", 0)
		vus := int32(20)
		exp.Spec.Load.Scenarios[0].VUs = &vus
		l.mu.Lock()
		l.p95[exp.Name] = 300
		l.mu.Unlock()
		mustCreate(t, c, exp)
		l.finishLoad(exp.Name)
		waitPhase(t, c, ns, exp.Name, perfexpv1alpha1.PhaseSucceeded)
		if n := len(histories(t, c, ns)); n != 2 {
			t.Errorf("%d histories, want 2", n)
		}
	})

	t.Run("historyKey names the history", func(t *testing.T) {
		exp := experiment(ns, "keyed", "history", 0)
		exp.Spec.Analysis = &perfexpv1alpha1.Analysis{HistoryKey: "checkout-trend"}
		mustCreate(t, c, exp)
		l.finishLoad(exp.Name)
		waitPhase(t, c, ns, exp.Name, perfexpv1alpha1.PhaseSucceeded)
		h := &perfexpv1alpha1.PerfHistory{}
		if err := c.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: "checkout-trend"}, h); err != nil {
			t.Fatal(err)
		}
		if len(h.Status.Records) != 1 || h.Status.Fingerprint != "historyKey:checkout-trend" {
			t.Errorf("history checkout-trend: %d records, fingerprint %q", len(h.Status.Records), h.Status.Fingerprint)
		}
	})
}
