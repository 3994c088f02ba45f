package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/cli-runtime/pkg/resource"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/admission"
)

// The kinds plan reads.
const (
	planKindExperiment = "PerfExperiment"
	planKindSweep      = "PerfSweep"
)

// planDoc is what plan prints: every plan, the assumptions of its estimates, and the objects
// of the input it had nothing to plan for.
type planDoc struct {
	Plans       []*objectPlan `json:"plans"`
	Assumptions allowances    `json:"assumptions"`
	Skipped     []string      `json:"skipped,omitempty"`
}

const planExamples = `  # What a study costs before it is queued: its runs, their load and environment time
  kubectl perfexp plan -k scenarios/studies/cpu-limits/short

  # Every experiment and sweep of a directory, as JSON
  kubectl perfexp plan -f scenarios/demo -o json

  # From standard input, with slower rollouts than the default estimate
  kustomize build scenarios/demo-sweep | kubectl perfexp plan -f - --rollout-time 1m`

func planCommand(flags *kubeFlags) *cobra.Command {
	var files []string
	var kustomize string
	var recursive bool
	a := defaultAllowances()
	var o *output
	cmd := &cobra.Command{
		Use:   "plan -f FILE|DIR|- | -k DIR",
		Short: "Show what the experiments and sweeps of some manifests will run and cost, before they are applied (no cluster needed)",
		Long: `plan reads PerfExperiments and PerfSweeps as kubectl apply would (-f files, directories or -
for standard input, -k a kustomization), gives each the defaults and the checks the API server
gives it (the CRDs built into the plugin), and prints for each what it will run: its arms with
their runs, warm-up and load, the environment time a run takes, and the totals, from the fewest
runs it may make (a sequential sweep decided at its first look, a capacity search that breaks
at once) to the most (its whole budget), with the queue it waits in.

The load times are the spec's. The time around them (rolling out and restoring the variant,
the setup and teardown Jobs, starting the load pods) is an estimate from --rollout-time,
--job-time and --pod-time; the bound is what the run's timeouts allow before the operator
fails it. Nothing is sent to a cluster.`,
		Example: planExamples,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := o.validate(); err != nil {
				return err
			}
			if len(files) == 0 && kustomize == "" {
				return errors.New("give the manifests to plan with -f FILE|DIR|- or -k DIR")
			}
			// As kubectl apply: objects without a namespace get -n's, else the kubeconfig
			// context's; plan reads no cluster, so a kubeconfig it cannot read means default.
			ns := flags.namespaceFlag()
			if ns == "" {
				ns = "default"
				if n, _, err := flags.ToRawKubeConfigLoader().Namespace(); err == nil && n != "" {
					ns = n
				}
			}
			doc, planErr := planManifests(cmd.Context(), ns, resource.FilenameOptions{Filenames: files, Kustomize: kustomize, Recursive: recursive}, a)
			if doc != nil && len(doc.Plans) > 0 {
				if err := printPlans(cmd.OutOrStdout(), doc, o); err != nil {
					return err
				}
			}
			return planErr
		},
	}
	cmd.Flags().StringSliceVarP(&files, "filename", "f", nil, "a file, a directory or - (standard input) with the PerfExperiments and PerfSweeps to plan")
	cmd.Flags().StringVarP(&kustomize, "kustomize", "k", "", "a kustomization directory to plan, as kubectl apply -k builds it")
	cmd.Flags().BoolVarP(&recursive, "recursive", "R", false, "read the directories given with -f recursively")
	cmd.Flags().Var(&a.Rollout, "rollout-time", "estimated time of one rollout of the variant's workloads (applied, then restored)")
	cmd.Flags().Var(&a.Job, "job-time", "estimated time of one setup or teardown Job")
	cmd.Flags().Var(&a.Pods, "pod-time", "estimated start-up time of one set of load pods (warm-up, scenarios)")
	cmd.Flags().Var(&a.DefaultOverall, "default-overall-timeout", "the operator's --default-overall-timeout, which bounds runs without timeouts.overall")
	o = addOutput(cmd, "", "wide")
	return cmd
}

// planManifests reads the manifests and plans every PerfExperiment and PerfSweep in them. The
// error joins what kept objects from being planned; the plans of the others are returned.
func planManifests(ctx context.Context, namespace string, in resource.FilenameOptions, a allowances) (*planDoc, error) {
	infos, err := resource.NewLocalBuilder().Unstructured().ContinueOnError().
		FilenameParam(false, &in).Flatten().Do().Infos()
	if err != nil {
		return nil, err
	}
	doc := &planDoc{Assumptions: a}
	var errs []error
	for _, info := range infos {
		u, ok := info.Object.(*unstructured.Unstructured)
		if !ok {
			continue
		}
		if u.GetNamespace() == "" {
			// As kubectl apply sends it (a local builder cannot tell which kinds are
			// namespaced, so it leaves this to us).
			u.SetNamespace(namespace)
		}
		if u.GetName() == "" && u.GetGenerateName() != "" {
			// kubectl create gives it a name: generateName and 5 random characters.
			u.SetName(u.GetGenerateName() + "xxxxx")
		}
		gvk := u.GroupVersionKind()
		if gvk.Group != perfexpv1alpha1.GroupVersion.Group {
			skipped := gvk.Kind + "/" + u.GetName()
			if gvk.Kind == "Kustomization" {
				// Read as a manifest by -f DIR, as kubectl apply -f would.
				skipped = info.Source + " (a kustomization: plan it with -k)"
			}
			doc.Skipped = append(doc.Skipped, skipped)
			continue
		}
		where := fmt.Sprintf("%s %s/%s (%s)", gvk.Kind, u.GetNamespace(), u.GetName(), info.Source)
		if gvk.Version != perfexpv1alpha1.GroupVersion.Version {
			errs = append(errs, fmt.Errorf("%s: perfexp serves %s, not %s", where, perfexpv1alpha1.GroupVersion, gvk.GroupVersion()))
			continue
		}
		if gvk.Kind == "PerfHistory" {
			doc.Skipped = append(doc.Skipped, gvk.Kind+"/"+u.GetName())
			continue
		}
		p, err := planObject(ctx, u, a)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", where, err))
			continue
		}
		p.Source = info.Source
		doc.Plans = append(doc.Plans, p)
	}
	if len(doc.Plans) == 0 && len(errs) == 0 {
		errs = append(errs, errors.New("no PerfExperiment or PerfSweep in the input: nothing to plan"))
	}
	return doc, errors.Join(errs...)
}

// plannedKinds are the kinds plan reads, with their CRDs (built into the binary) loaded once.
var plannedKinds = sync.OnceValue(func() map[string]*admission.CRD {
	out := map[string]*admission.CRD{}
	for _, k := range []string{planKindExperiment, planKindSweep} {
		if c, err := admission.ForKind(k); err == nil {
			out[k] = c
		}
	}
	return out
})

// planObject admits one object as the API server would (pruning, defaults, schema and CEL
// rules) and plans it. Every run is given a timeouts object first, so that the CRD's defaults
// of the step timeouts fill it in as they would a timeouts the user had written empty.
func planObject(ctx context.Context, u *unstructured.Unstructured, a allowances) (*objectPlan, error) {
	kind := u.GetKind()
	crd, ok := plannedKinds()[kind]
	if !ok {
		return nil, fmt.Errorf("unknown kind %s: plan reads PerfExperiment and PerfSweep", kind)
	}
	u = u.DeepCopy()
	path := []string{"spec", "timeouts"}
	if kind == planKindSweep {
		path = []string{"spec", "template", "timeouts"}
	}
	if _, found, _ := unstructured.NestedFieldNoCopy(u.Object, path...); !found {
		if _, hasSpec := u.Object["spec"].(map[string]any); hasSpec {
			_ = unstructured.SetNestedField(u.Object, map[string]any{}, path...)
		}
	}
	if errs := crd.Create(ctx, u); len(errs) > 0 {
		return nil, fmt.Errorf("the API server would refuse it: %w", errs.ToAggregate())
	}
	switch kind {
	case planKindSweep:
		s := &perfexpv1alpha1.PerfSweep{}
		if err := fromUnstructured(u, s); err != nil {
			return nil, err
		}
		return planSweep(s, a)
	default:
		exp := &perfexpv1alpha1.PerfExperiment{}
		if err := fromUnstructured(u, exp); err != nil {
			return nil, err
		}
		return planExperiment(exp, a)
	}
}

func fromUnstructured(u *unstructured.Unstructured, into any) error {
	// Through JSON, as the API server stores it: durations are strings there.
	data, err := json.Marshal(u.Object)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(data, into); err != nil {
		return fmt.Errorf("reading it as %s: %w", u.GetKind(), err)
	}
	return nil
}
