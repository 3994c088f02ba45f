package controllers

import (
	"context"
	"fmt"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/step"
)

// QueryChecker is an Analyzer that can try an experiment's custom queries before its run, so a
// typo costs a failed apply-and-wait of seconds rather than a whole soak.
type QueryChecker interface {
	// CheckQueries fails (step.Fail) when a query can never give a result. It passes when it
	// cannot tell, for example when Prometheus does not answer.
	CheckQueries(ctx context.Context, exp *perfexpv1alpha1.PerfExperiment) (step.Result, error)
}

// precheckTimeout bounds the trial of the queries: the experiment holds its queue's lock
// meanwhile, and a slow Prometheus is no reason to refuse a run.
const precheckTimeout = 10 * time.Second

// maxBaselineChain bounds the walk along spec.baseline; longer chains are not cycles but are
// not followed further.
const maxBaselineChain = 64

// precheck finds, when the experiment leaves the queue and before anything is patched, what
// would otherwise fail it only after its load: a baseline that does not exist, a chain of
// baselines that loops back, a custom query that cannot run.
func (r *PerfExperimentReconciler) precheck(ctx context.Context, exp *perfexpv1alpha1.PerfExperiment) (step.Result, error) {
	if res, err := r.recheckJoin(ctx, exp); err != nil || res.Failure != nil {
		return res, err
	}
	if exp.Spec.Baseline != nil {
		lookup := func(name string) (string, bool, error) {
			b := &perfexpv1alpha1.PerfExperiment{}
			err := r.Get(ctx, client.ObjectKey{Namespace: exp.Namespace, Name: name}, b)
			switch {
			case apierrors.IsNotFound(err):
				return "", false, nil
			case err != nil:
				return "", false, err
			case b.Spec.Baseline == nil:
				return "", true, nil
			}
			return b.Spec.Baseline.Name, true, nil
		}
		if res, err := checkBaselineChain(exp.Namespace, exp.Name, exp.Spec.Baseline.Name, lookup); err != nil || res.Failure != nil {
			return res, err
		}
	}
	if qc, ok := r.Analyzer.(QueryChecker); ok {
		ctx, cancel := context.WithTimeout(ctx, precheckTimeout)
		defer cancel()
		return qc.CheckQueries(ctx, exp)
	}
	return step.Done(), nil
}

// recheckJoin runs again, as the experiment takes its queue's lock, the checks of Pending: the
// spec is frozen from Queued on (config/policy/spec_frozen.yaml), but an edit admitted while
// the experiment was still Pending, after those checks ran, would otherwise reach the
// environment unchecked: another target under the old queue's lock, or a timeout and load
// beyond the operator's maximum.
func (r *PerfExperimentReconciler) recheckJoin(ctx context.Context, exp *perfexpv1alpha1.PerfExperiment) (step.Result, error) {
	wanted := exp.Spec.Queue
	if wanted == "" {
		wanted = exp.TargetNamespace()
	}
	if joined := exp.Status.Queue; joined != "" && wanted != joined {
		return step.Fail(perfexpv1alpha1.ReasonQueueNotAllowed,
			"the spec now asks for queue %s (spec.queue or spec.targetNamespace changed after the experiment joined queue %s); the spec is frozen once an experiment joins its queue: create a new experiment instead",
			wanted, joined), nil
	}
	if problem := r.overallTimeoutProblem(exp); problem != "" {
		return step.Fail(perfexpv1alpha1.ReasonInvalidTimeouts, "%s (the spec changed after the experiment joined its queue)", problem), nil
	}
	problem, err := r.queueProblem(ctx, exp)
	if err != nil || problem == "" {
		return step.Done(), err
	}
	return step.Fail(perfexpv1alpha1.ReasonQueueNotAllowed, "%s", problem), nil
}

// checkBaselineChain follows spec.baseline from the experiment self, whose baseline is first.
// lookup returns the baseline named by an experiment of the namespace and whether that
// experiment exists. The first baseline must exist; further ones are their own experiments'
// concern (a missing one there only means nothing more to compare), but coming back to an
// experiment already seen is a cycle in which each would wait for the other's results.
func checkBaselineChain(namespace, self, first string, lookup func(name string) (string, bool, error)) (step.Result, error) {
	chain := []string{self}
	for name := first; name != "" && len(chain) <= maxBaselineChain; {
		for _, seen := range chain {
			if seen == name {
				return step.Fail(perfexpv1alpha1.ReasonBaselineCycle,
					"spec.baseline loops back: %s -> %s; each would wait for the other's results", strings.Join(chain, " -> "), name), nil
			}
		}
		next, found, err := lookup(name)
		if err != nil {
			return step.Result{}, fmt.Errorf("reading baseline %s: %w", name, err)
		}
		if !found {
			if len(chain) == 1 {
				return step.Fail(perfexpv1alpha1.ReasonBaselineNotFound,
					"spec.baseline names %s, but no PerfExperiment %s exists in namespace %s", name, name, namespace), nil
			}
			break
		}
		chain = append(chain, name)
		name = next
	}
	return step.Done(), nil
}
