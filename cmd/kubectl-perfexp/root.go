package main

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/report"
)

// connection is what the commands need: a client and the namespace to work in.
type connection struct {
	client    client.Client
	namespace string
}

// clientFactory connects with the given kubeconfig flags.
type clientFactory func(flags *kubeFlags) (*connection, error)

type kubeFlags struct {
	kubeconfig, context, namespace string
}

func scheme() *runtime.Scheme {
	s := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(s)
	_ = perfexpv1alpha1.AddToScheme(s)
	return s
}

// kubeconfigClient connects as kubectl does: $KUBECONFIG or ~/.kube/config, the current
// context and its namespace, unless flags say otherwise.
func kubeconfigClient(f *kubeFlags) (*connection, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	if f.kubeconfig != "" {
		rules.ExplicitPath = f.kubeconfig
	}
	overrides := &clientcmd.ConfigOverrides{CurrentContext: f.context}
	cfg := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, overrides)
	rest, err := cfg.ClientConfig()
	if err != nil {
		return nil, err
	}
	ns, _, err := cfg.Namespace()
	if err != nil {
		return nil, err
	}
	if f.namespace != "" {
		ns = f.namespace
	}
	c, err := client.New(rest, client.Options{Scheme: scheme()})
	if err != nil {
		return nil, err
	}
	return &connection{client: c, namespace: ns}, nil
}

func newRootCommand(connect clientFactory) *cobra.Command {
	flags := &kubeFlags{}
	root := &cobra.Command{
		Use:           "kubectl-perfexp",
		Short:         "Work with perfexp performance experiments",
		SilenceUsage:  true,
		SilenceErrors: false,
	}
	root.PersistentFlags().StringVar(&flags.kubeconfig, "kubeconfig", "", "path to the kubeconfig file")
	root.PersistentFlags().StringVar(&flags.context, "context", "", "kubeconfig context to use")
	root.PersistentFlags().StringVarP(&flags.namespace, "namespace", "n", "", "namespace of the experiments (default: the context's)")
	root.AddCommand(reportCommand(connect, flags), queueCommand(connect, flags), abortCommand(connect, flags),
		compareCommand(connect, flags), historyCommand(connect, flags))
	return root
}

func reportCommand(connect clientFactory, flags *kubeFlags) *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:   "report NAME",
		Short: "Print an experiment's report: Markdown (-o md), the full results (-o json), a page with charts (-o html) or the Grafana dashboard (-o dashboard)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			key, ok := map[string]string{"md": report.KeyMarkdown, "markdown": report.KeyMarkdown, "json": report.KeyJSON,
				"dashboard": report.KeyDashboard, "html": report.KeyHTML}[output]
			if !ok {
				return fmt.Errorf("unknown output %q: use md, json, html or dashboard", output)
			}
			conn, err := connect(flags)
			if err != nil {
				return err
			}
			return printReport(cmd.Context(), cmd.OutOrStdout(), conn, args[0], key)
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "md", "md, json, html or dashboard")
	return cmd
}

func printReport(ctx context.Context, out io.Writer, conn *connection, name, key string) error {
	exp := &perfexpv1alpha1.PerfExperiment{}
	if err := conn.client.Get(ctx, client.ObjectKey{Namespace: conn.namespace, Name: name}, exp); err != nil {
		return err
	}
	if exp.Status.ReportRef == nil {
		return fmt.Errorf("experiment %s/%s has no report yet (phase %s)", conn.namespace, name, phaseOf(exp))
	}
	cm := &corev1.ConfigMap{}
	if err := conn.client.Get(ctx, client.ObjectKey{Namespace: conn.namespace, Name: exp.Status.ReportRef.Name}, cm); err != nil {
		if apierrors.IsNotFound(err) {
			return fmt.Errorf("the report ConfigMap %s of experiment %s is gone", exp.Status.ReportRef.Name, name)
		}
		return err
	}
	data, ok := cm.Data[key]
	if !ok {
		return fmt.Errorf("the report ConfigMap %s has no %s", cm.Name, key)
	}
	_, err := io.WriteString(out, strings.TrimRight(data, "\n")+"\n")
	return err
}

func phaseOf(exp *perfexpv1alpha1.PerfExperiment) string {
	if exp.Status.Phase == "" {
		return string(perfexpv1alpha1.PhasePending)
	}
	return string(exp.Status.Phase)
}

func queueCommand(connect clientFactory, flags *kubeFlags) *cobra.Command {
	var all bool
	cmd := &cobra.Command{
		Use:   "queue [QUEUE]",
		Short: "List the experiments that run or wait, per queue, in the order they will run",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			conn, err := connect(flags)
			if err != nil {
				return err
			}
			list := &perfexpv1alpha1.PerfExperimentList{}
			var opts []client.ListOption
			if !all {
				opts = append(opts, client.InNamespace(conn.namespace))
			}
			if err := conn.client.List(cmd.Context(), list, opts...); err != nil {
				return err
			}
			queue := ""
			if len(args) == 1 {
				queue = args[0]
			}
			return printQueue(cmd.OutOrStdout(), list.Items, queue, time.Now())
		},
	}
	cmd.Flags().BoolVarP(&all, "all-namespaces", "A", false, "list experiments of every namespace")
	return cmd
}

// printQueue lists unfinished experiments: those holding their queue first, then the waiting
// ones by queue position.
func printQueue(out io.Writer, items []perfexpv1alpha1.PerfExperiment, queue string, now time.Time) error {
	var rows []perfexpv1alpha1.PerfExperiment
	for _, e := range items {
		if e.Status.Phase.IsTerminal() || (queue != "" && e.Status.Queue != queue) {
			continue
		}
		rows = append(rows, e)
	}
	rank := func(e perfexpv1alpha1.PerfExperiment) int32 {
		if e.Status.QueuePosition > 0 {
			return e.Status.QueuePosition
		}
		if e.Status.Phase == "" || e.Status.Phase == perfexpv1alpha1.PhasePending {
			return 1 << 30
		}
		return 0 // running, restoring or analysing
	}
	sort.SliceStable(rows, func(i, j int) bool {
		if rows[i].Status.Queue != rows[j].Status.Queue {
			return rows[i].Status.Queue < rows[j].Status.Queue
		}
		return rank(rows[i]) < rank(rows[j])
	})
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	if _, err := fmt.Fprintln(w, "QUEUE\tPOSITION\tNAMESPACE\tNAME\tPHASE\tPRIORITY\tAGE"); err != nil {
		return err
	}
	for _, e := range rows {
		pos := "-"
		if e.Status.QueuePosition > 0 {
			pos = fmt.Sprint(e.Status.QueuePosition)
		}
		if _, err := fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%d\t%s\n", orDash(e.Status.Queue), pos, e.Namespace, e.Name, phaseOf(&e), e.Spec.Priority,
			now.Sub(e.CreationTimestamp.Time).Round(time.Second)); err != nil {
			return err
		}
	}
	return w.Flush()
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func abortCommand(connect clientFactory, flags *kubeFlags) *cobra.Command {
	return &cobra.Command{
		Use:   "abort NAME",
		Short: "Abort an experiment: stop its load, restore the environment and end it as Aborted",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			conn, err := connect(flags)
			if err != nil {
				return err
			}
			exp := &perfexpv1alpha1.PerfExperiment{}
			exp.Namespace, exp.Name = conn.namespace, args[0]
			patch := client.RawPatch(types.MergePatchType, []byte(`{"spec":{"abort":true}}`))
			if err := conn.client.Patch(cmd.Context(), exp, patch); err != nil {
				return err
			}
			// The abort is recorded once the patch succeeded; a confirmation line that could
			// not be written must not make it look as if it failed.
			_, _ = fmt.Fprintf(cmd.OutOrStdout(), "perfexperiment %s/%s aborting (phase %s)\n", exp.Namespace, exp.Name, phaseOf(exp))
			return nil
		},
	}
}
