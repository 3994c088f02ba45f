package controllers

import (
	"context"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kschema "k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/log"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/sweep"
	"github.com/perfexp/perfexp/internal/text"
)

// createRuns creates every planned run that does not exist yet, in the interleaved order. Names
// are deterministic, so a second reconcile (a re-applied sweep, a restarted operator, a stale
// cache) finds the runs or gets AlreadyExists, and never makes a duplicate. Existing runs are
// never changed: they may already have run.
func (r *PerfSweepReconciler) createRuns(ctx context.Context, s *sweepScope) error {
	sw := s.sweep
	created := 0
	var leftovers []string
	for _, run := range s.plan.Runs {
		if _, ok := s.runs[run.Name]; ok {
			continue
		}
		exp, err := s.plan.Experiment(sw, run)
		if err != nil {
			return r.refuseRun(sw, run, err)
		}
		if err := controllerutil.SetControllerReference(sw, exp, r.Scheme()); err != nil {
			return err
		}
		err = r.Create(ctx, exp)
		switch {
		case err == nil:
			created++
			s.runs[run.Name] = exp
		case apierrors.IsAlreadyExists(err):
			existing := &perfexpv1alpha1.PerfExperiment{}
			if err := r.Get(ctx, client.ObjectKey{Namespace: sw.Namespace, Name: run.Name}, existing); err != nil {
				return err
			}
			ref := metav1.GetControllerOf(existing)
			if earlierSweep(sw, ref) {
				// The run of an earlier sweep of this name (deleted and applied again) that the
				// garbage collector has not removed yet: that sweep is gone, so the run is
				// garbage; delete it (its finalizer restores what it changed) and wait.
				if existing.DeletionTimestamp == nil {
					err := r.Delete(ctx, existing, client.PropagationPolicy(metav1.DeletePropagationBackground), client.Preconditions{UID: &existing.UID})
					if client.IgnoreNotFound(err) != nil && !apierrors.IsConflict(err) {
						return fmt.Errorf("deleting run %s of an earlier sweep named %s: %w", run.Name, sw.Name, err)
					}
				}
				leftovers = append(leftovers, run.Name)
				continue
			}
			if ref == nil || ref.UID != sw.UID {
				return r.refuseRun(sw, run, fmt.Errorf("a PerfExperiment named %s already exists and does not belong to this sweep", run.Name))
			}
			s.runs[run.Name] = existing
		case apierrors.IsInvalid(err) || apierrors.IsForbidden(err) || apierrors.IsBadRequest(err):
			return r.refuseRun(sw, run, err)
		default:
			return fmt.Errorf("creating run %s: %w", run.Name, err)
		}
	}
	if created > 0 {
		log.FromContext(ctx).Info("Created the sweep's runs", "created", created, "total", len(s.plan.Runs))
	}
	if len(leftovers) > 0 {
		return &errLeftoverRuns{sweep: sw.Name, runs: leftovers}
	}
	setSweepCondition(sw, perfexpv1alpha1.ConditionExperimentsCreated, metav1.ConditionTrue, perfexpv1alpha1.ReasonCreated,
		"all %d runs exist", len(s.plan.Runs))
	return nil
}

// refuseRun records that a run cannot be created as planned. The sweep stops creating runs
// (the rest would be refused the same way) and fails; the runs that exist carry on.
func (r *PerfSweepReconciler) refuseRun(sw *perfexpv1alpha1.PerfSweep, run sweep.Run, err error) error {
	msg := fmt.Sprintf("run %s (arm %s, repeat %d) could not be created: %v", run.Name, run.Arm, run.Repeat, err)
	setSweepCondition(sw, perfexpv1alpha1.ConditionExperimentsCreated, metav1.ConditionFalse, perfexpv1alpha1.ReasonCreateFailed, "%s", msg)
	setSweepCondition(sw, perfexpv1alpha1.ConditionReady, metav1.ConditionFalse, perfexpv1alpha1.ReasonCreateFailed, "%s", msg)
	sw.Status.Phase = perfexpv1alpha1.SweepFailed
	sw.Status.Message = text.Truncate(msg, 1024)
	return nil
}

// errLeftoverRuns: runs of an earlier sweep of the same name hold names this sweep needs; they
// are being deleted, and the reconcile is tried again until they are gone.
type errLeftoverRuns struct {
	sweep string
	runs  []string
}

func (e *errLeftoverRuns) Error() string {
	return fmt.Sprintf("waiting for %d run(s) of an earlier sweep named %s to be deleted (%s)", len(e.runs), e.sweep, strings.Join(e.runs, ", "))
}

// earlierSweep reports whether owner is a PerfSweep of the sweep's name but not the sweep itself.
func earlierSweep(sw *perfexpv1alpha1.PerfSweep, owner *metav1.OwnerReference) bool {
	if owner == nil || owner.Kind != "PerfSweep" || owner.Name != sw.Name || owner.UID == sw.UID {
		return false
	}
	gv, err := kschema.ParseGroupVersion(owner.APIVersion)
	return err == nil && gv.Group == perfexpv1alpha1.GroupVersion.Group
}

// updateProgress writes the runs' progress into the status and returns it.
func (r *PerfSweepReconciler) updateProgress(s *sweepScope) sweep.Progress {
	sw := s.sweep
	p := sweep.Summarize(s.plan, s.runs)
	sw.Status.Total, sw.Status.Done, sw.Status.Failed = int32(p.Total), int32(p.Done), int32(p.Failed)
	sw.Status.Progress = fmt.Sprintf("%d/%d", p.Done, p.Total)
	sw.Status.CurrentArm, sw.Status.CurrentExperiment = p.CurrentArm, p.CurrentExperiment
	// Keep the verdicts of a report already written; counts come from the runs.
	verdicts := map[string]perfexpv1alpha1.SweepArmStatus{}
	for _, a := range sw.Status.Arms {
		verdicts[a.Name] = a
	}
	sw.Status.Arms = p.Arms
	for i := range sw.Status.Arms {
		if v, ok := verdicts[sw.Status.Arms[i].Name]; ok {
			sw.Status.Arms[i].Change, sw.Status.Arms[i].Message = v.Change, v.Message
		}
	}
	if sw.Status.Phase == perfexpv1alpha1.SweepFailed {
		return p // a refused run: the status already says why
	}
	if !p.AllEnded() {
		sw.Status.Phase = perfexpv1alpha1.SweepRunning
		msg := fmt.Sprintf("%d of %d runs ended", p.Done, p.Total)
		if p.CurrentExperiment != "" {
			msg += fmt.Sprintf("; %s (arm %s) holds the environment", p.CurrentExperiment, p.CurrentArm)
		}
		sw.Status.Message = msg
		setSweepCondition(sw, perfexpv1alpha1.ConditionReported, metav1.ConditionFalse, perfexpv1alpha1.ReasonRunsInProgress, "%s", msg)
		setSweepCondition(sw, perfexpv1alpha1.ConditionReady, metav1.ConditionUnknown, perfexpv1alpha1.ReasonRunsInProgress, "%s", msg)
	}
	return p
}

// sweepLabel is the value of the perfexp.dev/sweep label on the sweep's runs.
func sweepLabel(sw *perfexpv1alpha1.PerfSweep) string {
	return sweep.LabelValue(sw.Name)
}

func equalSweepStatus(a, b *perfexpv1alpha1.PerfSweep) bool {
	return equality.Semantic.DeepEqual(a.Status, b.Status)
}
