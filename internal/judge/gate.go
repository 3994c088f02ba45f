package judge

import (
	"fmt"
	"strings"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/result"
)

// GateInput is what decides a verdict beside the objectives: k6's thresholds, and the
// comparison's headline when regressions fail.
type GateInput struct {
	// ThresholdsCrossed is true when a runner of the measured load exited with k6's code 99.
	ThresholdsCrossed bool
	// Thresholds are the thresholds the runners' summaries name (nil when none were kept).
	Thresholds []result.ThresholdResult
	// Headline is the comparison's headline change; empty without a baseline.
	Headline perfexpv1alpha1.Change
	// FailOnRegression makes a Regressed headline fail the verdict.
	FailOnRegression bool
}

// Gate is the verdict once k6's thresholds and, when asked for, the comparison's headline
// have had their say, with a reason per cause of a failure. A crossed threshold fails a run
// as k6's own exit code 99 fails it; a Regressed headline fails it only with
// FailOnRegression. Invalid results stay Invalid (nothing measured can be trusted, and a
// pipeline fails on Invalid too); an objective's Fail stays Fail, with the gate's reasons
// added.
func Gate(v perfexpv1alpha1.Verdict, in GateInput) (perfexpv1alpha1.Verdict, []string) {
	var reasons []string
	named := 0
	for _, t := range in.Thresholds {
		if !t.Crossed {
			continue
		}
		named++
		where := ""
		if len(t.Scenarios) > 0 {
			where = " (scenario " + strings.Join(t.Scenarios, ", ") + ")"
		}
		reasons = append(reasons, fmt.Sprintf("k6 threshold crossed: %s%s", t.Name(), where))
	}
	if in.ThresholdsCrossed && named == 0 {
		reasons = append(reasons, "k6 reported crossed thresholds (exit code 99); the runners' summaries do not say which")
	}
	if in.FailOnRegression && in.Headline == perfexpv1alpha1.ChangeRegressed {
		reasons = append(reasons, "the comparison's headline is Regressed and failOnRegression is set")
	}
	if len(reasons) > 0 && (v == perfexpv1alpha1.VerdictPass || v == perfexpv1alpha1.VerdictInconclusive || v == "") {
		v = perfexpv1alpha1.VerdictFail
	}
	return v, reasons
}

// ApplyGate sets the result's thresholds, verdict and verdict reasons from Gate.
func ApplyGate(r *result.Result, in GateInput) {
	r.Thresholds = in.Thresholds
	if r.Comparison != nil && in.Headline == "" {
		in.Headline = r.Comparison.Change
	}
	r.Verdict, r.VerdictReasons = Gate(r.Verdict, in)
}

// FailOnRegression is the effective "regression fails" setting: the analysis's own when set,
// else the operator's default.
func FailOnRegression(a *perfexpv1alpha1.Analysis, operatorDefault bool) bool {
	if a != nil && a.FailOnRegression != nil {
		return *a.FailOnRegression
	}
	return operatorDefault
}
