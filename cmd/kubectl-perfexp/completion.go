package main

import (
	"context"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
)

// Shell completion: cobra's `completion` command writes the script for bash, zsh, fish and
// PowerShell; the functions here give it the names that exist in the cluster. A shell waits
// for them at every <TAB>, so they give up quickly and offer nothing rather than an error.

// completionTimeout bounds one completion's calls to the API server.
const completionTimeout = 5 * time.Second

// completionContext is the command's context with the completion timeout.
func completionContext(cmd *cobra.Command) (context.Context, context.CancelFunc) {
	ctx := cmd.Context()
	if ctx == nil {
		ctx = context.Background()
	}
	return context.WithTimeout(ctx, completionTimeout)
}

// withPrefix keeps the names that start with prefix, sorted, each with its description after a
// tab (shells that show descriptions show it; the others drop it).
func withPrefix(names map[string]string, prefix string) []cobra.Completion {
	var out []cobra.Completion
	for n, desc := range names {
		if !strings.HasPrefix(n, prefix) {
			continue
		}
		out = append(out, cobra.CompletionWithDesc(n, desc))
	}
	sort.Strings(out)
	return out
}

// experimentNames maps the experiments of the namespace to a short description.
func experimentNames(ctx context.Context, conn *connection) (map[string]string, error) {
	list := &perfexpv1alpha1.PerfExperimentList{}
	if err := conn.client.List(ctx, list, client.InNamespace(conn.namespace)); err != nil {
		return nil, err
	}
	names := make(map[string]string, len(list.Items))
	for i := range list.Items {
		e := &list.Items[i]
		desc := "experiment, " + phaseOf(e)
		if e.Status.Verdict != "" {
			desc += ", " + string(e.Status.Verdict)
		}
		names[e.Name] = desc
	}
	return names, nil
}

// sweepNames maps the sweeps of the namespace to a short description.
func sweepNames(ctx context.Context, conn *connection) (map[string]string, error) {
	list := &perfexpv1alpha1.PerfSweepList{}
	if err := conn.client.List(ctx, list, client.InNamespace(conn.namespace)); err != nil {
		return nil, err
	}
	names := make(map[string]string, len(list.Items))
	for i := range list.Items {
		phase := string(list.Items[i].Status.Phase)
		if phase == "" {
			phase = string(perfexpv1alpha1.SweepPending)
		}
		names[list.Items[i].Name] = "sweep, " + phase
	}
	return names, nil
}

// completeNames runs one completion: connect, read the names, keep those matching.
func completeNames(connect clientFactory, flags *kubeFlags, cmd *cobra.Command, toComplete string,
	read func(context.Context, *connection) (map[string]string, error)) ([]cobra.Completion, cobra.ShellCompDirective) {
	conn, err := connect(flags)
	if err != nil {
		cobra.CompErrorln(err.Error())
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	ctx, cancel := completionContext(cmd)
	defer cancel()
	names, err := read(ctx, conn)
	if err != nil {
		cobra.CompErrorln(err.Error())
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	return withPrefix(names, toComplete), cobra.ShellCompDirectiveNoFileComp
}

// completeExperiments completes experiment names for the first n arguments.
func completeExperiments(connect clientFactory, flags *kubeFlags, n int) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if len(args) >= n {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		return completeNames(connect, flags, cmd, toComplete, experimentNames)
	}
}

// completeWatch completes watch's argument: an experiment or a sweep.
func completeWatch(connect clientFactory, flags *kubeFlags) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if len(args) >= 1 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		return completeNames(connect, flags, cmd, toComplete, experimentAndSweepNames)
	}
}

// experimentAndSweepNames are the experiments and the sweeps of the namespace; an experiment
// wins a name both have.
func experimentAndSweepNames(ctx context.Context, conn *connection) (map[string]string, error) {
	names, err := experimentNames(ctx, conn)
	if err != nil {
		return nil, err
	}
	sweeps, err := sweepNames(ctx, conn)
	if err != nil {
		// Completing experiments is still worth it when sweeps cannot be listed.
		return names, nil
	}
	for n, d := range sweeps {
		if _, clash := names[n]; !clash {
			names[n] = d
		}
	}
	return names, nil
}

// completeCompare completes compare's arguments: an experiment or a sweep first, then the
// experiment to compare with the first one (never a sweep: a sweep is compared alone).
func completeCompare(connect clientFactory, flags *kubeFlags) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		switch len(args) {
		case 0:
			return completeNames(connect, flags, cmd, toComplete, experimentAndSweepNames)
		case 1:
			return completeNames(connect, flags, cmd, toComplete, func(ctx context.Context, conn *connection) (map[string]string, error) {
				names, err := experimentNames(ctx, conn)
				delete(names, args[0])
				return names, err
			})
		}
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
}

// completeQueues completes the queue names experiments of the namespace are in.
func completeQueues(connect clientFactory, flags *kubeFlags) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if len(args) > 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		return completeNames(connect, flags, cmd, toComplete, func(ctx context.Context, conn *connection) (map[string]string, error) {
			list := &perfexpv1alpha1.PerfExperimentList{}
			if err := conn.client.List(ctx, list, client.InNamespace(conn.namespace)); err != nil {
				return nil, err
			}
			waiting := map[string]int{}
			for i := range list.Items {
				e := &list.Items[i]
				if q := e.Status.Queue; q != "" {
					if _, seen := waiting[q]; !seen {
						waiting[q] = 0
					}
					if !e.Status.Phase.IsTerminal() {
						waiting[q]++
					}
				}
			}
			names := make(map[string]string, len(waiting))
			for q, n := range waiting {
				names[q] = "queue, " + plural(n, "unfinished experiment")
			}
			return names, nil
		})
	}
}

// registerFlagCompletion completes the values of kubectl's --namespace and --context flags, as
// kubectl itself does.
func registerFlagCompletion(root *cobra.Command, connect clientFactory, flags *kubeFlags) {
	_ = root.RegisterFlagCompletionFunc("namespace", func(cmd *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		return completeNames(connect, flags, cmd, toComplete, func(ctx context.Context, conn *connection) (map[string]string, error) {
			list := &corev1.NamespaceList{}
			if err := conn.client.List(ctx, list); err != nil {
				return nil, err
			}
			names := make(map[string]string, len(list.Items))
			for _, ns := range list.Items {
				names[ns.Name] = "namespace"
			}
			return names, nil
		})
	})
	_ = root.RegisterFlagCompletionFunc("context", func(_ *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if flags.ConfigFlags == nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		raw, err := flags.ToRawKubeConfigLoader().RawConfig()
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		names := make(map[string]string, len(raw.Contexts))
		for name, c := range raw.Contexts {
			names[name] = "context, cluster " + c.Cluster
		}
		return withPrefix(names, toComplete), cobra.ShellCompDirectiveNoFileComp
	})
}

// plural renders "1 thing" or "n things".
func plural(n int, thing string) string {
	if n == 1 {
		return "1 " + thing
	}
	return strconv.Itoa(n) + " " + thing + "s"
}
