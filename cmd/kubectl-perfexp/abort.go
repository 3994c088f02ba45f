package main

import (
	"fmt"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
)

// The values of --dry-run, kubectl's.
const (
	dryRunNone   = "none"
	dryRunClient = "client"
	dryRunServer = "server"
)

func abortCommand(connect clientFactory, flags *kubeFlags) *cobra.Command {
	var o *output
	var dryRun string
	cmd := &cobra.Command{
		Use:   "abort NAME",
		Short: "Abort an experiment: stop its load, restore the environment and end it as Aborted",
		Example: `  # Stop a running experiment; perfexp restores the environment before it ends as Aborted
  kubectl perfexp abort demo-no-cpu-limits -n perfexp-demo

  # The same, printing only what a script needs
  kubectl perfexp abort demo-no-cpu-limits -n perfexp-demo -o name

  # Check the abort would be accepted (your rights, the admission policies) without making it
  kubectl perfexp abort demo-no-cpu-limits -n perfexp-demo --dry-run=server`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: completeExperiments(connect, flags, 1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.validate(); err != nil {
				return err
			}
			if dryRun != dryRunNone && dryRun != dryRunClient && dryRun != dryRunServer {
				return fmt.Errorf(`--dry-run must be "none", "server", or "client", got %q`, dryRun)
			}
			conn, err := connect(flags)
			if err != nil {
				return err
			}
			exp := &perfexpv1alpha1.PerfExperiment{}
			exp.Namespace, exp.Name = conn.namespace, args[0]
			suffix := ""
			switch dryRun {
			case dryRunClient:
				// As kubectl's client dry run: the object is read, nothing is sent to change it.
				if err := conn.client.Get(cmd.Context(), client.ObjectKeyFromObject(exp), exp); err != nil {
					return notFoundIn(err, exp.Name, exp.Namespace)
				}
				exp.Spec.Abort = true
				suffix = " (dry run)"
			default:
				var opts []client.PatchOption
				if dryRun == dryRunServer {
					// The API server checks the patch (RBAC, admission) and stores nothing.
					opts, suffix = append(opts, client.DryRunAll), " (server dry run)"
				}
				patch := client.RawPatch(types.MergePatchType, []byte(`{"spec":{"abort":true}}`))
				if err := conn.client.Patch(cmd.Context(), exp, patch, opts...); err != nil {
					return notFoundIn(err, exp.Name, exp.Namespace)
				}
			}
			// The abort is recorded once the patch succeeded; a confirmation line that could
			// not be written must not make it look as if it failed.
			if !o.human() {
				// As kubectl patch does: the change is made, a template that fails says so.
				return o.printObject(cmd.OutOrStdout(), exp)
			}
			_, _ = fmt.Fprintf(cmd.OutOrStdout(), "perfexperiment %s/%s aborting (phase %s)%s\n", exp.Namespace, exp.Name, phaseOf(exp), suffix)
			return nil
		},
	}
	cmd.Flags().StringVar(&dryRun, "dry-run", dryRunNone, `"none", "server" (the API server checks the abort and keeps nothing) or "client" (only read the experiment)`)
	cmd.Flags().Lookup("dry-run").NoOptDefVal = dryRunClient
	o = addOutput(cmd, "")
	return cmd
}
