package main

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/perfexp/perfexp/internal/report"
)

// printCapacity shows a capacity search's report: every probe by load, then the answer.
func printCapacity(out io.Writer, data string) error {
	res, err := report.ParseCapacityJSON([]byte(data))
	if err != nil {
		return err
	}
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	if _, err := fmt.Fprintf(w, "%s\tOUTCOME\tRUNS\tSCENARIO\tP95\tREQ/S\tERRORS\n", res.Parameter); err != nil {
		return err
	}
	for _, p := range res.Probes {
		for i, s := range p.Scenarios {
			load, outcome, runs := fmt.Sprint(p.Load), orDash(p.Outcome), fmt.Sprintf("%d/%d", p.Succeeded, len(p.Experiments))
			if i > 0 {
				load, outcome, runs = "", "", ""
			}
			if _, err := fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", load, outcome, runs, s.Name, floatOrDash(s.P95, "%.1f ms"), floatOrDash(s.Rate, "%.1f"), floatOrDash(s.ErrorPercent, "%.2f %%")); err != nil {
				return err
			}
		}
		if len(p.Scenarios) == 0 {
			if _, err := fmt.Fprintf(w, "%d\t%s\t%d/%d\t-\t-\t-\t-\n", p.Load, orDash(p.Outcome), p.Succeeded, len(p.Experiments)); err != nil {
				return err
			}
		}
	}
	if err := w.Flush(); err != nil {
		return err
	}
	line := fmt.Sprintf("\ncapacity %s; stopped: %s\n", orDash(res.Summary), res.StopReason)
	if f := res.LimitingFactor(); f != "" {
		line += "limiting factor: " + f + "\n"
	}
	_, err = io.WriteString(out, line)
	return err
}

func floatOrDash(v *float64, format string) string {
	if v == nil {
		return "-"
	}
	return fmt.Sprintf(format, *v)
}
