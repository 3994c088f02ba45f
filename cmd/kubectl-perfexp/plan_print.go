package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// printPlans prints the plans as -o asks: the tables (-o wide adds each run's bound), or the
// document through json, yaml, jsonpath= or go-template=.
func printPlans(out io.Writer, doc *planDoc, o *output) error {
	if !o.human() {
		data, err := json.Marshal(doc)
		if err != nil {
			return err
		}
		return o.printDocument(out, data)
	}
	var b strings.Builder
	for i, p := range doc.Plans {
		if i > 0 {
			b.WriteString("\n")
		}
		writePlan(&b, p, o.format() == "wide")
	}
	writeQueues(&b, doc.Plans)
	a := doc.Assumptions
	fmt.Fprintf(&b, "\nEstimated around the specs' warm-up and load: a rollout of the variant %s (applied, then\nrestored), a setup or teardown Job %s, starting a set of load pods %s (--rollout-time, --job-time,\n--pod-time). The bounds are the runs' timeouts (without timeouts.overall: %s).\n",
		a.Rollout, a.Job, a.Pods, a.DefaultOverall)
	if n := len(doc.Skipped); n > 0 {
		fmt.Fprintf(&b, "Not planned: %d other object(s) (%s).\n", n, strings.Join(firstOf(doc.Skipped, 4), ", "))
	}
	_, err := io.WriteString(out, b.String())
	return err
}

func writePlan(b *strings.Builder, p *objectPlan, wide bool) {
	fmt.Fprintf(b, "%s %s/%s: %s, %s\n", p.Kind, p.Namespace, p.Name, p.Form, p.Design)
	line := fmt.Sprintf("queue %s, priority %d", p.Queue, p.Priority)
	if p.Deadline != nil {
		line += ", deadline " + p.Deadline.String()
	}
	b.WriteString(line + "\n\n")
	w := tabwriter.NewWriter(b, 0, 4, 2, ' ', 0)
	header := "ARM\tCHANGES\tRUNS\tWARM-UP\tLOAD\tENVIRONMENT/RUN"
	if wide {
		header += "\tBOUND/RUN"
	}
	_, _ = fmt.Fprintln(w, header)
	for _, a := range p.Arms {
		changes := "-"
		switch {
		case a.Parameter != "" && a.Parameter != "-":
			changes = a.Parameter + " = " + a.Value
		case a.Value != "":
			changes = a.Value
		}
		warm := "-"
		if a.WarmUp > 0 {
			warm = a.WarmUp.String()
		}
		row := fmt.Sprintf("%s\t%s\t%s\t%s\t%s\t%s", a.Name, clipTo(changes, 48), a.Runs, warm, a.Load, a.Environment)
		if wide {
			row += "\t" + a.Bound.String()
		}
		_, _ = fmt.Fprintln(w, row)
	}
	_ = w.Flush()
	fmt.Fprintf(b, "\nruns %s, measured %s, environment about %s (at most %s by the timeouts)\n",
		p.Runs, p.Measured, p.Environment, p.EnvironmentBound)
	for _, n := range p.Notes {
		fmt.Fprintf(b, "- %s\n", n)
	}
}

// writeQueues totals the plans by queue when there are several: the runs of one queue run one
// at a time, so their environment times add up to the queue's time.
func writeQueues(b *strings.Builder, plans []*objectPlan) {
	if len(plans) < 2 {
		return
	}
	type total struct {
		objects     int
		runs        intRange
		environment durationRange
	}
	var order []string
	byQueue := map[string]*total{}
	for _, p := range plans {
		t, ok := byQueue[p.Queue]
		if !ok {
			t = &total{}
			byQueue[p.Queue] = t
			order = append(order, p.Queue)
		}
		t.objects++
		t.runs.Min += p.Runs.Min
		t.runs.Max += p.Runs.Max
		t.environment.Min += p.Environment.Min
		t.environment.Max += p.Environment.Max
	}
	b.WriteString("\n")
	for _, q := range order {
		t := byQueue[q]
		fmt.Fprintf(b, "queue %s: %d objects, runs %s, environment about %s, one run at a time\n", q, t.objects, t.runs, t.environment)
	}
}

func (r intRange) String() string {
	if r.Min == r.Max {
		return fmt.Sprint(r.Min)
	}
	return fmt.Sprintf("%d-%d", r.Min, r.Max)
}

func (r durationRange) String() string {
	if r.Min == r.Max {
		return r.Min.String()
	}
	return r.Min.String() + "-" + r.Max.String()
}

func clipTo(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n-3] + "..."
}

func firstOf(s []string, n int) []string {
	if len(s) <= n {
		return s
	}
	return append(s[:n:n], fmt.Sprintf("and %d more", len(s)-n))
}
