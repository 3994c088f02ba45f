package sweep

import (
	"fmt"
	"strings"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
)

// Ending is how a sweep that ran all its runs ends: its verdict, whether it failed as a whole,
// and why when it is not a plain Pass or Fail.
type Ending struct {
	Verdict perfexpv1alpha1.Verdict
	// Failed is true when no run succeeded: there was nothing to compare, and the sweep says so
	// with its phase rather than with a Pass nobody could have earned.
	Failed bool
	// Problem names what kept the sweep from an answer (empty when nothing did).
	Problem string
}

// EndingOf decides how a sweep ends from its arms' run counts (status.arms, the baseline
// included) and their changes. Fail when regressions fail and an arm Regressed; Invalid and
// failed when every run failed; Inconclusive when an arm (or the baseline) has runs but none
// succeeded, so at least one question of the sweep has no answer; otherwise Pass.
func EndingOf(arms []perfexpv1alpha1.SweepArmStatus, failOnRegression bool) Ending {
	var runs, succeeded int32
	var empty []string
	regressed := false
	for _, a := range arms {
		runs += a.Runs
		succeeded += a.Succeeded
		if a.Runs > 0 && a.Succeeded == 0 {
			empty = append(empty, a.Name)
		}
		regressed = regressed || a.Change == perfexpv1alpha1.ChangeRegressed
	}
	switch {
	case runs > 0 && succeeded == 0:
		return Ending{Verdict: perfexpv1alpha1.VerdictInvalid, Failed: true,
			Problem: fmt.Sprintf("every run failed (%d of %d): nothing to compare", runs, runs)}
	case failOnRegression && regressed:
		return Ending{Verdict: perfexpv1alpha1.VerdictFail}
	case len(empty) > 0:
		return Ending{Verdict: perfexpv1alpha1.VerdictInconclusive,
			Problem: fmt.Sprintf("no run of %s succeeded, so %s not compared", strings.Join(empty, ", "), map[bool]string{true: "it was", false: "they were"}[len(empty) == 1])}
	}
	return Ending{Verdict: perfexpv1alpha1.VerdictPass}
}
