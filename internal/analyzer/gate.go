package analyzer

import (
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/analysis"
	"github.com/perfexp/perfexp/internal/judge"
	"github.com/perfexp/perfexp/internal/result"
	"github.com/perfexp/perfexp/internal/text"
)

// gateInput is what decides the verdict beside the objectives (judge.Gate): the exit code
// 99 the load recorded, the thresholds the runners' summaries name, and the effective
// failOnRegression setting.
func gateInput(exp *perfexpv1alpha1.PerfExperiment, s summaryData, failOnRegression bool) judge.GateInput {
	in := judge.GateInput{FailOnRegression: judge.FailOnRegression(exp.Spec.Analysis, failOnRegression)}
	in.ThresholdsCrossed = exp.Status.Load != nil && exp.Status.Load.ThresholdsCrossed
	if s.kept && s.err == nil {
		in.Thresholds = analysis.ParseThresholds(s.data)
	}
	return in
}

// setGateConditions names the crossed thresholds in the ThresholdsCrossed condition, and puts
// every reason the gate failed the verdict in the status message, where Argo CD's health
// check and kstatus show it.
func setGateConditions(exp *perfexpv1alpha1.PerfExperiment, res *result.Result) {
	var crossed []string
	for _, t := range res.Thresholds {
		if t.Crossed {
			crossed = append(crossed, t.Name())
		}
	}
	if len(crossed) > 0 || (exp.Status.Load != nil && exp.Status.Load.ThresholdsCrossed) {
		msg := "k6 thresholds crossed, not named (k6 exited with 99; its summaries do not say which); the verdict is Fail"
		if len(crossed) > 0 {
			msg = "k6 thresholds crossed: " + strings.Join(crossed, "; ") + "; the verdict is Fail"
		}
		meta.SetStatusCondition(&exp.Status.Conditions, metav1.Condition{
			Type: perfexpv1alpha1.ConditionThresholdsCrossed, Status: metav1.ConditionTrue,
			Reason: perfexpv1alpha1.ReasonThresholdsCrossed, Message: text.Truncate(msg, maxConditionMessage), ObservedGeneration: exp.Generation,
		})
	}
}
