package main

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/history"
	"github.com/perfexp/perfexp/internal/report"
)

const historyExamples = `  # The histories of the namespace: runs, last run, change points
  kubectl perfexp history -n perf

  # The p95 trend of the history experiment checkout-8 belongs to (also after it was deleted)
  kubectl perfexp history --experiment checkout-8

  # The average response time trend of history checkout-trend, every request name too
  kubectl perfexp history --key checkout-trend --metric avg --requests

  # One series only
  kubectl perfexp history --key checkout-trend --metric checkout/p95

  # The experiments of a history's records, for a script
  kubectl perfexp history --key checkout-trend -o jsonpath='{.status.records[*].experiment}'`

const ackExamples = `  # The slowdown from checkout-5 on is real (a release): later changes are judged against it
  kubectl perfexp history ack checkout-5 --confirm --note "release 2.4 adds audit logging"

  # A change at checkout-12 on the p95 of one scenario was a noisy node: stop listing it
  kubectl perfexp history ack checkout-12 --dismiss --metric checkout/p95

  # Take a decision back
  kubectl perfexp history ack checkout-12 --clear`

func historyCommand(connect clientFactory, flags *kubeFlags) *cobra.Command {
	var key, experiment, metric string
	var requests bool
	var o *output
	cmd := &cobra.Command{
		Use:   "history [--key K | --experiment E] [--metric p95]",
		Short: "Print the trend of comparable runs with its change points, or list the histories",
		Long: `Every analysed experiment adds a record to the PerfHistory of its fingerprint (target namespace,
scenarios, script hashes, load shape, variant) or of its spec.analysis.historyKey. Histories outlive
their experiments.

With --key or --experiment, history prints one row per run with the chosen metric of every
scenario (p95 by default; avg, p50, p99, errorPercent, rate, cpu, memory, query, or a whole
series name such as checkout/p95), marks the runs where a change point starts (▲ slower/worse,
▼ faster/better), draws a sparkline per series and lists the changes. Without them it lists the
namespace's histories.

With -o json, yaml, name, jsonpath=... or go-template=..., history prints the PerfHistory object
(or, without --key and --experiment, the List of them) as kubectl get would.`,
		Example: historyExamples,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if key != "" && experiment != "" {
				return fmt.Errorf("use --key or --experiment, not both")
			}
			if err := o.validate(); err != nil {
				return err
			}
			conn, err := connect(flags)
			if err != nil {
				return err
			}
			if key == "" && experiment == "" {
				if !o.human() {
					list := &perfexpv1alpha1.PerfHistoryList{}
					if err := conn.client.List(cmd.Context(), list, client.InNamespace(conn.namespace)); err != nil {
						return unreachable(err, conn.rest)
					}
					return o.printObject(cmd.OutOrStdout(), list)
				}
				return listHistories(cmd.Context(), cmd.OutOrStdout(), conn)
			}
			h, err := findHistory(cmd.Context(), conn, key, experiment)
			if err != nil {
				return err
			}
			if !o.human() {
				return o.printObject(cmd.OutOrStdout(), h)
			}
			return printHistory(cmd.OutOrStdout(), h, metric, requests)
		},
	}
	cmd.Flags().StringVar(&key, "key", "", "the history's name (its historyKey, or runs-<fingerprint> as listed)")
	cmd.Flags().StringVar(&experiment, "experiment", "", "an experiment whose history to show; it may be deleted")
	cmd.Flags().StringVar(&metric, "metric", "p95", "the metric (avg, p50, p95, p99, errorPercent, rate, cpu, memory, query) or a series name")
	cmd.Flags().BoolVar(&requests, "requests", false, "show every recorded request name's series too, not only the scenarios'")
	o = addOutput(cmd, "")
	cmd.AddCommand(ackCommand(connect, flags))
	return cmd
}

func ackCommand(connect clientFactory, flags *kubeFlags) *cobra.Command {
	var key, metric, note string
	var confirm, dismiss, clear bool
	cmd := &cobra.Command{
		Use:   "ack EXPERIMENT (--confirm | --dismiss | --clear)",
		Short: "Confirm or dismiss the change that starts at a run",
		Long: `A confirmed change starts a new segment of the history: later runs are compared with the runs
since it, not with older ones. A dismissed change is no longer listed. The decision is kept in the
history's spec.acks, with a note; --clear removes it. Without --metric it applies to every series
that changes at the run.`,
		Example: ackExamples,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var decision perfexpv1alpha1.AckDecision
			switch {
			case confirm && !dismiss && !clear:
				decision = perfexpv1alpha1.AckConfirmed
			case dismiss && !confirm && !clear:
				decision = perfexpv1alpha1.AckDismissed
			case clear && !confirm && !dismiss:
			default:
				return fmt.Errorf("use one of --confirm, --dismiss or --clear")
			}
			conn, err := connect(flags)
			if err != nil {
				return err
			}
			ack := perfexpv1alpha1.HistoryAck{Experiment: args[0], Metric: metric, Decision: decision, Note: note}
			return acknowledge(cmd.Context(), cmd.OutOrStdout(), conn, key, ack)
		},
	}
	cmd.Flags().StringVar(&key, "key", "", "the history (default: the one holding the experiment's record)")
	cmd.Flags().StringVar(&metric, "metric", "", "one series, e.g. checkout/p95 (default: every series of the run)")
	cmd.Flags().StringVar(&note, "note", "", "why, for the next reader")
	cmd.Flags().BoolVar(&confirm, "confirm", false, "the change is real: start a new segment at the run")
	cmd.Flags().BoolVar(&dismiss, "dismiss", false, "the change is noise: stop listing it")
	cmd.Flags().BoolVar(&clear, "clear", false, "remove the decision")
	return cmd
}

func listHistories(ctx context.Context, out io.Writer, conn *connection) error {
	list := &perfexpv1alpha1.PerfHistoryList{}
	if err := conn.client.List(ctx, list, client.InNamespace(conn.namespace)); err != nil {
		return err
	}
	if len(list.Items) == 0 {
		_, err := fmt.Fprintf(out, "No histories in namespace %s: an experiment adds its record when its analysis ends.\n", conn.namespace)
		return err
	}
	tw := &errWriter{w: tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)}
	tw.printf("HISTORY\tRUNS\tFIRST\tLAST\tCHANGES\n")
	for i := range list.Items {
		h := &list.Items[i]
		recs := h.Status.Records
		first, last := "-", "-"
		if len(recs) > 0 {
			first, last = recs[0].Experiment, recs[len(recs)-1].Experiment
		}
		tw.printf("%s\t%d\t%s\t%s\t%d\n", h.Name, len(recs), first, last, len(runsWithChanges(history.Changes(h))))
	}
	return tw.flush()
}

func runsWithChanges(cs []history.Change) map[string]bool {
	out := map[string]bool{}
	for _, c := range cs {
		out[c.Experiment] = true
	}
	return out
}

// findHistory is the history named key, or the newest history holding a record of the
// experiment named experiment.
func findHistory(ctx context.Context, conn *connection, key, experiment string) (*perfexpv1alpha1.PerfHistory, error) {
	if key != "" {
		h := &perfexpv1alpha1.PerfHistory{}
		if err := conn.client.Get(ctx, client.ObjectKey{Namespace: conn.namespace, Name: key}, h); err != nil {
			return nil, err
		}
		return h, nil
	}
	list := &perfexpv1alpha1.PerfHistoryList{}
	if err := conn.client.List(ctx, list, client.InNamespace(conn.namespace)); err != nil {
		return nil, err
	}
	var found *perfexpv1alpha1.PerfHistory
	var at metav1.Time
	for i := range list.Items {
		for _, r := range list.Items[i].Status.Records {
			if r.Experiment == experiment && (found == nil || at.Before(&r.Time)) {
				found, at = &list.Items[i], r.Time
			}
		}
	}
	if found == nil {
		return nil, fmt.Errorf("no history in namespace %s holds a run named %s (is its analysis done?)", conn.namespace, experiment)
	}
	return found, nil
}

// chosen is the series printHistory shows: those of the metric, or the one named.
func chosen(all []history.Series, metric string, requests bool) []history.Series {
	var out []history.Series
	for _, s := range all {
		switch {
		case s.Key == metric:
			return []history.Series{s}
		case s.Metric != metric:
		case requests || strings.HasPrefix(s.Key, "service:") || strings.HasPrefix(s.Key, "query:") || strings.Count(s.Key, "/") == 1:
			out = append(out, s)
		}
	}
	return out
}

func printHistory(out io.Writer, h *perfexpv1alpha1.PerfHistory, metric string, requests bool) error {
	recs := h.Status.Records
	w := &errWriter{w: out}
	series := chosen(history.SeriesOf(recs), metric, requests)
	changes := history.Changes(h)
	w.printf("History %s/%s: %d runs", h.Namespace, h.Name, len(recs))
	if h.Status.Dropped > 0 {
		w.printf(" (%d older dropped)", h.Status.Dropped)
	}
	set := history.SettingsOf(h.Spec)
	w.printf("; change points at p <= %g and |change| >= %g %%\n\n", set.MaxPValue, max(0, 100*set.MinMagnitude))
	if len(series) == 0 {
		w.printf("No series %q in this history.\n", metric)
		return w.err
	}
	// marks[record][series key] is the change starting there.
	marks := map[int]map[string]history.Change{}
	for _, c := range changes {
		if marks[c.Record] == nil {
			marks[c.Record] = map[string]history.Change{}
		}
		marks[c.Record][c.Series] = c
	}
	values := make([]map[int]float64, len(series))
	for i, s := range series {
		values[i] = map[int]float64{}
		for j, ri := range s.Records {
			values[i][ri] = s.Values[j]
		}
	}
	tw := &errWriter{w: tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)}
	header := []string{"#", "RUN", "ENDED", "VALIDITY"}
	for _, s := range series {
		header = append(header, strings.ToUpper(s.Key)+unitSuffix(s.Unit))
	}
	tw.printf("%s\n", strings.Join(header, "\t"))
	for ri, r := range recs {
		row := []string{fmt.Sprint(ri + 1 + int(h.Status.Dropped)), r.Experiment, r.Time.UTC().Format("2006-01-02 15:04"), string(r.Validity)}
		for i, s := range series {
			v, ok := values[i][ri]
			if !ok {
				row = append(row, "-")
				continue
			}
			c := fmt.Sprintf("%.4g", v)
			if ch, ok := marks[ri][s.Key]; ok {
				c += " " + changeMark(ch)
			}
			row = append(row, c)
		}
		tw.printf("%s\n", strings.Join(row, "\t"))
	}
	trend := []string{"", "trend", "", ""}
	for _, s := range series {
		trend = append(trend, report.Sparkline(s.Values))
	}
	tw.printf("%s\n", strings.Join(trend, "\t"))
	if err := tw.flush(); err != nil {
		return err
	}
	if len(changes) == 0 {
		w.printf("\nNo change points.\n")
		return w.err
	}
	w.printf("\nChange points (every series):\n")
	tw = &errWriter{w: tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)}
	tw.printf("STARTS AT\tSERIES\tBEFORE\tAFTER\tCHANGE\tP\tVERDICT\n")
	sort.SliceStable(changes, func(i, j int) bool { return changes[i].Record < changes[j].Record })
	for _, c := range changes {
		verdict := string(c.Verdict)
		if verdict == "" {
			verdict = "-"
		}
		if c.Confirmed {
			verdict += " (confirmed)"
		}
		tw.printf("%s\t%s\t%.4g\t%.4g\t%+.1f%%\t%.2g\t%s\n", c.Experiment, c.Series, c.Before, c.After, 100*c.Change, c.PValue, verdict)
	}
	if w.err != nil {
		return w.err
	}
	return tw.flush()
}

func unitSuffix(unit string) string {
	if unit == "" {
		return ""
	}
	return " (" + unit + ")"
}

// changeMark is ▲ or ▼ by the direction of the mean, with the change in percent, and * when
// confirmed.
func changeMark(c history.Change) string {
	arrow := "▲"
	if c.After < c.Before {
		arrow = "▼"
	}
	m := fmt.Sprintf("%s%+.0f%%", arrow, 100*c.Change)
	if c.Confirmed {
		m += "*"
	}
	return m
}

// acknowledge records a decision in the history's spec.acks, replacing an earlier decision on
// the same run and series; an empty decision removes it.
func acknowledge(ctx context.Context, out io.Writer, conn *connection, key string, ack perfexpv1alpha1.HistoryAck) error {
	h, err := findHistory(ctx, conn, key, ack.Experiment)
	if err != nil {
		return err
	}
	found := false
	for _, r := range h.Status.Records {
		if r.Experiment == ack.Experiment {
			ack.UID, found = r.UID, true
		}
	}
	if !found {
		return fmt.Errorf("history %s holds no run named %s", h.Name, ack.Experiment)
	}
	now := metav1.Now()
	ack.Time = &now
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cur := &perfexpv1alpha1.PerfHistory{}
		if err := conn.client.Get(ctx, client.ObjectKeyFromObject(h), cur); err != nil {
			return err
		}
		var acks []perfexpv1alpha1.HistoryAck
		for _, a := range cur.Spec.Acks {
			if a.Experiment != ack.Experiment || a.Metric != ack.Metric {
				acks = append(acks, a)
			}
		}
		if ack.Decision != "" {
			acks = append(acks, ack)
		}
		cur.Spec.Acks = acks
		return conn.client.Update(ctx, cur)
	})
	if err != nil {
		return err
	}
	what := "every series"
	if ack.Metric != "" {
		what = ack.Metric
	}
	if ack.Decision == "" {
		_, err = fmt.Fprintf(out, "history %s: the decision on %s (%s) was removed\n", h.Name, ack.Experiment, what)
		return err
	}
	_, err = fmt.Fprintf(out, "history %s: the change at %s (%s) is %s\n", h.Name, ack.Experiment, what, strings.ToLower(string(ack.Decision)))
	return err
}

// errWriter keeps the first write error, so a table is written without checking every line.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) printf(format string, args ...any) {
	if e.err == nil {
		_, e.err = fmt.Fprintf(e.w, format, args...)
	}
}

// flush flushes a tabwriter underneath and returns the first error.
func (e *errWriter) flush() error {
	if tw, ok := e.w.(*tabwriter.Writer); ok && e.err == nil {
		e.err = tw.Flush()
	}
	return e.err
}
