package findings

import (
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/result"
)

// ConditionNamed is how many confounds the Confounded condition's message names.
const ConditionNamed = 5

// Condition is the Confounded condition of a run compared with its baseline: True with the
// differences beyond the declared variant (counted, the first ConditionNamed named), False when
// the environments matched, Unknown when they could not be compared. ok is false without a
// comparison: the condition does not apply.
func Condition(c *result.Comparison) (cond metav1.Condition, ok bool) {
	if c == nil {
		return metav1.Condition{}, false
	}
	cond.Type = perfexpv1alpha1.ConditionConfounded
	switch {
	case c.ConfoundsUnknown != "":
		cond.Status, cond.Reason = metav1.ConditionUnknown, perfexpv1alpha1.ReasonEnvironmentNotCompared
		cond.Message = "the environment beyond the variant could not be compared with baseline " + c.Baseline + "'s: " + strings.TrimSuffix(c.ConfoundsUnknown, ".")
	case len(c.Confounds) == 0:
		cond.Status, cond.Reason = metav1.ConditionFalse, perfexpv1alpha1.ReasonEnvironmentMatches
		cond.Message = "beside the declared variant, this run ran with the same images, replicas, resources, env and nodes as baseline " + c.Baseline
	default:
		cond.Status, cond.Reason = metav1.ConditionTrue, perfexpv1alpha1.ReasonEnvironmentDiffers
		parts := make([]string, 0, ConditionNamed)
		for _, cf := range c.Confounds[:min(len(c.Confounds), ConditionNamed)] {
			parts = append(parts, ConfoundText(cf))
		}
		more := ""
		if n := len(c.Confounds) - ConditionNamed; n > 0 {
			more = fmt.Sprintf("; and %d more in the report's Environment section", n)
		}
		cond.Message = fmt.Sprintf("this run and baseline %s differ in %d thing(s) beyond the declared variant, so a change found may come from them as well: %s%s",
			c.Baseline, len(c.Confounds), strings.Join(parts, "; "), more)
	}
	return cond, true
}
