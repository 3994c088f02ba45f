package judge

import (
	"fmt"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/analysis/result"
)

// DefaultMaxErrorRatePercent applies when spec.analysis.maxErrorRatePercent is unset.
const DefaultMaxErrorRatePercent = 5.0

// MaxErrorRate is the error rate, in percent, above which a scenario is invalid.
func MaxErrorRate(a perfexpv1alpha1.Analysis) float64 {
	if a.MaxErrorRatePercent == nil {
		return DefaultMaxErrorRatePercent
	}
	return a.MaxErrorRatePercent.AsApproximateFloat64()
}

// MarkInvalid makes the results invalid, for reason.
func MarkInvalid(r *result.Result, reason string) {
	r.Validity = perfexpv1alpha1.Invalid
	r.InvalidReasons = append(r.InvalidReasons, reason)
}

// Validity marks scenarios without data or over the error-rate limit invalid: fast errors
// are not fast responses, and a missing scenario is not a fast one.
func Validity(r *result.Result, maxErrPercent float64) {
	for i := range r.Scenarios {
		s := &r.Scenarios[i]
		var why string
		switch {
		case s.RequestStats.Requests == nil:
			why = fmt.Sprintf("scenario %s: no k6 samples with testid=%s reached Prometheus", s.Name, r.TestID)
		case *s.RequestStats.Requests == 0:
			why = fmt.Sprintf("scenario %s: no requests in the measured window", s.Name)
		case s.ErrorPercent != nil && *s.ErrorPercent > maxErrPercent:
			why = fmt.Sprintf("scenario %s: %.2f%% of requests failed (%d of %d), above the maximum of %g%%",
				s.Name, *s.ErrorPercent, *s.Errors, *s.RequestStats.Requests, maxErrPercent)
		}
		// A request name can fail wholesale under a small share of the traffic and leave the
		// scenario's rate under the maximum: each name is held to the maximum too, once it has
		// enough errors for the rate to mean something.
		if why == "" {
			why = failingRequests(s, maxErrPercent)
		}
		if why == "" && s.DroppedPercent != nil && *s.DroppedPercent > MaxDroppedPercent {
			why = fmt.Sprintf("scenario %s: k6 dropped %d iterations, %.2f%% of those planned (above %g%%): the planned arrival rate was not reached, so the load was not the one declared",
				s.Name, *s.DroppedIterations, *s.DroppedPercent, MaxDroppedPercent)
		}
		if why != "" {
			s.Validity = perfexpv1alpha1.Invalid
			s.InvalidReason = why
			MarkInvalid(r, why)
		}
	}
}

// Drift marks the results invalid when the variant drifted during the run: the numbers
// are real, but not the variant's.
func Drift(r *result.Result, drifted string) {
	if drifted != "" {
		MarkInvalid(r, "the variant drifted during the run: "+drifted)
	}
}

// MaxDroppedPercent is the share of planned iterations k6 may drop before the results are
// Invalid: beyond it the runners or the system saturated and the declared load was not run.
const MaxDroppedPercent = 1.0

// minRequestNameErrors is the fewest errors that make a request name's error rate count for
// validity: one failure in three requests of a rare name is not a broken run.
const minRequestNameErrors = 5

// failingRequests names the scenario's request names whose error rate is above the maximum.
func failingRequests(s *result.ScenarioResult, maxErrPercent float64) string {
	var bad []string
	for _, rr := range s.Requests {
		if rr.ErrorPercent == nil || rr.Errors == nil || rr.Requests == nil || *rr.Errors < minRequestNameErrors || *rr.ErrorPercent <= maxErrPercent {
			continue
		}
		bad = append(bad, fmt.Sprintf("%s %.2f%% (%d of %d)", rr.Name, *rr.ErrorPercent, *rr.Errors, *rr.Requests))
	}
	if len(bad) == 0 {
		return ""
	}
	return fmt.Sprintf("scenario %s: requests failed above the maximum of %g%%: %s", s.Name, maxErrPercent, result.ShortList(bad, 5))
}
