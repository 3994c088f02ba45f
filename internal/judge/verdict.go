package judge

import (
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/result"
)

// A run's verdict is decided here, from two things decided elsewhere in this package: the
// results' validity (validity.go) and each objective's outcome (objectives.go, which reads a
// relative objective from the comparison with the baseline, compare.go and runs.go).

// Verdict is Invalid on invalid results whatever the objectives say, else Fail when one was
// missed, Inconclusive when one could not be judged, else Pass.
func Verdict(r *result.Result) perfexpv1alpha1.Verdict {
	if r.Validity == perfexpv1alpha1.Invalid {
		return perfexpv1alpha1.VerdictInvalid
	}
	v := perfexpv1alpha1.VerdictPass
	for _, o := range r.Objectives {
		switch o.Outcome {
		case perfexpv1alpha1.ObjectiveMissed:
			return perfexpv1alpha1.VerdictFail
		case perfexpv1alpha1.ObjectiveUnknown:
			v = perfexpv1alpha1.VerdictInconclusive
		}
	}
	return v
}

// ObjectivesCondition is the ObjectivesMet condition's status, reason and message for a result.
func ObjectivesCondition(r *result.Result) (metav1.ConditionStatus, string, string) {
	if r.Validity == perfexpv1alpha1.Invalid {
		return metav1.ConditionUnknown, perfexpv1alpha1.ReasonResultsInvalid, "results are invalid: " + strings.Join(r.InvalidReasons, "; ")
	}
	if len(r.Objectives) == 0 {
		return metav1.ConditionTrue, perfexpv1alpha1.ReasonNoObjectives, "no objectives were declared"
	}
	var missed, unknown []string
	for _, o := range r.Objectives {
		switch o.Outcome {
		case perfexpv1alpha1.ObjectiveMissed:
			missed = append(missed, o.Name+": "+o.Message)
		case perfexpv1alpha1.ObjectiveUnknown:
			unknown = append(unknown, o.Name+": "+o.Message)
		}
	}
	switch {
	case len(missed) > 0:
		return metav1.ConditionFalse, perfexpv1alpha1.ReasonObjectivesMissed, fmt.Sprintf("%d of %d objectives missed: %s", len(missed), len(r.Objectives), strings.Join(missed, "; "))
	case len(unknown) > 0:
		return metav1.ConditionUnknown, perfexpv1alpha1.ReasonObjectivesUnknown, fmt.Sprintf("%d of %d objectives could not be judged: %s", len(unknown), len(r.Objectives), strings.Join(unknown, "; "))
	}
	return metav1.ConditionTrue, perfexpv1alpha1.ReasonObjectivesMet, fmt.Sprintf("all %d objectives met", len(r.Objectives))
}
