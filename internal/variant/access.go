package variant

import (
	"context"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/access"
	"github.com/perfexp/perfexp/internal/step"
)

// rulesOf builds the access rules an Environment enforces from its options: deny by default,
// so a namespace must be listed or labelled and a generic patch kind listed.
func rulesOf(opts Options, reader access.Reader) *access.Rules {
	kinds := opts.GenericPatchKinds
	if kinds == nil {
		kinds = access.DefaultGenericPatchKinds
	}
	return &access.Rules{
		Reader:                reader,
		AllowedNamespaces:     opts.AllowedNamespaces,
		OperatorNamespaces:    opts.OperatorNamespaces,
		WatchedNamespaces:     opts.WatchedNamespaces,
		GenericPatchKinds:     kinds,
		RunnerServiceAccount:  opts.RunnerServiceAccount,
		RunnerServiceAccounts: opts.RunnerServiceAccounts,
		RunnerImages:          opts.RunnerImages,
		DefaultImage:          opts.DefaultImage,
		RunnerPlacement:       opts.RunnerPlacement,
		PrometheusURLs:        opts.PrometheusURLs,
	}
}

// admit runs the access rules before anything else in Prepare, so a refused experiment fails
// with nothing read from or written to the environment. It returns nil when exp may go on.
func (e *Environment) admit(ctx context.Context, exp *perfexpv1alpha1.PerfExperiment) (*step.Result, error) {
	refusal, err := e.rules.Experiment(ctx, exp)
	if err != nil || refusal == nil {
		return nil, err
	}
	r := step.Fail(refusal.Reason, "%s", refusal.Message)
	return &r, nil
}
