package report

import (
	"fmt"
	"strings"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
)

// KeyConfirmation is the report ConfigMap's key for the confirmation section on its own.
const KeyConfirmation = "confirmation.md"

// confirmationHeading starts the confirmation section in report.md, so writing it again
// replaces it.
const confirmationHeading = "## Confirmation"

// ConfirmationSection is the "Confirmation" section of an experiment's report: what
// spec.analysis.confirm ran after the single run's comparison (single) was not decisive, the
// answer over the repeated runs, and what it took. outcome is the Confirmed condition's
// status/reason and message.
func ConfirmationSection(single perfexpv1alpha1.Change, c *perfexpv1alpha1.Confirmation, outcome, message string) string {
	if c == nil {
		return ""
	}
	if single == "" {
		single = perfexpv1alpha1.ChangeUnknown
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s\n\n", confirmationHeading)
	fmt.Fprintf(&b, "One run against one run was %s, so the baseline's and this experiment's variants ran again, "+
		"in blocks of one run each in a random order, through the same queue (sweep `%s`", single, c.Sweep)
	if c.ReportRef != nil {
		fmt.Fprintf(&b, ", its report in ConfigMap `%s`", c.ReportRef.Name)
	}
	b.WriteString("). The comparison above is the single run's; the answer below is over the repeated runs only.\n\n")
	answer := string(c.Change)
	if answer == "" {
		answer = "none"
	}
	b.WriteString("| | |\n|---|---|\n")
	fmt.Fprintf(&b, "| Answer | **%s** (%s) |\n", answer, outcome)
	fmt.Fprintf(&b, "| Why | %s |\n", cell(message))
	fmt.Fprintf(&b, "| Blocks | %d (each one baseline and one variant run) |\n", c.Repeats)
	fmt.Fprintf(&b, "| Runs ended | %d |\n", c.Runs)
	if c.EnvironmentTime != nil {
		fmt.Fprintf(&b, "| Environment time | %s (the runs' time from leaving the queue to the restored environment, summed) |\n", c.EnvironmentTime.Duration)
	}
	if c.Elapsed != nil {
		fmt.Fprintf(&b, "| Elapsed | %s (queue waits included) |\n", c.Elapsed.Duration)
	}
	if c.StopReason != "" {
		fmt.Fprintf(&b, "| Stopped | %s |\n", cell(c.StopReason))
	}
	return b.String()
}

// WithConfirmation returns report.md with the confirmation section among the answers, before
// "How this was decided", replacing an earlier one.
func WithConfirmation(md, section string) string {
	if i := strings.Index(md, "\n"+confirmationHeading+"\n"); i >= 0 {
		rest := md[i+1+len(confirmationHeading):]
		if end := strings.Index(rest, "\n## "); end < 0 {
			md = md[:i+1]
		} else {
			md = md[:i+1] + rest[end+1:]
		}
	}
	return beforeDecided(md, section)
}
