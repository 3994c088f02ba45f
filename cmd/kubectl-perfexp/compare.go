package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/history"
	"github.com/perfexp/perfexp/internal/judge"
	"github.com/perfexp/perfexp/internal/load"
	"github.com/perfexp/perfexp/internal/report"
	"github.com/perfexp/perfexp/internal/result"
)

const compareExamples = `  # The comparison table of experiment pool-10 against experiment baseline
  kubectl perfexp compare baseline pool-10 -n perf

  # The same, judging changes under 10 % as not meaningful, as Markdown
  kubectl perfexp compare baseline pool-10 --min-change 10 -o md

  # The table of a whole sweep: every arm against the baseline
  kubectl perfexp compare maxpoolsize -n perf

  # Every compared row of the sweep's per-arm tables: transactions, services, queries
  kubectl perfexp compare maxpoolsize -o wide

  # The sweep's full results, for tools
  kubectl perfexp compare maxpoolsize -o json`

// The output formats of compare.
const (
	outputTable    = "table"
	outputWide     = "wide"
	outputMarkdown = "md"
	outputJSON     = "json"
)

func compareCommand(connect clientFactory, flags *kubeFlags) *cobra.Command {
	var minChange float64
	var o *output
	cmd := &cobra.Command{
		Use:   "compare (BASELINE EXPERIMENT | SWEEP)",
		Short: "Print the comparison table of one experiment against another, or of every arm of a sweep against its baseline",
		Long: `With two names, compare prints how the second experiment compares with the first: each metric's
value in both, its relative change with the 95 % interval, the verdict and the number of samples.
When the second experiment was analysed against the first, its own comparison is shown; otherwise
the two runs' results are compared now, one run each, with the between-run noise the operator's
analysis would use: the experiment's spec.analysis.betweenRun, else the spread of the latest
segment of the PerfHistory of both runs' configurations, else an assumed default. The first line
says which.

With one name, compare prints the table of a PerfSweep: arm, parameter, value, each scenario's
average and p95, the change of p95 against the baseline and the arm's verdict; then, from the
report's per-arm tables (transactions, services' CPU and memory, custom queries), the rows whose
change was decided (Regressed or Improved), each with the baseline's value, the arm's, the change
with its interval and the adjusted p. -o wide prints every compared row of those tables.

-o json prints the comparison document; -o yaml, -o jsonpath=... and -o go-template=... read
the same document with kubectl's printers.`,
		Example:           compareExamples,
		Args:              cobra.RangeArgs(1, 2),
		ValidArgsFunction: completeCompare(connect, flags),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.validate(); err != nil {
				return err
			}
			conn, err := connect(flags)
			if err != nil {
				return err
			}
			if len(args) == 1 {
				return printSweepComparison(cmd.Context(), cmd.OutOrStdout(), conn, args[0], o)
			}
			return printExperimentComparison(cmd.Context(), cmd.OutOrStdout(), conn, args[0], args[1], o, minChange)
		},
	}
	o = addOutput(cmd, outputTable, outputTable, outputWide, outputMarkdown, outputJSON)
	cmd.Flags().Float64Var(&minChange, "min-change", 5, "smallest relative change, in percent, that counts (when the comparison is computed here)")
	return cmd
}

// experimentResult reads an experiment and its results: its report's results.json, or the
// summary in its status when the report is gone.
func experimentResult(ctx context.Context, conn *connection, name string) (*perfexpv1alpha1.PerfExperiment, *result.Result, error) {
	exp := &perfexpv1alpha1.PerfExperiment{}
	if err := conn.client.Get(ctx, client.ObjectKey{Namespace: conn.namespace, Name: name}, exp); err != nil {
		return nil, nil, notFoundIn(err, name, conn.namespace)
	}
	if exp.Status.ReportRef != nil {
		cm := &corev1.ConfigMap{}
		err := conn.client.Get(ctx, client.ObjectKey{Namespace: conn.namespace, Name: exp.Status.ReportRef.Name}, cm)
		switch {
		case err == nil:
			if r, perr := report.ParseJSON([]byte(cm.Data[report.KeyJSON])); perr == nil {
				return exp, r, nil
			}
		case !apierrors.IsNotFound(err):
			return nil, nil, err
		}
	}
	if r := result.FromStatus(exp.Status.Results); r != nil {
		return exp, r, nil
	}
	return nil, nil, fmt.Errorf("experiment %s/%s has no results yet (phase %s)", conn.namespace, name, phaseOf(exp))
}

// oneRunOptions are the options of a comparison computed here, with the between-run noise the
// analysis of the experiment against that baseline would hold: the noise learned from the
// PerfHistory of the two runs' configurations (history.ReadNoise, the operator's own lookup)
// beside its spec.analysis.betweenRun, a floor under it, else the default. A user who may not
// read the histories gets the calibration or the default and a note that says why.
func oneRunOptions(ctx context.Context, conn *connection, base, cur *perfexpv1alpha1.PerfExperiment, minChange float64, now time.Time) (judge.CompareOptions, string, error) {
	o := judge.CompareOptions{MinChangePercent: minChange}
	if a := cur.Spec.Analysis; a != nil {
		fromSpec, _ := judge.OptionsFor(*a)
		// The headline is decided on the experiment's own primary metrics, as its analysis did.
		o.Primary = fromSpec.Primary
		// A calibration is a floor under the history, which is read beside it.
		o.BetweenRun = fromSpec.BetweenRun
	}
	scripts, err := load.ScenarioScripts(ctx, conn.client, cur)
	if err == nil {
		o.History, err = history.ReadNoise(ctx, conn.client, conn.namespace, scripts, now, base, cur)
	}
	switch {
	case apierrors.IsForbidden(err):
		return o, "the runs' PerfHistory could not be read (forbidden: reading it takes get on perfhistories and configmaps)", nil
	case err != nil:
		return o, "", fmt.Errorf("reading the runs' PerfHistory: %w", err)
	}
	return o, "", nil
}

func printExperimentComparison(ctx context.Context, out io.Writer, conn *connection, baseName, name string, o *output, minChange float64) error {
	baseExp, base, err := experimentResult(ctx, conn, baseName)
	if err != nil {
		return err
	}
	curExp, cur, err := experimentResult(ctx, conn, name)
	if err != nil {
		return err
	}
	c := cur.Comparison
	source := fmt.Sprintf("as analysed when %s ran", name)
	if c == nil || c.Baseline != baseName {
		opts, note, err := oneRunOptions(ctx, conn, baseExp, curExp, minChange, time.Now())
		if err != nil {
			return err
		}
		c = judge.CompareRuns([]*result.Result{base}, []*result.Result{cur}, opts)
		source = "computed now from one run each"
		if c.Noise != "" {
			source += ", with " + c.Noise + " added to the intervals"
		}
		if note != "" {
			source += "; " + note
		}
	}
	if output := o.format(); output == outputJSON || !o.human() {
		b, err := report.JSON(&result.Result{Experiment: name, Namespace: conn.namespace, Comparison: c})
		if err != nil {
			return err
		}
		if !o.human() {
			return o.printDocument(out, b)
		}
		_, err = fmt.Fprintln(out, string(b))
		return err
	}
	switch o.format() {
	case outputMarkdown:
		return writeComparisonMarkdown(out, baseName, name, source, c)
	}
	return writeComparisonTable(out, baseName, name, source, c)
}

// disturbed is the line that says why a single-run comparison widened its intervals, or "".
func disturbed(c *result.Comparison) string {
	if c.Disturbed == "" {
		return ""
	}
	return "Intervals widened: " + c.Disturbed
}

func comparisonRow(m result.MetricComparison) []string {
	delta := "-"
	if m.DeltaPercent != nil {
		delta = fmt.Sprintf("%+.1f %%", *m.DeltaPercent)
	}
	interval := "-"
	if lo, hi, unit, ok := report.Interval(m); ok {
		interval = fmt.Sprintf("[%+.1f, %+.1f] %s", lo, hi, unit)
	}
	n := "-"
	if m.Samples > 0 || m.BaselineSamples > 0 {
		n = fmt.Sprintf("%d vs %d", m.BaselineSamples, m.Samples)
	}
	name := m.Metric
	if m.Workload != "" && m.Pods != m.BaselinePods {
		// A scaled workload is compared on its totals: the pods say why they moved.
		name += fmt.Sprintf(" (pods %d -> %d)", m.BaselinePods, m.Pods)
	}
	return []string{name, value(m.Baseline, m.Unit), value(m.Value, m.Unit), delta, interval, orDash(string(m.Change)), n}
}

func value(v *float64, unit string) string {
	if v == nil {
		return "-"
	}
	s := fmt.Sprintf("%.4g", *v)
	if unit != "" {
		s += " " + unit
	}
	return s
}

var comparisonHeader = []string{"METRIC", "BASELINE", "VALUE", "DELTA", "95% INTERVAL", "CHANGE", "N"}

func writeComparisonTable(out io.Writer, baseName, name, source string, c *result.Comparison) error {
	if _, err := fmt.Fprintf(out, "%s against %s: %s (%s)\n", name, baseName, orDash(string(c.Change)), source); err != nil {
		return err
	}
	for _, line := range []string{c.Message, disturbed(c)} {
		if line == "" {
			continue
		}
		if _, err := fmt.Fprintln(out, line); err != nil {
			return err
		}
	}
	if len(c.Metrics) == 0 {
		return nil
	}
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	if _, err := fmt.Fprintln(w, strings.Join(comparisonHeader, "\t")); err != nil {
		return err
	}
	for _, m := range c.Metrics {
		if _, err := fmt.Fprintln(w, strings.Join(comparisonRow(m), "\t")); err != nil {
			return err
		}
	}
	return w.Flush()
}

func writeComparisonMarkdown(out io.Writer, baseName, name, source string, c *result.Comparison) error {
	var b strings.Builder
	fmt.Fprintf(&b, "## %s against %s: %s\n\n_%s_\n\n", name, baseName, orDash(string(c.Change)), source)
	for _, line := range []string{c.Message, disturbed(c)} {
		if line != "" {
			fmt.Fprintf(&b, "%s\n\n", line)
		}
	}
	if len(c.Metrics) > 0 {
		fmt.Fprintf(&b, "| %s |\n|%s\n", strings.Join(comparisonHeader, " | "), strings.Repeat("---|", len(comparisonHeader)))
		for _, m := range c.Metrics {
			fmt.Fprintf(&b, "| %s |\n", strings.Join(comparisonRow(m), " | "))
		}
	}
	_, err := io.WriteString(out, b.String())
	return err
}

func printSweepComparison(ctx context.Context, out io.Writer, conn *connection, name string, o *output) error {
	sw := &perfexpv1alpha1.PerfSweep{}
	if err := conn.client.Get(ctx, client.ObjectKey{Namespace: conn.namespace, Name: name}, sw); err != nil {
		if apierrors.IsNotFound(err) {
			return fmt.Errorf("no PerfSweep %s in namespace %s (to compare two experiments: kubectl perfexp compare BASELINE EXPERIMENT)", name, conn.namespace)
		}
		return err
	}
	if sw.Status.ReportRef == nil {
		if !o.human() {
			return fmt.Errorf("sweep %s/%s has no report yet (phase %s): kubectl get perfsweep %s -n %s -o %s prints the sweep itself",
				sw.Namespace, sw.Name, orDash(string(sw.Status.Phase)), sw.Name, sw.Namespace, o.format())
		}
		return printSweepProgress(out, sw)
	}
	cm := &corev1.ConfigMap{}
	if err := conn.client.Get(ctx, client.ObjectKey{Namespace: conn.namespace, Name: sw.Status.ReportRef.Name}, cm); err != nil {
		return fmt.Errorf("reading the sweep report %s: %w", sw.Status.ReportRef.Name, err)
	}
	if !o.human() {
		return o.printDocument(out, []byte(cm.Data[report.KeySweepJSON]))
	}
	switch o.format() {
	case outputJSON:
		_, err := io.WriteString(out, strings.TrimRight(cm.Data[report.KeySweepJSON], "\n")+"\n")
		return err
	case outputMarkdown:
		_, err := io.WriteString(out, strings.TrimRight(cm.Data[report.KeySweepMarkdown], "\n")+"\n")
		return err
	}
	if sw.Spec.Capacity != nil {
		return printCapacity(out, cm.Data[report.KeySweepJSON])
	}
	if sw.Spec.Bisect != nil { // the steps' table is the report's own
		_, err := io.WriteString(out, strings.TrimRight(cm.Data[report.KeySweepMarkdown], "\n")+"\n")
		return err
	}
	res, err := report.ParseSweepJSON([]byte(cm.Data[report.KeySweepJSON]))
	if err != nil {
		return err
	}
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	if _, err := fmt.Fprintln(w, "ARM\tPARAMETER\tVALUE\tSCENARIO\tRUNS\tAVG\tP95\tDELTA P95 [INTERVAL, 95% UNLESS STATED]\tVERDICT"); err != nil {
		return err
	}
	for _, r := range report.SweepRows(res) {
		if _, err := fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%d\t%s\t%s\t%s\t%s\n", r.Arm, r.Parameter, r.Value, r.Scenario, r.Runs, r.Avg, r.P95, r.Delta, r.Verdict); err != nil {
			return err
		}
	}
	if err := w.Flush(); err != nil {
		return err
	}
	// A comparison of one run per side holds an assumed or learned between-run noise: say
	// where each arm's came from, as the Markdown report does.
	for _, a := range res.Arms {
		if a.Comparison != nil && a.Comparison.Noise != "" {
			if _, err := fmt.Fprintf(out, "%s: one run per side, with %s\n", a.Name, a.Comparison.Noise); err != nil {
				return err
			}
		}
	}
	if err := printSweepQuantities(out, res, o.format() == outputWide); err != nil {
		return err
	}
	best := "no arm improved on the baseline"
	if res.BestArm != "" {
		best = "best arm: " + res.BestArm
	}
	if rows := report.SweepDecisionRows(res); len(rows) > 0 {
		_, err = fmt.Fprintf(out, "\n%s; sequential, up to %d run(s) per arm; changes under %.0f %% do not count\n\n", best, res.Repeats, res.MinMeaningfulChangePercent)
		if err != nil {
			return err
		}
		w = tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
		if _, err := fmt.Fprintln(w, "ARM\tVERDICT\tDECIDED\tREPEATS\tLOOK (ERROR RATE)\tRUNS (ARM + BASELINE)\tENVIRONMENT TIME"); err != nil {
			return err
		}
		for _, d := range rows {
			if _, err := fmt.Fprintf(w, "%s\t%s\t%s\t%d\t%s\t%s\t%s\n", d.Arm, d.Verdict, d.Decided, d.Repeats, d.Look, d.Runs, d.Time); err != nil {
				return err
			}
		}
		if err := w.Flush(); err != nil {
			return err
		}
		return printCalibration(out, res)
	}
	_, err = fmt.Fprintf(out, "\n%s; %d run(s) per arm; changes under %.0f %% do not count\n", best, res.Repeats, res.MinMeaningfulChangePercent)
	if err != nil {
		return err
	}
	return printCalibration(out, res)
}

// printSweepQuantities prints the report's per-arm tables a line per compared cell: the decided
// ones (Regressed or Improved), or with wide every one, and a line counting the verdicts of all.
func printSweepQuantities(out io.Writer, res *report.SweepResult, wide bool) error {
	rows := report.SweepQuantityRows(res)
	if len(rows) == 0 {
		return nil
	}
	counts := map[string]int{}
	var shown []report.SweepQuantityRow
	for _, r := range rows {
		counts[r.Verdict]++
		if wide || r.Decided {
			shown = append(shown, r)
		}
	}
	var tally []string
	for _, v := range []string{string(perfexpv1alpha1.ChangeRegressed), string(perfexpv1alpha1.ChangeImproved), string(perfexpv1alpha1.ChangeNoMeaningfulChange),
		string(perfexpv1alpha1.ChangeInconclusive), string(perfexpv1alpha1.ChangeUnknown), "not compared"} {
		if counts[v] > 0 {
			tally = append(tally, fmt.Sprintf("%d %s", counts[v], v))
		}
	}
	what := "the decided ones (-o wide for every row):"
	switch {
	case wide:
		what = "every one:"
	case len(shown) == 0:
		what = "none decided (-o wide for every row)"
	}
	if _, err := fmt.Fprintf(out, "\nper-arm tables (transactions, services, queries), %d rows: %s; %s\n", len(rows), strings.Join(tally, ", "), what); err != nil {
		return err
	}
	if len(shown) == 0 {
		return nil
	}
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	if _, err := fmt.Fprintln(w, "SECTION\tQUANTITY\tSTATISTIC\tARM\tBASELINE\tVALUE\tCHANGE [95% INTERVAL]\tVERDICT\tADJUSTED P"); err != nil {
		return err
	}
	for _, r := range shown {
		if _, err := fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.Section, r.Quantity, r.Statistic, r.Arm, r.Baseline, r.Value, r.Change, r.Verdict, r.AdjustedP); err != nil {
			return err
		}
	}
	return w.Flush()
}

// printCalibration gives the run-to-run sd a sweep with repeats measured, as the report's
// Calibration section does, with the line that calibrates one-run comparisons.
func printCalibration(out io.Writer, res *report.SweepResult) error {
	c := report.SweepCalibration(res)
	if c == nil {
		return nil
	}
	_, err := fmt.Fprintf(out, "\ncalibration: run-to-run sd of %s over this sweep's runs, after the arm and block effects: %.2f %% (%d runs); "+
		"for one-run comparisons with this load, spec.analysis: betweenRun: {sdPercent: \"%.2f\", runs: %d, source: \"%s\"}\n",
		c.Metric, c.SDPercent, c.Runs, c.SDPercent, c.Runs, report.CalibrationSource(res, c))
	return err
}

// printSweepProgress shows a sweep that has no report yet: each arm's runs so far.
func printSweepProgress(out io.Writer, sw *perfexpv1alpha1.PerfSweep) error {
	phase := string(sw.Status.Phase)
	if phase == "" {
		phase = string(perfexpv1alpha1.SweepPending)
	}
	if _, err := fmt.Fprintf(out, "sweep %s/%s has no report yet (phase %s, %s runs ended): %s\n", sw.Namespace, sw.Name, phase,
		orDash(sw.Status.Progress), orDash(sw.Status.Message)); err != nil {
		return err
	}
	if len(sw.Status.Arms) == 0 {
		return nil
	}
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	if _, err := fmt.Fprintln(w, "ARM\tPARAMETER\tVALUE\tRUNS\tSUCCEEDED\tFAILED"); err != nil {
		return err
	}
	for _, a := range sw.Status.Arms {
		if _, err := fmt.Fprintf(w, "%s\t%s\t%s\t%d\t%d\t%d\n", a.Name, a.Parameter, a.Value, a.Runs, a.Succeeded, a.Failed); err != nil {
			return err
		}
	}
	return w.Flush()
}
