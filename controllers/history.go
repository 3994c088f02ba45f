package controllers

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/history"
	"github.com/perfexp/perfexp/internal/load"
	"github.com/perfexp/perfexp/internal/publish"
	"github.com/perfexp/perfexp/internal/report"
)

// +kubebuilder:rbac:groups=perfexp.dev,resources=perfhistories,verbs=get;list;watch;create
// +kubebuilder:rbac:groups=perfexp.dev,resources=perfhistories/status,verbs=get;update;patch

// recordHistory appends the finished experiment's record to the PerfHistory of its
// fingerprint. A history is kept for trends, not to decide this run, so a failed write is
// logged and reported as an event and the experiment still finishes.
func (r *PerfExperimentReconciler) recordHistory(ctx context.Context, s *scope) {
	exp := s.exp
	if exp.Status.Results == nil || failure(exp) != nil {
		return
	}
	reader := r.APIReader
	if reader == nil {
		reader = r.Client
	}
	h, err := RecordHistory(ctx, r.Client, reader, exp, metav1.NewTime(s.now))
	name := ""
	if h != nil {
		name = h.Name
	}
	if err == nil {
		err = publishHistory(ctx, r.Client, reader, exp, h)
	}
	if err != nil {
		log.FromContext(ctx).Error(err, "Could not add the run to its history", "history", name)
		if r.Recorder != nil {
			r.Recorder.Eventf(exp, nil, corev1.EventTypeWarning, "HistoryNotRecorded", "RecordHistory",
				"the run was not added to history %s: %v", name, err)
		}
		return
	}
	log.FromContext(ctx).Info("Added the run to its history", "history", name)
}

// RecordHistory appends exp's record to the PerfHistory named by its fingerprint (or
// spec.analysis.historyKey) in exp's namespace, creating the history when absent. The history
// has no owner reference, so deleting the experiment leaves it. Writing is idempotent: a
// record whose experiment UID is there already is not added again, so a re-reconcile, or a
// restart between this write and the experiment's status write, adds nothing. reader reads
// past the cache, so the update starts from the stored version. It returns the history as
// written.
func RecordHistory(ctx context.Context, c client.Client, reader client.Reader, exp *perfexpv1alpha1.PerfExperiment, at metav1.Time) (*perfexpv1alpha1.PerfHistory, error) {
	scripts, err := load.ScenarioScripts(ctx, reader, exp)
	if err != nil {
		return nil, err
	}
	name, fingerprint := history.Key(exp, scripts)
	rec := history.RecordFrom(exp, historyImages(ctx, reader, exp), at)
	var h *perfexpv1alpha1.PerfHistory
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		h = &perfexpv1alpha1.PerfHistory{}
		err := reader.Get(ctx, client.ObjectKey{Namespace: exp.Namespace, Name: name}, h)
		if apierrors.IsNotFound(err) {
			h = &perfexpv1alpha1.PerfHistory{ObjectMeta: metav1.ObjectMeta{Namespace: exp.Namespace, Name: name,
				Labels: map[string]string{perfexpv1alpha1.LabelHistoryFingerprint: labelValue(fingerprint)}}}
			if err = c.Create(ctx, h); apierrors.IsAlreadyExists(err) {
				// Another experiment of the same fingerprint created it first: read theirs.
				return apierrors.NewConflict(perfexpv1alpha1.GroupVersion.WithResource("perfhistories").GroupResource(), name, err)
			}
		}
		if err != nil {
			return err
		}
		if !history.Append(h, rec) && h.Status.Fingerprint != "" {
			return nil
		}
		h.Status.Fingerprint = fingerprint
		if _, err := history.Fit(h, perfexpv1alpha1.HistoryMaxBytes); err != nil {
			return err
		}
		return c.Status().Update(ctx, h)
	})
	if err != nil && h != nil && h.Name == "" {
		h.Name = name
	}
	return h, err
}

// publishHistory adds the history section to the experiment's report: report.md gets it
// appended (replacing an earlier one) and history.md holds it alone.
func publishHistory(ctx context.Context, c client.Client, reader client.Reader, exp *perfexpv1alpha1.PerfExperiment, h *perfexpv1alpha1.PerfHistory) error {
	if exp.Status.ReportRef == nil {
		return nil
	}
	section := report.HistorySection(h, exp.UID, report.DefaultHistoryRuns)
	target := publish.Report(exp)
	target.Reader, target.ExistingOnly = reader, true
	_, err := publish.ConfigMap(ctx, c, target, func(cm *corev1.ConfigMap) error {
		if cm.Data == nil {
			cm.Data = map[string]string{}
		}
		cm.Data[report.KeyHistory] = section
		cm.Data[report.KeyMarkdown] = report.WithHistory(cm.Data[report.KeyMarkdown], section)
		return nil
	})
	return err
}

// labelValue is s cut to a label value's 63 characters; ":" is not allowed in one.
func labelValue(s string) string {
	out := []rune{}
	for _, c := range s {
		if len(out) == 63 {
			break
		}
		if c == ':' {
			c = '.'
		}
		out = append(out, c)
	}
	return string(out)
}

// historyImages lists the container images of the workloads the results measured, read now:
// after Restoring, so they are the environment's own images (a variant's image change is part
// of the fingerprint). A workload that cannot be read is left out.
func historyImages(ctx context.Context, reader client.Reader, exp *perfexpv1alpha1.PerfExperiment) []perfexpv1alpha1.HistoryValue {
	var out []perfexpv1alpha1.HistoryValue
	for _, w := range exp.Status.Results.Workloads {
		var spec *corev1.PodSpec
		key := client.ObjectKey{Namespace: w.Namespace, Name: w.Name}
		switch w.Kind {
		case "Deployment":
			d := &appsv1.Deployment{}
			if reader.Get(ctx, key, d) == nil {
				spec = &d.Spec.Template.Spec
			}
		case "StatefulSet":
			st := &appsv1.StatefulSet{}
			if reader.Get(ctx, key, st) == nil {
				spec = &st.Spec.Template.Spec
			}
		}
		if spec == nil {
			continue
		}
		for _, c := range spec.Containers {
			out = append(out, perfexpv1alpha1.HistoryValue{Name: fmt.Sprintf("%s/%s/%s", w.Kind, w.Name, c.Name), Value: c.Image})
		}
	}
	return out
}
