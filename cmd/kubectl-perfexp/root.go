package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/report"
)

// connection is what the commands need: a client, the namespace to work in, and the REST
// config the client was made from (the watch command reaches Prometheus through the API
// server's service proxy with it; nil when a test connects without one).
type connection struct {
	client    client.Client
	namespace string
	rest      *rest.Config
}

// clientFactory connects with the given kubeconfig flags.
type clientFactory func(flags *kubeFlags) (*connection, error)

// kubeFlags are kubectl's own connection flags (--kubeconfig, --context, -n/--namespace,
// --as, --token, --server, ...), from cli-runtime, so the plugin connects exactly as the
// kubectl that runs it does.
type kubeFlags struct {
	*genericclioptions.ConfigFlags
}

// namespaceFlag is the -n value given on the command line, or "".
func (f *kubeFlags) namespaceFlag() string {
	if f.ConfigFlags == nil || f.Namespace == nil {
		return ""
	}
	return *f.Namespace
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
	cfg, err := f.ToRESTConfig()
	if err != nil {
		return nil, err
	}
	ns, _, err := f.ToRawKubeConfigLoader().Namespace()
	if err != nil {
		return nil, err
	}
	// A client that can watch: kubectl perfexp watch follows the experiment on a watch.
	c, err := client.NewWithWatch(cfg, client.Options{Scheme: scheme()})
	if err != nil {
		return nil, err
	}
	return &connection{client: c, namespace: ns, rest: cfg}, nil
}

// settings are what the commands take from their surroundings besides the cluster; tests
// replace them.
type settings struct {
	// open shows a file to the user (a browser for an HTML report).
	open func(path string) error
	// watchInterval is how often watch redraws the last state it saw (time left, live numbers).
	watchInterval time.Duration
	// now is the clock watch measures progress with.
	now func() time.Time
	// terminal says whether out is a terminal that watch may redraw in place.
	terminal func(out io.Writer) bool
}

func defaultSettings() settings {
	return settings{open: openInBrowser, watchInterval: 2 * time.Second, now: time.Now, terminal: isTerminal}
}

func newRootCommand(connect clientFactory) *cobra.Command {
	return newRootCommandWith(connect, defaultSettings())
}

func newRootCommandWith(connect clientFactory, set settings) *cobra.Command {
	flags := &kubeFlags{ConfigFlags: genericclioptions.NewConfigFlags(true)}
	root := &cobra.Command{
		Use:           "kubectl-perfexp",
		Short:         "Work with perfexp performance experiments",
		SilenceUsage:  true,
		SilenceErrors: false,
		// kubectl shows plugins as `kubectl perfexp`; usage lines and examples say so too.
		Annotations: map[string]string{cobra.CommandDisplayNameAnnotation: "kubectl perfexp"},
	}
	flags.AddFlags(root.PersistentFlags())
	registerFlagCompletion(root, connect, flags)
	// One line per verb: a new verb is added here and nowhere else.
	root.AddCommand(
		reportCommand(connect, flags, set),
		queueCommand(connect, flags, set),
		abortCommand(connect, flags),
		compareCommand(connect, flags),
		watchCommand(connect, flags, set),
		historyCommand(connect, flags),
		planCommand(flags),
		versionCommand(connect, flags),
	)
	return root
}

const reportExamples = `  # The Markdown report of a finished experiment
  kubectl perfexp report demo-no-cpu-limits -n perfexp-demo

  # The HTML report with charts, written to a file and opened in the browser
  kubectl perfexp report demo-no-cpu-limits -n perfexp-demo -o html --open

  # The full results as JSON, into a file of your choice
  kubectl perfexp report demo-no-cpu-limits -n perfexp-demo -o json --file results.json

  # The Grafana dashboard JSON, to import by hand
  kubectl perfexp report demo-no-cpu-limits -n perfexp-demo -o dashboard > dashboard.json

  # JUnit XML for a CI system: one test case per objective, k6 threshold and primary comparison row
  kubectl perfexp report demo-no-cpu-limits -n perfexp-demo -o junit --file perfexp-junit.xml`

func reportCommand(connect clientFactory, flags *kubeFlags, set settings) *cobra.Command {
	var file string
	var open bool
	var o *output
	cmd := &cobra.Command{
		Use:   "report NAME",
		Short: "Print an experiment's report: Markdown (-o md), the full results (-o json), a page with charts (-o html) or the Grafana dashboard (-o dashboard)",
		Long: `report prints the report perfexp published for a finished experiment, from its report ConfigMap.
With --file it writes the report to that file instead; with --open (HTML only) it writes the
page to a file (--file, or one in the temporary directory) and opens it with xdg-open or open.

-o json prints the published results.json as it is stored; -o yaml, -o jsonpath=... and
-o go-template=... read the same document with kubectl's printers.`,
		Example:           reportExamples,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: completeExperiments(connect, flags, 1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.validate(); err != nil {
				return err
			}
			if open && o.format() != "html" {
				return fmt.Errorf("--open shows the HTML report: add -o html")
			}
			conn, err := connect(flags)
			if err != nil {
				return err
			}
			if file == "" && !open {
				return printReport(cmd.Context(), cmd.OutOrStdout(), conn, args[0], o)
			}
			if file == "" {
				file = filepath.Join(os.TempDir(), fmt.Sprintf("perfexp-%s-%s.html", conn.namespace, args[0]))
			}
			return writeReport(cmd.Context(), cmd.OutOrStdout(), conn, args[0], o, file, open, set.open)
		},
	}
	cmd.Flags().StringVar(&file, "file", "", "write the report to this file instead of printing it")
	cmd.Flags().BoolVar(&open, "open", false, "write the HTML report to a file and open it in the browser (with -o html)")
	o = addOutput(cmd, "md", "md", "markdown", "json", "html", "dashboard", "junit")
	return cmd
}

// reportKeys are the report ConfigMap's keys the report verb's own formats print.
var reportKeys = map[string]string{"md": report.KeyMarkdown, "markdown": report.KeyMarkdown, "json": report.KeyJSON,
	"dashboard": report.KeyDashboard, "html": report.KeyHTML, "junit": keyJUnit}

// writeReport writes the report to path, says where, and opens it when asked. A browser that
// cannot be started is not an error: the file is there, and its path is printed.
func writeReport(ctx context.Context, out io.Writer, conn *connection, name string, o *output, path string, open bool, opener func(string) error) error {
	var buf strings.Builder
	if err := printReport(ctx, &buf, conn, name, o); err != nil {
		return err
	}
	if err := os.WriteFile(path, []byte(buf.String()), 0o644); err != nil {
		return err
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		abs = path
	}
	if _, err := fmt.Fprintf(out, "wrote the report of %s/%s to %s\n", conn.namespace, name, abs); err != nil {
		return err
	}
	if !open {
		return nil
	}
	if err := opener(abs); err != nil {
		_, _ = fmt.Fprintf(out, "could not open it (%v): open the file in a browser\n", err)
	}
	return nil
}

// openInBrowser hands a file to the desktop's opener: xdg-open on Linux and the BSDs, open on
// macOS. It does not wait for the browser.
func openInBrowser(path string) error {
	for _, opener := range []string{"xdg-open", "open"} {
		bin, err := exec.LookPath(opener)
		if err != nil {
			continue
		}
		cmd := exec.Command(bin, path)
		if err := cmd.Start(); err != nil {
			return err
		}
		// The opener outlives the plugin; what the browser does is no longer our business.
		return cmd.Process.Release()
	}
	return fmt.Errorf("neither xdg-open nor open is installed")
}

// printReport prints the report in the format -o chose: one of the ConfigMap's files, the JUnit
// XML, or the results document through a printer.
func printReport(ctx context.Context, out io.Writer, conn *connection, name string, o *output) error {
	exp := &perfexpv1alpha1.PerfExperiment{}
	if err := conn.client.Get(ctx, client.ObjectKey{Namespace: conn.namespace, Name: name}, exp); err != nil {
		return notFoundIn(err, name, conn.namespace)
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
	if !o.human() {
		data, ok := cm.Data[report.KeyJSON]
		if !ok {
			return fmt.Errorf("the report ConfigMap %s has no %s", cm.Name, report.KeyJSON)
		}
		return o.printDocument(out, []byte(data))
	}
	key := reportKeys[o.format()]
	if key == keyJUnit {
		// Rendered here from results.json, so every published report has one.
		res, err := report.ParseJSON([]byte(cm.Data[report.KeyJSON]))
		if err != nil {
			return fmt.Errorf("the report ConfigMap %s has no readable %s: %w", cm.Name, report.KeyJSON, err)
		}
		xml, err := report.JUnit(res)
		if err != nil {
			return err
		}
		_, err = out.Write(xml)
		return err
	}
	data, ok := cm.Data[key]
	if !ok {
		return fmt.Errorf("the report ConfigMap %s has no %s", cm.Name, key)
	}
	_, err := io.WriteString(out, strings.TrimRight(data, "\n")+"\n")
	return err
}

// keyJUnit selects the JUnit report, which is rendered from results.json rather than stored.
const keyJUnit = "junit"

func phaseOf(exp *perfexpv1alpha1.PerfExperiment) string {
	if exp.Status.Phase == "" {
		return string(perfexpv1alpha1.PhasePending)
	}
	return string(exp.Status.Phase)
}

func queueCommand(connect clientFactory, flags *kubeFlags, set settings) *cobra.Command {
	var all, noHeaders, watch bool
	var selector string
	var o *output
	cmd := &cobra.Command{
		Use:   "queue [QUEUE]",
		Short: "List the experiments that run or wait, per queue, in the order they will run",
		Example: `  # Every queue of the current namespace
  kubectl perfexp queue

  # One queue, across all namespaces
  kubectl perfexp queue demo -A

  # The names of the waiting experiments, in the order they will run
  kubectl perfexp queue demo -o name

  # The experiments themselves, as kubectl get prints a list
  kubectl perfexp queue -o yaml

  # A team's experiments only, with their target namespace and baseline, no header line
  kubectl perfexp queue -A -l team=checkout -o wide --no-headers

  # Columns of your choice, as kubectl get -o custom-columns
  kubectl perfexp queue -o custom-columns=NAME:.metadata.name,PHASE:.status.phase,TESTID:.status.testID

  # Follow the queue: the table, then each experiment whose phase or place changes
  kubectl perfexp queue demo --watch`,
		Args:              cobra.MaximumNArgs(1),
		ValidArgsFunction: completeQueues(connect, flags),
		RunE: func(cmd *cobra.Command, args []string) error {
			table := queueTable{wide: o.format() == "wide", noHeaders: noHeaders}
			if spec, custom := strings.CutPrefix(o.format(), customColumnsPrefix); custom {
				cols, err := parseCustomColumns(spec)
				if err != nil {
					return err
				}
				table.columns = cols
			} else if err := o.validate(); err != nil {
				return err
			}
			if watch && !o.human() && table.columns == nil {
				return fmt.Errorf("--watch follows the table (the default, -o wide or -o custom-columns=...); -o %s lists once", o.format())
			}
			conn, err := connect(flags)
			if err != nil {
				return err
			}
			list := &perfexpv1alpha1.PerfExperimentList{}
			var opts []client.ListOption
			if !all {
				opts = append(opts, client.InNamespace(conn.namespace))
			}
			if selector != "" {
				sel, err := labels.Parse(selector)
				if err != nil {
					return fmt.Errorf("--selector %q: %w", selector, err)
				}
				opts = append(opts, client.MatchingLabelsSelector{Selector: sel})
			}
			if err := conn.client.List(cmd.Context(), list, opts...); err != nil {
				return unreachable(err, conn.rest)
			}
			queue := ""
			if len(args) == 1 {
				queue = args[0]
			}
			if watch {
				src, err := clientQueueSource(conn, opts)
				if err != nil {
					return err
				}
				return watchQueue(cmd.Context(), cmd.OutOrStdout(), src, queue, table, set.now)
			}
			if !o.human() && table.columns == nil {
				// The rows the table would show, in its order; an empty queue is an empty
				// List, as kubectl get -o json prints one.
				return o.printObject(cmd.OutOrStdout(), &perfexpv1alpha1.PerfExperimentList{Items: queueRows(list.Items, queue)})
			}
			if !waiting(list.Items, queue) {
				// As kubectl get says it, on standard error, so a script reading the table
				// reads nothing.
				where := "No resources found"
				if !all {
					where += " in " + conn.namespace + " namespace"
				}
				_, err := fmt.Fprintln(cmd.ErrOrStderr(), where+".")
				return err
			}
			return printQueue(cmd.OutOrStdout(), list.Items, queue, set.now(), table)
		},
	}
	cmd.Flags().BoolVarP(&all, "all-namespaces", "A", false, "list experiments of every namespace")
	cmd.Flags().StringVarP(&selector, "selector", "l", "", "label selector of the experiments (-l team=checkout,env!=prod), as in kubectl get")
	cmd.Flags().BoolVar(&noHeaders, "no-headers", false, "leave out the header line of the table")
	cmd.Flags().BoolVarP(&watch, "watch", "w", false, "after the table, print each experiment again when its phase or place changes, until interrupted (as kubectl get --watch)")
	o = addOutput(cmd, "", "wide", customColumnsPrefix)
	return cmd
}

// waiting says whether an experiment of the queue (any queue when "") has not ended.
func waiting(items []perfexpv1alpha1.PerfExperiment, queue string) bool {
	for _, e := range items {
		if !e.Status.Phase.IsTerminal() && (queue == "" || e.Status.Queue == queue) {
			return true
		}
	}
	return false
}

// queueRows are the unfinished experiments of the queue (any queue when ""), by queue, then
// those holding their queue first, then the waiting ones by queue position.
func queueRows(items []perfexpv1alpha1.PerfExperiment, queue string) []perfexpv1alpha1.PerfExperiment {
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
	return rows
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
